//! The block reduction every sum kernel shares, so both of the lesson's paths
//! run the same arithmetic.

use crate::arch;
use crate::cg::{self, GridGroup, Plus, ThreadBlock, ThreadBlockTile};

/// The block's total of `v`, in thread 0 (the lesson's `blockSum(block, tile, v)`).
///
/// Each warp reduces with `cg::reduce`, lane 0 of each warp stores its total in
/// dynamic shared memory ([`one_f32_per_warp`](super::one_f32_per_warp) bytes),
/// and the first warp reduces those. Every thread of the block must call it.
#[inline(always)]
pub fn block_sum(block: &ThreadBlock, tile: &ThreadBlockTile<32>, v: f32) -> f32 {
    let warp_totals = arch::dynamic_shared::<f32>();
    let warp_total = cg::reduce(tile, v, Plus);
    if tile.thread_rank() == 0 {
        // SAFETY: the launch sized the buffer at one f32 per warp.
        unsafe { *warp_totals.add(tile.meta_group_rank() as usize) = warp_total };
    }
    block.sync();
    let mut total = 0.0;
    if tile.meta_group_rank() == 0 {
        let mine = if tile.thread_rank() < tile.meta_group_size() {
            // SAFETY: one f32 per warp, and this rank names a warp.
            unsafe { *warp_totals.add(tile.thread_rank() as usize) }
        } else {
            0.0
        };
        total = cg::reduce(tile, mine, Plus);
    }
    // The next call may overwrite warp_totals only after everyone has read them.
    block.sync();
    total
}

/// The first stage of every lesson sum: this thread's grid-stride share of
/// `input[..n]`, the block's total of those ([`block_sum`]), written by
/// thread 0 to `partials[block rank]`.
///
/// # Safety
/// `input` holds `n` floats that nothing writes during the launch, and
/// `partials` one float per block.
#[inline(always)]
pub unsafe fn block_partial(grid: &GridGroup, block: &ThreadBlock, tile: &ThreadBlockTile<32>, input: *const f32, n: usize, partials: *mut f32) {
    let step = grid.num_threads();
    let mut v = 0.0f32;
    let mut i = grid.thread_rank();
    while i < n {
        // SAFETY: i < n.
        v += unsafe { load(input, i) };
        i += step;
    }
    let total = block_sum(block, tile, v);
    if block.thread_rank() == 0 {
        // SAFETY: one partial per block.
        unsafe { *partials.add(grid.block_rank()) = total };
    }
}

/// The block's total of `partials[..m]`, in thread 0: the second stage of
/// every sum (a block-stride loop, then [`block_sum`]), shared so that every
/// path adds the partials in the same order.
///
/// # Safety
/// `partials` holds `m` floats, all written before this block reads them.
#[inline(always)]
pub unsafe fn sum_of_partials(block: &ThreadBlock, tile: &ThreadBlockTile<32>, partials: *const f32, m: usize) -> f32 {
    let mut w = 0.0f32;
    let mut i = block.thread_rank() as usize;
    while i < m {
        // SAFETY: i < m.
        w += unsafe { *partials.add(i) };
        i += block.num_threads() as usize;
    }
    block_sum(block, tile, w)
}

/// Reads `input[i]` through the read-only cache: the load nvcc emits for a
/// `const float* __restrict__` parameter.
///
/// # Safety
/// `i` is in bounds of an input nothing writes during the launch.
#[inline(always)]
pub unsafe fn load(input: *const f32, i: usize) -> f32 {
    // SAFETY: the caller's contract.
    unsafe { arch::ldg_f32(input.add(i)) }
}
