//! Every algorithm on the emulated GPU, against references on the CPU,
//! and the arguments each call refuses.

mod common;

use cg_algorithms::{Algorithms, Error, Op, Rule};
use cg_launcher::device::{EmulatedDevice, EmulatorOptions, Gpu};
use cg_launcher::error::Error as LaunchError;

fn emulated() -> Gpu {
    Gpu::emulated(EmulatedDevice::T4, EmulatorOptions { seed: Some(3), ..Default::default() })
}

/// Sizes around a vector, a thread's 16 elements, a tile of 4,096 and
/// the T4's grid, and past a 32-tile look-back window.
#[test]
fn every_algorithm_matches_its_reference_on_the_emulator() {
    common::check_all(&emulated(), &[0, 1, 3, 4, 17, 255, 4_095, 4_096, 4_097, 3 * 4_096 + 5, 40 * 4_096 + 3]);
}

/// A T4 of one SM holds 3 blocks of the scans and of the selections at
/// once (their shared memory, or their registers as ptxas reports them).
/// The scans take their persistent kernels (blocks that loop) up to twice
/// that, and the selections theirs past it: 3 tiles take the persistent
/// scans and the one-tile selections, 6 the persistent kernels of both, 21
/// the one-tile scans and the persistent selections.
#[test]
fn scans_and_selections_both_ways_match_their_reference_on_one_sm() {
    let one_sm = EmulatedDevice { sms: 1, ..EmulatedDevice::T4 };
    let gpu = Gpu::emulated(one_sm, EmulatorOptions { seed: Some(5), ..Default::default() });
    let mut alg = Algorithms::new(&gpu);
    for (k, n) in [3 * 4_096, 5 * 4_096 + 1, 20 * 4_096 + 7].into_iter().enumerate() {
        common::check_element::<i32>(&mut alg, n, k as u64);
    }
}

#[test]
fn calls_refuse_short_outputs_and_empty_histograms_by_name() {
    let gpu = emulated();
    let mut alg = Algorithms::new(&gpu);
    let x = gpu.upload(&[1.0f32; 10]).unwrap();
    let mut short = gpu.zeros::<f32>(9).unwrap();
    let e = alg.inclusive_scan(&x, &mut short, Op::Sum).unwrap_err();
    assert!(matches!(e, Error::Launcher(LaunchError::BufferTooShort { kernel: "inclusive_scan", buffer: "y", needed: 10, got: 9 })), "{e}");
    // The error names the call made, not a kernel inside it.
    assert_eq!(e.to_string(), "inclusive_scan: y holds 9 elements but the launch needs 10");
    let e = alg.select_if(&x, &mut short, Rule::Greater(0.0)).unwrap_err();
    assert!(matches!(e, Error::Launcher(LaunchError::BufferTooShort { kernel: "select_if", buffer: "y", .. })), "{e}");
    let flags = gpu.zeros::<u8>(9).unwrap();
    let mut y = gpu.zeros::<f32>(10).unwrap();
    let e = alg.select_flagged(&x, &flags, &mut y).unwrap_err();
    assert!(matches!(e, Error::Launcher(LaunchError::BufferTooShort { kernel: "select_flagged", buffer: "flags", .. })), "{e}");

    let mut lengths = gpu.zeros::<u32>(10).unwrap();
    let e = alg.run_length_encode(&x, &mut short, &mut lengths).unwrap_err();
    assert!(matches!(e, Error::Launcher(LaunchError::BufferTooShort { kernel: "run_length_encode", buffer: "unique", needed: 10, got: 9 })), "{e}");
    let mut short_lengths = gpu.zeros::<u32>(9).unwrap();
    let e = alg.run_length_encode(&x, &mut y, &mut short_lengths).unwrap_err();
    assert!(matches!(e, Error::Launcher(LaunchError::BufferTooShort { kernel: "run_length_encode", buffer: "lengths", .. })), "{e}");

    let bytes = gpu.upload(&[1u8, 2, 3]).unwrap();
    let mut none = gpu.zeros::<u32>(0).unwrap();
    assert!(matches!(alg.histogram_even(&bytes, &mut none, 0, 256), Err(Error::NoBins)));
    let mut bins = gpu.zeros::<u32>(4).unwrap();
    let e = alg.histogram_even(&bytes, &mut bins, 9, 9).unwrap_err();
    assert_eq!(e.to_string(), "a histogram's levels must satisfy lower < upper; got lower 9, upper 9");
    let floats = gpu.upload(&[1.0f32]).unwrap();
    assert!(matches!(alg.histogram_even(&floats, &mut bins, f32::NAN, 1.0), Err(Error::EmptyRange { .. })));
    // A range wider than f32 counts put every sample in bin 0 (the scale
    // bins / inf is 0): refused by name.
    for (lower, upper) in [(-f32::MAX, f32::MAX), (f32::NEG_INFINITY, f32::INFINITY), (0.0, f32::INFINITY)] {
        let e = alg.histogram_even(&floats, &mut bins, lower, upper).unwrap_err();
        assert!(matches!(e, Error::RangeTooWide { .. }), "{lower}..{upper}: {e}");
    }
    // A range about as wide as it takes (its scale, 2 / 1.6e38, just a
    // normal f32) still bins by value.
    let wide = gpu.upload(&[-7e37f32, -1e37, 1e37, 7e37]).unwrap();
    let mut two = gpu.zeros::<u32>(2).unwrap();
    alg.histogram_even(&wide, &mut two, -8e37, 8e37).unwrap();
    assert_eq!(gpu.read(&two).unwrap(), [2, 2]);
}

