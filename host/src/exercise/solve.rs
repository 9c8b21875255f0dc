//! The exercise: write `solve()`, a single-launch sum.
//!
//! You get the device, the input on the device (`input.len()` is n, and the
//! only place n comes from) and a zeroed one-element `total`. Put the sum in
//! `total[0]` with one cooperative launch of `EXERCISE_SUM`, whose kernel is
//! yours to edit in `gpu/src/kernels/exercise.rs`, and size its grid
//! yourself. Return what you launched so the harness can report it.
//!
//! Check it: `cargo run --release -p host -- exercise` (add `--emulate`
//! without a GPU).
//!
//! This file ships with a working solution. To do the exercise from scratch,
//! delete the body and write your own.

use super::Solved;
use crate::device::{Buffer, Gpu};
use crate::error::Result;
use crate::launch::DeviceInput;

/// Threads per block for the exercise kernel.
const THREADS_PER_BLOCK: u32 = 256;

pub fn solve(gpu: &Gpu, input: &DeviceInput, total: &mut Buffer<f32>) -> Result<Solved> {
    let kernel = gpu.cooperative_kernel(&crate::kernels().exercise_sum)?;
    // Ask about this kernel, at this block size, with its shared memory.
    let limits = kernel.limits(THREADS_PER_BLOCK)?;
    let needed = (input.len() as u64).div_ceil(THREADS_PER_BLOCK as u64);
    let blocks = needed.min(limits.capacity() as u64) as u32;
    let solved = Solved { blocks, threads_per_block: THREADS_PER_BLOCK, blocks_per_sm: limits.blocks_per_sm, sms: limits.sms };
    if blocks == 0 {
        // n = 0: the total is already zero, and there is nothing to launch.
        return Ok(solved);
    }
    let launch = kernel.configure(blocks, THREADS_PER_BLOCK)?;
    let mut partials = gpu.zeros::<f32>(blocks as usize)?;
    launch.sum(input, partials.slice_mut(..), total.slice_mut(..))?;
    Ok(solved)
}
