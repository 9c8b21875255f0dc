//! The lesson's kernel with one mistake each, kept so that the checks that
//! should catch those mistakes are shown to (host tests launch them on the
//! GPU and on the emulator). Nothing else launches them.

use crate::cg::{self, Plus, ThreadBlock, ThreadBlockTile, this_cluster, this_grid, this_multi_grid, this_thread_block, tiled_partition};
use crate::kernel;
use crate::lesson::cluster::{
    block_0_adds_the_partials, grid_stride_sum, one_f32_per_tile_and_the_block_total, rank_0_writes_the_cluster_partial, share_block_total,
};
use crate::lesson::sum::{block_sum, one_f32_per_tile};
use crate::mem::{In, Out, dynamic_shared};

/// `reduce_cooperative_grid` with its `grid.sync()` deleted: block 0 reads the
/// partials whether or not the other blocks have written them.
///
/// # Safety
/// As `reduce_cooperative_grid`.
#[kernel(cooperative, shared_memory = one_f32_per_tile)]
pub unsafe fn mutant_without_grid_sync<const TILE: u32 = 32>(input: In<f32>, partials: Out<f32>, out: Out<f32>, n: usize) {
    let grid = this_grid();
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);

    let step = grid.num_threads();
    let mut v = 0.0f32;
    let mut i = grid.thread_rank();
    while i < n {
        // SAFETY: i < n, and the input holds n floats.
        v += unsafe { input.read(i) };
        i += step;
    }
    let mut total = block_sum(&block, &tile, v);
    if block.thread_rank() == 0 {
        // SAFETY: partials holds one float per block.
        unsafe { partials.write(block.group_index().x as usize, total) };
    }

    if block.group_index().x == 0 {
        let m = grid.num_blocks();
        let mut w = 0.0f32;
        let mut i = block.thread_rank() as usize;
        while i < m {
            // SAFETY: i < m (that the partial was written is the mutation).
            w += unsafe { partials.read(i) };
            i += block.num_threads() as usize;
        }
        total = block_sum(&block, &tile, w);
        if block.thread_rank() == 0 {
            // SAFETY: out holds one float.
            unsafe { out.write(0, total) };
        }
    }
}

/// `reduce_cooperative_grid` whose second stage skips the last block's
/// partial: every partial is right and the total is short by one block.
///
/// # Safety
/// As `reduce_cooperative_grid`.
#[kernel(cooperative, shared_memory = one_f32_per_tile)]
pub unsafe fn mutant_dropping_last_block<const TILE: u32 = 32>(input: In<f32>, partials: Out<f32>, out: Out<f32>, n: usize) {
    let grid = this_grid();
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);

    let step = grid.num_threads();
    let mut v = 0.0f32;
    let mut i = grid.thread_rank();
    while i < n {
        // SAFETY: i < n, and the input holds n floats.
        v += unsafe { input.read(i) };
        i += step;
    }
    let mut total = block_sum(&block, &tile, v);
    if block.thread_rank() == 0 {
        // SAFETY: partials holds one float per block.
        unsafe { partials.write(block.group_index().x as usize, total) };
    }

    grid.sync();

    if block.group_index().x == 0 {
        let m = grid.num_blocks() - 1;
        let mut w = 0.0f32;
        let mut i = block.thread_rank() as usize;
        while i < m {
            // SAFETY: i < m, and every block wrote its partial before grid.sync().
            w += unsafe { partials.read(i) };
            i += block.num_threads() as usize;
        }
        total = block_sum(&block, &tile, w);
        if block.thread_rank() == 0 {
            // SAFETY: out holds one float.
            unsafe { out.write(0, total) };
        }
    }
}

