//! A `shared_array!`'s index is bounded by its own `N` on the emulator: an
//! index past it lands in the kernel's shared memory (the next array), where
//! a GPU reads or writes the wrong array without a word, and the emulator
//! names the access and its line.

use cg_emulator::{Access, Fault, Options};
use cg_kernel::cg::this_thread_block;
use cg_kernel::kernel;
use cg_kernel::mem::Out;
use cg_kernel::shared_array;
use cg_launcher::device::{EmulatedDevice, Gpu};
use cg_launcher::error::Error;

/// Each thread writes its rank into `a[t]` (of `a_len`, at most 32) and 0
/// into `b[t]`; after a barrier thread `t` reads `a[t]` into `out[t]`.
///
/// # Safety
/// `out` holds one element per thread of one block of 32.
#[kernel(emulator)]
pub unsafe fn two_arrays(out: Out<u32>, a_len: usize) {
    let block = this_thread_block();
    let t = block.thread_rank() as usize;
    let a = shared_array!(u32, 16);
    let b = shared_array!(u32, 32);
    // SAFETY (as the caller believes): t < a_len; one thread per element.
    unsafe {
        if t < a_len {
            a.write(t, t as u32);
        }
        b.write(t, 0);
    }
    block.sync();
    if t < a_len {
        // SAFETY: as above; the barrier orders the write before.
        unsafe { out.write(t, a.read(t)) };
    }
}

#[test]
fn an_index_past_a_shared_arrays_n_is_named_not_written_into_the_next_array() {
    let gpu = Gpu::emulated(EmulatedDevice::T4, Options::default());
    let kernel = gpu.kernel(&TWO_ARRAYS).unwrap();
    let mut out = gpu.zeros::<u32>(32).unwrap();
    // 16 elements: within a's N.
    // SAFETY: out holds 32 elements, one per thread.
    unsafe { kernel.launch(1, 32, (out.slice_mut(..), 16usize)).unwrap() };
    assert_eq!(&gpu.read(&out).unwrap()[..16], &(0..16).collect::<Vec<u32>>()[..]);
    // 32: threads 16 to 31 write past a's 16, into b's bytes.
    // SAFETY: as above (the kernel's own contract is what is broken).
    let e = unsafe { kernel.launch(1, 32, (out.slice_mut(..), 32usize)) }.unwrap_err();
    let Error::Emulated { fault, .. } = &e else { panic!("{e}") };
    let Fault::OutOfBounds { buffer, index, len, access, .. } = &**fault else { panic!("{e}") };
    assert_eq!((buffer.as_str(), *index, *len, *access), ("a shared_array!", 16, 16, Access::Write), "{e}");
    assert!(e.to_string().contains("wrote a shared_array![16], past its 16 elements, at crates/cg-launcher/tests/shared_array_bounds.rs:28"), "{e}");
}
