//! Buffers, kernel memory and shared memory of 1- and 2-byte elements on the
//! emulator: threads writing neighbouring bytes of one word do not race (a
//! GPU's byte stores are independent), in global memory or shared, in one
//! block or several; two threads writing one byte do.

use cg_emulator::{Fault, Options};
use cg_kernel::cg::{this_grid, this_thread_block};
use cg_kernel::kernel;
use cg_kernel::mem::{In, Out, dynamic_shared};
use cg_launcher::device::{EmulatedDevice, Gpu};
use cg_launcher::error::{Error, Result};

/// Shared memory of one element of `T` per thread.
pub const fn one_per_thread<T>(threads: u32, _tile: u32) -> u32 {
    threads * size_of::<T>() as u32
}

macro_rules! neighbours {
    ($($name:ident: $t:ty),*) => {$(
        /// `out[i] = x[i ^ 1] + 1` (wrapping) for `i < n`, through shared memory
        /// where each thread writes its own element, then reads its
        /// neighbour's; `same`: every thread writes shared element 0 (a race).
        ///
        /// # Safety
        /// `x` and `out` hold `n` elements, a multiple of the block's even size.
        #[kernel(emulator, shared_memory = one_per_thread::<$t>)]
        pub unsafe fn $name<const TILE: u32 = 32>(x: In<$t>, out: Out<$t>, n: usize, same: u32) {
            let (i, t) = (this_grid().thread_rank(), this_thread_block().thread_rank() as usize);
            let s = dynamic_shared::<$t>();
            if i < n {
                // SAFETY: i < n, one element per thread of shared memory.
                unsafe { s.write(if same == 1 { 0 } else { t }, x.read(i)) }; // the byte write
            }
            this_thread_block().sync();
            if i < n {
                // SAFETY: t ^ 1 is in this block; i < n, and this thread alone writes out[i].
                unsafe { out.write(i, s.read(t ^ 1).wrapping_add(1)) };
            }
        }
    )*};
}
neighbours!(neighbours_u8: u8, neighbours_i8: i8, neighbours_u16: u16, neighbours_i16: i16);

#[test]
fn neighbouring_bytes_and_halves_written_by_different_threads_do_not_race() -> Result<()> {
    let gpu = Gpu::emulated(EmulatedDevice::T4, Options::default());
    let n = 4 * 64;
    macro_rules! check {
        ($def:ident, $t:ty) => {{
            let xs: Vec<$t> = (0..n).map(|i| (i * 37 % 256) as $t).collect();
            let x = gpu.upload(&xs)?;
            let mut out = gpu.uninit::<$t>(n)?;
            let kernel = gpu.kernel(&$def)?;
            // SAFETY: n elements each, a multiple of the block size.
            unsafe { kernel.launch(4, 64, (&x.slice(..), out.slice_mut(..), n, 0))? };
            let expected: Vec<$t> = (0..n).map(|i| xs[i ^ 1].wrapping_add(1)).collect();
            assert_eq!(gpu.read(&out)?, expected, stringify!($t));
            // Every thread writing one element is a race, named at the byte.
            // SAFETY: as above.
            let err = unsafe { kernel.launch(4, 64, (&x.slice(..), out.slice_mut(..), n, 1)) }.unwrap_err();
            let Error::Emulated { fault, .. } = &err else { panic!("{err}") };
            assert!(matches!(**fault, Fault::Race { .. }), "{err}");
            assert!(err.to_string().contains("data race on dynamic shared memory byte 0:"), "{err}");
        }};
    }
    check!(NEIGHBOURS_U8, u8);
    check!(NEIGHBOURS_I8, i8);
    check!(NEIGHBOURS_U16, u16);
    check!(NEIGHBOURS_I16, i16);
    Ok(())
}

/// Thread 0 writes shared word 0 as a `u32` while thread 1 writes its byte 1: one overlapping byte.
///
/// # Safety
/// One byte of shared memory per thread, 4 or more.
#[kernel(emulator, shared_memory = one_per_thread::<u8>)]
pub unsafe fn word_and_byte<const TILE: u32 = 32>() {
    let t = this_thread_block().thread_rank();
    // SAFETY: 4 bytes of shared memory, or more.
    unsafe {
        if t == 0 {
            dynamic_shared::<u32>().write(0, 7);
        } else if t == 1 {
            dynamic_shared::<u8>().write(1, 7);
        }
    }
}

#[test]
fn a_word_write_and_a_byte_write_of_the_same_word_race() -> Result<()> {
    let gpu = Gpu::emulated(EmulatedDevice::T4, Options::default());
    let kernel = gpu.kernel(&WORD_AND_BYTE)?;
    // SAFETY: 32 threads, 32 bytes.
    let err = unsafe { kernel.launch(1, 32, ()) }.unwrap_err();
    assert!(err.to_string().contains("data race on dynamic shared memory byte 1:"), "{err}");
    Ok(())
}

/// `out[i] = i as u8` by thread `i` of the grid, and `out16[i] = -(i as i16)`:
/// neighbouring bytes of one word in global memory, written by threads of
/// two blocks where the blocks meet.
///
/// # Safety
/// `out` and `out16` hold `n` elements.
#[kernel(emulator)]
pub unsafe fn bytes_in_global(out: Out<u8>, out16: Out<i16>, n: usize) {
    let i = this_grid().thread_rank();
    if i < n {
        // SAFETY: i < n; this thread alone writes element i.
        unsafe {
            out.write(i, i as u8);
            out16.write(i, -(i as i16));
            // Its own write, read back.
            assert_eq!(out.read(i), i as u8);
        }
    }
}

#[test]
fn neighbouring_bytes_of_global_memory_written_by_two_blocks_do_not_race() -> Result<()> {
    let gpu = Gpu::emulated(EmulatedDevice::T4, Options::default());
    // From the buffers' second element: thread 31 (block 0) and thread 32
    // (block 1) write bytes 32 and 33 of the allocation, one word.
    let n = 3 * 32;
    let mut out = gpu.zeros::<u8>(n + 1)?;
    let mut out16 = gpu.zeros::<i16>(n + 1)?;
    let kernel = gpu.kernel(&BYTES_IN_GLOBAL)?;
    // SAFETY: n elements each.
    unsafe { kernel.launch(3, 32, (out.slice_mut(1..), out16.slice_mut(1..), n))? };
    assert_eq!(gpu.read(&out)?[1..], (0..n).map(|i| i as u8).collect::<Vec<_>>());
    assert_eq!(gpu.read(&out16)?[1..], (0..n).map(|i| -(i as i16)).collect::<Vec<_>>());
    // The host's side: a fill of a 1-byte type, and a copy back.
    gpu.fill(&mut out, 0xab)?;
    assert!(gpu.read(&out)?.iter().all(|&b| b == 0xab));
    Ok(())
}
