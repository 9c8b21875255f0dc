//! The lesson's next step, after the exercise: its single-launch sum with
//! the second stage (the partials, the grid barrier, block 0's adds) as one
//! grid collective, `grid.reduce` (`cargo emulate exercise --variant
//! grid-reduce`; `docs/lesson.md`, "Go deeper").

use crate::cg::{Plus, this_grid};
use crate::kernel;
use crate::mem::{In, Out};

/// The exercise's sum in one launch, its second stage one call. It takes
/// the exercise's parameters, so the exercise's harness checks it as it
/// checks a `solve()`; `partials` goes unused: the grid's reduce keeps its
/// words in the launch's own memory.
///
/// # Safety
/// `input` holds `n` floats, `out` one.
#[kernel(cooperative)]
pub unsafe fn exercise_sum_grid_reduce(input: In<f32>, partials: Out<f32>, out: Out<f32>, n: usize) {
    let grid = this_grid();
    let _ = partials;

    let step = grid.num_threads();
    let mut v = 0.0f32;
    let mut i = grid.thread_rank();
    while i < n {
        // SAFETY: i < n, and the input holds n floats.
        v += unsafe { input.read(i) };
        i += step;
    }
    // Every block's threads, combined, to every thread: what the partials,
    // grid.sync() and block 0's loop did.
    let total = grid.reduce(v, Plus);
    if grid.thread_rank() == 0 {
        // SAFETY: out holds one float.
        unsafe { out.write(0, total) };
    }
}
