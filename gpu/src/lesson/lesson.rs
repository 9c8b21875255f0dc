//! The lesson's kernels, in the order the lesson meets them. Each is the C++
//! line for line (`host/cpp/lesson.cu` holds the same kernels in CUDA C++),
//! but for its `for` loops, which are `while` loops here: written with
//! `step_by`, `reduce_cooperative_grid` took 40 registers instead of 22
//! (ptxas 12.9, sm_90), and registers set how many blocks fit on an SM, so
//! they would change the lesson's numbers (`docs/kernels.md`).
//!
//! Two things here are `#[kernel]`'s, not Rust's (`gpu::kernel` documents
//! them): `<const TILE: u32 = N>`, a const generic with a default, which the
//! attribute accepts on a kernel (the PTX holds the default; edit N to
//! change the tile); and `this_grid()`, which the import names as the grid
//! without `sync()` but which, in a `#[kernel(cooperative)]` body, is the one
//! with it.

use super::sum::{block_sum, one_f32_per_tile};
use crate::cg::{self, this_grid, this_thread_block, tiled_partition};
use crate::kernel;
use crate::mem::{In, Out};

/// Day 25, first launch: each block adds its grid-stride share of the input
/// and writes the block's total to `partials[blockIdx.x]`.
///
/// # Safety
/// `input` holds `n` floats; `partials` one per block.
#[kernel(shared_memory = one_f32_per_tile)]
pub unsafe fn reduce_blocks_to_partials<const TILE: u32 = 32>(input: In<f32>, partials: Out<f32>, n: usize) {
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
    if block.thread_rank() == 0 {
        // SAFETY: partials holds one float per block; blockIdx.x names this block.
        unsafe { partials.write(block.group_index().x as usize, total) };
    }
}

/// Day 25, second launch: one block adds the `m` partials into `out[0]`.
///
/// # Safety
/// `partials` holds `m` floats; `out` holds one.
#[kernel(shared_memory = one_f32_per_tile)]
pub unsafe fn reduce_partials_to_total<const TILE: u32 = 32>(partials: In<f32>, out: Out<f32>, m: usize) {
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);

    let mut w = 0.0f32;
    let mut i = block.thread_rank() as usize;
    while i < m {
        // SAFETY: i < m, and partials holds m floats.
        w += unsafe { partials.read(i) };
        i += block.num_threads() as usize;
    }
    let total = block_sum(&block, &tile, w);
    if block.thread_rank() == 0 {
        // SAFETY: out holds one float.
        unsafe { out.write(0, total) };
    }
}

/// The lesson's `reduceCooperativeGrid`: the first launch's work, `grid.sync()`
/// where the kernel boundary was, then block 0 does the second launch's work.
///
/// # Safety
/// `input` holds `n` floats, `partials` one per block, `out` one.
#[kernel(cooperative, shared_memory = one_f32_per_tile)]
pub unsafe fn reduce_cooperative_grid<const TILE: u32 = 32>(input: In<f32>, partials: Out<f32>, out: Out<f32>, n: usize) {
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
        // SAFETY: partials holds one float per block; blockIdx.x names this block.
        unsafe { partials.write(block.group_index().x as usize, total) };
    }

    // Every write above is visible to every thread below: the second half of
    // sync()'s contract, and what the kernel boundary gave the two-launch version.
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

/// The lesson's `probeCooperative`: what `this_grid()` reports, with no
/// barrier, so any launch of it at any size is safe. Writes `is_valid()` to
/// `out[0]` and `num_blocks()` to `out[1]`.
///
/// # Safety
/// `out` holds two `u32`.
#[kernel]
pub unsafe fn probe_cooperative(out: Out<u32>) {
    let grid = this_grid();
    let block = this_thread_block();
    if grid.block_rank() == 0 && block.thread_rank() == 0 {
        // SAFETY: out holds two u32, and only this thread writes them.
        unsafe {
            out.write(0, grid.is_valid() as u32);
            out.write(1, grid.num_blocks() as u32);
        }
    }
}

/// Threads `coalesced_demo` is launched with: two warps.
pub const COALESCED_DEMO_THREADS: u32 = 64;

/// What `cg::coalesced_threads()` returns inside a branch taken by lanes 2, 4
/// and 8 of warp 0 and lanes 0 to 15 of warp 1: each thread that takes it
/// writes its warp, its lane, the group's size and its rank in the group to
/// its own four slots, `out[4 * block.thread_rank()..]` (indexed by its rank
/// in the block, not in the group; a thread that skips the branch leaves its
/// four 0).
///
/// # Safety
/// `out` holds four `u32` per thread of the block.
#[kernel]
pub unsafe fn coalesced_demo(out: Out<u32>) {
    let block = this_thread_block();
    let warp = block.thread_rank() / 32;
    let lane = block.thread_rank() % 32;
    let takes_branch = (warp == 0 && matches!(lane, 2 | 4 | 8)) || (warp == 1 && lane < 16);
    if takes_branch {
        let active = cg::coalesced_threads();
        let record = [warp, lane, active.num_threads(), active.thread_rank()];
        for (k, value) in record.into_iter().enumerate() {
            // SAFETY: four u32 per thread, and each thread writes its own.
            unsafe { out.write(4 * block.thread_rank() as usize + k, value) };
        }
    }
}
