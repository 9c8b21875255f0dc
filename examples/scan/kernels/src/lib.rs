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
//! grid barrier). [`inclusive_scan_once`] reads it once: each block keeps
//! what step 1 read in shared memory across the barrier, and step 4 scans
//! it from there, in rounds where the input is longer than the grid holds.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel))]
#![deny(unsafe_op_in_unsafe_fn, missing_docs)]

use cg_kernel::cg::{Plus, ThreadBlock, ThreadBlockTile, block_exclusive_scan, block_scratch_bytes, this_grid, this_thread_block, tiled_partition};
use cg_kernel::kernel;
use cg_kernel::mem::{DynamicShared, In, Out, dynamic_shared};

cg_kernel::ptx!();

/// The definition both grid-barrier scans have ([`INCLUSIVE_SCAN`],
/// [`INCLUSIVE_SCAN_ONCE`]): the same parameters, launched cooperatively.
#[cfg(not(target_arch = "nvptx64"))]
pub type GridScanDef = cg_kernel::kernels::KernelDef<(In<f32>, Out<f32>, Out<f32>, usize), cg_kernel::kernels::GridSync>;

/// Floats each thread takes per step: eight contiguous floats, as two
/// 16-byte loads issued together. Measured on the H200 against sixteen
/// (77 registers, 3 blocks per SM; 64 with launch bounds, and spills): eight
/// (61 registers, 4 blocks per SM) was the fastest
/// (`records/2026-12-04-h200-toolkit/`).
pub const ITEMS: usize = 8;

