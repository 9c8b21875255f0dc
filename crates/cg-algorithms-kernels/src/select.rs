//! Stream compaction in one ordinary launch by decoupled look-back
//! ([`crate::lookback`]) over the kept counts, CUB's `DeviceSelect::If`
//! and `DeviceSelect::Flagged`: each element read once, the kept ones
//! written once, in their order. The kernels take one tile per block; the
//! `persistent_*` kernels take a grid of any size, whose blocks loop over
//! the tiles.

use crate::lookback::{look_back, publish_total, take_tile, wait_for_prefix};
use crate::scan::lookback_shared_bytes;
use crate::{ITEMS, TILE_LEN, Value, load};
use cg_kernel::cg::{Plus, ThreadBlock, ThreadBlockTile, block_exclusive_scan, block_scratch_bytes, this_grid, this_thread_block, tiled_partition};
use cg_kernel::kernel;
use cg_kernel::mem::{DynamicShared, In, Out, dynamic_shared};

/// [`select_if`](self)'s rule: keep `x > value`.
pub const GREATER: u32 = 0;
/// Keep `x < value`.
pub const LESS: u32 = 1;
/// Keep `x == value`.
pub const EQUAL: u32 = 2;
/// Keep `x != value`.
pub const NOT_EQUAL: u32 = 3;

/// Whether `rule` keeps `x` against `value`.
#[inline(always)]
pub fn keeps<T: PartialOrd>(rule: u32, x: T, value: T) -> bool {
    match rule {
        GREATER => x > value,
        LESS => x < value,
        EQUAL => x == value,
        _ => x != value,
    }
}

/// Dynamic shared memory of the select kernels: the look-back's
/// ([`lookback_shared_bytes`]), then a tile's kept elements, staged.
pub const fn select_shared_bytes(threads_per_block: u32) -> u32 {
    lookback_shared_bytes(threads_per_block).saturating_add(threads_per_block.saturating_mul(ITEMS as u32 * 4))
}

/// What a select kernel's block works with: the block, its warps, the
/// block scan's scratch, the look-back's words after it, the staged kept
/// elements after those, and the thread's rank.
pub(crate) struct Parts<T> {
    pub(crate) block: ThreadBlock,
    pub(crate) tile: ThreadBlockTile<32>,
    pub(crate) scratch: DynamicShared<u32>,
    pub(crate) words: DynamicShared<u32>,
    pub(crate) staged: DynamicShared<T>,
    pub(crate) t: usize,
}

/// The block's [`Parts`], laid out as [`select_shared_bytes`] sizes them.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub(crate) fn parts<T: Value>() -> Parts<T> {
    let block = this_thread_block();
    let tile = tiled_partition::<32>(&block);
    let scratch = dynamic_shared::<u32>();
    let words = scratch.after::<u32>(block_scratch_bytes::<u32>(block.num_threads(), 32) as usize / 4);
    let staged = words.after::<T>(crate::lookback::WORDS as usize);
    let t = block.thread_rank() as usize;
    Parts { block, tile, scratch, words, staged, t }
}

/// What a selection keeps: with `flags` the elements whose flag is not 0,
/// else those `rule` keeps against `value`.
#[derive(Clone, Copy)]
struct Keep<T> {
    flags: Option<In<u8>>,
    rule: u32,
    value: T,
}

/// Thread `t`'s 16 elements of tile `k`, and the mask of those kept.
///
/// # Safety
/// `x` (and `keep.flags`) hold `n` elements from a 16-byte-aligned start.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
unsafe fn load_kept<T: Value>(x: In<T>, k: usize, t: usize, n: usize, keep: Keep<T>) -> ([T; ITEMS], u32) {
    let i = k * TILE_LEN + t * ITEMS;
    // SAFETY: x holds n elements from an aligned start; i is a multiple of 16.
    let v = unsafe { load(x, i, n, T::from_bits64(0)) };
    let mask = match keep.flags {
        // SAFETY: flags holds n bytes from an aligned start, and i is a
        // multiple of ITEMS, 16 (the caller's contract).
        Some(flags) => unsafe { flag_mask(flags, i, n) },
        None => {
            let mut mask = 0u32;
            unroll16!(j => {
                mask |= u32::from(i + j < n && keeps(keep.rule, v[j], keep.value)) << j;
            });
            mask
        }
    };
    (v, mask)
}

