//! Inclusive and exclusive scans in one ordinary launch by decoupled
//! look-back ([`crate::lookback`]), CUB's `DeviceScan::InclusiveScan` and
//! `ExclusiveScan`: each element read once and written once. The kernels
//! take one tile per block; the `persistent_*` kernels take a grid of any
//! size, whose blocks loop over the tiles.

use crate::lookback::{WORDS, look_back, publish_total, take_tile, wait_for_prefix};
use crate::{ITEMS, TILE_LEN, Value, load, store};
use cg_kernel::cg::{
    Greater, Less, Plus, ReduceOp, ThreadBlock, ThreadBlockTile, block_exclusive_scan, block_scratch_bytes, this_grid, this_thread_block, tiled_partition,
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

/// `v` scanned in place within the thread (inclusive).
#[inline(always)]
fn scan_in_thread<T: Value, Op: ReduceOp<T>>(v: &mut [T; ITEMS], _op: Op) {
    for j in 1..ITEMS {
        v[j] = Op::combine(v[j - 1], v[j]);
    }
}

/// One tile of the scan: loaded, scanned in each thread and across the
/// block, offset by the look-back's prefix, and stored.
///
/// # Safety
/// As each scan kernel's.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
unsafe fn scan_tile<T: Value, Op: ReduceOp<T>, const INCLUSIVE: bool>(x: In<T>, y: Out<T>, status: Out<u64>, ticket: Out<u32>, epoch: u32, n: usize, op: Op) {
    let Parts { block, tile, scratch, words, t } = parts::<T>();
    // SAFETY (take_tile, look_back, the block scan): every thread of the
    // block calls each once, outside any branch; the kernel's contract gives
    // the ticket, the statuses and the epoch; the scratch is the block
    // scan's, the words after it the look-back's (lookback_shared_bytes).
    let k = unsafe { take_tile(&block, ticket, n.div_ceil(TILE_LEN), words) };
    let i = k * TILE_LEN + t * ITEMS;
    // SAFETY: x holds n elements from an aligned start; i is a multiple of 4.
    let mut v = unsafe { load(x, i, n, Op::identity()) };
    scan_in_thread(&mut v, op);
    // SAFETY: as above.
    let (below, total) = unsafe { block_exclusive_scan(&block, &tile, v[ITEMS - 1], op, scratch) };
    // SAFETY: as above.
    let before = unsafe { look_back(&block, status, k, epoch, total, op, words) };
    // SAFETY: y holds n elements from an aligned start; the tiles and the
    // threads' ITEMS are disjoint.
    unsafe { store(y, i, n, finish::<T, Op, INCLUSIVE>(v, Op::combine(before, below))) };
}

/// `v`, scanned within the thread, and what the tile's earlier elements
/// combine to (`start`) put in front: the thread's outputs.
#[inline(always)]
fn finish<T: Value, Op: ReduceOp<T>, const INCLUSIVE: bool>(v: [T; ITEMS], start: T) -> [T; ITEMS] {
    if INCLUSIVE {
        v.map(|s| Op::combine(start, s))
    } else {
        let mut e = [start; ITEMS];
        for j in 1..ITEMS {
            e[j] = Op::combine(start, v[j - 1]);
        }
        e
    }
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
unsafe fn scan_tiles_persistent<T: Value, Op: ReduceOp<T>, const INCLUSIVE: bool>(
    x: In<T>,
    y: Out<T>,
    status: Out<u64>,
    ticket: Out<u32>,
    epoch: u32,
    n: usize,
    op: Op,
) {
    let Parts { block, tile, scratch, words, t } = parts::<T>();
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
    let mut k = unsafe { take_tile(&block, ticket, tickets, words) };
    if k >= tiles {
        return;
    }
    // SAFETY: x holds n elements from an aligned start; the index is a multiple of 4.
    let mut v = unsafe { load(x, k * TILE_LEN + t * ITEMS, n, Op::identity()) };
    loop {
        scan_in_thread(&mut v, op);
        // SAFETY: as above.
        let (below, total) = unsafe { block_exclusive_scan(&block, &tile, v[ITEMS - 1], op, scratch) };
        // SAFETY: as above.
        unsafe { publish_total(&block, status, k, epoch, total) };
        // SAFETY: as above.
        let next = unsafe { take_tile(&block, ticket, tickets, words) };
        // The next tile's loads, in flight while warp 0 looks back.
        // SAFETY: as above.
        let w = if next < tiles { unsafe { load(x, next * TILE_LEN + t * ITEMS, n, Op::identity()) } } else { [Op::identity(); ITEMS] };
        // SAFETY: as above.
        let before = unsafe { wait_for_prefix(&block, status, k, epoch, total, op, words) };
        // SAFETY: y holds n elements from an aligned start; the tiles and the
        // threads' ITEMS are disjoint.
        unsafe { store(y, k * TILE_LEN + t * ITEMS, n, finish::<T, Op, INCLUSIVE>(v, Op::combine(before, below))) };
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