/// `reduce_multi_gpu` with its barrier across GPUs replaced by a `grid.sync()`:
/// GPU 0 adds the other GPUs' totals whether or not they have written them,
/// and, no GPU's barrier count moving on, from the half of the exchange they
/// did not write.
///
/// # Safety
/// As `reduce_multi_gpu`.
#[allow(clippy::too_many_arguments, reason = "a kernel's parameters are what its launch passes; a struct would hide them from the PTX signature")]
#[kernel(cooperative, shared_memory = one_f32_per_tile)]
pub unsafe fn mutant_multi_gpu_without_barrier<const TILE: u32 = 32>(
    input: In<f32>,
    partials: Out<f32>,
    totals: Out<f32>,
    out: Out<f32>,
    barrier: Out<u32>,
    rank: u32,
    gpus: u32,
    n: usize,
) {
    let grid = this_grid();
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);

    let step = grid.num_threads();
    let mut v = 0.0f32;
    let mut i = grid.thread_rank();
    while i < n {
        // SAFETY: i < n, and the input holds n floats.
        v += unsafe { input.read(i) };
        i += step;
    }
    let mut total = block_sum(&block, &tile, v);
    if block.thread_rank() == 0 {
        // SAFETY: partials holds one float per block.
        unsafe { partials.write(block.group_index().x as usize, total) };
    }
    grid.sync();

    let multi = this_multi_grid(&grid, barrier, rank, gpus);
    if block.group_index().x == 0 {
        let m = grid.num_blocks();
        let mut w = 0.0f32;
        let mut i = block.thread_rank() as usize;
        while i < m {
            // SAFETY: i < m, and every block wrote its partial before grid.sync().
            w += unsafe { partials.read(i) };
            i += block.num_threads() as usize;
        }
        total = block_sum(&block, &tile, w);
        if block.thread_rank() == 0 {
            // SAFETY: the barrier words are the kernel's contract; totals holds 2 * gpus.
            let half = unsafe { multi.next_generation() } % 2;
            unsafe { totals.write((half * gpus + rank) as usize, total) };
        }
    }

    grid.sync();

    if rank == 0 && block.group_index().x == 0 && block.thread_rank() == 0 {
        // SAFETY: as above; the barrier just completed has this generation.
        let half = (unsafe { multi.next_generation() } - 1) % 2;
        // GPU 0's own total is at hand (each read of the others' crosses PCIe).
        let mut sum = total;
        for r in 1..gpus {
            // SAFETY: totals holds 2 * gpus, and every GPU wrote its own before the barrier.
            sum += unsafe { totals.read((half * gpus + r) as usize) };
        }
        // SAFETY: out holds one float.
        unsafe { out.write(0, sum) };
    }
}

/// `reduce_cooperative_grid` with the second stage's `if block 0` deleted:
/// every block adds up the partials and writes `out[0]`.
///
/// # Safety
/// As `reduce_cooperative_grid`.
#[kernel(cooperative, shared_memory = one_f32_per_tile)]
pub unsafe fn mutant_every_block_writes_total<const TILE: u32 = 32>(input: In<f32>, partials: Out<f32>, out: Out<f32>, n: usize) {
    let grid = this_grid();
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);

    let step = grid.num_threads();
    let mut v = 0.0f32;
    let mut i = grid.thread_rank();
    while i < n {
        // SAFETY: i < n, and the input holds n floats.
        v += unsafe { input.read(i) };
        i += step;
    }
    let mut total = block_sum(&block, &tile, v);
    if block.thread_rank() == 0 {
        // SAFETY: partials holds one float per block.
        unsafe { partials.write(block.group_index().x as usize, total) };
    }

    grid.sync();

    let m = grid.num_blocks();
    let mut w = 0.0f32;
    let mut i = block.thread_rank() as usize;
    while i < m {
        // SAFETY: i < m, and every block wrote its partial before grid.sync().
        w += unsafe { partials.read(i) };
        i += block.num_threads() as usize;
    }
    total = block_sum(&block, &tile, w);
    if block.thread_rank() == 0 {
        // SAFETY: out holds one float (that every block writes it is the mutation).
        unsafe { out.write(0, total) };
    }
}

/// `block_sum` with `tile.sync()` where its first `block.sync()` belongs:
/// the barrier orders one warp's lanes, not the tiles' totals across warps.
#[inline(always)]
fn block_sum_tile_synced<const TILE: u32>(block: &ThreadBlock, tile: &ThreadBlockTile<TILE>, v: f32) -> f32 {
    let tile_totals = dynamic_shared::<f32>();
    let tile_total = cg::reduce(tile, v, Plus);
    if tile.thread_rank() == 0 {
        // SAFETY: the launch gives one f32 per tile, and each tile writes only its own.
        unsafe { tile_totals.write(tile.meta_group_rank() as usize, tile_total) };
    }
    tile.sync();
    let mut total = 0.0f32;
    if tile.meta_group_rank() == 0 {
        let mut mine = 0.0f32;
        let mut i = tile.thread_rank();
        while i < tile.meta_group_size() {
            // SAFETY: i names a tile (that it was written is the mutation).
            mine += unsafe { tile_totals.read(i as usize) };
            i += TILE;
        }
        total = cg::reduce(tile, mine, Plus);
    }
    block.sync();
    total
}

