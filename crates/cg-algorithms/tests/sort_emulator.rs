//! The radix sort on the emulated GPU against the CPU's stable sort: every
//! key type, ascending and descending, inputs of each shape, sizes around
//! a tile and of several tiles, pairs' stability, bit ranges, the
//! double-buffer forms, the storage kept between calls, and the arguments
//! each call refuses by name.

mod sorting;

use cg_algorithms::{Algorithms, DoubleBuffer, Error, Order};
use cg_algorithms_kernels::sort::tile_len;
use cg_launcher::device::{EmulatedDevice, EmulatorOptions, Gpu};
use cg_launcher::error::Error as LaunchError;
use sorting::{TestKey, check_double_buffers, check_keys, check_mixed, check_pairs, mix, mixed, shapes};

fn emulated() -> Gpu {
    Gpu::emulated(EmulatedDevice::T4, EmulatorOptions { seed: Some(11), ..Default::default() })
}

/// `n` random keys of `K`.
fn random<K: TestKey>(n: usize, seed: u64) -> Vec<K> {
    (0..n).map(|i| K::random(mix(seed ^ ((i as u64) << 20)))).collect()
}

/// Each shape of input by itself (random, all equal, in order, in reverse
/// order, one high bit, the extremes strewn), `u32` keys.
#[test]
fn each_shape_of_input_sorts_as_the_cpus_stable_sort() {
    let gpu = emulated();
    let mut alg = Algorithms::new(&gpu);
    for (what, keys) in shapes::<u32>(500, 1) {
        check_keys(&mut alg, &keys, Order::ASCENDING, what);
    }
    for (what, keys) in shapes::<i32>(300, 2) {
        check_pairs::<i32, u32>(&mut alg, &keys, Order::DESCENDING, what);
    }
}

/// Keys of 1, 2 and 4 bytes, unsigned and signed, every shape one after
/// another, ascending and descending, with values and without.
#[test]
fn integer_keys_of_every_width_sort_as_the_cpus_stable_sort_both_ways() {
    let gpu = emulated();
    let mut alg = Algorithms::new(&gpu);
    check_mixed::<u8>(&mut alg, 150, true);
    check_mixed::<i8>(&mut alg, 150, true);
    check_mixed::<u16>(&mut alg, 150, true);
    check_mixed::<i16>(&mut alg, 150, false);
    check_mixed::<u32>(&mut alg, 150, true);
    check_mixed::<i32>(&mut alg, 150, false);
}

#[test]
fn eight_byte_keys_sort_as_the_cpus_stable_sort_both_ways() {
    let gpu = emulated();
    let mut alg = Algorithms::new(&gpu);
    let keys = mixed::<u64>(60, 1);
    check_keys(&mut alg, &keys, Order::ASCENDING, "every shape");
    check_pairs::<u64, u32>(&mut alg, &keys, Order::DESCENDING, "every shape");
    let keys = mixed::<i64>(60, 2);
    check_keys(&mut alg, &keys, Order::ASCENDING, "every shape");
    check_keys(&mut alg, &keys, Order::DESCENDING, "every shape");
    let keys = mixed::<f64>(60, 3);
    check_keys(&mut alg, &keys, Order::ASCENDING, "every shape");
    check_pairs::<f64, f32>(&mut alg, &keys, Order::DESCENDING, "every shape");
}

/// NaNs where their bits put them, `-0.0` and `+0.0` equal keys that keep
/// their order, the infinities and subnormals in their places: CUB's
/// order, among random floats and by themselves.
#[test]
fn floats_order_nans_zeros_and_infinities_as_cub_does() {
    let gpu = emulated();
    let mut alg = Algorithms::new(&gpu);
    check_mixed::<f32>(&mut alg, 150, true);
    let specials = f32::specials();
    let alone: Vec<f32> = (0..200).map(|i| specials[(mix(i) % specials.len() as u64) as usize]).collect();
    for order in [Order::ASCENDING, Order::DESCENDING] {
        check_keys(&mut alg, &alone, order, "specials alone");
        check_pairs::<f32, u32>(&mut alg, &alone, order, "specials alone");
    }
    // Both zeros, in turn: one key, in their input order either way.
    let zeros: Vec<f32> = (0..100).map(|i| if i % 3 == 0 { -0.0 } else { 0.0 }).collect();
    check_pairs::<f32, i32>(&mut alg, &zeros, Order::ASCENDING, "zeros");
    check_pairs::<f32, f32>(&mut alg, &zeros, Order::DESCENDING, "zeros");
}

