//! Reductions and scans over a whole block, as CUB's `BlockReduce` and
//! `BlockScan` offer them (C++ cooperative groups has them only for tiles):
//! [`block_reduce`], [`block_inclusive_scan`], [`block_exclusive_scan`].
//!
//! Each is built from the tile collectives and one slot of shared memory per
//! tile, which the caller passes as [`DynamicShared`] and declares with
//! [`block_scratch_bytes`]: `#[kernel(shared_memory = block_scratch_bytes::<f32>)]`.
//! The caller's tile (any of 1 to 32 threads) combines its threads' values;
//! a warp combines the tiles' totals, so that a block of small tiles costs
//! each thread at most 32 reads of them, not one per tile.
//!
//! **Why these are `unsafe` when [`ThreadBlock::sync`] is not.** This crate
//! treats a barrier as safe: it touches no memory, so a call that some thread
//! never reaches hangs, or pairs with an unrelated barrier, a logic error that
//! the host's bounded wait and the emulator report. These functions also
//! write and read shared memory, ordered only by their own barriers: called
//! where not every thread of the block calls them, their barriers pair with
//! others and their shared-memory accesses race, which is undefined
//! behaviour. So they are `unsafe fn`, as [`ThreadBlock::sync_aligned`] is,
//! and their `# Safety` is the barrier's rule plus the shared memory's. On
//! the emulator, a call some threads skip is named as the barrier it
//! deadlocks at, and scratch too small as an access past the shared memory.

use super::block::{MAX_THREADS_PER_BLOCK, ThreadBlock};
use super::ops::ReduceOp;
use super::scan::{exclusive_from_inclusive, inclusive_scan};
use super::tile::{ShuffleValue, ThreadBlockTile, reduce, tiled_partition};
use crate::mem::{DynamicShared, Word};

/// Bytes of dynamic shared memory the block collectives need: one `T` per
/// tile of `tile` threads (CUB's `TempStorage`). Its shape is the one
/// `#[kernel(shared_memory = ...)]` takes, so a kernel declares it by name:
///
/// ```no_run
/// use cg_kernel::cg::{Plus, block_reduce, block_scratch_bytes, this_thread_block, tiled_partition};
/// use cg_kernel::kernel;
/// use cg_kernel::mem::{In, Out, dynamic_shared};
///
/// /// Each block's sum of its threads' `x`, in every thread; thread 0 writes it.
/// ///
/// /// # Safety
/// /// `x` holds one float per thread of the grid, `sums` one per block.
/// #[kernel(shared_memory = block_scratch_bytes::<f32>)]
/// pub unsafe fn block_sums<const TILE: u32 = 32>(x: In<f32>, sums: Out<f32>) {
///     let block = this_thread_block();
///     let tile = tiled_partition::<TILE>(&block);
///     let b = block.group_index().x as usize;
///     let i = b * block.num_threads() as usize + block.thread_rank() as usize;
///     // SAFETY: one float per thread.
///     let v = unsafe { x.read(i) };
///     // SAFETY: every thread of the block reaches this call, outside any
///     // branch; the launch gives block_scratch_bytes::<f32>, used by nothing else.
///     let total = unsafe { block_reduce(&block, &tile, v, Plus, dynamic_shared()) };
///     if block.thread_rank() == 0 {
///         // SAFETY: one slot per block.
///         unsafe { sums.write(b, total) };
///     }
/// }
/// ```
pub const fn block_scratch_bytes<T>(threads_per_block: u32, tile: u32) -> u32 {
    threads_per_block.div_ceil(tile).saturating_mul(core::mem::size_of::<T>() as u32)
}

/// Threads in a warp: the tile that combines the tiles' totals.
const WARP: u32 = 32;

/// Whether a block of at most [`MAX_THREADS_PER_BLOCK`] threads has at most
/// a warp's worth of tiles of `N`, so that one warp holds every tile's total
/// at once (tiles of 32: at most 32 of them).
const fn one_pass<const N: u32>() -> bool {
    N * WARP >= MAX_THREADS_PER_BLOCK
}

