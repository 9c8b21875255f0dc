//! The lesson's kernels, unchanged, on the emulated device (no GPU needed).

use gpu::cg::{self, Greater, Less, Plus, this_grid, this_thread_block, tiled_partition};
use gpu::emu::{Device, Fault, Shared};
use gpu::kernels::{self, one_f32_per_warp};

/// A small device, so that a test launch is a few hundred OS threads: 2 SMs
/// of 256 threads and 4 blocks each, so 4 blocks of 64 per SM and 8 in a
/// cooperative grid.
const DEV: Device = Device { sms: 2, max_threads_per_sm: 256, max_blocks_per_sm: 4, shared_bytes_per_sm: 48 * 1024, max_threads_per_block: 1024 };
const THREADS: u32 = 64;

fn input(n: usize) -> Vec<f32> {
    // The host's fill, then a guard of NaN as the host's DeviceInput has.
    let mut xs: Vec<f32> = (0..n as u64).map(|i| 0.5 + (i.wrapping_mul(2_654_435_761) % 1024) as f32 / 1024.0).collect();
    xs.extend(std::iter::repeat_n(f32::NAN, 1024));
    xs
}

fn reference(xs: &[f32], n: usize) -> (f64, f64) {
    xs[..n].iter().fold((0.0, 0.0), |(s, a), &x| (s + x as f64, a + (x as f64).abs()))
}

/// The host's bound: gamma_h * sum|x| for the longest chain of additions.
fn within_bound(value: f32, n: usize, blocks: u32, xs: &[f32]) -> bool {
    let (want, abs) = reference(xs, n);
    let h = (n as f64 / (blocks as f64 * THREADS as f64)).ceil() + (blocks as f64 / THREADS as f64).ceil() + 24.0;
    let hu = h / (1u64 << 24) as f64;
    value.is_finite() && (value as f64 - want).abs() <= hu / (1.0 - hu) * abs
}

fn grid_for(n: usize) -> u32 {
    (n as u32).div_ceil(THREADS).min(DEV.cooperative_capacity(THREADS, one_f32_per_warp(THREADS))).max(1)
}

/// Both of the lesson's paths on the emulator: (two launches, one cooperative launch).
fn lesson_sums(xs: &[f32], n: usize, grid: u32) -> (f32, f32) {
    let smem = one_f32_per_warp(THREADS);
    let mut partials = vec![0f32; grid as usize];
    let mut total = [f32::NAN; 1];
    let (i, p, t) = (Shared(xs.as_ptr()), Shared(partials.as_mut_ptr()), Shared(total.as_mut_ptr()));
    DEV.launch(grid, THREADS, smem, false, &|| unsafe { kernels::reduce_blocks_to_partials(i.get(), p.get(), n) }).unwrap();
    DEV.launch(1, THREADS, smem, false, &|| unsafe { kernels::reduce_partials_to_total(p.get(), t.get(), grid as usize) }).unwrap();
    let two = total[0];
    total[0] = f32::NAN;
    DEV.launch(grid, THREADS, smem, true, &|| unsafe { kernels::reduce_cooperative_grid(i.get(), p.get(), t.get(), n) }).unwrap();
    (two, total[0])
}

#[test]
fn the_lesson_sums_match_the_double_reference_and_each_other() {
    for n in [1usize, 611, 1024, 100_003] {
        let xs = input(n);
        let grid = grid_for(n);
        let (two, one) = lesson_sums(&xs, n, grid);
        assert!(within_bound(two, n, grid, &xs), "n = {n}: two launches {two}, reference {:?}", reference(&xs, n));
        assert_eq!(two.to_bits(), one.to_bits(), "n = {n}: the same arithmetic in both paths");
    }
}