/// Sizes 0 to 31, around one tile of the `u32` keys' pass (7,680), and of
/// several tiles (each chained to the one before by the look-back), by two
/// passes of 8 bits; and several tiles of pairs, whose many equal keys'
/// values keep their order.
#[test]
fn sizes_around_a_tile_and_of_several_tiles_sort_as_the_cpu_does() {
    let gpu = emulated();
    let mut alg = Algorithms::new(&gpu);
    let tile = tile_len(4, false);
    for n in [0, 1, 2, 31] {
        check_keys(&mut alg, &random::<u32>(n, n as u64), Order::ASCENDING, "random");
    }
    for n in [tile - 1, tile, tile + 1, 3 * tile + 5] {
        check_keys(&mut alg, &random::<u32>(n, n as u64), Order::ASCENDING.bits(8..24), "random");
    }
    // Each key one of 16, descending: every tile's keys of each digit many.
    let keys: Vec<u32> = random::<u32>(2 * tile_len(4, true) + 3, 5).iter().map(|k| k >> 28 << 28).collect();
    check_pairs::<u32, u32>(&mut alg, &keys, Order::DESCENDING.bits(24..32), "16 keys");
}

/// Bits `begin..end` alone: keys equal in them keep their order, the other
/// bits go along; ranges of one bit, of parts of a digit, across digits,
/// and each end of the key.
#[test]
fn a_bit_range_sorts_by_those_bits_alone_keeping_ties_in_order() {
    let gpu = emulated();
    let mut alg = Algorithms::new(&gpu);
    let keys = random::<u32>(1000, 3);
    for bits in [0..1, 31..32, 4..12, 3..30, 8..32, 13..14] {
        check_keys(&mut alg, &keys, Order::ASCENDING.bits(bits.clone()), "random");
        check_pairs::<u32, u32>(&mut alg, &keys, Order::DESCENDING.bits(bits), "random");
    }
    let signed = random::<i32>(1000, 4);
    check_keys(&mut alg, &signed, Order::ASCENDING.bits(24..32), "random");
    check_keys(&mut alg, &signed, Order::DESCENDING.bits(20..31), "random");
    let mut floats = random::<f32>(1000, 6);
    floats.extend(f32::specials());
    check_keys(&mut alg, &floats, Order::ASCENDING.bits(0..8), "random and specials");
    check_keys(&mut alg, &floats, Order::DESCENDING.bits(0..8), "random and specials");
    check_keys(&mut alg, &floats, Order::DESCENDING.bits(23..32), "random and specials");
    let wide = random::<u64>(500, 8);
    check_pairs::<u64, i32>(&mut alg, &wide, Order::ASCENDING.bits(40..64), "random");
    check_keys(&mut alg, &random::<f64>(500, 9), Order::DESCENDING.bits(50..64), "random");
    check_keys(&mut alg, &random::<u16>(500, 10), Order::ASCENDING.bits(15..16), "random");
}

/// The double-buffer forms, with an odd number of passes (the sorted keys
/// end in the alternate, which becomes current) and an even one.
#[test]
fn the_double_buffer_forms_leave_the_result_where_the_last_pass_wrote() {
    let gpu = emulated();
    let mut alg = Algorithms::new(&gpu);
    let keys = random::<u32>(1000, 12);
    check_double_buffers(&mut alg, &keys, Order::ASCENDING, 4);
    check_double_buffers(&mut alg, &keys, Order::DESCENDING.bits(0..24), 3);
    check_double_buffers(&mut alg, &keys, Order::ASCENDING.bits(7..8), 1);
    check_double_buffers(&mut alg, &random::<f32>(500, 13), Order::DESCENDING, 4);
    check_double_buffers(&mut alg, &random::<u8>(500, 14), Order::ASCENDING, 1);
    check_double_buffers::<u32>(&mut alg, &[], Order::ASCENDING, 4);
}

/// The storage is kept between sorts: sorts of growing and shrinking
/// sizes, of keys of every width, with and without values, each right.
#[test]
fn storage_kept_between_sorts_stays_right() {
    let gpu = emulated();
    let mut alg = Algorithms::new(&gpu);
    check_keys(&mut alg, &random::<u64>(900, 1), Order::ASCENDING, "random");
    check_keys(&mut alg, &random::<u8>(10_000, 2), Order::DESCENDING, "random");
    check_pairs::<u16, f32>(&mut alg, &random::<u16>(50, 3), Order::ASCENDING, "random");
    check_keys(&mut alg, &random::<u32>(1, 4), Order::ASCENDING, "random");
    check_pairs::<u32, u32>(&mut alg, &random::<u32>(tile_len(4, true) + 9, 5), Order::ASCENDING.bits(0..12), "random");
    check_keys(&mut alg, &random::<i64>(100, 6), Order::DESCENDING, "random");
}

