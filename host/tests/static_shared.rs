//! Static shared arrays (`shared_array!`, C++'s `__shared__ T a[N]`) in a
//! kernel of the lesson's crate (`gpu::kernels::static_shared_arrays`):
//! three arrays after a dynamic part, none overlapping another, with the
//! kernel's shared memory counting them all; on the emulated GPU, and on a
//! CUDA GPU (ignored without one), from the PTX.

use cg_launcher::device::{EmulatedDevice, EmulatorOptions, Gpu};
use gpu::kernels::{STATIC_SHARED_ARRAYS, static_shared_arrays_expected};
use gpu_ptx as _;

/// 3 blocks of `threads`: each thread's value as the kernel's doc says.
fn check(gpu: &Gpu, threads: u32) {
    let mut out = gpu.zeros::<f64>(3 * threads as usize).unwrap();
    // SAFETY: one element of out per thread; at most 256 threads a block.
    unsafe { gpu.kernel(&STATIC_SHARED_ARRAYS).unwrap().launch(3, threads, (out.slice_mut(..),)).unwrap() };
    assert_eq!(gpu.read(&out).unwrap(), static_shared_arrays_expected(3, threads as usize), "{threads} threads a block");
}

#[test]
fn the_arrays_follow_the_dynamic_part_and_count_in_the_kernels_shared_memory() {
    // 64 threads: 256 bytes of dynamic part, then 256 u32 (1,024), 256 f64
    // (2,048) and 3 bytes.
    assert_eq!(STATIC_SHARED_ARRAYS.shared_bytes(64), 256 + 1_024 + 2_048 + 3);
    // A dynamic part that is not a multiple of 16 rounds up before them.
    assert_eq!(STATIC_SHARED_ARRAYS.shared_bytes(33), 144 + 1_024 + 2_048 + 3);
    let gpu = Gpu::emulated(EmulatedDevice::T4, EmulatorOptions::default());
    for threads in [32, 96, 256] {
        check(&gpu, threads);
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_arrays_follow_the_dynamic_part_on_the_gpu() {
    let gpu = Gpu::open(0).unwrap();
    for threads in [32, 96, 256] {
        check(&gpu, threads);
    }
}
