//! The embedded PTX assembles with `ptxas` for several architectures, with
//! every kernel present, nothing external, and no spills.
//!
//! `ptxas` is found through `$PTXAS`, `PATH`, or where the README's test
//! command (`scripts/test.sh`) installs NVIDIA's PyPI package
//! `nvidia-cuda-nvcc-cu12` (`target/ptxas-pkg`). Without it the test fails,
//! saying how to get it: a check that cannot run is never reported as passed.

// The kernels the host library reaches through `host::kernels()`.
use gpu as _;
use gpu::cg::barrier::WATCHED_ENTRY_SUFFIX;
use gpu_ptx as _;
use std::path::PathBuf;
use std::process::Command;

const ARCHS: [&str; 4] = ["sm_70", "sm_75", "sm_80", "sm_90"];

/// The PTX modules the kernels' crate registered.
fn modules() -> &'static gpu::kernels::Ptx {
    gpu::kernels::ptx_of("gpu").expect("the gpu crate is linked")
}

/// The modules to check entry by entry: the sm_70 and sm_90 ones, and the
/// traced one where this build made it (`--features host/traced`, as the GPU
/// staging builds the tests; without it the module is empty).
fn built_modules() -> Vec<(&'static str, &'static str)> {
    let m = modules();
    let mut built = vec![("sm_70", m.plain), ("sm_90", m.sm90)];
    if !m.traced.is_empty() {
        built.push(("traced", m.traced));
    }
    built
}

/// The registered kernels' names that have a GPU entry: the cluster kernels' or the others'.
fn names(cluster: bool) -> Vec<&'static str> {
    gpu::kernels::registered().iter().filter(|r| r.in_ptx() && r.cluster() == cluster).map(|r| r.name()).collect()
}

fn find_ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PTXAS") {
        return Some(p.into());
    }
    if Command::new("ptxas").arg("--version").output().is_ok_and(|o| o.status.success()) {
        return Some("ptxas".into());
    }
    let installed = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/ptxas-pkg/nvidia/cuda_nvcc/bin/ptxas");
    installed.exists().then_some(installed)
}

/// Registers and spill bytes per entry, from `ptxas -v`; `None` when this
/// `ptxas` does not know `arch` (CUDA 13's dropped sm_70).
fn assemble(ptxas: &PathBuf, ptx: &std::path::Path, arch: &str) -> Option<Vec<(String, u32, u32)>> {
    let out = Command::new(ptxas).args(["-v", &format!("-arch={arch}"), "-o", "/dev/null"]).arg(ptx).output().expect("ptxas runs");
    let log = String::from_utf8_lossy(&out.stderr);
    if log.contains("is not defined for option 'gpu-name'") {
        return None;
    }
    assert!(out.status.success(), "ptxas -arch={arch} failed:\n{log}");
    let mut entries = Vec::new();
    let mut current = None;
    for line in log.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            current = Some(rest.split('\'').next().unwrap().to_string());
        } else if line.contains("spill stores") {
            // "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
            let spill: u32 = line
                .split(',')
                .filter(|part| part.contains("spill"))
                .map(|part| part.split_whitespace().next().and_then(|n| n.parse::<u32>().ok()).expect("a byte count"))
                .sum();
            entries.push((current.clone().expect("an entry precedes its spill line"), 0, spill));
        } else if let Some(rest) = line.split("Used ").nth(1) {
            let regs: u32 = rest.split_whitespace().next().unwrap().parse().unwrap();
            entries.last_mut().expect("an entry precedes its register line").1 = regs;
        }
    }
    Some(entries)
}

