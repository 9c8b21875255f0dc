//! Loops of one grid collective each, and nothing else: `rounds` calls
//! back to back, each depending on the last, so that the time of a launch
//! of `rounds` calls less that of a launch of none, over `rounds`, is what
//! one call costs. `sync_loop` is the barrier they are measured against.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel))]
#![deny(unsafe_op_in_unsafe_fn, missing_docs)]

use cg_kernel::cg::{Plus, this_grid};
use cg_kernel::kernel;
use cg_kernel::mem::Out;

cg_kernel::ptx!();

/// `rounds` grid barriers.
///
/// # Safety
/// `out` holds one `u32`.
#[kernel(cooperative)]
pub unsafe fn sync_loop(rounds: u32, out: Out<u32>) {
    let grid = this_grid();
    let mut k = 0;
    while k < rounds {
        grid.sync();
        k += 1;
    }
    if grid.thread_rank() == 0 {
        // SAFETY: one value.
        unsafe { out.write(0, k) };
    }
}

/// `rounds` reductions of one `f32` per thread, each of the last's result.
///
/// # Safety
/// `out` holds one `u32`.
#[kernel(cooperative)]
pub unsafe fn reduce_loop(rounds: u32, out: Out<u32>) {
    let grid = this_grid();
    let mut v = grid.thread_rank() as f32 * 1e-6;
    let mut k = 0;
    while k < rounds {
        v = grid.reduce(v, Plus) * 1e-9;
        k += 1;
    }
    if grid.thread_rank() == 0 {
        // SAFETY: one value.
        unsafe { out.write(0, v.to_bits()) };
    }
}

/// `rounds` reductions of five `f64` per thread in one call, each of the
/// last's result: the on-chip conjugate-gradient iteration's one grid-wide
/// step (its five sums, one barrier), with no matrix and no vector work, so
/// its floor.
///
/// # Safety
/// `out` holds one `u32`.
#[kernel(cooperative)]
pub unsafe fn reduce5_loop(rounds: u32, out: Out<u32>) {
    let grid = this_grid();
    let mut v = [grid.thread_rank() as f64 * 1e-6; 5];
    let mut k = 0;
    while k < rounds {
        v = grid.reduce_array(v, Plus).map(|s| s * 1e-9);
        k += 1;
    }
    if grid.thread_rank() == 0 {
        // SAFETY: one value.
        unsafe { out.write(0, v[4].to_bits() as u32) };
    }
}

/// `rounds` exclusive scans of one `u32` per thread, each of the last's result.
///
/// # Safety
/// `out` holds one `u32`.
#[kernel(cooperative)]
pub unsafe fn scan_loop(rounds: u32, out: Out<u32>) {
    let grid = this_grid();
    let mut v = grid.thread_rank() as u32 & 7;
    let mut k = 0;
    while k < rounds {
        v = grid.exclusive_scan(v, Plus) & 7;
        k += 1;
    }
    if grid.thread_rank() == 0 {
        // SAFETY: one value.
        unsafe { out.write(0, v) };
    }
}

/// `rounds` compactions of one flag per thread, each of the last's result.
///
/// # Safety
/// `out` holds one `u32`.
#[kernel(cooperative)]
pub unsafe fn select_loop(rounds: u32, out: Out<u32>) {
    let grid = this_grid();
    let mut keep = grid.thread_rank() % 3 == 0;
    let mut k = 0;
    while k < rounds {
        let s = grid.select(keep);
        keep = (s.index.unwrap_or(0) + s.count) % 2 == 0;
        k += 1;
    }
    if grid.thread_rank() == 0 {
        // SAFETY: one value.
        unsafe { out.write(0, keep as u32) };
    }
}
