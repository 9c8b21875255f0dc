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
    assert!(matches!(&err, Error::Emulated { fault, .. } if matches!(**fault, cg_emulator::Fault::Uninitialized { index: 0, .. })), "{text}");
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

/// A stream compaction whose `grid.sync()` became a `block.sync()`: each
/// block counts its positive elements, then reads the counts of the blocks
/// before it to find where its own go. Emulator only.
///
/// # Safety
/// `x` holds `n` floats, `out` `n`, `counts` one per block; one thread per block.
#[kernel(cooperative, emulator)]
pub unsafe fn compact_with_a_block_sync(x: In<f32>, out: Out<f32>, counts: Out<u32>, n: usize) {
    let (grid, block) = (this_grid(), this_thread_block());
    let b = grid.block_rank();
    let per = n.div_ceil(grid.num_blocks());
    let (first, end) = ((b * per).min(n), ((b + 1) * per).min(n));
    let leader = block.thread_rank() == 0;
    if leader {
        // SAFETY (every access): indices below n, one count per block.
        let mine = (first..end).filter(|&i| unsafe { x.read(i) } > 0.0).count() as u32;
        unsafe { counts.write(b, mine) };
    }
    block.sync(); // the mistake: grid.sync() here
    if leader {
        let mut at = (0..b).map(|k| unsafe { counts.read(k) } as usize).sum::<usize>();
        for i in first..end {
            let v = unsafe { x.read(i) };
            if v > 0.0 {
                unsafe { out.write(at, v) };
                at += 1;
            }
        }
    }
}

#[test]
fn a_read_of_another_blocks_count_with_no_grid_sync_is_named_before_the_write_race_it_causes() {
    let gpu = Gpu::emulated(EmulatedDevice::T4, Default::default());
    let n = 64;
    let xs: Vec<f32> = (0..n).map(|i| if i % 3 == 0 { -1.0 } else { i as f32 }).collect();
    let x = gpu.upload(&xs).unwrap();
    let (mut out, mut counts) = (gpu.zeros::<f32>(n).unwrap(), gpu.zeros::<u32>(4).unwrap());
    let kernel = gpu.cooperative_kernel(&COMPACT_WITH_A_BLOCK_SYNC).unwrap();
    let launch = kernel.configure(4, 32).unwrap();
    // SAFETY: x and out hold n, counts one per block.
    let err = unsafe { launch.launch((&x.slice(..), out.slice_mut(..), counts.slice_mut(..), n)) }.unwrap_err().to_string();
    // Blocks 1-3 all write out[0..] where block 0 wrote (the symptom); the
    // cause is block 1 reading counts[0] before a grid barrier.
    assert!(err.contains("data race on counts[0]: block 0 wrote it at") && err.contains("read it at") && err.contains("with no grid.sync() between"), "{err}");
}

/// Before 2026-12-04 an emulated device of 0 SMs took every launch and
/// waited the whole timeout (60 s) for an SM to run a block on.
#[test]
fn a_device_of_no_sms_refuses_a_launch_at_once() {
    let gpu = Gpu::emulated(EmulatedDevice { sms: 0, ..EmulatedDevice::T4 }, Default::default());
    let (xs, mut partials) = (gpu.zeros::<f32>(64).unwrap(), gpu.zeros::<f32>(2).unwrap());
    let start = std::time::Instant::now();
    let e = run(&gpu, &xs, &mut partials, 64).expect_err("no SM to run on");
    assert!(e.to_string().contains("a device of 0 SMs runs no block"), "{e}");
    assert!(start.elapsed().as_secs() < 10, "refused at once, not after the timeout");
}

/// Issue 63, item 6: an emulated device of 2048 threads per block ran a
/// block of 2048, whose block collectives (one partial per warp, at most 32)
/// silently summed 1024 of 2048 ones. No GPU allows more than 1024: such a
/// device is refused by name at its first launch, whatever the block.
#[test]
fn an_emulated_device_no_gpu_could_be_is_refused_by_name() {
    let gpu = Gpu::emulated(EmulatedDevice { max_threads_per_block: 2048, threads_per_sm: 4096, ..EmulatedDevice::T4 }, Default::default());
    let (xs, mut partials) = (gpu.zeros::<f32>(64).unwrap(), gpu.zeros::<f32>(2).unwrap());
    let e = run(&gpu, &xs, &mut partials, 64).expect_err("a device no GPU could be").to_string();
    assert!(e.contains("an emulated device of 2048 threads per block: CUDA allows at most 1024"), "{e}");
}

/// Issue 63, item 6: a write at the largest index was named as elements
/// `18446744073709551615..18446744073709551615`, an empty range.
#[test]
fn a_write_past_the_largest_index_names_its_start_and_count() {
    let gpu = Gpu::emulated(EmulatedDevice::T4, Default::default());
    let mut buffer = gpu.zeros::<f32>(4).unwrap();
    let e = gpu.write(&mut buffer, usize::MAX, &[1.0, 2.0]).unwrap_err().to_string();
    assert_eq!(e, format!("gpu.write: 2 elements from element {} of a buffer of 4: past its end (and past the largest index)", usize::MAX));
    let e = gpu.write(&mut buffer, 3, &[1.0, 2.0]).unwrap_err().to_string();
    assert_eq!(e, "gpu.write: elements 3..5 of a buffer of 4: past its end");
}

/// Buffers of no elements are buffers like any other (issue 56, item 7:
/// they worked, undocumented): made, read, written and passed to a kernel
/// that reads none of their elements.
#[test]
fn buffers_of_no_elements_are_made_read_and_launched_with() {
    let gpu = Gpu::emulated(EmulatedDevice::T4, Default::default());
    let empty = gpu.upload::<f32>(&[]).unwrap();
    let mut zeros = gpu.zeros::<f32>(0).unwrap();
    assert!(gpu.read(&empty).unwrap().is_empty() && gpu.read(&zeros).unwrap().is_empty());
    gpu.write(&mut zeros, 0, &[]).unwrap();
    // n = 0: no thread reads x or writes a partial it does not own.
    let mut partials = gpu.zeros::<f32>(2).unwrap();
    run(&gpu, &empty, &mut partials, 0).unwrap();
    assert_eq!(gpu.read(&partials).unwrap(), [0.0, 0.0]);
    assert_eq!(cg_launcher::sizing::cooperative_grid(0, 256, 160), 0, "nothing to launch for n = 0");
}
