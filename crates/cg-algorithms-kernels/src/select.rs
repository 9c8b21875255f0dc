//! Stream compaction in one ordinary launch by decoupled look-back
//! ([`crate::lookback`]) over the kept counts, CUB's `DeviceSelect::If`
//! and `DeviceSelect::Flagged`: each element read once, the kept ones
//! written once, in their order.

use crate::lookback::{look_back, take_tile};
use crate::scan::lookback_shared_bytes;
use crate::{ITEMS, TILE_LEN, Value, load};
use cg_kernel::cg::{Plus, block_exclusive_scan, block_scratch_bytes, this_thread_block, tiled_partition};
use cg_kernel::kernel;
use cg_kernel::mem::{In, Out, dynamic_shared};

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

/// One tile of a selection: loaded, the kept elements counted and scanned
/// across the block, offset by the look-back's prefix, and written; the
/// last tile writes the total to `count[0]`. With `flags` the elements
/// whose flag is not 0 are kept, else those `rule` keeps against `value`.
///
/// # Safety
/// As each select kernel's.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
#[allow(unused_assignments)] // the last unrolled step's `w += 1`
#[allow(clippy::too_many_arguments)] // a kernel's parameters, passed on
unsafe fn select_tile<T: Value>(
    x: In<T>,
    y: Out<T>,
    count: Out<u32>,
    status: Out<u64>,
    ticket: Out<u32>,
    epoch: u32,
    n: usize,
    flags: Option<In<u8>>,
    rule: u32,
    value: T,
) {
    let block = this_thread_block();
    let tile = tiled_partition::<32>(&block);
    let scratch = dynamic_shared::<u32>();
    let words = scratch.after::<u32>(block_scratch_bytes::<u32>(block.num_threads(), 32) as usize / 4);
    let t = block.thread_rank() as usize;
    let tiles = n.div_ceil(TILE_LEN);
    // SAFETY (take_tile, look_back, the block scan): every thread of the
    // block calls each once, outside any branch; the kernel's contract gives
    // the ticket, the statuses and the epoch; the scratch is the block
    // scan's, the words after it the look-back's (lookback_shared_bytes).
    let k = unsafe { take_tile(&block, ticket, tiles, words) };
    let i = k * TILE_LEN + t * ITEMS;
    // SAFETY: x holds n elements from an aligned start; i is a multiple of 4.
    let v = unsafe { load(x, i, n, T::from_bits64(0)) };
    let mask = match flags {
        // SAFETY: flags holds n bytes from an aligned start, and i is a
        // multiple of ITEMS, 16 (the kernel's contract).
        Some(flags) => unsafe { flag_mask(flags, i, n) },
        None => {
            let mut mask = 0u32;
            unroll16!(j => {
                mask |= u32::from(i + j < n && keeps(rule, v[j], value)) << j;
            });
            mask
        }
    };
    // SAFETY: as above.
    let (below, total) = unsafe { block_exclusive_scan(&block, &tile, mask.count_ones(), Plus, scratch) };
    // The kept elements staged in shared memory in their order, so that
    // the block writes them to `y` in consecutive addresses (CUB's
    // `BlockExchange::ScatterToStriped` before its stores) while warp 0
    // looks back.
    let staged = words.after::<T>(crate::lookback::WORDS as usize);
    let mut w = below as usize;
    unroll16!(j => {
        if mask & (1 << j) != 0 {
            // SAFETY: w < total <= TILE_LEN, inside select_shared_bytes;
            // each kept element has its own w.
            unsafe { staged.write(w, v[j]) };
            w += 1;
        }
    });
    // SAFETY: as above; its closing block.sync() orders the staged writes
    // before the reads below.
    let before = unsafe { look_back(&block, status, k, epoch, total, Plus, words) };
    let threads = block.num_threads() as usize;
    let mut c = t;
    while c < total as usize {
        // SAFETY: staged[c] was written before the barrier; y's element
        // before + c is below the count of kept elements, at most n, and
        // this thread's alone.
        unsafe { y.write(before as usize + c, staged.read(c)) };
        c += threads;
    }
    if k + 1 == tiles && t == 0 {
        // SAFETY: one element, written by this thread alone.
        unsafe { count.write(0, before + total) };
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

/// One select-if and one select-flagged kernel per element type.
macro_rules! selections {
    ($($if_name:ident, $flagged_name:ident: $t:ty;)*) => {$(
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
            unsafe { select_tile::<$t>(x, y, count, status, ticket, epoch, n, None, rule, value) }
        }

        #[doc = concat!("`y[..count[0]]` = the elements of `x` (`", stringify!($t), "`) whose byte in `flags` is not 0, in order, in one launch by decoupled look-back.")]
        ///
        /// # Safety
        /// As the select-if kernel of the same type, and `flags` holds `n`
        /// bytes from a 16-byte-aligned start.
        #[kernel(shared_memory = select_shared_bytes)]
        pub unsafe fn $flagged_name(x: In<$t>, flags: In<u8>, y: Out<$t>, count: Out<u32>, status: Out<u64>, ticket: Out<u32>, epoch: u32, n: usize) {
            // SAFETY: the kernel's contract.
            unsafe { select_tile::<$t>(x, y, count, status, ticket, epoch, n, Some(flags), 0, <$t as cg_kernel::mem::Word>::from_bits64(0)) }
        }
    )*};
}

selections! {
    select_if_f32, select_flagged_f32: f32;
    select_if_i32, select_flagged_i32: i32;
    select_if_u32, select_flagged_u32: u32;
}
