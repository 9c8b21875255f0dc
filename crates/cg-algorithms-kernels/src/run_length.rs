//! Run-length encoding, CUB's `DeviceRunLengthEncode::Encode`, out of the
//! selection's machinery ([`crate::select`]): the first launch selects the
//! index of every run's first element (a head: the first element, or one
//! that differs from the element before it), in order, by decoupled
//! look-back; the second takes each run's value from its head and its
//! length from the next head (or `n`).

use crate::lookback::{look_back, take_tile};
use crate::select::{parts, select_shared_bytes, stage_kept, write_kept};
use crate::{ITEMS, TILE_LEN, Value, load};
use cg_kernel::cg::{Plus, this_grid};
use cg_kernel::kernel;
use cg_kernel::mem::{In, Out};

/// One tile of the heads' selection: thread `t`'s 16 elements loaded, each
/// compared with the one before it (the element before the thread's first
/// read from `x`), the heads' indices counted, scanned across the block,
/// offset by the look-back's prefix and written to `heads`; the last tile
/// writes how many to `count[0]`.
///
/// # Safety
/// As each run-heads kernel's.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
#[allow(unused_assignments)] // the last unrolled step's `before`
unsafe fn heads_tile<T: Value>(x: In<T>, heads: Out<u32>, count: Out<u32>, status: Out<u64>, ticket: Out<u32>, epoch: u32, n: usize) {
    let parts = parts::<u32>();
    let tiles = n.div_ceil(TILE_LEN);
    // SAFETY (take_tile, stage_kept, look_back): every thread of the block
    // calls each once, outside any branch; the kernel's contract gives the
    // ticket, the statuses, the epoch and the shared memory's layout.
    let k = unsafe { take_tile(&parts.block, ticket, tiles, parts.words) };
    let i = k * TILE_LEN + parts.t * ITEMS;
    // SAFETY: x holds n elements from an aligned start; i is a multiple of 16.
    let v = unsafe { load(x, i, n, T::from_bits64(0)) };
    // SAFETY: i - 1 < n where i < n, read only then.
    let mut before = if i > 0 && i < n { unsafe { x.read(i - 1) } } else { v[0] };
    let mut mask = 0u32;
    let mut index = [0u32; ITEMS];
    unroll16!(j => {
        let head = i + j < n && (i + j == 0 || v[j] != before);
        mask |= u32::from(head) << j;
        index[j] = (i + j) as u32;
        before = v[j];
    });
    // SAFETY: as above; nothing was staged before.
    let total = unsafe { stage_kept(&parts, &index, mask) };
    // SAFETY: as above; its closing block.sync() orders the staged writes
    // before write_kept's reads.
    let prefix = unsafe { look_back(&parts.block, status, k, epoch, total, Plus, parts.words) };
    // SAFETY: as above; the tiles' heads are disjoint, and at most n.
    unsafe { write_kept(&parts, heads, count, k + 1 == tiles, prefix, total) };
}

/// The runs' values and lengths from their heads: `unique[r] =
/// x[heads[r]]`, `lengths[r] = heads[r + 1] - heads[r]` (`n - heads[r]`
/// for the last), for every run `r < count[0]`, by a grid-stride loop.
///
/// # Safety
/// As each run-lengths kernel's.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
unsafe fn runs_from_heads<T: Value>(x: In<T>, heads: In<u32>, count: In<u32>, unique: Out<T>, lengths: Out<u32>, n: usize) {
    let grid = this_grid();
    // SAFETY: count holds one element, written by the heads' launch before this one.
    let runs = unsafe { count.read(0) } as usize;
    let mut r = grid.thread_rank() as usize;
    while r < runs {
        // SAFETY: r < runs <= n: heads holds runs indices, each below n;
        // unique and lengths hold n elements, element r this thread's alone.
        unsafe {
            let head = heads.read(r) as usize;
            let end = if r + 1 < runs { heads.read(r + 1) as usize } else { n };
            unique.write(r, x.read(head));
            lengths.write(r, (end - head) as u32);
        }
        r += grid.num_threads() as usize;
    }
}

/// One run-heads and one run-lengths kernel per element type.
macro_rules! run_length_kernels {
    ($($heads:ident, $runs:ident: $t:ty;)*) => {$(
        #[doc = concat!("`heads[..count[0]]` = the index of each run's first element of `x` (`", stringify!($t), "`: the first element, and each that differs from the one before it), in order, in one launch by decoupled look-back.")]
        ///
        /// # Safety
        /// `x` holds `n` elements from a 16-byte-aligned start and `heads`
        /// `n`; `count` holds one; the grid has one block of
        /// [`THREADS`](crate::THREADS) threads per tile of
        /// [`TILE_LEN`](crate::TILE_LEN) elements and [`select_shared_bytes`]
        /// of shared memory; `status` holds one word per tile, none of
        /// `epoch`, which is in `1..EPOCHS`; `ticket[0]` is 0; no other
        /// launch uses `status` or `ticket` meanwhile; `n` is below 2^32.
        #[kernel(shared_memory = select_shared_bytes)]
        pub unsafe fn $heads(x: In<$t>, heads: Out<u32>, count: Out<u32>, status: Out<u64>, ticket: Out<u32>, epoch: u32, n: usize) {
            // SAFETY: the kernel's contract.
            unsafe { heads_tile::<$t>(x, heads, count, status, ticket, epoch, n) }
        }

        #[doc = concat!("`unique[..runs]` and `lengths[..runs]`, `runs = count[0]`: each run's value (`", stringify!($t), "`) and length, from the heads [`", stringify!($heads), "`] found.")]
        ///
        /// # Safety
        /// `x` holds `n` elements; `heads` holds `count[0]` indices, the
        /// heads of `x`'s runs in order (the heads kernel's output, ordered
        /// before this launch); `unique` and `lengths` hold `n` elements.
        #[kernel]
        pub unsafe fn $runs(x: In<$t>, heads: In<u32>, count: In<u32>, unique: Out<$t>, lengths: Out<u32>, n: usize) {
            // SAFETY: the kernel's contract.
            unsafe { runs_from_heads::<$t>(x, heads, count, unique, lengths, n) }
        }
    )*};
}

// The GPU entries only where this crate is built for its own PTX (see
// `crate::reduce`'s kernels).
#[cfg(any(not(target_arch = "nvptx64"), feature = "gpu-entries"))]
run_length_kernels! {
    run_heads_f32, run_lengths_f32: f32;
    run_heads_i32, run_lengths_i32: i32;
    run_heads_u32, run_lengths_u32: u32;
}
