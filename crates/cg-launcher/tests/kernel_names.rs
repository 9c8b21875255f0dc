//! Kernel names `#[kernel]` must take as the compiler does: a raw
//! identifier (its entry is the name without `r#`; the macro panicked), and
//! two kernels whose names differ only in case, each with a
//! `shared_array!` (their hidden items clashed once upper-cased).

use cg_emulator::Options;
use cg_kernel::cg::this_thread_block;
use cg_kernel::kernel;
use cg_kernel::mem::Out;
use cg_kernel::shared_array;
use cg_launcher::device::{EmulatedDevice, Gpu};

/// Thread 0 writes 7.
///
/// # Safety
/// `out` holds one element.
#[kernel(emulator)]
pub unsafe fn r#loop(out: Out<u32>) {
    if this_thread_block().thread_rank() == 0 {
        // SAFETY: one element, which thread 0 alone writes.
        unsafe { out.write(0, 7) };
    }
}

/// Thread `t` writes `t` through a shared array into `out[t]`.
///
/// # Safety
/// `out` holds one element per thread of one block of 32.
#[kernel(emulator)]
#[allow(non_snake_case)]
pub unsafe fn Through(out: Out<u32>) {
    let block = this_thread_block();
    let t = block.thread_rank() as usize;
    let a = shared_array!(u32, 32);
    // SAFETY: t < 32; one thread per element; the barrier orders them.
    unsafe {
        a.write(t, t as u32);
        block.sync();
        out.write(t, a.read(t));
    }
}

/// As `Through`, plus 1.
///
/// # Safety
/// As `Through`'s.
#[kernel(emulator, def = THROUGH_PLUS_ONE)]
pub unsafe fn through(out: Out<u32>) {
    let block = this_thread_block();
    let t = block.thread_rank() as usize;
    let a = shared_array!(u32, 32);
    // SAFETY: as Through's.
    unsafe {
        a.write(t, t as u32 + 1);
        block.sync();
        out.write(t, a.read(t));
    }
}

#[test]
fn raw_and_case_differing_kernel_names_build_load_and_run() {
    assert_eq!(LOOP.name(), "loop");
    let gpu = Gpu::emulated(EmulatedDevice::T4, Options::default());
    let mut out = gpu.zeros::<u32>(32).unwrap();
    // SAFETY: each kernel's contract: 32 elements, one block of 32.
    unsafe { gpu.kernel(&LOOP).unwrap().launch(1, 32, (out.slice_mut(..),)).unwrap() };
    assert_eq!(gpu.read(&out).unwrap()[0], 7);
    unsafe { gpu.kernel(&THROUGH).unwrap().launch(1, 32, (out.slice_mut(..),)).unwrap() };
    assert_eq!(gpu.read(&out).unwrap(), (0..32).collect::<Vec<u32>>());
    unsafe { gpu.kernel(&THROUGH_PLUS_ONE).unwrap().launch(1, 32, (out.slice_mut(..),)).unwrap() };
    assert_eq!(gpu.read(&out).unwrap(), (1..33).collect::<Vec<u32>>());
}
