//! Inclusive and exclusive scans in one ordinary launch by decoupled
//! look-back ([`crate::lookback`]), CUB's `DeviceScan::InclusiveScan` and
//! `ExclusiveScan`: each element read once and written once. The kernels
//! take one tile per block; the `persistent_*` kernels take a grid of any
//! size, whose blocks loop over the tiles.

use crate::lookback::{WORDS, look_back, publish_total, take_tile, wait_for_prefix};
use crate::{TILE_LEN, VECTORS, Value, load_striped, store_striped, striped_start};
use cg_kernel::cg::{
    Greater, Less, Plus, ReduceOp, ThreadBlock, ThreadBlockTile, block_exclusive_scan, block_scratch_bytes, inclusive_scan, this_grid, this_thread_block,
    tiled_partition,
};
use cg_kernel::kernel;
use cg_kernel::mem::{DynamicShared, In, Out, dynamic_shared};

/// Dynamic shared memory of the scan and select kernels: the block scan's
/// scratch (one 4-byte word per warp), then the look-back's words.
pub const fn lookback_shared_bytes(threads_per_block: u32) -> u32 {
    block_scratch_bytes::<u32>(threads_per_block, 32).saturating_add(4 * WORDS)
}

/// What every scan kernel's block works with: the block, its warps, the
/// block scan's scratch, the look-back's words after it, and the thread's
/// rank.
struct Parts<T> {
    block: ThreadBlock,
    tile: ThreadBlockTile<32>,
    scratch: DynamicShared<T>,
    words: DynamicShared<u32>,
    t: usize,
}

/// The block's [`Parts`], laid out as [`lookback_shared_bytes`] sizes them.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
fn parts<T: Value>() -> Parts<T> {
    let block = this_thread_block();
    let tile = tiled_partition::<32>(&block);
    let scratch = dynamic_shared::<T>();
    let words = scratch.after::<u32>(block_scratch_bytes::<T>(block.num_threads(), 32) as usize / 4);
    let t = block.thread_rank() as usize;
    Parts { block, tile, scratch, words, t }
}

/// Scans the warp's 512 elements, held in the warp-striped arrangement
/// ([`striped_start`]): each vector in its thread (inclusive, in place),
/// then the vectors' totals across the warp, one `cg::inclusive_scan` per
/// vector. Returns what the warp's elements before each of the thread's
/// vectors combine to, and the warp's total (in every lane).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
fn scan_warp<T: Value, Op: const ReduceOp<T>>(tile: &ThreadBlockTile<32>, v: &mut [[T; 4]; VECTORS], op: Op) -> ([T; VECTORS], T) {
    let lane = tile.thread_rank();
    let mut carry = Op::identity();
    let mut starts = [Op::identity(); VECTORS];
    for q in 0..VECTORS {
        for e in 1..4 {
            v[q][e] = Op::combine(v[q][e - 1], v[q][e]);
        }
        let through = inclusive_scan(tile, v[q][3], op);
        let below = tile.shfl_up(through, 1);
        starts[q] = if lane == 0 { carry } else { Op::combine(carry, below) };
        carry = Op::combine(carry, tile.shfl(through, 31));
    }
    (starts, carry)
}

/// The thread's part of one tile, scanned within its warp ([`scan_warp`])
/// and across the block: what each vector's elements are combined after
/// (the warps before it, and the warp's vectors before it), and the tile's
/// total.
///
/// # Safety
/// Every thread of the block calls it, outside any branch; `scratch` is
/// the block scan's (`block_scratch_bytes`).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
unsafe fn scan_block<T: Value, Op: const ReduceOp<T>>(parts: &Parts<T>, v: &mut [[T; 4]; VECTORS], op: Op) -> ([T; VECTORS], T) {
    let (starts, warp_total) = scan_warp(&parts.tile, v, op);
    // The warps' totals across the block: lane 31 of each gives its warp's.
    let last = if parts.tile.thread_rank() == 31 { warp_total } else { Op::identity() };
    // SAFETY: the caller's contract.
    let (below, total) = unsafe { block_exclusive_scan(&parts.block, &parts.tile, last, op, parts.scratch) };
    (starts.map(|s| Op::combine(below, s)), total)
}

