//! `Gpu::recording_launches` nests and survives a panic: an outer record
//! holds the launches an inner one made, and a closure that panics leaves
//! nothing recording. (Before, the outer record lost the inner launches,
//! and after a panic every later launch was recorded into a list no one
//! would read.)

use cg_emulator::Options;
use cg_kernel::cg::this_grid;
use cg_kernel::kernel;
use cg_kernel::mem::Out;
use cg_launcher::device::{EmulatedDevice, Gpu};

/// Thread 0 writes 1.
///
/// # Safety
/// `out` holds one element.
#[kernel(emulator)]
pub unsafe fn mark(out: Out<u32>) {
    if this_grid().thread_rank() == 0 {
        // SAFETY: one element, which thread 0 alone writes.
        unsafe { out.write(0, 1) };
    }
}

#[test]
fn an_outer_record_holds_the_inner_launches_and_a_panic_stops_recording() {
    let gpu = Gpu::emulated(EmulatedDevice::T4, Options::default());
    let kernel = gpu.kernel(&MARK).unwrap();
    let mut out = gpu.zeros::<u32>(1).unwrap();
    let mut launch = |blocks: u32| {
        // SAFETY: one element.
        unsafe { kernel.launch(blocks, 32, (out.slice_mut(..),)).unwrap() }
    };
    let (((), inner), outer) = gpu.recording_launches(|| {
        launch(1);
        let inner = gpu.recording_launches(|| launch(2));
        launch(3);
        inner
    });
    assert_eq!(inner.iter().map(|l| l.blocks).collect::<Vec<_>>(), [2]);
    assert_eq!(outer.iter().map(|l| l.blocks).collect::<Vec<_>>(), [1, 2, 3]);

    // A closure that panics: caught, and recording is off afterwards, so
    // the next record starts empty and holds its own launch alone.
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        gpu.recording_launches(|| {
            launch(4);
            panic!("the closure fails");
        })
    }));
    assert!(caught.is_err());
    let ((), after) = gpu.recording_launches(|| launch(5));
    assert_eq!(after.iter().map(|l| l.blocks).collect::<Vec<_>>(), [5]);
}