#[test]
fn sorts_refuse_bad_arguments_by_name() {
    let gpu = emulated();
    let mut alg = Algorithms::new(&gpu);
    let x = gpu.upload(&[3u32, 1, 2]).unwrap();
    let mut short = gpu.zeros::<u32>(2).unwrap();
    let e = alg.sort_keys(&x, &mut short, Order::ASCENDING).unwrap_err();
    assert!(matches!(e, Error::Launcher(LaunchError::BufferTooShort { kernel: "sort_keys", buffer: "keys_out", needed: 3, got: 2 })), "{e}");
    assert_eq!(e.to_string(), "sort_keys: keys_out holds 2 elements but the launch needs 3");

    let mut y = gpu.zeros::<u32>(3).unwrap();
    let values = gpu.upload(&[1.0f32, 2.0, 3.0]).unwrap();
    let mut values_out = gpu.zeros::<f32>(3).unwrap();
    let short_values = gpu.zeros::<f32>(2).unwrap();
    let e = alg.sort_pairs(&x, &mut y, &short_values, &mut values_out, Order::ASCENDING).unwrap_err();
    assert!(matches!(e, Error::Launcher(LaunchError::BufferTooShort { kernel: "sort_pairs", buffer: "values_in", .. })), "{e}");
    let mut short_out = gpu.zeros::<f32>(2).unwrap();
    let e = alg.sort_pairs(&x, &mut y, &values, &mut short_out, Order::ASCENDING).unwrap_err();
    assert!(matches!(e, Error::Launcher(LaunchError::BufferTooShort { kernel: "sort_pairs", buffer: "values_out", .. })), "{e}");
    let e = alg.sort_pairs(&x, &mut short, &values, &mut values_out, Order::ASCENDING).unwrap_err();
    assert!(matches!(e, Error::Launcher(LaunchError::BufferTooShort { kernel: "sort_pairs", buffer: "keys_out", .. })), "{e}");
    let mut keys = DoubleBuffer::new(gpu.upload(&[1u32, 2, 3]).unwrap(), gpu.zeros::<u32>(2).unwrap());
    let e = alg.sort_keys_double_buffer(&mut keys, Order::ASCENDING).unwrap_err();
    assert!(matches!(e, Error::Launcher(LaunchError::BufferTooShort { kernel: "sort_keys_double_buffer", buffer: "keys.alternate()", .. })), "{e}");
    let mut keys = DoubleBuffer::new(gpu.upload(&[1u32, 2, 3]).unwrap(), gpu.zeros::<u32>(3).unwrap());
    let mut vals = DoubleBuffer::new(gpu.zeros::<i32>(3).unwrap(), gpu.zeros::<i32>(1).unwrap());
    let e = alg.sort_pairs_double_buffer(&mut keys, &mut vals, Order::ASCENDING).unwrap_err();
    assert!(matches!(e, Error::Launcher(LaunchError::BufferTooShort { kernel: "sort_pairs_double_buffer", buffer: "values.alternate()", .. })), "{e}");

    // Empty, inverted and too wide bit ranges: refused before any launch,
    // and the output untouched.
    let mut out = gpu.upload(&[9u32; 3]).unwrap();
    #[allow(clippy::reversed_empty_ranges)] // an inverted range, on purpose
    let ranges = [8..8, 9..3, 0..33, 32..40];
    for bits in ranges {
        let e = alg.sort_keys(&x, &mut out, Order::ASCENDING.bits(bits.clone())).unwrap_err();
        assert!(matches!(e, Error::BitRange { key_bits: 32, .. }), "{bits:?}: {e}");
    }
    assert_eq!(gpu.read(&out).unwrap(), [9, 9, 9]);
    let e = alg.sort_keys(&gpu.upload(&[1u8]).unwrap(), &mut gpu.zeros::<u8>(1).unwrap(), Order::DESCENDING.bits(0..9)).unwrap_err();
    assert_eq!(e.to_string(), "a sort's bit range 0..9 is empty or past the key's 8 bits: give begin < end <= 8, or no range to sort by every bit");
    let e = alg.sort_keys(&gpu.upload(&[1.0f64]).unwrap(), &mut gpu.zeros::<f64>(1).unwrap(), Order::ASCENDING.bits(5..5)).unwrap_err();
    assert!(matches!(e, Error::BitRange { begin: 5, end: 5, key_bits: 64 }), "{e}");

    // A buffer of another device, with elements and without.
    let other = emulated();
    for n in [3, 0] {
        let theirs = other.zeros::<u32>(n).unwrap();
        let mut ours = gpu.zeros::<u32>(n).unwrap();
        let e = alg.sort_keys(&theirs, &mut ours, Order::ASCENDING).unwrap_err();
        assert!(matches!(e, Error::Launcher(LaunchError::OtherDevice { .. })), "n = {n}: {e}");
        let mut their_out = other.zeros::<u32>(n).unwrap();
        let mine = gpu.zeros::<u32>(n).unwrap();
        let e = alg.sort_keys(&mine, &mut their_out, Order::ASCENDING).unwrap_err();
        assert!(matches!(e, Error::Launcher(LaunchError::OtherDevice { .. })), "n = {n}: {e}");
        let (mut ky, their_values, mut vy) = (gpu.zeros::<u32>(n).unwrap(), other.zeros::<u32>(n).unwrap(), gpu.zeros::<u32>(n).unwrap());
        let e = alg.sort_pairs(&mine, &mut ky, &their_values, &mut vy, Order::ASCENDING).unwrap_err();
        assert!(matches!(e, Error::Launcher(LaunchError::OtherDevice { .. })), "n = {n}: {e}");
    }
    // And the sorts still work after each refusal.
    check_keys(&mut alg, &[5u32, 4, 4, 1], Order::ASCENDING, "after the refusals");
}
