//! Histograms of even bins in one cooperative launch with one
//! `grid.sync()`, CUB's `DeviceHistogram::HistogramEven`: the barrier
//! orders the zeroing of the bins before every block's adds. Each block
//! counts into copies of the bins in shared memory (one per warp where they
//! fit, so that fewer warps contend on one address), one shared atomic
//! increment per sample, then adds its copies into the bins with one global
//! atomic per bin. More bins than shared memory holds are counted with
//! global atomics directly.
//!
//! An increment by the constant 1 is what lets ptxas emit
//! `ATOMS.POPC.INC`, which counts the lanes of a warp that hit one address
//! in one step. Adding runs of equal bins instead (a variable amount, so a
//! plain `ATOMS.ADD`, and a branch per sample) took 1.75 and 2.0 times
//! CUB's time at 2^24 and 2^26 bytes on an H200, against 1.43 and 1.13
//! this way (`records/2026-12-07-h200-striped-scan`).

use cg_kernel::cg::{GridGroup, this_grid, this_thread_block};
use cg_kernel::kernel;
use cg_kernel::mem::{In, Out, Word};

/// Vectors each thread loads before counting them.
const UNROLL: usize = 4;

/// Bins a block counts in shared memory: 16 KiB of `u32`s.
pub const SHARED_BINS: usize = 4096;

/// Dynamic shared memory of the histogram kernels: [`SHARED_BINS`]
/// counters, then the `u8` samples' table of 256 bins.
pub const fn histogram_shared_bytes(_threads_per_block: u32) -> u32 {
    (SHARED_BINS + TABLE_LEN) as u32 * 4
}

/// A sample type of the histogram: `u8`, `u16`, `i32` or `f32`.
pub trait Sample: Word + PartialOrd {
    /// The type of the levels `lower` and `upper`: `i64` for integer
    /// samples, so that a range can end past the type's greatest value
    /// (`[0, 256)` for bytes); `f32` for `f32`.
    type Level: Word + PartialOrd;

    /// The bin of `s` among `bins` even bins over `[lower, upper)`, or
    /// `None` outside it: `(s - lower) * bins / (upper - lower)`, rounded
    /// down, in integers for integer samples (as CUB does) and in `f32`
    /// for `f32` (`(s - lower) * scale`, `scale = bins / (upper - lower)`).
    /// `lower < upper` and `bins > 0`.
    fn bin(s: Self, lower: Self::Level, upper: Self::Level, bins: u32) -> Option<u32>;

    /// Whether a block looks its samples' bins up in a table of every
    /// value's bin (`u8`: 256 entries), made once per block.
    const TABLE: bool = false;
}

macro_rules! integer_samples {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            type Level = i64;
            const TABLE: bool = size_of::<$t>() == 1;
            #[inline(always)]
            fn bin(s: $t, lower: i64, upper: i64, bins: u32) -> Option<u32> {
                let s = s as i64;
                if s < lower || s >= upper {
                    return None;
                }
                let (d, range) = (s.abs_diff(lower), upper.abs_diff(lower));
                Some(if range <= 1 << 32 {
                    // d < 2^32 and bins < 2^32: the product fits.
                    (d * bins as u64 / range) as u32
                } else {
                    (d as u128 * bins as u128 / range as u128) as u32
                })
            }
        }
    )*};
}
integer_samples!(u8, u16, i32);

/// Entries of the `u8` bin table, after the shared bins.
const TABLE_LEN: usize = 256;
/// A table entry for a value in no bin.
const NO_BIN: u32 = u32::MAX;

impl Sample for f32 {
    type Level = f32;
    #[inline(always)]
    fn bin(s: f32, lower: f32, upper: f32, bins: u32) -> Option<u32> {
        // NaN is in no bin: both comparisons fail.
        if !(s >= lower && s < upper) {
            return None;
        }
        let scale = bins as f32 / (upper - lower);
        Some((((s - lower) * scale) as u32).min(bins - 1))
    }
}

