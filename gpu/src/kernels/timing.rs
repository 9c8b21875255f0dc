//! Kernels the host's timing uses: empty ones for what a launch costs, and
//! one that holds the GPU while the host queues the runs it times.

use crate::cg::{this_cluster, this_grid, this_thread_block};
use crate::clock;
use crate::kernel;
use crate::mem::Out;

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
        let start = clock::global_timer();
        while (clock::global_timer().wrapping_sub(start) as usize) < ns {}
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

/// The grid barrier under stress: `rounds` rounds in which block `b` writes
/// `round * blocks + b` to `slots[b]`, `grid.sync()`, reads block `b + 1`'s
/// slot (mod blocks) and counts a value other than that block's for this
/// round, then `grid.sync()` again before the next write. Each block's count
/// goes to `errors[b]`. With `skip_first_sync` set, the first barrier of
/// each round is left out, which a data check that works must then see.
///
/// # Safety
/// `slots` and `errors` hold one `u32` per block.
#[kernel(cooperative)]
pub unsafe fn grid_sync_stress(slots: Out<u32>, errors: Out<u32>, rounds: u32, skip_first_sync: u32) {
    let grid = this_grid();
    let block = this_thread_block();
    let (b, n) = (grid.block_rank(), grid.num_blocks());
    let next = (b + 1) % n;
    let mut wrong = 0u32;
    let mut round = 0u32;
    while round < rounds {
        if block.thread_rank() == 0 {
            // SAFETY: one slot per block; only this block's thread 0 writes slot b.
            unsafe { slots.write(b, round.wrapping_mul(n as u32).wrapping_add(b as u32)) };
        }
        if skip_first_sync == 0 {
            grid.sync();
        }
        if block.thread_rank() == 0 {
            // SAFETY: one slot per block; block `next` wrote it before the barrier above.
            let seen = unsafe { slots.read(next) };
            wrong += (seen != round.wrapping_mul(n as u32).wrapping_add(next as u32)) as u32;
        }
        // No block writes its next value before every block has read this one.
        grid.sync();
        round += 1;
    }
    if block.thread_rank() == 0 {
        // SAFETY: one count per block, each block its own.
        unsafe { errors.write(b, wrong) };
    }
}

/// `barriers` cluster barriers back to back: what one `cluster.sync()` costs.
///
/// # Safety
/// None beyond a cluster launch.
#[kernel(cluster)]
pub unsafe fn cluster_sync_loop(barriers: u32) {
    let cluster = this_cluster();
    for _ in 0..barriers {
        cluster.sync();
    }
}
