//! Inclusive and exclusive scans in one ordinary launch by decoupled
//! look-back ([`crate::lookback`]), CUB's `DeviceScan::InclusiveScan` and
//! `ExclusiveScan`: each element read once and written once.

use crate::lookback::{WORDS, look_back, take_tile};
use crate::{ITEMS, TILE_LEN, Value, load, store};
use cg_kernel::cg::{Greater, Less, Plus, ReduceOp, block_exclusive_scan, block_scratch_bytes, this_thread_block, tiled_partition};
use cg_kernel::kernel;
use cg_kernel::mem::{In, Out, dynamic_shared};

/// Dynamic shared memory of the scan and select kernels: the block scan's
/// scratch (one 4-byte word per warp), then the look-back's words.
pub const fn lookback_shared_bytes(threads_per_block: u32) -> u32 {
    block_scratch_bytes::<u32>(threads_per_block, 32).saturating_add(4 * WORDS)
}

/// One tile of the scan: loaded, scanned in each thread and across the
/// block, offset by the look-back's prefix, and stored.
///
/// # Safety
/// As each scan kernel's.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
unsafe fn scan_tile<T: Value, Op: ReduceOp<T>, const INCLUSIVE: bool>(x: In<T>, y: Out<T>, status: Out<u64>, ticket: Out<u32>, epoch: u32, n: usize, op: Op) {
    let block = this_thread_block();
    let tile = tiled_partition::<32>(&block);
    let scratch = dynamic_shared::<T>();
    let words = scratch.after::<u32>(block_scratch_bytes::<T>(block.num_threads(), 32) as usize / 4);
    let t = block.thread_rank() as usize;
    // SAFETY (take_tile, look_back, the block scan): every thread of the
    // block calls each once, outside any branch; the kernel's contract gives
    // the ticket, the statuses and the epoch; the scratch is the block
    // scan's, the words after it the look-back's (lookback_shared_bytes).
    let k = unsafe { take_tile(&block, ticket, n.div_ceil(TILE_LEN), words) };
    let i = k * TILE_LEN + t * ITEMS;
    // SAFETY: x holds n elements from an aligned start; i is a multiple of 4.
    let mut v = unsafe { load(x, i, n, Op::identity()) };
    for j in 1..ITEMS {
        v[j] = Op::combine(v[j - 1], v[j]);
    }
    // SAFETY: as above.
    let (below, total) = unsafe { block_exclusive_scan(&block, &tile, v[ITEMS - 1], op, scratch) };
    // SAFETY: as above.
    let before = unsafe { look_back(&block, status, k, epoch, total, op, words) };
    let start = Op::combine(before, below);
    let out = if INCLUSIVE {
        v.map(|s| Op::combine(start, s))
    } else {
        let mut e = [start; ITEMS];
        for j in 1..ITEMS {
            e[j] = Op::combine(start, v[j - 1]);
        }
        e
    };
    // SAFETY: y holds n elements from an aligned start; the tiles and the
    // threads' ITEMS are disjoint.
    unsafe { store(y, i, n, out) };
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