/// `v` combined over every thread of the block, returned to every thread
/// (CUB's `BlockReduce::Reduce`, which returns it to thread 0 only).
///
/// Each tile reduces its threads' values ([`reduce`]), its rank-0 thread
/// writes the total to `scratch[tile]`, a block barrier, then every warp
/// combines the tiles' totals itself (lane `l` takes totals `l`, `l + 32`,
/// ... left to right, the operator's identity past the last, then a warp
/// [`reduce`]), and a block barrier before the slots can be used again. On a
/// tile of 32: two warp reductions (five `shfl.sync.bfly` per word each, or
/// one `redux.sync` for 32-bit integers on sm_80+), one shared write per
/// tile, one read per thread, two `barrier.sync`. That order is fixed, so a
/// float result is the same on every run and in every thread.
///
/// # Safety
/// What a block barrier needs, and what the shared memory needs:
/// - every thread of the block makes this call, the same call, as it would
///   [`block.sync()`](ThreadBlock::sync) (outside any branch some thread
///   skips), with `tile` cut from this block by `tiled_partition::<N>`, and
///   the block is whole warps (as for [`tiled_partition`](super::tiled_partition);
///   this project's host launches no other);
/// - `scratch` has at least [`block_scratch_bytes::<T>(threads_per_block, N)`](block_scratch_bytes)
///   bytes (the kernel's `#[kernel(shared_memory = ...)]`), and nothing else
///   reads or writes its first `threads_per_block / N` elements between the
///   last block barrier before this call and its return (it ends with a
///   block barrier, so calls one after another need none between them).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn block_reduce<const N: u32, T: ShuffleValue + Word, Op: const ReduceOp<T>>(
    block: &ThreadBlock,
    tile: &ThreadBlockTile<N>,
    v: T,
    op: Op,
    scratch: DynamicShared<T>,
) -> T {
    emu_call!("cg::block_reduce()");
    let tiles = tile.meta_group_size();
    let mine = reduce(tile, v, op);
    if tile.thread_rank() == 0 {
        // SAFETY: slot meta_group_rank() < tiles, which the caller's scratch
        // holds; only this thread writes it, and nothing reads it before the
        // barrier below.
        unsafe { scratch.write(tile.meta_group_rank() as usize, mine) };
    }
    block.sync();
    let warp = tiled_partition::<WARP>(block);
    let lane = warp.thread_rank();
    // SAFETY (the reads): below tiles, written before the barrier above.
    let mut acc = if lane < tiles { unsafe { scratch.read(lane as usize) } } else { Op::identity() };
    if !one_pass::<N>() {
        let mut i = lane + WARP;
        while i < tiles {
            // SAFETY: as above.
            acc = Op::combine(acc, unsafe { scratch.read(i as usize) });
            i += WARP;
        }
    }
    let total = reduce(&warp, acc, op);
    // The next call may write the slots only after every thread has read them.
    block.sync();
    total
}

/// `v` combined over this thread and every thread of lower rank in the
/// block, and the block's total (CUB's `BlockScan::InclusiveScan` with its
/// `block_aggregate`; `InclusiveSum` for [`Plus`](super::Plus)).
///
/// Each tile scans its threads' values ([`inclusive_scan`]), its last thread
/// writes the tile's total to `scratch[tile]`, a block barrier, the first
/// warp scans the totals in place (32 at a time, each chunk after the last
/// chunk's total, where there are more than 32), a block barrier, each
/// thread combines the totals before its tile in front of its value in the
/// tile, and a block barrier before the slots can be used again. On a tile
/// of 32: two warp scans (five `shfl.sync.up` per word each), three
/// `barrier.sync`. That order is fixed, so a float result is the same on
/// every run.
///
/// # Safety
/// As [`block_reduce`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn block_inclusive_scan<const N: u32, T: ShuffleValue + Word, Op: const ReduceOp<T>>(
    block: &ThreadBlock,
    tile: &ThreadBlockTile<N>,
    v: T,
    op: Op,
    scratch: DynamicShared<T>,
) -> (T, T) {
    emu_call!("cg::block_inclusive_scan()");
    // SAFETY: the caller's contract.
    unsafe { block_scan::<N, false, T, Op>(block, tile, v, op, scratch) }
}

/// `v` combined over every thread of lower rank in the block, not this one,
/// and the block's total (CUB's `BlockScan::ExclusiveScan` with its
/// `block_aggregate`; `ExclusiveSum` for [`Plus`](super::Plus)). Thread 0
/// gets the operator's identity, as rank 0 of a tile's
/// [`exclusive_scan`](super::exclusive_scan) does; CUB's `ExclusiveSum` gives it
/// `0`, the same for a sum.
///
/// As [`block_inclusive_scan`], with each tile's exclusive scan in place of
/// its inclusive one: one `shfl.sync.up` per word more (none for integer
/// `Plus` and `BitXor`).
///
/// ```no_run
/// use cg_kernel::cg::{Plus, ThreadBlock, ThreadBlockTile, block_exclusive_scan};
/// use cg_kernel::mem::dynamic_shared;
///
/// /// Where this thread's `count` items start in the block's output, and how
/// /// many the block has (CUB: `BlockScan(temp).ExclusiveSum(count, start, total)`).
/// ///
/// /// # Safety
/// /// Every thread of the block calls it, as `block.sync()`; the launch gives
/// /// `block_scratch_bytes::<u32>` of shared memory, which nothing else uses.
/// unsafe fn offsets(block: &ThreadBlock, tile: &ThreadBlockTile<32>, count: u32) -> (u32, u32) {
///     // SAFETY: the caller's contract.
///     unsafe { block_exclusive_scan(block, tile, count, Plus, dynamic_shared()) }
/// }
/// ```
///
/// # Safety
/// As [`block_reduce`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn block_exclusive_scan<const N: u32, T: ShuffleValue + Word, Op: const ReduceOp<T>>(
    block: &ThreadBlock,
    tile: &ThreadBlockTile<N>,
    v: T,
    op: Op,
    scratch: DynamicShared<T>,
) -> (T, T) {
    emu_call!("cg::block_exclusive_scan()");
    // SAFETY: the caller's contract.
    unsafe { block_scan::<N, true, T, Op>(block, tile, v, op, scratch) }
}

