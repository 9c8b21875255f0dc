//! The radix sort against a stable sort on the CPU (by key, then index), for the
//! emulator's tests and the GPU's: each key type's order as CUB has it,
//! inputs of each shape, and checks of the keys, the values, the input
//! left as it was and the output past `n` left as it was.

#![allow(dead_code)] // each test file uses its own part

use cg_algorithms::{Algorithms, DoubleBuffer, Element, Key, Order};
use std::cmp::Reverse;

/// SplitMix64 of `i`: the tests' random bits.
pub fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A key type as the reference orders it: CUB's order, computed here on
/// the CPU from the definitions (not from the kernels' transform).
pub trait TestKey: Key + PartialEq {
    /// The key from 64 random bits.
    fn random(bits: u64) -> Self;
    /// The key's bits, zero-extended.
    fn raw(self) -> u64;
    /// Where the key falls among all keys of its type, as bits: unsigned
    /// integers as they are; signed ones by value; floats by value, with
    /// NaNs where their bits put them (beyond the infinities on their sign's
    /// side), and `-0.0` and `+0.0` the same: `+0.0`'s place in an
    /// ascending sort, `-0.0`'s in a descending one (CUB's digits).
    fn rank_bits(self, descending: bool) -> u64;
    /// Keys that stand out: the extremes, zero, and for floats the
    /// infinities, NaNs of both signs, both zeros and the subnormals.
    fn specials() -> Vec<Self>;
    /// A key whose stored bits are its top bit alone.
    fn high_bit() -> Self;
}

macro_rules! unsigned_keys {
    ($($t:ty),*) => {$(
        impl TestKey for $t {
            fn random(bits: u64) -> $t {
                bits as $t
            }
            fn raw(self) -> u64 {
                self as u64
            }
            fn rank_bits(self, _descending: bool) -> u64 {
                self as u64
            }
            fn specials() -> Vec<$t> {
                vec![0, 1, <$t>::MAX, <$t>::MAX - 1, 1 << (<$t>::BITS - 1)]
            }
            fn high_bit() -> $t {
                1 << (<$t>::BITS - 1)
            }
        }
    )*};
}
unsigned_keys!(u8, u16, u32, u64);

macro_rules! signed_keys {
    ($($t:ty: $u:ty),*) => {$(
        impl TestKey for $t {
            fn random(bits: u64) -> $t {
                bits as $t
            }
            fn raw(self) -> u64 {
                self as $u as u64
            }
            fn rank_bits(self, _descending: bool) -> u64 {
                // By value: the distance from the type's least.
                (self as i128 - <$t>::MIN as i128) as u64
            }
            fn specials() -> Vec<$t> {
                vec![0, 1, -1, <$t>::MIN, <$t>::MAX, <$t>::MIN + 1]
            }
            fn high_bit() -> $t {
                <$t>::MIN
            }
        }
    )*};
}
signed_keys!(i8: u8, i16: u16, i32: u32, i64: u64);

macro_rules! float_keys {
    ($($t:ty: $u:ty),*) => {$(
        impl TestKey for $t {
            fn random(bits: u64) -> $t {
                <$t>::from_bits(bits as $u)
            }
            fn raw(self) -> u64 {
                self.to_bits() as u64
            }
            fn rank_bits(self, descending: bool) -> u64 {
                let sign: $u = 1 << (<$u>::BITS - 1);
                if self == 0.0 {
                    // Between the negatives and the positives, one place for both zeros.
                    return (if descending { sign - 1 } else { sign }) as u64;
                }
                let b = self.to_bits();
                (if b & sign != 0 { !b } else { b | sign }) as u64
            }
            fn specials() -> Vec<$t> {
                let nan = <$t>::NAN.to_bits();
                vec![
                    0.0, -0.0, 1.0, -1.0, <$t>::INFINITY, <$t>::NEG_INFINITY, <$t>::MAX, <$t>::MIN,
                    <$t>::MIN_POSITIVE, -<$t>::MIN_POSITIVE, <$t>::from_bits(1), <$t>::from_bits(1 | 1 << (<$u>::BITS - 1)),
                    <$t>::from_bits(nan), <$t>::from_bits(nan | 1 << (<$u>::BITS - 1)), <$t>::from_bits(nan | 5), <$t>::from_bits(<$u>::MAX),
                ]
            }
            fn high_bit() -> $t {
                -0.0
            }
        }
    )*};
}
float_keys!(f32: u32, f64: u64);

