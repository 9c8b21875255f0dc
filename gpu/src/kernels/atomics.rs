//! Atomics (`atomicAdd` and the rest) on global and shared memory.
//!
//! - [`histogram_bytes`]: 256 bins of bytes, the shared-memory histogram:
//!   each block counts its bytes with `atomicAdd` on its own bins in shared
//!   memory, then adds each bin to the grid's with one global `atomicAdd`.
//! - (with the feature `probes`, for the tests) every atomic operation on
//!   every type that has it, in both memories, with each scope and order
//!   somewhere: `atomics_u32` and the rest; `host/tests/types_atomics.rs`
//!   checks them on the emulator and on a GPU, and `host/tests/ptx.rs`
//!   counts one `atom` per call.

use crate::cg::{this_grid, this_thread_block};
use crate::kernel;
use crate::mem::{In, Out, dynamic_shared};

/// Bins of [`histogram_bytes`]: one per byte value.
pub const HISTOGRAM_BINS: usize = 256;

/// The histogram's shared memory: its bins, one `u32` each.
pub const fn histogram_shared_bytes(_threads_per_block: u32, _tile: u32) -> u32 {
    HISTOGRAM_BINS as u32 * 4
}

/// `bins[b] += ` the number of bytes of `data` that equal `b`: each block
/// counts its share in its own 256 bins of shared memory, then adds each
/// bin to `bins` with one global atomic (CUDA's histogram with shared
/// atomics, `atomicAdd(&smem[data[i]], 1)`). `bins` starts zeroed; any grid
/// and block size.
///
/// # Safety
/// `data` holds `n` bytes and `bins` [`HISTOGRAM_BINS`] counts.
#[kernel(shared_memory = histogram_shared_bytes)]
pub unsafe fn histogram_bytes<const TILE: u32 = 32>(data: In<u8>, bins: Out<u32>, n: usize) {
    let grid = this_grid();
    let block = this_thread_block();
    let counts = dynamic_shared::<u32>();
    let mut b = block.thread_rank() as usize;
    while b < HISTOGRAM_BINS {
        // SAFETY: HISTOGRAM_BINS counts of shared memory; this thread alone writes bin b.
        unsafe { counts.write(b, 0) };
        b += block.num_threads() as usize;
    }
    // The bins are zero before any thread counts into them.
    block.sync();
    let mut i = grid.thread_rank();
    while i < n {
        // SAFETY: i < n; a byte indexes one of the 256 bins, which only atomics touch until the barrier.
        unsafe { counts.atomic_add(data.read(i) as usize, 1) };
        i += grid.num_threads();
    }
    // Every count of this block is in before any thread reads one.
    block.sync();
    let mut b = block.thread_rank() as usize;
    while b < HISTOGRAM_BINS {
        // SAFETY: bin b of both; other blocks touch bins[b] only atomically too.
        unsafe {
            let count = counts.read(b);
            if count > 0 {
                bins.atomic_add(b, count);
            }
        }
        b += block.num_threads() as usize;
    }
}

#[cfg(feature = "probes")]
pub use probes::*;

/// Every atomic of every type, for the tests.
#[cfg(feature = "probes")]
mod probes {
    use super::*;
    use crate::mem::{MemoryOrder, Scope};

    /// Slots each integer atomics kernel updates, in global memory and in
    /// each block's shared memory: add, sub, min, max, exch, cas, and, or, xor.
    pub const INTEGER_SLOTS: usize = 9;

    /// Bytes of shared memory for [`INTEGER_SLOTS`] elements of 8 bytes, and for [`FLOAT_SLOTS`].
    pub const fn atomic_slots(_threads_per_block: u32, _tile: u32) -> u32 {
        INTEGER_SLOTS as u32 * 8
    }