/// A NaN counts as absent in a float Min or Max, on whichever side of a
/// combine it falls: a scan's elements before any other value are the
/// identity, and the scan's last element is the reduce's answer. (A NaN
/// that won on one side only gave a scan of all identities against a
/// reduce of 0.5, the look-back and the tree combining in other orders.)
#[test]
fn a_nan_is_absent_from_float_min_and_max_in_reduce_and_scans() {
    let gpu = emulated();
    let mut alg = Algorithms::new(&gpu);
    let mut values = vec![f32::NAN, 1.0, 2.0, 0.5, f32::NAN, -4.0, 3.0];
    values.extend((0..5_000).map(|i| if i % 7 == 3 { f32::NAN } else { (i % 101) as f32 - 50.0 }));
    let x = gpu.upload(&values).unwrap();
    let mut y = gpu.zeros::<f32>(values.len()).unwrap();
    for (op, identity, pick) in [(Op::Min, f32::INFINITY, f32::min as fn(f32, f32) -> f32), (Op::Max, f32::NEG_INFINITY, f32::max)] {
        let mut running = identity;
        let expected: Vec<f32> = values
            .iter()
            .map(|&v| {
                running = pick(running, v);
                running
            })
            .collect();
        let first_difference = |got: Vec<f32>, want: &[f32]| got.iter().zip(want).position(|(g, w)| g.to_bits() != w.to_bits()).map(|i| (i, got[i], want[i]));
        alg.inclusive_scan(&x, &mut y, op).unwrap();
        assert_eq!(first_difference(gpu.read(&y).unwrap(), &expected), None, "{op:?} inclusive: (index, got, expected)");
        alg.exclusive_scan(&x, &mut y, op).unwrap();
        let exclusive: Vec<f32> = std::iter::once(identity).chain(expected[..values.len() - 1].iter().copied()).collect();
        assert_eq!(first_difference(gpu.read(&y).unwrap(), &exclusive), None, "{op:?} exclusive: (index, got, expected)");
        assert_eq!(alg.reduce(&x, op).unwrap(), expected[values.len() - 1], "{op:?} reduce");
    }
}

/// The look-back's storage is kept between calls: many launches in a row,
/// of growing and shrinking sizes, each with a new epoch, stay right.
#[test]
fn storage_kept_between_calls_stays_right() {
    let gpu = emulated();
    let mut alg = Algorithms::new(&gpu);
    for (k, n) in [5_000usize, 100, 20_000, 1, 9_000].into_iter().enumerate() {
        let xs: Vec<u32> = (0..n as u32).map(|i| i % 7 + k as u32).collect();
        let x = gpu.upload(&xs).unwrap();
        let mut y = gpu.zeros::<u32>(n).unwrap();
        alg.inclusive_scan(&x, &mut y, Op::Sum).unwrap();
        let got = gpu.read(&y).unwrap();
        let want: Vec<u32> = xs
            .iter()
            .scan(0u32, |a, &v| {
                *a += v;
                Some(*a)
            })
            .collect();
        assert!(got == want, "n = {n}: first difference at {:?}", got.iter().zip(&want).position(|(a, b)| a != b));
        assert_eq!(alg.reduce(&x, Op::Max).unwrap(), *xs.iter().max().unwrap());
    }
}