/// The kept elements of the block's tile counted and scanned across the
/// block, and staged in shared memory in their order, so that the block
/// writes them to `y` in consecutive addresses (CUB's
/// `BlockExchange::ScatterToStriped` before its stores) while warp 0 looks
/// back. Returns how many the tile keeps.
///
/// # Safety
/// Every thread of the block calls it, outside any branch; the shared
/// memory is laid out as [`select_shared_bytes`] sizes it; no thread reads
/// the staged elements of an earlier tile after this call's block scan.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
#[allow(unused_assignments)] // the last unrolled step's `w += 1`
pub(crate) unsafe fn stage_kept<T: Value>(parts: &Parts<T>, v: &[T; ITEMS], mask: u32) -> u32 {
    // SAFETY: the caller's contract; the scratch is the block scan's.
    let (below, total) = unsafe { block_exclusive_scan(&parts.block, &parts.tile, mask.count_ones(), Plus, parts.scratch) };
    let mut w = below as usize;
    unroll16!(j => {
        if mask & (1 << j) != 0 {
            // SAFETY: w < total <= TILE_LEN, inside select_shared_bytes;
            // each kept element has its own w.
            unsafe { parts.staged.write(w, v[j]) };
            w += 1;
        }
    });
    total
}

/// The tile's `total` staged elements written to `y` from `before`, the
/// block's threads striding over them; the last tile's thread 0 writes the
/// count of every kept element to `count[0]`.
///
/// # Safety
/// A `block.sync()` since [`stage_kept`]; `y` holds at least
/// `before + total` elements and those are this block's alone.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub(crate) unsafe fn write_kept<T: Value>(parts: &Parts<T>, y: Out<T>, count: Out<u32>, last: bool, before: u32, total: u32) {
    let threads = parts.block.num_threads() as usize;
    let mut c = parts.t;
    while c < total as usize {
        // SAFETY: staged[c] was written before the barrier; y's element
        // before + c is below the count of kept elements, at most n, and
        // this thread's alone.
        unsafe { y.write(before as usize + c, parts.staged.read(c)) };
        c += threads;
    }
    if last && parts.t == 0 {
        // SAFETY: one element, written by this thread alone.
        unsafe { count.write(0, before + total) };
    }
}

/// One tile of a selection: loaded, the kept elements counted and scanned
/// across the block, offset by the look-back's prefix, and written; the
/// last tile writes the total to `count[0]`.
///
/// # Safety
/// As each one-tile select kernel's.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
#[allow(clippy::too_many_arguments)] // a kernel's parameters, passed on
unsafe fn select_tile<T: Value>(x: In<T>, y: Out<T>, count: Out<u32>, status: Out<u64>, ticket: Out<u32>, epoch: u32, n: usize, keep: Keep<T>) {
    let parts = parts::<T>();
    let tiles = n.div_ceil(TILE_LEN);
    // SAFETY (take_tile, stage_kept, look_back): every thread of the block
    // calls each once, outside any branch; the kernel's contract gives the
    // ticket, the statuses, the epoch and the shared memory's layout.
    let k = unsafe { take_tile(&parts.block, ticket, tiles, parts.words) };
    // SAFETY: the kernel's contract.
    let (v, mask) = unsafe { load_kept(x, k, parts.t, n, keep) };
    // SAFETY: as above; nothing was staged before.
    let total = unsafe { stage_kept(&parts, &v, mask) };
    // SAFETY: as above; its closing block.sync() orders the staged writes
    // before write_kept's reads.
    let before = unsafe { look_back(&parts.block, status, k, epoch, total, Plus, parts.words) };
    // SAFETY: as above; the tiles' kept elements are disjoint.
    unsafe { write_kept(&parts, y, count, k + 1 == tiles, before, total) };
}

