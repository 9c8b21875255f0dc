//! What the emulator names that a GPU would not (issue 58): a read of memory
//! nothing wrote (the emulator's initcheck), and, for an index past a
//! buffer, the launch it happened in, with its numbers and buffer lengths.

use cg_kernel::cg::{this_grid, this_thread_block};
use cg_kernel::kernel;
use cg_kernel::mem::{In, Out};
use cg_launcher::device::{EmulatedDevice, Gpu};
use cg_launcher::error::Error;

/// Each block adds its threads' elements into `partials[block]`, the way a
/// learner's `solve()` did: reading the partial first, as if it were zero.
/// Emulator only: this test's program links no PTX.
///
/// # Safety
/// `x` holds `n` floats, `partials` one per block.
#[kernel(emulator)]
pub unsafe fn accumulate(x: In<f32>, partials: Out<f32>, n: usize) {
    let (grid, block) = (this_grid(), this_thread_block());
    if block.thread_rank() == 0 {
        let b = grid.block_rank();
        let mut i = b * block.num_threads() as usize;
        let end = (i + block.num_threads() as usize).min(n);
        while i < end {
            // SAFETY: i < n; one thread per block touches partials[b].
            unsafe { partials.write(b, partials.read(b) + x.read(i)) };
            i += 1;
        }
    }
}

fn run(gpu: &Gpu, xs: &cg_launcher::device::Buffer<f32>, partials: &mut cg_launcher::device::Buffer<f32>, n: usize) -> cg_launcher::error::Result<()> {
    let kernel = gpu.kernel(&ACCUMULATE)?;
    // SAFETY: only on the emulator, which checks every index: the tests pass
    // a wrong n on purpose, to see it named.
    unsafe { kernel.launch(2, 32, (&xs.slice(..), partials.slice_mut(..), n)) }
}

#[test]
fn a_kernel_that_reads_a_partial_nothing_wrote_is_named_and_the_same_on_zeros_is_fine() {
    let gpu = Gpu::emulated(EmulatedDevice::T4, Default::default());
    let xs = gpu.upload(&[1.0f32; 64]).unwrap();
    let mut partials = gpu.uninit::<f32>(2).unwrap();
    let err = run(&gpu, &xs, &mut partials, 64).unwrap_err();
    let text = err.to_string();
    assert!(matches!(&err, Error::Emulated { fault, .. } if matches!(**fault, cg_kernel::emu::Fault::Uninitialized { index: 0, .. })), "{text}");
    assert!(text.contains("read partials[0] at crates/cg-launcher/tests/emulated_reports.rs:26:"), "{text}");
    assert!(text.contains("which nothing has written since it was allocated uninitialized (gpu.uninit"), "{text}");
    // What the host reads of it is poison, not zeros.
    let poisoned = gpu.uninit::<f32>(2).unwrap();
    assert!(gpu.read(&poisoned).unwrap().iter().all(|v| v.is_nan()));

    // Written first (by the host here), the same launch is right.
    gpu.fill(&mut partials, 0.0).unwrap();
    run(&gpu, &xs, &mut partials, 64).unwrap();
    assert_eq!(gpu.read(&partials).unwrap(), [32.0, 32.0]);
    let mut zeros = gpu.zeros::<f32>(2).unwrap();
    run(&gpu, &xs, &mut zeros, 64).unwrap();
    assert_eq!(gpu.read(&zeros).unwrap(), [32.0, 32.0]);
}

#[test]
fn a_read_past_a_buffer_names_the_launch_so_the_argument_that_sized_it_shows() {
    let gpu = Gpu::emulated(EmulatedDevice::T4, Default::default());
    let xs = gpu.upload(&[1.0f32; 40]).unwrap();
    let mut partials = gpu.zeros::<f32>(2).unwrap();
    let err = run(&gpu, &xs, &mut partials, 64).unwrap_err().to_string();
    assert!(err.contains("read x[40], past its 40 elements"), "{err}");
    assert!(err.ends_with("; the launch: accumulate on 2 blocks of 32 threads, with x holding 40 elements, partials 2 and n = 64"), "{err}");
}