/// The body of every histogram kernel; `K` samples make one 16-byte vector.
///
/// # Safety
/// As each histogram kernel's.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
unsafe fn histogram_even<S: Sample, const K: usize>(
    grid: &GridGroup,
    samples: In<S>,
    bins: Out<u32>,
    num_bins: u32,
    lower: S::Level,
    upper: S::Level,
    n: usize,
) {
    let block = this_thread_block();
    let t = block.thread_rank() as usize;
    let threads = block.num_threads() as usize;
    let (rank, stride) = (grid.thread_rank(), grid.num_threads());
    let nb = num_bins as usize;
    let counts = cg_kernel::mem::dynamic_shared::<u32>();
    let copies = if nb <= SHARED_BINS { (SHARED_BINS / nb).min(threads.div_ceil(32)) } else { 0 };
    let shared = (copies > 0).then_some(counts);
    let base = if copies > 0 { (t / 32 % copies) * nb } else { 0 };

    // SAFETY (every access below): bins holds num_bins counters and the
    // shared memory SHARED_BINS >= copies * num_bins (the kernel's
    // contract); each zeroed by one thread, then touched only atomically
    // after the barrier.
    let mut b = rank;
    while b < nb {
        unsafe { bins.write(b, 0) };
        b += stride;
    }
    let mut c = t;
    while c < copies * nb {
        unsafe { counts.write(c, 0) };
        c += threads;
    }
    let table = counts.after::<u32>(SHARED_BINS);
    if S::TABLE {
        let mut v = t;
        while v < TABLE_LEN {
            let bin = S::bin(S::from_bits64(v as u64), lower, upper, num_bins);
            unsafe { table.write(v, bin.unwrap_or(NO_BIN)) };
            v += threads;
        }
    }
    grid.sync();
    // One counting loop per way of finding a bin and per place to count, so
    // that no sample branches on either. On an H100, with 1,024-thread
    // blocks of at least 16,384 samples (the host's launch), that took 0.65
    // to 0.90 times CUB's time from 2^20 bytes, where one loop choosing per
    // sample took 1.03 to 1.09 with those blocks and 1.13 to 1.53 with
    // 256-thread blocks of 4,096 (records/2026-12-07-h100-histogram-loops).
    // Bytes over [0, 256) in 256 bins: each byte is its own bin.
    let identity = S::TABLE && lower.to_bits64() == 0 && upper.to_bits64() == 256 && nb == 256;
    // SAFETY (each closure below): a byte's value is below TABLE_LEN, its
    // entry written before the barrier; a bin is below num_bins; the
    // shared copy at `base` holds num_bins counters; both touched only
    // atomically while counting.
    let from_table = |s: S| {
        let b = unsafe { table.read(s.to_bits64() as usize) };
        (b != NO_BIN).then_some(b)
    };
    let computed = |s: S| S::bin(s, lower, upper, num_bins);
    let in_global = |b: u32| {
        unsafe { bins.atomic_add(b as usize, 1) };
    };
    // SAFETY (each call): the closures' as above; the samples' as count_all's.
    unsafe {
        match shared {
            Some(counts) => {
                let in_shared = |b: u32| {
                    counts.atomic_add(base + b as usize, 1);
                };
                if identity {
                    count_all::<S, K>(samples, n, rank, stride, |s| Some(s.to_bits64() as u32), in_shared);
                } else if S::TABLE {
                    count_all::<S, K>(samples, n, rank, stride, from_table, in_shared);
                } else {
                    count_all::<S, K>(samples, n, rank, stride, computed, in_shared);
                }
            }
            None if S::TABLE => count_all::<S, K>(samples, n, rank, stride, from_table, in_global),
            None => count_all::<S, K>(samples, n, rank, stride, computed, in_global),
        }
    }
    if copies > 0 {
        block.sync();
        let mut b = t;
        while b < nb {
            let mut total = 0u32;
            for copy in 0..copies {
                total += unsafe { counts.atomic_load(copy * nb + b, cg_kernel::mem::Scope::Block) };
            }
            if total > 0 {
                unsafe { bins.atomic_add(b, total) };
            }
            b += threads;
        }
    }
}