/// The selection by blocks that loop (as [`crate::scan`]'s persistent
/// scans): each block takes tiles by ticket until none is left, and loads
/// its next tile while warp 0 waits on the look-back for the one it holds;
/// each tile as [`select_tile`] does it.
///
/// # Safety
/// As each persistent select kernel's.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
#[allow(clippy::too_many_arguments)] // a kernel's parameters, passed on
unsafe fn select_tiles_persistent<T: Value>(x: In<T>, y: Out<T>, count: Out<u32>, status: Out<u64>, ticket: Out<u32>, epoch: u32, n: usize, keep: Keep<T>) {
    let parts = parts::<T>();
    let tiles = n.div_ceil(TILE_LEN);
    // Each block takes every tile it selects from, then one ticket past the
    // last tile, which ends its loop.
    let tickets = tiles + this_grid().num_blocks();
    // SAFETY (take_tile, stage_kept, publish_total, wait_for_prefix): every
    // thread of the block calls each, outside any branch but the loop's,
    // whose condition is the block's ticket (the same in every thread); the
    // kernel's contract gives the ticket, the statuses, the epoch and the
    // shared memory's layout; each tile is published before its block takes
    // another; a tile's staged elements are read before the next tile's
    // block scan, whose barriers every thread passes before it stages.
    let mut k = unsafe { take_tile(&parts.block, ticket, tickets, parts.words) };
    if k >= tiles {
        return;
    }
    // SAFETY: the kernel's contract.
    let (mut v, mut mask) = unsafe { load_kept(x, k, parts.t, n, keep) };
    loop {
        // SAFETY: as above.
        let total = unsafe { stage_kept(&parts, &v, mask) };
        // SAFETY: as above.
        unsafe { publish_total(&parts.block, status, k, epoch, total) };
        // SAFETY: as above.
        let next = unsafe { take_tile(&parts.block, ticket, tickets, parts.words) };
        // The next tile's loads, in flight while warp 0 looks back.
        // SAFETY: the kernel's contract.
        let (w, wmask) = if next < tiles { unsafe { load_kept(x, next, parts.t, n, keep) } } else { ([T::from_bits64(0); ITEMS], 0) };
        // SAFETY: as above; its closing block.sync() orders the staged
        // writes before write_kept's reads.
        let before = unsafe { wait_for_prefix(&parts.block, status, k, epoch, total, Plus, parts.words) };
        // SAFETY: as above; the tiles' kept elements are disjoint.
        unsafe { write_kept(&parts, y, count, k + 1 == tiles, before, total) };
        if next >= tiles {
            return;
        }
        (k, v, mask) = (next, w, wmask);
    }
}

/// The mask of `flags[i..i + ITEMS]` that are not 0, none past `n`.
///
/// # Safety
/// `flags` holds `n` bytes from a 16-byte-aligned start, and `i` is a multiple of 16.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
unsafe fn flag_mask(flags: In<u8>, i: usize, n: usize) -> u32 {
    let mut mask = 0u32;
    if i + ITEMS <= n {
        // SAFETY: in bounds, and 16-byte aligned (the contract).
        let f: [u8; ITEMS] = unsafe { flags.read_vector::<16>(i) };
        for (j, &f) in f.iter().enumerate() {
            mask |= u32::from(f != 0) << j;
        }
    } else {
        for j in 0..ITEMS {
            // SAFETY: below n.
            if i + j < n && unsafe { flags.read(i + j) } != 0 {
                mask |= 1 << j;
            }
        }
    }
    mask
}

