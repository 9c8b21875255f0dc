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
pub mod fast;
mod multi;
pub mod mutants;
mod timing;

pub use crate::lesson::*;
pub use broken::*;
pub use checks::*;
pub use fast::{FAST_FLOATS_PER_TRIP, one_f32_per_tile_and_a_flag, reduce_cooperative_fast, reduce_last_block, reduce_single_block};
#[cfg(not(target_arch = "nvptx64"))]
pub use fast::{REDUCE_COOPERATIVE_FAST, REDUCE_LAST_BLOCK, REDUCE_SINGLE_BLOCK};
pub use multi::*;
pub use timing::*;

pub use gpu_core::kernels::*;

/// Every kernel, for the host (see [`Kernels`]): built from the definitions
/// `#[kernel]` emits, and the PTX `build.rs` made of this crate.
#[cfg(not(target_arch = "nvptx64"))]
pub const KERNELS: Kernels = Kernels {
    ptx: Ptx {
        plain: include_str!(concat!(env!("OUT_DIR"), "/gpu.ptx")),
        traced: include_str!(concat!(env!("OUT_DIR"), "/gpu_traced.ptx")),
        sm90: include_str!(concat!(env!("OUT_DIR"), "/gpu_sm90.ptx")),
        ptxas_sm75: include!(concat!(env!("OUT_DIR"), "/ptxas_sm75.rs")),
    },
    coalesced_demo_threads: COALESCED_DEMO_THREADS,
    shuffle_probes: SHUFFLE_PROBES,
    fast_floats_per_trip: FAST_FLOATS_PER_TRIP,
    reduce_blocks_to_partials: REDUCE_BLOCKS_TO_PARTIALS,
    reduce_partials_to_total: REDUCE_PARTIALS_TO_TOTAL,
    reduce_cooperative_grid: REDUCE_COOPERATIVE_GRID,
    probe_cooperative: PROBE_COOPERATIVE,
    coalesced_demo: COALESCED_DEMO,
    exercise_sum: EXERCISE_SUM,
    exercise_sum_bounds_bug: mutants::EXERCISE_SUM_BOUNDS_BUG,
    exercise_sum_partials_if: mutants::EXERCISE_SUM_PARTIALS_IF,
    reduce_cooperative_fast: REDUCE_COOPERATIVE_FAST,
    reduce_last_block: REDUCE_LAST_BLOCK,
    reduce_single_block: REDUCE_SINGLE_BLOCK,
    mutant_without_grid_sync: mutants::MUTANT_WITHOUT_GRID_SYNC,
    mutant_dropping_last_block: mutants::MUTANT_DROPPING_LAST_BLOCK,
    mutant_multi_gpu_without_barrier: mutants::MUTANT_MULTI_GPU_WITHOUT_BARRIER,
    mutant_every_block_writes_total: mutants::MUTANT_EVERY_BLOCK_WRITES_TOTAL,
    mutant_tile_sync_for_block_sync: mutants::MUTANT_TILE_SYNC_FOR_BLOCK_SYNC,
    shuffle_out_of_range: SHUFFLE_OUT_OF_RANGE,
    empty: EMPTY,
    empty_cooperative: EMPTY_COOPERATIVE,
    grid_sync_loop: GRID_SYNC_LOOP,
    grid_sync_stress: GRID_SYNC_STRESS,
    hold_for: HOLD_FOR,
    grid_sync_missing_block: GRID_SYNC_MISSING_BLOCK,
    undeclared_grid_sync: UNDECLARED_GRID_SYNC,
    sanitizer_reads_past_n: SANITIZER_READS_PAST_N,
    sanitizer_block_sum_race: SANITIZER_BLOCK_SUM_RACE,
    sanitizer_divergent_block_sync: SANITIZER_DIVERGENT_BLOCK_SYNC,
    reduce_multi_gpu: REDUCE_MULTI_GPU,
    fill_lesson_input: FILL_LESSON_INPUT,
    multi_grid_barrier: MULTI_GRID_BARRIER,
    multi_grid_barrier_unbounded: MULTI_GRID_BARRIER_UNBOUNDED,
    reduce_cluster_grid: REDUCE_CLUSTER_GRID,
    reduce_clusters_to_partials: REDUCE_CLUSTERS_TO_PARTIALS,
    cluster_sync_loop: CLUSTER_SYNC_LOOP,
    mutant_cluster_without_first_sync: mutants::MUTANT_CLUSTER_WITHOUT_FIRST_SYNC,
    mutant_cluster_wrong_rank: mutants::MUTANT_CLUSTER_WRONG_RANK,
    mutant_cluster_exits_early: mutants::MUTANT_CLUSTER_EXITS_EARLY,
};
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_definition_is_named_after_its_kernel_and_sized_by_its_tile() {
        assert_eq!(REDUCE_COOPERATIVE_GRID.name(), "reduce_cooperative_grid");
        assert_eq!(REDUCE_COOPERATIVE_GRID.param_names(), ["input", "partials", "out", "n"]);
        assert_eq!(REDUCE_COOPERATIVE_GRID.tile(), Some(32));
        assert_eq!(REDUCE_COOPERATIVE_GRID.shared_bytes(256), 32);
        let t16 = REDUCE_COOPERATIVE_GRID.with_tile(16).unwrap();
        assert_eq!((t16.tile(), t16.shared_bytes(256), t16.in_ptx()), (Some(16), 64, false));
        assert_eq!(REDUCE_COOPERATIVE_GRID.with_tile(1).unwrap().shared_bytes(256), 1024);
        assert!(REDUCE_COOPERATIVE_GRID.with_tile(3).is_none());
        assert!(REDUCE_COOPERATIVE_GRID.with_tile(32).unwrap().in_ptx());
        assert_eq!(PROBE_COOPERATIVE.shared_bytes(1024), 0);
        assert_eq!(mutants::EXERCISE_SUM_BOUNDS_BUG.overread(256), 255);
        assert_eq!(EXERCISE_SUM.overread(256), 0);
    }

    #[test]
    fn one_f32_per_tile_counts_a_partial_last_tile() {
        assert_eq!(one_f32_per_tile(256, 32), 32);
        assert_eq!(one_f32_per_tile(48, 32), 8);
        assert_eq!(one_f32_per_tile(1024, 1), 4096);
    }
}