/// `reduce_cooperative_grid` whose block sums use `block_sum_tile_synced`
/// (`tile.sync()` where `block_sum` has its first `block.sync()`).
///
/// # Safety
/// As `reduce_cooperative_grid`.
#[kernel(cooperative, shared_memory = one_f32_per_tile)]
pub unsafe fn mutant_tile_sync_for_block_sync<const TILE: u32 = 32>(input: In<f32>, partials: Out<f32>, out: Out<f32>, n: usize) {
    let grid = this_grid();
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);

    let step = grid.num_threads();
    let mut v = 0.0f32;
    let mut i = grid.thread_rank();
    while i < n {
        // SAFETY: i < n, and the input holds n floats.
        v += unsafe { input.read(i) };
        i += step;
    }
    let mut total = block_sum_tile_synced(&block, &tile, v);
    if block.thread_rank() == 0 {
        // SAFETY: partials holds one float per block.
        unsafe { partials.write(block.group_index().x as usize, total) };
    }

    grid.sync();

    if block.group_index().x == 0 {
        let m = grid.num_blocks();
        let mut w = 0.0f32;
        let mut i = block.thread_rank() as usize;
        while i < m {
            // SAFETY: i < m, and every block wrote its partial before grid.sync().
            w += unsafe { partials.read(i) };
            i += block.num_threads() as usize;
        }
        total = block_sum_tile_synced(&block, &tile, w);
        if block.thread_rank() == 0 {
            // SAFETY: out holds one float.
            unsafe { out.write(0, total) };
        }
    }
}

/// `reduce_blocks_to_partials` with its `if block.thread_rank() == 0`
/// deleted: every thread of a block writes the block's partial. A learner's
/// mistake in the exercise; the emulator names the fix (one writer).
///
/// # Safety
/// As `reduce_blocks_to_partials`.
#[kernel(shared_memory = one_f32_per_tile)]
pub unsafe fn mutant_every_thread_writes_partial<const TILE: u32 = 32>(input: In<f32>, partials: Out<f32>, n: usize) {
    let grid = this_grid();
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);

    let step = grid.num_threads();
    let mut v = 0.0f32;
    let mut i = grid.thread_rank();
    while i < n {
        // SAFETY: i < n, and the input holds n floats.
        v += unsafe { input.read(i) };
        i += step;
    }
    let total = block_sum(&block, &tile, v);
    // SAFETY: partials holds one float per block (that every thread writes it is the mutation).
    unsafe { partials.write(block.group_index().x as usize, total) };
}

/// Elements `exercise_sum_bounds_bug` may read past its input: one block's
/// worth, less one.
pub const fn one_block_less_one(threads_per_block: u32) -> usize {
    threads_per_block as usize - 1
}

/// Day 8's bounds bug in the exercise kernel: the loop runs to n rounded up to
/// whole blocks, as if every thread of the last block had an element. The only
/// line that differs from `exercise_sum` is the `while`'s bound.
///
/// # Safety
/// As `exercise_sum`, and the input's buffer extends a block's worth past `n`.
#[kernel(cooperative, shared_memory = one_f32_per_tile, overread = one_block_less_one)]
pub unsafe fn exercise_sum_bounds_bug<const TILE: u32 = 32>(input: In<f32>, partials: Out<f32>, out: Out<f32>, n: usize) {
    let grid = this_grid();
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);

    let step = grid.num_threads();
    let mut v = 0.0f32;
    let mut i = grid.thread_rank();
    while i < n.next_multiple_of(block.num_threads() as usize) {
        // SAFETY: not for i >= n: this is the bug (the guard after the input keeps the GPU's reads inside the allocation).
        v += unsafe { input.read(i) };
        i += step;
    }
    let mut total = block_sum(&block, &tile, v);
    if block.thread_rank() == 0 {
        // SAFETY: partials holds one float per block.
        unsafe { partials.write(block.group_index().x as usize, total) };
    }

    grid.sync();

    if block.group_index().x == 0 {
        let m = grid.num_blocks();
        let mut w = 0.0f32;
        let mut i = block.thread_rank() as usize;
        while i < m {
            // SAFETY: i < m, and every block wrote its partial before grid.sync().
            w += unsafe { partials.read(i) };
            i += block.num_threads() as usize;
        }
        total = block_sum(&block, &tile, w);
        if block.thread_rank() == 0 {
            // SAFETY: out holds one float.
            unsafe { out.write(0, total) };
        }
    }
}

/// The second stage written with an `if` where `exercise_sum` has a loop:
/// block 0's threads read one partial each, so a grid of more blocks than
/// a block has threads loses the rest. The only line that differs from
/// `exercise_sum` is the `if`. On the lesson's T4 the grid is 160 blocks of
/// 256 and every case passes; a grid of 1056 (an H200) fails.
///
/// # Safety
/// As `exercise_sum`.
#[allow(unused_assignments)] // `i` steps past the one partial it reads, as the loop's would.
#[kernel(cooperative, shared_memory = one_f32_per_tile)]
pub unsafe fn exercise_sum_partials_if<const TILE: u32 = 32>(input: In<f32>, partials: Out<f32>, out: Out<f32>, n: usize) {
    let grid = this_grid();
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);

    let step = grid.num_threads();
    let mut v = 0.0f32;
    let mut i = grid.thread_rank();
    while i < n {
        // SAFETY: i < n, and the input holds n floats.
        v += unsafe { input.read(i) };
        i += step;
    }
    let mut total = block_sum(&block, &tile, v);
    if block.thread_rank() == 0 {
        // SAFETY: partials holds one float per block.
        unsafe { partials.write(block.group_index().x as usize, total) };
    }

    grid.sync();

    if block.group_index().x == 0 {
        let m = grid.num_blocks();
        let mut w = 0.0f32;
        let mut i = block.thread_rank() as usize;
        if i < m {
            // SAFETY: i < m, and every block wrote its partial before grid.sync().
            w += unsafe { partials.read(i) };
            i += block.num_threads() as usize;
        }
        total = block_sum(&block, &tile, w);
        if block.thread_rank() == 0 {
            // SAFETY: out holds one float.
            unsafe { out.write(0, total) };
        }
    }
}

