//! The reduce and the scans with an operator of one's own
//! (`Algorithms::reduce_with`, `inclusive_scan_with`, `exclusive_scan_with`),
//! whose kernels `operator_kernels!` stamped in another kernel crate
//! (`examples/algorithms/operators`): each against the CPU's fold and scan
//! by the same `combine`, on the emulated GPU and on a CUDA GPU (ignored
//! without one).

#![feature(const_trait_impl)]

use algorithms_operators::{ABS_MAX, AbsMax, GCD, Gcd};
use cg_algorithms::Algorithms;
use cg_kernel::cg::ReduceOp;
use cg_launcher::device::{EmulatedDevice, EmulatorOptions, Gpu};

/// Floats of both signs whose largest magnitude comes once, near the end,
/// with its negation earlier (a tie the operator breaks by sign).
fn floats(n: usize) -> Vec<f32> {
    let mut xs: Vec<f32> = (0..n).map(|i| ((i as u64).wrapping_mul(2654435761) >> 9) as f32 % 2001.0 - 1000.0).collect();
    if n > 8 {
        xs[n / 3] = -5000.0;
        xs[n - 3] = 5000.0;
    }
    xs
}

/// Multiples of 6 times a hash of the index, and one 9 early on: the gcd
/// of a prefix is 6 or 3 until the 9, then 3.
fn integers(n: usize) -> Vec<u32> {
    let mut xs: Vec<u32> = (0..n).map(|i| 6 * (((i as u64).wrapping_mul(0x9e37_79b9) >> 12) as u32 % 1000 + 1)).collect();
    if n > 4 {
        xs[n / 2] = 9;
    }
    xs
}

/// The reduce and both scans of `xs` by `kernels`, against the CPU's by `Op`.
fn check<T, Op>(alg: &mut Algorithms<'_>, xs: &[T], kernels: &cg_algorithms_kernels::operator::OperatorKernels<T>)
where
    T: cg_algorithms::Element,
    Op: const ReduceOp<T>,
{
    let gpu = alg.gpu();
    let n = xs.len();
    let name = std::any::type_name::<Op>();
    let x = gpu.upload(xs).unwrap();
    let want = xs.iter().fold(Op::identity(), |a, &b| Op::combine(a, b));
    assert_eq!(alg.reduce_with(&x, kernels).unwrap(), want, "reduce by {name} of {n}");

    let mut y = gpu.zeros::<T>(n).unwrap();
    alg.inclusive_scan_with(&x, &mut y, kernels).unwrap();
    let got = gpu.read(&y).unwrap();
    let mut acc = Op::identity();
    for (i, &v) in xs.iter().enumerate() {
        acc = Op::combine(acc, v);
        assert_eq!(got[i], acc, "inclusive scan by {name} of {n} at {i}");
    }
    alg.exclusive_scan_with(&x, &mut y, kernels).unwrap();
    let got = gpu.read(&y).unwrap();
    let mut acc = Op::identity();
    for (i, &v) in xs.iter().enumerate() {
        assert_eq!(got[i], acc, "exclusive scan by {name} of {n} at {i}");
        acc = Op::combine(acc, v);
    }
}

fn check_sizes(gpu: &Gpu, sizes: &[usize]) {
    let mut alg = Algorithms::new(gpu);
    for &n in sizes {
        check::<f32, AbsMax>(&mut alg, &floats(n), &ABS_MAX);
        check::<u32, Gcd>(&mut alg, &integers(n), &GCD);
    }
}

/// Around a thread's 16 elements, a tile of 4,096, and past a 32-tile
/// look-back window; an empty input gives the identity.
#[test]
fn an_operator_of_ones_own_reduces_and_scans_as_the_cpu_does_on_the_emulator() {
    let gpu = Gpu::emulated(EmulatedDevice::T4, EmulatorOptions { seed: Some(11), ..Default::default() });
    check_sizes(&gpu, &[1, 17, 4_097, 40 * 4_096 + 3]);
    let mut alg = Algorithms::new(&gpu);
    let empty = gpu.zeros::<u32>(0).unwrap();
    assert_eq!(alg.reduce_with(&empty, &GCD).unwrap(), 0);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn an_operator_of_ones_own_reduces_and_scans_as_the_cpu_does_on_the_gpu() {
    let gpu = Gpu::open(0).unwrap();
    check_sizes(&gpu, &[1, 4_097, (1 << 20) + 7, (1 << 24) + 5]);
}
