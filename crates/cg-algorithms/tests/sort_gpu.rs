//! The radix sort on a CUDA GPU against a stable sort on the CPU, at the
//! bench's sizes (2^16 to 2^26) and odd ones, every key type, pairs,
//! descending, bit ranges, the double-buffer forms, and an input past one
//! launch's portion (2^28 keys). Needs a GPU: ignored unless run with
//! `--ignored`.

mod sorting;

use cg_algorithms::{Algorithms, Order};
use cg_algorithms_kernels::sort::tile_len;
use cg_launcher::device::Gpu;
use sorting::{TestKey, check_double_buffers, check_keys, check_pairs, mix, mixed};

fn random<K: TestKey>(n: usize, seed: u64) -> Vec<K> {
    (0..n).map(|i| K::random(mix(seed ^ ((i as u64) << 20)))).collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn u32_keys_and_pairs_sort_as_the_cpu_does_at_the_benchs_sizes_on_the_gpu() {
    let gpu = Gpu::open(0).expect("a CUDA GPU");
    let mut alg = Algorithms::new(&gpu);
    let tile = tile_len(4, false);
    for n in [1 << 16, 1 << 20, (1 << 20) + 7, 3 * tile + 5, 1 << 22, 1 << 23, (1 << 24) - 1, 1 << 24, 1 << 26] {
        check_keys(&mut alg, &random::<u32>(n, 1), Order::ASCENDING, "random");
        // 12-bit keys: many equal, whose values must keep their order.
        let ties: Vec<u32> = random::<u32>(n, 2).iter().map(|k| k >> 20).collect();
        check_pairs::<u32, u32>(&mut alg, &ties, Order::ASCENDING, "12-bit keys");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_key_type_sorts_as_the_cpu_does_both_ways_on_the_gpu() {
    let gpu = Gpu::open(0).expect("a CUDA GPU");
    let mut alg = Algorithms::new(&gpu);
    for n in [(1 << 20) + 7, 1 << 22] {
        check_keys(&mut alg, &random::<u64>(n, 3), Order::ASCENDING, "random");
        check_keys(&mut alg, &random::<f32>(n, 4), Order::ASCENDING, "random bits");
        check_keys(&mut alg, &random::<f32>(n, 5), Order::DESCENDING, "random bits");
        check_pairs::<f64, f32>(&mut alg, &random::<f64>(n, 6), Order::DESCENDING, "random bits");
        check_pairs::<i64, i32>(&mut alg, &random::<i64>(n, 7), Order::ASCENDING, "random");
        check_keys(&mut alg, &random::<i32>(n, 8), Order::DESCENDING, "random");
        check_pairs::<u16, u32>(&mut alg, &random::<u16>(n, 9), Order::ASCENDING, "random");
        check_keys(&mut alg, &random::<i8>(n, 10), Order::DESCENDING, "random");
        check_keys(&mut alg, &mixed::<u32>(n / 6, 11), Order::ASCENDING, "every shape");
        check_keys(&mut alg, &mixed::<f64>(n / 6, 12), Order::DESCENDING, "every shape");
    }
    // Each shape by itself, at 2^22.
    for (what, keys) in sorting::shapes::<u32>(1 << 22, 13) {
        check_keys(&mut alg, &keys, Order::ASCENDING, what);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bit_ranges_and_the_double_buffer_forms_sort_as_the_cpu_does_on_the_gpu() {
    let gpu = Gpu::open(0).expect("a CUDA GPU");
    let mut alg = Algorithms::new(&gpu);
    let n = (1 << 22) + 3;
    let keys = random::<u32>(n, 14);
    check_pairs::<u32, u32>(&mut alg, &keys, Order::DESCENDING.bits(4..20), "random");
    check_keys(&mut alg, &keys, Order::ASCENDING.bits(31..32), "random");
    check_keys(&mut alg, &random::<f32>(n, 15), Order::ASCENDING.bits(0..12), "random bits");
    check_double_buffers(&mut alg, &keys, Order::ASCENDING, 4);
    check_double_buffers(&mut alg, &keys, Order::DESCENDING.bits(0..24), 3);
    check_double_buffers(&mut alg, &random::<u64>(1 << 20, 16), Order::ASCENDING, 8);
}

/// 2^28 + 7 keys by their low byte: two launches for the one pass (a
/// launch takes at most `portion_len` keys, so that every look-back count
/// fits 30 bits), the second's digits placed after the first's by the
/// counts the first hands on; checked against a counting sort (stable).
#[test]
#[ignore = "needs a CUDA GPU"]
fn an_input_past_one_launchs_portion_sorts_in_portions_on_the_gpu() {
    let gpu = Gpu::open(0).expect("a CUDA GPU");
    let mut alg = Algorithms::new(&gpu);
    let n = (1 << 28) + 7;
    assert!(n > cg_algorithms_kernels::sort::portion_len(4, false));
    let keys: Vec<u32> = (0..n as u64).map(|i| (mix(i) >> 32) as u32).collect();
    let x = gpu.upload(&keys).unwrap();
    let mut y = gpu.zeros::<u32>(n).unwrap();
    alg.sort_keys(&x, &mut y, Order::ASCENDING.bits(0..8)).unwrap();
    let mut start = [0usize; 257];
    keys.iter().for_each(|&k| start[(k & 0xff) as usize + 1] += 1);
    (1..257).for_each(|d| start[d] += start[d - 1]);
    let mut want = vec![0u32; n];
    for &k in &keys {
        let d = (k & 0xff) as usize;
        want[start[d]] = k;
        start[d] += 1;
    }
    let got = gpu.read(&y).unwrap();
    assert_eq!(got.iter().zip(&want).position(|(g, w)| g != w), None, "first difference of {n}");
}
