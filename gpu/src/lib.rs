//! The lesson's kernels, in Rust, compiled to PTX by rustc (`build.rs`) and,
//! on the host, to functions the emulated GPU runs.
//!
//! This crate is what a learner edits: [`kernels`]. Everything the kernels
//! are written in (the cooperative-groups API [`cg`], [`mem`], the emulator
//! [`emu`]) lives in `gpu-core` and is re-exported here under the same
//! names, so that a kernel edit rebuilds only this crate and the program.
//! The host receives the kernels and their PTX as one value, [`KERNELS`].
#![cfg_attr(target_arch = "nvptx64", no_std)]
// A kernel is an `unsafe fn`, but each access inside it still says why it is
// in bounds: a read or write outside `unsafe { }` is an error, not a warning.
#![deny(unsafe_op_in_unsafe_fn)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel))]

// `#[kernel]` names this crate `::gpu`, inside it as outside.
extern crate self as gpu;

use gpu_core::arch;
#[cfg(not(target_arch = "nvptx64"))]
pub use gpu_core::emu;
pub use gpu_core::{cg, mem, trace};

pub mod kernels;

#[cfg(not(target_arch = "nvptx64"))]
pub use kernels::KERNELS;

pub use gpu_macros::kernel;

/// [`KERNELS`] under the name `gpu_core::kernels::linked` finds it by.
#[cfg(not(target_arch = "nvptx64"))]
#[unsafe(export_name = "gpu_lesson_kernels")]
pub static LINKED_KERNELS: kernels::Kernels = KERNELS;