#[test]
fn an_ordinary_launch_larger_than_the_device_runs_in_waves() {
    let n = 100_003;
    let xs = input(n);
    let grid = 32; // four times what fits at once
    let smem = one_f32_per_warp(THREADS);
    let mut partials = vec![0f32; grid as usize];
    let (i, p) = (Shared(xs.as_ptr()), Shared(partials.as_mut_ptr()));
    DEV.launch(grid, THREADS, smem, false, &|| unsafe { kernels::reduce_blocks_to_partials(i.get(), p.get(), n) }).unwrap();
    let total: f32 = partials.iter().sum();
    assert!(within_bound(total, n, grid, &xs) || (total as f64 - reference(&xs, n).0).abs() < 1.0, "{total}");
}

#[test]
fn an_oversized_cooperative_launch_is_refused_by_name() {
    assert_eq!(Device::T4_LIKE.cooperative_capacity(256, one_f32_per_warp(256)), 16, "4 blocks of 256 per SM, 4 SMs");
    let capacity = DEV.cooperative_capacity(THREADS, 0);
    assert_eq!(capacity, 8);
    let mut out = [0u32; 2];
    let o = Shared(out.as_mut_ptr());
    let err = DEV.launch(capacity + 1, THREADS, 0, true, &|| unsafe { kernels::probe_cooperative(o.get()) }).unwrap_err();
    assert_eq!(err, Fault::CooperativeLaunchTooLarge { requested: 9, max: 8 });
    assert_eq!(err.driver_name(), "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE");
    assert_eq!(DEV.launch(0, THREADS, 0, false, &|| ()).unwrap_err().driver_name(), "CUDA_ERROR_INVALID_VALUE");
}

#[test]
fn is_valid_tells_the_launches_apart_and_a_grid_sync_under_an_ordinary_launch_traps() {
    let mut out = [9u32; 2];
    let o = Shared(out.as_mut_ptr());
    DEV.launch(8, THREADS, 0, false, &|| unsafe { kernels::probe_cooperative(o.get()) }).unwrap();
    assert_eq!(out, [0, 8]);
    DEV.launch(8, THREADS, 0, true, &|| unsafe { kernels::probe_cooperative(o.get()) }).unwrap();
    assert_eq!(out, [1, 8]);
    let xs = input(1000);
    let (mut partials, mut total) = (vec![0f32; 4], [0f32]);
    let (i, p, t) = (Shared(xs.as_ptr()), Shared(partials.as_mut_ptr()), Shared(total.as_mut_ptr()));
    let err = DEV
        .launch(4, THREADS, one_f32_per_warp(THREADS), false, &|| unsafe { kernels::reduce_cooperative_grid(i.get(), p.get(), t.get(), 1000) })
        .unwrap_err();
    assert!(matches!(err, Fault::Trap { .. }), "{err}");
}

#[test]
fn coalesced_threads_returns_the_lessons_table() {
    let mut out = vec![0u32; 4 * kernels::COALESCED_DEMO_THREADS as usize];
    let o = Shared(out.as_mut_ptr());
    DEV.launch(1, kernels::COALESCED_DEMO_THREADS, 0, false, &|| unsafe { kernels::coalesced_demo(o.get()) }).unwrap();
    let rows: Vec<[u32; 4]> = out.chunks_exact(4).filter(|r| r[2] != 0).map(|r| [r[0], r[1], r[2], r[3]]).collect();
    let mut expected = vec![[0, 2, 3, 0], [0, 4, 3, 1], [0, 8, 3, 2]];
    expected.extend((0..16).map(|lane| [1, lane, 16, lane]));
    assert_eq!(rows, expected);
}

/// Each thread writes its rank, syncs the grid, then reads a slot another
/// block wrote, three times over.
unsafe fn neighbours(data: *mut u32, seen: *mut u32) {
    let grid = this_grid();
    let me = grid.thread_rank();
    let total = grid.num_threads();
    for round in 0..3u32 {
        unsafe { *data.add(me) = me as u32 * 10 + round };
        grid.sync();
        let other = (me + 257 * (round as usize + 1)) % total;
        unsafe { *seen.add(me * 3 + round as usize) = *data.add(other) };
        grid.sync();
    }
}