/// `x[i..i + K]`, with zeros past `n` (`K` a multiple of 4).
///
/// # Safety
/// `x` holds `n` floats from a 16-byte-aligned start, and `i` is a multiple
/// of 4 (its whole steps are read four floats, 16 bytes, at a time).
#[inline(always)]
unsafe fn load<const K: usize>(x: In<f32>, i: usize, n: usize) -> [f32; K] {
    let mut v = [0.0f32; K];
    if i + K <= n {
        for q in 0..K / 4 {
            // SAFETY: i + K <= n, and i + 4q is a multiple of 4 from an
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

/// Writes `v` to `y[i..i + K]`, leaving out what is past `n` (`K` a multiple of 4).
///
/// # Safety
/// `y` holds `n` floats from a 16-byte-aligned start, `i` is a multiple of
/// 4, and no other thread touches `y[i..i + ITEMS]` until a barrier.
#[inline(always)]
unsafe fn store<const K: usize>(y: Out<f32>, i: usize, n: usize, v: [f32; K]) {
    if i + K <= n {
        for q in 0..K / 4 {
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

/// One step of the second pass: this thread's `ITEMS` floats `own`
/// scanned in place, the threads' totals scanned across the block, and
/// each result offset by `carry` and the threads' before it; returns the
/// step's results and its total.
///
/// # Safety
/// Every thread of the block calls it, outside any branch, the same number
/// of times; `scratch` is the block scans' alone.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
unsafe fn scan_step<const TILE: u32>(
    block: &ThreadBlock,
    tile: &ThreadBlockTile<TILE>,
    scratch: DynamicShared<f32>,
    mut own: [f32; ITEMS],
    carry: f32,
) -> ([f32; ITEMS], f32) {
    for k in 1..ITEMS {
        own[k] += own[k - 1];
    }
    // SAFETY: the caller's contract.
    let (below, step_total) = unsafe { block_exclusive_scan(block, tile, own[ITEMS - 1], Plus, scratch) };
    let start = carry + below;
    (own.map(|s| start + s), step_total)
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
        let v = unsafe { load::<ITEMS>(x, first + steps * span + t * ITEMS, end) };
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
        let own = unsafe { load::<ITEMS>(x, i, end) };
        // SAFETY: as above.
        let (out, step_total) = unsafe { scan_step(&block, &tile, scratch, own, carry) };
        // SAFETY: y holds n >= end floats from an aligned start (the
        // kernel's contract), i is a multiple of 4, and the blocks' chunks
        // and the threads' ITEMS are disjoint.
        unsafe { store(y, i, end, out) };
        carry += step_total;
        base += span;
    }
}

/// Steps of its chunk each block keeps in shared memory in
/// [`inclusive_scan_once`]: 48 floats a thread, 48 KiB for a block of 256,
/// which leaves the 4 blocks per SM the registers allow on an H200 (228 KiB
/// of shared memory per SM).
pub const STEPS_ON_CHIP: usize = 6;

/// Dynamic shared memory of [`inclusive_scan_once`]: the block scans'
/// scratch, then [`STEPS_ON_CHIP`] steps of the block's chunk.
pub const fn on_chip_bytes(threads_per_block: u32, tile: u32) -> u32 {
    block_scratch_bytes::<f32>(threads_per_block, tile).saturating_add(threads_per_block.saturating_mul((ITEMS * STEPS_ON_CHIP * 4) as u32))
}

/// The floats one round of [`inclusive_scan_once`] takes on a grid of
/// `blocks` blocks of `threads`: every block's [`STEPS_ON_CHIP`] steps.
pub const fn round_len(blocks: usize, threads: usize) -> usize {
    blocks * threads * ITEMS * STEPS_ON_CHIP
}

/// The same scan reading its input once: each block keeps what it read in
/// shared memory across the `grid.sync()`, and scans it from there. Input
/// longer than the grid holds on chip ([`round_len`]) is taken in rounds,
/// each a whole grid-wide scan of its part, read once, its total carried
/// into the next; two rounds never share a slot of `block_totals`.
///
/// # Safety
/// As [`inclusive_scan`], except that `block_totals` holds two floats per
/// block of the grid; launched with [`on_chip_bytes`] of shared memory.
#[kernel(cooperative, shared_memory = on_chip_bytes)]
pub unsafe fn inclusive_scan_once<const TILE: u32 = 32>(x: In<f32>, y: Out<f32>, block_totals: Out<f32>, n: usize) {
    let grid = this_grid();
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);
    let t = block.thread_rank() as usize;
    let threads = block.num_threads() as usize;
    let b = block.group_index().x as usize;
    let blocks = grid.num_blocks();
    let span = threads * ITEMS;
    // The block scans' scratch first, then the kept steps: element k of
    // step s of thread t at (s * ITEMS + k) * threads + t, so that a warp's
    // 32 accesses fall in 32 banks.
    let scratch = dynamic_shared::<f32>();
    let kept = scratch.after::<f32>(block_scratch_bytes::<f32>(threads as u32, TILE) as usize / 4);
    let at = |s: usize, k: usize| (s * ITEMS + k) * threads + t;

    // SAFETY (each block scan): every thread of the block makes the call,
    // outside any branch, and in the loops below the same trips (the
    // rounds are the grid's, the steps the block's); the launch gives the
    // scratch, which nothing else uses. (Each kept access): element at(s, k)
    // is this thread's alone, below STEPS_ON_CHIP * ITEMS * threads, inside
    // on_chip_bytes.
    let mut earlier = 0.0f32;
    let (mut start, mut round) = (0usize, 0usize);
    while start < n {
        let len = (n - start).min(round_len(blocks, threads));
        let (first, end) = chunk(b, blocks, span, len);
        let (first, end) = (start + first, start + end);
        let steps = (end - first).div_ceil(span);

        let mut mine = 0.0f32;
        let mut s = 0;
        while s < steps {
            // SAFETY: x holds n >= end floats from an aligned start (the
            // kernel's contract); first, span and t * ITEMS are multiples of 4.
            let v = unsafe { load::<ITEMS>(x, first + s * span + t * ITEMS, end) };
            for (k, &v) in v.iter().enumerate() {
                // SAFETY: see above.
                unsafe { kept.write(at(s, k), v) };
            }
            mine += v.iter().sum::<f32>();
            s += 1;
        }
        // SAFETY: as above.
        let (_, chunk_total) = unsafe { block_exclusive_scan(&block, &tile, mine, Plus, scratch) };
        // Rounds alternate halves: a block writes round r + 2's totals only
        // after the grid.sync() of round r + 1, which every block reaches
        // after reading round r's.
        let half = (round % 2) * blocks;
        if t == 0 {
            // SAFETY: two slots per block (the contract), this one written by its thread 0 alone.
            unsafe { block_totals.write(half + b, chunk_total) };
        }
        grid.sync();

        let (mut before, mut all) = (0.0f32, 0.0f32);
        let mut k = t;
        while k < blocks {
            // SAFETY: written before grid.sync().
            let total = unsafe { block_totals.read(half + k) };
            if k < b {
                before += total;
            }
            all += total;
            k += threads;
        }
        // SAFETY: as above.
        let (_, offset) = unsafe { block_exclusive_scan(&block, &tile, before, Plus, scratch) };
        // Every block adds the same totals in the same order: one round total.
        // SAFETY: as above.
        let (_, round_total) = unsafe { block_exclusive_scan(&block, &tile, all, Plus, scratch) };

        let mut carry = earlier + offset;
        s = 0;
        while s < steps {
            let mut own = [0.0f32; ITEMS];
            for (k, own) in own.iter_mut().enumerate() {
                // SAFETY: see above; written by this thread in this round.
                *own = unsafe { kept.read(at(s, k)) };
            }
            // SAFETY: as above.
            let (out, step_total) = unsafe { scan_step(&block, &tile, scratch, own, carry) };
            // SAFETY: as in inclusive_scan.
            unsafe { store(y, first + s * span + t * ITEMS, end, out) };
            carry += step_total;
            s += 1;
        }
        earlier += round_total;
        start += len;
        round += 1;
    }
}