/// Counts this thread's samples of the grid-strided walk over `samples`
/// (rank `rank` of `stride` threads): `add(bin)` for each whose `bin_of`
/// is a bin. Adding the constant 1 is what lets ptxas emit
/// `ATOMS.POPC.INC`, which counts every lane of a warp that hits one
/// address in one step.
///
/// # Safety
/// `samples` holds `n` elements from a 16-byte-aligned start, and `K` of
/// them make 16 bytes.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
unsafe fn count_all<S: Sample, const K: usize>(samples: In<S>, n: usize, rank: usize, stride: usize, bin_of: impl Fn(S) -> Option<u32>, add: impl Fn(u32)) {
    let vectors = n / K;
    let mut v = rank;
    // UNROLL vectors loaded before any is counted, so that more bytes are
    // in flight per thread than one 16-byte load.
    while v + (UNROLL - 1) * stride < vectors {
        let mut s = [[S::from_bits64(0); K]; UNROLL];
        unroll16!(u => {
            if u < UNROLL {
                // SAFETY: vector v + u * stride < n / K is in bounds, and
                // 16-byte aligned from the aligned start (the contract).
                s[u] = unsafe { samples.read_vector::<K>((v + u * stride) * K) };
            }
        });
        unroll16!(u => {
            if u < UNROLL {
                unroll16!(j => {
                    if j < K && let Some(bin) = bin_of(s[u][j]) {
                        add(bin);
                    }
                });
            }
        });
        v += UNROLL * stride;
    }
    while v < vectors {
        // SAFETY: as above.
        let s: [S; K] = unsafe { samples.read_vector::<K>(v * K) };
        unroll16!(j => {
            if j < K && let Some(bin) = bin_of(s[j]) {
                add(bin);
            }
        });
        v += stride;
    }
    if rank < n - vectors * K {
        // SAFETY: one of the last n % K samples.
        let s = unsafe { samples.read(vectors * K + rank) };
        if let Some(bin) = bin_of(s) {
            add(bin);
        }
    }
}

/// One histogram kernel per sample type.
macro_rules! histograms {
    ($($name:ident: $t:ty, $k:literal;)*) => {$(
        #[doc = concat!("`bins[b]` = how many samples of `samples` (`", stringify!($t), "`) fall in even bin `b` of `num_bins` over `[lower, upper)` ([`Sample::bin`]), in one cooperative launch with one `grid.sync()`.")]
        ///
        /// # Safety
        /// `samples` holds `n` elements from a 16-byte-aligned start;
        /// `bins` holds `num_bins` counters, and no other launch uses it
        /// meanwhile; `num_bins > 0` and `lower < upper`; launched with
        /// [`histogram_shared_bytes`] of shared memory; `n` is below 2^32.
        #[kernel(cooperative, shared_memory = histogram_shared_bytes)]
        pub unsafe fn $name(samples: In<$t>, bins: Out<u32>, num_bins: u32, lower: <$t as Sample>::Level, upper: <$t as Sample>::Level, n: usize) {
            // SAFETY: the kernel's contract.
            unsafe { histogram_even::<$t, $k>(&this_grid(), samples, bins, num_bins, lower, upper, n) }
        }
    )*};
}

// The GPU entries only where this crate is built for its own PTX (the
// feature `gpu-entries`, on by default), not inside a crate that stamps its
// own operator's kernels (`operator_kernels!`).
#[cfg(any(not(target_arch = "nvptx64"), feature = "gpu-entries"))]
histograms! {
    histogram_even_u8: u8, 16;
    histogram_even_u16: u16, 8;
    histogram_even_i32: i32, 4;
    histogram_even_f32: f32, 4;
}
