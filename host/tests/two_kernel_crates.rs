//! A program that links two kernel crates, each with its own PTX (the
//! lesson's `gpu` and the compaction's `compact-kernels`): each kernel is
//! found by name and loaded from its own crate's module (before 2026-12-04
//! a second crate's `ptx!()` was refused: one program, one kernel crate).

use compact_kernels as _;
use gpu as _;
use gpu_ptx as _;

use host::device::{EmulatedDevice, Gpu};
use host::launch::prelude::*;

fn both(gpu: &Gpu) {
    assert_eq!(gpu::kernels::REDUCE_COOPERATIVE_GRID.crate_name(), "gpu");
    assert_eq!(compact_kernels::COMPACT.crate_name(), "compact_kernels");
    assert!(cg_kernel::kernels::ptx_of("gpu").is_ok() && cg_kernel::kernels::ptx_of("compact_kernels").is_ok());
    let n = 10_000;
    let xs: Vec<f32> = (0..n).map(|i| (i % 7) as f32 / 7.0).collect();
    // The lesson's sum, from the gpu crate.
    let sum = gpu.cooperative_kernel(&gpu::kernels::REDUCE_COOPERATIVE_GRID).unwrap();
    let launch = sum.configure(8, 256).unwrap();
    let input = host::launch::DeviceInput::upload(gpu, &xs).unwrap();
    let (mut partials, mut out) = (gpu.zeros::<f32>(8).unwrap(), gpu.zeros::<f32>(1).unwrap());
    launch.sum(&input, partials.slice_mut(..), out.slice_mut(..)).unwrap();
    let want: f64 = xs.iter().map(|&x| x as f64).sum();
    assert!((gpu.read(&out).unwrap()[0] as f64 - want).abs() < 1e-2 * want, "the sum");
    // The compaction, from the compact-kernels crate.
    let compact = gpu.cooperative_kernel(&compact_kernels::COMPACT).unwrap();
    let launch = compact.configure(4, 256).unwrap();
    let x = gpu.upload(&xs).unwrap();
    let (mut y, mut counts, mut selected) = (gpu.zeros::<f32>(n).unwrap(), gpu.zeros::<u32>(4).unwrap(), gpu.zeros::<u32>(1).unwrap());
    // SAFETY: x and y hold n floats, x a whole buffer; counts one per block; selected one.
    unsafe { launch.launch((&x.slice(..), y.slice_mut(..), counts.slice_mut(..), selected.slice_mut(..), 0.5f32, n)).unwrap() };
    let kept: Vec<f32> = xs.iter().copied().filter(|&v| v > 0.5).collect();
    assert_eq!(gpu.read(&selected).unwrap()[0] as usize, kept.len());
    assert_eq!(gpu.read(&y).unwrap()[..kept.len()], kept[..]);
}

#[test]
fn two_kernel_crates_in_one_program_each_load_their_own_kernels_on_the_emulator() {
    both(&Gpu::emulated(EmulatedDevice::T4, Default::default()));
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn two_kernel_crates_in_one_program_each_load_their_own_kernels_on_a_gpu() {
    both(&Gpu::open(0).expect("a GPU"));
}

#[test]
fn asking_for_the_one_ptx_of_two_crates_or_for_a_crate_not_linked_is_named() {
    let one = cg_kernel::kernels::ptx().unwrap_err().to_string();
    assert!(one.contains("several kernels' crates") && one.contains("ptx_of"), "{one}");
    let none = cg_kernel::kernels::ptx_of("no_such_kernels").unwrap_err().to_string();
    assert!(none.contains("`no_such_kernels`") && none.contains("cg_kernel::ptx!()"), "{none}");
}
