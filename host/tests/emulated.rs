//! The lesson and the exercise on the emulated device: the same kernels and
//! host code, no GPU (these run in CI). Inputs, references and bounds are the
//! host's own (`host::reference`).

mod registry_case;
use gpu::emu::{Device, Options};
use gpu::kernels::GridSync;
use gpu::kernels::mutants::{MUTANT_DROPPING_LAST_BLOCK, MUTANT_EVERY_BLOCK_WRITES_TOTAL, MUTANT_TILE_SYNC_FOR_BLOCK_SYNC, MUTANT_WITHOUT_GRID_SYNC};
use gpu_ptx as _;
use host::device::Gpu;
use host::error::Error;
use host::exercise::{self, LADDER, Variant};

/// The learner's `solve()`, as the program compiles it.
#[path = "../../exercise/solve.rs"]
mod solve;
use cg_launcher::error::Error as L;
use host::launch::DeviceInput;
use host::launch::prelude::*;
use host::lesson::{self, LessonConfig};
use host::reference::{self, Reference};
use host::sums::{Path, Sums};
use std::process::Command;

fn t4() -> Gpu {
    Gpu::emulated(Device::T4, Options::default())
}

fn config(n: usize, threads_per_block: u32) -> LessonConfig {
    LessonConfig { n, threads_per_block, runs: 2, warmups: 1 }
}

fn assert_all_pass(r: &lesson::LessonReport, what: &str) {
    for c in &r.checks {
        assert!(c.pass(), "{what}: {} ({})", c.name, c.detail);
    }
}

#[test]
fn the_lesson_passes_every_check_on_the_emulated_t4() {
    let gpu = t4();
    // The T4 holds 1024 threads and 16 blocks per SM, on 40 SMs.
    for (n, threads_per_block, capacity) in [(100_003, 256, 160), (611, 64, 640), (0, 256, 160), (1, 1024, 40)] {
        let r = lesson::run(&gpu, config(n, threads_per_block), &mut |_, _| {}).unwrap();
        assert_all_pass(&r, &format!("n = {n}, {threads_per_block} threads"));
        assert_eq!(r.capacity[0].blocks, capacity, "the T4's cooperative grid at {threads_per_block} threads");
        // The emulator has no driver whose context remembers a cooperative launch.
        let ordinary: Vec<Option<bool>> = r.probes.iter().filter(|p| p.launch.starts_with("ordinary")).map(|p| p.is_valid).collect();
        assert_eq!(ordinary, vec![Some(false), Some(false)]);
    }
}

#[test]
fn the_lessons_kernels_pass_every_check_with_tiles_of_1_2_4_8_16_and_32() {
    let gpu = t4();
    for tile in [1, 2, 4, 8, 16, 32] {
        let sums = Sums::load_with_tile(&gpu, 256, tile).expect("a tile size tiled_partition takes").unwrap();
        // One f32 per tile, then the fixed end every cooperative kernel has.
        assert_eq!(sums.limits.block.shared_bytes, 256 / tile * 4 + gpu::cg::GRID_SHARED_BYTES, "one f32 per tile of {tile}");
        let r = lesson::run_with(&gpu, config(100_003, 256), &sums, &mut |_, _| {}).unwrap();
        assert_eq!(r.tile, tile);
        assert_all_pass(&r, &format!("tiles of {tile}"));
        println!("tiles of {tile:>2}: {} (two launches), {} (cooperative)", r.sums[0].total.value, r.sums[1].total.value);
    }
    assert!(Sums::load_with_tile(&gpu, 256, 3).is_none());
}

#[test]
fn a_tile_the_ptx_does_not_hold_is_refused_on_a_gpu_by_name() {
    let err = Error::Launch(L::NotInPtx { kernel: "reduce_cooperative_grid", tile: Some(16) });
    assert_eq!(
        err.to_string(),
        "reduce_cooperative_grid with tiles of 16 exists only on the emulator: change the tile in the kernel's source to run it on the GPU"
    );
}

#[test]
fn the_exercise_and_its_mistakes_fail_exactly_where_the_lesson_says() {
    let gpu = t4();
    // CI runs the ladder up to 4,194,915; `cg-lesson exercise --emulate` runs all nine.
    let sizes = &LADDER[..8];
    for (variant, expected) in [
        (Variant::Reference, vec![]),
        (Variant::GridFromN, vec![4_194_915]),
        (Variant::ZeroGrid, vec![0]),
        // n / 256 rounded down: 0 blocks for 1 and 31, and 2 where 611 takes 3.
        (Variant::RoundDown, vec![1, 31, 611]),
        (Variant::BoundsBug, vec![1, 31, 611, 4_194_915]),
        // 160 blocks: block 0's `if` reads every partial on the T4...
        (Variant::PartialsIf, vec![]),
        // 4 blocks, one SM's worth: right sums, and too few blocks from 4,096 up.
        (Variant::PerSm, vec![4096, 40960, 4_194_915]),
        // The next step: the second stage as one grid.reduce.
        (Variant::GridReduce, vec![]),
    ] {
        let r = exercise::run_sizes(&gpu, variant, solve::solve, sizes, &mut |_| {}).unwrap();
        let failing: Vec<u64> = r.cases.iter().filter(|c| !c.pass()).map(|c| c.n).collect();
        assert_eq!(failing, expected, "{variant:?}");
        if variant == Variant::BoundsBug {
            let c = r.cases.iter().find(|c| c.n == 611).unwrap();
            let e = c.launch_error.as_deref().unwrap();
            assert!(e.starts_with("thread 99 of block 2 (warp 3, lane 3) read input[611], past its 611 elements"), "{e}");
        }
        if variant == Variant::RoundDown {
            let e = r.cases[1].launch_error.as_deref().unwrap();
            assert!(e.contains("n = 1 has elements to sum") && e.contains("round the division up"), "names the fix: {e}");
            assert!(!e.contains("return without launching"), "the n = 0 advice is not this case's: {e}");
        }
        if variant == Variant::PerSm {
            let c = r.cases.iter().find(|c| c.n == 4096).unwrap();
            let g = c.grid.as_deref().unwrap();
            assert!(g.contains("the sum is right, but the grid is too small: 4 blocks (that is blocks per SM alone"), "{g}");
            let text = exercise::render(&r);
            assert!(text.contains("FAIL: right sum, wrong launch (below)") && text.contains("the sum is right, but the grid is too small"), "{text}");
            assert!(!text.contains("to submit"), "no counts to submit after a failure: {text}");
            assert!(r.verdict().is_err(), "no 'all checks passed' for a grid one SM wide");
        }
        if variant == Variant::RoundDown {
            let g = r.cases.iter().find(|c| c.n == 611).unwrap().grid.as_deref().unwrap();
            assert!(g.contains("2 blocks (n / threads rounded down: round the division up)"), "{g}");
        }
        if variant == Variant::ZeroGrid {
            let e = r.cases[0].launch_error.as_deref().unwrap();
            assert!(e.contains("for n = 0, return without launching"), "{e}");
        }
        if variant == Variant::Reference {
            assert_eq!((r.blocks_per_sm, r.sms), (Some(4), Some(40)), "the two counts to submit");
        }
    }
}

