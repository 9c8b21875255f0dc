//! The kernels behind `cg-algorithms`: device-wide reduce, scan, select,
//! histogram and radix sort, written with `cg-kernel` and compiled to PTX by
//! `cg-builder` (CUB's `DeviceReduce`, `DeviceScan`, `DeviceSelect`,
//! `DeviceHistogram` and `DeviceRadixSort`). Launch them through `cg-algorithms`, which owns
//! their temporary storage and checks every argument; each kernel's
//! `# Safety` is what that crate keeps.
//!
//! | algorithm | launch | why |
//! |---|---|---|
//! | [`reduce`] | one cooperative launch, one `grid.sync()` | the grid is the GPU's resident capacity; each block adds its share, and block 0 adds the blocks' partials after the barrier: the input is read once |
//! | [`scan`] | one ordinary launch, decoupled look-back | a grid barrier would make the input be read twice, or kept on chip, which caps what one round takes; the look-back passes each tile's prefix to the next and reads it once, as CUB does |
//! | [`scan`]'s `persistent_*` | one ordinary launch of the GPU's resident blocks, decoupled look-back | each block loops over tiles by ticket and loads its next tile while it waits on the look-back for the one it holds; measured against the one-tile blocks on an H100 (the repository's `records/2026-12-06-h100-persistent-scan`): faster at 2^20 and 2^22, slower from 2^24 (probably because each block's tiles wait in turn on the prefix chain; not measured); `cg-algorithms` launches them where the tiles are at most twice the resident blocks |
//! | [`select`] | one ordinary launch, decoupled look-back; `persistent_*` blocks that loop | the same: a scan of the kept counts, each element read once; `cg-algorithms` launches the persistent kernels where there are more tiles than resident blocks, where on an H100 they took 0.92 to 1.06 times CUB's time from 2^22 to 2^26 against 1.01 to 1.09 for a block per tile (the repository's `records/2026-12-07-h100-persistent-select`) |
//! | [`run_length`] | two ordinary launches | the heads' indices selected by look-back, as [`select`]; then each run's value and length from its head and the next (a run's length needs the next run's head, which a later tile may find) |
//! | [`histogram`] | one cooperative launch, one `grid.sync()` | the barrier orders the zeroing of the bins before every block's adds, so one launch does both |
//! | [`sort`] | one cooperative launch, then one ordinary launch per 8-bit pass, decoupled look-back on each digit's count | CUB's onesweep: the keys read once to count every pass's digits (the barrier orders the zeroing before the adds), then each pass reads and writes them once, each tile ranked within its block and placed by the counts of the tiles before it |
//!
//! The reduce, scan and select kernels take 4-byte elements (`f32`, `i32`,
//! `u32`) with [`Sum`](cg_kernel::cg::Plus), minimum and maximum, and the
//! reduce and scans any operator of yours ([`operator_kernels!`](crate::operator_kernels), stamped
//! in your own kernel crate); the
//! histogram takes `u8`, `u16`, `i32` and `f32` samples; the sort keys of
//! 1, 2, 4 and 8 bytes (signed and float keys as their bits, transformed)
//! and 4-byte values. Each kernel is one
//! `#[kernel]` per type and operator, stamped from one generic body, whose
//! loads are one 16-byte vector (`read_vector`) per thread and step.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel))]
#![feature(const_trait_impl)]
#![deny(unsafe_op_in_unsafe_fn, missing_docs)]

