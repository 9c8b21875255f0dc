//! Our solution (`--variant reference`), and solvers that each make one
//! mistake the lesson describes, so a learner can see what the harness
//! reports for it.

use super::Solved;
use crate::device::{Buffer, Gpu};
use crate::error::{Error, Result};
use crate::launch::prelude::*;
use crate::launch::{DeviceInput, SumParams};
use cg_kernel::kernels::{GridSync, KernelDef};
use cg_launcher::error::Error as L;

const THREADS_PER_BLOCK: u32 = 256;

/// `reference`: the grid is the smaller of the blocks n needs and the blocks
/// that fit at once, and n = 0 launches nothing.
pub fn reference(gpu: &Gpu, input: &DeviceInput, total: &mut Buffer<f32>) -> Result<Solved> {
    let kernel = gpu.cooperative_kernel(&crate::kernels().exercise_sum)?;
    // This kernel, at this block size, with its shared memory: not a similar kernel's answer.
    let limits = kernel.limits(THREADS_PER_BLOCK)?;
    let needed = (input.len() as u64).div_ceil(THREADS_PER_BLOCK as u64);
    let blocks = needed.min(limits.capacity() as u64) as u32;
    let solved = Solved { blocks, threads_per_block: THREADS_PER_BLOCK, blocks_per_sm: limits.blocks_per_sm, sms: limits.sms };
    if blocks == 0 {
        // The harness zeroed the total; there is nothing to launch.
        return Ok(solved);
    }
    let launch = kernel.configure(blocks, THREADS_PER_BLOCK)?;
    let mut partials = gpu.zeros::<f32>(blocks as usize)?;
    launch.sum(input, partials.slice_mut(..), total.slice_mut(..))?;
    Ok(solved)
}

/// Sizes a grid from `n` and the kernel's cooperative capacity.
type Sizing = fn(n: u64, capacity: u32) -> u64;

/// Sizes with `sizing`, then launches `def` whatever the size, even 0 blocks.
fn launch_as_sized(gpu: &Gpu, def: &KernelDef<SumParams, GridSync>, sizing: Sizing, input: &DeviceInput, total: &mut Buffer<f32>) -> Result<Solved> {
    let kernel = gpu.cooperative_kernel(def)?;
    let limits = kernel.limits(THREADS_PER_BLOCK)?;
    let wanted = sizing(input.len() as u64, limits.capacity());
    let blocks = u32::try_from(wanted).map_err(|_| Error::Launch(L::GridTooLarge { kernel: def.name(), blocks: wanted }))?;
    let launch = kernel.configure(blocks, THREADS_PER_BLOCK)?;
    let mut partials = gpu.zeros::<f32>(launch.blocks() as usize)?;
    launch.sum(input, partials.slice_mut(..), total.slice_mut(..))?;
    Ok(Solved { blocks: launch.blocks(), threads_per_block: THREADS_PER_BLOCK, blocks_per_sm: limits.blocks_per_sm, sms: limits.sms })
}

/// The grid that covers n with one thread per element: right for an ordinary
/// launch, too big for a cooperative one once n passes the capacity.
pub fn grid_from_n_blocks(n: u64, _capacity: u32) -> u64 {
    n.div_ceil(THREADS_PER_BLOCK as u64).max(1)
}

/// The right grid, with no special case for n = 0.
pub fn zero_grid_blocks(n: u64, capacity: u32) -> u64 {
    n.div_ceil(THREADS_PER_BLOCK as u64).min(capacity as u64)
}

/// The blocks n needs with the division rounded down, within the capacity.
pub fn round_down_blocks(n: u64, capacity: u32) -> u64 {
    (n / THREADS_PER_BLOCK as u64).min(capacity as u64)
}

/// `round-down`: the right grid but for `n / 256` where the division should
/// round up (and no launch for n = 0).
pub fn round_down(gpu: &Gpu, input: &DeviceInput, total: &mut Buffer<f32>) -> Result<Solved> {
    launch_unless_empty(gpu, &crate::kernels().exercise_sum, round_down_blocks, input, total)
}

/// `grid-from-n`: sized from n alone.
pub fn grid_from_n(gpu: &Gpu, input: &DeviceInput, total: &mut Buffer<f32>) -> Result<Solved> {
    launch_as_sized(gpu, &crate::kernels().exercise_sum, grid_from_n_blocks, input, total)
}