/// A value type of the pairs' tests: each value its index.
pub trait TestValue: Element {
    fn of(i: usize) -> Self;
}
impl TestValue for u32 {
    fn of(i: usize) -> u32 {
        i as u32
    }
}
impl TestValue for i32 {
    fn of(i: usize) -> i32 {
        -(i as i32)
    }
}
impl TestValue for f32 {
    fn of(i: usize) -> f32 {
        i as f32 + 0.5
    }
}

/// The order in which a stable sort puts `keys` by `order`: the index of
/// each output element's key in `keys`.
pub fn reference<K: TestKey>(keys: &[K], order: &Order) -> Vec<usize> {
    let bits = order.bit_range().unwrap_or(0..K::BITS);
    let width = bits.end - bits.start;
    let mask = if width == 64 { u64::MAX } else { (1 << width) - 1 };
    let descending = order.is_descending();
    // A stable sort, written as an unstable one by (key, index), which is
    // several times faster at the GPU tests' 2^26.
    let mut by: Vec<(u64, usize)> = keys.iter().enumerate().map(|(i, k)| ((k.rank_bits(descending) >> bits.start) & mask, i)).collect();
    if descending {
        by.sort_unstable_by_key(|&(k, i)| (Reverse(k), i));
    } else {
        by.sort_unstable();
    }
    by.into_iter().map(|(_, i)| i).collect()
}

/// The first place where `got` differs from `keys` in the order `index`
/// gives (bit for bit), if any, as a message.
fn first_difference<K: TestKey>(got: &[K], keys: &[K], index: &[usize]) -> Option<String> {
    let p = got.iter().zip(index).position(|(g, &i)| g.raw() != keys[i].raw())?;
    Some(format!("at {p}: {:?}, where the CPU's stable sort has {:?} (input {})", got[p], keys[index[p]], index[p]))
}

/// Inputs of each shape at `n`: random keys, all equal, in order, in
/// reverse order, one key with its top bit set among zeros, and the
/// specials strewn among random keys.
pub fn shapes<K: TestKey>(n: usize, seed: u64) -> Vec<(&'static str, Vec<K>)> {
    let random: Vec<K> = (0..n).map(|i| K::random(mix(seed ^ i as u64))).collect();
    let mut sorted = random.clone();
    let index = reference(&sorted, &Order::ASCENDING);
    sorted = index.iter().map(|&i| random[i]).collect();
    let reversed: Vec<K> = sorted.iter().rev().copied().collect();
    let zero = K::random(0);
    let mut high = vec![zero; n];
    if n > 0 {
        high[n / 2] = K::high_bit();
    }
    let specials = K::specials();
    let strewn: Vec<K> = (0..n).map(|i| if mix((seed + 7) ^ i as u64).is_multiple_of(3) { specials[i % specials.len()] } else { random[i] }).collect();
    vec![
        ("random", random),
        ("all equal", vec![K::random(mix(seed)); n]),
        ("in order", sorted),
        ("in reverse order", reversed),
        ("one high bit", high),
        ("specials", strewn),
    ]
}

/// `sort_keys` of `keys` by `order`: the output against the CPU's stable
/// sort, bit for bit; the input left as it was; the output past `n` left
/// as it was.
pub fn check_keys<K: TestKey>(alg: &mut Algorithms<'_>, keys: &[K], order: Order, what: &str) {
    let gpu = alg.gpu();
    let n = keys.len();
    let x = gpu.upload(keys).unwrap();
    let fill = K::random(0x5555_5555_5555_5555);
    let mut y = gpu.upload(&vec![fill; n + 3]).unwrap();
    alg.sort_keys(&x, &mut y, order).unwrap_or_else(|e| panic!("sort_keys of {n} {} ({what}): {e}", std::any::type_name::<K>()));
    let got = gpu.read(&y).unwrap();
    let index = reference(keys, &order);
    if let Some(d) = first_difference(&got[..n], keys, &index) {
        panic!("sort_keys of {n} {} ({what}, {order:?}): {d}", std::any::type_name::<K>());
    }
    assert!(got[n..].iter().all(|k| k.raw() == fill.raw()), "sort_keys of {n} ({what}): wrote past n");
    assert!(gpu.read(&x).unwrap().iter().zip(keys).all(|(a, b)| a.raw() == b.raw()), "sort_keys of {n} ({what}): changed its input");
}

