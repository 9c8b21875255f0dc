//! Tests that need an NVIDIA GPU. Marked `#[ignore]` so a CPU-only run lists
//! them as ignored by name; run them with `cargo test -- --include-ignored`
//! on a machine with a GPU.

use host::device::Gpu;
use host::error::Error;
use host::exercise::{self, LADDER};
use host::launch::DeviceInput;
use host::{lesson, reference};
use gpu::kernels::REDUCE_COOPERATIVE_GRID;

fn gpu() -> Gpu {
    Gpu::open(0).expect("a GPU that supports cooperative launch")
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn cooperative_sum_matches_the_double_reference_at_the_issue_sizes() {
    let gpu = gpu();
    let kernel = gpu.cooperative_kernel(&REDUCE_COOPERATIVE_GRID).unwrap();
    let capacity = kernel.limits(256).unwrap().capacity();
    for n in [1usize, 611, 1024, 4_194_915] {
        let xs = reference::fill(n).unwrap();
        let (want, abs) = reference::reference_sum(&xs);
        let blocks = (n as u64).div_ceil(256).min(capacity);
        let input = DeviceInput::upload(&gpu, &xs).unwrap();
        let launch = kernel.configure(blocks, 256).unwrap();
        let (mut partials, mut total) = (gpu.zeros(blocks as usize).unwrap(), gpu.zeros(1).unwrap());
        gpu.fill(&mut total, f32::NAN).unwrap();
        launch.sum(&input, &mut partials, &mut total).unwrap();
        let got = gpu.read(&total).unwrap()[0];
        let bound = reference::error_bound(reference::longest_chain(n as u64, blocks, 256), abs);
        let check = reference::check(got, want, bound);
        println!("n = {n:>8}: {got:.6} vs {want:.6} (error {:.2e}, bound {:.2e}, {blocks} blocks)", check.error, check.bound);
        assert!(check.pass, "n = {n}: {check:?}");
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn coalesced_threads_returns_the_lessons_table() {
    let rows = gpu().coalesced_demo().unwrap();
    for r in &rows {
        println!("warp {} lane {:>2} size {:>2} rank {:>2}", r.warp, r.lane, r.group_size, r.rank);
    }
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
    assert!(matches!(err, Error::CooperativeGridTooLarge { requested, .. } if requested == limits.capacity() + 1));
    assert!(text.contains(&format!("at most {}", limits.capacity())) && text.contains("limited by"), "{text}");
    assert!(kernel.configure(limits.capacity(), 256).is_ok());
    assert!(matches!(kernel.configure(0, 256).err(), Some(Error::EmptyGrid { .. })));
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_driver_refuses_an_oversized_cooperative_probe_by_name() {
    let gpu = gpu();
    let capacity = gpu.kernel(&gpu::kernels::PROBE_COOPERATIVE).unwrap().limits(256).unwrap().capacity();
    let ok = gpu.probe(capacity, 256, true).unwrap();
    assert!(ok.is_valid);
    assert_eq!(ok.num_blocks as u64, capacity);
    let err = gpu.probe(capacity + 1, 256, true).unwrap_err();
    assert_eq!(err.driver_name().as_deref(), Some("CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"), "{err}");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_lesson_passes_every_check_at_several_block_sizes_and_sizes() {
    let gpu = gpu();
    for (n, threads) in [(4_194_915, 256), (4_194_915, 64), (4_194_915, 1024), (1, 256), (0, 256), (611, 256)] {
        let r = lesson::run(&gpu, lesson::LessonConfig { n, threads, runs: 3, warmups: 1 }).unwrap();
        for c in &r.checks {
            assert!(c.pass, "n = {n}, block {threads}: {} ({})", c.name, c.detail);
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_exercise_solution_passes_the_whole_ladder() {
    let r = exercise::run(&gpu(), host::cli::Variant::Solve).unwrap();
    print!("{}", exercise::render(&r));
    assert_eq!(r.smallest_failure, None);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn each_exercise_variant_fails_exactly_the_cases_the_lesson_predicts() {
    let gpu = gpu();
    use host::cli::Variant::*;
    for (variant, expected) in [
        (GridFromN, vec![4_194_915u64, 67_108_864]),
        (ZeroGrid, vec![0]),
        (BoundsBug, vec![1, 31, 611, 4_194_915]),
    ] {
        let r = exercise::run(&gpu, variant).unwrap();
        print!("{}", exercise::render(&r));
        let failing: Vec<u64> = r.cases.iter().filter(|c| !c.pass).map(|c| c.n).collect();
        assert_eq!(failing, expected, "{variant:?}");
        assert_eq!(r.cases.len(), LADDER.len());
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn order_sensitive_sums_for_the_emulator() {
    // The GPU's totals for an input whose sum depends on the order of the
    // additions; gpu/tests/emulator.rs holds them and checks that the
    // emulator gets the same bits.
    let gpu = gpu();
    let n = 100_003;
    let xs = gpu::emu::order_sensitive_input(n);
    let input = DeviceInput::upload(&gpu, &xs).unwrap();
    let sums = host::sums::Sums::load(&gpu, 64).unwrap();
    let mut s = sums.scratch(8).unwrap();
    let two = sums.total_of(&mut s, |s| sums.two_launches(8, &input, s)).unwrap();
    let one = sums.total_of(&mut s, |s| sums.one_cooperative_launch(8, &input, s)).unwrap();
    let fast = sums.total_of(&mut s, |s| sums.one_fast_launch(8, &input, s)).unwrap();
    let bits = [two.to_bits(), one.to_bits(), fast.to_bits()];
    println!("H200: {bits:#010x?} = {:?}", [two, one, fast]);
    assert_eq!(bits[0], bits[1], "both lesson paths add in the same order");
    let (want, abs) = reference::reference_sum(&xs);
    let bound = reference::error_bound(reference::longest_chain_fast(n as u64, 8, 64), abs);
    for total in [two, one, fast] {
        assert!(reference::check(total, want, bound).pass, "{total} vs {want}");
    }
}