/// `$body` for `$j` = 0 to 15, written out: a loop whose trip count the
/// compiler does not unroll indexes its arrays at run time, which puts
/// them in local memory (a fixed `j` keeps them in registers).
macro_rules! unroll16 {
    ($j:ident => $body:block) => {
        unroll16!(@ $j $body; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
    };
    (@ $j:ident $body:block; $($k:literal)*) => {
        $( { let $j: usize = $k; $body } )*
    };
}

pub mod histogram;
pub mod lookback;
pub mod operator;
pub mod reduce;
pub mod run_length;
pub mod scan;
pub mod select;
pub mod sort;

use cg_kernel::cg::ShuffleValue;
use cg_kernel::mem::{In, Out, Word};

cg_kernel::ptx!();

/// Threads per block of every kernel here: 8 warps.
pub const THREADS: u32 = 256;

/// Elements each thread takes per step: four 16-byte vector loads of 4-byte
/// elements.
pub const ITEMS: usize = 16;

/// Elements one block takes per step (one look-back tile): 4,096.
pub const TILE_LEN: usize = THREADS as usize * ITEMS;

/// A 4-byte element the reduce, scan and select kernels take: `f32`, `i32`
/// or `u32`.
pub trait Value: Word + ShuffleValue + PartialOrd {}
impl Value for f32 {}
impl Value for i32 {}
impl Value for u32 {}

/// `x[i..i + ITEMS]`, with `fill` past `n`.
///
/// # Safety
/// `x` holds `n` elements from a 16-byte-aligned start, and `i` is a
/// multiple of 4.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub(crate) unsafe fn load<T: Value>(x: In<T>, i: usize, n: usize, fill: T) -> [T; ITEMS] {
    let mut v = [fill; ITEMS];
    if i + ITEMS <= n {
        for q in 0..ITEMS / 4 {
            // SAFETY: i + ITEMS <= n, and i + 4q is a multiple of 4 from an
            // aligned start: 16 bytes in bounds and aligned.
            let four: [T; 4] = unsafe { x.read_vector::<4>(i + 4 * q) };
            v[4 * q..4 * q + 4].copy_from_slice(&four);
        }
    } else {
        for (k, v) in v.iter_mut().enumerate() {
            if i + k < n {
                // SAFETY: below n.
                *v = unsafe { x.read(i + k) };
            }
        }
    }
    v
}

/// Vectors of 4 elements a thread of the scans holds per tile.
pub(crate) const VECTORS: usize = ITEMS / 4;

/// The first element of thread `t`'s vectors in tile `k`, in the scans'
/// warp-striped arrangement: warp `w` takes the tile's 512 elements from
/// `w * 512`, and its lane `l` the vectors at `4 l`, `4 l + 128`,
/// `4 l + 256` and `4 l + 384` of them, so that each of a warp's 16-byte
/// loads and stores covers 512 contiguous bytes (CUB gets the same by
/// loading striped and transposing through shared memory, its
/// `BLOCK_LOAD_WARP_TRANSPOSE`). Where each thread took 16 contiguous
/// elements, each load covered half of each of 32 sectors: on an H200 the
/// scans took 1.35 to 1.41 times CUB's time from 2^24 elements that way,
/// and 0.97 to 1.08 this way (`records/2026-12-07-h200-striped-scan`).
#[inline(always)]
pub(crate) fn striped_start(k: usize, t: usize) -> usize {
    k * TILE_LEN + (t / 32) * (32 * ITEMS) + (t % 32) * 4
}

/// Thread `t`'s vectors of the warp-striped arrangement from `i`
/// ([`striped_start`]): vector `q` is `x[i + 128 q..][..4]`, with `fill`
/// past `n`.
///
/// # Safety
/// `x` holds `n` elements from a 16-byte-aligned start, and `i` is a
/// multiple of 4.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub(crate) unsafe fn load_striped<T: Value>(x: In<T>, i: usize, n: usize, fill: T) -> [[T; 4]; VECTORS] {
    let mut v = [[fill; 4]; VECTORS];
    if i + 128 * (VECTORS - 1) + 4 <= n {
        for (q, v) in v.iter_mut().enumerate() {
            // SAFETY: the last vector ends at or before n (above), and
            // i + 128 q is a multiple of 4 from an aligned start: 16 bytes
            // in bounds and aligned.
            *v = unsafe { x.read_vector::<4>(i + 128 * q) };
        }
    } else {
        for (q, v) in v.iter_mut().enumerate() {
            for (e, v) in v.iter_mut().enumerate() {
                if i + 128 * q + e < n {
                    // SAFETY: below n.
                    *v = unsafe { x.read(i + 128 * q + e) };
                }
            }
        }
    }
    v
}

/// Writes `v` where [`load_striped`] reads it from, leaving out what is past `n`.
///
/// # Safety
/// As [`load_striped`], for `y`; and no other thread touches those
/// elements during the launch.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub(crate) unsafe fn store_striped<T: Value>(y: Out<T>, i: usize, n: usize, v: [[T; 4]; VECTORS]) {
    if i + 128 * (VECTORS - 1) + 4 <= n {
        for (q, v) in v.iter().enumerate() {
            // SAFETY: in bounds and 16-byte aligned as in `load_striped`; the caller's contract.
            unsafe { y.write_vector::<4>(i + 128 * q, *v) };
        }
    } else {
        for (q, v) in v.iter().enumerate() {
            for (e, &v) in v.iter().enumerate() {
                if i + 128 * q + e < n {
                    // SAFETY: below n; the caller's contract.
                    unsafe { y.write(i + 128 * q + e, v) };
                }
            }
        }
    }
}