    macro_rules! integer_atomics {
        ($($name:ident: $t:ty),*) => {$(
            /// Every integer atomic by every thread `r` of the grid (value
            /// `v = r - grid threads / 2`, bit `r % bits`), on `out` in
            /// global memory: `out[0] += 1`, `out[1] -= 1`, `out[2] = min(v)`,
            /// `out[3] = max(v)`, `out[4]` exchanged for `r + 1` (the old
            /// value in `olds[r]`), `out[5]` compared-and-swapped from 0 to
            /// `r + 1` (the old value in `olds[threads + r]`), `out[6] &= !bit`,
            /// `out[7] |= bit`, `out[8] ^= bit`; then the same with block
            /// ranks on each block's shared memory (zero but `MAX`, `MIN`
            /// and all ones for min, max and and), which the block writes to
            /// `blocks[9 * block..]`. Each scope and order is used somewhere.
            ///
            /// # Safety
            /// `out` holds [`INTEGER_SLOTS`], `olds` two per thread of the
            /// grid, `blocks` [`INTEGER_SLOTS`] per block.
            #[kernel(shared_memory = atomic_slots)]
            pub unsafe fn $name<const TILE: u32 = 32>(out: Out<$t>, olds: Out<$t>, blocks: Out<$t>) {
                let grid = this_grid();
                let block = this_thread_block();
                let (r, threads) = (grid.thread_rank(), grid.num_threads());
                let v = (r as $t).wrapping_sub((threads / 2) as $t);
                let bit: $t = 1 << (r % <$t>::BITS as usize);
                let one = (r as $t).wrapping_add(1);
                // SAFETY: the slots are in bounds, touched only atomically in this launch;
                // olds[r] and olds[threads + r] are this thread's.
                unsafe {
                    out.atomic_add(0, 1);
                    out.atomic_sub_explicit(1, 1, Scope::Device, MemoryOrder::AcqRel);
                    out.atomic_min_explicit(2, v, Scope::System, MemoryOrder::Release);
                    out.atomic_max_explicit(3, v, Scope::Device, MemoryOrder::Acquire);
                    olds.write(r, out.atomic_exch(4, one));
                    olds.write(threads + r, out.atomic_cas(5, 0, one));
                    out.atomic_and(6, !bit);
                    out.atomic_or_explicit(7, bit, Scope::System, MemoryOrder::Relaxed);
                    out.atomic_xor(8, bit);
                }
                let s = dynamic_shared::<$t>();
                let t = block.thread_rank() as usize;
                if t == 0 {
                    // SAFETY: INTEGER_SLOTS elements of shared memory; thread 0 alone, before the barrier.
                    unsafe {
                        for k in 0..INTEGER_SLOTS {
                            s.write(k, 0);
                        }
                        s.write(2, <$t>::MAX);
                        s.write(3, <$t>::MIN);
                        s.write(6, !0);
                    }
                }
                block.sync();
                let (v, bit, one) = ((t as $t).wrapping_sub((block.num_threads() / 2) as $t), (1 as $t) << (t % <$t>::BITS as usize), (t as $t).wrapping_add(1));
                // SAFETY: the slots, touched only atomically between the two barriers.
                unsafe {
                    s.atomic_add_explicit(0, 1, Scope::Block, MemoryOrder::Relaxed);
                    s.atomic_sub(1, 1);
                    s.atomic_min_explicit(2, v, Scope::Block, MemoryOrder::AcqRel);
                    s.atomic_max(3, v);
                    s.atomic_exch_explicit(4, one, Scope::Block, MemoryOrder::Release);
                    s.atomic_cas_explicit(5, 0, one, Scope::Block, MemoryOrder::Acquire);
                    s.atomic_and_explicit(6, !bit, Scope::Block, MemoryOrder::Relaxed);
                    s.atomic_or(7, bit);
                    s.atomic_xor_explicit(8, bit, Scope::Device, MemoryOrder::Relaxed);
                }
                block.sync();
                if t < INTEGER_SLOTS {
                    let b = block.group_index().x as usize;
                    // SAFETY: INTEGER_SLOTS per block; after the barrier.
                    unsafe { blocks.write(INTEGER_SLOTS * b + t, s.read(t)) };
                }
            }
        )*};
    }
    integer_atomics!(atomics_u32: u32, atomics_i32: i32, atomics_u64: u64, atomics_i64: i64);