#[test]
fn ptx_assembles_for_four_architectures_with_every_kernel_and_no_spills() {
    let ptxas = find_ptxas().expect(
        "ptxas not found, so the PTX cannot be checked: run the README's test command, bash scripts/test.sh (it installs ptxas under target/), or set PTXAS",
    );
    assert!(!modules().plain.contains(".extern .func"), "the PTX calls an external function");
    for name in names(false) {
        assert!(modules().plain.contains(&format!(".visible .entry {name}(")), "no entry {name} in the PTX");
    }
    let dir = std::env::temp_dir().join(format!("cg-ptx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ptx = dir.join("gpu.ptx");
    std::fs::write(&ptx, modules().plain).unwrap();
    let mut assembled = 0;
    for arch in ARCHS {
        let Some(entries) = assemble(&ptxas, &ptx, arch) else {
            // CUDA 13's ptxas has no sm_70; the README's pinned CUDA 12 ptxas has.
            assert!(arch == "sm_70", "this ptxas does not know {arch}");
            eprintln!("not assembled for {arch}: this ptxas (CUDA 13 or later) dropped it");
            continue;
        };
        assembled += 1;
        for name in names(false) {
            assert!(entries.iter().any(|(e, _, _)| e == name), "{arch}: ptxas compiled no {name}");
        }
        // A cooperative kernel's watched entry, under the name the host
        // loads it by; a grid is sized by the smaller of its entries' ceilings,
        // so the register bound below holds for both.
        let watched = |name: &str| format!("{name}{WATCHED_ENTRY_SUFFIX}");
        for def in [&gpu::kernels::REDUCE_COOPERATIVE_GRID, &gpu::kernels::EXERCISE_SUM] {
            assert!(def.grid_sync() && entries.iter().any(|(e, _, _)| *e == watched(def.name())), "{arch}: no entry {}", watched(def.name()));
        }
        for (name, _, _) in &entries {
            if let Some(plain) = name.strip_suffix(WATCHED_ENTRY_SUFFIX) {
                assert!(names(false).contains(&plain), "{arch}: {name} is the watched entry of no registered kernel");
            }
        }
        for (name, regs, spill) in &entries {
            println!("{arch} {name}: {regs} registers, {spill} spill bytes");
            fits_its_bounds_or_does_not_spill(modules().plain, arch, name, *regs, *spill);
            let lesson = ["reduce_blocks_to_partials", "reduce_partials_to_total", "reduce_cooperative_grid", "exercise_sum"];
            if arch == "sm_90" && lesson.iter().any(|l| *name == *l || *name == watched(l)) {
                assert!(*regs <= 32, "{name} needs {regs} registers: more than 32 costs the H200 blocks per SM at 256 threads");
            }
        }
    }
    assert!(assembled >= 3);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_sm90_module_adds_the_cluster_kernels_and_assembles_for_sm_90() {
    let ptxas = find_ptxas().expect("ptxas not found: run bash scripts/test.sh (it installs ptxas under target/), or set PTXAS");
    let sm90 = modules().sm90;
    assert!(sm90.contains(".target sm_90"), "the cluster module targets sm_90");
    for name in names(true) {
        assert!(sm90.contains(&format!(".visible .entry {name}(")), "no entry {name} in the sm_90 PTX");
        assert!(!modules().plain.contains(&format!(".entry {name}(")), "{name} is in the sm_70 module, which cannot hold it");
    }
    for instruction in
        ["barrier.cluster.arrive;", "barrier.cluster.wait;", "mapa.shared::cluster.u32", "ld.shared::cluster.b32", "%cluster_ctarank", "%nclusterid.x"]
    {
        assert!(sm90.contains(instruction), "the sm_90 PTX has no {instruction}");
    }
    let dir = std::env::temp_dir().join(format!("cg-ptx90-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ptx = dir.join("gpu_sm90.ptx");
    std::fs::write(&ptx, sm90).unwrap();
    let entries = assemble(&ptxas, &ptx, "sm_90").expect("this ptxas knows sm_90");
    for name in names(false).into_iter().chain(names(true)) {
        assert!(entries.iter().any(|(e, _, _)| e == name), "sm_90: ptxas compiled no {name}");
    }
    for (name, regs, spill) in &entries {
        println!("sm_90 module {name}: {regs} registers, {spill} spill bytes");
        fits_its_bounds_or_does_not_spill(sm90, "sm_90", name, *regs, *spill);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The sm_90 image an H100 or H200 loads instead of JIT-compiling the PTX
/// (`Ptx::cubin_sm90`): where ptxas was found at build time it is there, an
/// ELF for the CUDA machine and sm_90, holding every entry of the plain
/// module (each entry's code is its own section, `.text.<name>`).
#[test]
fn the_sm90_image_is_the_plain_module_assembled_for_sm_90_with_every_entry() {
    let m = modules();
    let cubin = m.cubin_sm90;
    if let Err(why) = m.ptxas_sm75 {
        assert!(cubin.is_empty(), "no ptxas at build time ({why}), yet an sm_90 image");
        panic!("built without ptxas ({why}): run bash scripts/test.sh (it installs ptxas under target/), or set PTXAS, and build again");
    }
    assert_eq!(&cubin[..4], b"\x7fELF", "the sm_90 image is not an ELF");
    let e_machine = u16::from_le_bytes([cubin[18], cubin[19]]);
    let e_flags = u32::from_le_bytes(cubin[48..52].try_into().unwrap());
    assert_eq!(e_machine, 190, "the sm_90 image is not for EM_CUDA");
    assert_eq!(e_flags & 0xff, 90, "the sm_90 image is for sm_{}", e_flags & 0xff);
    let has = |needle: &[u8]| cubin.windows(needle.len()).any(|w| w == needle);
    let entries: Vec<&str> = m.plain.lines().filter_map(|l| l.split(".entry ").nth(1)).map(|rest| rest.split('(').next().unwrap_or(rest).trim()).collect();
    assert!(!entries.is_empty(), "the plain module has no entries");
    for name in entries {
        assert!(has(format!(".text.{name}\0").as_bytes()), "no section .text.{name} in the sm_90 image");
    }
}

#[test]
fn the_registry_is_every_entry_of_the_ptx_and_nothing_else() {
    // The linker gathers each #[kernel]; no list is kept by hand. Every
    // entry of the sm_90 module (which holds all) is a registered kernel or
    // a cooperative one's watched entry, and every registered kernel is there.
    let registered = gpu::kernels::registered();
    let on_gpu: Vec<_> = registered.iter().filter(|r| r.in_ptx()).collect();
    let mut entries: Vec<&str> = modules()
        .sm90
        .lines()
        .filter_map(|l| l.strip_prefix(".visible .entry "))
        .map(|l| l.split('(').next().unwrap())
        .filter(|n| !n.ends_with(WATCHED_ENTRY_SUFFIX))
        .collect();
    let mut names: Vec<&str> = on_gpu.iter().map(|r| r.name()).collect();
    entries.sort();
    names.sort();
    assert_eq!(entries, names);
    assert!(names.len() >= 38, "{} kernels", names.len());
    // One kernel per name, one PTX module: either twice is a named error.
    assert_eq!(gpu::kernels::duplicate_name(), None);
    assert!(gpu::kernels::ptx_of("gpu").is_ok());
    // `#[kernel(emulator)]`: registered, with no entry in any module.
    for name in ["mutant_conjugate_gradient_no_sync_before_dot", "mutant_conjugate_gradient_sync_in_a_branch"] {
        let r = registered.iter().find(|r| r.name() == name).unwrap_or_else(|| panic!("{name} is registered"));
        assert!(!r.in_ptx() && !modules().sm90.contains(&format!("entry {name}")), "{name} has a GPU entry");
    }
    // The kernel added in one place: registered, with its watched entry.
    let alone = registered.iter().find(|r| r.name() == "registered_alone").expect("registered_alone is registered");
    assert!(alone.grid_sync() && !alone.cluster());
    assert!(modules().plain.contains(".visible .entry registered_alone__watched("));
}

/// The parameter lines of entry `name` in `ptx` (`.param .u64 ...`), in order.
/// A kernel with launch bounds trades spills for blocks per SM, as nvcc's
/// does: where `arch` can hold its `min` blocks of `max` threads (64K
/// registers per SM; 1,024 threads per SM on sm_75, 2,048 on the others
/// here), its registers must let them fit; it may spill. Where it cannot
/// (8 blocks of 256 on sm_75), ptxas ignores the bound. Any other entry
/// must not spill.
fn fits_its_bounds_or_does_not_spill(ptx: &str, arch: &str, name: &str, regs: u32, spill: u32) {
    match launch_bounds(ptx, name) {
        Some((max, min)) if min > 0 => {
            let threads_per_sm = if arch == "sm_75" { 1024 } else { 2048 };
            if max * min <= threads_per_sm {
                assert!(regs * max * min <= 65536, "{arch} {name}: {regs} registers do not fit {min} blocks of {max} threads per SM");
            }
        }
        _ => assert_eq!(spill, 0, "{arch} {name} spills"),
    }
}

/// The `.maxntid` and `.minnctapersm` of entry `name` (0 for one not given),
/// or `None` if it declares neither.
fn launch_bounds(ptx: &str, name: &str) -> Option<(u32, u32)> {
    let start = ptx.find(&format!(".entry {name}(\n"))?;
    let header = &ptx[start..start + ptx[start..].find("\n{")?];
    let value = |directive: &str| header.lines().find_map(|l| l.strip_prefix(directive)).map(|v| v.split(',').next().unwrap().trim().parse::<u32>().unwrap());
    match (value(".maxntid "), value(".minnctapersm ")) {
        (None, None) => None,
        (max, min) => Some((max.unwrap_or(0), min.unwrap_or(0))),
    }
}

#[test]
fn launch_bounds_reach_both_entries_of_the_kernels_that_declare_them_and_no_other() {
    let k = gpu::kernels::kernel::<(gpu::mem::Out<u32>,), gpu::kernels::GridSync>("launch_bounded").unwrap();
    assert_eq!(k.launch_bounds(), Some((128, 4)));
    for ptx in [modules().plain, modules().sm90] {
        for entry in [k.name().to_string(), format!("{}{WATCHED_ENTRY_SUFFIX}", k.name())] {
            assert_eq!(launch_bounds(ptx, &entry), Some((128, 4)), "{entry}");
        }
        assert!(!ptx.contains("__launch_bounds__"), "the macro's global is left in the PTX");
        let resident = host::kernels().conjugate_gradient_fused_resident;
        assert_eq!(resident.launch_bounds(), Some((256, 8)));
        for entry in [resident.name().to_string(), format!("{}{WATCHED_ENTRY_SUFFIX}", resident.name())] {
            assert_eq!(launch_bounds(ptx, &entry), Some((256, 8)), "{entry}");
        }
        // The on-chip solver's three kernels: 512 threads a block, at most
        // 128 registers (one block per SM, the launch bounds' 1).
        let k = host::kernels();
        for on_chip in [k.conjugate_gradient_on_chip, k.conjugate_gradient_on_chip_matrix, k.conjugate_gradient_on_chip_stencil] {
            assert_eq!(on_chip.launch_bounds(), Some((512, 1)));
            for entry in [on_chip.name().to_string(), format!("{}{WATCHED_ENTRY_SUFFIX}", on_chip.name())] {
                assert_eq!(launch_bounds(ptx, &entry), Some((512, 1)), "{entry}");
            }
        }
        assert_eq!(ptx.matches(".maxntid").count(), 10, "only the five bounded kernels' entries have launch bounds");
    }
}

fn entry_params<'p>(ptx: &'p str, name: &str) -> Vec<&'p str> {
    let header = format!(".visible .entry {name}(");
    let start = ptx.find(&header).unwrap_or_else(|| panic!("no entry {name}")) + header.len();
    let end = start + ptx[start..].find(')').unwrap();
    ptx[start..end].lines().map(str::trim).filter(|l| l.starts_with(".param")).collect()
}

#[test]
fn both_entries_of_a_cooperative_kernel_take_the_launch_memory_last_and_no_barrier_state_is_module_wide() {
    // docs/abi.md: both entries of a cooperative kernel take the kernel's
    // own parameters, then a pointer to the launch's memory (the watched
    // barrier's lines and the grid collectives' scratch).
    for (module, ptx) in built_modules() {
        let mut watched = 0;
        for line in ptx.lines().filter(|l| l.starts_with(".visible .entry ")) {
            let name = line.trim_start_matches(".visible .entry ").trim_end_matches('(');
            let Some(plain) = name.strip_suffix(WATCHED_ENTRY_SUFFIX) else { continue };
            let (w, p) = (entry_params(ptx, name), entry_params(ptx, plain));
            assert_eq!(w.len(), p.len(), "{module}: {name} takes the parameters of {plain}");
            // A parameter's type: its line without the name.
            let kind = |line: &str| {
                let words: Vec<&str> = line.trim_end_matches(',').split_whitespace().collect();
                words[..words.len() - 1].join(" ")
            };
            for (a, b) in w.iter().zip(&p) {
                assert_eq!(kind(a), kind(b), "{module}: {name} and {plain} differ");
            }
            for entry in [&w, &p] {
                assert!(entry.last().unwrap().starts_with(".param .u64 .ptr"), "{module}: {name}'s last parameter is a pointer: {:?}", entry.last());
            }
            watched += 1;
        }
        assert!(watched >= 8, "{module}: only {watched} watched entries");
        // The module-wide static every launch used to share is gone: the only
        // global variables are the trace's and the diagnosing barrier's pointers.
        for line in ptx.lines().filter(|l| l.starts_with(".global") || l.starts_with(".visible .global")) {
            assert!(line.contains("CG_TRACE") || line.contains("GRID_BARRIER_REPORT"), "{module}: module-wide state: {line}");
        }
    }
}

/// The opcodes of entry `name`'s body in `ptx`, one per instruction: each
/// statement's first word, after any `{`, label or predicate guard
/// (`@%p1 bra ...` gives `bra`). Inline-assembly blocks (`{ .reg ...; vote...; }`)
/// count each instruction in them.
fn opcodes<'p>(ptx: &'p str, name: &str) -> Vec<&'p str> {
    let header = format!(".entry {name}(");
    let start = ptx.find(&header).unwrap_or_else(|| panic!("no entry {name}"));
    let chunk = &ptx[start..];
    let open = chunk.find("\n{").expect("an entry body");
    let body = &chunk[open..open + chunk[open..].find("\n}\n").expect("the end of the entry body")];
    body.lines()
        .map(|l| l.split("//").next().unwrap())
        .flat_map(|l| l.split(';'))
        .filter_map(|statement| {
            let mut words = statement.split_whitespace().skip_while(|w| *w == "{" || *w == "}" || w.ends_with(':') || w.starts_with('@'));
            words.next().map(|w| w.trim_start_matches('{'))
        })
        .filter(|w| !w.is_empty() && !w.starts_with('.') && !w.starts_with('}'))
        .collect()
}

/// The collectives, by the instruction each source call must become once.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Collective {
    /// `block.sync()`: the non-aligned `barrier.sync`.
    BlockSync,
    /// `block.sync_aligned()`: `bar.sync`, which is `barrier.sync.aligned`.
    AlignedBlockSync,
    /// `tile.sync()`, `coalesced.sync()`: `bar.warp.sync`.
    WarpSync,
    Shuffle,
    /// `shfl.sync.up`, the scans' shuffle.
    ShuffleUp,
    Vote,
    /// `match.any.sync`, of either width.
    MatchAny,
    /// `match.any.sync.b64` alone.
    MatchAny64,
    /// `match.all.sync`.
    MatchAll,
    ClusterArrive,
    ClusterWait,
}

impl Collective {
    fn is(self, op: &str) -> bool {
        match self {
            Collective::BlockSync => op == "barrier.sync" || op == "barrier.cta.sync",
            Collective::AlignedBlockSync => ["bar.sync", "barrier.sync.aligned", "barrier.cta.sync.aligned"].contains(&op),
            Collective::WarpSync => op == "bar.warp.sync",
            Collective::Shuffle => op.starts_with("shfl.sync"),
            Collective::ShuffleUp => op.starts_with("shfl.sync.up"),
            Collective::Vote => op.starts_with("vote."),
            Collective::MatchAny => op.starts_with("match.any.sync"),
            Collective::MatchAny64 => op == "match.any.sync.b64",
            Collective::MatchAll => op.starts_with("match.all.sync"),
            Collective::ClusterArrive => op.starts_with("barrier.cluster.arrive"),
            Collective::ClusterWait => op.starts_with("barrier.cluster.wait"),
        }
    }
}

fn count(ptx: &str, entry: &str, c: Collective) -> usize {
    opcodes(ptx, entry).into_iter().filter(|op| c.is(op)).count()
}

#[test]
fn each_collective_called_once_between_two_branches_on_the_rank_is_one_instruction() {
    // gpu/src/kernels/probes.rs: each probe calls its collective once,
    // between `if t == 0 { .. }` and `if t == 0 { .. }`, where an opaque
    // `asm!` collective came out once per path (2026-12-03: two
    // `barrier.sync`, two `bar.sync`, two `shfl.sync`; ten `barrier.sync` for
    // the loop, unrolled). LLVM keeps a convergent intrinsic where it is.
    use Collective::*;
    let plain = [
        ("probe_block_sync", BlockSync, 1),
        ("probe_block_sync_aligned", AlignedBlockSync, 1),
        ("probe_block_sync_aligned", BlockSync, 0),
        ("probe_tile_sync", WarpSync, 1),
        ("probe_shfl_down", Shuffle, 1),
        ("probe_ballot", Vote, 1),
        // cg::reduce on a tile of 32 is five butterfly steps, each one shuffle.
        ("probe_reduce", Shuffle, 5),
        // match_any and match_all: one instruction each, of the value's width.
        ("probe_match_any", MatchAny, 1),
        ("probe_match_any", MatchAny64, 0),
        ("probe_match_any_64", MatchAny64, 1),
        ("probe_match_all", MatchAll, 1),
        // A scan on a tile of 32: five steps, each one shuffle up; the
        // exclusive scan of a float shuffles its inclusive value up once
        // more, that of an integer sum subtracts instead.
        ("probe_inclusive_scan", Shuffle, 5),
        ("probe_inclusive_scan", ShuffleUp, 5),
        ("probe_exclusive_scan", ShuffleUp, 6),
        ("probe_exclusive_scan_u32", ShuffleUp, 5),
        // block_reduce: a warp's reduce (five), a barrier, the warps'
        // totals reduced (five), a barrier before the scratch is reused.
        ("probe_block_reduce", Shuffle, 10),
        ("probe_block_reduce", BlockSync, 2),
        // block_exclusive_scan: the tile's scan and its exclusive value (six),
        // a barrier, the first warp's scan of the tiles' totals (five), two
        // barriers (the totals read, then the scratch free again).
        ("probe_block_exclusive_scan", Shuffle, 11),
        ("probe_block_exclusive_scan", ShuffleUp, 11),
        ("probe_block_exclusive_scan", BlockSync, 3),
        // Unrolled or not, one instruction in the loop's body.
        ("probe_block_sync_in_a_loop", BlockSync, 1),
        // grid.sync(): a block barrier before thread 0's arrival and one after;
        // the watched entry's block 0 has a third, between watching and releasing.
        ("probe_grid_sync", BlockSync, 2),
        ("probe_grid_sync__watched", BlockSync, 3),
    ];
    for (module, ptx) in built_modules() {
        for (entry, c, n) in plain {
            assert_eq!(count(ptx, entry, c), n, "{module}: {entry} has {} {c:?}, its source calls {n}", count(ptx, entry, c));
        }
    }
    assert_eq!(count(modules().sm90, "probe_cluster_sync", ClusterArrive), 1);
    assert_eq!(count(modules().sm90, "probe_cluster_sync", ClusterWait), 1);
}

#[test]
fn every_shipped_kernel_has_as_many_block_barriers_as_its_source_calls() {
    // Per call, in barrier instructions: `block_sum` 2 (gpu/src/lesson/sum.rs),
    // `grid.sync()` 2 (3 in a watched entry), `MultiGridGroup::sync` two
    // grid.sync(), the conjugate-gradient `block_total` 2 aligned. Each row:
    // the entry, its `barrier.sync` and `bar.sync` (plain entry; watched entry).
    #[rustfmt::skip]
    let rows: &[(&str, usize, usize, usize, &str)] = &[
        // (entry, barrier.sync plain, barrier.sync watched, bar.sync, source)
        ("reduce_blocks_to_partials", 2, 0, 0, "block_sum"),
        ("reduce_partials_to_total", 2, 0, 0, "block_sum"),
        ("reduce_cooperative_grid", 6, 7, 0, "block_sum, grid.sync(), block_sum"),
        ("exercise_sum", 6, 7, 0, "block_sum, grid.sync(), block_sum"),
        ("reduce_cooperative_fast", 6, 7, 0, "block_sum, grid.sync(), block_sum"),
        ("reduce_last_block", 5, 0, 0, "block_sum, block.sync(), block_sum"),
        ("reduce_single_block", 2, 0, 0, "block_sum"),
        ("reduce_multi_gpu", 10, 13, 0, "block_sum, grid.sync(), block_sum, multi.sync() (two grid.sync())"),
        ("multi_grid_barrier", 4, 6, 0, "multi.sync()"),
        ("grid_sync_loop", 2, 3, 0, "grid.sync() in a loop"),
        ("grid_sync_stress", 4, 6, 0, "grid.sync() twice in a loop"),
        ("registered_alone", 2, 3, 0, "grid.sync()"),
        ("launch_bounded", 2, 3, 0, "grid.sync()"),
        ("conjugate_gradient_spmv_dot", 0, 0, 2, "block_total"),
        ("conjugate_gradient_alpha", 0, 0, 2, "block_total"),
        ("conjugate_gradient_axpy", 0, 0, 2, "block_total"),
        ("conjugate_gradient_next", 0, 0, 2, "block_total"),
        // Four grid.sync(); seven block_total, of which LLVM merges the two
        // identical `total_of(squares)` (before the loop, and at the end of a
        // trip) into one at the loop's head: six.
        ("conjugate_gradient_persistent", 8, 12, 12, "grid.sync() x4, block_total x7 (two merged)"),
        // Two grid.sync() in the loop; two block_total_pair (the partials,
        // then their sum), each one pair of barriers for both values.
        ("conjugate_gradient_fused", 4, 6, 4, "grid.sync() x2, block_total_pair x2"),
        ("conjugate_gradient_fused_resident", 4, 6, 4, "grid.sync() x2, block_total_pair x2"),
        ("sanitizer_divergent_aligned_block_sync", 0, 0, 2, "block.sync_aligned() in a branch, block.sync_aligned()"),
        ("sanitizer_block_sum_race", 1, 0, 0, "block_sum without its first block.sync()"),
        ("histogram_bytes", 2, 0, 0, "block.sync() after zeroing the bins, block.sync() after counting"),
        ("types_u8", 1, 0, 0, "block.sync() between the shared write and read"),
        ("atomics_u32", 2, 0, 0, "block.sync() around the shared atomics"),
        ("atomics_f64", 2, 0, 0, "block.sync() around the shared atomics"),
    ];
    for (module, ptx) in [("sm_70", modules().plain), ("sm_90", modules().sm90)] {
        for &(entry, plain, watched, aligned, source) in rows {
            let (b, a) = (count(ptx, entry, Collective::BlockSync), count(ptx, entry, Collective::AlignedBlockSync));
            assert_eq!((b, a), (plain, aligned), "{module}: {entry} ({source}) has {b} barrier.sync and {a} bar.sync");
            if watched > 0 {
                let w = format!("{entry}{WATCHED_ENTRY_SUFFIX}");
                assert_eq!(count(ptx, &w, Collective::BlockSync), watched, "{module}: {w} ({source})");
            }
        }
    }
    // The cluster kernels (sm_90 module): block barriers as above, and each
    // cluster.sync() one arrive and one wait.
    let sm90 = modules().sm90;
    for (entry, plain, cluster_syncs) in [("reduce_cluster_grid", 8, 2), ("reduce_clusters_to_partials", 4, 2), ("cluster_sync_loop", 0, 1)] {
        assert_eq!(count(sm90, entry, Collective::BlockSync), plain, "{entry}");
        assert_eq!(count(sm90, entry, Collective::ClusterArrive), cluster_syncs, "{entry}");
        assert_eq!(count(sm90, entry, Collective::ClusterWait), cluster_syncs, "{entry}");
    }
}

#[test]
fn the_block_barriers_are_non_aligned_except_where_a_kernel_asks_for_the_aligned_one() {
    // `bar.sync` is `barrier.sync.aligned`: undefined when the threads of a
    // warp reach it apart. `block.sync()` and `grid.sync()` use `barrier.sync`;
    // only `unsafe` `block.sync_aligned()` emits `bar.sync`: the
    // conjugate-gradient reductions, its probe, and the synccheck target
    // that misuses it on purpose.
    let aligned_allowed =
        |entry: &str| entry.starts_with("conjugate_gradient_") || entry == "probe_block_sync_aligned" || entry == "sanitizer_divergent_aligned_block_sync";
    for (module, ptx) in built_modules() {
        let mut aligned_entries = Vec::new();
        let mut non_aligned = 0;
        for line in ptx.lines().filter(|l| l.starts_with(".visible .entry ")) {
            let name = line.trim_start_matches(".visible .entry ").split('(').next().unwrap();
            non_aligned += count(ptx, name, Collective::BlockSync);
            if count(ptx, name, Collective::AlignedBlockSync) > 0 {
                assert!(aligned_allowed(name), "{module}: {name} has an aligned block barrier");
                aligned_entries.push(name);
            }
        }
        assert!(non_aligned > 20, "{module}: the block barriers are barrier.sync 0");
        assert!(aligned_entries.contains(&"conjugate_gradient_persistent"), "{module}: {aligned_entries:?}");
    }
}

/// The `atom` instructions of entry `name`, in order (`atom.relaxed.gpu.global.add.u32`).
fn atoms<'p>(ptx: &'p str, name: &str) -> Vec<&'p str> {
    opcodes(ptx, name).into_iter().filter(|op| op.starts_with("atom.")).collect()
}

