//! The selections by blocks that loop (`cg_algorithms_kernels::select`'s
//! `persistent_*` kernels), with fewer blocks than tiles, as many, and
//! more: the kept elements and their count against the CPU's, the ticket
//! back at 0 after each launch, and a new epoch each launch over the same
//! status words. On the emulated GPU, and on a CUDA GPU (ignored without one).

use cg_algorithms_kernels::select::{GREATER, PERSISTENT_SELECT_FLAGGED_I32, PERSISTENT_SELECT_IF_I32};
use cg_algorithms_kernels::{THREADS, TILE_LEN};
use cg_launcher::device::{EmulatedDevice, EmulatorOptions, Gpu};

/// Integers from a hash of the index, about half of them above 0; and a
/// flag for about one in three, on other elements than the sign picks.
fn input(n: usize) -> (Vec<i32>, Vec<u8>) {
    let hash = |i: usize, k: u64| (i as u64).wrapping_add(k).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
    let xs = (0..n).map(|i| (hash(i, 1) % 2001) as i32 - 1000).collect();
    let flags = (0..n).map(|i| u8::from(hash(i, 2) % 3 == 0)).collect();
    (xs, flags)
}

/// Each persistent selection over `n` elements with each grid in `grids`:
/// the kept elements, in order, and their count, equal to the CPU's, and
/// the ticket back at 0 after each launch.
fn check(gpu: &Gpu, n: usize, grids: &[u32]) -> cg_launcher::error::Result<()> {
    let (xs, fs) = input(n);
    let x = gpu.upload(&xs)?;
    let flags = gpu.upload(&fs)?;
    let mut y = gpu.zeros::<i32>(n)?;
    let mut count = gpu.zeros::<u32>(1)?;
    let mut status = gpu.zeros::<u64>(n.div_ceil(TILE_LEN))?;
    let mut ticket = gpu.zeros::<u32>(1)?;
    let mut epoch = 0;
    for &blocks in grids {
        for flagged in [false, true] {
            epoch += 1;
            gpu.fill(&mut y, i32::MIN)?;
            gpu.fill(&mut count, u32::MAX)?;
            let (name, want): (_, Vec<i32>) = if flagged {
                let kernel = gpu.kernel(&PERSISTENT_SELECT_FLAGGED_I32)?;
                // SAFETY: x, flags and y hold n elements and are whole
                // buffers; count holds one; status holds a word per tile,
                // none of this epoch (a new one each launch); the ticket is
                // 0 (checked after each launch below); n is below 2^32.
                unsafe {
                    kernel.launch(
                        blocks,
                        THREADS,
                        (&x.slice(..), &flags.slice(..), y.slice_mut(..), count.slice_mut(..), status.slice_mut(..), ticket.slice_mut(..), epoch, n),
                    )?
                };
                (PERSISTENT_SELECT_FLAGGED_I32.name(), xs.iter().zip(&fs).filter(|&(_, &f)| f != 0).map(|(&x, _)| x).collect())
            } else {
                let kernel = gpu.kernel(&PERSISTENT_SELECT_IF_I32)?;
                // SAFETY: as above.
                unsafe {
                    kernel.launch(
                        blocks,
                        THREADS,
                        (&x.slice(..), y.slice_mut(..), count.slice_mut(..), status.slice_mut(..), ticket.slice_mut(..), epoch, GREATER, 0, n),
                    )?
                };
                (PERSISTENT_SELECT_IF_I32.name(), xs.iter().copied().filter(|&x| x > 0).collect())
            };
            let kept = gpu.read(&count)?[0] as usize;
            assert_eq!(kept, want.len(), "{name} of {n} with {blocks} blocks: the count");
            let got = gpu.read(&y)?;
            let wrong = got[..kept].iter().zip(&want).position(|(g, w)| g != w);
            assert_eq!(wrong, None, "{name} of {n} with {blocks} blocks: first wrong element");
            assert!(got[kept..].iter().all(|&v| v == i32::MIN), "{name} of {n} with {blocks} blocks: wrote past the count");
            assert_eq!(gpu.read(&ticket)?, [0], "{name} of {n} with {blocks} blocks: the ticket after the launch");
        }
    }
    Ok(())
}

#[test]
fn blocks_that_loop_over_the_tiles_select_from_every_one_and_leave_the_ticket_at_zero() -> cg_launcher::error::Result<()> {
    for seed in [Some(1), Some(7)] {
        let gpu = Gpu::emulated(EmulatedDevice::T4, EmulatorOptions { seed, ..Default::default() });
        // 9 tiles, the last one partial: fewer blocks than tiles, as many, and more.
        check(&gpu, 8 * TILE_LEN + 5, &[1, 2, 4, 9, 12])?;
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn blocks_that_loop_over_the_tiles_select_from_every_one_on_the_gpu() -> cg_launcher::error::Result<()> {
    let gpu = Gpu::open(0)?;
    let resident = gpu.kernel(&PERSISTENT_SELECT_IF_I32)?.occupancy(THREADS)?.capacity();
    for n in [1, 4_097, (1 << 20) + 7, (1 << 24) - 1] {
        check(&gpu, n, &[1, 7, resident, resident + 5])?;
    }
    Ok(())
}