#[test]
fn the_exercise_runs_again_on_a_larger_device_where_an_if_for_the_partials_loop_fails() {
    assert!(exercise::needs_larger_device(&t4()).unwrap(), "the T4's 160 blocks fit in one block of 256");
    let larger = Gpu::emulated(exercise::LARGER_DEVICE, Options::default());
    assert!(!exercise::needs_larger_device(&larger).unwrap());
    // ...but not the 1056 of the larger device, from the first size whose grid passes 256 blocks.
    let sizes = [40_960, 4_194_915];
    let r = exercise::run_sizes(&larger, Variant::PartialsIf, solve::solve, &sizes, &mut |_| {}).unwrap();
    let failing: Vec<u64> = r.cases.iter().filter(|c| !c.pass()).map(|c| c.n).collect();
    assert_eq!(failing, vec![4_194_915]);
    // The harness tells from the sum which mistake it is, and names the fix.
    let h = r.cases[1].hint.as_deref().unwrap();
    assert!(h.contains("the first 256 of the 1056 block partials") && h.contains("not an `if`"), "{h}");
    assert!(exercise::render(&r).contains("FAILED: n = 4194915: wrong sum: the total is the sum of the first 256"));
    assert!(exercise::run_sizes(&larger, Variant::Reference, solve::solve, &sizes, &mut |_| {}).unwrap().verdict().is_ok());
}

/// The lesson's cooperative check, run on `def` instead of the lesson's kernel.
fn cooperative_check(gpu: &Gpu, def: gpu::kernels::KernelDef<host::launch::SumParams, gpu::kernels::GridSync>, n: usize) -> Result<host::sums::Run, Error> {
    let sums = Sums::load_with_cooperative(gpu, 256, def)?;
    let xs = reference::fill(n)?;
    let r = Reference::new(&xs);
    let input = DeviceInput::upload(gpu, &xs)?;
    let mut s = sums.scratch(sums.grid(n), 1)?;
    sums.checked(Path::Cooperative, &input, &r, &mut s)
}

#[test]
fn the_lessons_cooperative_check_fails_a_kernel_without_grid_sync() {
    let err = cooperative_check(&t4(), MUTANT_WITHOUT_GRID_SYNC, 100_003).unwrap_err();
    assert_eq!(
        err.to_string(),
        "mutant_without_grid_sync on the emulated device: data race on partials[1]: block 1 wrote it at gpu/src/kernels/mutants.rs:35:27 and block 0 read it at gpu/src/kernels/mutants.rs:44:36 with no grid.sync() between (blocks see each other's writes only after one)"
    );
}

#[test]
fn the_stage_check_catches_a_dropped_block_the_total_alone_might_pass() {
    let run = cooperative_check(&t4(), MUTANT_DROPPING_LAST_BLOCK, 100_003).unwrap();
    let stages = run.stages.as_ref().unwrap();
    assert!(stages.bad_partials.is_empty(), "every partial is right: {stages:?}");
    assert!(!stages.total_of_partials.pass, "the total is one block short of its partials: {stages:?}");
    assert!(!run.pass());
    let lesson_kernel = cooperative_check(&t4(), gpu::kernels::REDUCE_COOPERATIVE_GRID, 100_003).unwrap();
    assert!(lesson_kernel.pass(), "{lesson_kernel:?}");
}

#[test]
fn the_fast_sums_pass_the_reference_check_at_sizes_that_use_every_part_of_their_loop() {
    let gpu = t4();
    let sums = Sums::load(&gpu, 256).unwrap();
    // Sizes with a tail, with whole chunks and a remainder of single vectors
    // past them (the T4's fast grid is 120 blocks: 960 runs of 32 threads of
    // 128 vectors each), and a second copy of each that starts off a 16-byte
    // boundary, so that the scalar head is read too.
    for n in [1, 3, 31, 611, 4_097, 100_003, (1 << 19) + 5] {
        let xs = reference::fill(n).unwrap();
        let r = Reference::new(&xs);
        let copies = DeviceInput::upload_copies(&gpu, &xs, 2).unwrap();
        let mut s = sums.scratch(sums.fast_grid(n).max(1), 1).unwrap();
        for (copy, input) in copies.windows(n).iter().enumerate() {
            for path in [Path::SingleBlock, Path::FastCooperative, Path::Fast] {
                let run = sums.checked(path, input, &r, &mut s).unwrap();
                assert!(run.pass(), "{path:?}, n = {n}, copy {copy}: {:?}", run.total);
            }
        }
    }
}

