//! An inclusive prefix sum of `n` floats in one cooperative launch, written
//! with `cg-kernel` alone: `y[i] = x[0] + ... + x[i]`.
//!
//! Each block takes one contiguous chunk of the input and
//! 1. adds its chunk up (`cg::block_exclusive_scan`: a warp-tile scan per
//!    32 threads, then a scan of the tiles' totals) and writes the total to
//!    `block_totals[block]`,
//!    reading the chunk last step first, so that the L2 cache still holds
//!    the chunk's first steps when step 4 begins;
//! 2. `grid.sync()`: every block's total is now visible to every block;
//! 3. adds the totals of the blocks before it (its offset);
//! 4. reads its chunk again and scans it, step by step, carrying the offset
//!    and each step's total into the next, and writes `y`.
//!
//! Each thread takes eight contiguous floats per step (two 16-byte loads),
//! scans them itself, and the block scans the threads' totals
//! (`cg::block_exclusive_scan`, CUB's `BlockScan::ExclusiveSum` with its
//! block total).
//!
//! It reads the input twice and writes the output once: about 1.5 times the
//! bytes of a single-pass scan (CUB's `DeviceScan::InclusiveSum`, which
//! passes each tile's prefix from block to block instead of waiting at a
//! grid barrier).
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel))]
#![deny(unsafe_op_in_unsafe_fn, missing_docs)]

use cg_kernel::cg::{Plus, block_exclusive_scan, block_scratch_bytes, this_grid, this_thread_block, tiled_partition};
use cg_kernel::kernel;
use cg_kernel::mem::{In, Out, dynamic_shared};

cg_kernel::ptx!();

/// Floats each thread takes per step: eight contiguous floats, as two
/// 16-byte loads issued together. Measured on the H200 against sixteen
/// (77 registers, 3 blocks per SM; 64 with launch bounds, and spills): eight
/// (61 registers, 4 blocks per SM) was the fastest
/// (`records/2026-12-04-h200-toolkit/`).
pub const ITEMS: usize = 8;

/// `x[i..i + ITEMS]`, with zeros past `n`.
///
/// # Safety
/// `x` holds `n` floats from a 16-byte-aligned start, and `i` is a multiple
/// of 4 (its whole steps are read four floats, 16 bytes, at a time).
#[inline(always)]
unsafe fn load(x: In<f32>, i: usize, n: usize) -> [f32; ITEMS] {
    let mut v = [0.0f32; ITEMS];
    if i + ITEMS <= n {
        for q in 0..ITEMS / 4 {
            // SAFETY: i + ITEMS <= n, and i + 4q is a multiple of 4 from an
            // aligned start (the caller's contract).
            let four = unsafe { x.read4(i + 4 * q) };
            v[4 * q..4 * q + 4].copy_from_slice(&four);
        }
    } else {
        for (k, v) in v.iter_mut().enumerate() {
            if i + k < n {
                // SAFETY: below n.
                *v = unsafe { x.read(i + k) };
            }
        }
    }
    v
}

/// Writes `v` to `y[i..i + ITEMS]`, leaving out what is past `n`.
///
/// # Safety
/// `y` holds `n` floats from a 16-byte-aligned start, `i` is a multiple of
/// 4, and no other thread touches `y[i..i + ITEMS]` until a barrier.
#[inline(always)]
unsafe fn store(y: Out<f32>, i: usize, n: usize, v: [f32; ITEMS]) {
    if i + ITEMS <= n {
        for q in 0..ITEMS / 4 {
            // SAFETY: in bounds and 16-byte aligned as in `load`; the caller's contract.
            unsafe { y.write4(i + 4 * q, [v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]]) };
        }
    } else {
        for (k, &v) in v.iter().enumerate() {
            if i + k < n {
                // SAFETY: below n; the caller's contract.
                unsafe { y.write(i + k, v) };
            }
        }
    }
}

/// The first element of block `block`'s chunk and the element after its
/// last: whole steps of `span` floats, as evenly as the grid allows.
#[inline(always)]
pub fn chunk(block: usize, blocks: usize, span: usize, n: usize) -> (usize, usize) {
    let per_block = n.div_ceil(span).div_ceil(blocks) * span;
    ((block * per_block).min(n), ((block + 1) * per_block).min(n))
}

/// `y[i] = x[0] + ... + x[i]` for every `i < n`, in one cooperative launch
/// (see the crate's documentation for the steps).
///
/// # Safety
/// `x` and `y` hold `n` floats, and each starts 16-byte aligned (the scan
/// reads `x` and writes `y` four floats, 16 bytes, at a time); `block_totals`
/// holds one float per block of the grid.
#[kernel(cooperative, shared_memory = block_scratch_bytes::<f32>)]
pub unsafe fn inclusive_scan<const TILE: u32 = 32>(x: In<f32>, y: Out<f32>, block_totals: Out<f32>, n: usize) {
    let grid = this_grid();
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);
    // The block scans' scratch: one f32 per tile (block_scratch_bytes), for them alone.
    let scratch = dynamic_shared::<f32>();
    let t = block.thread_rank() as usize;
    let threads = block.num_threads() as usize;
    let b = block.group_index().x as usize;
    let span = threads * ITEMS;
    let (first, end) = chunk(b, grid.num_blocks(), span, n);

    // The chunk's sum, its steps taken last to first: the second pass reads
    // the chunk first to last, so it starts on what this pass read last,
    // which the L2 cache still holds.
    let mut mine = 0.0f32;
    let mut steps = (end - first).div_ceil(span);
    while steps > 0 {
        steps -= 1;
        // SAFETY: x holds n >= end floats from an aligned start (the
        // kernel's contract); first, span and t * ITEMS are multiples of 4.
        let v = unsafe { load(x, first + steps * span + t * ITEMS, end) };
        mine += v.iter().sum::<f32>();
    }
    // SAFETY (each block scan): every thread of the block makes the call,
    // outside any branch, and in the loops below the same trips (the chunk's
    // bounds are the block's); the launch gives the scratch, which nothing
    // else uses.
    let (_, chunk_total) = unsafe { block_exclusive_scan(&block, &tile, mine, Plus, scratch) };
    if t == 0 {
        // SAFETY: one slot per block, written by its thread 0 alone.
        unsafe { block_totals.write(b, chunk_total) };
    }
    grid.sync();

    let mut before = 0.0f32;
    let mut k = t;
    while k < b {
        // SAFETY: k < b < blocks, written before grid.sync().
        before += unsafe { block_totals.read(k) };
        k += threads;
    }
    // SAFETY: as above.
    let (_, offset) = unsafe { block_exclusive_scan(&block, &tile, before, Plus, scratch) };

    let mut carry = offset;
    let mut base = first;
    while base < end {
        let i = base + t * ITEMS;
        // SAFETY: as in the first pass.
        let mut own = unsafe { load(x, i, end) };
        for k in 1..ITEMS {
            own[k] += own[k - 1];
        }
        // SAFETY: as above.
        let (below, step_total) = unsafe { block_exclusive_scan(&block, &tile, own[ITEMS - 1], Plus, scratch) };
        let start = carry + below;
        // SAFETY: y holds n >= end floats from an aligned start (the
        // kernel's contract), i is a multiple of 4, and the blocks' chunks
        // and the threads' ITEMS are disjoint.
        unsafe { store(y, i, end, own.map(|s| start + s)) };
        carry += step_total;
        base += span;
    }
}
