//! The lesson's kernels, and kernels that make a learner's mistakes, on the
//! emulated device (no GPU needed): results, and every mistake named.

use gpu::cg::{self, Greater, Less, Plus, this_grid, this_thread_block, tiled_partition};
use gpu::emu::{Arg, Device, Fault, LaunchStats, Options};
use gpu::kernel;
use gpu::kernels::{self, Contract, KernelDef, Params, one_f32_per_tile};
use gpu::mem::{In, Out, dynamic_shared};
use std::time::Duration;

mod common;
use common::{DEV, THREADS, input, launch_with, output};

fn launch<P: Params, C: Contract>(def: &KernelDef<P, C>, grid: u32, threads: u32, cooperative: bool, args: &[Arg]) -> Result<LaunchStats, Fault> {
    launch_with(&DEV, def, grid, threads, cooperative, args, Options::default())
}

/// Both of the lesson's paths and the fast sum on the emulator, from NaN-poisoned buffers.
fn sums(dev: &Device, xs: &[f32], n: usize, grid: u32, options: Options) -> [u32; 3] {
    let mut partials = vec![f32::NAN; grid as usize];
    let mut out = [f32::NAN; 3];
    let (i, threads) = (input("input", &xs[..n]), THREADS);
    launch_with(dev, &kernels::REDUCE_BLOCKS_TO_PARTIALS, grid, threads, false, &[i, output("partials", &mut partials, 0), Arg::Value(n as u64)], options)
        .unwrap();
    launch_with(
        dev,
        &kernels::REDUCE_PARTIALS_TO_TOTAL,
        1,
        threads,
        false,
        &[input("partials", &partials), output("out", &mut out[0..1], 0), Arg::Value(grid as u64)],
        options,
    )
    .unwrap();
    partials.fill(f32::NAN);
    let args = |p: &mut [f32], o: &mut [f32]| [i, output("partials", p, 0), output("out", o, 1), Arg::Value(n as u64)];
    launch_with(dev, &kernels::REDUCE_COOPERATIVE_GRID, grid, threads, true, &args(&mut partials, &mut out[1..2]), options).unwrap();
    partials.fill(f32::NAN);
    launch_with(dev, &kernels::REDUCE_COOPERATIVE_FAST, grid, threads, true, &args(&mut partials, &mut out[2..3]), options).unwrap();
    out.map(f32::to_bits)
}

const H200_BITS: [u32; 3] = kernels::ORDER_SENSITIVE_H200_BITS;

#[test]
fn the_emulator_adds_in_the_gpus_order_bit_for_bit() {
    let xs = gpu::kernels::order_sensitive_input(100_003);
    let got = sums(&DEV, &xs, xs.len(), 8, Options::default());
    println!("emulator: {got:#010x?} = {:?}", got.map(f32::from_bits));
    assert_eq!(got, H200_BITS);
}

#[test]
fn the_same_launch_gives_the_same_bits_with_any_number_of_workers_and_any_seed() {
    let xs = gpu::kernels::order_sensitive_input(100_003);
    for workers in [1, 2, 5] {
        for seed in [None, Some(1), Some(0xdead_beef)] {
            let options = Options { workers, seed, ..Options::default() };
            assert_eq!(sums(&DEV, &xs, xs.len(), 8, options), H200_BITS, "{workers} workers, seed {seed:?}");
        }
    }
}

#[test]
fn an_oversized_cooperative_launch_is_refused_by_name() {
    assert_eq!(Device::T4.cooperative_capacity(256, one_f32_per_tile(256, 32)), 160, "4 blocks of 256 per SM, 40 SMs");
    assert_eq!(Device::H200.cooperative_capacity(256, one_f32_per_tile(256, 32)), 1056, "8 blocks of 256 per SM, 132 SMs");
    // Registers limit as on a GPU: 65,536 per SM, 256 at a time to a warp.
    assert_eq!(Device::T4.blocks_per_sm_using(256, 32, Some(32)), 4, "threads limit first");
    assert_eq!(Device::T4.blocks_per_sm_using(256, 32, Some(96)), 2, "96 x 32 = 3072 a warp, x 8 warps: 2 blocks");
    assert_eq!(Device::T4.blocks_per_sm_using(256, 32, Some(255)), 1);
    let mut out = [0u32; 2];
    let err = launch(&kernels::PROBE_COOPERATIVE, 9, THREADS, true, &[output("out", &mut out, 0)]).unwrap_err();
    assert_eq!(err, Fault::CooperativeLaunchTooLarge { requested: 9, max: 8 });
    assert_eq!(err.driver_name(), Some("CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"));
    let err = launch(&kernels::PROBE_COOPERATIVE, 0, THREADS, false, &[output("out", &mut out, 0)]).unwrap_err();
    assert_eq!(err.driver_name(), Some("CUDA_ERROR_INVALID_VALUE"));
    let tiny = Device { threads_per_sm: 32, ..DEV };
    let err = launch_with(&tiny, &kernels::PROBE_COOPERATIVE, 1, 64, false, &[output("out", &mut out, 0)], Options::default()).unwrap_err();
    assert!(err.to_string().contains("does not fit on an SM of 32 threads"), "{err}");
}

#[test]
fn is_valid_tells_the_launches_apart() {
    let mut out = [9u32; 2];
    launch(&kernels::PROBE_COOPERATIVE, 8, THREADS, false, &[output("out", &mut out, 0)]).unwrap();
    assert_eq!(out, [0, 8]);
    launch(&kernels::PROBE_COOPERATIVE, 8, THREADS, true, &[output("out", &mut out, 0)]).unwrap();
    assert_eq!(out, [1, 8]);
}

#[test]
fn a_grid_sync_under_an_ordinary_launch_is_a_named_fault() {
    let xs = vec![1.0f32; 1000];
    let (mut partials, mut out) = (vec![0f32; 4], [0f32]);
    let args = [input("input", &xs), output("partials", &mut partials, 0), output("out", &mut out, 1), Arg::Value(1000)];
    let err = launch(&kernels::REDUCE_COOPERATIVE_GRID, 4, THREADS, false, &args).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Fault::GridSyncNotCooperative { .. }), "{text}");
    // Lanes run until they wait, so lane 31, which completes each shuffle, gets there first.
    assert!(text.starts_with("thread 31 of block 0 (warp 0, lane 31) called grid.sync() at gpu/src/lesson/lesson.rs:"), "{text}");
    assert!(
        text.contains(
            "but the launch was not cooperative, so the grid cannot synchronize (is_valid() is false): launch a kernel declared #[kernel(cooperative)]"
        ),
        "{text}"
    );
}

