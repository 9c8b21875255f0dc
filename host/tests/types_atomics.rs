//! Every element type and every atomic, on the emulated T4 and on a GPU:
//! the same kernels (`gpu/src/kernels/types.rs`, `gpu/src/kernels/atomics.rs`)
//! and the same checks, the GPU's marked `#[ignore]` so that a run without
//! one lists them by name. The byte histogram is the one the examples build on.

use gpu::emu::{Device, Options};
use gpu::kernels::atomics::{FLOAT_SLOTS, INTEGER_SLOTS};
use gpu::kernels::{HISTOGRAM_BINS, HISTOGRAM_BYTES, KernelDef, NoGridSync};
use gpu::mem::{In, Out};
use gpu_ptx as _;
use host::device::Gpu;

type Result<T> = cg_launcher::error::Result<T>;

fn t4() -> Gpu {
    Gpu::emulated(Device::T4, Options::default())
}

fn gpu() -> Gpu {
    Gpu::open(0).expect("an NVIDIA GPU")
}

/// Bytes with every value and a skew (one value in eight is 7), from a
/// fixed sequence.
fn bytes(n: usize) -> Vec<u8> {
    (0..n as u64)
        .map(|i| {
            let z = (i + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let z = (z ^ (z >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            if z >> 61 == 0 { 7 } else { (z >> 40) as u8 }
        })
        .collect()
}

/// The histogram of `n` bytes on `gpu`, checked against the CPU's count.
fn histogram_matches_the_cpus_count(gpu: &Gpu, n: usize, blocks: u32, threads: u32) -> Result<()> {
    let data = bytes(n);
    let mut expected = [0u32; HISTOGRAM_BINS];
    for &b in &data {
        expected[b as usize] += 1;
    }
    let input = gpu.upload(&data)?;
    let mut bins = gpu.zeros::<u32>(HISTOGRAM_BINS)?;
    let kernel = gpu.kernel(&HISTOGRAM_BYTES)?;
    // SAFETY: n bytes in, HISTOGRAM_BINS counts out, zeroed.
    unsafe { kernel.launch(blocks, threads, (&input.slice(..), bins.slice_mut(..), n))? };
    let got = gpu.read(&bins)?;
    assert_eq!(got, expected, "{n} bytes, {blocks} blocks of {threads}");
    assert_eq!(got.iter().map(|&c| c as usize).sum::<usize>(), n);
    Ok(())
}

/// Two arrays in one block's dynamic shared memory: neither overlaps the
/// other, and the second is aligned for its `f64`s (`DynamicShared::after`).
fn two_shared_arrays_hold_apart(gpu: &Gpu) -> Result<()> {
    let kernel = gpu.kernel(&gpu::kernels::types::TWO_SHARED_ARRAYS)?;
    for threads in [32u32, 64, 256] {
        let mut out = gpu.zeros::<f64>(2 * threads as usize)?;
        // SAFETY: one element per thread of the grid.
        unsafe { kernel.launch(2, threads, (out.slice_mut(..),))? };
        let n = threads as usize;
        let want: Vec<f64> = (0..2 * n).map(|i| (i % n + 1) % n).map(|o| o as f64 * 0.5 + (o % 200) as f64).collect();
        assert_eq!(gpu.read(&out)?, want, "blocks of {threads}");
    }
    Ok(())
}

#[test]
fn two_shared_arrays_hold_apart_on_the_emulator() -> Result<()> {
    two_shared_arrays_hold_apart(&t4())
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn two_shared_arrays_hold_apart_on_a_gpu() -> Result<()> {
    two_shared_arrays_hold_apart(&gpu())
}

#[test]
fn the_byte_histogram_matches_the_cpus_count_on_the_emulator() -> Result<()> {
    let gpu = t4();
    histogram_matches_the_cpus_count(&gpu, 100_003, 16, 256)?;
    histogram_matches_the_cpus_count(&gpu, 1000, 3, 64)?;
    histogram_matches_the_cpus_count(&gpu, 0, 1, 32)
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_byte_histogram_matches_the_cpus_count_on_a_gpu() -> Result<()> {
    let gpu = gpu();
    histogram_matches_the_cpus_count(&gpu, (1 << 24) + 3, 264, 256)?;
    histogram_matches_the_cpus_count(&gpu, 100_003, 16, 256)?;
    histogram_matches_the_cpus_count(&gpu, 1000, 3, 64)
}

/// Each `types_*` kernel: `out[i] = x[i ^ 1]` through shared memory, and
/// `out[n] = k`, the scalar parameter.
fn every_element_type_round_trips(gpu: &Gpu) -> Result<()> {
    macro_rules! check {
        ($($name:literal: $t:ty = $k:expr),*) => {$({
            let n = 1000;
            let xs: Vec<$t> = (0..n).map(|i| ((i * 7919) % 251) as $t).collect();
            let k: $t = $k;
            let def: KernelDef<(In<$t>, Out<$t>, $t, usize), NoGridSync> = gpu::kernels::kernel($name).expect("a types kernel");
            let x = gpu.upload(&xs)?;
            let mut out = gpu.uninit::<$t>(n + 1)?;
            let kernel = gpu.kernel(&def)?;
            // SAFETY: x holds n elements, out n + 1; blocks of 64.
            unsafe { kernel.launch(16, 64, (&x.slice(..), out.slice_mut(..), k, n))? };
            let mut expected: Vec<$t> = (0..n).map(|i| if i ^ 1 < n { xs[i ^ 1] } else { k }).collect();
            expected.push(k);
            let got = gpu.read(&out)?;
            assert!(got.iter().zip(&expected).all(|(a, b)| a.to_ne_bytes() == b.to_ne_bytes()), "{}: {:?}", $name, &got[..8]);
        })*};
    }
    check!(
        "types_u8": u8 = 0xfe, "types_i8": i8 = -100, "types_u16": u16 = 0xfedc, "types_i16": i16 = -30_000,
        "types_u32": u32 = 4_000_000_000, "types_i32": i32 = -2_000_000_000, "types_u64": u64 = u64::MAX - 2,
        "types_i64": i64 = i64::MIN + 3, "types_f32": f32 = 0.1, "types_f64": f64 = -2.5e300
    );
    Ok(())
}

#[test]
fn every_element_type_and_scalar_parameter_round_trips_on_the_emulator() -> Result<()> {
    every_element_type_round_trips(&t4())
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn every_element_type_and_scalar_parameter_round_trips_on_a_gpu() -> Result<()> {
    every_element_type_round_trips(&gpu())
}

/// Each `atomics_*` integer kernel, checked against the CPU's fold of the same operations.
fn every_integer_atomic_gives_the_cpus_answer(gpu: &Gpu, blocks: u32, threads: u32) -> Result<()> {
    macro_rules! check {
        ($($name:literal: $t:ty),*) => {$({
            let n = (blocks * threads) as usize;
            let def: KernelDef<(Out<$t>, Out<$t>, Out<$t>), NoGridSync> = gpu::kernels::kernel($name).expect("an atomics kernel");
            let mut out = gpu.upload(&[0 as $t, 0, <$t>::MAX, <$t>::MIN, 0, 0, !0, 0, 0])?;
            let mut olds = gpu.zeros::<$t>(2 * n)?;
            let mut per_block = gpu.zeros::<$t>(INTEGER_SLOTS * blocks as usize)?;
            let kernel = gpu.kernel(&def)?;
            // SAFETY: INTEGER_SLOTS, two per thread, INTEGER_SLOTS per block.
            unsafe { kernel.launch(blocks, threads, (out.slice_mut(..), olds.slice_mut(..), per_block.slice_mut(..)))? };
            // What every thread r (of `count`) does, folded on the CPU.
            let fold = |count: usize| {
                let v = |r: usize| (r as $t).wrapping_sub((count / 2) as $t);
                let bit = |r: usize| (1 as $t) << (r % <$t>::BITS as usize);
                let (mut and, mut or, mut xor) = (!0 as $t, 0 as $t, 0 as $t);
                for r in 0..count {
                    (and, or, xor) = (and & !bit(r), or | bit(r), xor ^ bit(r));
                }
                ((count as $t), (0 as $t).wrapping_sub(count as $t), (0..count).map(v).min().unwrap(), (0..count).map(v).max().unwrap(), and, or, xor)
            };
            let got = gpu.read(&out)?;
            let (add, sub, min, max, and, or, xor) = fold(n);
            assert_eq!([got[0], got[1], got[2], got[3], got[6], got[7], got[8]], [add, sub, min, max, and, or, xor], "{} in global memory", $name);
            let olds = gpu.read(&olds)?;
            // One exchange chain: its old values and the last are 0 and every r + 1.
            let mut chain = olds[..n].to_vec();
            chain.push(got[4]);
            chain.sort_unstable();
            assert!(chain.iter().enumerate().all(|(k, &v)| v == k as $t), "{}: exchange", $name);
            // One compare-and-swap from 0 succeeded; every other saw its value.
            let winners: Vec<usize> = (0..n).filter(|&r| olds[n + r] == 0).collect();
            assert_eq!(winners.len(), 1, "{}: compare-and-swap", $name);
            assert_eq!(got[5], winners[0] as $t + 1);
            assert!((0..n).filter(|&r| r != winners[0]).all(|r| olds[n + r] == got[5]));
            // Each block's shared memory: the same folds over its threads.
            let (add, sub, min, max, and, or, xor) = fold(threads as usize);
            for (b, s) in gpu.read(&per_block)?.chunks(INTEGER_SLOTS).enumerate() {
                assert_eq!([s[0], s[1], s[2], s[3], s[6], s[7], s[8]], [add, sub, min, max, and, or, xor], "{} in block {b}'s shared memory", $name);
                assert!((1..=threads as $t).contains(&s[4]) && (1..=threads as $t).contains(&s[5]), "{}: block {b}: {s:?}", $name);
            }
        })*};
    }
    check!("atomics_u32": u32, "atomics_i32": i32, "atomics_u64": u64, "atomics_i64": i64);
    Ok(())
}

#[test]
fn every_integer_atomic_gives_the_cpus_answer_on_the_emulator() -> Result<()> {
    every_integer_atomic_gives_the_cpus_answer(&t4(), 12, 96)
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn every_integer_atomic_gives_the_cpus_answer_on_a_gpu() -> Result<()> {
    let gpu = gpu();
    every_integer_atomic_gives_the_cpus_answer(&gpu, 12, 96)?;
    every_integer_atomic_gives_the_cpus_answer(&gpu, 528, 256)
}

/// Each `atomics_f*` kernel: exact sums of halves and quarters, one
/// exchange chain, one compare-and-swap winner, a sum of `1 / (r + 1)`
/// within float tolerance, and a subnormal added in global memory (flushed
/// to zero by `atom.add.f32`, kept by `f64`) and in shared memory (kept).
fn every_float_atomic_gives_the_cpus_answer(gpu: &Gpu, blocks: u32, threads: u32) -> Result<()> {
    macro_rules! check {
        ($($name:literal: $t:ty, $global_subnormal:expr),*) => {$({
            let n = (blocks * threads) as usize;
            let def: KernelDef<(Out<$t>, Out<$t>, Out<$t>), NoGridSync> = gpu::kernels::kernel($name).expect("an atomics kernel");
            let mut out = gpu.zeros::<$t>(FLOAT_SLOTS)?;
            let mut olds = gpu.zeros::<$t>(2 * n)?;
            let mut per_block = gpu.zeros::<$t>(FLOAT_SLOTS * blocks as usize)?;
            let kernel = gpu.kernel(&def)?;
            // SAFETY: FLOAT_SLOTS, two per thread, FLOAT_SLOTS per block.
            unsafe { kernel.launch(blocks, threads, (out.slice_mut(..), olds.slice_mut(..), per_block.slice_mut(..)))? };
            let got = gpu.read(&out)?;
            let harmonic = |count: usize| (1..=count).map(|r| 1.0 / r as f64).sum::<f64>();
            let close = |sum: $t, count: usize| ((sum as f64) - harmonic(count)).abs() <= count as f64 * <$t>::EPSILON as f64 * harmonic(count);
            assert_eq!((got[0], got[1]), (0.5 * n as $t, -0.25 * n as $t), "{}", $name);
            assert!(close(got[4], n), "{}: {} against {}", $name, got[4], harmonic(n));
            let olds = gpu.read(&olds)?;
            let mut chain: Vec<$t> = olds[..n].to_vec();
            chain.push(got[2]);
            chain.sort_by(|a, b| a.total_cmp(b));
            assert!(chain.iter().enumerate().all(|(k, &v)| v == k as $t), "{}: exchange", $name);
            let winners: Vec<usize> = (0..n).filter(|&r| olds[n + r] == 0.0).collect();
            assert_eq!(winners.len(), 1, "{}: compare-and-swap", $name);
            assert_eq!(got[3], winners[0] as $t + 1.0);
            assert_eq!(got[5].to_bits(), ($global_subnormal as $t).to_bits(), "{}: a subnormal added in global memory", $name);
            for (b, s) in gpu.read(&per_block)?.chunks(FLOAT_SLOTS).enumerate() {
                assert_eq!((s[0], s[1]), (0.5 * threads as $t, -0.25 * threads as $t), "{} in block {b}'s shared memory", $name);
                assert!((1.0..=threads as $t).contains(&s[2]) && (1.0..=threads as $t).contains(&s[3]), "{}: block {b}: {s:?}", $name);
                assert!(close(s[4], threads as usize), "{}: block {b}: {}", $name, s[4]);
                assert_eq!(s[5], <$t>::MIN_POSITIVE / 2.0, "{}: a subnormal added in shared memory is kept", $name);
            }
        })*};
    }
    check!("atomics_f32": f32, 0.0, "atomics_f64": f64, f64::MIN_POSITIVE / 2.0);
    Ok(())
}

#[test]
fn every_float_atomic_gives_the_cpus_answer_on_the_emulator() -> Result<()> {
    every_float_atomic_gives_the_cpus_answer(&t4(), 12, 96)
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn every_float_atomic_gives_the_cpus_answer_on_a_gpu() -> Result<()> {
    let gpu = gpu();
    every_float_atomic_gives_the_cpus_answer(&gpu, 12, 96)?;
    every_float_atomic_gives_the_cpus_answer(&gpu, 528, 256)
}

/// The record of launches carries the emulator's count of atomic updates on
/// the busiest word: the histogram adds each block's count of a byte value
/// to its bin once, so with every value in every block's share, 4 blocks
/// make 4 on each bin. A GPU does not count them.
#[test]
fn the_record_of_a_launch_on_the_emulator_counts_the_atomics_on_its_busiest_word() {
    let gpu = t4();
    let data = bytes(1 << 14);
    let input = gpu.upload(&data).unwrap();
    let mut bins = gpu.zeros::<u32>(HISTOGRAM_BINS).unwrap();
    let kernel = gpu.kernel(&HISTOGRAM_BYTES).unwrap();
    // SAFETY: n bytes in, HISTOGRAM_BINS counts out, zeroed.
    let (launch, launched) = gpu.recording_launches(|| unsafe { kernel.launch(4, 256, (&input.slice(..), bins.slice_mut(..), data.len())) });
    launch.unwrap();
    assert_eq!(launched.len(), 1);
    assert_eq!(launched[0].most_atomics_on_one_word, Some(4), "{launched:?}");
}
