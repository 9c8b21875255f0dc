//! The exercise: write `solve()`, a single-launch sum.
//!
//! You get the device, the input on the device (`input.len()` is n, and the
//! only place n comes from) and a zeroed one-element `total`. Put the sum in
//! `total[0]` with one cooperative launch of `EXERCISE_SUM`, whose kernel is
//! yours to edit in `gpu/src/kernels/exercise.rs`, and size its grid
//! yourself. Return what you launched so the harness can report it.
//!
//! Check it: `cargo run --release -p host -- exercise`.
//!
//! This file ships with a working solution. To do the exercise from scratch,
//! delete the body and write your own.

use super::Solved;
use crate::device::Gpu;
use crate::error::Result;
use crate::launch::{Buffer, DeviceInput};
use gpu::kernels::EXERCISE_SUM;

/// Threads per block for the exercise kernel.
const THREADS: u32 = 256;

pub fn solve(gpu: &Gpu, input: &DeviceInput, total: &mut Buffer<f32>) -> Result<Solved> {
    let kernel = gpu.cooperative_kernel(&EXERCISE_SUM)?;
    // Ask about this kernel, at this block size, with its shared memory.
    let limits = kernel.limits(THREADS)?;
    let needed = (input.len() as u64).div_ceil(THREADS as u64);
    let blocks = needed.min(limits.capacity());
    let solved = Solved { blocks, threads: THREADS, blocks_per_sm: limits.blocks_per_sm, sms: limits.sms };
    if blocks == 0 {
        // n = 0: the total is already zero, and there is nothing to launch.
        return Ok(solved);
    }
    let launch = kernel.configure(blocks, THREADS)?;
    let mut partials = gpu.zeros::<f32>(blocks as usize)?;
    launch.sum(input, &mut partials, total)?;
    Ok(solved)
}
