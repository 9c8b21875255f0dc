//! The exercise: write `solve()`, a single-launch sum.
//!
//! You get the device, the input already on it (`input.len()` is n, and the
//! only place n comes from) and `total`, one zeroed `f32`. Leave the sum of
//! the input in `total[0]` with one cooperative launch of the exercise kernel
//! (`gpu/src/lesson/exercise.rs`, yours to edit too), on a grid you size
//! yourself, and return what you launched as a [`Solved`].
//!
//! This file is compiled into the `cg-lesson` program only, so an edit to it
//! rebuilds the program's own small crate and relinks, nothing else.
//!
//! The calls you need, in the order you will make them:
//! - `gpu.cooperative_kernel(&host::kernels().exercise_sum)?`: the kernel,
//!   loaded; a cooperative kernel launches only cooperatively.
//! - `kernel.limits(threads_per_block)?`: a `host::sizing::Limits`
//!   for this kernel at this block size with its shared memory:
//!   `blocks_per_sm` (the occupancy API's answer), `sms`, and `capacity()`.
//! - `kernel.configure(blocks, threads_per_block)?`: checks the grid against
//!   those limits and gives back a launch (an error, not a hang, if it does
//!   not fit; 0 blocks is refused too).
//! - `gpu.zeros::<f32>(count)?`: a zeroed buffer, for the kernel's
//!   one-partial-per-block scratch.
//! - `launch.sum(input, partials.slice_mut(..), total.slice_mut(..))?`: the launch.
//!
//! Check it: `cargo emulate exercise` without a GPU, or
//! `cargo run --release -p host -- exercise` on one.
//! `--variant reference` runs a solution written by us.

use host::device::{Buffer, Gpu};
use host::error::Result;
use host::exercise::Solved;
// The input's type, and the launch calls (`launch.sum(...)`) on the launcher's types.
use host::launch::*;

/// Your single-launch sum: launch the exercise kernel once, cooperatively,
/// so that `total[0]` holds the sum of `input`, and return what you launched.
pub fn solve(gpu: &Gpu, input: &DeviceInput, total: &mut Buffer<f32>) -> Result<Solved> {
    const THREADS: u32 = 256;
    let kernel = gpu.cooperative_kernel(&host::kernels().exercise_sum)?;
    let limits = kernel.limits(THREADS)?;
    let blocks = (input.len() as u64).div_ceil(THREADS as u64).min(limits.capacity() as u64) as u32;
    let solved = Solved { blocks, threads_per_block: THREADS, blocks_per_sm: limits.blocks_per_sm, sms: limits.sms };
    if blocks == 0 {
        return Ok(solved);
    }
    let launch = kernel.configure(blocks, THREADS)?;
    let mut partials = gpu.zeros::<f32>(blocks as usize)?;
    launch.sum(input, partials.slice_mut(..), total.slice_mut(..))?;
    Ok(solved)
}