#[test]
fn a_grid_sync_reached_around_the_compile_time_guard_is_a_named_fault_under_either_launch() {
    for cooperative in [false, true] {
        let mut out = [0u32; 8];
        let err = launch(&kernels::UNDECLARED_GRID_SYNC, 8, THREADS, cooperative, &[output("out", &mut out, 0)]).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Fault::GridSyncUndeclared { .. }), "{text}");
        assert!(text.contains("called grid.sync() at gpu/src/kernels/broken.rs:"), "{text}");
        assert!(text.ends_with("but undeclared_grid_sync is not declared #[kernel(cooperative)], so the host may launch it the ordinary way, where the barrier cannot complete: declare it #[kernel(cooperative)]"), "{text}");
        let err = launch(&kernels::UNDECLARED_GRID_SYNC_IN_A_HELPER, 8, THREADS, cooperative, &[output("out", &mut out, 0)]).unwrap_err();
        assert!(matches!(err, Fault::GridSyncUndeclared { .. }), "{err}");
    }
}

#[test]
fn coalesced_threads_returns_the_lessons_table() {
    let mut out = vec![0u32; 4 * kernels::COALESCED_DEMO_THREADS as usize];
    launch(&kernels::COALESCED_DEMO, 1, kernels::COALESCED_DEMO_THREADS, false, &[output("out", &mut out, 0)]).unwrap();
    let rows: Vec<[u32; 4]> = out.chunks_exact(4).filter(|r| r[2] != 0).map(|r| [r[0], r[1], r[2], r[3]]).collect();
    let mut expected = vec![[0, 2, 3, 0], [0, 4, 3, 1], [0, 8, 3, 2]];
    expected.extend((0..16).map(|lane| [1, lane, 16, lane]));
    assert_eq!(rows, expected);
}

/// Each thread writes its rank, syncs the grid, then reads a slot another
/// block wrote, three times over.
///
/// # Safety
/// `data` holds one u32 per thread, `seen` three.
#[kernel(cooperative)]
unsafe fn neighbours(data: Out<u32>, seen: Out<u32>) {
    let grid = this_grid();
    let me = grid.thread_rank();
    let total = grid.num_threads();
    for round in 0..3u32 {
        unsafe { data.write(me, me as u32 * 10 + round) };
        grid.sync();
        let other = (me + 257 * (round as usize + 1)) % total;
        unsafe { seen.write(me * 3 + round as usize, data.read(other)) };
        grid.sync();
    }
}

#[test]
fn grid_sync_makes_every_blocks_writes_visible_to_every_block() {
    let blocks = DEV.cooperative_capacity(THREADS, 0);
    let total = (blocks * THREADS) as usize;
    let mut data = vec![0u32; total];
    let mut seen = vec![0u32; total * 3];
    launch(&NEIGHBOURS, blocks, THREADS, true, &[output("data", &mut data, 0), output("seen", &mut seen, 1)]).unwrap();
    for me in 0..total {
        for round in 0..3 {
            let other = (me + 257 * (round + 1)) % total;
            assert_eq!(seen[me * 3 + round], other as u32 * 10 + round as u32, "thread {me} round {round}");
        }
    }
}

/// Every tile collective, for tiles of 8 and of 32, written per thread.
///
/// # Safety
/// `input` holds one u32 per thread, `out` sixteen.
#[kernel]
unsafe fn tile_collectives(input: In<u32>, out: Out<u32>) {
    let block = this_thread_block();
    let r = block.thread_rank() as usize;
    let v = unsafe { input.read(r) };
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
        unsafe { out.write(r * 16 + k, x) };
    }
}

