//! Two operators of one's own for cg-algorithms' reduce and scans, each a
//! `ReduceOp` (associative, commutative, with an identity) and its kernels
//! stamped here by `operator_kernels!`: `Algorithms::reduce_with(&x,
//! &ABS_MAX)` and the scans' `*_with` launch them.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel))]
#![feature(const_trait_impl)]
#![deny(unsafe_op_in_unsafe_fn, missing_docs)]

use cg_kernel::cg::ReduceOp;

cg_kernel::ptx!();

/// The larger by absolute value, the greater of the two on a tie (so that
/// `3` and `-3` give `3` in either order: the operator must commute).
#[derive(Clone, Copy, Debug)]
pub struct AbsMax;

impl const ReduceOp<f32> for AbsMax {
    #[inline(always)]
    fn combine(a: f32, b: f32) -> f32 {
        let (x, y) = (a.abs(), b.abs());
        if y > x || (y == x && b > a) { b } else { a }
    }

    #[inline(always)]
    fn identity() -> f32 {
        0.0
    }
}

/// The greatest common divisor (`gcd(0, x) = x`, so 0 is the identity).
#[derive(Clone, Copy, Debug)]
pub struct Gcd;

impl const ReduceOp<u32> for Gcd {
    #[inline(always)]
    fn combine(a: u32, b: u32) -> u32 {
        let (mut a, mut b) = (a, b);
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    }

    #[inline(always)]
    fn identity() -> u32 {
        0
    }
}

cg_algorithms_kernels::operator_kernels! {
    /// [`AbsMax`] over `f32`: its reduce and scans.
    pub static ABS_MAX: f32, AbsMax = [abs_max_reduce, abs_max_inclusive, abs_max_exclusive];
}

cg_algorithms_kernels::operator_kernels! {
    /// [`Gcd`] over `u32`: its reduce and scans.
    pub static GCD: u32, Gcd = [gcd_reduce, gcd_inclusive, gcd_exclusive];
}
