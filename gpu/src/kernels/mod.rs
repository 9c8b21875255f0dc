//! The kernels, and the definitions the host launches them through.
//!
//! Each kernel is declared once with [`#[kernel]`](crate::kernel), which emits
//! the PTX entry, the same function for the emulator, and a [`KernelDef`]
//! named after the kernel in capitals (`reduce_cooperative_grid` gives
//! [`REDUCE_COOPERATIVE_GRID`]). A definition carries the entry's PTX name
//! (the function's own), its parameter types, its launch contract
//! ([`GridSync`] for a kernel that calls `grid.sync()`, which has only a
//! cooperative launch on the host) and its dynamic shared memory. Only the
//! macro can make one: [`KernelDef::new`] is `unsafe`.

mod broken;
mod checks;
mod exercise;
pub mod fast;
mod lesson;
mod multi;
pub mod mutants;
mod sum;
mod timing;

pub use broken::*;
pub use checks::*;
pub use exercise::*;
pub use fast::{FAST_FLOATS_PER_TRIP, one_f32_per_tile_and_a_flag, reduce_cooperative_fast, reduce_last_block, reduce_single_block};
#[cfg(not(target_arch = "nvptx64"))]
pub use fast::{REDUCE_COOPERATIVE_FAST, REDUCE_LAST_BLOCK, REDUCE_SINGLE_BLOCK};
pub use lesson::*;
pub use multi::*;
pub use sum::{block_sum, one_f32_per_tile};
pub use timing::*;

#[cfg(not(target_arch = "nvptx64"))]
mod def;
#[cfg(not(target_arch = "nvptx64"))]
pub use def::{KernelDef, Param, Params, TileInfo, no_overread};

/// Launch contract: the kernel calls `grid.sync()`, so it must be launched
/// cooperatively with a grid that fits on the device at once.
pub struct GridSync;
/// Launch contract: no grid barrier; any launch is safe.
pub struct NoGridSync;

/// A launch contract: [`GridSync`] or [`NoGridSync`].
pub trait Contract {
    /// Whether the kernel is declared `#[kernel(cooperative)]`: it may call `grid.sync()`.
    const GRID_SYNC: bool;
}
impl Contract for GridSync {
    const GRID_SYNC: bool = true;
}
impl Contract for NoGridSync {
    const GRID_SYNC: bool = false;
}

/// The PTX entry names of every kernel in the default build's module.
#[cfg(not(target_arch = "nvptx64"))]
pub const ALL_NAMES: [&str; 27] = [
    REDUCE_BLOCKS_TO_PARTIALS.name(),
    REDUCE_PARTIALS_TO_TOTAL.name(),
    REDUCE_COOPERATIVE_GRID.name(),
    PROBE_COOPERATIVE.name(),
    COALESCED_DEMO.name(),
    EXERCISE_SUM.name(),
    EXERCISE_SUM_BOUNDS_BUG.name(),
    REDUCE_COOPERATIVE_FAST.name(),
    mutants::MUTANT_WITHOUT_GRID_SYNC.name(),
    mutants::MUTANT_DROPPING_LAST_BLOCK.name(),
    mutants::MUTANT_MULTI_GPU_WITHOUT_BARRIER.name(),
    SHUFFLE_OUT_OF_RANGE.name(),
    REDUCE_SINGLE_BLOCK.name(),
    REDUCE_LAST_BLOCK.name(),
    EMPTY.name(),
    EMPTY_COOPERATIVE.name(),
    GRID_SYNC_MISSING_BLOCK.name(),
    HOLD_FOR.name(),
    UNDECLARED_GRID_SYNC.name(),
    EXERCISE_SUM_PARTIALS_IF.name(),
    SANITIZER_READS_PAST_N.name(),
    SANITIZER_BLOCK_SUM_RACE.name(),
    SANITIZER_DIVERGENT_BLOCK_SYNC.name(),
    REDUCE_MULTI_GPU.name(),
    MULTI_GRID_BARRIER.name(),
    MULTI_GRID_BARRIER_UNBOUNDED.name(),
    FILL_LESSON_INPUT.name(),
];
