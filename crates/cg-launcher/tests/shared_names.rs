//! Two kernels of one crate with one name (in two modules, as two
//! `operator_kernels!` with the same names make): one PTX module cannot hold
//! both entries, so the crate's GPU build fails. (This test crate has no
//! GPU build; its kernels run on the emulator either way.) The emulator runs each by
//! its own function and would have run both; the launcher refuses either by
//! name, so that a build for the emulator alone says what the GPU build would.

use cg_emulator::Options;
use cg_kernel::cg::this_grid;
use cg_kernel::kernel;
use cg_kernel::mem::Out;
use cg_launcher::device::{EmulatedDevice, Gpu};
use cg_launcher::error::Error;

mod first {
    use super::*;
    /// Writes 1.
    ///
    /// # Safety
    /// `out` holds one element.
    #[kernel]
    pub unsafe fn mark(out: Out<u32>) {
        // SAFETY: one element.
        unsafe { out.write(0, 1) };
    }
}

mod second {
    use super::*;
    /// Writes 2.
    ///
    /// # Safety
    /// `out` holds one element.
    #[kernel]
    pub unsafe fn mark(out: Out<u32>) {
        // SAFETY: one element.
        unsafe { out.write(0, 2) };
    }
}

/// Two kernels for the emulator alone (no PTX entry) may share a name:
/// nothing would clash.
mod emulator_first {
    use super::*;
    /// Thread 0 writes 4.
    ///
    /// # Safety
    /// `out` holds one element.
    #[kernel(emulator)]
    pub unsafe fn only_emulated(out: Out<u32>) {
        if this_grid().thread_rank() == 0 {
            // SAFETY: one element, which thread 0 alone writes.
            unsafe { out.write(0, 4) };
        }
    }
}

mod emulator_second {
    use super::*;
    /// Thread 0 writes 5.
    ///
    /// # Safety
    /// `out` holds one element.
    #[kernel(emulator)]
    pub unsafe fn only_emulated(out: Out<u32>) {
        if this_grid().thread_rank() == 0 {
            // SAFETY: one element, which thread 0 alone writes.
            unsafe { out.write(0, 5) };
        }
    }
}

/// Thread 0 writes 3, under a name of its own.
///
/// # Safety
/// `out` holds one element.
#[kernel(emulator)]
pub unsafe fn unique_mark(out: Out<u32>) {
    if this_grid().thread_rank() == 0 {
        // SAFETY: one element, which thread 0 alone writes.
        unsafe { out.write(0, 3) };
    }
}

#[test]
fn two_kernels_of_one_crate_and_name_are_refused_by_name() {
    let gpu = Gpu::emulated(EmulatedDevice::T4, Options::default());
    for def in [&first::MARK, &second::MARK] {
        let e = gpu.kernel(def).err().expect("a kernel whose name another of its crate has");
        assert!(matches!(e, Error::NotLinked(_)), "{e}");
        assert_eq!(
            e.to_string(),
            "two #[kernel]s of crate shared_names are named `mark`: one PTX module cannot hold both entries (its GPU build fails); rename one"
        );
    }
    // A kernel of its own name in the same crate loads and runs.
    let mut out = gpu.zeros::<u32>(1).unwrap();
    let kernel = gpu.kernel(&UNIQUE_MARK).unwrap();
    // SAFETY: one element.
    unsafe { kernel.launch(1, 32, (out.slice_mut(..),)).unwrap() };
    assert_eq!(gpu.read(&out).unwrap(), [3]);
    for (def, wrote) in [(&emulator_first::ONLY_EMULATED, 4), (&emulator_second::ONLY_EMULATED, 5)] {
        // SAFETY: one element.
        unsafe { gpu.kernel(def).unwrap().launch(1, 32, (out.slice_mut(..),)).unwrap() };
        assert_eq!(gpu.read(&out).unwrap(), [wrote]);
    }
}
