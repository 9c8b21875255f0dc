//! Tests that need an NVIDIA GPU. Marked `#[ignore]` so a CPU-only run lists
//! them as ignored by name; run them with `cargo test -- --include-ignored`
//! on a machine with a GPU (`scripts/gpu-check.sh` does, from staged binaries).

mod registry_case;
use gpu::kernels::mutants::{MUTANT_DROPPING_LAST_BLOCK, MUTANT_WITHOUT_GRID_SYNC};
use gpu::kernels::{GridSync, KernelDef, REDUCE_COOPERATIVE_GRID};
use gpu_ptx as _;
use host::device::Gpu;
use host::exercise::{self, LADDER, Variant};

/// The learner's `solve()`, as the program compiles it.
#[path = "../../exercise/solve.rs"]
mod solve;
use host::launch::prelude::*;
use host::launch::{DeviceInput, SumParams};
use host::lesson;
use host::reference::{self, Reference};
use host::sums::{Path, Run, Sums};

fn gpu() -> Gpu {
    Gpu::open(0).expect("a GPU that supports cooperative launch")
}

/// The lesson's cooperative check on `def`, at `n`.
fn cooperative_check(gpu: &Gpu, def: KernelDef<SumParams, GridSync>, n: usize) -> Run {
    let sums = Sums::load_with_cooperative(gpu, 256, def).unwrap();
    let xs = reference::fill(n).unwrap();
    let r = Reference::new(&xs);
    let input = DeviceInput::upload(gpu, &xs).unwrap();
    let mut s = sums.scratch(sums.grid(n), 1).unwrap();
    let run = sums.checked(Path::Cooperative, &input, &r, &mut s).unwrap();
    let st = run.stages.as_ref().unwrap();
    println!(
        "{}, n = {n}, {} blocks: total {} vs {:.3} (bound {:.3e}, pass {}); {} bad partials; total vs partials error {:.3e} <= {:.3e}: {}",
        def.name(),
        run.blocks,
        run.total.value,
        run.total.reference,
        run.total.bound,
        run.total.pass,
        st.bad_partials.len(),
        st.total_of_partials.error,
        st.total_of_partials.bound,
        st.total_of_partials.pass
    );
    run
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_lesson_passes_every_check_at_several_block_sizes_and_sizes() {
    let gpu = gpu();
    for (n, threads_per_block) in [(4_194_915, 256), (4_194_915, 64), (4_194_915, 1024), (1, 256), (0, 256), (611, 256)] {
        let r = lesson::run(&gpu, lesson::LessonConfig { n, threads_per_block, runs: 3, warmups: 1 }, &mut |_, _| {}).unwrap();
        for c in &r.checks {
            assert!(c.pass(), "n = {n}, {threads_per_block} threads: {} ({})", c.name, c.detail);
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_lessons_cooperative_check_fails_a_kernel_without_grid_sync() {
    let run = cooperative_check(&gpu(), MUTANT_WITHOUT_GRID_SYNC, 4_194_915);
    assert!(!run.pass(), "{run:?}");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_stage_check_catches_a_dropped_block_past_2_to_the_32() {
    let gpu = gpu();
    let n = (1usize << 32) + 3;
    let run = cooperative_check(&gpu, MUTANT_DROPPING_LAST_BLOCK, n);
    let st = run.stages.as_ref().unwrap();
    assert!(st.bad_partials.is_empty() && !st.total_of_partials.pass, "{run:?}");
    assert!(!run.pass());
    let right = cooperative_check(&gpu, REDUCE_COOPERATIVE_GRID, n);
    assert!(right.pass(), "{right:?}");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn coalesced_threads_returns_the_lessons_table() {
    let rows = gpu().coalesced_demo().unwrap();
    assert_eq!(rows, lesson::expected_coalesced());
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn oversized_cooperative_grid_is_refused_before_launch_with_the_limit() {
    let gpu = gpu();
    let kernel = gpu.cooperative_kernel(&REDUCE_COOPERATIVE_GRID).unwrap();
    let limits = kernel.limits(256).unwrap();
    let err = kernel.configure(limits.capacity() + 1, 256).err().expect("refused");
    let text = err.to_string();
    println!("{text}");
    assert!(matches!(err, cg_launcher::error::Error::CooperativeGridTooLarge { requested, .. } if requested == limits.capacity() + 1));
    assert!(text.contains(&format!("at most {}", limits.capacity())) && text.contains("limited by"), "{text}");
    assert!(kernel.configure(limits.capacity(), 256).is_ok());
    assert!(matches!(kernel.configure(0, 256).err(), Some(cg_launcher::error::Error::EmptyGrid { .. })));
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_driver_refuses_an_oversized_cooperative_probe_by_name() {
    let gpu = gpu();
    let capacity = gpu.kernel(&gpu::kernels::PROBE_COOPERATIVE).unwrap().limits(256).unwrap().capacity();
    let ok = gpu.probe(capacity, 256, true).unwrap();
    assert!(ok.is_valid && ok.num_blocks == capacity);
    let err = gpu.probe(capacity + 1, 256, true).unwrap_err();
    assert_eq!(err.driver_name().as_deref(), Some("CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"), "{err}");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_exercise_solution_passes_and_each_mistake_fails_exactly_the_cases_the_lesson_predicts() {
    let gpu = gpu();
    for (variant, expected) in [
        (Variant::Reference, vec![]),
        (Variant::GridFromN, vec![4_194_915u64, 67_108_864]),
        (Variant::ZeroGrid, vec![0]),
        (Variant::RoundDown, vec![1, 31, 611]),
        (Variant::BoundsBug, vec![1, 31, 611, 4_194_915]),
        (Variant::PerSm, vec![4096, 40960, 4_194_915, 67_108_864]),
        (Variant::GridReduce, vec![]),
    ] {
        let r = exercise::run_sizes(&gpu, variant, solve::solve, &LADDER, &mut |_| {}).unwrap();
        print!("{}", exercise::render(&r));
        let failing: Vec<u64> = r.cases.iter().filter(|c| !c.pass()).map(|c| c.n).collect();
        assert_eq!(failing, expected, "{variant:?}");
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn out_of_range_shuffle_operands_use_their_low_five_bits() {
    let gpu = gpu();
    let got = gpu.shuffle_out_of_range().unwrap();
    println!("H200 shuffles (lane: shfl 37, shfl 67, down 33, up 34, xor 35, tile-8 shfl 11):");
    for (lane, row) in got.chunks(gpu::kernels::SHUFFLE_PROBES).enumerate().filter(|(l, _)| [0, 1, 2, 7, 8, 30, 31].contains(l)) {
        println!("  {lane:>2}: {row:?}");
    }
    assert_eq!(got, gpu::kernels::shuffle_out_of_range_expected().to_vec());
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn order_sensitive_sums_have_the_bits_the_emulator_is_checked_against() {
    // The GPU's totals for an input whose sum depends on the order of the
    // additions: gpu/tests/emulator.rs checks that the emulator gets these bits.
    let gpu = gpu();
    let xs = gpu::kernels::order_sensitive_input(100_003);
    let input = DeviceInput::upload(&gpu, &xs).unwrap();
    let sums = Sums::load(&gpu, 64).unwrap();
    let mut s = sums.scratch(8, 1).unwrap();
    let mut bits = [0u32; 3];
    for (b, path) in bits.iter_mut().zip([Path::TwoLaunches, Path::Cooperative, Path::FastCooperative]) {
        sums.poison_partials(&mut s).unwrap();
        sums.run(path, 8, &input, &mut s, 0).unwrap();
        *b = gpu.read(&s.out).unwrap()[0].to_bits();
    }
    println!("H200: {bits:#010x?} = {:?}", bits.map(f32::from_bits));
    assert_eq!(bits[0], bits[1], "both lesson paths add in the same order");
    assert_eq!(bits, gpu::kernels::ORDER_SENSITIVE_H200_BITS);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_kernel_reaching_grid_sync_around_the_compile_time_guard_is_refused_by_the_loader() {
    let err = gpu().kernel(&gpu::kernels::UNDECLARED_GRID_SYNC).err().expect("refused");
    let text = err.to_string();
    println!("{text}");
    assert!(matches!(err, cg_launcher::error::Error::UndeclaredGridSync { kernel: "undeclared_grid_sync" }), "{text}");
    assert!(text.contains("declare it #[kernel(cooperative)]"), "{text}");
    let err = gpu().kernel(&gpu::kernels::UNDECLARED_GRID_SYNC_IN_A_HELPER).err().expect("refused");
    assert!(matches!(err, cg_launcher::error::Error::UndeclaredGridSync { kernel: "undeclared_grid_sync_in_a_helper" }), "{err}");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_traced_cooperative_launch_has_every_block_resident_and_none_leaving_before_the_last_arrives() {
    let gpu = Gpu::open_traced(0, host::observe::Tracing::Read).unwrap();
    let dir = std::env::temp_dir().join(format!("cg-trace-gpu-{}", std::process::id()));
    let r = host::trace::run(&gpu, None, None, 4_194_915, &dir).unwrap();
    print!("{}", host::trace::render(&r));
    let coop = &r.pictures[0].trace;
    assert_eq!(coop.trace.len() as u32, coop.blocks);
    let last_arrival = coop.trace.iter().map(|b| b.arrive.unwrap()).max().unwrap();
    let first_leave = coop.trace.iter().map(|b| b.leave.unwrap()).min().unwrap();
    assert!(first_leave >= last_arrival, "a block left grid.sync() at {first_leave}, before the last arrived at {last_arrival}");
    let sms: std::collections::BTreeSet<u32> = coop.trace.iter().map(|b| b.place).collect();
    assert_eq!(sms.len() as u32, gpu.info.sms, "the cooperative grid covers every SM");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn one_grid_barrier_costs_a_positive_time_at_every_measured_grid() {
    let gpu = gpu();
    let (rows, why) = host::bench::barrier::run(&gpu).unwrap();
    print!("{}", host::bench::barrier::render(&rows, why.as_deref()));
    assert!(rows.len() >= 4);
    for r in &rows {
        for us in [r.grid_sync_us, r.kernel_boundary_us, r.graph_node_us].into_iter().chain(r.nvidia_us) {
            assert!(us.is_finite() && us > 0.0 && us < 100.0, "{r:?}");
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_million_grid_barriers_each_followed_by_a_neighbours_read_find_no_stale_value_at_every_measured_grid() {
    let gpu = gpu();
    let k = gpu.cooperative_kernel(&host::kernels().grid_sync_stress).unwrap();
    let grids = host::bench::barrier::grids(&gpu).unwrap();
    // Stale reads over `rounds` rounds on `blocks` blocks of `threads`.
    let stale = |blocks: u32, threads: u32, rounds: u32, skip_first_sync: bool| -> u64 {
        let launch = k.configure(blocks, threads).unwrap();
        let (mut slots, mut errors) = (gpu.zeros::<u32>(blocks as usize).unwrap(), gpu.zeros::<u32>(blocks as usize).unwrap());
        launch.stress(slots.slice_mut(..), errors.slice_mut(..), rounds, skip_first_sync).unwrap();
        gpu.read(&errors).unwrap().iter().map(|&e| e as u64).sum()
    };
    // 500,000 rounds of two barriers each.
    const ROUNDS: u32 = 500_000;
    for (blocks, threads) in grids.iter().copied().chain([(1, 256)]) {
        let start = std::time::Instant::now();
        let wrong = stale(blocks, threads, ROUNDS, false);
        println!("{blocks} blocks of {threads}: {} barriers, {wrong} stale reads, {:.1} s", 2 * ROUNDS, start.elapsed().as_secs_f64());
        assert_eq!(wrong, 0);
    }
    // Broken on purpose: without the barrier between write and read, the
    // check sees it, on the largest grid of each barrier.
    let largest = |watched: bool| grids.iter().copied().filter(|&(b, _)| gpu::cg::barrier::is_watched(b) == watched).max_by_key(|&(b, _)| b);
    for (blocks, threads) in [largest(false), largest(true)].into_iter().flatten() {
        let wrong = stale(blocks, threads, 10_000, true);
        println!("without the first barrier, {blocks} blocks of {threads}, 10,000 rounds: {wrong} stale reads");
        assert!(wrong > 0, "the check never saw a missing barrier");
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_kernel_added_in_one_place_is_found_by_name_and_runs() {
    registry_case::run_the_kernel_named_nowhere_else(&gpu());
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_conjugate_gradient_solve_converges_every_way_on_the_gpu() {
    use host::conjugate_gradient::{Path, Settings, run};
    let gpu = gpu();
    let settings = Settings { problem: host::conjugate_gradient::Problem::Tridiagonal, n: 1 << 20, tolerance: 1e-5, max_iterations: 10_000, seed: 1 };
    let r = run(&gpu, settings, &Path::ALL, &[], None).unwrap();
    r.verdict().unwrap();
}

/// The on-chip solver on Poisson. At m = 256 it fits whole (x, r, p, A p
/// and the matrix's rows in each block's shared memory); at m = 1024 the
/// vectors fit and the matrix does not, so the CSR path says so and the
/// graph solves it, while the matrix-free stencil and the kernel that reads
/// the CSR from device memory run on chip; at m = 2048 nothing fits. Every
/// solve passes every check (iterations within 5% of the CPU's f64 count).
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_on_chip_solver_fits_what_it_can_and_names_the_graph_past_it_on_the_gpu() {
    use host::conjugate_gradient::{POISSON_RELATIVE_TOLERANCE, Path, Problem, Settings, Solver, poisson, run};
    let gpu = gpu();
    let paths = [Path::Persistent, Path::OnChip, Path::OnChipStencil, Path::OnChipStreamed];
    for (m, falls_back) in [(256, [false, false, false]), (1024, [true, false, false])] {
        let settings = Settings { problem: Problem::Poisson, n: m * m, tolerance: POISSON_RELATIVE_TOLERANCE * m as f64, max_iterations: 10_000, seed: 0 };
        let r = run(&gpu, settings, &paths, &[], None).unwrap();
        r.verdict().unwrap();
        for (s, falls_back) in r.solves[1..].iter().zip(falls_back) {
            assert_eq!(s.fallback.is_some(), falls_back, "m = {m}: {s:?}");
            assert_eq!(s.on_chip.is_some(), !falls_back, "m = {m}: {s:?}");
        }
    }
    let m = 2048;
    let a = poisson(m).unwrap();
    let settings = Settings { problem: Problem::Poisson, n: m * m, tolerance: POISSON_RELATIVE_TOLERANCE * m as f64, max_iterations: 10_000, seed: 0 };
    let mut solver = Solver::new(&gpu, &a, settings, &[]).unwrap();
    for path in [Path::OnChip, Path::OnChipStencil] {
        let s = solver.solve(&a, path).unwrap();
        let why = s.fallback.expect("N = 2^22 does not fit in one GPU's shared memory");
        assert!(why.contains("more than the") && why.contains("solved by the CUDA graph"), "{why}");
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU and nvcc"]
fn the_conjugate_gradient_c_plus_plus_twin_converges_through_the_same_launch_path() {
    use host::conjugate_gradient::{Path, Settings, Twin, run};
    let gpu = gpu();
    let twin = Twin::build(&gpu).unwrap().unwrap();
    let settings = Settings { problem: host::conjugate_gradient::Problem::Tridiagonal, n: 1 << 20, tolerance: 1e-5, max_iterations: 10_000, seed: 1 };
    let paths: Vec<Path> = Path::TWINS.iter().flat_map(|&(twin, rust)| [rust, twin]).collect();
    let r = run(&gpu, settings, &paths, &[], Some(&twin)).unwrap();
    r.verdict().unwrap();
    for s in &r.solves {
        println!("{}: {} blocks, {:?} registers, {} iterations, residual {:.3e}", s.path.name(), s.blocks, s.registers_per_thread, s.iterations, s.residual);
    }
    for pair in r.solves.chunks(2) {
        assert_eq!(pair[0].iterations, pair[1].iterations, "{} and its twin are the same algorithm in the same order", pair[0].path.name());
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_kernel_with_launch_bounds_runs_within_them_and_a_larger_block_is_refused_by_name_on_the_gpu() {
    registry_case::run_the_kernel_with_launch_bounds(&gpu());
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_kernel_declared_for_the_emulator_only_is_refused_by_name_on_the_gpu() {
    let err = gpu()
        .cooperative_kernel(&host::kernels().mutant_conjugate_gradient_sync_in_a_branch)
        .map(|_| ())
        .map_err(host::error::Error::from)
        .unwrap_err()
        .to_string();
    assert!(err.contains("is declared #[kernel(emulator)]") && err.contains("--emulate"), "{err}");
}

/// A kernel asking 100 KiB of dynamic shared memory per block: above the 48
/// KiB a kernel gets without opting in. The launcher opts it in
/// (`cudaFuncAttributeMaxDynamicSharedMemorySize`), so the occupancy API
/// counts it (2 blocks per SM on an H200, whose SMs hold 228 KiB) and the
/// cooperative sum runs and is right; past the device's opt-in maximum no
/// block fits, named.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_kernel_asking_more_than_48_kib_of_shared_memory_is_opted_in_and_runs() {
    let gpu = gpu();
    let heavy = REDUCE_COOPERATIVE_GRID.with_extra_shared(100 * 1024).unwrap();
    let limits = gpu.cooperative_kernel(&heavy).unwrap().limits(256).unwrap();
    println!("{}: {} blocks/SM with 100 KiB more shared memory ({})", gpu.info.name, limits.blocks_per_sm, limits.explain());
    assert!(limits.blocks_per_sm >= 1, "{}", limits.explain());
    assert!(limits.block.shared_bytes > 100 * 1024);
    let run = cooperative_check(&gpu, heavy, 1 << 20);
    assert!(run.pass(), "the sum with 100 KiB of shared memory per block");
    let too_much = REDUCE_COOPERATIVE_GRID.with_extra_shared(gpu.info.sm.max_shared_per_block + 1).unwrap();
    let err = gpu.cooperative_kernel(&too_much).unwrap().limits(256).unwrap_err().to_string();
    assert!(err.contains("does not fit on an SM"), "{err}");
}
