//! The exercise's kernels. `exercise_sum` is the one to edit: a single
//! cooperative launch whose total lands in `total[0]`.

use super::sum::{block_partial, sum_of_partials};
use crate::cg::{this_grid, this_thread_block, tiled_partition};

kernel! {
    /// Your single-launch sum. The host's `solve()` sizes its grid.
    ///
    /// # Safety
    /// `input` holds `n` floats, `partials` one per block, `total` one; launched cooperatively.
    pub unsafe fn exercise_sum(input: *const f32, partials: *mut f32, total: *mut f32, n: usize) {
        // SAFETY: the caller's contract, and the loop bound is n.
        unsafe { sum_in_one_launch(input, partials, total, n) }
    }
}

kernel! {
    /// The bounds bug: the loop runs to `n` rounded up to whole blocks, as if every
    /// thread of the last block had an element. Threads past `n` read whatever
    /// lies after the input.
    ///
    /// # Safety
    /// As [`exercise_sum`], and the input's buffer extends a block's worth past `n`.
    pub unsafe fn exercise_sum_bounds_bug(input: *const f32, partials: *mut f32, total: *mut f32, n: usize) {
        let threads = this_thread_block().num_threads() as usize;
        let bound = n.div_ceil(threads) * threads;
        // SAFETY: the caller's contract covers reads up to `bound`.
        unsafe { sum_in_one_launch(input, partials, total, bound) }
    }
}

/// Grid-stride sum of `input[..bound]`, block partials, grid barrier, and
/// block 0's sum of the partials into `total[0]`.
#[inline(always)]
unsafe fn sum_in_one_launch(input: *const f32, partials: *mut f32, total: *mut f32, bound: usize) {
    let grid = this_grid();
    let block = this_thread_block();
    let tile = tiled_partition::<32>(&block);

    // SAFETY: the caller guarantees `bound` elements are readable.
    unsafe { block_partial(&grid, &block, &tile, input, bound, partials) };
    grid.sync();
    if grid.block_rank() == 0 {
        // SAFETY: one partial per block, each written before the sync.
        let sum = unsafe { sum_of_partials(&block, &tile, partials, grid.num_blocks()) };
        if block.thread_rank() == 0 {
            // SAFETY: `total` holds one float.
            unsafe { *total = sum };
        }
    }
}
