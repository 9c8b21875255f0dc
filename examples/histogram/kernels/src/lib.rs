//! A 256-bin histogram of bytes in one cooperative launch, written with
//! `cg-kernel` alone: `bins[b]` = how many bytes of the input equal `b`,
//! counted with shared-memory atomics (CUDA's histogram with
//! `atomicAdd(&smem[byte], 1)`).
//!
//! Block 0 clears `bins`, and `grid.sync()` orders that before any block
//! adds to it, so the launch needs no memset before it. Each block counts
//! into 256 bins of shared memory per warp (a warp's lanes then meet only
//! each other at a bin, not the block's other warps); each thread reads the
//! input four bytes at a time, by a grid-stride loop over words, and keeps a
//! run of equal bytes in a register, adding the run with one atomic when the
//! byte changes (constant input, the worst case for atomics, then costs one
//! per thread). Then each block adds its warps' bins up and each non-zero
//! total to `bins` with one global atomic.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel))]
#![deny(unsafe_op_in_unsafe_fn, missing_docs)]

use cg_kernel::cg::{this_grid, this_thread_block};
use cg_kernel::kernel;
use cg_kernel::mem::{DynamicShared, In, Out, dynamic_shared};

cg_kernel::ptx!();

/// Bins: one per byte value.
pub const BINS: usize = 256;

/// Bytes of shared memory a block of `threads_per_block` counts into: 256
/// `u32` bins per warp.
pub const fn shared_bins_bytes(threads_per_block: u32, _tile: u32) -> u32 {
    threads_per_block.div_ceil(32) * BINS as u32 * 4
}

/// Adds a run of `len` bytes equal to `byte` to the warp's bins.
///
/// # Safety
/// `bins` holds this warp's 256 bins from `base`, touched only by atomics until the next barrier.
#[inline(always)]
unsafe fn add_run(bins: DynamicShared<u32>, base: usize, byte: u32, len: u32) {
    if len > 0 {
        // SAFETY: the caller's contract; a byte is below 256.
        unsafe { bins.atomic_add(base + byte as usize, len) };
    }
}

/// `bins[b]` = the number of the `n` bytes in `words` (four to a word, the
/// first in the low byte, as a little-endian host lays them out) that equal `b`.
///
/// # Safety
/// `words` holds `n` bytes (`n.div_ceil(4)` words); `bins` holds [`BINS`] counts.
#[kernel(cooperative, shared_memory = shared_bins_bytes)]
pub unsafe fn histogram<const TILE: u32 = 32>(words: In<u32>, bins: Out<u32>, n: usize) {
    let grid = this_grid();
    let block = this_thread_block();
    let t = block.thread_rank() as usize;
    let threads = block.num_threads() as usize;
    let counts = dynamic_shared::<u32>();
    let warp_bins = (t / 32) * BINS;
    if grid.block_rank() == 0 && t < BINS {
        // SAFETY: BINS counts; one thread per bin.
        unsafe { bins.write(t, 0) };
    }
    let mut k = t;
    while k < threads.div_ceil(32) * BINS {
        // SAFETY: the launch gives shared_bins_bytes; each thread clears its own slots.
        unsafe { counts.write(k, 0) };
        k += threads;
    }
    // The block's bins are clear before any thread counts into them, and
    // block 0's clearing of `bins` is done before any block adds to it.
    grid.sync();

    let (mut run_byte, mut run_len) = (0u32, 0u32);
    let mut w = grid.thread_rank();
    while w < n.div_ceil(4) {
        // SAFETY: w < n.div_ceil(4), the words `words` holds.
        let word = unsafe { words.read(w) };
        let bytes = (n - 4 * w).min(4);
        for k in 0..bytes {
            let byte = (word >> (8 * k)) & 0xff;
            if byte == run_byte {
                run_len += 1;
            } else {
                // SAFETY: this warp's bins; only atomics touch them until the barrier.
                unsafe { add_run(counts, warp_bins, run_byte, run_len) };
                (run_byte, run_len) = (byte, 1);
            }
        }
        w += grid.num_threads();
    }
    // SAFETY: as above.
    unsafe { add_run(counts, warp_bins, run_byte, run_len) };
    // Every count of this block is in before any thread reads one.
    block.sync();
    let mut b = t;
    while b < BINS {
        let mut total = 0u32;
        for warp in 0..threads.div_ceil(32) {
            // SAFETY: bin b of each warp's bins, written before the barrier.
            total += unsafe { counts.read(warp * BINS + b) };
        }
        if total > 0 {
            // SAFETY: bin b; every block adds to bins[b] only atomically, after grid.sync().
            unsafe { bins.atomic_add(b, total) };
        }
        b += threads;
    }
}