/// The block scans: this thread's value (exclusive where `EXCLUSIVE`) and the
/// block's total.
///
/// # Safety
/// As [`block_reduce`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
unsafe fn block_scan<const N: u32, const EXCLUSIVE: bool, T: ShuffleValue + Word, Op: const ReduceOp<T>>(
    block: &ThreadBlock,
    tile: &ThreadBlockTile<N>,
    v: T,
    op: Op,
    scratch: DynamicShared<T>,
) -> (T, T) {
    let inclusive = inclusive_scan(tile, v, op);
    let in_tile = if EXCLUSIVE { exclusive_from_inclusive::<N, T, Op>(tile, inclusive, v) } else { inclusive };
    let (lane, rank, tiles) = (tile.thread_rank(), tile.meta_group_rank(), tile.meta_group_size());
    if lane == N - 1 {
        // SAFETY: slot rank < tiles, which the caller's scratch holds; only
        // this thread writes it, and nothing reads it before the barrier below.
        unsafe { scratch.write(rank as usize, inclusive) };
    }
    block.sync();
    // SAFETY (both calls): the first warp alone, each lane on its own
    // slots, every total written before the barrier above.
    if one_pass::<N>() {
        // Tiles of 32: the first tile is the first warp.
        if rank == 0 {
            unsafe { scan_totals_in_one_pass(tile, tiles, op, scratch) };
        }
    } else {
        let warp = tiled_partition::<WARP>(block);
        if warp.meta_group_rank() == 0 {
            unsafe { scan_totals_by_chunks(&warp, tiles, op, scratch) };
        }
    }
    block.sync();
    // SAFETY (both reads): below tiles, scanned before the barrier above.
    let before = if rank == 0 { Op::identity() } else { unsafe { scratch.read(rank as usize - 1) } };
    // SAFETY: as above.
    let total = unsafe { scratch.read(tiles as usize - 1) };
    // The next call may write the slots only after every thread has read them.
    block.sync();
    (Op::combine(before, in_tile), total)
}

/// The first warp's inclusive scan of the `tiles` totals in `scratch`, in
/// place, where a warp holds them all (`tiles <= 32`).
///
/// # Safety
/// Every thread of one warp calls it; `scratch` holds `tiles` elements, which
/// no other thread accesses until a barrier after this call.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
unsafe fn scan_totals_in_one_pass<const M: u32, T: ShuffleValue + Word, Op: const ReduceOp<T>>(
    warp: &ThreadBlockTile<M>,
    tiles: u32,
    op: Op,
    scratch: DynamicShared<T>,
) {
    let lane = warp.thread_rank();
    // SAFETY (the read and the write): lane < tiles; the caller's contract.
    let total = if lane < tiles { unsafe { scratch.read(lane as usize) } } else { Op::identity() };
    let scanned = inclusive_scan(warp, total, op);
    if lane < tiles {
        // SAFETY: as above.
        unsafe { scratch.write(lane as usize, scanned) };
    }
}

/// The first warp's inclusive scan of the `tiles` totals in `scratch`, in
/// place, 32 at a time, each chunk after the total of the chunks before it.
///
/// # Safety
/// As [`scan_totals_in_one_pass`], with any number of tiles.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
unsafe fn scan_totals_by_chunks<T: ShuffleValue + Word, Op: const ReduceOp<T>>(warp: &ThreadBlockTile<WARP>, tiles: u32, op: Op, scratch: DynamicShared<T>) {
    let lane = warp.thread_rank();
    let mut carry = Op::identity();
    let mut first = 0;
    while first < tiles {
        let i = first + lane;
        // SAFETY (the read and the write): i < tiles; the caller's contract.
        let total = if i < tiles { unsafe { scratch.read(i as usize) } } else { Op::identity() };
        let scanned = Op::combine(carry, inclusive_scan(warp, total, op));
        if i < tiles {
            // SAFETY: as above.
            unsafe { scratch.write(i as usize, scanned) };
        }
        carry = warp.shfl(scanned, WARP - 1);
        first += WARP;
    }
}