/// One select-if and one select-flagged kernel per element type, each with
/// one tile per block and with blocks that loop.
macro_rules! selections {
    ($($if_name:ident, $flagged_name:ident, $pif_name:ident, $pflagged_name:ident: $t:ty;)*) => {$(
        #[doc = concat!("`y[..count[0]]` = the elements of `x` (`", stringify!($t), "`) that `rule` keeps against `value` ([`GREATER`], [`LESS`], [`EQUAL`], [`NOT_EQUAL`]), in order, in one launch by decoupled look-back.")]
        ///
        /// # Safety
        /// `x` and `y` hold `n` elements, each 16-byte aligned; `count`
        /// holds one; the grid has one block of [`THREADS`](crate::THREADS)
        /// threads per tile of [`TILE_LEN`](crate::TILE_LEN) elements and
        /// [`select_shared_bytes`] of shared memory; `status` holds one
        /// word per tile, none of `epoch`, which is in `1..EPOCHS`;
        /// `ticket[0]` is 0; no other launch uses `status` or `ticket`
        /// meanwhile; `n` is below 2^32.
        #[kernel(shared_memory = select_shared_bytes)]
        pub unsafe fn $if_name(x: In<$t>, y: Out<$t>, count: Out<u32>, status: Out<u64>, ticket: Out<u32>, epoch: u32, rule: u32, value: $t, n: usize) {
            // SAFETY: the kernel's contract.
            unsafe { select_tile::<$t>(x, y, count, status, ticket, epoch, n, Keep { flags: None, rule, value }) }
        }

        #[doc = concat!("`y[..count[0]]` = the elements of `x` (`", stringify!($t), "`) whose byte in `flags` is not 0, in order, in one launch by decoupled look-back.")]
        ///
        /// # Safety
        /// As the select-if kernel of the same type, and `flags` holds `n`
        /// bytes from a 16-byte-aligned start.
        #[kernel(shared_memory = select_shared_bytes)]
        pub unsafe fn $flagged_name(x: In<$t>, flags: In<u8>, y: Out<$t>, count: Out<u32>, status: Out<u64>, ticket: Out<u32>, epoch: u32, n: usize) {
            // SAFETY: the kernel's contract.
            unsafe { select_tile::<$t>(x, y, count, status, ticket, epoch, n, Keep { flags: Some(flags), rule: 0, value: <$t as cg_kernel::mem::Word>::from_bits64(0) }) }
        }

        #[doc = concat!("As [`", stringify!($if_name), "`], by blocks that each select from tiles until none is left, loading the next while they wait on the look-back.")]
        ///
        /// # Safety
        #[doc = concat!("As [`", stringify!($if_name), "`]'s, but the grid has at least one block of [`THREADS`](crate::THREADS) threads, any number of them.")]
        #[kernel(shared_memory = select_shared_bytes)]
        pub unsafe fn $pif_name(x: In<$t>, y: Out<$t>, count: Out<u32>, status: Out<u64>, ticket: Out<u32>, epoch: u32, rule: u32, value: $t, n: usize) {
            // SAFETY: the kernel's contract.
            unsafe { select_tiles_persistent::<$t>(x, y, count, status, ticket, epoch, n, Keep { flags: None, rule, value }) }
        }

        #[doc = concat!("As [`", stringify!($flagged_name), "`], by blocks that each select from tiles until none is left, loading the next while they wait on the look-back.")]
        ///
        /// # Safety
        #[doc = concat!("As [`", stringify!($flagged_name), "`]'s, but the grid has at least one block of [`THREADS`](crate::THREADS) threads, any number of them.")]
        #[kernel(shared_memory = select_shared_bytes)]
        pub unsafe fn $pflagged_name(x: In<$t>, flags: In<u8>, y: Out<$t>, count: Out<u32>, status: Out<u64>, ticket: Out<u32>, epoch: u32, n: usize) {
            // SAFETY: the kernel's contract.
            unsafe { select_tiles_persistent::<$t>(x, y, count, status, ticket, epoch, n, Keep { flags: Some(flags), rule: 0, value: <$t as cg_kernel::mem::Word>::from_bits64(0) }) }
        }
    )*};
}

// The GPU entries only where this crate is built for its own PTX (the
// feature `gpu-entries`, on by default), not inside a crate that stamps its
// own operator's kernels (`operator_kernels!`).
#[cfg(any(not(target_arch = "nvptx64"), feature = "gpu-entries"))]
selections! {
    select_if_f32, select_flagged_f32, persistent_select_if_f32, persistent_select_flagged_f32: f32;
    select_if_i32, select_flagged_i32, persistent_select_if_i32, persistent_select_flagged_i32: i32;
    select_if_u32, select_flagged_u32, persistent_select_if_u32, persistent_select_flagged_u32: u32;
}
