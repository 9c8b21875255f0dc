//! The host side of the cooperative-groups lesson: opens the device (a CUDA
//! GPU, or the emulated one), loads the kernels the `gpu` crate compiled
//! (`kernels()`), sizes grids, launches, checks and times.
//!
//! Layers, each calling only those above it in this list (`tests/layers.rs`
//! reads the source and holds every module to it):
//! - [`sizing`], [`text`]: pure arithmetic and shared words (no imports from this crate);
//! - [`json`], [`error`], [`checks`], [`reference`](mod@reference): output conventions, the
//!   error type, checks, and the double-precision references;
//! - [`driver`], [`nccl`]: the thin unsafe layers of raw CUDA driver calls and
//!   of NCCL (loaded at run time);
//! - [`device`]: the device, one trait with a CUDA and an emulated
//!   implementation, and typed device memory;
//! - [`launch`]: kernels loaded through their definitions, whose launch
//!   contract the types enforce;
//! - [`sums`], [`timing`], [`clusters`], [`progress`]: the lesson's sums, how
//!   they are timed, the sums with a cluster stage, and progress on stderr;
//! - [`lesson`], [`exercise`], [`bench`](mod@bench), [`multi`]: the programs
//!   (the last the sum across GPUs), then
//!   [`report`] (the lesson as text), [`cli`] and `main`.

pub mod bench;
pub mod checks;
pub mod cli;
pub mod clusters;
pub mod conjugate_gradient;
pub mod device;
pub mod driver;
pub mod error;
pub mod exercise;
pub mod invocation;
pub mod json;
pub mod kernels;
pub mod launch;
pub mod lesson;
pub mod multi;
pub mod nccl;
pub mod occupancy;
pub mod progress;
pub mod reference;
pub mod report;
pub mod sizing;
pub mod sums;
pub mod text;
pub mod timing;
pub mod trace;

// The unit tests link the kernels as the program does (`kernels::linked`).
#[cfg(test)]
use gpu as _;

/// The lesson's kernels and their PTX, from the `gpu` crate linked into the
/// program ([`kernels::linked`]: this library never names that crate, so
/// that a kernel edit does not recompile it).
pub fn kernels() -> &'static kernels::Kernels {
    kernels::linked()
}
