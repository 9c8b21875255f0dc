//! Trustworthy under odd input, on the GPU: determinism, NaN and infinity,
//! random sizes and block sizes against the double reference, and the
//! device errors a user can cause.

// The kernels the host library reaches through `host::kernels()`.
use gpu as _;
use gpu_ptx as _;
use host::device::Gpu;
use host::exercise;
use host::launch::DeviceInput;
use host::reference::{self, Reference};
use host::sums::{Path, Sums};

fn gpu() -> Gpu {
    Gpu::open(0).expect("a GPU that supports cooperative launch")
}

/// Every path's total for `xs` with blocks of `threads_per_block`, each from
/// poisoned buffers: two launches, one cooperative launch, the fast
/// cooperative launch, and the exercise's reference solution.
fn every_path(gpu: &Gpu, xs: &[f32], threads_per_block: u32) -> [f32; 4] {
    let sums = Sums::load(gpu, threads_per_block).unwrap();
    let input = DeviceInput::upload(gpu, xs).unwrap();
    let mut s = sums.scratch(sums.grid(xs.len()).max(sums.fast_grid(xs.len())).max(1), 1).unwrap();
    let mut out = [0f32; 4];
    for (o, path) in out.iter_mut().zip([Path::TwoLaunches, Path::Cooperative, Path::Fast]) {
        sums.poison_partials(&mut s).unwrap();
        gpu.fill(&mut s.out, f32::NAN).unwrap();
        sums.run(path, sums.grid_for(path, xs.len()).max(1), &input, &mut s, 0).unwrap();
        *o = gpu.read(&s.out).unwrap()[0];
    }
    let mut total = gpu.zeros::<f32>(1).unwrap();
    exercise::variants::reference(gpu, &input, &mut total).unwrap();
    out[3] = gpu.read(&total).unwrap()[0];
    out
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_same_input_and_grid_give_bitwise_identical_sums_over_100_runs() {
    let gpu = gpu();
    let sums = Sums::load(&gpu, 256).unwrap();
    let xs = reference::fill(4_194_915).unwrap();
    let input = DeviceInput::upload(&gpu, &xs).unwrap();
    let (grid, fast_grid) = (sums.grid(xs.len()), sums.fast_grid(xs.len()));
    let mut s = sums.scratch(grid.max(fast_grid), 300).unwrap();
    gpu.fill(&mut s.out, f32::NAN).unwrap();
    for k in 0..100 {
        sums.run(Path::TwoLaunches, grid, &input, &mut s, k).unwrap();
        sums.run(Path::Cooperative, grid, &input, &mut s, 100 + k).unwrap();
        sums.run(Path::Fast, fast_grid, &input, &mut s, 200 + k).unwrap();
    }
    let totals = gpu.read(&s.out).unwrap();
    let lesson: std::collections::BTreeSet<u32> = totals[..200].iter().map(|t| t.to_bits()).collect();
    let fast: std::collections::BTreeSet<u32> = totals[200..].iter().map(|t| t.to_bits()).collect();
    println!(
        "200 lesson sums (100 per path, {grid} blocks): {} bit pattern(s) {:?}; 100 fast sums ({fast_grid} blocks): {} bit pattern(s)",
        lesson.len(),
        lesson.iter().map(|b| f32::from_bits(*b)).collect::<Vec<_>>(),
        fast.len()
    );
    assert_eq!(lesson.len(), 1, "both lesson paths, every run, one result");
    assert_eq!(fast.len(), 1, "the fast path, every run, one result");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn nan_and_infinity_in_the_input_reach_every_path_and_nan_never_passes() {
    let gpu = gpu();
    let mut xs = reference::fill(1_000_003).unwrap();
    xs[777_777] = f32::NAN;
    for total in every_path(&gpu, &xs, 256) {
        assert!(total.is_nan(), "{total}");
        assert!(!Reference::new(&xs).check_total(total, 1).pass);
    }
    xs[777_777] = f32::INFINITY;
    for total in every_path(&gpu, &xs, 256) {
        assert_eq!(total, f32::INFINITY);
        assert!(Reference::new(&xs).check_total(total, 1).pass, "infinity is reported as infinity");
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
fn random_sizes_and_block_sizes_pass_every_stage_check_on_every_path() {
    let gpu = gpu();
    let seed = std::env::var("PROPERTY_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed_2026_1130u64);
    let cases = 120;
    let mut state = seed;
    let capacity = Sums::load(&gpu, 256).unwrap().limits.capacity() as u64 * 256;
    for case in 0..cases {
        let threads_per_block = 32 * (1 + next(&mut state) % 32) as u32;
        let jitter = (next(&mut state) % 3) as i64 - 1;
        // Random sizes, and sizes next to the cooperative capacity, to
        // multiples of 32 and to multiples of the block size.
        let base = match case % 4 {
            0 => next(&mut state) % (1 << 22),
            1 => capacity,
            2 => (next(&mut state) % 4096) * 32,
            _ => (next(&mut state) % 2048) * threads_per_block as u64,
        };
        let n = (base as i64 + jitter).max(1) as usize;
        let xs = reference::fill(n).unwrap();
        let r = Reference::new(&xs);
        let sums = Sums::load(&gpu, threads_per_block).unwrap();
        let input = DeviceInput::upload(&gpu, &xs).unwrap();
        let mut s = sums.scratch(sums.grid(n).max(sums.fast_grid(n)), 1).unwrap();
        for path in [Path::TwoLaunches, Path::Cooperative, Path::Fast] {
            let run = sums.checked(path, &input, &r, &mut s).unwrap();
            assert!(run.pass(), "seed {seed:#x} case {case}: n = {n}, {threads_per_block} threads, {path:?}: {run:?}");
        }
    }
    println!("property test: seed {seed:#x}, {cases} cases, 3 paths each, every total and stage within its bound");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_device_index_that_does_not_exist_is_a_named_error() {
    let err = Gpu::open(999).err().expect("no device 999");
    assert!(matches!(err, cg_launcher::error::Error::NoDevice { requested: 999, .. }), "{err}");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn an_input_larger_than_device_memory_is_refused_with_the_amounts() {
    let gpu = gpu();
    let free = gpu.free_memory().unwrap();
    let err = gpu.ensure_free(host::launch::device_bytes((free / 4 + (1 << 28)) as usize).unwrap()).unwrap_err();
    println!("{err}");
    assert!(matches!(err, cg_launcher::error::Error::OutOfDeviceMemory { .. }), "{err}");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_block_size_the_device_cannot_run_is_refused() {
    let gpu = gpu();
    let err = gpu.cooperative_kernel(&gpu::kernels::REDUCE_COOPERATIVE_GRID).unwrap().limits(2048).err().unwrap();
    assert!(matches!(err, cg_launcher::error::Error::BadThreadsPerBlock { threads_per_block: 2048, .. }), "{err}");
}