/// One tile of the scan: loaded, scanned across the block, offset by the
/// look-back's prefix, and stored. The body of every one-tile scan kernel,
/// and of [`operator_kernels!`](crate::operator_kernels)'s.
///
/// # Safety
/// As each scan kernel's: `x` and `y` hold `n` elements, each 16-byte
/// aligned; the grid has one block of [`THREADS`](crate::THREADS) threads
/// per tile of [`TILE_LEN`](crate::TILE_LEN) elements and
/// [`lookback_shared_bytes`] of shared memory; `status` holds one word per
/// tile, none of `epoch`, which is in `1..EPOCHS`; `ticket[0]` is 0; no
/// other launch uses `status` or `ticket` meanwhile.
#[doc(hidden)]
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn scan_tile<T: Value, Op: const ReduceOp<T>, const INCLUSIVE: bool>(
    x: In<T>,
    y: Out<T>,
    status: Out<u64>,
    ticket: Out<u32>,
    epoch: u32,
    n: usize,
    op: Op,
) {
    let parts = parts::<T>();
    // SAFETY (take_tile, look_back, the block scan): every thread of the
    // block calls each once, outside any branch; the kernel's contract gives
    // the ticket, the statuses and the epoch; the scratch is the block
    // scan's, the words after it the look-back's (lookback_shared_bytes).
    let k = unsafe { take_tile(&parts.block, ticket, n.div_ceil(TILE_LEN), parts.words) };
    let i = striped_start(k, parts.t);
    // SAFETY: x holds n elements from an aligned start; i is a multiple of 4.
    let mut v = unsafe { load_striped(x, i, n, Op::identity()) };
    // SAFETY: as above.
    let (starts, total) = unsafe { scan_block(&parts, &mut v, op) };
    // SAFETY: as above.
    let before = unsafe { look_back(&parts.block, status, k, epoch, total, op, parts.words) };
    // SAFETY: y holds n elements from an aligned start; the threads' vectors
    // are disjoint.
    unsafe { store_striped(y, i, n, finish::<T, Op, INCLUSIVE>(v, starts, before)) };
}

/// The thread's outputs: each vector's values, scanned within the thread,
/// with what comes before them put in front (`before`, the tiles before
/// this one, then the vector's start in the tile).
#[inline(always)]
fn finish<T: Value, Op: const ReduceOp<T>, const INCLUSIVE: bool>(v: [[T; 4]; VECTORS], starts: [T; VECTORS], before: T) -> [[T; 4]; VECTORS] {
    let mut out = v;
    for q in 0..VECTORS {
        let start = Op::combine(before, starts[q]);
        for e in 0..4 {
            out[q][e] = match (INCLUSIVE, e) {
                (true, _) => Op::combine(start, v[q][e]),
                (false, 0) => start,
                (false, _) => Op::combine(start, v[q][e - 1]),
            };
        }
    }
    out
}

