//! A stream compaction in one cooperative launch, written with `cg-kernel`
//! alone: the elements of `x` above a threshold, in their order, packed
//! into the front of `y`, and how many there are.
//!
//! Each block takes one contiguous chunk of the input and
//! 1. counts its chunk's elements above the threshold (each thread over
//!    eight floats per step, then `block_reduce`), reading the chunk last
//!    step first, so that the L2 cache still holds its first steps at 4,
//!    and writes the count to `counts[block]`;
//! 2. `grid.sync()`: every block's count is now visible to every block;
//! 3. adds the counts of the blocks before it: where its elements go;
//! 4. reads its chunk again, step by step: each thread flags its eight
//!    floats, `block_exclusive_scan` of the threads' counts says where each
//!    thread's go, and each writes them; the step's total moves the place on.
//!
//! It reads the input twice, where a single-pass compaction (CUB's
//! `DeviceSelect::If`, which passes each tile's count from block to block
//! instead of waiting at a grid barrier) reads it once.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel))]
#![deny(unsafe_op_in_unsafe_fn, missing_docs)]

use cg_kernel::cg::{Plus, block_exclusive_scan, block_reduce, block_scratch_bytes, this_grid, this_thread_block, tiled_partition};
use cg_kernel::kernel;
use cg_kernel::mem::{In, Out, dynamic_shared};

cg_kernel::ptx!();

/// Floats each thread takes per step: two 16-byte loads.
pub const ITEMS: usize = 8;

/// `x[i..i + ITEMS]`, with zeros past `n`.
///
/// # Safety
/// `x` holds `n` floats from a 16-byte-aligned start, and `i` is a multiple of 4.
#[inline(always)]
unsafe fn load(x: In<f32>, i: usize, n: usize) -> [f32; ITEMS] {
    let mut v = [0.0f32; ITEMS];
    if i + ITEMS <= n {
        for q in 0..ITEMS / 4 {
            // SAFETY: i + ITEMS <= n, and i + 4q is a multiple of 4 from an aligned start.
            v[4 * q..4 * q + 4].copy_from_slice(&unsafe { x.read4(i + 4 * q) });
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

/// Which of `v` (elements `i..i + ITEMS`, those below `n`) are above
/// `threshold`: bit `k` for `v[k]`.
#[inline(always)]
fn kept(v: &[f32; ITEMS], i: usize, n: usize, threshold: f32) -> u32 {
    let mut mask = 0u32;
    for (k, &x) in v.iter().enumerate() {
        if i + k < n && x > threshold {
            mask |= 1 << k;
        }
    }
    mask
}

/// The first element of block `block`'s chunk and the element after its
/// last: whole steps of `span` floats, as evenly as the grid allows.
#[inline(always)]
pub fn chunk(block: usize, blocks: usize, span: usize, n: usize) -> (usize, usize) {
    let per_block = n.div_ceil(span).div_ceil(blocks) * span;
    ((block * per_block).min(n), ((block + 1) * per_block).min(n))
}

/// `y[..count]` = the elements of `x[..n]` above `threshold`, in order, and
/// `selected[0]` = count.
///
/// # Safety
/// `x` holds `n` floats from a 16-byte-aligned start; `y` holds `n` floats;
/// `counts` one per block of the grid; `selected` one; `n` is below 2^32.
#[kernel(cooperative, shared_memory = block_scratch_bytes::<u32>)]
pub unsafe fn compact<const TILE: u32 = 32>(x: In<f32>, y: Out<f32>, counts: Out<u32>, selected: Out<u32>, threshold: f32, n: usize) {
    let grid = this_grid();
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);
    // The block collectives' scratch: block_scratch_bytes::<u32>, for them alone.
    let scratch = dynamic_shared::<u32>();
    let t = block.thread_rank() as usize;
    let threads = block.num_threads() as usize;
    let b = grid.block_rank();
    let span = threads * ITEMS;
    let (first, end) = chunk(b, grid.num_blocks(), span, n);

    // 1. The chunk's count, its steps taken last to first.
    let mut mine = 0u32;
    let mut steps = (end - first).div_ceil(span);
    while steps > 0 {
        steps -= 1;
        let i = first + steps * span + t * ITEMS;
        // SAFETY: x holds n >= end floats from an aligned start; i is a multiple of 4.
        let v = unsafe { load(x, i, end) };
        mine += kept(&v, i, end, threshold).count_ones();
    }
    // SAFETY (each block collective): every thread of the block, outside any
    // branch; the launch gives block_scratch_bytes::<u32>, used by nothing else.
    let count = unsafe { block_reduce(&block, &tile, mine, Plus, scratch) };
    if t == 0 {
        // SAFETY: one slot per block, written by its thread 0 alone.
        unsafe { counts.write(b, count) };
    }
    grid.sync(); // 2.

    // 3. Where this block's elements go.
    let mut before = 0u32;
    let mut k = t;
    while k < b {
        // SAFETY: k < b < blocks, written before grid.sync().
        before += unsafe { counts.read(k) };
        k += threads;
    }
    let mut at = unsafe { block_reduce(&block, &tile, before, Plus, scratch) } as usize;

    // 4. The chunk again, first to last: each thread's kept floats at their place.
    let mut base = first;
    while base < end {
        let i = base + t * ITEMS;
        // SAFETY: as in 1.
        let v = unsafe { load(x, i, end) };
        let mask = kept(&v, i, end, threshold);
        let (below, step_total) = unsafe { block_exclusive_scan(&block, &tile, mask.count_ones(), Plus, scratch) };
        let mut w = at + below as usize;
        for (k, &x) in v.iter().enumerate() {
            if mask & (1 << k) != 0 {
                // SAFETY: w < the count of kept elements <= n; each thread writes its own places.
                unsafe { y.write(w, x) };
                w += 1;
            }
        }
        at += step_total as usize;
        base += span;
    }
    if b + 1 == grid.num_blocks() && t == 0 {
        // SAFETY: one element, written by one thread of the last block.
        unsafe { selected.write(0, at as u32) };
    }
}