#[test]
fn the_same_lesson_gives_the_same_report_on_any_number_of_cores() {
    let report = |workers: usize| {
        let gpu = Gpu::emulated(Device::T4, Options { workers, ..Options::default() });
        let r = lesson::run(&gpu, LessonConfig { n: 100_003, threads_per_block: 256, runs: 1, warmups: 0 }, &mut |_, _| {}).unwrap();
        (r.sums.clone(), r.coalesced.clone(), r.checks.clone())
    };
    let one = report(1);
    assert_eq!(one, report(2));
    assert_eq!(one, report(7));
}

fn cg_lesson(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cg-lesson")).args(args).env_remove("RUST_BACKTRACE").output().expect("the binary runs")
}

#[test]
fn cg_lesson_emulate_runs_the_lesson_and_the_whole_exercise_without_a_gpu() {
    let lesson = cg_lesson(&["--emulate", "--n", "40960"]);
    let out = String::from_utf8_lossy(&lesson.stdout);
    assert!(lesson.status.success(), "{out}\n{}", String::from_utf8_lossy(&lesson.stderr));
    for line in
        ["4 blocks/SM x 40 SMs = 160", "161 blocks   CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", "would use 160 blocks", "Time: not measured on the emulator"]
    {
        assert!(out.contains(line), "no {line:?} in:\n{out}");
    }
    // Nothing that ranks the ways as a GPU would: no milliseconds at all.
    assert!(!out.contains(" ms"), "{out}");
    assert!(out.contains("all 17 checks passed\n"), "{out}");
    assert!(out.ends_with("docs/conjugate-gradient.md)\n"), "the lesson ends on the pointer to the solver: {out}");
    let ex = cg_lesson(&["exercise", "--emulate", "--variant", "reference"]);
    let out = String::from_utf8_lossy(&ex.stdout);
    assert!(ex.status.success(), "{out}");
    // The T4's whole ladder, then two sizes on the larger device, then the
    // T4's two counts, once both have passed.
    assert!(out.contains("  67108864 ") && out.contains("all 9 checks passed\n") && out.contains("all 2 checks passed\n"), "{out}");
    assert!(out.ends_with("4 blocks/SM x 40 SMs = 160 blocks, the most one cooperative launch of it may use\n"), "{out}");
    assert_eq!(out.matches("to submit").count(), 1, "{out}");
    // The exercise as shipped: one line on where to write solve(), nothing on stdout.
    let shipped = cg_lesson(&["exercise", "--emulate"]);
    let (out, err) = (String::from_utf8_lossy(&shipped.stdout), String::from_utf8_lossy(&shipped.stderr));
    if !shipped.status.success() && err.contains("solve() is yours to write") {
        assert!(out.is_empty() && err.lines().count() == 1, "{out}{err}");
        assert!(err.starts_with("error: solve() is yours to write, in exercise/solve.rs"), "{err}");
    } else {
        assert!(shipped.status.success(), "a written solve() passes both ladders: {out}{err}");
    }
}