/// The scan by blocks that loop: each block takes tiles by ticket until
/// none is left, and loads its next tile before it waits on the look-back
/// for the one it holds, so that the wait overlaps a load where the
/// one-tile blocks of [`scan_tile`] leave the SM's loads idle.
///
/// # Safety
/// As each persistent scan kernel's.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
unsafe fn scan_tiles_persistent<T: Value, Op: const ReduceOp<T>, const INCLUSIVE: bool>(
    x: In<T>,
    y: Out<T>,
    status: Out<u64>,
    ticket: Out<u32>,
    epoch: u32,
    n: usize,
    op: Op,
) {
    let parts = parts::<T>();
    let (block, words, t) = (&parts.block, parts.words, parts.t);
    let tiles = n.div_ceil(TILE_LEN);
    // Each block takes every tile it scans, then one ticket past the last
    // tile, which ends its loop.
    let tickets = tiles + this_grid().num_blocks();
    // SAFETY (take_tile, publish_total, wait_for_prefix, the block scan):
    // every thread of the block calls each, outside any branch but the
    // loop's, whose condition is the block's ticket (the same in every
    // thread); the kernel's contract gives the ticket, the statuses and the
    // epoch; each tile is published before its block takes another; the
    // scratch is the block scan's, the words after it the look-back's.
    let mut k = unsafe { take_tile(block, ticket, tickets, words) };
    if k >= tiles {
        return;
    }
    // SAFETY: x holds n elements from an aligned start; the index is a multiple of 4.
    let mut v = unsafe { load_striped(x, striped_start(k, t), n, Op::identity()) };
    loop {
        // SAFETY: as above.
        let (starts, total) = unsafe { scan_block(&parts, &mut v, op) };
        // SAFETY: as above.
        unsafe { publish_total(block, status, k, epoch, total) };
        // SAFETY: as above.
        let next = unsafe { take_tile(block, ticket, tickets, words) };
        // The next tile's loads, in flight while warp 0 looks back.
        // SAFETY: as above.
        let w = if next < tiles { unsafe { load_striped(x, striped_start(next, t), n, Op::identity()) } } else { [[Op::identity(); 4]; VECTORS] };
        // SAFETY: as above.
        let before = unsafe { wait_for_prefix(block, status, k, epoch, total, op, words) };
        // SAFETY: y holds n elements from an aligned start; the threads'
        // vectors are disjoint.
        unsafe { store_striped(y, striped_start(k, t), n, finish::<T, Op, INCLUSIVE>(v, starts, before)) };
        if next >= tiles {
            return;
        }
        (k, v) = (next, w);
    }
}

/// The persistent scan kernels: blocks that loop over the tiles.
macro_rules! persistent_scans {
    ($($name:ident: $t:ty, $op:ident, $inclusive:literal, $what:literal;)*) => {$(
        #[doc = concat!("`y` = the ", $what, " of `x` (`", stringify!($t), "`, `", stringify!($op), "`), in one launch by decoupled look-back, by blocks that each scan tiles until none is left, loading the next while they wait on the look-back.")]
        ///
        /// # Safety
        /// `x` and `y` hold `n` elements, each 16-byte aligned; the grid has
        /// at least one block of [`THREADS`](crate::THREADS) threads, any
        /// number of them, and [`lookback_shared_bytes`] of shared memory;
        /// `status` holds one word per tile of [`TILE_LEN`](crate::TILE_LEN)
        /// elements, none of `epoch`, which is in `1..EPOCHS`; `ticket[0]`
        /// is 0; no other launch uses `status` or `ticket` meanwhile.
        #[kernel(shared_memory = lookback_shared_bytes)]
        pub unsafe fn $name(x: In<$t>, y: Out<$t>, status: Out<u64>, ticket: Out<u32>, epoch: u32, n: usize) {
            // SAFETY: the kernel's contract.
            unsafe { scan_tiles_persistent::<$t, $op, $inclusive>(x, y, status, ticket, epoch, n, $op) }
        }
    )*};
}

