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

pub mod atomics;
mod broken;
mod checks;
mod deeper;
#[cfg(feature = "probes")]
pub mod collectives;
pub mod conjugate_gradient;
pub mod on_chip;
pub mod fast;
#[cfg(feature = "probes")]
pub mod grid_collectives;
mod multi;
pub mod mutants;
#[cfg(feature = "probes")]
mod probes;
mod timing;
#[cfg(feature = "probes")]
pub mod types;
#[cfg(feature = "probes")]
pub mod waits;

pub use crate::lesson::*;
#[cfg(not(target_arch = "nvptx64"))]
pub use atomics::HISTOGRAM_BYTES;
pub use atomics::{HISTOGRAM_BINS, histogram_bytes, histogram_shared_bytes};
pub use broken::*;
pub use checks::*;
pub use deeper::*;
pub use fast::{FAST_FLOATS_PER_TRIP, one_f32_per_tile_and_a_flag, reduce_cooperative_fast, reduce_last_block, reduce_single_block};
#[cfg(not(target_arch = "nvptx64"))]
pub use fast::{REDUCE_COOPERATIVE_FAST, REDUCE_LAST_BLOCK, REDUCE_SINGLE_BLOCK};
pub use multi::*;
#[cfg(feature = "probes")]
pub use probes::*;
pub use timing::*;

pub use cg_kernel::kernels::*;

// The PTX of this crate is built and registered by the crate apart
// `gpu/ptx` (`gpu-ptx`), which says why.

/// The numbers the host launches some kernels by, shared by name
/// (`cg_kernel::kernels::constant`).
#[cfg(not(target_arch = "nvptx64"))]
mod shared {
    use super::conjugate_gradient as solver;

    macro_rules! share {
        ($($name:ident = $value:expr),*) => {$(
            #[cg_kernel::kernels::linkme::distributed_slice(cg_kernel::kernels::CONSTANTS)]
            #[linkme(crate = cg_kernel::kernels::linkme)]
            static $name: (&str, u64) = (stringify!($name), $value as u64);
        )*};
    }
    share!(
        COALESCED_DEMO_THREADS = super::COALESCED_DEMO_THREADS,
        SHUFFLE_PROBES = super::SHUFFLE_PROBES,
        FAST_FLOATS_PER_TRIP = super::FAST_FLOATS_PER_TRIP,
        CONJUGATE_GRADIENT_R1 = solver::R1,
        CONJUGATE_GRADIENT_ITERATIONS = solver::ITERATIONS,
        CONJUGATE_GRADIENT_DONE = solver::DONE,
        CONJUGATE_GRADIENT_TOLERANCE_SQUARED = solver::TOLERANCE_SQUARED,
        CONJUGATE_GRADIENT_MAX_ITERATIONS = solver::MAX_ITERATIONS,
        CONJUGATE_GRADIENT_BREAKDOWN = solver::BREAKDOWN,
        CONJUGATE_GRADIENT_PARTIALS = solver::PARTIALS,
        ON_CHIP_SUMS = super::on_chip::SUMS,
        ON_CHIP_RESTARTS = super::on_chip::RESTARTS,
        ON_CHIP_TRUE_RESIDUAL = super::on_chip::TRUE_RESIDUAL,
        ON_CHIP_CHECKS = super::on_chip::CHECKS,
        ON_CHIP_SUMS_AT = super::on_chip::SUMS_AT,
        ON_CHIP_CHECK_EVERY = super::on_chip::CHECK_EVERY,
        ON_CHIP_EXCHANGE_VECTORS = super::on_chip::EXCHANGE_VECTORS,
        ON_CHIP_SLICE_VECTORS = super::on_chip::SLICE_VECTORS
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_definition_is_named_after_its_kernel_and_sized_by_its_tile() {
        assert_eq!(REDUCE_COOPERATIVE_GRID.name(), "reduce_cooperative_grid");
        assert_eq!(REDUCE_COOPERATIVE_GRID.param_names(), ["input", "partials", "out", "n"]);
        assert_eq!(REDUCE_COOPERATIVE_GRID.tile(), Some(32));
        assert_eq!(REDUCE_COOPERATIVE_GRID.dynamic_shared_bytes(256), 32);
        // Then, as in every cooperative kernel, the grid collectives' bytes.
        assert_eq!(REDUCE_COOPERATIVE_GRID.shared_bytes(256), 32 + crate::cg::GRID_SHARED_BYTES);
        let t16 = REDUCE_COOPERATIVE_GRID.with_tile(16).unwrap();
        assert_eq!((t16.tile(), t16.dynamic_shared_bytes(256), t16.in_ptx()), (Some(16), 64, false));
        assert_eq!(REDUCE_COOPERATIVE_GRID.with_tile(1).unwrap().dynamic_shared_bytes(256), 1024);
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
