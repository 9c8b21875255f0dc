//! The level between block and grid: the lesson's sum with a cluster stage
//! (compute capability 9.0+; `host/cpp/cluster.cu` holds the C++ twin).
//!
//! Each block reduces its share into its shared memory; after `cluster.sync()`
//! rank 0 of each cluster adds its cluster's block totals, reading the other
//! blocks' shared memory through `map_shared_rank`; a second `cluster.sync()`
//! keeps every block alive until those reads are done. What is left is one
//! partial per cluster instead of one per block.
//!
//! A `#[kernel(cluster)]` kernel is built only into the sm_90 PTX module, and
//! the host launches it only with a cluster dimension.

use super::sum::{block_sum, one_f32_per_tile};
use crate::cg::{ClusterGroup, GridGroup, LaunchKind, ThreadBlock, ThreadBlockTile, this_cluster, this_grid, this_thread_block, tiled_partition};
use crate::kernel;
use crate::mem::{In, Out, dynamic_shared};

/// Bytes of dynamic shared memory of the cluster sums: [`one_f32_per_tile`]
/// for `block_sum`, then one `f32` for the block's total, which rank 0 of
/// the cluster reads.
pub const fn one_f32_per_tile_and_the_block_total(threads_per_block: u32, tile: u32) -> u32 {
    one_f32_per_tile(threads_per_block, tile) + 4
}

/// Where the block's total sits in its shared memory: after the tile totals.
#[inline(always)]
pub(crate) fn block_total_slot(block: &ThreadBlock, tile: u32) -> usize {
    block.num_threads().div_ceil(tile) as usize
}

/// This thread's grid-stride share of `input`, added up.
#[inline(always)]
pub(crate) fn grid_stride_sum<L: LaunchKind>(grid: &GridGroup<L>, input: In<f32>, n: usize) -> f32 {
    let step = grid.num_threads();
    let mut v = 0.0f32;
    let mut i = grid.thread_rank();
    while i < n {
        // SAFETY: i < n, and the input holds n floats.
        v += unsafe { input.read(i) };
        i += step;
    }
    v
}

/// In rank 0 of the cluster: the sum of every block's total, read from each
/// block's shared memory (`*cluster.map_shared_rank(blockTotal, r)`), then
/// reduced over rank 0's block. Every thread of rank 0's block calls it.
#[inline(always)]
pub(crate) fn add_cluster_totals<const TILE: u32>(cluster: &ClusterGroup, block: &ThreadBlock, tile: &ThreadBlockTile<TILE>, rank_offset: u32) -> f32 {
    let totals = dynamic_shared::<f32>();
    let slot = block_total_slot(block, TILE);
    let mut w = 0.0f32;
    let mut r = block.thread_rank();
    while r < cluster.num_blocks() {
        // SAFETY: every block wrote its total to this slot before the cluster.sync() before this
        // call, and reaches the cluster.sync() after it before it exits.
        w += unsafe { cluster.map_shared_rank(totals, r + rank_offset).read(slot) };
        r += block.num_threads();
    }
    block_sum(block, tile, w)
}

/// Writes the block's total (in thread 0) to the slot rank 0 reads.
#[inline(always)]
pub(crate) fn share_block_total<const TILE: u32>(block: &ThreadBlock, total: f32) {
    if block.thread_rank() == 0 {
        // SAFETY: the launch gives one f32 past the tile totals; only thread 0 writes it.
        unsafe { dynamic_shared::<f32>().write(block_total_slot(block, TILE), total) };
    }
}