#[test]
fn tile_collectives_follow_the_cooperative_groups_rules() {
    let threads = 64usize;
    let vals: Vec<u32> = (0..threads as u32).map(|i| (i * 37 + 11) % 997).collect();
    let mut out = vec![0u32; threads * 16];
    launch(&TILE_COLLECTIVES, 1, threads as u32, false, &[input("input", &vals), output("out", &mut out, 0)]).unwrap();
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
fn out_of_range_shuffle_operands_use_their_low_five_bits_as_on_the_h200() {
    let mut out = vec![0u32; 32 * kernels::SHUFFLE_PROBES];
    launch(&kernels::SHUFFLE_OUT_OF_RANGE, 1, 32, false, &[output("out", &mut out, 0)]).unwrap();
    assert_eq!(out, kernels::shuffle_out_of_range_expected().to_vec());
}

#[test]
fn an_ordinary_launch_larger_than_the_device_runs_every_block_with_at_most_the_device_resident() {
    // Ones sum exactly: each block's partial is the count of elements it reads.
    let (n, grid) = (100_003usize, 32u32);
    let xs = vec![1.0f32; n];
    let mut partials = vec![f32::NAN; grid as usize];
    let options = Options { workers: 16, ..Options::default() };
    let stats = launch_with(
        &DEV,
        &kernels::REDUCE_BLOCKS_TO_PARTIALS,
        grid,
        THREADS,
        false,
        &[input("input", &xs), output("partials", &mut partials, 0), Arg::Value(n as u64)],
        options,
    )
    .unwrap();
    let stride = (grid * THREADS) as usize;
    for (b, &p) in partials.iter().enumerate() {
        let count = (0..n).filter(|i| (i % stride) / THREADS as usize == b).count();
        assert_eq!(p, count as f32, "block {b}");
    }
    let fit = DEV.cooperative_capacity(THREADS, one_f32_per_tile(THREADS, 32));
    assert!(stats.max_resident <= fit && grid > 3 * fit, "{stats:?}: four waves of {fit}");
}

#[test]
fn an_h200_sized_device_runs_the_lessons_cooperative_sum_over_1056_blocks() {
    let (n, threads) = (1 << 20, 256);
    let grid = Device::H200.cooperative_capacity(threads, one_f32_per_tile(threads, 32));
    assert_eq!(grid, 1056);
    let xs = vec![1.0f32; n];
    let (mut partials, mut out) = (vec![f32::NAN; grid as usize], [f32::NAN]);
    let args = [input("input", &xs), output("partials", &mut partials, 0), output("out", &mut out, 1), Arg::Value(n as u64)];
    launch_with(&Device::H200, &kernels::REDUCE_COOPERATIVE_GRID, grid, threads, true, &args, Options::default()).unwrap();
    assert_eq!(out[0], n as f32);
}

// ---- mistakes, each named ----

fn err_text(r: Result<LaunchStats, Fault>) -> String {
    r.expect_err("the launch fails").to_string()
}

#[test]
fn the_bounds_bug_reads_as_a_read_past_the_input_not_a_wrong_sum() {
    let n = 611;
    let xs = vec![1.0f32; n + 1024];
    let (mut partials, mut out) = (vec![0f32; 3], [0f32]);
    let args = [input("input", &xs[..n]), output("partials", &mut partials, 0), output("out", &mut out, 1), Arg::Value(n as u64)];
    let text = err_text(launch_with(&Device::T4, &kernels::mutants::EXERCISE_SUM_BOUNDS_BUG, 3, 256, true, &args, Options::default()));
    assert!(text.starts_with("thread 99 of block 2 (warp 3, lane 3) read input[611], past its 611 elements, at gpu/src/kernels/mutants.rs:"), "{text}");
}

/// Thread 0 writes past `out`, or reads `input` 16 bytes at a time from `offset`.
///
/// # Safety
/// None: every access here is a mistake the emulator must name.
#[kernel]
unsafe fn bad_access(input: In<f32>, out: Out<f32>, what: u32) {
    if this_thread_block().thread_rank() == 0 {
        match what {
            0 => unsafe { out.write(4, 1.0) },
            1 => unsafe { out.write(0, input.read4(1)[0]) },
            _ => unsafe { out.write(0, input.read4(0)[0]) },
        }
    }
}

#[test]
fn a_write_past_an_output_and_a_misaligned_vector_load_are_named() {
    let xs = vec![1.0f32; 64];
    let mut out = [0f32; 4];
    let text = err_text(launch(&BAD_ACCESS, 1, 32, false, &[input("input", &xs), output("out", &mut out, 0), Arg::Value(0)]));
    assert!(text.starts_with("thread 0 of block 0 (warp 0, lane 0) wrote out[4], past its 4 elements, at gpu/tests/emulator.rs:"), "{text}");
    let text = err_text(launch(&BAD_ACCESS, 1, 32, false, &[input("input", &xs), output("out", &mut out, 0), Arg::Value(1)]));
    assert!(text.contains("made a 16-byte load at input[1], whose address is not a multiple of 16"), "{text}");
    launch(&BAD_ACCESS, 1, 32, false, &[input("input", &xs), output("out", &mut out, 0), Arg::Value(2)]).unwrap();
}

/// `block_sum` with its tile totals sized for tiles of 32 but written per tile of 16:
/// the shared-memory mistake a tile edit used to make.
///
/// # Safety
/// `out` holds one float.
#[kernel(shared_memory = one_f32_per_tile)]
unsafe fn tile_totals_too_small<const TILE: u32 = 32>(out: Out<f32>) {
    unsafe { tile_totals::<16>(out) };
}

/// `block_sum`'s tile totals on tiles of `N`: each tile's thread 0 writes
/// its tile's sum to the dynamic shared memory, one `f32` per tile, and
/// thread 0 copies the first to `out[0]`.
///
/// # Safety
/// `out` holds one float; every thread of the block calls it.
unsafe fn tile_totals<const N: u32>(out: Out<f32>) {
    let block = this_thread_block();
    let tile = tiled_partition::<N>(&block);
    let totals = dynamic_shared::<f32>();
    let t = cg::reduce(&tile, 1.0f32, Plus);
    if tile.thread_rank() == 0 {
        unsafe { totals.write(tile.meta_group_rank() as usize, t) };
    }
    block.sync();
    if block.thread_rank() == 0 {
        unsafe { out.write(0, totals.read(0)) };
    }
}

#[test]
fn an_access_past_the_dynamic_shared_memory_is_named() {
    let mut out = [0f32];
    let text = err_text(launch(&TILE_TOTALS_TOO_SMALL, 1, 256, false, &[output("out", &mut out, 0)]));
    assert!(
        text.starts_with("thread 128 of block 0 (warp 4, lane 0) wrote dynamic shared memory[8], past its 8 elements, at gpu/tests/emulator.rs:"),
        "{text}"
    );
    assert!(
        text.ends_with("(4-byte elements; the launch gave 32 bytes, as the kernel's #[kernel(shared_memory = ...)] function sized it: this block was cut into tiles of 16 (tiled_partition::<16>), 16 of them, but the shared memory holds one element per 32 threads, as the kernel's TILE sized it; cut the block with tiled_partition::<TILE>, so that the two agree)"),
        "names the mismatch: {text}"
    );
}

/// `one_f32_per_tile` without its `* 4`: a count of tiles where the launch takes bytes.
const fn one_byte_per_tile(threads_per_block: u32, tile: u32) -> u32 {
    threads_per_block.div_ceil(tile)
}

/// `block_sum`'s tile totals, in shared memory sized in elements, not bytes.
///
/// # Safety
/// `out` holds one float.
#[kernel(shared_memory = one_byte_per_tile)]
unsafe fn tile_totals_sized_in_elements<const TILE: u32 = 32>(out: Out<f32>) {
    unsafe { tile_totals::<TILE>(out) };
}

#[test]
fn shared_memory_sized_in_elements_not_bytes_is_named_as_such_not_as_a_tile_mismatch() {
    let mut out = [0f32];
    let text = err_text(launch(&TILE_TOTALS_SIZED_IN_ELEMENTS, 1, 256, false, &[output("out", &mut out, 0)]));
    assert!(text.contains("wrote dynamic shared memory[2], past its 2 elements"), "{text}");
    assert!(
        text.ends_with("the launch gave 8 bytes, as the kernel's #[kernel(shared_memory = ...)] function sized it: that is one byte per tile (8 tiles of 32), where each tile's element takes 4; the function gives bytes, not elements, so multiply its count by 4 (the size of the element))"),
        "{text}"
    );
    assert!(!text.contains("tiled_partition"), "the tiles are right: {text}");
}

/// The lesson's `blockSum` with its first `block.sync()` moved inside the
/// branch only each tile's thread 0 takes: the other threads run on and read
/// the tile totals early.
///
/// # Safety
/// `out` holds one float.
#[kernel(shared_memory = one_f32_per_tile)]
unsafe fn block_sync_in_a_branch<const TILE: u32 = 32>(out: Out<f32>) {
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);
    let totals = dynamic_shared::<f32>();
    let t = cg::reduce(&tile, 1.0f32, Plus);
    if tile.thread_rank() == 0 {
        unsafe { totals.write(tile.meta_group_rank() as usize, t) };
        block.sync();
    }
    let mut total = 0.0f32;
    if tile.meta_group_rank() == 0 {
        let mine = if tile.thread_rank() < tile.meta_group_size() { unsafe { totals.read(tile.thread_rank() as usize) } } else { 0.0 };
        total = cg::reduce(&tile, mine, Plus);
    }
    block.sync();
    if block.thread_rank() == 0 {
        unsafe { out.write(0, total) };
    }
}

