//! The lesson's kernels: their definitions for the host, and their bodies,
//! which build for the GPU (PTX) and for the host (run by [`crate::emu`]).

#[macro_use]
mod def;
pub use def::{GridSync, In, KernelDef, NoGridSync, Out, Param, Params, no_overread, no_shared_memory, one_f32_per_warp, up_to_one_block};

#[cfg(feature = "barrier-timeout")]
mod broken;
mod exercise;
pub mod fast;
mod lesson;
mod sum;

#[cfg(feature = "barrier-timeout")]
pub use broken::grid_sync_missing_block;
pub use exercise::{exercise_sum, exercise_sum_bounds_bug};
pub use fast::reduce_cooperative_fast;
pub use lesson::{coalesced_demo, probe_cooperative, reduce_blocks_to_partials, reduce_cooperative_grid, reduce_partials_to_total};

/// Day 25's first launch: each block sums its grid-stride share of `n` inputs
/// and writes one partial. `(input, partials, n)`.
pub const REDUCE_BLOCKS_TO_PARTIALS: KernelDef<(In<f32>, Out<f32>, usize), NoGridSync> =
    KernelDef::new("reduce_blocks_to_partials", reduce_blocks_to_partials as _, one_f32_per_warp);

/// Day 25's second launch: one block sums the `m` partials into `total[0]`.
/// `(partials, total, m)`.
pub const REDUCE_PARTIALS_TO_TOTAL: KernelDef<(In<f32>, Out<f32>, usize), NoGridSync> =
    KernelDef::new("reduce_partials_to_total", reduce_partials_to_total as _, one_f32_per_warp);

/// The lesson's `reduceCooperativeGrid`: both stages in one launch with
/// `grid.sync()` between them. `(input, partials, total, n)`.
pub const REDUCE_COOPERATIVE_GRID: KernelDef<SumParams, GridSync> =
    KernelDef::new("reduce_cooperative_grid", reduce_cooperative_grid as _, one_f32_per_warp);

/// The lesson's `probeCooperative`: no barrier; records `is_valid()` and
/// `num_blocks()` as `out[0]`, `out[1]`. Safe to launch any way at any size.
pub const PROBE_COOPERATIVE: KernelDef<(Out<u32>,), NoGridSync> =
    KernelDef::new("probe_cooperative", probe_cooperative as _, no_shared_memory);

/// The `coalesced_threads()` demonstration: for each thread of a 64-thread
/// block that takes the branch, `out[4 * rank..]` = warp, lane, group size,
/// rank in group; other threads write nothing.
pub const COALESCED_DEMO: KernelDef<(Out<u32>,), NoGridSync> = KernelDef::new("coalesced_demo", coalesced_demo as _, no_shared_memory);

/// Threads [`COALESCED_DEMO`] must be launched with: two warps.
pub const COALESCED_DEMO_THREADS: u32 = 64;

/// The parameters every sum kernel takes: `(input, partials, total, n)`.
/// The contract: reads `input[..n + overread]`, writes one partial per block
/// and `total[0]`.
pub type SumParams = (In<f32>, Out<f32>, Out<f32>, usize);

/// A single-launch sum built for bandwidth: the same grid barrier, but 16-byte
/// loads, several in flight per thread, and separate accumulators.
pub const REDUCE_COOPERATIVE_FAST: KernelDef<SumParams, GridSync> =
    KernelDef::new("reduce_cooperative_fast", reduce_cooperative_fast as _, one_f32_per_warp);

/// Floats one thread of [`REDUCE_COOPERATIVE_FAST`] reads per loop trip; a
/// grid needs no more than `ceil(n / (threads * FAST_FLOATS_PER_TRIP))` blocks.
pub const FAST_FLOATS_PER_TRIP: u32 = 4 * fast::UNROLL as u32;

/// The exercise's single-launch sum (edit it in `gpu/src/kernels/exercise.rs`).
/// `(input, partials, total, n)`.
pub const EXERCISE_SUM: KernelDef<SumParams, GridSync> =
    KernelDef::new("exercise_sum", exercise_sum as _, one_f32_per_warp);

/// The exercise's bounds-bug variant: [`EXERCISE_SUM`] with the grid-stride
/// loop running to `n` rounded up to whole blocks, so a tail of threads reads
/// past the input. `(input, partials, total, n)`.
pub const EXERCISE_SUM_BOUNDS_BUG: KernelDef<SumParams, GridSync> =
    KernelDef::new("exercise_sum_bounds_bug", exercise_sum_bounds_bug as _, one_f32_per_warp).with_overread(up_to_one_block);

/// A deliberately broken kernel for the diagnosing barrier's test: the last
/// block returns without calling `grid.sync()`, so the others wait for it
/// forever. Exists only with the `barrier-timeout` feature, where that wait
/// ends in a report. `(out)`, one `u32` per block, written after the barrier.
#[cfg(feature = "barrier-timeout")]
pub const GRID_SYNC_MISSING_BLOCK: KernelDef<(Out<u32>,), GridSync> = KernelDef::new("grid_sync_missing_block", grid_sync_missing_block as _, no_shared_memory);

/// The names of every kernel in the PTX module.
pub const ALL_NAMES: [&str; 8] = [
    REDUCE_COOPERATIVE_FAST.name,
    REDUCE_BLOCKS_TO_PARTIALS.name,
    REDUCE_PARTIALS_TO_TOTAL.name,
    REDUCE_COOPERATIVE_GRID.name,
    PROBE_COOPERATIVE.name,
    COALESCED_DEMO.name,
    EXERCISE_SUM.name,
    EXERCISE_SUM_BOUNDS_BUG.name,
];