// The GPU entries only where this crate is built for its own PTX (the
// feature `gpu-entries`, on by default), not inside a crate that stamps its
// own operator's kernels (`operator_kernels!`).
#[cfg(any(not(target_arch = "nvptx64"), feature = "gpu-entries"))]
persistent_scans! {
    persistent_inclusive_sum_f32: f32, Plus, true, "inclusive sum";
    persistent_inclusive_sum_i32: i32, Plus, true, "inclusive sum";
    persistent_inclusive_sum_u32: u32, Plus, true, "inclusive sum";
    persistent_inclusive_min_f32: f32, Less, true, "inclusive minimum";
    persistent_inclusive_min_i32: i32, Less, true, "inclusive minimum";
    persistent_inclusive_min_u32: u32, Less, true, "inclusive minimum";
    persistent_inclusive_max_f32: f32, Greater, true, "inclusive maximum";
    persistent_inclusive_max_i32: i32, Greater, true, "inclusive maximum";
    persistent_inclusive_max_u32: u32, Greater, true, "inclusive maximum";
    persistent_exclusive_sum_f32: f32, Plus, false, "exclusive sum";
    persistent_exclusive_sum_i32: i32, Plus, false, "exclusive sum";
    persistent_exclusive_sum_u32: u32, Plus, false, "exclusive sum";
    persistent_exclusive_min_f32: f32, Less, false, "exclusive minimum";
    persistent_exclusive_min_i32: i32, Less, false, "exclusive minimum";
    persistent_exclusive_min_u32: u32, Less, false, "exclusive minimum";
    persistent_exclusive_max_f32: f32, Greater, false, "exclusive maximum";
    persistent_exclusive_max_i32: i32, Greater, false, "exclusive maximum";
    persistent_exclusive_max_u32: u32, Greater, false, "exclusive maximum";
}

/// One scan kernel per element type, operator and kind.
macro_rules! scans {
    ($($name:ident: $t:ty, $op:ident, $inclusive:literal, $what:literal;)*) => {$(
        #[doc = concat!("`y` = the ", $what, " of `x` (`", stringify!($t), "`, `", stringify!($op), "`), in one launch by decoupled look-back.")]
        ///
        /// # Safety
        /// `x` and `y` hold `n` elements, each 16-byte aligned; the grid has
        /// one block of [`THREADS`](crate::THREADS) threads per tile of
        /// [`TILE_LEN`](crate::TILE_LEN) elements and
        /// [`lookback_shared_bytes`] of shared memory; `status` holds one
        /// word per tile, none of `epoch`, which is in `1..EPOCHS`;
        /// `ticket[0]` is 0; no other launch uses `status` or `ticket`
        /// meanwhile.
        #[kernel(shared_memory = lookback_shared_bytes)]
        pub unsafe fn $name(x: In<$t>, y: Out<$t>, status: Out<u64>, ticket: Out<u32>, epoch: u32, n: usize) {
            // SAFETY: the kernel's contract.
            unsafe { scan_tile::<$t, $op, $inclusive>(x, y, status, ticket, epoch, n, $op) }
        }
    )*};
}

// The GPU entries only where this crate is built for its own PTX (the
// feature `gpu-entries`, on by default), not inside a crate that stamps its
// own operator's kernels (`operator_kernels!`).
#[cfg(any(not(target_arch = "nvptx64"), feature = "gpu-entries"))]
scans! {
    inclusive_sum_f32: f32, Plus, true, "inclusive sum";
    inclusive_sum_i32: i32, Plus, true, "inclusive sum";
    inclusive_sum_u32: u32, Plus, true, "inclusive sum";
    inclusive_min_f32: f32, Less, true, "inclusive minimum";
    inclusive_min_i32: i32, Less, true, "inclusive minimum";
    inclusive_min_u32: u32, Less, true, "inclusive minimum";
    inclusive_max_f32: f32, Greater, true, "inclusive maximum";
    inclusive_max_i32: i32, Greater, true, "inclusive maximum";
    inclusive_max_u32: u32, Greater, true, "inclusive maximum";
    exclusive_sum_f32: f32, Plus, false, "exclusive sum";
    exclusive_sum_i32: i32, Plus, false, "exclusive sum";
    exclusive_sum_u32: u32, Plus, false, "exclusive sum";
    exclusive_min_f32: f32, Less, false, "exclusive minimum";
    exclusive_min_i32: i32, Less, false, "exclusive minimum";
    exclusive_min_u32: u32, Less, false, "exclusive minimum";
    exclusive_max_f32: f32, Greater, false, "exclusive maximum";
    exclusive_max_i32: i32, Greater, false, "exclusive maximum";
    exclusive_max_u32: u32, Greater, false, "exclusive maximum";
}
