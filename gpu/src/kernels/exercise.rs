//! The exercise's kernels. `exercise_sum` is the one to edit: a single
//! cooperative launch whose total lands in `total[0]`.

use super::def::matches;
use super::sum::{block_sum, load};
use super::*;
use crate::cg::{ThreadBlock, ThreadBlockTile, this_grid, this_thread_block, tiled_partition};

/// Your single-launch sum. The host's `solve()` sizes its grid.
///
/// # Safety
/// `input` holds `n` floats, `partials` one per block, `total` one; launched cooperatively.
#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn exercise_sum(input: *const f32, partials: *mut f32, total: *mut f32, n: usize) {
    // SAFETY: the caller's contract, and the loop bound is n.
    unsafe { sum_in_one_launch(input, partials, total, n) }
}
const _: () = matches(&EXERCISE_SUM, exercise_sum);

/// The bounds bug: the loop runs to `n` rounded up to whole blocks, as if every
/// thread of the last block had an element. Threads past `n` read whatever
/// lies after the input.
///
/// # Safety
/// As [`exercise_sum`], and the input's buffer extends a block's worth past `n`.
#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn exercise_sum_bounds_bug(input: *const f32, partials: *mut f32, total: *mut f32, n: usize) {
    let threads = this_thread_block().num_threads() as usize;
    let bound = n.div_ceil(threads) * threads;
    // SAFETY: the caller's contract covers reads up to `bound`.
    unsafe { sum_in_one_launch(input, partials, total, bound) }
}
const _: () = matches(&EXERCISE_SUM_BOUNDS_BUG, exercise_sum_bounds_bug);

/// Grid-stride sum of `input[..bound]`, block partials, grid barrier, and
/// block 0's sum of the partials into `total[0]`.
#[inline(always)]
unsafe fn sum_in_one_launch(input: *const f32, partials: *mut f32, total: *mut f32, bound: usize) {
    let grid = this_grid();
    let block = this_thread_block();
    let tile = tiled_partition::<32>(&block);

    let mut v = 0.0f32;
    let mut i = grid.thread_rank();
    while i < bound {
        // SAFETY: the caller guarantees `bound` elements are readable.
        v += unsafe { load(input, i) };
        i += grid.num_threads();
    }
    publish(&block, &tile, partials, grid.block_rank(), v);
    grid.sync();
    if grid.block_rank() == 0 {
        let mut w = 0.0f32;
        let mut j = block.thread_rank() as usize;
        while j < grid.num_blocks() {
            // SAFETY: j < the number of blocks, each of which wrote its partial before the sync.
            w += unsafe { *partials.add(j) };
            j += block.num_threads() as usize;
        }
        publish(&block, &tile, total, 0, w);
    }
}

/// Reduces `v` over the block and stores the block's total at `dst[slot]`.
#[inline(always)]
fn publish(block: &ThreadBlock, tile: &ThreadBlockTile<32>, dst: *mut f32, slot: usize, v: f32) {
    let sum = block_sum(block, tile, v);
    if block.thread_rank() == 0 {
        // SAFETY: callers pass a slot inside `dst`.
        unsafe { *dst.add(slot) = sum };
    }
}