/// The line of the `block.sync()` in `block_sync_in_a_branch`'s branch: the
/// one right after a write of the tile's total.
fn branch_sync_line() -> usize {
    let lines: Vec<&str> = include_str!("emulator.rs").lines().collect();
    let write = lines
        .windows(2)
        .position(|w| w[0].trim() == "unsafe { totals.write(tile.meta_group_rank() as usize, t) };" && w[1].trim() == "block.sync();")
        .expect("the kernel's write, then its block.sync()");
    write + 2
}

#[test]
fn a_block_sync_only_some_threads_reach_is_named_as_such_not_as_the_race_it_causes() {
    let mut out = [0f32];
    for seed in [None, Some(5)] {
        let text = err_text(launch_with(&DEV, &BLOCK_SYNC_IN_A_BRANCH, 1, 128, false, &[output("out", &mut out, 0)], Options { seed, ..Options::default() }));
        // Tile 0's other lanes go on to its cg::reduce, which needs lane 0,
        // held at the block.sync() in the branch: before, this read as a data
        // race on the tile totals those lanes read too early.
        assert!(
            text.starts_with("deadlock: in block_sync_in_a_branch, lanes 1-31 of warp 0 in block 0 called cg::reduce() at gpu/tests/emulator.rs:"),
            "{text}"
        );
        assert!(text.contains("while lane 0 waits at block.sync() at gpu/tests/emulator.rs:"), "{text}");
        // The block.sync() in the branch is the mistake: the advice names it, not the collective.
        assert!(
            text.contains(&format!(
                "lane 0 reached the block.sync() at gpu/tests/emulator.rs:{}:15 above the collective while the others went on, so that block.sync() is in a branch",
                branch_sync_line()
            )),
            "names the block.sync(): {text}"
        );
        assert!(text.ends_with("take it out of the branch"), "{text}");
    }
}

/// Thread 32 writes a shared word that thread 0 then reads, with or without a barrier between.
///
/// # Safety
/// `out` holds one float.
#[kernel(shared_memory = one_f32_per_tile)]
unsafe fn shared_handoff<const TILE: u32 = 32>(out: Out<f32>, barrier: u32) {
    let block = this_thread_block();
    let word = dynamic_shared::<f32>();
    if block.thread_rank() == 32 {
        unsafe { word.write(0, 7.0) };
    }
    if barrier != 0 {
        block.sync();
    }
    if block.thread_rank() == 0 {
        unsafe { out.write(0, word.read(0)) };
    }
}

#[test]
fn a_shared_memory_race_is_named_and_a_barrier_removes_it() {
    let mut out = [0f32];
    launch(&SHARED_HANDOFF, 1, 64, false, &[output("out", &mut out, 0), Arg::Value(1)]).unwrap();
    assert_eq!(out[0], 7.0);
    // In thread order thread 0 reads first; shuffled, either may be first: a race either way.
    for seed in [None, Some(3), Some(4)] {
        let text =
            err_text(launch_with(&DEV, &SHARED_HANDOFF, 1, 64, false, &[output("out", &mut out, 0), Arg::Value(0)], Options { seed, ..Options::default() }));
        assert!(text.starts_with("data race on dynamic shared memory word 0 (bytes 0..4): thread "), "{text}");
        assert!(text.contains("thread 32 of block 0") && text.contains("thread 0 of block 0") && text.ends_with("with no barrier between"), "{text}");
    }
}

/// Every lane writes its tile's total (block_sum without `if tile.thread_rank() == 0`);
/// with `across_warps`, thread 32 writes word 0 after thread 0 instead.
///
/// # Safety
/// `out` holds one float.
#[kernel(shared_memory = one_f32_per_tile)]
unsafe fn every_lane_writes_a_word<const TILE: u32 = 32>(out: Out<f32>, across_warps: u32) {
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);
    let totals = dynamic_shared::<f32>();
    let total = cg::reduce(&tile, 1.0f32, Plus);
    if across_warps == 0 || tile.thread_rank() == 0 {
        let word = if across_warps == 0 { tile.meta_group_rank() } else { 0 };
        unsafe { totals.write(word as usize, total) };
    }
    block.sync();
    if block.thread_rank() == 0 {
        unsafe { out.write(0, totals.read(0)) };
    }
}

#[test]
fn every_lane_writing_its_tiles_total_is_told_of_tile_thread_rank_not_only_the_blocks() {
    let mut out = [0f32];
    let text = err_text(launch(&EVERY_LANE_WRITES_A_WORD, 1, 64, false, &[output("out", &mut out, 0), Arg::Value(0)]));
    assert!(text.starts_with("data race on dynamic shared memory word 0 (bytes 0..4): thread ") && text.matches("(warp 0,").count() == 2, "{text}");
    assert!(text.contains("`if tile.thread_rank() == 0` where each tile writes a word of its own"), "the fix inside a tile-level function: {text}");
    // Threads of two warps writing one word: the block's word, whatever the tiles.
    let text = err_text(launch(&EVERY_LANE_WRITES_A_WORD, 1, 64, false, &[output("out", &mut out, 0), Arg::Value(1)]));
    assert!(text.contains("thread 32 of block 0") && text.ends_with("have one thread write it (`if block.thread_rank() == 0`)"), "{text}");
}

#[test]
fn deleting_grid_sync_is_named_as_a_race_between_blocks() {
    let n = 4096;
    let xs = vec![1.0f32; n];
    let (mut partials, mut out) = (vec![f32::NAN; 8], [f32::NAN]);
    let args = [input("input", &xs), output("partials", &mut partials, 0), output("out", &mut out, 1), Arg::Value(n as u64)];
    let text = err_text(launch(&kernels::mutants::MUTANT_WITHOUT_GRID_SYNC, 8, THREADS, true, &args));
    assert_eq!(
        text,
        "data race on partials[1]: block 1 wrote it at gpu/src/kernels/mutants.rs:35:27 and block 0 read it at gpu/src/kernels/mutants.rs:44:36 with no grid.sync() between (blocks see each other's writes only after one)"
    );
}

/// Every block but the last reaches `grid.sync()`; the last returns first.
///
/// # Safety
/// None needed: nothing is read or written.
#[kernel(cooperative)]
unsafe fn last_block_skips_grid_sync() {
    let grid = this_grid();
    if grid.block_rank() == grid.num_blocks() - 1 {
        return;
    }
    grid.sync();
}

