//! The scans by blocks that loop (`cg_algorithms_kernels::scan`'s
//! `persistent_*` kernels) on the emulated GPU, with fewer blocks than
//! tiles, so that every block scans several: each output against the CPU,
//! the ticket back at 0 after each launch, and a second launch of a new
//! epoch over the same status words.

use cg_algorithms_kernels::scan::{PERSISTENT_EXCLUSIVE_SUM_F32, PERSISTENT_INCLUSIVE_SUM_F32};
use cg_algorithms_kernels::{THREADS, TILE_LEN};
use cg_launcher::device::{EmulatedDevice, EmulatorOptions, Gpu};

/// Small integers, so that every partial sum is exact in f32.
fn input(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i as u64).wrapping_mul(2654435761) >> 7) as f32 % 17.0 - 8.0).collect()
}

fn scanned(xs: &[f32], inclusive: bool) -> Vec<f32> {
    let mut acc = 0.0f32;
    xs.iter()
        .map(|&v| {
            let before = acc;
            acc += v;
            if inclusive { acc } else { before }
        })
        .collect()
}

/// Each persistent scan over `n` elements with each grid in `grids`, twice
/// (a new epoch each launch over the same status words): every output
/// equal to the CPU's, and the ticket back at 0 after each launch.
fn check(gpu: &Gpu, n: usize, grids: &[u32]) -> cg_launcher::error::Result<()> {
    let xs = input(n);
    let x = gpu.upload(&xs)?;
    let mut y = gpu.zeros::<f32>(n)?;
    let mut status = gpu.zeros::<u64>(n.div_ceil(TILE_LEN))?;
    let mut ticket = gpu.zeros::<u32>(1)?;
    let mut epoch = 0;
    for &blocks in grids {
        for (def, inclusive) in [(&PERSISTENT_INCLUSIVE_SUM_F32, true), (&PERSISTENT_EXCLUSIVE_SUM_F32, false)] {
            epoch += 1;
            // SAFETY: x and y hold n floats and are whole buffers; status
            // holds a word per tile, none of this epoch (a new one each
            // launch); the ticket is 0 (checked after each launch below).
            unsafe { gpu.kernel(def)?.launch(blocks, THREADS, (&x.slice(..), y.slice_mut(..), status.slice_mut(..), ticket.slice_mut(..), epoch, n))? };
            let got = gpu.read(&y)?;
            let want = scanned(&xs, inclusive);
            let wrong = got.iter().zip(&want).position(|(g, w)| g != w);
            assert_eq!(wrong, None, "{} of {n} with {blocks} blocks: first wrong element", def.name());
            assert_eq!(gpu.read(&ticket)?, [0], "{} of {n} with {blocks} blocks: the ticket after the launch", def.name());
        }
    }
    Ok(())
}

#[test]
fn blocks_that_loop_over_the_tiles_scan_every_one_and_leave_the_ticket_at_zero() -> cg_launcher::error::Result<()> {
    for seed in [Some(1), Some(7)] {
        let gpu = Gpu::emulated(EmulatedDevice::T4, EmulatorOptions { seed, ..Default::default() });
        // 9 tiles, the last one partial: fewer blocks than tiles, as many, and more.
        check(&gpu, 8 * TILE_LEN + 5, &[1, 2, 4, 9, 12])?;
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn blocks_that_loop_over_the_tiles_scan_every_one_on_the_gpu() -> cg_launcher::error::Result<()> {
    let gpu = Gpu::open(0)?;
    let resident = gpu.kernel(&PERSISTENT_INCLUSIVE_SUM_F32)?.occupancy(THREADS)?.capacity();
    for n in [1, 4_097, (1 << 20) + 7, (1 << 24) - 1] {
        check(&gpu, n, &[1, 7, resident, resident + 5])?;
    }
    Ok(())
}
