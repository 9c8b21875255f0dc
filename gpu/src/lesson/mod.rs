//! The lesson's kernels, the learner's to read and edit: the two-launch and
//! cooperative sums with `probe_cooperative` and `coalesced_demo`
//! (`lesson.rs`), the block sum they share (`sum.rs`), the exercise's kernel
//! (`exercise.rs`), and the sums with a cluster stage (`cluster.rs`, sm_90).
//! Everything else the program launches (the fast sums, the timing loops,
//! the kernels that make a mistake on purpose) is in `crate::kernels`,
//! which re-exports these too.

pub(crate) mod cluster;
mod exercise;
// `lesson/lesson.rs`: the file a learner is pointed to keeps the lesson's name.
#[allow(clippy::module_inception)]
mod lesson;
pub(crate) mod sum;

pub use cluster::*;
pub use exercise::*;
pub use lesson::*;
pub use sum::{block_sum, one_f32_per_tile};