    /// Slots each float atomics kernel updates: add 0.5, sub 0.25, exch,
    /// cas, add `1 / (r + 1)`, and thread 0's add of a subnormal.
    pub const FLOAT_SLOTS: usize = 6;

    macro_rules! float_atomics {
        ($($name:ident: $t:ty),*) => {$(
            /// The float atomics by every thread `r` of the grid, on `out`:
            /// `out[0] += 0.5`, `out[1] -= 0.25`, `out[2]` exchanged for
            /// `r + 1` (the old value in `olds[r]`), `out[3]` compared-and-swapped
            /// from 0 to `r + 1` (the old value in `olds[threads + r]`),
            /// `out[4] += 1 / (r + 1)`, and thread 0's `out[5] += MIN_POSITIVE / 2`
            /// (a subnormal); then the same with block ranks in each block's
            /// shared memory (zeroed), which the block writes to `blocks[6 * block..]`.
            ///
            /// # Safety
            /// `out` holds [`FLOAT_SLOTS`], `olds` two per thread of the grid,
            /// `blocks` [`FLOAT_SLOTS`] per block.
            #[kernel(shared_memory = atomic_slots)]
            pub unsafe fn $name<const TILE: u32 = 32>(out: Out<$t>, olds: Out<$t>, blocks: Out<$t>) {
                let grid = this_grid();
                let block = this_thread_block();
                let (r, threads) = (grid.thread_rank(), grid.num_threads());
                let one = r as $t + 1.0;
                // SAFETY: the slots are in bounds, touched only atomically in this launch;
                // olds[r] and olds[threads + r] are this thread's.
                unsafe {
                    out.atomic_add(0, 0.5);
                    out.atomic_sub_explicit(1, 0.25, Scope::Device, MemoryOrder::AcqRel);
                    olds.write(r, out.atomic_exch_explicit(2, one, Scope::System, MemoryOrder::Relaxed));
                    olds.write(threads + r, out.atomic_cas(3, 0.0, one));
                    out.atomic_add_explicit(4, 1.0 / one, Scope::Device, MemoryOrder::Release);
                    if r == 0 {
                        out.atomic_add(5, <$t>::MIN_POSITIVE / 2.0);
                    }
                }
                let s = dynamic_shared::<$t>();
                let t = block.thread_rank() as usize;
                if t == 0 {
                    for k in 0..FLOAT_SLOTS {
                        // SAFETY: FLOAT_SLOTS elements of shared memory; thread 0 alone, before the barrier.
                        unsafe { s.write(k, 0.0) };
                    }
                }
                block.sync();
                let one = t as $t + 1.0;
                // SAFETY: the slots, touched only atomically between the two barriers.
                unsafe {
                    s.atomic_add_explicit(0, 0.5, Scope::Block, MemoryOrder::Relaxed);
                    s.atomic_sub(1, 0.25);
                    s.atomic_exch(2, one);
                    s.atomic_cas_explicit(3, 0.0, one, Scope::Block, MemoryOrder::AcqRel);
                    s.atomic_add(4, 1.0 / one);
                    if t == 0 {
                        s.atomic_add(5, <$t>::MIN_POSITIVE / 2.0);
                    }
                }
                block.sync();
                if t < FLOAT_SLOTS {
                    let b = block.group_index().x as usize;
                    // SAFETY: FLOAT_SLOTS per block; after the barrier.
                    unsafe { blocks.write(FLOAT_SLOTS * b + t, s.read(t)) };
                }
            }
        )*};
    }
    float_atomics!(atomics_f32: f32, atomics_f64: f64);
}
