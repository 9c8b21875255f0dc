//! The kernels behind `cg-algorithms`: device-wide reduce, scan, select and
//! histogram, written with `cg-kernel` and compiled to PTX by `cg-builder`
//! (CUB's `DeviceReduce`, `DeviceScan`, `DeviceSelect` and
//! `DeviceHistogram`). Launch them through `cg-algorithms`, which owns
//! their temporary storage and checks every argument; each kernel's
//! `# Safety` is what that crate keeps.
//!
//! | algorithm | launch | why |
//! |---|---|---|
//! | [`reduce`] | one cooperative launch, one `grid.sync()` | the grid is the GPU's resident capacity; each block adds its share, and block 0 adds the blocks' partials after the barrier: the input is read once |
//! | [`scan`] | one ordinary launch, decoupled look-back | a grid barrier would make the input be read twice, or kept on chip, which caps what one round takes; the look-back passes each tile's prefix to the next and reads it once, as CUB does |
//! | [`scan`]'s `persistent_*` | one ordinary launch of the GPU's resident blocks, decoupled look-back | each block loops over tiles by ticket and loads its next tile while it waits on the look-back for the one it holds; measured against the one-tile blocks on an H100 (the repository's `records/2026-12-06-h100-persistent-scan`): faster at 2^20 and 2^22, slower from 2^24 (probably because each block's tiles wait in turn on the prefix chain; not measured); `cg-algorithms` launches them where the tiles are at most twice the resident blocks |
//! | [`select`] | one ordinary launch, decoupled look-back | the same: a scan of the kept counts, each element read once |
//! | [`histogram`] | one cooperative launch, one `grid.sync()` | the barrier orders the zeroing of the bins before every block's adds, so one launch does both |
//!
//! The reduce, scan and select kernels take 4-byte elements (`f32`, `i32`,
//! `u32`) with [`Sum`](cg_kernel::cg::Plus), minimum and maximum; the
//! histogram takes `u8`, `u16`, `i32` and `f32` samples. Each kernel is one
//! `#[kernel]` per type and operator, stamped from one generic body, whose
//! loads are one 16-byte vector (`read_vector`) per thread and step.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel))]
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
pub mod reduce;
pub mod scan;
pub mod select;

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

/// Writes `v` to `y[i..i + ITEMS]`, leaving out what is past `n`.
///
/// # Safety
/// As [`load`], for `y`; and no other thread touches `y[i..i + ITEMS]`
/// during the launch.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub(crate) unsafe fn store<T: Value>(y: Out<T>, i: usize, n: usize, v: [T; ITEMS]) {
    if i + ITEMS <= n {
        for q in 0..ITEMS / 4 {
            // SAFETY: in bounds and 16-byte aligned as in `load`; the caller's contract.
            unsafe { y.write_vector::<4>(i + 4 * q, [v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]]) };
        }
    } else {
        for (k, &v) in v.iter().enumerate() {
            if i + k < n {
                // SAFETY: below n; the caller's contract.
                unsafe { y.write(i + k, v) };
            }
        }
    }
}
