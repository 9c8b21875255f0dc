//! The kernel added in one place, found by name and run (`mod registry_case;`):
//! what the emulator's test and the GPU's share.

use gpu::kernels::GridSync;
use gpu::mem::Out;
use host::device::Gpu;
use host::launch::prelude::*;

/// `registered_alone` is named only by its `#[kernel]`: the linker's list
/// holds it, with the type it was declared with. Six blocks each write
/// 1000 + the blocks they saw.
pub fn run_the_kernel_named_nowhere_else(gpu: &Gpu) {
    let def = gpu::kernels::kernel::<(Out<u32>,), GridSync>("registered_alone").unwrap();
    let kernel = gpu.cooperative_kernel(&def).unwrap();
    let mut out = gpu.zeros::<u32>(6).unwrap();
    kernel.configure(6, 64).unwrap().per_block(out.slice_mut(..)).unwrap();
    assert_eq!(gpu.read(&out).unwrap(), [1006; 6]);
}

/// `launch_bounded` is declared `launch_bounds(128, 4)`: blocks of 128 run,
/// and a block of 256 is refused by name before the launch (CUDA would
/// refuse it too, with an invalid-value error that names nothing).
pub fn run_the_kernel_with_launch_bounds(gpu: &Gpu) {
    let def = gpu::kernels::kernel::<(Out<u32>,), GridSync>("launch_bounded").unwrap();
    assert_eq!(def.launch_bounds(), Some((128, 4)));
    let kernel = gpu.cooperative_kernel(&def).unwrap();
    let err = kernel.configure(2, 256).map(|_| ()).unwrap_err().to_string();
    assert!(err.contains("launch_bounds(128, ...)") && err.contains("256 threads"), "{err}");
    let mut out = gpu.zeros::<u32>(4).unwrap();
    kernel.configure(4, 128).unwrap().per_block(out.slice_mut(..)).unwrap();
    assert_eq!(gpu.read(&out).unwrap(), [128; 4]);
}
