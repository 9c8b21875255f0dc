//! Rank arithmetic for a grid: pure functions, shared by the PTX build and the
//! host's unit tests. Arguments past CUDA's limits wrap, as on the GPU;
//! none panics.
//!
//! C++ computes a grid's ranks in 64 bits over three dimensions, as
//! [`linear_rank`](super::lanes::linear_rank) does, and that costs about 30
//! instructions per warp before the first load. These give the same numbers
//! for every grid CUDA can launch whose threads a `u64` can count (as C++'s
//! `unsigned long long` can), from fewer instructions:
//! - any grid: CUDA caps `gridDim.y` and `gridDim.z` at [`MAX_GRID_DIM_YZ`],
//!   so their products fit a `u32` and one wide multiply finishes each number;
//! - a grid of fewer than 2^32 threads, every number fits a `u32` and is
//!   widened once ([`narrow_thread_rank`], [`narrow_thread_count`]). This is
//!   what `GridGroup` uses: 64-bit ranks cost every grid-stride kernel
//!   registers (`ptxas -v` shows it), since the compiler can no longer keep
//!   the loop's index narrow, and registers are blocks per SM. A cooperative
//!   grid always qualifies (every block is resident at once; an H200 holds
//!   132 × 2,048 threads), and so does every grid this project's host
//!   launches (it refuses one of 2^32 threads or more, by name). The PTX is a
//!   standalone artifact that any host may launch, so [`narrow_thread_count`]
//!   says when a grid does not qualify, and `this_grid()` traps there, once,
//!   rather than let any rank wrap.
//!   The 64-bit formulas are the reference they are tested against.

/// The most blocks a grid has along y or along z on any CUDA GPU (x allows
/// 2^31 - 1).
pub const MAX_GRID_DIM_YZ: u32 = 65_535;

/// The rank of block `index` in a grid of `dims` blocks, x fastest.
#[inline(always)]
pub const fn block_rank(index: [u32; 3], dims: [u32; 3]) -> u64 {
    (index[2].wrapping_mul(dims[1]).wrapping_add(index[1]) as u64 * dims[0] as u64).wrapping_add(index[0] as u64)
}

/// The number of blocks in a grid of `dims`.
#[inline(always)]
pub const fn block_count(dims: [u32; 3]) -> u64 {
    dims[1].wrapping_mul(dims[2]) as u64 * dims[0] as u64
}

/// The rank of thread `rank_in_block` of block `index`, in a grid of `dims`
/// blocks of `block_threads`: the y-z part and the x part each one wide multiply.
#[inline(always)]
pub const fn thread_rank(index: [u32; 3], dims: [u32; 3], block_threads: u32, rank_in_block: u32) -> u64 {
    let row = dims[0] as u64 * block_threads as u64;
    (index[2].wrapping_mul(dims[1]).wrapping_add(index[1]) as u64).wrapping_mul(row).wrapping_add(index[0] as u64 * block_threads as u64 + rank_in_block as u64)
}

/// The number of threads in a grid of `dims` blocks of `block_threads`.
#[inline(always)]
pub const fn thread_count(dims: [u32; 3], block_threads: u32) -> u64 {
    (dims[1].wrapping_mul(dims[2]) as u64).wrapping_mul(dims[0] as u64 * block_threads as u64)
}

/// [`thread_rank`] for a grid of fewer than 2^32 threads (one that
/// [`narrow_thread_count`] counts), in 32 bits.
#[inline(always)]
pub const fn narrow_thread_rank(index: [u32; 3], dims: [u32; 3], block_threads: u32, rank_in_block: u32) -> u32 {
    index[2].wrapping_mul(dims[1]).wrapping_add(index[1]).wrapping_mul(dims[0]).wrapping_add(index[0]).wrapping_mul(block_threads).wrapping_add(rank_in_block)
}

/// [`thread_count`] in 32 bits, or `None` for a grid of 2^32 threads or
/// more, whose ranks do not fit: two products and two comparisons.
#[inline(always)]
pub const fn narrow_thread_count(dims: [u32; 3], block_threads: u32) -> Option<u32> {
    // Below 2^32 each, so their product fits a u64.
    let (row, planes) = (dims[0] as u64 * block_threads as u64, dims[1].wrapping_mul(dims[2]) as u64);
    if row >= 1 << 32 {
        return None;
    }
    let count = row * planes;
    if count >= 1 << 32 { None } else { Some(count as u32) }
}