#[test]
fn a_seeded_run_prints_its_seed_and_gives_the_same_sums() {
    let o = cg_lesson(&["--emulate", "--n", "4099", "--seed", "12345"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("threads interleaved at random from seed 12345 (--seed 12345 repeats this run)"), "{out}");
    let plain = String::from_utf8_lossy(&cg_lesson(&["--emulate", "--n", "4099"]).stdout).into_owned();
    let sums = |s: &str| s.lines().filter(|l| l.contains("two launches  ") || l.contains("cooperative launch  ")).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(sums(&out)[..2], sums(&plain)[..2]);
}

/// The exercise's note on idle blocks says the lesson's sums launch the
/// exercise's answer, min(ceil(n / threads), capacity), not the capacity.
#[test]
fn the_lessons_sums_launch_the_exercises_grid_not_the_whole_capacity() {
    let o = cg_lesson(&["--emulate", "--n", "1"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && out.contains("both sums below run 1 block, the same grid"), "{out}");
}

#[test]
fn a_random_seed_is_printed_by_every_subcommand_so_the_run_can_be_repeated() {
    let seed_in = |text: &str, prefix: &str| -> u64 {
        let line = text.lines().find(|l| l.contains(prefix)).unwrap_or_else(|| panic!("no {prefix:?} in:\n{text}"));
        line.split(prefix).nth(1).unwrap().split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
    };
    // The exercise, in its heading (zero-grid fails at n = 0, so the ladder is short).
    let o = cg_lesson(&["exercise", "--emulate", "--variant", "zero-grid", "--seed", "random"]);
    let out = String::from_utf8_lossy(&o.stdout);
    let seed = seed_in(&out, "threads interleaved at random from seed ");
    assert!(out.contains(&format!("(--seed {seed} repeats this run)")), "{out}");
    // A subcommand without a heading of its own, on stderr.
    let o = cg_lesson(&["occupancy", "--emulate", "--seed=random"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let seed = seed_in(&err, "--seed random drew ");
    assert!(err.contains(&format!("--seed {seed} repeats this run")), "{err}");
    // A seed the learner typed is not repeated back to them.
    let o = cg_lesson(&["occupancy", "--emulate", "--seed", "7"]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("drew"));
}

#[test]
fn a_graph_replays_its_launches_in_order_with_the_same_bits_as_the_paths_it_captures() {
    let gpu = t4();
    let xs = gpu::kernels::order_sensitive_input(100_003);
    let r = Reference::new(&xs);
    let input = DeviceInput::upload(&gpu, &xs).unwrap();
    let sums = Sums::load(&gpu, 256).unwrap();
    let mut s = sums.scratch(sums.grid(xs.len()), 1).unwrap();
    let mut bits = Vec::new();
    for path in [Path::TwoLaunches, Path::TwoLaunchesGraph, Path::Cooperative, Path::CooperativeGraph] {
        let run = sums.checked(path, &input, &r, &mut s).unwrap();
        assert!(run.pass(), "{path:?}: {run:?}");
        bits.push(run.total.value.to_bits());
    }
    assert_eq!((bits[0], bits[2]), (bits[1], bits[3]), "{bits:#010x?}");
}

/// The kernels made to break compute-sanitizer's tools (`tests/sanitizer_targets.rs`), on the emulator.
fn broken_first_stage(
    def: &gpu::kernels::KernelDef<(gpu::mem::In<f32>, gpu::mem::Out<f32>, usize), gpu::kernels::NoGridSync>,
    n: usize,
    blocks: u32,
) -> String {
    let gpu = t4();
    let input = gpu.upload(&reference::fill(n).unwrap()).unwrap();
    let mut partials = gpu.zeros::<f32>(blocks as usize).unwrap();
    gpu.kernel(def).unwrap().reduce(blocks, 256, &input.slice(..), partials.slice_mut(..)).unwrap_err().to_string()
}

#[test]
fn the_kernels_made_to_break_the_sanitizers_are_named_by_the_emulator_too() {
    let past = broken_first_stage(&gpu::kernels::SANITIZER_READS_PAST_N, 611, 3);
    assert!(past.contains("read input[611], past its 611 elements"), "{past}");
    let race = broken_first_stage(&gpu::kernels::SANITIZER_BLOCK_SUM_RACE, 4096, 16);
    assert!(race.contains("data race on dynamic shared memory word"), "{race}");
    let sync = broken_first_stage(&gpu::kernels::SANITIZER_DIVERGENT_ALIGNED_BLOCK_SYNC, 611, 3);
    assert!(sync.contains("met at one block.sync() from different places"), "{sync}");
    // initcheck's target (tests/sanitizer_targets.rs): one partial fewer
    // written than the second stage reads, in memory allocated uninitialized.
    let gpu = t4();
    let input = gpu.upload(&reference::fill(611).unwrap()).unwrap();
    let mut partials = gpu.uninit::<f32>(3).unwrap();
    let mut out = gpu.zeros::<f32>(1).unwrap();
    let k = host::kernels();
    gpu.kernel(&k.reduce_blocks_to_partials).unwrap().reduce(2, 256, &input.slice(..), partials.slice_mut(..2)).unwrap();
    let unwritten = gpu.kernel(&k.reduce_partials_to_total).unwrap().reduce(1, 256, &partials.slice(..), out.slice_mut(..)).unwrap_err().to_string();
    assert!(
        unwritten.contains("read partials[2] at gpu/src/lesson/lesson.rs")
            && unwritten.contains("which nothing has written since it was allocated uninitialized"),
        "{unwritten}"
    );
}

#[test]
fn occupancy_on_the_emulated_t4_has_the_lessons_figures_and_the_ceiling_drops_with_shared_memory() {
    let rows = host::occupancy::run(&t4()).unwrap();
    let at = |kernel: &str, t: u32| rows.iter().find(|r| r.kernel == kernel && r.threads_per_block == t).unwrap().blocks_per_sm;
    // Registers as ptxas counts them for sm_75, where the build found ptxas (the test script installs it).
    let ptx = host::kernels().ptx;
    for r in &rows {
        let name = r.kernel.split(' ').next().unwrap();
        assert_eq!(r.registers_per_thread, ptx.registers_sm75(name), "{}", r.kernel);
        assert_eq!(r.registers_per_thread.is_some(), ptx.ptxas_sm75.is_ok(), "{}", r.kernel);
    }
    // Day 2's sweep on the T4: 16 blocks per SM at 48 and 64 threads, 4 at 256.
    assert_eq!([at("reduce_cooperative_grid", 48), at("reduce_cooperative_grid", 64), at("reduce_cooperative_grid", 256)], [16, 16, 4]);
    let heavy = rows.iter().find(|r| r.kernel.contains("KiB") && r.threads_per_block == 256).unwrap();
    assert_eq!((heavy.blocks_per_sm, heavy.cooperative_max), (1, 40));
    assert!(heavy.limited_by.starts_with("shared memory"), "{}", heavy.limited_by);
}

#[test]
fn the_trace_shows_every_block_waiting_for_the_last_and_names_the_deadlock_of_an_ordinary_launch() {
    let dir = std::env::temp_dir().join(format!("cg-trace-{}", std::process::id()));
    let gpu = Gpu::emulated_traced(Device::T4, Options::default());
    let r = host::trace::run(&gpu, None, Some((Device::T4, Options::default())), 100_003, &dir).unwrap();
    let coop = &r.pictures[0].trace;
    assert_eq!((coop.blocks, coop.trace.len()), (160, 160));
    let last_arrival = coop.trace.iter().map(|b| b.arrive.unwrap()).max().unwrap();
    assert!(coop.trace.iter().all(|b| b.leave.unwrap() >= last_arrival), "a block left grid.sync() before the last one arrived");
    // In the emulated device's time, not the CPU's: all 160 start together, on
    // the T4's 40 SMs, and leave the barrier together; block 0 then adds the partials.
    assert!(coop.trace.iter().all(|b| b.start == 0 && b.leave == Some(last_arrival)), "{:?}", &coop.trace[..3]);
    let places: std::collections::BTreeSet<u32> = coop.trace.iter().map(|b| b.place).collect();
    assert_eq!(places.len(), 40, "the emulated SMs");
    assert_eq!(host::trace::most_resident(&coop.trace), 160);
    assert!(coop.trace[0].end.unwrap() > last_arrival, "block 0's second stage, after grid.sync()");
    // The ordinary launch sized to n: 391 blocks, 160 at a time, in three waves.
    let waves = r.pictures.iter().find(|p| p.title.contains("run in waves")).unwrap();
    let starts: std::collections::BTreeSet<u64> = waves.trace.trace.iter().map(|b| b.start).collect();
    assert_eq!((waves.trace.trace.len(), host::trace::most_resident(&waves.trace.trace)), (391, 160));
    assert!((3..=6).contains(&starts.len()), "waves, not one block per CPU core: {} distinct starts", starts.len());
    let dead = &r.pictures.last().unwrap().trace;
    assert!(dead.trace.iter().all(|b| b.start == 0 && b.arrive.is_some() && b.end.is_none()));
    assert_eq!((dead.blocks, dead.trace.len()), (391, 160));
    assert!(dead.error.as_deref().unwrap().contains("160 blocks hold every place on the device and wait at grid.sync()"), "{:?}", dead.error);
    for p in &r.pictures {
        let text = std::fs::read_to_string(&p.file).unwrap();
        roxmltree::Document::parse(&text).expect("well-formed SVG");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_exercise_as_shipped_says_in_one_line_where_to_write_solve_and_a_written_one_passes() {
    // solve() ships unwritten; once the learner writes it, the same test holds it to the ladder.
    match exercise::run_sizes(&t4(), Variant::Solve, solve::solve, &LADDER[..7], &mut |_| {}) {
        Err(e) => {
            let m = e.to_string();
            assert!(matches!(e, Error::SolveUnwritten), "{m}");
            assert!(!m.contains('\n') && m.contains("exercise/solve.rs") && m.contains("Solved {"), "{m}");
        }
        Ok(r) => assert!(r.verdict().is_ok(), "{}", exercise::render(&r)),
    }
}

#[test]
fn every_block_writing_the_total_is_told_to_have_one_block_write_it() {
    let err = cooperative_check(&t4(), MUTANT_EVERY_BLOCK_WRITES_TOTAL, 100_003).unwrap_err().to_string();
    assert!(err.contains("data race on out[0]") && err.contains("wrote it too"), "{err}");
    assert!(err.contains("have one block write it"), "names the fix: {err}");
    assert!(!err.contains("with no grid.sync() between"), "another grid.sync() would not fix it: {err}");
}

#[test]
fn every_thread_writing_the_blocks_partial_is_told_to_have_one_thread_write_it() {
    let gpu = t4();
    let stage1 = gpu.kernel(&gpu::kernels::mutants::MUTANT_EVERY_THREAD_WRITES_PARTIAL).unwrap();
    let input = gpu.upload(&vec![1.0f32; 4096]).unwrap();
    let mut partials = gpu.zeros::<f32>(16).unwrap();
    let err = stage1.reduce(16, 256, &input.slice(..), partials.slice_mut(..)).unwrap_err().to_string();
    assert!(err.contains("data race on partials[") && err.contains("wrote it at gpu/src/kernels/mutants.rs:"), "{err}");
    assert!(err.contains("have one thread write it (`if block.thread_rank() == 0`)"), "names the fix: {err}");
    assert!(!err.contains("with no barrier between"), "a barrier would not fix it: {err}");
}

#[test]
fn a_tile_sync_where_block_sync_belongs_is_named_as_covering_one_warp() {
    let err = cooperative_check(&t4(), MUTANT_TILE_SYNC_FOR_BLOCK_SYNC, 100_003).unwrap_err().to_string();
    assert!(err.contains("data race on dynamic shared memory"), "{err}");
    assert!(err.contains("covers warp") && err.contains("need block.sync()"), "names the barrier and the fix: {err}");
    assert!(!err.contains("with no barrier between"), "there is a barrier, one warp wide: {err}");
}

#[test]
fn the_barrier_loop_runs_its_barriers_on_the_emulator_and_only_cooperatively() {
    let gpu = t4();
    let kernel = gpu.cooperative_kernel(&host::kernels().grid_sync_loop).unwrap();
    let launch = kernel.configure(kernel.limits(256).unwrap().capacity(), 256).unwrap();
    launch.barriers(3).unwrap();
    launch.barriers(0).unwrap();
    assert!(kernel.configure(161, 256).is_err(), "one block more than fits is refused");
}

#[test]
fn an_ordinary_grid_of_2_to_the_32_threads_is_refused_by_name_and_one_fewer_block_is_not() {
    // Every grid's ranks are 32-bit, as a resident grid's are: the launch path keeps ordinary grids below 2^32 threads.
    let gpu = t4();
    let stage1 = gpu.kernel(&host::kernels().reduce_blocks_to_partials).unwrap();
    let input = gpu.zeros::<f32>(1).unwrap();
    let mut out = gpu.zeros::<f32>(1).unwrap();
    let e = stage1.reduce(1 << 24, 256, &input.slice(..), out.slice_mut(..)).unwrap_err();
    assert!(matches!(e, Error::Launch(L::GridTooManyThreads { blocks: 16_777_216, threads_per_block: 256, .. })), "{e}");
    assert!(e.to_string().contains("4294967296 threads") && e.to_string().contains("a grid-stride loop covers any n"), "{e}");
    // One block fewer passes the bound and fails only on the output's length.
    let e = stage1.reduce((1 << 24) - 1, 256, &input.slice(..), out.slice_mut(..)).unwrap_err();
    assert!(matches!(e, Error::Launch(L::BufferTooShort { .. })), "{e}");
}

/// The stress kernel on `gpu`'s full grid of `threads`-thread blocks: no
/// stale read with its barrier, and the race named without it.
fn stress_full_grid(gpu: &Gpu, threads: u32, rounds: u32) -> u32 {
    let k = gpu.cooperative_kernel(&host::kernels().grid_sync_stress).unwrap();
    let blocks = k.limits(threads).unwrap().capacity();
    let launch = k.configure(blocks, threads).unwrap();
    let (mut slots, mut errors) = (gpu.zeros::<u32>(blocks as usize).unwrap(), gpu.zeros::<u32>(blocks as usize).unwrap());
    launch.stress(slots.slice_mut(..), errors.slice_mut(..), rounds, false).unwrap();
    assert!(gpu.read(&errors).unwrap().iter().all(|&e| e == 0));
    let e = launch.stress(slots.slice_mut(..), errors.slice_mut(..), rounds, true).unwrap_err();
    assert!(e.to_string().contains("data race on slots[") && e.to_string().contains("with no grid.sync() between"), "{e}");
    blocks
}

#[test]
fn the_grid_barrier_stress_reads_every_neighbours_value_and_without_its_barrier_the_race_is_named() {
    assert_eq!(stress_full_grid(&t4(), 256, 50), 160);
}

#[test]
fn a_grid_above_the_watched_threshold_runs_the_watched_barrier_and_without_it_the_race_is_named() {
    // 4,224 blocks of 32 threads on the emulated H200: more than
    // `WATCHED_ABOVE_BLOCKS`, so every grid.sync() is the watched barrier's
    // steps (`cg::barrier::watched`), not the single word's.
    assert!(gpu::cg::barrier::is_watched(4224) && !gpu::cg::barrier::is_watched(528));
    assert_eq!(stress_full_grid(&Gpu::emulated(Device::H200, Options::default()), 32, 3), 4224);
}

#[test]
fn a_block_skipping_the_watched_barrier_is_a_named_deadlock_not_a_hang() {
    // The watched barrier's counters never fill without the last block, so
    // block 0 never releases: on a GPU a hang (or, built with
    // `barrier-timeout`, a report); on the emulator a named deadlock.
    let gpu = Gpu::emulated(Device::H200, Options::default());
    let k = gpu.cooperative_kernel(&host::kernels().grid_sync_missing_block).unwrap();
    let blocks = k.limits(32).unwrap().capacity();
    assert!(gpu::cg::barrier::is_watched(blocks));
    let mut out = gpu.zeros::<u32>(blocks as usize).unwrap();
    let e = k.configure(blocks, 32).unwrap().per_block(out.slice_mut(..)).and_then(|()| Ok(gpu.finish()?)).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("4223 of 4224 blocks reached") && text.contains("block 4223 exited without it"), "{text}");
}

#[test]
fn a_kernel_added_in_one_place_is_found_by_name_and_runs() {
    registry_case::run_the_kernel_named_nowhere_else(&t4());
}

#[test]
fn a_graph_or_queued_runs_given_to_another_device_are_refused_by_name() {
    // Each handle knows the device that made it; the backend holds typed
    // handles (no downcast), and another device's is a named error.
    let (a, b) = (t4(), t4());
    let kernel = a.kernel(&host::kernels().empty).unwrap();
    let graph = a.capture(&mut || Ok(kernel.launch_empty(1, 32)?)).unwrap();
    // SAFETY: the graph's launch addresses no buffer.
    unsafe { a.launch_graph(&graph) }.unwrap();
    let err = unsafe { b.launch_graph(&graph) }.unwrap_err();
    assert!(matches!(err, cg_launcher::error::Error::OtherDevice { what: "a captured graph" }), "{err}");
    assert!(b.graph_cooperative_launches(&graph).is_err());
    let queued = a.queue_timed(2, &mut |_| Ok(())).unwrap();
    let err = b.queued_times(queued).unwrap_err();
    assert!(err.to_string().contains("runs queued was made by another device"), "{err}");
}

fn conjugate_gradient(
    replaced: &[(host::conjugate_gradient::Path, gpu::kernels::KernelDef<host::kernels::PersistentParams, GridSync>)],
    paths: &[host::conjugate_gradient::Path],
    max_iterations: u32,
) -> Result<host::conjugate_gradient::Report, Error> {
    let settings =
        host::conjugate_gradient::Settings { problem: host::conjugate_gradient::Problem::Tridiagonal, n: 4096, tolerance: 1e-5, max_iterations, seed: 1 };
    host::conjugate_gradient::run(&t4(), settings, paths, replaced, None)
}

#[test]
fn the_conjugate_gradient_solve_converges_every_way_on_the_emulator_as_on_the_cpu() {
    use host::conjugate_gradient::Path;
    let r = conjugate_gradient(&[], &Path::ALL, 10_000).unwrap();
    r.verdict().unwrap();
    let iterations: Vec<u32> = r.solves.iter().map(|s| s.iterations).collect();
    assert!(iterations.iter().all(|&k| k.abs_diff(r.reference.iterations) <= 1), "{iterations:?} against {:?}", r.reference);
    assert!(r.solves.iter().all(|s| s.true_residual < 1e-3), "{:?}", r.solves);
}

#[test]
fn a_conjugate_gradient_without_the_sync_before_its_dot_product_is_a_named_race() {
    use host::conjugate_gradient::Path;
    let err = conjugate_gradient(&[(Path::Persistent, host::kernels().mutant_conjugate_gradient_no_sync_before_dot)], &[Path::Persistent], 10_000)
        .unwrap_err()
        .to_string();
    assert!(err.contains("data race on state["), "{err}");
    assert!(err.contains("conjugate_gradient.rs"), "names the line: {err}");
}

#[test]
fn a_fused_conjugate_gradient_without_the_sync_before_its_spmv_is_a_named_race() {
    use host::conjugate_gradient::Path;
    let def = host::kernels().mutant_conjugate_gradient_fused_no_sync_before_spmv;
    let err = conjugate_gradient(&[(Path::Fused, def)], &[Path::Fused], 10_000).unwrap_err().to_string();
    // The neighbour the SpMV reads too early is most often in the same
    // block: a race with no barrier between, named with both lines.
    assert!(err.contains("data race on vectors[") && err.contains("no barrier between"), "{err}");
    assert!(err.contains("conjugate_gradient.rs"), "names the line: {err}");
    // The fused kernel itself converges, with two grid.sync() per iteration.
    let r = conjugate_gradient(&[], &[Path::Fused, Path::FusedResident], 10_000).unwrap();
    r.verdict().unwrap();
    assert!(r.solves.iter().all(|s| s.path.barriers_per_iteration() == 2 && s.iterations.abs_diff(r.reference.iterations) <= 1), "{:?}", r.solves);
}

#[test]
fn a_conjugate_gradient_grid_sync_that_block_0_skips_is_a_named_deadlock() {
    use host::conjugate_gradient::Path;
    let err = conjugate_gradient(&[(Path::Persistent, host::kernels().mutant_conjugate_gradient_sync_in_a_branch)], &[Path::Persistent], 10_000)
        .unwrap_err()
        .to_string();
    assert!(err.contains("grid.sync()"), "{err}");
    assert!(err.contains("block 0"), "names the block that never arrives: {err}");
}

#[test]
fn a_conjugate_gradient_that_runs_out_of_iterations_is_a_named_error() {
    use host::conjugate_gradient::Path;
    let r = conjugate_gradient(&[], &Path::ALL, 2).unwrap();
    let err = r.verdict().unwrap_err().to_string();
    assert!(err.contains("did not converge: after 2 iterations"), "{err}");
}

#[test]
fn a_kernel_with_launch_bounds_runs_within_them_and_a_larger_block_is_refused_by_name() {
    registry_case::run_the_kernel_with_launch_bounds(&t4());
}

/// The same opt-in on the emulated devices: 100 KiB of shared memory per
/// block fits twice on an H200's SM, and not at all on a T4 (64 KiB at most).
#[test]
fn more_than_48_kib_of_shared_memory_per_block_fits_the_emulated_h200_and_not_the_t4() {
    let heavy = gpu::kernels::REDUCE_COOPERATIVE_GRID.with_extra_shared(100 * 1024).unwrap();
    let h200 = Gpu::emulated(Device::H200, Options::default());
    let limits = h200.cooperative_kernel(&heavy).unwrap().limits(256).unwrap();
    assert_eq!(limits.blocks_per_sm, 2, "{}", limits.explain());
    let err = t4().cooperative_kernel(&heavy).unwrap().limits(256).unwrap_err().to_string();
    assert!(err.contains("does not fit on an SM"), "{err}");
}

/// Chronopoulos-Gear's recurrence needs w·r − β r·r / α > 0 (p·A p, as it
/// keeps it): on a matrix that is not positive definite it is not, and the
/// fused kernels stop there and say so, where they would divide by it.
#[test]
fn the_fused_solvers_name_a_breakdown_of_their_recurrence() {
    use host::conjugate_gradient::{Path, Problem, Settings, Solver};
    use host::launch::conjugate_gradient::Csr;
    let n = 1024;
    // -4 on the diagonal: negative definite, so w·r = r·A r < 0 at once.
    let offsets: Vec<u32> = (0..=n as u32).collect();
    let a = Csr::new(n, offsets, (0..n as u32).collect(), vec![-4.0; n]).unwrap();
    let settings = Settings { problem: Problem::Tridiagonal, n, tolerance: 1e-5, max_iterations: 100, seed: 1 };
    let gpu = t4();
    let mut solver = Solver::new(&gpu, &a, settings, &[]).unwrap();
    for path in [Path::Fused, Path::FusedResident] {
        let err = solver.solve(&a, path).unwrap_err().to_string();
        assert!(err.contains("at iteration 1, Chronopoulos-Gear's denominator") && err.contains("broke down"), "{err}");
    }
}

/// The 2-D Poisson problem on the emulator (a small grid: the GPU solves
/// grids of 128 to 2048), by the two persistent recurrences (the classic
/// one the step kernels share, and Chronopoulos-Gear's; all five paths take
/// 80 s in a debug build): each converges to the tolerance, its true
/// residual checked on the CPU, its iterations within the problem's margin.
#[test]
fn the_poisson_problem_is_solved_by_every_path_on_the_emulator() {
    use host::conjugate_gradient::{POISSON_RELATIVE_TOLERANCE, Path, Problem, Settings, run};
    let m = 32;
    let settings = Settings { problem: Problem::Poisson, n: m * m, tolerance: POISSON_RELATIVE_TOLERANCE * m as f64, max_iterations: 10_000, seed: 0 };
    let report = run(&t4(), settings, &[Path::Persistent, Path::Fused], &[], None).unwrap();
    assert!(report.failures().is_empty(), "{:?}", report.failures());
    assert!(report.reference.iterations >= 40, "{:?}", report.reference);
    report.verdict().unwrap();
}

/// The on-chip solver on Poisson, at m = 32 and 64: one grid.sync() per
/// iteration, and the classic recurrence's iterations (it multiplies A p
/// afresh each iteration, where Chronopoulos-Gear's takes p·A p from
/// scalars); the matrix-free stencil adds in CSR's order, so it gives the
/// CSR kernel's x to the bit.
#[test]
fn the_on_chip_solver_takes_the_classic_iterations_on_poisson_with_one_grid_sync() {
    use host::conjugate_gradient::{POISSON_RELATIVE_TOLERANCE, Path, Problem, Settings, run};
    for m in [32, 64] {
        let settings = Settings { problem: Problem::Poisson, n: m * m, tolerance: POISSON_RELATIVE_TOLERANCE * m as f64, max_iterations: 10_000, seed: 0 };
        let report = run(&t4(), settings, &[Path::Persistent, Path::OnChip, Path::OnChipStencil], &[], None).unwrap();
        report.verdict().unwrap();
        let [classic, chip, stencil] = [0, 1, 2].map(|k| &report.solves[k]);
        assert_eq!(chip.iterations, classic.iterations, "m = {m}: {:?}", report.solves);
        assert_eq!(chip.path.barriers_per_iteration(), 1);
        let run = chip.on_chip.as_ref().expect("fits on the emulated T4");
        assert_eq!(run.plan.source, host::conjugate_gradient::on_chip::Source::SharedMemory, "m = {m}");
        assert_eq!(run.plan.band, m as u32);
        assert!(run.gpu_true_residual.is_some(), "checked every 32 iterations: {run:?}");
        assert_eq!(stencil.true_residual, chip.true_residual, "m = {m}: the same bits");
        assert_eq!(stencil.iterations, chip.iterations);
    }
}

/// The host's sum of the on-chip kernels' shared memory is the kernel crate's.
#[test]
fn the_on_chip_shared_memory_is_counted_alike_on_both_sides() {
    use host::launch::conjugate_gradient::on_chip_bytes;
    for (slice, band, nnz) in [(1, 1, 0), (1986, 512, 9930), (7944, 1024, 0), (u32::MAX, u32::MAX, u32::MAX)] {
        assert_eq!(on_chip_bytes(slice, band, nnz), gpu::kernels::on_chip::on_chip_bytes(slice, band, nnz));
    }
}

/// Each mistake the on-chip kernel guards against, named: reading the halo
/// before the grid reduce whose barrier publishes it, a block reads it
/// before its owner wrote it; with the halo written after that barrier a
/// neighbour reads it first.
#[test]
fn an_on_chip_solver_without_its_grid_sync_or_with_its_halo_late_is_a_named_race() {
    use host::conjugate_gradient::on_chip::{Source, load_kernel};
    use host::launch::conjugate_gradient::DeviceSystem;
    let a = host::conjugate_gradient::poisson(32).unwrap();
    let gpu = t4();
    let system = DeviceSystem::upload(&gpu, &a).unwrap();
    let k = host::kernels();
    for (def, on) in [
        (k.mutant_conjugate_gradient_on_chip_no_sync, "data race on exchange["),
        (k.mutant_conjugate_gradient_on_chip_halo_after_sync, "data race on exchange["),
    ] {
        let mut chip = load_kernel(&gpu, &system, Source::DeviceMemory, def, None).unwrap().unwrap();
        let mut vectors = gpu.upload(&[vec![0.0f32; 1024], vec![1.0; 1024], vec![0.0; 3 * 1024]].concat()).unwrap();
        let err = chip.solve(&gpu, &system, &mut vectors, 3.2e-4, 10_000).unwrap_err().to_string();
        assert!(err.contains(on) && err.contains("on_chip.rs"), "{}: {err}", def.name());
    }
    // The kernel itself, the same way, converges.
    let mut chip = load_kernel(&gpu, &system, Source::DeviceMemory, k.conjugate_gradient_on_chip, None).unwrap().unwrap();
    let mut vectors = gpu.upload(&[vec![0.0f32; 1024], vec![1.0; 1024], vec![0.0; 3 * 1024]].concat()).unwrap();
    let s = chip.solve(&gpu, &system, &mut vectors, 3.2e-4, 10_000).unwrap();
    assert_eq!((s.iterations, s.breakdown, s.restarts), (46, 0.0, 0), "{s:?}");
}

/// On a matrix that is not positive definite p·A p is not positive, and the
/// on-chip kernel stops there and says so.
#[test]
fn the_on_chip_solver_names_a_breakdown() {
    use host::conjugate_gradient::{Path, Problem, Settings, Solver};
    use host::launch::conjugate_gradient::Csr;
    let n = 1024;
    let a = Csr::new(n, (0..=n as u32).collect(), (0..n as u32).collect(), vec![-4.0; n]).unwrap();
    let settings = Settings { problem: Problem::Tridiagonal, n, tolerance: 1e-5, max_iterations: 100, seed: 1 };
    let gpu = t4();
    let mut solver = Solver::new(&gpu, &a, settings, &[]).unwrap();
    let err = solver.solve(&a, Path::OnChip).unwrap_err().to_string();
    assert!(err.contains("at iteration 1, p·A p") && err.contains("broke down"), "{err}");
}
