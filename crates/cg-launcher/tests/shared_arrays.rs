//! Several arrays in one block's dynamic shared memory
//! (`DynamicShared::after`), on the emulator: each starts where the one
//! before it ends, rounded up to its own alignment, so the arrays neither
//! overlap nor misalign, and an access past the last is named.

use cg_emulator::Options;
use cg_kernel::cg::{this_grid, this_thread_block};
use cg_kernel::kernel;
use cg_kernel::mem::{Out, dynamic_shared};
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
            assert!(text.contains("shared_arrays.rs:34:"), "{text}");
        }
        other => panic!("a write past the last array must be named, got {other:?}"),
    }
    Ok(())
}