/// `zero-grid`: launches even when n = 0.
pub fn zero_grid(gpu: &Gpu, input: &DeviceInput, total: &mut Buffer<f32>) -> Result<Solved> {
    launch_as_sized(gpu, &crate::kernels().exercise_sum, zero_grid_blocks, input, total)
}

/// `partials-if`: the right grid (and no launch for n = 0), the kernel whose
/// block 0 reads one partial per thread with an `if` where the loop was.
pub fn partials_if(gpu: &Gpu, input: &DeviceInput, total: &mut Buffer<f32>) -> Result<Solved> {
    launch_unless_empty(gpu, &crate::kernels().exercise_sum_partials_if, zero_grid_blocks, input, total)
}

/// As [`launch_as_sized`], but for n = 0 no launch: only the kernel's limits
/// are reported (the solvers that make some other mistake get n = 0 right).
fn launch_unless_empty(gpu: &Gpu, def: &KernelDef<SumParams, GridSync>, sizing: Sizing, input: &DeviceInput, total: &mut Buffer<f32>) -> Result<Solved> {
    if !input.is_empty() {
        return launch_as_sized(gpu, def, sizing, input, total);
    }
    let limits = gpu.cooperative_kernel(def)?.limits(THREADS_PER_BLOCK)?;
    Ok(Solved { blocks: 0, threads_per_block: THREADS_PER_BLOCK, blocks_per_sm: limits.blocks_per_sm, sms: limits.sms })
}

/// `per-sm`: the grid is the kernel's blocks per SM, not times the SM count
/// (and no launch for n = 0). Every sum is right; the grid is one SM's worth.
pub fn per_sm(gpu: &Gpu, input: &DeviceInput, total: &mut Buffer<f32>) -> Result<Solved> {
    let kernel = gpu.cooperative_kernel(&crate::kernels().exercise_sum)?;
    let limits = kernel.limits(THREADS_PER_BLOCK)?;
    let solved = Solved { blocks: limits.blocks_per_sm, threads_per_block: THREADS_PER_BLOCK, blocks_per_sm: limits.blocks_per_sm, sms: limits.sms };
    if input.is_empty() {
        return Ok(Solved { blocks: 0, ..solved });
    }
    let launch = kernel.configure(solved.blocks, THREADS_PER_BLOCK)?;
    let mut partials = gpu.zeros::<f32>(solved.blocks as usize)?;
    launch.sum(input, partials.slice_mut(..), total.slice_mut(..))?;
    Ok(solved)
}

/// `grid-reduce`: the reference's grid (and no launch for n = 0), the kernel
/// whose second stage is one `grid.reduce`.
pub fn grid_reduce(gpu: &Gpu, input: &DeviceInput, total: &mut Buffer<f32>) -> Result<Solved> {
    launch_unless_empty(gpu, &crate::kernels().exercise_sum_grid_reduce, zero_grid_blocks, input, total)
}

/// `bounds-bug`: the right grid (and no launch for n = 0), the kernel whose
/// loop runs past n to a whole number of blocks.
pub fn bounds_bug(gpu: &Gpu, input: &DeviceInput, total: &mut Buffer<f32>) -> Result<Solved> {
    launch_unless_empty(gpu, &crate::kernels().exercise_sum_bounds_bug, zero_grid_blocks, input, total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exercise::LADDER;

    fn too_big(capacity: u32) -> Vec<u64> {
        LADDER.iter().copied().filter(|&n| grid_from_n_blocks(n, capacity) > capacity as u64).collect()
    }

    #[test]
    fn grid_from_n_exceeds_the_t4_and_h200_cooperative_grids_on_exactly_the_two_largest_cases() {
        // 4 blocks/SM x 40 SMs on the T4, 8 x 132 on the H200.
        assert_eq!(too_big(4 * 40), vec![4_194_915, 67_108_864]);
        assert_eq!(too_big(8 * 132), vec![4_194_915, 67_108_864]);
    }

    #[test]
    fn zero_grid_asks_for_zero_blocks_only_for_the_empty_case() {
        let zero: Vec<u64> = LADDER.iter().copied().filter(|&n| zero_grid_blocks(n, 160) == 0).collect();
        assert_eq!(zero, vec![0]);
    }

    #[test]
    fn the_bounds_bug_reads_past_n_exactly_where_n_is_not_a_whole_number_of_blocks() {
        // The bug's loop runs to n rounded up to whole blocks.
        let reads_past: Vec<u64> = LADDER.iter().copied().filter(|&n| n % THREADS_PER_BLOCK as u64 != 0).collect();
        assert_eq!(reads_past, vec![1, 31, 611, 4_194_915]);
    }
}