#[test]
fn a_block_that_returns_before_grid_sync_is_named_not_a_hang() {
    let text = err_text(launch_with(&Device::T4, &LAST_BLOCK_SKIPS_GRID_SYNC, 40, 256, true, &[], Options::default()));
    assert!(text.starts_with("deadlock: in last_block_skips_grid_sync, 39 of 40 blocks reached grid.sync() at gpu/tests/emulator.rs:"), "{text}");
    assert!(text.contains("; block 39 exited without it"), "{text}");
}

/// The exercise's second stage with its `grid.sync()` moved inside the
/// branch only block 0 takes: the other blocks exit without it.
///
/// # Safety
/// `out` holds one float.
#[kernel(cooperative)]
unsafe fn grid_sync_inside_block_zeros_branch(out: Out<f32>) {
    let grid = this_grid();
    let block = this_thread_block();
    if block.group_index().x == 0 {
        grid.sync();
        if block.thread_rank() == 0 {
            // SAFETY: out holds one float.
            unsafe { out.write(0, 1.0) };
        }
    }
}

#[test]
fn a_grid_sync_inside_block_zeros_branch_is_told_to_move_out_of_the_branch() {
    let mut out = [0f32];
    let text = err_text(launch(&GRID_SYNC_INSIDE_BLOCK_ZEROS_BRANCH, 8, THREADS, true, &[output("out", &mut out, 0)]));
    assert!(text.starts_with("deadlock: in grid_sync_inside_block_zeros_branch, 1 of 8 blocks reached grid.sync() at gpu/tests/emulator.rs:"), "{text}");
    assert!(text.contains("blocks 1-7 exited without it"), "{text}");
    assert!(
        text.ends_with("keep it out of branches that some blocks skip (`if block.group_index().x == 0` goes after the barrier, not around it)"),
        "names the fix: {text}"
    );
}

/// The exercise's first stage with each block's partial written at the
/// writing thread's rank in its block (always 0), not at the block's index.
///
/// # Safety
/// `partials` holds one float per block.
#[kernel]
unsafe fn partial_at_block_thread_rank(partials: Out<f32>) {
    let block = this_thread_block();
    if block.thread_rank() == 0 {
        // SAFETY: none needed past the bounds check: the index is the mistake.
        unsafe { partials.write(block.thread_rank() as usize, 1.0) };
    }
}

#[test]
fn partials_indexed_by_the_thread_rank_in_the_block_are_told_to_index_by_the_block() {
    let mut partials = vec![0f32; 4];
    let text = err_text(launch(&PARTIAL_AT_BLOCK_THREAD_RANK, 4, THREADS, false, &[output("partials", &mut partials, 0)]));
    assert!(text.starts_with("data race on partials[0]: block "), "{text}");
    assert!(
        text.ends_with("partials holds one element per block of this grid of 4, and every block wrote the same one; index it by the block (`block.group_index().x`), not by a thread's rank within its block"),
        "names the fix: {text}"
    );
    assert!(!text.contains("have one block write it"), "the wrong fix: {text}");
}

/// `cg::reduce` over a whole tile inside a branch only its lanes below `lanes` take.
///
/// # Safety
/// `out` holds one float per thread.
#[kernel]
unsafe fn reduce_in_some_lanes(out: Out<f32>, lanes: u32) {
    let block = this_thread_block();
    let tile = tiled_partition::<32>(&block);
    if tile.thread_rank() < lanes {
        let s = cg::reduce(&tile, 1.0f32, Plus);
        unsafe { out.write(block.thread_rank() as usize, s) };
    }
}

#[test]
fn a_reduce_that_half_a_tile_reaches_is_named_not_a_hang() {
    let mut out = vec![0f32; 96];
    let text = err_text(launch(&REDUCE_IN_SOME_LANES, 1, 96, false, &[output("out", &mut out, 0), Arg::Value(16)]));
    assert!(text.starts_with("deadlock: in reduce_in_some_lanes, lanes 0-15 of warp 0 in block 0 called cg::reduce() at gpu/tests/emulator.rs:"), "{text}");
    assert!(text.contains(" over lanes 0-31, while lanes 16-31 exited: every lane a collective names must reach it"), "names the fix: {text}");
}

#[test]
fn a_reduce_that_one_lane_reaches_names_it_in_the_singular() {
    let mut out = vec![0f32; 32];
    let text = err_text(launch(&REDUCE_IN_SOME_LANES, 1, 32, false, &[output("out", &mut out, 0), Arg::Value(1)]));
    assert!(text.starts_with("deadlock: in reduce_in_some_lanes, lane 0 of warp 0 in block 0 called cg::reduce() at gpu/tests/emulator.rs:"), "{text}");
    assert!(text.contains(" over lanes 0-31, while lanes 1-31 exited"), "{text}");
}

/// The threads past `n` return at the top, before the tile's `cg::reduce`.
///
/// # Safety
/// `out` holds one float per thread.
#[kernel]
unsafe fn return_at_the_top(out: Out<f32>, n: u32) {
    let block = this_thread_block();
    if block.thread_rank() >= n {
        return;
    }
    let tile = tiled_partition::<32>(&block);
    let s = cg::reduce(&tile, 1.0f32, Plus);
    unsafe { out.write(block.thread_rank() as usize, s) };
}

#[test]
fn threads_that_return_at_the_top_are_named_as_returning_before_the_collective() {
    let mut out = vec![0f32; 32];
    let text = err_text(launch(&RETURN_AT_THE_TOP, 1, 32, false, &[output("out", &mut out, 0), Arg::Value(1)]));
    assert!(text.starts_with("deadlock: in return_at_the_top, lane 0 of warp 0 in block 0 called cg::reduce() at gpu/tests/emulator.rs:"), "{text}");
    assert!(text.ends_with("(lanes 1-31 exited before any barrier or collective: a `return` above them, as in `if ... { return; }`, takes them out of every one after it; let them run on with nothing to add instead)"), "names the return: {text}");
}

/// `tile.match_any` over a whole tile inside a branch only half of it takes.
///
/// # Safety
/// `out` holds one u32 per thread.
#[kernel]
unsafe fn match_in_half_a_tile(out: Out<u32>) {
    let block = this_thread_block();
    let tile = tiled_partition::<32>(&block);
    if tile.thread_rank() < 16 {
        let peers = tile.match_any(tile.thread_rank() % 3);
        unsafe { out.write(block.thread_rank() as usize, peers) };
    }
}