/// `sort_pairs` of `keys`, each value [`TestValue::of`] its index: the keys
/// as [`check_keys`] checks them, and each value with its key, so that
/// equal keys' values are in their input order.
pub fn check_pairs<K: TestKey, V: TestValue>(alg: &mut Algorithms<'_>, keys: &[K], order: Order, what: &str) {
    let gpu = alg.gpu();
    let n = keys.len();
    let values: Vec<V> = (0..n).map(V::of).collect();
    let (kx, vx) = (gpu.upload(keys).unwrap(), gpu.upload(&values).unwrap());
    let (mut ky, mut vy) = (gpu.zeros::<K>(n).unwrap(), gpu.upload(&vec![V::of(7); n + 2]).unwrap());
    let name = || format!("sort_pairs of {n} {} and {} ({what}, {order:?})", std::any::type_name::<K>(), std::any::type_name::<V>());
    alg.sort_pairs(&kx, &mut ky, &vx, &mut vy, order).unwrap_or_else(|e| panic!("{}: {e}", name()));
    let index = reference(keys, &order);
    if let Some(d) = first_difference(&gpu.read(&ky).unwrap(), keys, &index) {
        panic!("{}: keys {d}", name());
    }
    let got = gpu.read(&vy).unwrap();
    if let Some(p) = (0..n).find(|&p| got[p] != values[index[p]]) {
        panic!("{}: the value at {p} is {:?}, where the CPU's stable sort has {:?} (input {})", name(), got[p], values[index[p]], index[p]);
    }
    assert!(got[n..].iter().all(|&v| v == V::of(7)), "{}: wrote values past n", name());
    assert!(gpu.read(&vx).unwrap() == values, "{}: changed its values' input", name());
}

/// The double-buffer sorts of `keys` (and of their indices as values):
/// the sorted keys and values in the current buffers afterwards, which are
/// the alternates where the passes were odd. The alternates are one
/// element longer than the current buffers, so that which buffer is
/// current shows in its length.
pub fn check_double_buffers<K: TestKey>(alg: &mut Algorithms<'_>, keys: &[K], order: Order, passes: usize) {
    let gpu = alg.gpu();
    let n = keys.len();
    let index = reference(keys, &order);
    let mut kb = DoubleBuffer::new(gpu.upload(keys).unwrap(), gpu.zeros::<K>(n + 1).unwrap());
    alg.sort_keys_double_buffer(&mut kb, order).unwrap();
    let moved = passes % 2 == 1;
    assert_eq!(kb.current().len(), if moved { n + 1 } else { n }, "sort_keys_double_buffer of {n} by {order:?}: {passes} passes");
    assert_eq!(first_difference(&gpu.read(kb.current()).unwrap()[..n], keys, &index), None, "sort_keys_double_buffer of {n} by {order:?}");

    let values: Vec<u32> = (0..n as u32).collect();
    let mut kb = DoubleBuffer::new(gpu.upload(keys).unwrap(), gpu.zeros::<K>(n + 1).unwrap());
    let mut vb = DoubleBuffer::new(gpu.upload(&values).unwrap(), gpu.zeros::<u32>(n + 1).unwrap());
    alg.sort_pairs_double_buffer(&mut kb, &mut vb, order).unwrap();
    assert_eq!(vb.current().len(), if moved { n + 1 } else { n }, "sort_pairs_double_buffer of {n}: the values' current buffer");
    assert_eq!(first_difference(&gpu.read(kb.current()).unwrap()[..n], keys, &index), None, "sort_pairs_double_buffer of {n} by {order:?}");
    let got = gpu.read(vb.current()).unwrap();
    assert!(index.iter().enumerate().all(|(p, &i)| got[p] == i as u32), "sort_pairs_double_buffer of {n} by {order:?}: values out of order");
    let (current, _) = vb.into_buffers();
    assert_eq!(current.len(), if moved { n + 1 } else { n });
}

/// The [`shapes`] of `per` keys each, one after another in one input.
pub fn mixed<K: TestKey>(per: usize, seed: u64) -> Vec<K> {
    shapes::<K>(per, seed).into_iter().flat_map(|(_, keys)| keys).collect()
}

/// [`mixed`] shapes of `K`, `per` keys each, sorted each way: keys only,
/// and with `u32` values where `pairs`.
pub fn check_mixed<K: TestKey>(alg: &mut Algorithms<'_>, per: usize, pairs: bool) {
    let keys = mixed::<K>(per, per as u64);
    for order in [Order::ASCENDING, Order::DESCENDING] {
        check_keys(alg, &keys, order, "every shape, one after another");
        if pairs {
            check_pairs::<K, u32>(alg, &keys, order, "every shape, one after another");
        }
    }
}
