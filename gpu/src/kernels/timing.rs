//! Kernels the host's timing uses: empty ones for what a launch costs, and
//! one that holds the GPU while the host queues the runs it times.

use crate::arch;
use crate::cg::{this_grid, this_thread_block};
use crate::kernel;

/// Does nothing: what a launch costs on its own.
///
/// # Safety
/// None: it touches nothing.
#[kernel]
pub unsafe fn empty() {}

/// Does nothing, launched cooperatively: what a cooperative launch costs on its own.
///
/// # Safety
/// None: it touches nothing.
#[kernel(cooperative)]
pub unsafe fn empty_cooperative() {}

/// Keeps its first thread busy until the GPU's clock (`%globaltimer`) has
/// advanced `ns` nanoseconds, then returns. Launched ahead of a batch of
/// timed runs on the same stream, it keeps them queued until the host has
/// queued them all, so that the events around each run time the GPU alone,
/// not the host's speed at submitting; and ahead of many launches, it lets
/// the host time its own cost per launch while the GPU is busy.
///
/// # Safety
/// None: it touches no memory.
#[kernel]
pub unsafe fn hold_for(ns: usize) {
    if this_grid().block_rank() == 0 && this_thread_block().thread_rank() == 0 {
        let start = arch::global_timer();
        while (arch::global_timer().wrapping_sub(start) as usize) < ns {}
    }
}

/// `barriers` grid barriers back to back and nothing else: what one
/// `grid.sync()` costs (`bench`'s barrier table, and the lesson's line on it).
///
/// # Safety
/// None: it touches no memory but the grid barrier's own.
#[kernel(cooperative)]
pub unsafe fn grid_sync_loop(barriers: u32) {
    let grid = this_grid();
    let mut k = 0;
    while k < barriers {
        grid.sync();
        k += 1;
    }
}