#[test]
fn a_match_that_half_a_tile_reaches_is_named_not_a_hang() {
    let mut out = vec![0u32; 32];
    let text = err_text(launch(&MATCH_IN_HALF_A_TILE, 1, 32, false, &[output("out", &mut out, 0)]));
    assert!(text.starts_with("deadlock: in match_in_half_a_tile, lanes 0-15 of warp 0 in block 0 called tile.match_any() at gpu/tests/emulator.rs:"), "{text}");
    assert!(text.contains(" over lanes 0-31, while lanes 16-31 exited"), "{text}");
}

/// `match_any` and `match_all` of coalesced groups: the lanes below 12 take
/// the branch, and group their ranks by value.
///
/// # Safety
/// `out` holds three u32 per thread.
#[kernel]
unsafe fn coalesced_matches(out: Out<u32>) {
    let block = this_thread_block();
    let r = block.thread_rank();
    if r % 32 < 12 {
        let active = cg::coalesced_threads();
        let peers = active.match_any((r % 32 % 3) as u64);
        let (all, same) = active.match_all(5.0f32);
        let (none, differ) = active.match_all(r);
        for (k, x) in [peers, all | (same as u32) << 31 >> 31 << 12, none | differ as u32].into_iter().enumerate() {
            unsafe { out.write(r as usize * 3 + k, x) };
        }
    }
}

#[test]
fn coalesced_groups_match_by_value_in_their_own_ranks() {
    let mut out = vec![u32::MAX; 64 * 3];
    launch(&COALESCED_MATCHES, 1, 64, false, &[output("out", &mut out, 0)]).unwrap();
    for r in 0..64 {
        let row = &out[r * 3..r * 3 + 3];
        if r % 32 < 12 {
            // Ranks 0..12 of the group are lanes 0..12; lanes with r % 3 alike.
            let peers = (0..12).filter(|q| q % 3 == r % 32 % 3).fold(0u32, |m, q| m | 1 << q);
            assert_eq!(row, [peers, 0xfff | 1 << 12, 0], "thread {r}");
        } else {
            assert_eq!(row, [u32::MAX; 3], "thread {r} took no branch");
        }
    }
}

/// `cg::block_reduce` in a branch that only the first warp takes; the
/// other warp goes on to the block barrier after it.
///
/// # Safety
/// `out` holds one float per thread.
#[kernel(shared_memory = cg::block_scratch_bytes::<f32>)]
unsafe fn block_reduce_in_a_branch<const TILE: u32 = 32>(out: Out<f32>) {
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);
    let mut total = 0.0;
    if block.thread_rank() < 32 {
        total = unsafe { cg::block_reduce(&block, &tile, 1.0f32, Plus, dynamic_shared()) };
    }
    block.sync();
    unsafe { out.write(block.thread_rank() as usize, total) };
}

#[test]
fn a_block_reduce_that_one_warp_reaches_is_named_at_its_call() {
    let mut out = vec![0f32; 64];
    let text = err_text(launch(&BLOCK_REDUCE_IN_A_BRANCH, 1, 64, false, &[output("out", &mut out, 0)]));
    assert!(
        text.starts_with("block 0 met at one block.sync() from different places: threads 0-31 wait at cg::block_reduce() at gpu/tests/emulator.rs:"),
        "{text}"
    );
    assert!(text.contains("; threads 32-63 wait at block.sync() at gpu/tests/emulator.rs:"), "{text}");
}

/// `cg::block_exclusive_scan` on tiles of 8, with its scratch sized for tiles of 32.
///
/// # Safety
/// `out` holds one u32 per thread.
#[kernel(shared_memory = cg::block_scratch_bytes::<u32>)]
unsafe fn block_scan_scratch_too_small<const TILE: u32 = 32>(out: Out<u32>) {
    let block = this_thread_block();
    let tile = tiled_partition::<8>(&block);
    let (below, _) = unsafe { cg::block_exclusive_scan(&block, &tile, 1u32, Plus, dynamic_shared()) };
    unsafe { out.write(block.thread_rank() as usize, below) };
}

#[test]
fn a_block_scan_whose_scratch_is_sized_for_another_tile_is_named() {
    let mut out = vec![0u32; 64];
    let text = err_text(launch(&BLOCK_SCAN_SCRATCH_TOO_SMALL, 1, 64, false, &[output("out", &mut out, 0)]));
    assert!(text.contains("wrote dynamic shared memory[2], past its 2 elements"), "{text}");
    assert!(text.contains("this block was cut into tiles of 8 (tiled_partition::<8>), 8 of them"), "names the mismatch: {text}");
}

/// Threads below 32 wait at one `block.sync()`, the rest at another.
///
/// # Safety
/// None needed.
#[kernel]
#[allow(clippy::if_same_then_else)] // the mistake is that the two calls are different places
unsafe fn two_block_syncs() {
    let block = this_thread_block();
    if block.thread_rank() < 32 {
        block.sync();
    } else {
        block.sync();
    }
}

#[test]
fn a_block_sync_met_from_two_places_is_named() {
    let text = err_text(launch(&TWO_BLOCK_SYNCS, 1, 64, false, &[]));
    assert!(text.starts_with("block 0 met at one block.sync() from different places: threads 0-31 wait at block.sync() at gpu/tests/emulator.rs:"), "{text}");
    assert!(text.contains("; threads 32-63 wait at block.sync() at gpu/tests/emulator.rs:"), "{text}");
}

/// Thread 1 waits for a flag that no thread of its block sets.
///
/// # Safety
/// `flag` holds one u32.
#[kernel]
unsafe fn spin_on_a_flag(flag: Out<u32>) {
    if this_thread_block().thread_rank() == 1 {
        while unsafe { flag.read(0) } == 0 {} // the read
    }
}

#[test]
fn a_thread_spinning_on_a_word_nothing_writes_is_named_not_a_hang() {
    let mut flag = [0u32];
    let text = err_text(launch(&SPIN_ON_A_FLAG, 1, 32, false, &[output("flag", &mut flag, 0)]));
    let line = include_str!("emulator.rs").lines().position(|l| l.ends_with("// the read")).unwrap() + 1;
    assert!(text.starts_with(&format!("deadlock: in spin_on_a_flag, thread 1 of block 0 keeps reading flag[0] at gpu/tests/emulator.rs:{line}:")), "{text}");
    assert!(text.ends_with(", which nothing in its block writes (other blocks' writes are seen only after grid.sync())"), "{text}");
}

