//! The host side of the cooperative-groups lesson: opens the GPU, loads the
//! PTX that `build.rs` compiled from `gpu/`, sizes grids, launches, checks and
//! times.
//!
//! Layers, each one job: [`sizing`] (pure arithmetic), [`device`], [`launch`]
//! (the only `unsafe` code), then [`sums`], [`lesson`] and [`exercise`] in safe Rust,
//! [`report`] for output, and `main` for the command line.

pub mod bench;
pub mod cli;
pub mod device;
pub mod error;
pub mod exercise;
pub mod launch;
pub mod lesson;
pub mod reference;
pub mod report;
pub mod sizing;
pub mod sums;
pub mod timing;

/// The `gpu` crate compiled to PTX by `build.rs`.
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/gpu.ptx"));