#[cfg(test)]
mod tests {
    use super::super::lanes::linear_rank;
    use super::*;

    const X_MAX: u32 = i32::MAX as u32;

    /// Corners and middles of a box of `dims`.
    fn samples(dims: [u32; 3]) -> [[u32; 3]; 5] {
        let last = dims.map(|d| d - 1);
        [[0, 0, 0], last, [last[0], 0, last[2]], [0, last[1], last[2]], [last[0] / 2, last[1] / 3, last[2]]]
    }

    #[test]
    fn every_grid_cuda_can_launch_gets_the_64_bit_numbers() {
        let grids = [[1, 1, 1], [X_MAX, 1, 1], [X_MAX, MAX_GRID_DIM_YZ, 1], [X_MAX, 1, MAX_GRID_DIM_YZ], [X_MAX, MAX_GRID_DIM_YZ, MAX_GRID_DIM_YZ], [3, 5, 7]];
        for dims in grids {
            let wide = dims.map(u64::from);
            let blocks = wide[0] * wide[1] * wide[2];
            assert_eq!(block_count(dims), blocks);
            for threads in [1, 32, 256, 1024] {
                // The largest grids have more than 2^64 threads at 32 or more
                // per block: past what any 64-bit rank, C++'s included, counts.
                let Some(count) = blocks.checked_mul(threads as u64) else { continue };
                assert_eq!(thread_count(dims, threads), count, "{dims:?} x {threads}");
                for index in samples(dims) {
                    let rank = linear_rank(index, dims);
                    assert_eq!(block_rank(index, dims), rank, "block {index:?} of {dims:?}");
                    for t in [0, threads - 1] {
                        assert_eq!(thread_rank(index, dims, threads, t), rank * threads as u64 + t as u64, "thread {t} of block {index:?} of {dims:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_grid_of_fewer_than_2_to_the_32_threads_gets_the_same_numbers_in_32_bits() {
        // The H200's cooperative maximum, at 256 and at 1024 threads, 3-D
        // grids, and ordinary grids up to the last thread below 2^32.
        let grids = [
            ([1056, 1, 1], 256),
            ([264, 1, 1], 1024),
            ([12, 11, 8], 256),
            ([2, 2, 80], 1024),
            ([16_777_215, 1, 1], 256),
            ([4_194_303, 1, 1], 1024),
            ([X_MAX, 1, 1], 2),
            ([65_535, 255, 1], 256),
        ];
        for (dims, threads) in grids {
            assert!(thread_count(dims, threads) < 1 << 32);
            assert_eq!(narrow_thread_count(dims, threads).map(u64::from), Some(thread_count(dims, threads)));
            for index in samples(dims) {
                for t in [0, threads - 1] {
                    assert_eq!(narrow_thread_rank(index, dims, threads, t) as u64, thread_rank(index, dims, threads, t));
                }
            }
        }
    }

    #[test]
    fn a_grid_of_2_to_the_32_threads_or_more_is_not_counted_in_32_bits() {
        // The first grids past the bound, each way of reaching it, and the largest.
        let grids = [
            ([1 << 22, 1, 1], 1024),
            ([1 << 24, 1, 1], 256),
            ([(1 << 24) + 1, 1, 1], 256),
            ([1 << 16, 1 << 8, 1], 256),
            ([1, 1 << 16, 1 << 6], 1024),
            ([2, 65_535, 65_535], 1),
            ([X_MAX, MAX_GRID_DIM_YZ, MAX_GRID_DIM_YZ], 1024),
        ];
        for (dims, threads) in grids {
            assert_eq!(narrow_thread_count(dims, threads), None, "{dims:?} x {threads}");
        }
        assert_eq!(narrow_thread_count([(1 << 24) - 1, 1, 1], 256), Some(u32::MAX - 255), "the last grid below the bound");
        assert_eq!(narrow_thread_count([65_535, 65_535, 1], 1), Some(65_535 * 65_535));
    }
}
