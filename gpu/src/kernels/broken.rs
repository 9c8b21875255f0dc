//! A kernel whose grid barrier can never complete, on purpose: for the tests
//! of what the host does with a kernel that never finishes (`tests/stuck.rs`)
//! and of the diagnosing barrier (`tests/barrier_timeout.rs`).

use crate::cg::{this_grid, this_thread_block};
use crate::kernel;
use crate::mem::Out;

/// Every block but the last waits at `grid.sync()`; the last one returns.
///
/// # Safety
/// `out` holds one `u32` per block.
#[kernel(cooperative)]
pub unsafe fn grid_sync_missing_block(out: Out<u32>) {
    let grid = this_grid();
    if grid.block_rank() == grid.num_blocks() - 1 {
        return;
    }
    grid.sync();
    if this_thread_block().thread_rank() == 0 {
        // SAFETY: one u32 per block.
        unsafe { out.write(grid.block_rank(), 1) };
    }
}

/// A grid barrier reached around the compile-time guard: declared without
/// `cooperative`, it takes the grid that can synchronize by the hidden path
/// `#[kernel(cooperative)]` uses. The two checks behind the guard catch it:
/// the host's loader (its PTX calls `grid.sync()`) and the emulator.
///
/// # Safety
/// `out` holds one `u32` per block.
#[kernel]
pub unsafe fn undeclared_grid_sync(out: Out<u32>) {
    let grid = crate::cg::cooperative_kernel::this_grid();
    grid.sync();
    if this_thread_block().thread_rank() == 0 {
        // SAFETY: one u32 per block.
        unsafe { out.write(grid.block_rank(), 1) };
    }
}