/// `reduceClusterGrid`: block sums, then a cluster stage through distributed
/// shared memory (one partial per cluster), `grid.sync()`, then block 0 adds
/// the cluster partials. Launched cooperatively, with a cluster dimension.
///
/// # Safety
/// `input` holds `n` floats, `partials` one per cluster, `out` one.
#[kernel(cooperative, cluster, shared_memory = one_f32_per_tile_and_the_block_total)]
pub unsafe fn reduce_cluster_grid<const TILE: u32 = 32>(input: In<f32>, partials: Out<f32>, out: Out<f32>, n: usize) {
    let grid = this_grid();
    let cluster = this_cluster();
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);

    let mut total = block_sum(&block, &tile, grid_stride_sum(&grid, input, n));
    share_block_total::<TILE>(&block, total);

    // Every block's total, in its own shared memory, is visible to the cluster.
    cluster.sync();

    if cluster.block_rank() == 0 {
        total = add_cluster_totals(&cluster, &block, &tile, 0);
        if block.thread_rank() == 0 {
            // SAFETY: partials holds one float per cluster.
            unsafe { partials.write(grid.cluster_rank(), total) };
        }
    }

    // No block leaves while rank 0 may still read its shared memory.
    cluster.sync();
    grid.sync();

    if grid.block_rank() == 0 {
        let m = grid.num_clusters();
        let mut w = 0.0f32;
        let mut i = block.thread_rank() as usize;
        while i < m {
            // SAFETY: i < m, and every cluster wrote its partial before grid.sync().
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

/// The cluster stage without a grid barrier: one partial per cluster, for
/// a second launch (`reduce_partials_to_total`) to add. An ordinary cluster
/// launch, so any number of clusters; here the second `cluster.sync()` is
/// what keeps each block's shared memory alive while rank 0 reads it.
///
/// # Safety
/// `input` holds `n` floats, `partials` one per cluster.
#[kernel(cluster, shared_memory = one_f32_per_tile_and_the_block_total)]
pub unsafe fn reduce_clusters_to_partials<const TILE: u32 = 32>(input: In<f32>, partials: Out<f32>, n: usize) {
    let (grid, cluster, block) = (this_grid(), this_cluster(), this_thread_block());
    let tile = tiled_partition::<TILE>(&block);
    share_block_total::<TILE>(&block, block_sum(&block, &tile, grid_stride_sum(&grid, input, n)));
    cluster.sync();
    rank_0_writes_the_cluster_partial(&grid, &cluster, &block, &tile, partials, 0);
    // Rank 0 reads every block's shared memory above: no block may exit first.
    cluster.sync();
}

/// In rank 0 of each cluster: the cluster's partial, from every block's
/// total (read at rank `r + rank_offset`), to `partials[grid.cluster_rank()]`.
#[inline(always)]
pub(crate) fn rank_0_writes_the_cluster_partial<const TILE: u32, L: LaunchKind>(
    grid: &GridGroup<L>,
    cluster: &ClusterGroup,
    block: &ThreadBlock,
    tile: &ThreadBlockTile<TILE>,
    partials: Out<f32>,
    rank_offset: u32,
) {
    if cluster.block_rank() == 0 {
        let total = add_cluster_totals(cluster, block, tile, rank_offset);
        if block.thread_rank() == 0 {
            // SAFETY: partials holds one float per cluster.
            unsafe { partials.write(grid.cluster_rank(), total) };
        }
    }
}

/// After `grid.sync()`: block 0 adds the cluster partials into `out[0]`.
#[inline(always)]
pub(crate) fn block_0_adds_the_partials<const TILE: u32>(
    grid: &GridGroup,
    block: &ThreadBlock,
    tile: &ThreadBlockTile<TILE>,
    partials: Out<f32>,
    out: Out<f32>,
) {
    if grid.block_rank() == 0 {
        let mut w = 0.0f32;
        let mut i = block.thread_rank() as usize;
        while i < grid.num_clusters() {
            // SAFETY: i < the cluster count; every cluster wrote its partial before grid.sync().
            w += unsafe { partials.read(i) };
            i += block.num_threads() as usize;
        }
        let total = block_sum(block, tile, w);
        if block.thread_rank() == 0 {
            // SAFETY: out holds one float.
            unsafe { out.write(0, total) };
        }
    }
}
