//! Trustworthy under odd input, on the GPU: determinism, NaN and infinity,
//! random sizes and block sizes against the double reference, and the
//! device errors a user can cause.

use host::device::Gpu;
use host::error::Error;
use host::exercise;
use host::launch::DeviceInput;
use host::reference;
use host::sums::Sums;

fn gpu() -> Gpu {
    Gpu::open(0).expect("a GPU that supports cooperative launch")
}

/// Every path's total for `xs` with blocks of `threads`: two launches, one
/// cooperative launch, the fast cooperative launch, and the exercise's `solve()`.
fn every_path(gpu: &Gpu, xs: &[f32], threads: u32) -> [f32; 4] {
    let sums = Sums::load(gpu, threads).unwrap();
    let input = DeviceInput::upload(gpu, xs).unwrap();
    let grid = sums.grid(xs.len()).max(1);
    let mut s = sums.scratch(grid).unwrap();
    let two = sums.total_of(&mut s, |s| sums.two_launches(grid, &input, s)).unwrap();
    let one = sums.total_of(&mut s, |s| sums.one_cooperative_launch(grid, &input, s)).unwrap();
    let fast_grid = sums.fast_grid(xs.len()).max(1);
    let mut f = sums.scratch(fast_grid).unwrap();
    let fast = sums.total_of(&mut f, |f| sums.one_fast_launch(fast_grid, &input, f)).unwrap();
    let mut total = gpu.zeros::<f32>(1).unwrap();
    exercise::solve(gpu, &input, &mut total).unwrap();
    [two, one, fast, gpu.read(&total).unwrap()[0]]
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_same_input_and_grid_give_bitwise_identical_sums_over_100_runs() {
    let gpu = gpu();
    let sums = Sums::load(&gpu, 256).unwrap();
    let xs = reference::fill(4_194_915).unwrap();
    let input = DeviceInput::upload(&gpu, &xs).unwrap();
    let grid = sums.grid(xs.len());
    let mut s = sums.scratch(grid).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    let fast_grid = sums.fast_grid(xs.len());
    let mut fast = std::collections::BTreeSet::new();
    for _ in 0..100 {
        seen.insert(sums.total_of(&mut s, |s| sums.two_launches(grid, &input, s)).unwrap().to_bits());
        seen.insert(sums.total_of(&mut s, |s| sums.one_cooperative_launch(grid, &input, s)).unwrap().to_bits());
        fast.insert(sums.total_of(&mut s, |s| sums.one_fast_launch(fast_grid, &input, s)).unwrap().to_bits());
    }
    println!("200 lesson sums (100 per path, {grid} blocks): {} distinct bit pattern(s): {:?}", seen.len(), seen.iter().map(|b| f32::from_bits(*b)).collect::<Vec<_>>());
    println!("100 fast sums ({fast_grid} blocks): {} distinct bit pattern(s)", fast.len());
    assert_eq!(seen.len(), 1, "both lesson paths, every run, one result");
    assert_eq!(fast.len(), 1, "the fast path, every run, one result");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn nan_and_infinity_in_the_input_reach_every_path_and_nan_never_passes() {
    let gpu = gpu();
    let mut xs = reference::fill(1_000_003).unwrap();
    xs[777_777] = f32::NAN;
    let (reference, _) = reference::reference_sum(&xs);
    for total in every_path(&gpu, &xs, 256) {
        assert!(total.is_nan(), "{total}");
        assert!(!reference::check(total, reference, f64::INFINITY).pass);
    }
    xs[777_777] = f32::INFINITY;
    let (reference, _) = reference::reference_sum(&xs);
    for total in every_path(&gpu, &xs, 256) {
        assert_eq!(total, f32::INFINITY);
        assert!(reference::check(total, reference, 0.0).pass, "infinity is reported as infinity");
    }
    xs[5] = f32::NEG_INFINITY;
    for total in every_path(&gpu, &xs, 256) {
        assert!(total.is_nan(), "inf + -inf is NaN: {total}");
    }
}

/// splitmix64: a small, well-known generator, so the test needs no crate.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn random_sizes_and_block_sizes_match_the_double_reference_on_every_path() {
    let gpu = gpu();
    let seed = std::env::var("PROPERTY_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed_2026_1129u64);
    let cases = 120;
    let mut state = seed;
    let capacity = Sums::load(&gpu, 256).unwrap().limits.capacity() * 256;
    for case in 0..cases {
        let threads = 32 * (1 + next(&mut state) % 32) as u32;
        let jitter = (next(&mut state) % 3) as i64 - 1;
        // Random sizes, and sizes next to the cooperative capacity, to
        // multiples of 32 and to multiples of the block size.
        let base = match case % 4 {
            0 => next(&mut state) % (1 << 22),
            1 => capacity,
            2 => (next(&mut state) % 4096) * 32,
            _ => (next(&mut state) % 2048) * threads as u64,
        };
        let n = (base as i64 + jitter).max(0) as usize;
        let xs = reference::fill(n).unwrap();
        let (want, abs) = reference::reference_sum(&xs);
        let sums = Sums::load(&gpu, threads).unwrap();
        let grid = sums.grid(n).max(1);
        // The exercise's solve() runs 256-thread blocks on its own grid.
        let solve_grid = (n as u64).div_ceil(256).min(gpu.cooperative_kernel(&gpu::kernels::EXERCISE_SUM).unwrap().limits(256).unwrap().capacity()).max(1);
        let fast_grid = sums.fast_grid(n).max(1);
        let bounds = [
            reference::error_bound(reference::longest_chain(n as u64, grid, threads), abs),
            reference::error_bound(reference::longest_chain(n as u64, grid, threads), abs),
            reference::error_bound(reference::longest_chain_fast(n as u64, fast_grid, threads), abs),
            reference::error_bound(reference::longest_chain(n as u64, solve_grid, 256), abs),
        ];
        let got = every_path(&gpu, &xs, threads);
        for (path, (total, bound)) in ["two launches", "cooperative", "fast cooperative", "solve()"].iter().zip(got.iter().zip(bounds)) {
            let c = reference::check(*total, want, bound);
            assert!(c.pass, "seed {seed:#x} case {case}: n = {n}, block {threads}, {path}: {c:?}");
        }
    }
    println!("property test: seed {seed:#x}, {cases} cases, 4 paths each, all within the bound");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_device_index_that_does_not_exist_is_a_named_error() {
    let err = Gpu::open(999).err().expect("no device 999");
    assert!(matches!(err, Error::NoDevice { requested: 999, .. }), "{err}");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn an_input_larger_than_device_memory_is_refused_with_the_amounts() {
    let gpu = gpu();
    let free = gpu.free_memory().unwrap();
    let err = gpu.ensure_free(host::launch::device_bytes(free / 4 + (1 << 28))).unwrap_err();
    println!("{err}");
    assert!(matches!(err, Error::OutOfDeviceMemory { .. }), "{err}");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_block_size_the_device_cannot_run_is_refused() {
    let gpu = gpu();
    let err = gpu.cooperative_kernel(&gpu::kernels::REDUCE_COOPERATIVE_GRID).unwrap().limits(2048).err().unwrap();
    assert!(matches!(err, Error::BadBlockSize { block: 2048, .. }), "{err}");
}
