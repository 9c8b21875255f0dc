//! The host side of the cooperative-groups lesson: the program `cg-lesson`
//! (lesson, exercise, bench, trace, occupancy, conjugate gradient,
//! multi-GPU), written on the launcher library, `cg-launcher` (devices,
//! memory, launches; re-exported here as [`device`], [`nccl`] and
//! [`sizing`]), through its public API alone. It finds the lesson's
//! kernels that the `gpu` crate compiled (`kernels()`).
//!
//! Layers, each calling only those above it in this list (`tests/layers.rs`
//! reads the source and holds every module to it):
//! - [`text`]: shared words (no imports from this crate);
//! - [`json`], [`error`], [`checks`], [`reference`](mod@reference): output conventions, the
//!   program's error type (the launcher's errors in the program's words), checks, and the
//!   double-precision references;
//! - [`kernels`], [`launch`]: the kernels the program launches, and its safe
//!   launches of them, each checking its buffers before the launcher's `unsafe` call;
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
pub mod error;
pub mod exercise;
pub mod invocation;
pub mod json;
pub mod kernels;
pub mod launch;
pub mod lesson;
pub mod multi;
pub mod occupancy;
pub mod progress;
pub mod reference;
pub mod report;
pub mod sums;
pub mod text;
pub mod timing;
pub mod trace;

// The launcher library's modules, under the names the lesson's code uses.
pub use cg_launcher::{device, group, nccl, observe, sizing};

// The unit tests link the kernels as the program does (`kernels::linked`).
#[cfg(test)]
use gpu as _;
#[cfg(test)]
use gpu_ptx as _;

/// The lesson's kernels and their PTX, from the `gpu` crate linked into the
/// program ([`kernels::linked`]: this library never names that crate, so
/// that a kernel edit does not recompile it).
pub fn kernels() -> &'static kernels::Kernels {
    kernels::linked()
}