/// `reduce_cluster_grid` with its first `cluster.sync()` deleted: rank 0
/// reads the other blocks' totals whether or not they have written them.
///
/// # Safety
/// As `reduce_cluster_grid`.
#[kernel(cooperative, cluster, shared_memory = one_f32_per_tile_and_the_block_total)]
pub unsafe fn mutant_cluster_without_first_sync<const TILE: u32 = 32>(input: In<f32>, partials: Out<f32>, out: Out<f32>, n: usize) {
    let (grid, cluster, block) = (this_grid(), this_cluster(), this_thread_block());
    let tile = tiled_partition::<TILE>(&block);
    share_block_total::<TILE>(&block, block_sum(&block, &tile, grid_stride_sum(&grid, input, n)));
    rank_0_writes_the_cluster_partial(&grid, &cluster, &block, &tile, partials, 0);
    cluster.sync();
    grid.sync();
    block_0_adds_the_partials(&grid, &block, &tile, partials, out);
}

/// `reduce_cluster_grid` reading rank `r + 1` where it means `r`: the last
/// read is past the cluster.
///
/// # Safety
/// As `reduce_cluster_grid`.
#[kernel(cooperative, cluster, shared_memory = one_f32_per_tile_and_the_block_total)]
pub unsafe fn mutant_cluster_wrong_rank<const TILE: u32 = 32>(input: In<f32>, partials: Out<f32>, out: Out<f32>, n: usize) {
    let (grid, cluster, block) = (this_grid(), this_cluster(), this_thread_block());
    let tile = tiled_partition::<TILE>(&block);
    share_block_total::<TILE>(&block, block_sum(&block, &tile, grid_stride_sum(&grid, input, n)));
    cluster.sync();
    rank_0_writes_the_cluster_partial(&grid, &cluster, &block, &tile, partials, 1);
    cluster.sync();
    grid.sync();
    block_0_adds_the_partials(&grid, &block, &tile, partials, out);
}

/// `reduce_clusters_to_partials` with its second `cluster.sync()` deleted:
/// the blocks other than rank 0 exit while rank 0 may still read their
/// shared memory.
///
/// # Safety
/// As `reduce_clusters_to_partials`.
#[kernel(cluster, shared_memory = one_f32_per_tile_and_the_block_total)]
pub unsafe fn mutant_cluster_exits_early<const TILE: u32 = 32>(input: In<f32>, partials: Out<f32>, n: usize) {
    let (grid, cluster, block) = (this_grid(), this_cluster(), this_thread_block());
    let tile = tiled_partition::<TILE>(&block);
    share_block_total::<TILE>(&block, block_sum(&block, &tile, grid_stride_sum(&grid, input, n)));
    cluster.sync();
    rank_0_writes_the_cluster_partial(&grid, &cluster, &block, &tile, partials, 0);
}

/// `reduce_clusters_to_partials` with a learner's edit of the block sum: a
/// `block.sync()` that only the first warp reaches (inside `if
/// tile.meta_group_rank() == 0`). The first warp waits at the block barrier
/// for warps that wait at the cluster barrier for it: the launch never
/// finishes on a GPU, and the host's time limit must name it, then tear
/// down without waiting for it (`host/tests/gpu_cluster_stuck.rs`).
///
/// # Safety
/// As `reduce_clusters_to_partials`.
#[kernel(cluster, shared_memory = one_f32_per_tile_and_the_block_total)]
pub unsafe fn mutant_cluster_divergent_block_sync<const TILE: u32 = 32>(input: In<f32>, partials: Out<f32>, n: usize) {
    let (grid, cluster, block) = (this_grid(), this_cluster(), this_thread_block());
    let tile = tiled_partition::<TILE>(&block);
    let v = grid_stride_sum(&grid, input, n);
    if tile.meta_group_rank() == 0 {
        block.sync();
    }
    share_block_total::<TILE>(&block, block_sum(&block, &tile, v));
    cluster.sync();
    rank_0_writes_the_cluster_partial(&grid, &cluster, &block, &tile, partials, 0);
    cluster.sync();
}