#[test]
fn grid_sync_makes_every_blocks_writes_visible_to_every_block() {
    let blocks = DEV.cooperative_capacity(THREADS, 0);
    let total = (blocks * THREADS) as usize;
    let mut data = vec![0u32; total];
    let mut seen = vec![0u32; total * 3];
    let (d, s) = (Shared(data.as_mut_ptr()), Shared(seen.as_mut_ptr()));
    DEV.launch(blocks, THREADS, 0, true, &|| unsafe { neighbours(d.get(), s.get()) }).unwrap();
    for me in 0..total {
        for round in 0..3 {
            let other = (me + 257 * (round + 1)) % total;
            assert_eq!(seen[me * 3 + round], other as u32 * 10 + round as u32, "thread {me} round {round}");
        }
    }
}

/// Every tile collective, for tiles of 8 and of 32, written per thread.
unsafe fn tile_collectives(input: *const u32, out: *mut u32) {
    let block = this_thread_block();
    let r = block.thread_rank() as usize;
    let v = unsafe { *input.add(r) };
    let t32 = tiled_partition::<32>(&block);
    let t8 = tiled_partition::<8>(&block);
    let results = [
        t32.shfl_down(v, 3),
        t32.shfl_up(v, 2),
        t32.shfl_xor(v, 5),
        t32.shfl(v, 7),
        t32.ballot(v % 3 == 0),
        t32.any(v == 77) as u32,
        t32.all(v < 1000) as u32,
        cg::reduce(&t32, v, Plus),
        cg::reduce(&t32, v as i32 - 500, Less) as u32,
        cg::reduce(&t32, v as f32 * 0.5, Greater).to_bits(),
        t8.shfl_down(v, 3),
        t8.shfl_xor(v, 2),
        t8.shfl(v, 6),
        t8.ballot(v % 2 == 0),
        cg::reduce(&t8, v, Plus),
        t8.thread_rank() * 100 + t8.meta_group_rank(),
    ];
    for (k, x) in results.into_iter().enumerate() {
        unsafe { *out.add(r * 16 + k) = x };
    }
}

#[test]
fn tile_collectives_follow_the_cooperative_groups_rules() {
    let threads = 64usize;
    let vals: Vec<u32> = (0..threads as u32).map(|i| (i * 37 + 11) % 997).collect();
    let mut out = vec![0u32; threads * 16];
    let (i, o) = (Shared(vals.as_ptr()), Shared(out.as_mut_ptr()));
    DEV.launch(1, threads as u32, 0, false, &|| unsafe { tile_collectives(i.get(), o.get()) }).unwrap();
    for r in 0..threads {
        let (w, l) = (r / 32 * 32, r % 32);
        let warp = &vals[w..w + 32];
        let (b8, l8) = (r / 8 * 8, r % 8);
        let tile8 = &vals[b8..b8 + 8];
        let ballot = |tile: &[u32], f: &dyn Fn(u32) -> bool| tile.iter().enumerate().filter(|(_, x)| f(**x)).fold(0u32, |m, (k, _)| m | 1 << k);
        let expected = [
            if l + 3 < 32 { warp[l + 3] } else { vals[r] },
            if l >= 2 { warp[l - 2] } else { vals[r] },
            warp[l ^ 5],
            warp[7],
            ballot(warp, &|x| x % 3 == 0),
            warp.contains(&77) as u32,
            warp.iter().all(|&x| x < 1000) as u32,
            warp.iter().sum::<u32>(),
            warp.iter().map(|&x| x as i32 - 500).min().unwrap() as u32,
            warp.iter().map(|&x| x as f32 * 0.5).fold(f32::MIN, f32::max).to_bits(),
            if l8 + 3 < 8 { tile8[l8 + 3] } else { vals[r] },
            tile8[l8 ^ 2],
            tile8[6],
            ballot(tile8, &|x| x % 2 == 0),
            tile8.iter().sum::<u32>(),
            (l8 * 100 + r / 8) as u32,
        ];
        assert_eq!(&out[r * 16..r * 16 + 16], &expected, "thread {r}");
    }
}

