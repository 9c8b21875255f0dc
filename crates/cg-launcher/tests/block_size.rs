//! `#[kernel(block_size = N)]`: a kernel whose body is written for blocks of
//! exactly N threads (a tile of shared memory per thread of a fixed block,
//! say) says so, and a launch of another block size is refused by name
//! before it runs, where a 128-thread launch of a 256-thread kernel once
//! surfaced as an uninitialized read.

use cg_kernel::cg::this_thread_block;
use cg_kernel::kernel;
use cg_kernel::mem::Out;
use cg_launcher::device::{EmulatedDevice, Gpu};
use cg_launcher::error::Error;

/// Each block's thread count, from thread 0. Emulator only.
///
/// # Safety
/// `out` holds one element per block.
#[kernel(emulator, block_size = 64)]
pub unsafe fn sixty_four(out: Out<u32>) {
    let block = this_thread_block();
    if block.thread_rank() == 0 {
        // SAFETY: one element per block.
        unsafe { out.write(block.group_index().x as usize, block.num_threads()) };
    }
}

#[test]
fn a_launch_of_another_block_size_than_the_kernels_is_refused_by_name() {
    assert_eq!(SIXTY_FOUR.block_size(), Some(64));
    assert_eq!(SIXTY_FOUR.launch_bounds(), Some((64, 0)), "its PTX says .maxntid 64 too");
    let gpu = Gpu::emulated(EmulatedDevice::T4, Default::default());
    let kernel = gpu.kernel(&SIXTY_FOUR).unwrap();
    let mut out = gpu.zeros::<u32>(2).unwrap();
    for threads in [32, 128] {
        // SAFETY: one element per block.
        let e = unsafe { kernel.launch(2, threads, (out.slice_mut(..),)) }.unwrap_err();
        assert!(matches!(e, Error::NotTheBlockSize { kernel: "sixty_four", required: 64, .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            format!(
                "blocks of {threads} threads refused: sixty_four is declared `block_size = 64`, its body written for blocks of exactly 64 threads: launch it with 64"
            )
        );
    }
    // SAFETY: as above.
    unsafe { kernel.launch(2, 64, (out.slice_mut(..),)) }.unwrap();
    assert_eq!(gpu.read(&out).unwrap(), [64, 64]);
}