/// Reads the same element forever.
///
/// # Safety
/// `input` holds one float.
#[kernel]
unsafe fn endless(input: In<f32>, out: Out<f32>) {
    let mut v = 0.0f32;
    loop {
        v += unsafe { input.read(0) };
        if v < 0.0 {
            unsafe { out.write(0, v) };
        }
    }
}

#[test]
fn a_kernel_that_never_returns_is_stopped_a_timeout_after_it_last_moved_and_named_where_it_runs() {
    let xs = [1.0f32];
    let mut out = [0f32];
    let options = Options { timeout: Duration::from_millis(300), ..Options::default() };
    let started = std::time::Instant::now();
    let text = err_text(launch_with(&DEV, &ENDLESS, 1, 32, false, &[input("input", &xs), output("out", &mut out, 0)], options));
    let seconds = started.elapsed().as_secs_f64();
    // Thread 0 never waits, so it is the one running, at its read.
    assert!(
        text.starts_with("no block ended and no barrier completed within the 0.3 s timeout (counted in the emulator's steps of work, not by the clock), while thread 0 of block 0 (warp 0, lane 0) ran on at gpu/tests/emulator.rs:"),
        "{text}"
    );
    assert!(
        text.ends_with(": an endless loop (an index that never reaches its bound, or steps by 0?), or far more work between barriers than the lesson's kernels do (a loop that steps by 1 where it should stride?)"),
        "{text}"
    );
    // A budget of steps, not of seconds: about the timeout on an idle machine, more on a loaded one.
    assert!(seconds < 2.0, "named after {seconds:.2} s");
}

/// Thread 0 returns; the others reach `grid.sync()`.
///
/// # Safety
/// None needed.
#[kernel(cooperative)]
unsafe fn thread_zero_leaves() {
    if this_thread_block().thread_rank() == 0 {
        return;
    }
    this_grid().sync();
}

#[test]
fn a_grid_sync_without_its_blocks_thread_0_is_named() {
    let text = err_text(launch(&THREAD_ZERO_LEAVES, 2, 64, true, &[]));
    assert!(text.starts_with("deadlock: in thread_zero_leaves, threads 1-63 of block 0 reached grid.sync() at"), "{text}");
    assert!(text.ends_with("but its thread 0 had exited: thread 0 of each block is the one that arrives at the grid barrier"), "{text}");
}

#[test]
fn a_panic_in_a_kernel_is_a_fault_with_its_message_and_place() {
    let mut out = [0u32; 4];
    // The probe with out too short: Rust's own bounds check is not what fires;
    // the emulator's is, naming the write.
    let text = err_text(launch(&kernels::PROBE_COOPERATIVE, 1, 32, false, &[output("out", &mut out[..1], 0)]));
    assert!(text.contains("wrote out[1], past its 1 element"), "{text}");
}

#[test]
fn the_last_block_sum_is_named_as_a_kernel_the_emulator_does_not_model() {
    let xs = vec![1.0f32; 4096];
    let (mut partials, mut ticket, mut out) = (vec![0f32; 8], [0u32], [0f32]);
    let args = [input("input", &xs), output("partials", &mut partials, 0), output("ticket", &mut ticket, 1), output("out", &mut out, 2), Arg::Value(4096)];
    let text = err_text(launch(&kernels::REDUCE_LAST_BLOCK, 8, THREADS, false, &args));
    assert!(text.contains("used thread_fence() (fence.acq_rel.gpu) at gpu/src/kernels/fast.rs:"), "{text}");
    assert!(text.ends_with("which the emulator does not model (blocks talking through atomics): run this kernel on a GPU"), "{text}");
}

/// The lesson's first stage with its partial written at the thread's grid
/// rank instead of the block's index: one partial per block, indexed wrong.
///
/// # Safety
/// `partials` holds one float per block.
#[kernel]
pub unsafe fn partial_at_thread_rank(partials: Out<f32>) {
    let grid = this_grid();
    let block = this_thread_block();
    if block.thread_rank() == 0 {
        // SAFETY: none: the index is the mistake.
        unsafe { partials.write(grid.thread_rank(), 1.0) };
    }
}

/// A second stage whose loop over the partials runs to the grid's threads.
///
/// # Safety
/// `partials` holds one float per block, `out` one.
#[kernel]
pub unsafe fn partials_looped_to_num_threads(partials: Out<f32>, out: Out<f32>) {
    let grid = this_grid();
    let block = this_thread_block();
    if block.group_index().x == 0 && block.thread_rank() == 0 {
        let mut w = 0.0f32;
        let mut i = 0;
        while i < grid.num_threads() {
            // SAFETY: none: the loop's bound is the mistake.
            w += unsafe { partials.read(i) };
            i += 1;
        }
        // SAFETY: out holds one float.
        unsafe { out.write(0, w) };
    }
}

#[test]
fn a_per_block_buffer_indexed_past_the_grid_is_told_to_index_by_the_block() {
    let mut partials = vec![0f32; 4];
    let text = err_text(launch(&PARTIAL_AT_THREAD_RANK, 4, THREADS, false, &[output("partials", &mut partials, 0)]));
    assert!(text.contains("wrote partials[64], past its 4 elements"), "{text}");
    assert!(text.contains("partials holds one element per block of this grid of 4: index it by the block (`block.group_index().x`)"), "names the fix: {text}");
    let (mut partials, mut out) = (vec![0f32; 4], [0f32]);
    let text = err_text(launch(&PARTIALS_LOOPED_TO_NUM_THREADS, 4, THREADS, false, &[output("partials", &mut partials, 0), output("out", &mut out, 1)]));
    assert!(text.contains("read partials[4], past its 4 elements") && text.contains("loop over it up to `grid.num_blocks()`"), "{text}");
    // A buffer of another length gets no such note.
    let mut one = vec![0f32; 3];
    let text = err_text(launch(&PARTIAL_AT_THREAD_RANK, 4, THREADS, false, &[output("partials", &mut one, 0)]));
    assert!(!text.contains("one element per block"), "{text}");
}

