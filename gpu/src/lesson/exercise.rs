//! The exercise's kernel, yours to edit: a single cooperative launch whose
//! total lands in `out[0]`. `exercise/solve.rs` sizes its grid.
//!
//! It starts as a copy of the lesson's `reduce_cooperative_grid`; changing it
//! changes nothing else. `exercise_sum_bounds_bug` is the same kernel with one
//! mistake, for `cg-lesson exercise --variant bounds-bug`.

use super::sum::{block_sum, one_f32_per_tile};
use crate::cg::{this_grid, this_thread_block, tiled_partition};
use crate::kernel;
use crate::mem::{In, Out};

/// Your single-launch sum.
///
/// # Safety
/// `input` holds `n` floats, `partials` one per block, `out` one.
#[kernel(cooperative, shared_memory = one_f32_per_tile)]
pub unsafe fn exercise_sum<const TILE: u32 = 32>(input: In<f32>, partials: Out<f32>, out: Out<f32>, n: usize) {
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
