//! Issue 77's MA3: one `Shared` handed to one launch as two `Out`
//! arguments. `Shared::out` lends any number of views, so safe code could
//! pass the same memory in two written slots, which the emulator (whose
//! shadows are kept per slot) never compared and a GPU answers either way.
//! The launch is refused by name; two reads of one memory, and disjoint
//! memory, still launch.

use cg_kernel::kernel;
use cg_kernel::mem::{In, Out};
use cg_launcher::device::{EmulatedDevice, Gpu};
use cg_launcher::error::Error;

/// Block 0 writes 1 to `a[0]`, block 1 writes 2 to `b[0]`.
/// Emulator only: this test's program links no PTX.
///
/// # Safety
/// `a` and `b` hold one element each.
#[kernel(emulator)]
pub unsafe fn two_writers(a: Out<u32>, b: Out<u32>) {
    let grid = cg_kernel::cg::this_grid();
    if grid.thread_rank() == 0 {
        // SAFETY: one element.
        unsafe { a.write(0, 1) };
    }
    if grid.thread_rank() == 32 {
        // SAFETY: one element.
        unsafe { b.write(0, 2) };
    }
}

/// `out[0] = x[0] + y[0]`.
///
/// # Safety
/// Each buffer holds one element.
#[kernel(emulator)]
pub unsafe fn add_two(x: In<u32>, y: In<u32>, out: Out<u32>) {
    if cg_kernel::cg::this_grid().thread_rank() == 0 {
        // SAFETY: one element each.
        unsafe { out.write(0, x.read(0) + y.read(0)) };
    }
}

#[test]
fn one_shared_passed_as_two_outs_is_refused_by_name() {
    let gpu = Gpu::emulated(EmulatedDevice::T4, Default::default());
    let word = gpu.shared::<u32>(1).unwrap();
    let kernel = gpu.kernel(&TWO_WRITERS).unwrap();
    // SAFETY: each argument holds the one element the kernel writes.
    let e = unsafe { kernel.launch(2, 32, (word.out(), word.out())) }.unwrap_err();
    assert!(matches!(e, Error::ArgumentsOverlap { kernel: "two_writers", .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        "two_writers's `a` and `b` name the same memory, and the kernel writes it: two arguments of one launch may share memory only if both are read (In); pass each its own buffer, or one argument"
    );
    // Two of their own launch.
    let (one, other) = (gpu.shared::<u32>(1).unwrap(), gpu.shared::<u32>(1).unwrap());
    // SAFETY: as above.
    unsafe { kernel.launch(2, 32, (one.out(), other.out())) }.unwrap();
    gpu.finish().unwrap();
    assert_eq!((one.read(), other.read()), (vec![1], vec![2]));
}

#[test]
fn one_buffer_read_through_two_ins_still_launches() {
    let gpu = Gpu::emulated(EmulatedDevice::T4, Default::default());
    let x = gpu.upload(&[20u32]).unwrap();
    let mut out = gpu.zeros::<u32>(1).unwrap();
    let kernel = gpu.kernel(&ADD_TWO).unwrap();
    // SAFETY: one element each.
    unsafe { kernel.launch(1, 32, (&x.slice(..), &x.slice(..), out.slice_mut(..))) }.unwrap();
    assert_eq!(gpu.read(&out).unwrap(), [40]);
}
