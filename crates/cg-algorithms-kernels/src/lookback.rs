//! Decoupled look-back (Merrill and Garland 2016, CUB's
//! `TilePrefixCallbackOp`): how the scan and select kernels pass each
//! tile's prefix to the next in one ordinary launch, with no grid barrier.
//!
//! Each block takes the next tile by an atomic ticket ([`take_tile`]), so
//! every tile before it has a block that started: a block never waits on
//! one that was never scheduled (taking tiles by block index, as CUB does,
//! trusts the GPU to start blocks in index order, which CUDA does not
//! promise). It publishes its tile's total as an [`AGGREGATE`] status; its
//! warp 0 reads the statuses of the 32 tiles before it at once, combining
//! totals back to the nearest [`PREFIX`], waiting where a tile has not
//! published; then it publishes its own prefix ([`look_back`]).
//!
//! A status is one 64-bit word, written and read atomically: the launch's
//! epoch in the top 30 bits, the kind in the next two, the value's 32 bits
//! below. A word of another epoch is an earlier launch's, so the array needs
//! no clearing between launches; the host passes a new epoch each launch
//! (1 to [`EPOCHS`] - 1) and clears the array before the epochs wrap.

use crate::Value;
use cg_kernel::cg::{ReduceOp, ThreadBlock, this_grid, tiled_partition};
use cg_kernel::clock::nanosleep;
use cg_kernel::mem::{DynamicShared, Out, Scope};

/// Where a status word's epoch starts.
const EPOCH_SHIFT: u32 = 34;
/// Status: the low half is the tile's own total.
pub const AGGREGATE: u64 = 1 << 32;
/// Status: the low half is everything up to the tile's last element combined.
pub const PREFIX: u64 = 2 << 32;
/// Epochs a status array tells apart: 30 bits, 0 never used (a zeroed array
/// is no epoch's).
pub const EPOCHS: u32 = 1 << 30;
/// Tiles a look-back reads at once: one per lane of warp 0.
const WINDOW: usize = 32;

/// On a grid of at least [`WAIT_FROM_BLOCKS`] blocks, warp 0 sleeps this
/// long before its first read of the statuses, and [`WAIT_BETWEEN_NS`]
/// between reads that find a tile not yet published: CUB's delays for a
/// 4-byte scan on sm_90 (`fixed_delay_constructor_t<688, 1140>` in its
/// `tuning_scan.cuh`), so that the polls leave the L2 to the blocks that
/// publish. On an H100 they took the scans at 2^24 and 2^26 elements from
/// 1.41 and 1.45 times CUB's time to 1.32, and the select from 1.21 and
/// 1.30 to 1.08 and 1.09, but cost the select 5% at 2^22 (1,024 tiles,
/// `records/2026-12-07-h100-lookback-delays`): hence the threshold.
const WAIT_FIRST_NS: u32 = 1140;
/// See [`WAIT_FIRST_NS`].
const WAIT_BETWEEN_NS: u32 = 688;
/// See [`WAIT_FIRST_NS`]: twice the 1,024 tiles where the delays cost
/// time, and more blocks of 256 threads than an H100 or H200 holds at once
/// (1,056), so that a persistent grid, at most what the GPU holds, does not
/// wait there.
const WAIT_FROM_BLOCKS: usize = 2048;

/// The 4-byte words of shared memory the look-back keeps after the block
/// collectives' scratch: the tile's number, and the prefix warp 0 found.
pub const WORDS: u32 = 2;

/// The tile this block takes: the next ticket, so that every tile before it
/// has a block that started. The block that takes the launch's last ticket
/// (`tickets - 1`) sets the ticket back to 0 for the next launch. `words[0]`
/// carries it to the block.
///
/// # Safety
/// Every thread of the block calls it, outside any branch; `ticket[0]` is
/// this launch's alone and was 0 at its start; the launch's blocks take
/// exactly `tickets` tickets in all (one per block where each block takes
/// one tile; with blocks that loop, one per tile and one more per block,
/// the ticket past the last tile that ends its loop); `words` has an
/// element 0 no other code uses until the next `block.sync()`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn take_tile(block: &ThreadBlock, ticket: Out<u32>, tickets: usize, words: DynamicShared<u32>) -> usize {
    if block.thread_rank() == 0 {
        // SAFETY: the ticket is touched only atomically in this launch.
        let k = unsafe { ticket.atomic_add(0, 1) };
        if k as usize + 1 == tickets {
            // Every ticket of this launch is out: the next launch starts at 0.
            // SAFETY: as above.
            unsafe { ticket.atomic_store(0, 0, Scope::Device) };
        }
        // SAFETY: word 0, this thread's alone until the barrier.
        unsafe { words.write(0, k) };
    }
    block.sync();
    // SAFETY: written before the barrier.
    unsafe { words.read(0) as usize }
}

