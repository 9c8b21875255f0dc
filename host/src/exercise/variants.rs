//! Solvers that each make one mistake the lesson describes, so a learner can
//! see what the harness reports for it.

use super::Solved;
use crate::device::Gpu;
use crate::error::Result;
use crate::launch::{Buffer, DeviceInput};
use gpu::kernels::{EXERCISE_SUM, EXERCISE_SUM_BOUNDS_BUG, GridSync, KernelDef, SumParams};

const THREADS: u32 = 256;

/// Sizes a grid from `n` and the kernel's cooperative capacity.
type Sizing = fn(n: u64, capacity: u64) -> u64;

/// Sizes with `sizing`, then launches `def` whatever the size, even 0 blocks.
fn launch_as_sized(
    gpu: &Gpu,
    def: &KernelDef<SumParams, GridSync>,
    sizing: Sizing,
    input: &DeviceInput,
    total: &mut Buffer<f32>,
) -> Result<Solved> {
    let kernel = gpu.cooperative_kernel(def)?;
    let limits = kernel.limits(THREADS)?;
    let blocks = sizing(input.len() as u64, limits.capacity());
    let launch = kernel.configure(blocks, THREADS)?;
    let mut partials = gpu.zeros::<f32>(blocks as usize)?;
    launch.sum(input, &mut partials, total)?;
    Ok(Solved { blocks, threads: THREADS, blocks_per_sm: limits.blocks_per_sm, sms: limits.sms })
}

/// The grid that covers n with one thread per element: right for an ordinary
/// launch, too big for a cooperative one once n passes the capacity.
pub fn grid_from_n_blocks(n: u64, _capacity: u64) -> u64 {
    n.div_ceil(THREADS as u64).max(1)
}

/// The right grid, with no special case for n = 0.
pub fn zero_grid_blocks(n: u64, capacity: u64) -> u64 {
    n.div_ceil(THREADS as u64).min(capacity)
}

/// `grid-from-n`: sized from n alone.
pub fn grid_from_n(gpu: &Gpu, input: &DeviceInput, total: &mut Buffer<f32>) -> Result<Solved> {
    launch_as_sized(gpu, &EXERCISE_SUM, grid_from_n_blocks, input, total)
}

/// `zero-grid`: launches even when n = 0.
pub fn zero_grid(gpu: &Gpu, input: &DeviceInput, total: &mut Buffer<f32>) -> Result<Solved> {
    launch_as_sized(gpu, &EXERCISE_SUM, zero_grid_blocks, input, total)
}

/// `bounds-bug`: the right grid (and no launch for n = 0), the kernel whose
/// loop runs past n to a whole number of blocks.
pub fn bounds_bug(gpu: &Gpu, input: &DeviceInput, total: &mut Buffer<f32>) -> Result<Solved> {
    if input.is_empty() {
        return Ok(Solved { blocks: 0, threads: THREADS, blocks_per_sm: 0, sms: gpu.info.sms });
    }
    launch_as_sized(gpu, &EXERCISE_SUM_BOUNDS_BUG, zero_grid_blocks, input, total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exercise::LADDER;
    use crate::sizing::cooperative_capacity;

    #[test]
    fn grid_from_n_exceeds_a_t4_cooperative_grid_on_exactly_the_two_largest_cases() {
        let capacity = cooperative_capacity(4, 40);
        let too_big: Vec<u64> = LADDER.iter().copied().filter(|&n| grid_from_n_blocks(n, capacity) > capacity).collect();
        assert_eq!(too_big, vec![4_194_915, 67_108_864]);
    }

    #[test]
    fn grid_from_n_exceeds_the_h200_cooperative_grid_on_the_same_two_cases() {
        let capacity = cooperative_capacity(8, 132);
        let too_big: Vec<u64> = LADDER.iter().copied().filter(|&n| grid_from_n_blocks(n, capacity) > capacity).collect();
        assert_eq!(too_big, vec![4_194_915, 67_108_864]);
    }

    #[test]
    fn zero_grid_asks_for_zero_blocks_only_for_the_empty_case() {
        let zero: Vec<u64> = LADDER.iter().copied().filter(|&n| zero_grid_blocks(n, 160) == 0).collect();
        assert_eq!(zero, vec![0]);
    }

    #[test]
    fn the_bounds_bug_reads_past_n_exactly_where_n_is_not_a_whole_number_of_blocks() {
        // The bug's loop runs to n rounded up to whole blocks of THREADS.
        let reads_past: Vec<u64> = LADDER.iter().copied().filter(|&n| n % THREADS as u64 != 0).collect();
        assert_eq!(reads_past, vec![1, 31, 611, 4_194_915]);
    }
}