/// The probes are built where the host's tests are (`gpu`'s feature
/// `probes`, which `cargo test --workspace` turns on).
#[cfg(feature = "probes")]
#[test]
fn the_collective_probes_run_and_write_what_their_documentation_says() {
    // gpu/src/kernels/probes.rs: each probe's out[1] on one warp (and the
    // grid probe on a cooperative grid of the small device's 8 blocks).
    let run = |def: &dyn Fn(&mut [u32]) -> Result<LaunchStats, Fault>| {
        let mut out = [0u32; kernels::PROBE_WORDS];
        def(&mut out).unwrap();
        out[1]
    };
    let one_warp = |k: &KernelDef<(Out<u32>,), kernels::NoGridSync>| run(&|out| launch(k, 1, 32, false, &[output("out", out, 0)]));
    assert_eq!(one_warp(&kernels::PROBE_BLOCK_SYNC), 2);
    assert_eq!(one_warp(&kernels::PROBE_BLOCK_SYNC_ALIGNED), 2);
    assert_eq!(one_warp(&kernels::PROBE_TILE_SYNC), 2);
    assert_eq!(one_warp(&kernels::PROBE_SHFL_DOWN), 1);
    assert_eq!(one_warp(&kernels::PROBE_BALLOT), 0x4924_9249);
    assert_eq!(one_warp(&kernels::PROBE_REDUCE), 496);
    assert_eq!(one_warp(&kernels::PROBE_MATCH_ANY), 0x1111_1111);
    assert_eq!(one_warp(&kernels::PROBE_MATCH_ANY_64), 0x5555_5555);
    assert_eq!(one_warp(&kernels::PROBE_INCLUSIVE_SCAN), 496);
    assert_eq!(one_warp(&kernels::PROBE_EXCLUSIVE_SCAN), 465);
    assert_eq!(one_warp(&kernels::PROBE_EXCLUSIVE_SCAN_U32), 465);
    let mut all = [0u32; kernels::PROBE_WORDS];
    launch(&kernels::PROBE_MATCH_ALL, 1, 32, false, &[output("out", &mut all, 0)]).unwrap();
    assert_eq!(all, [1, u32::MAX], "every lane matched, and said so");
    let two_warps = |k: &KernelDef<(Out<u32>,), kernels::NoGridSync>| run(&|out| launch(k, 1, 64, false, &[output("out", out, 0)]));
    assert_eq!(two_warps(&kernels::PROBE_BLOCK_REDUCE), 2016);
    assert_eq!(two_warps(&kernels::PROBE_BLOCK_EXCLUSIVE_SCAN), 1953);
    let trips = run(&|out| launch(&kernels::PROBE_BLOCK_SYNC_IN_A_LOOP, 1, 64, false, &[output("out", out, 0), Arg::Value(3)]));
    assert_eq!(trips, 4);
    assert_eq!(run(&|out| launch(&kernels::PROBE_GRID_SYNC, 8, THREADS, true, &[output("out", out, 0)])), 2);
}

/// A block's sum into a shared accumulator that each tile adds its total to,
/// taken twice (as the exercise's block 0 sums twice), the accumulator set
/// to 0 before each sum only where `zeroed` is 1.
///
/// # Safety
/// `out` holds two floats.
#[kernel(shared_memory = one_f32_per_tile)]
unsafe fn shared_accumulator<const TILE: u32 = 32>(out: Out<f32>, zeroed: u32) {
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);
    let acc = dynamic_shared::<f32>();
    for k in 0..2 {
        if zeroed == 1 && block.thread_rank() == 0 {
            unsafe { acc.write(0, 0.0) };
        }
        block.sync();
        let t = cg::reduce(&tile, 1.0f32, Plus);
        if tile.thread_rank() == 0 {
            unsafe { acc.atomic_add(0, t) }; // the accumulator
        }
        block.sync();
        if block.thread_rank() == 0 {
            unsafe { out.write(k, acc.read(0)) };
        }
        block.sync();
    }
}

#[test]
fn a_shared_accumulator_never_zeroed_is_named_at_its_line_not_summed_twice() {
    let mut out = [0f32; 2];
    launch(&SHARED_ACCUMULATOR, 1, THREADS, false, &[output("out", &mut out, 0), Arg::Value(1)]).unwrap();
    assert_eq!(out, [64.0, 64.0], "zeroed before each sum");
    // Not zeroed: the emulator's shared memory starts at 0, so the first sum
    // was right and the second twice the sum; now the first atomic is named.
    let mut out = [0f32; 2];
    let text = err_text(launch(&SHARED_ACCUMULATOR, 1, THREADS, false, &[output("out", &mut out, 0), Arg::Value(0)]));
    let line = include_str!("emulator.rs").lines().position(|l| l.ends_with("// the accumulator")).unwrap() + 1;
    assert!(
        text.starts_with(&format!(
            "thread 0 of block 0 (warp 0, lane 0) atomically updated dynamic shared memory[0] (4-byte elements) at atomic_add() at gpu/tests/emulator.rs:{line}:"
        )),
        "{text}"
    );
    assert!(text.contains("which no thread of block 0 had written") && text.contains("one thread sets it (to 0 for a sum), then block.sync()"), "{text}");
}

/// Every element of `input` added to `out[0]` atomically, as a learner's
/// sum without a tree does; after the grid barrier, thread 0 adds 1 more and
/// reads `out[0]` back atomically (a load, which updates nothing), and
/// every block's thread 0 adds to `out[1]` once.
///
/// # Safety
/// `input` holds `n` floats and `out` two.
#[kernel(cooperative)]
unsafe fn atomics_per_element(input: In<f32>, out: Out<f32>, n: usize) {
    let grid = this_grid();
    let mut i = grid.thread_rank();
    while i < n {
        unsafe { out.atomic_add(0, input.read(i)) };
        i += grid.num_threads();
    }
    grid.sync();
    if this_thread_block().thread_rank() == 0 {
        unsafe { out.atomic_add(1, 1.0) };
    }
    if grid.thread_rank() == 0 {
        unsafe { out.atomic_add(0, 1.0) };
        unsafe { out.atomic_load(0, gpu::mem::Scope::Device) };
    }
}

#[test]
fn the_launch_counts_the_most_atomics_on_one_word_across_blocks_and_barriers() {
    let n = 1000;
    let xs = vec![0.5f32; n];
    let mut out = [0f32; 2];
    let stats = launch(&ATOMICS_PER_ELEMENT, 8, THREADS, true, &[input("input", &xs), output("out", &mut out, 0), Arg::Value(n as u64)]).unwrap();
    assert_eq!(out, [501.0, 8.0]);
    // n updates of out[0] before the barrier, one after it; the load is not one.
    assert_eq!(stats.most_atomics_on_one_word, n as u64 + 1, "{stats:?}");
    // The lesson's tree makes none.
    let mut partials = vec![0f32; 8];
    let stats =
        launch(&kernels::REDUCE_BLOCKS_TO_PARTIALS, 8, THREADS, false, &[input("input", &xs), output("partials", &mut partials, 0), Arg::Value(n as u64)])
            .unwrap();
    assert_eq!(stats.most_atomics_on_one_word, 0);
}
