//! Several arrays in one block's dynamic shared memory
//! (`DynamicShared::after`), on the emulator: each starts where the one
//! before it ends, rounded up to its own alignment, so the arrays neither
//! overlap nor misalign, and an access past the last is named.

use cg_kernel::cg::{this_grid, this_thread_block};
use cg_kernel::emu::Options;
use cg_kernel::kernel;
use cg_kernel::mem::{DynamicShared, Out, dynamic_shared};
use cg_kernel::shared_array;
use cg_launcher::device::{EmulatedDevice, Gpu};
use cg_launcher::error::{Error, Result};

/// Flags, three bytes and then one per thread, then one `f64` per thread.
pub const fn flags_then_values(threads: u32) -> u32 {
    (threads + 3).div_ceil(8) * 8 + threads * 8
}

/// Each thread sets its flag and its value, then reads its neighbour's two
/// after the barrier: `out[i] = value + flag` of thread `(i + 1) % n`.
/// `past` moves each value write that many elements on.
///
/// # Safety
/// Launched with `flags_then_values` bytes of shared memory; `out` holds
/// one element per thread of the grid.
#[kernel(emulator, shared_memory = flags_then_values)]
pub unsafe fn two_arrays(out: Out<f64>, past: u32) {
    let block = this_thread_block();
    let (t, n) = (block.thread_rank() as usize, block.num_threads() as usize);
    let flags = dynamic_shared::<u8>();
    let values = flags.after::<f64>(n + 3);
    // SAFETY: within the bytes flags_then_values counts, when past is 0.
    unsafe {
        flags.write(t + 3, (t % 200) as u8);
        values.write(t + past as usize, t as f64 * 0.5); // the value's write
    }
    block.sync();
    let other = (t + 1) % n;
    // SAFETY: as above; after the barrier; one element of out per thread.
    unsafe { out.write(this_grid().thread_rank() as usize, values.read(other) + flags.read(other + 3) as f64) };
}

#[test]
fn a_second_array_after_the_first_neither_overlaps_nor_misaligns_and_past_its_end_is_named() -> Result<()> {
    let gpu = Gpu::emulated(EmulatedDevice::T4, Options::default());
    let kernel = gpu.kernel(&TWO_ARRAYS)?;
    let mut out = gpu.zeros::<f64>(2 * 64)?;
    // SAFETY: 64 threads a block, one element each.
    unsafe { kernel.launch(2, 64, (out.slice_mut(..), 0))? };
    let want: Vec<f64> = (0..128).map(|i| (i % 64 + 1) % 64).map(|o| o as f64 * 0.5 + (o % 200) as f64).collect();
    assert_eq!(gpu.read(&out)?, want);
    // SAFETY: the write past the end is the mistake the emulator must name.
    match unsafe { kernel.launch(2, 64, (out.slice_mut(..), 1)) } {
        Err(Error::Emulated { fault, .. }) => {
            let text = fault.to_string();
            assert!(text.contains("wrote dynamic shared memory[73], past its 73 elements"), "{text}");
            assert!(text.contains("shared_arrays.rs:35:"), "{text}");
        }
        other => panic!("a write past the last array must be named, got {other:?}"),
    }
    Ok(())
}

/// One `u32` per thread: the dynamic part of [`static_and_dynamic`].
pub const fn one_u32_per_thread(threads: u32) -> u32 {
    threads * 4
}

/// A helper that knows only the dynamic part: each thread writes its rank there.
///
/// # Safety
/// `part` holds one `u32` per thread of the block.
unsafe fn fill_dynamic(part: DynamicShared<u32>, t: usize) {
    // SAFETY: the caller's contract.
    unsafe { part.write(t, 1_000 + t as u32) };
}

/// Three static arrays (`shared_array!`) after a dynamic part a helper
/// fills: every thread writes its slot of the dynamic part and of the first
/// two, thread 0 the third's three bytes; then each reads its neighbour
/// `o`'s, so an overlap of any two shows as a wrong sum:
/// `out = 1000 + o + 2 o + 0.25 o + 10 (o % 3 + 1)`.
///
/// # Safety
/// `out` holds one element per thread of the grid; blocks of at most 64 threads.
#[kernel(emulator, shared_memory = one_u32_per_thread)]
pub unsafe fn static_and_dynamic(out: Out<f64>) {
    let block = this_thread_block();
    let (t, n) = (block.thread_rank() as usize, block.num_threads() as usize);
    let doubled = shared_array!(u32, 64);
    let quarters = shared_array!(f64, 64);
    let flags = shared_array!(u8, 3);
    // SAFETY: one u32 per thread in the dynamic part; t < 64 in each array;
    // thread 0 alone writes the flags.
    unsafe {
        fill_dynamic(dynamic_shared::<u32>(), t);
        doubled.write(t, 2 * t as u32);
        quarters.write(t, t as f64 * 0.25);
        if t == 0 {
            for k in 0..3 {
                flags.write(k, 10 * (k as u8 + 1));
            }
        }
    }
    block.sync();
    let o = (t + 1) % n;
    // SAFETY: after the barrier, each element written above.
    let sum = unsafe { dynamic_shared::<u32>().read(o) as f64 + doubled.read(o) as f64 + quarters.read(o) + flags.read(o % 3) as f64 };
    // SAFETY: one element of out per thread.
    unsafe { out.write(this_grid().thread_rank() as usize, sum) };
}

#[test]
fn static_arrays_sit_after_the_dynamic_part_and_apart_from_each_other() -> Result<()> {
    // Their bytes are in the kernel's shared memory: 64 threads' dynamic
    // part (256), then 64 u32 (256), 64 f64 (512) and 3 bytes.
    assert_eq!(STATIC_AND_DYNAMIC.shared_bytes(64), 256 + 256 + 512 + 3);
    let gpu = Gpu::emulated(EmulatedDevice::T4, Options::default());
    let mut out = gpu.zeros::<f64>(2 * 64)?;
    // SAFETY: 64 threads a block, one element each.
    unsafe { gpu.kernel(&STATIC_AND_DYNAMIC)?.launch(2, 64, (out.slice_mut(..),))? };
    let want: Vec<f64> =
        (0..128).map(|i| (i % 64 + 1) % 64).map(|o| 1_000.0 + o as f64 + 2.0 * o as f64 + 0.25 * o as f64 + 10.0 * (o % 3 + 1) as f64).collect();
    assert_eq!(gpu.read(&out)?, want);
    Ok(())
}
