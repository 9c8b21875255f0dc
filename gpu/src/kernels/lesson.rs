//! The lesson's kernels, one per step, in the order the lesson meets them.

use super::sum::{block_partial, sum_of_partials};
use crate::cg::{self, this_grid, this_thread_block, tiled_partition};

kernel! {
    /// Day 25, first launch: grid-stride sum, block reduction, one partial per block.
    ///
    /// # Safety
    /// `input` holds `n` floats; `partials` holds one float per block.
    pub unsafe fn reduce_blocks_to_partials(input: *const f32, partials: *mut f32, n: usize) {
        let grid = this_grid();
        let block = this_thread_block();
        let tile = tiled_partition::<32>(&block);

        // SAFETY: the caller's contract.
        unsafe { block_partial(&grid, &block, &tile, input, n, partials) };
    }
}

kernel! {
    /// Day 25, second launch: one block sums the `m` partials into `total[0]`.
    ///
    /// # Safety
    /// `partials` holds `m` floats; `total` holds one.
    pub unsafe fn reduce_partials_to_total(partials: *const f32, total: *mut f32, m: usize) {
        let block = this_thread_block();
        let tile = tiled_partition::<32>(&block);

        // SAFETY: `partials` holds m floats, written by the first launch.
        let sum = unsafe { sum_of_partials(&block, &tile, partials, m) };
        if block.thread_rank() == 0 {
            // SAFETY: `total` holds one float.
            unsafe { *total = sum };
        }
    }
}

kernel! {
    /// The lesson's `reduceCooperativeGrid`: the first launch's work, `grid.sync()`
    /// where the kernel boundary was, then block 0 does the second launch's work.
    ///
    /// # Safety
    /// `input` holds `n` floats, `partials` one per block, `total` one; launched
    /// cooperatively (the host's `CooperativeKernel` is the only way it is launched).
    pub unsafe fn reduce_cooperative_grid(input: *const f32, partials: *mut f32, total: *mut f32, n: usize) {
        let grid = this_grid();
        let block = this_thread_block();
        let tile = tiled_partition::<32>(&block);

        // The first launch's work: this block's grid-stride share into partials[block].
        // SAFETY: the caller's contract.
        unsafe { block_partial(&grid, &block, &tile, input, n, partials) };

        // Every write above is visible to every thread below: this is what replaces
        // the kernel boundary of the two-launch version.
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
}

kernel! {
    /// The lesson's `probeCooperative`: what `this_grid()` reports, with no barrier,
    /// so any launch of it is safe.
    ///
    /// # Safety
    /// `out` holds two `u32`.
    pub unsafe fn probe_cooperative(out: *mut u32) {
        let grid = this_grid();
        let block = this_thread_block();
        if grid.block_rank() == 0 && block.thread_rank() == 0 {
            // SAFETY: `out` holds two u32.
            unsafe {
                *out = grid.is_valid() as u32;
                *out.add(1) = grid.num_blocks() as u32;
            }
        }
    }
}

kernel! {
    /// What `cg::coalesced_threads()` returns inside a branch taken by lanes 2, 4
    /// and 8 of warp 0 and lanes 0 to 15 of warp 1.
    ///
    /// # Safety
    /// `out` holds four `u32` per thread of the block.
    pub unsafe fn coalesced_demo(out: *mut u32) {
        let block = this_thread_block();
        let warp = block.thread_rank() / 32;
        let lane = block.thread_rank() % 32;
        let takes_branch = (warp == 0 && matches!(lane, 2 | 4 | 8)) || (warp == 1 && lane < 16);
        if takes_branch {
            let active = cg::coalesced_threads();
            let record = [warp, lane, active.num_threads(), active.thread_rank()];
            for (k, value) in record.into_iter().enumerate() {
                // SAFETY: four u32 per thread.
                unsafe { *out.add(4 * block.thread_rank() as usize + k) = value };
            }
        }
    }
}