#[test]
fn the_exercise_solution_passes_and_the_bounds_bug_fails_where_the_lesson_says() {
    let smem = one_f32_per_warp(THREADS);
    for n in [1usize, 31, 611, 1024, 4096, 40960] {
        // The bounds bug reads up to the next whole block of THREADS.
        let xs = input(n);
        let grid = grid_for(n);
        let mut partials = vec![0f32; grid as usize];
        let mut total = [0f32];
        let (i, p, t) = (Shared(xs.as_ptr()), Shared(partials.as_mut_ptr()), Shared(total.as_mut_ptr()));
        DEV.launch(grid, THREADS, smem, true, &|| unsafe { kernels::exercise_sum(i.get(), p.get(), t.get(), n) }).unwrap();
        assert!(within_bound(total[0], n, grid, &xs), "exercise_sum, n = {n}: {}", total[0]);
        DEV.launch(grid, THREADS, smem, true, &|| unsafe { kernels::exercise_sum_bounds_bug(i.get(), p.get(), t.get(), n) }).unwrap();
        assert_eq!(total[0].is_nan(), n % THREADS as usize != 0, "bounds bug, n = {n}: {}", total[0]);
    }
}

#[test]
fn the_fast_sum_matches_the_reference_with_unaligned_starts() {
    let smem = one_f32_per_warp(THREADS);
    for (offset, n) in [(0usize, 100_003usize), (1, 4099), (3, 17)] {
        let xs = input(n + offset);
        let grid = 8;
        let mut partials = vec![0f32; grid as usize];
        let mut total = [f32::NAN];
        let (i, p, t) = (Shared(xs[offset..].as_ptr()), Shared(partials.as_mut_ptr()), Shared(total.as_mut_ptr()));
        DEV.launch(grid, THREADS, smem, true, &|| unsafe { kernels::reduce_cooperative_fast(i.get(), p.get(), t.get(), n) }).unwrap();
        let (want, _) = reference(&xs[offset..], n);
        assert!((total[0] as f64 - want).abs() <= want * 1e-5, "offset {offset}, n = {n}: {} vs {want}", total[0]);
    }
}

/// Totals the H200 computed for `order_sensitive_input(100_003)` with 8 blocks
/// of 64 threads (host/tests/gpu.rs, `order_sensitive_sums_for_the_emulator`,
/// 2026-11-29, driver 580.159.04): two launches, one cooperative launch, fast.
const H200_BITS: [u32; 3] = [0x480a_2528, 0x480a_2528, 0x480a_2515];

#[test]
fn the_emulator_adds_in_the_gpus_order_bit_for_bit() {
    let n = 100_003;
    let mut xs = gpu::emu::order_sensitive_input(n);
    xs.extend(std::iter::repeat_n(f32::NAN, 1024));
    let (two, one) = lesson_sums(&xs, n, 8);
    let smem = one_f32_per_warp(THREADS);
    let mut partials = vec![0f32; 8];
    let mut total = [f32::NAN];
    let (i, p, t) = (Shared(xs.as_ptr()), Shared(partials.as_mut_ptr()), Shared(total.as_mut_ptr()));
    DEV.launch(8, THREADS, smem, true, &|| unsafe { kernels::reduce_cooperative_fast(i.get(), p.get(), t.get(), n) }).unwrap();
    let got = [two.to_bits(), one.to_bits(), total[0].to_bits()];
    println!("emulator: {got:#010x?} = {:?}", got.map(f32::from_bits));
    assert_eq!(got, H200_BITS);
}