#[test]
fn every_atomic_call_is_one_atom_with_its_order_scope_and_space() {
    // gpu/src/kernels/atomics.rs: each call one `atom`, the short forms
    // relaxed at device scope (atomicAdd), atomic_sub an add of the negation.
    let u32_ops = [
        "atom.relaxed.gpu.global.add.u32",
        "atom.acq_rel.gpu.global.add.u32",
        "atom.release.sys.global.min.u32",
        "atom.acquire.gpu.global.max.u32",
        "atom.relaxed.gpu.global.exch.b32",
        "atom.relaxed.gpu.global.cas.b32",
        "atom.relaxed.gpu.global.and.b32",
        "atom.relaxed.sys.global.or.b32",
        "atom.relaxed.gpu.global.xor.b32",
        "atom.relaxed.cta.shared.add.u32",
        "atom.relaxed.gpu.shared.add.u32",
        "atom.acq_rel.cta.shared.min.u32",
        "atom.relaxed.gpu.shared.max.u32",
        "atom.release.cta.shared.exch.b32",
        "atom.acquire.cta.shared.cas.b32",
        "atom.relaxed.cta.shared.and.b32",
        "atom.relaxed.gpu.shared.or.b32",
        "atom.relaxed.gpu.shared.xor.b32",
    ];
    // The same calls for the other integers: their own add, min and max; the bit operations by size.
    let retyped = |add: &str, minmax: &str, bits: &str| -> Vec<String> {
        u32_ops
            .iter()
            .map(|op| op.replace("add.u32", add).replace("min.u32", &format!("min.{minmax}")).replace("max.u32", &format!("max.{minmax}")).replace("b32", bits))
            .collect()
    };
    let floats = |t: &str, bits: &str| -> Vec<String> {
        [
            "relaxed.gpu.global.add.T",
            "acq_rel.gpu.global.add.T",
            "relaxed.sys.global.exch.B",
            "relaxed.gpu.global.cas.B",
            "release.gpu.global.add.T",
            "relaxed.gpu.global.add.T",
            "relaxed.cta.shared.add.T",
            "relaxed.gpu.shared.add.T",
            "relaxed.gpu.shared.exch.B",
            "acq_rel.cta.shared.cas.B",
            "relaxed.gpu.shared.add.T",
            "relaxed.gpu.shared.add.T",
        ]
        .iter()
        .map(|op| format!("atom.{}", op.replace('T', t).replace('B', bits)))
        .collect()
    };
    let expected: Vec<(&str, Vec<String>)> = vec![
        ("atomics_u32", u32_ops.iter().map(|s| s.to_string()).collect()),
        ("atomics_i32", retyped("add.s32", "s32", "b32")),
        ("atomics_u64", retyped("add.u64", "u64", "b64")),
        // PTX has no .s64 add: two's complement makes it .u64.
        ("atomics_i64", retyped("add.u64", "s64", "b64")),
        ("atomics_f32", floats("f32", "b32")),
        ("atomics_f64", floats("f64", "b64")),
        ("histogram_bytes", vec!["atom.relaxed.gpu.shared.add.u32".into(), "atom.relaxed.gpu.global.add.u32".into()]),
        ("reduce_last_block", vec!["atom.acq_rel.gpu.global.add.u32".into()]),
    ];
    for (module, ptx) in [("sm_70", modules().plain), ("sm_90", modules().sm90)] {
        for (entry, ops) in &expected {
            assert_eq!(atoms(ptx, entry), *ops, "{module}: {entry}");
        }
    }
}