/// Publishes tile `k`'s `total`, looks back over the tiles before it, and
/// returns what they combine to (`Op::identity()` for tile 0), in every
/// thread of the block: [`publish_total`], then [`wait_for_prefix`].
///
/// # Safety
/// As [`publish_total`] and [`wait_for_prefix`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn look_back<T: Value, Op: const ReduceOp<T>>(
    block: &ThreadBlock,
    status: Out<u64>,
    k: usize,
    epoch: u32,
    total: T,
    op: Op,
    words: DynamicShared<u32>,
) -> T {
    // SAFETY: the caller's contract.
    unsafe {
        publish_total(block, status, k, epoch, total);
        wait_for_prefix(block, status, k, epoch, total, op, words)
    }
}

/// Publishes tile `k`'s `total` (its [`AGGREGATE`]; tile 0's is its
/// [`PREFIX`]), from thread 0, so that the tiles after it can look back
/// past it. The block may then do other work, such as loading its next
/// tile, before [`wait_for_prefix`].
///
/// # Safety
/// `status` holds a word for every tile up to `k`, is touched only
/// atomically in this launch, and tile `k`'s word is this block's to write;
/// `epoch` is in `1..EPOCHS`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn publish_total<T: Value>(block: &ThreadBlock, status: Out<u64>, k: usize, epoch: u32, total: T) {
    if block.thread_rank() == 0 {
        let kind = if k == 0 { PREFIX } else { AGGREGATE };
        // SAFETY: tile k's word, touched only atomically (the contract).
        unsafe { status.atomic_store(k, stamp(epoch) | kind | bits(total), Scope::Device) };
    }
}

/// The launch's epoch, where a status word keeps it.
#[inline(always)]
fn stamp(epoch: u32) -> u64 {
    (epoch as u64) << EPOCH_SHIFT
}

/// A value's 32 bits, where a status word keeps them.
#[inline(always)]
fn bits<T: Value>(v: T) -> u64 {
    bits_of(v.to_bits64())
}

/// The value's 32 bits in a status word.
#[inline(always)]
fn bits_of(word: u64) -> u64 {
    word & 0xffff_ffff
}

/// Looks back from tile `k` over the tiles before it, and returns what they
/// combine to (`Op::identity()` for tile 0), in every thread of the block,
/// after publishing tile `k`'s own [`PREFIX`] (`total` combined after it).
///
/// # Safety
/// Every thread of the block calls it, outside any branch, after
/// [`publish_total`] for the same `k`; `status` holds a word for every tile
/// up to `k`, none of `epoch` but those this launch's blocks write, and is
/// touched only atomically in this launch; every tile before `k` has a
/// block that will publish it without waiting on a tile from `k` on (tiles
/// taken by [`take_tile`], each published before its block takes another);
/// `epoch` is in `1..EPOCHS`; `words` has an element 1 no other code uses
/// between this call and the next `block.sync()`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn wait_for_prefix<T: Value, Op: const ReduceOp<T>>(
    block: &ThreadBlock,
    status: Out<u64>,
    k: usize,
    epoch: u32,
    total: T,
    op: Op,
    words: DynamicShared<u32>,
) -> T {
    let t = block.thread_rank() as usize;
    let stamp = stamp(epoch);
    if k > 0 && t < WINDOW {
        let lanes = tiled_partition::<32>(block);
        let wait = this_grid().num_blocks() >= WAIT_FROM_BLOCKS;
        if wait {
            nanosleep(WAIT_FIRST_NS);
        }
        let mut prefix = Op::identity();
        let mut end = k; // the window is tiles end - 32 .. end, lane l reading end - 1 - l
        loop {
            let mine = end.checked_sub(t + 1);
            let word = loop {
                let w = match mine {
                    // SAFETY: tile j < k has a word, touched only atomically.
                    Some(j) => unsafe { status.atomic_load(j, Scope::Device) },
                    None => stamp | PREFIX,
                };
                let ready = w >> EPOCH_SHIFT == epoch as u64 && w & (PREFIX | AGGREGATE) != 0;
                if lanes.all(ready) {
                    break w;
                }
                if wait {
                    nanosleep(WAIT_BETWEEN_NS);
                }
            };
            // The nearest prefix in the window: lanes past it add nothing.
            let prefixes = lanes.ballot(word & PREFIX != 0 && mine.is_some());
            let stop = if prefixes == 0 { WINDOW as u32 } else { prefixes.trailing_zeros() };
            let kept = if (t as u32) <= stop && mine.is_some() { T::from_bits64(bits_of(word)) } else { Op::identity() };
            prefix = Op::combine(lanes.reduce(kept, op), prefix);
            if prefixes != 0 || end <= WINDOW {
                break;
            }
            end -= WINDOW;
        }
        if t == 0 {
            // SAFETY: tile k's word, as above; word 1 is this thread's alone
            // until the barrier.
            unsafe {
                status.atomic_store(k, stamp | PREFIX | bits(Op::combine(prefix, total)), Scope::Device);
                words.write(1, bits(prefix) as u32);
            }
        }
    }
    block.sync();
    if k == 0 {
        Op::identity()
    } else {
        // SAFETY: written by thread 0 before the barrier.
        T::from_bits64(unsafe { words.read(1) } as u64)
    }
}
