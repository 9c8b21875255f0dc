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
use cg_kernel::mem::{DynamicShared, In, Out, Scope, dynamic_shared};

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

/// A tile's status word in [`inclusive_scan_lookback`]: the launch's epoch
/// in the top 30 bits, what the low 32 hold in the next two
/// ([`AGGREGATE`] or [`PREFIX`]), and the bits of an `f32`. A word of
/// another epoch is an earlier launch's: not yet written in this one.
const EPOCH_SHIFT: u32 = 34;
/// Status: the low half is the tile's own total.
const AGGREGATE: u64 = 1 << 32;
/// Status: the low half is the sum of every element up to the tile's last.
const PREFIX: u64 = 2 << 32;
/// Epochs [`inclusive_scan_lookback`] tells apart: 30 bits, 0 never used
/// (a zeroed status array is no epoch's).
pub const EPOCHS: u32 = 1 << 30;

/// Tiles before its own that a look-back reads at once: one per lane of warp 0.
const WINDOW: usize = 32;

/// Floats each thread of [`inclusive_scan_lookback`] takes: four 16-byte loads.
pub const LOOKBACK_ITEMS: usize = 16;

/// Floats one tile of [`inclusive_scan_lookback`] takes with `threads` threads.
pub const fn tile_len(threads: usize) -> usize {
    threads * LOOKBACK_ITEMS
}

/// Dynamic shared memory of [`inclusive_scan_lookback`]: the block scans'
/// scratch, then two words (the tile's number, and the prefix warp 0 found).
pub const fn lookback_bytes(threads_per_block: u32, tile: u32) -> u32 {
    block_scratch_bytes::<f32>(threads_per_block, tile).saturating_add(8)
}

/// The same scan in one pass, as CUB's `DeviceScan` does it (decoupled
/// look-back, Merrill and Garland 2016): no grid barrier and no cooperative
/// launch. Each block takes the next tile by an atomic ticket, so every
/// tile before it has a block that started; it scans the tile, publishes
/// its total (an [`AGGREGATE`] status), and its warp 0 reads the statuses
/// of the 32 tiles before it at once, adding totals back until it meets a
/// [`PREFIX`], waiting where a tile has not published; then it publishes
/// its own prefix and writes the tile. The input is read once and the
/// output written once: CUB's 2n floats.
///
/// With `by_ticket` 0 the tile is the block's index instead, as CUB's
/// `DeviceScan` takes it: no atomic and no barrier before the loads, on the
/// strength of blocks starting in index order, which GPUs do but CUDA does
/// not promise (a block waiting on one that never started would hang).
///
/// The status array needs no clearing between launches: each launch passes
/// a new `epoch` (1 to [`EPOCHS`] - 1) and a word of another epoch counts as
/// unwritten. The block of the last tile sets the ticket back to 0.
///
/// # Safety
/// `x` and `y` hold `n` floats, each 16-byte aligned; `status` holds one
/// word per tile (`n.div_ceil(tile_len(threads))`), none of this epoch;
/// `ticket[0]` is 0; the grid has exactly one block per tile; `epoch` is
/// below [`EPOCHS`] and not 0; launched with [`lookback_bytes`] of shared
/// memory. No other launch uses `status` or `ticket` meanwhile.
#[kernel(shared_memory = lookback_bytes)]
pub unsafe fn inclusive_scan_lookback<const TILE: u32 = 32>(x: In<f32>, y: Out<f32>, status: Out<u64>, ticket: Out<u32>, epoch: u32, by_ticket: u32, n: usize) {
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);
    let scratch = dynamic_shared::<f32>();
    let words = scratch.after::<u32>(block_scratch_bytes::<f32>(block.num_threads(), TILE) as usize / 4);
    let t = block.thread_rank() as usize;
    let threads = block.num_threads() as usize;
    let tiles = n.div_ceil(tile_len(threads));
    let stamp = (epoch as u64) << EPOCH_SHIFT;

    // SAFETY (every shared access): words 0 and 1 after the scratch, inside
    // lookback_bytes; each written by one thread between two barriers.
    // (The ticket and the statuses): touched only atomically in this launch.
    let k = if by_ticket != 0 {
        if t == 0 {
            let k = unsafe { ticket.atomic_add(0, 1) };
            if k as usize + 1 == tiles {
                // Every ticket of this launch is out: the next launch starts at 0.
                unsafe { ticket.atomic_store(0, 0, Scope::Device) };
            }
            unsafe { words.write(0, k) };
        }
        block.sync();
        (unsafe { words.read(0) }) as usize
    } else {
        // CUB's way: the block's own index, trusting the GPU to start blocks
        // in index order (it does; CUDA does not promise it).
        block.group_index().x as usize
    };
    let first = k * tile_len(threads);
    let i = first + t * LOOKBACK_ITEMS;
    // SAFETY: x holds n floats from an aligned start; first and t * LOOKBACK_ITEMS are multiples of 4.
    let mut scanned = unsafe { load::<LOOKBACK_ITEMS>(x, i, n) };
    for j in 1..LOOKBACK_ITEMS {
        scanned[j] += scanned[j - 1];
    }
    // SAFETY: every thread of the block, outside any branch; the scratch is the scan's alone.
    let (below, total) = unsafe { block_exclusive_scan(&block, &tile, scanned[LOOKBACK_ITEMS - 1], Plus, scratch) };

    if t == 0 {
        let word = if k == 0 { PREFIX } else { AGGREGATE };
        unsafe { status.atomic_store(k, stamp | word | total.to_bits() as u64, Scope::Device) };
    }
    if k > 0 && t < WINDOW {
        // Warp 0 looks back, 32 tiles at a time, lane l reading tile k - 1 - l.
        let lanes = tiled_partition::<32>(&block);
        let lane = t;
        let mut prefix = 0.0f32;
        let mut end = k; // the window is the tiles end - 32 .. end
        loop {
            let mine = end.checked_sub(lane + 1);
            let word = loop {
                let w = match mine {
                    // SAFETY: tile j < k has a status word.
                    Some(j) => unsafe { status.atomic_load(j, Scope::Device) },
                    None => stamp | PREFIX,
                };
                let ready = w >> EPOCH_SHIFT == epoch as u64 && w & (PREFIX | AGGREGATE) != 0;
                if lanes.all(ready) {
                    break w;
                }
            };
            let value = if mine.is_some() { f32::from_bits(word as u32) } else { 0.0 };
            // The nearest prefix in the window: lanes past it add nothing.
            let prefixes = lanes.ballot(word & PREFIX != 0 && mine.is_some());
            let stop = if prefixes == 0 { WINDOW as u32 } else { prefixes.trailing_zeros() };
            let kept = if (lane as u32) <= stop && mine.is_some() { value } else { 0.0 };
            prefix += lanes.reduce(kept, Plus);
            if prefixes != 0 || end <= WINDOW {
                break;
            }
            end -= WINDOW;
        }
        if lane == 0 {
            unsafe {
                status.atomic_store(k, stamp | PREFIX | (prefix + total).to_bits() as u64, Scope::Device);
                words.write(1, prefix.to_bits());
            }
        }
    }
    block.sync();
    let before = if k == 0 { 0.0 } else { f32::from_bits(unsafe { words.read(1) }) };
    let start = before + below;
    // SAFETY: y holds n floats from an aligned start; tiles and threads' ITEMS are disjoint.
    unsafe { store(y, i, n, scanned.map(|s| start + s)) };
}