/// The ordered loads and stores of an entry, in order.
fn ordered<'p>(ptx: &'p str, name: &str) -> Vec<&'p str> {
    opcodes(ptx, name).into_iter().filter(|op| ["ld.relaxed.", "ld.acquire.", "st.relaxed.", "st.release."].iter().any(|p| op.starts_with(p))).collect()
}

#[test]
fn every_atomic_load_and_store_is_one_instruction_with_its_order_scope_and_space() {
    // gpu/src/kernels/waits.rs: each call one `ld` or `st` with its `.sem`
    // and `.scope`, in its space, at its element's size; the poll in the loop once.
    let expected: [(&str, &[&str]); 2] = [
        ("chained_tiles", &["ld.acquire.gpu.global.b64", "st.release.gpu.global.b64"]),
        ("shared_flag_handoff", &["st.relaxed.cta.shared.b32", "st.release.cta.shared.b32", "ld.acquire.cta.shared.b32", "ld.relaxed.cta.shared.b32"]),
    ];
    for (module, ptx) in [("sm_70", modules().plain), ("sm_90", modules().sm90)] {
        for (entry, ops) in expected {
            assert_eq!(ordered(ptx, entry), ops, "{module}: {entry}");
        }
    }
}

#[test]
fn every_element_type_is_loaded_and_stored_at_its_size_and_passed_as_its_own_parameter_type() {
    // gpu/src/kernels/types.rs: In::read through the read-only cache at the
    // element's size, the scalar parameter as a `.param` of its own type.
    for (entry, load, store, param) in [
        ("types_u8", "ld.global.nc.u8", "st.global.b8", ".param .u8"),
        ("types_i8", "ld.global.nc.u8", "st.global.b8", ".param .u8"),
        ("types_u16", "ld.global.nc.u16", "st.global.b16", ".param .u16"),
        ("types_i16", "ld.global.nc.u16", "st.global.b16", ".param .u16"),
        ("types_u32", "ld.global.nc.b32", "st.global.b32", ".param .u32"),
        ("types_i32", "ld.global.nc.b32", "st.global.b32", ".param .u32"),
        ("types_u64", "ld.global.nc.b64", "st.global.b64", ".param .u64"),
        ("types_i64", "ld.global.nc.b64", "st.global.b64", ".param .u64"),
        ("types_f32", "ld.global.nc.b32", "st.global.b32", ".param .f32"),
        ("types_f64", "ld.global.nc.b64", "st.global.b64", ".param .f64"),
    ] {
        let ops = opcodes(modules().plain, entry);
        assert_eq!(ops.iter().filter(|op| **op == load).count(), 1, "{entry}: {load} in {ops:?}");
        assert!(ops.contains(&store), "{entry}: {store} in {ops:?}");
        assert!(entry_params(modules().plain, entry)[2].starts_with(param), "{entry}: {:?}", entry_params(modules().plain, entry));
    }
}
