//! The lesson's kernels, in Rust, compiled to PTX by rustc (the crate apart
//! `gpu/ptx`, with `cg-builder`) and, on the host, to functions the
//! emulated GPU runs.
//!
//! This crate is what a learner edits: [`kernels`]. Everything the kernels
//! are written in (the cooperative-groups API [`cg`], [`mem`], `#[kernel]`)
//! lives in the `cg-kernel` library, and the emulator [`emu`] in
//! `cg-emulator`; both are re-exported here under the same names, so that a kernel edit rebuilds only this crate
//! and the program.
//! Each `#[kernel]` registers itself, and `gpu/ptx` this crate's PTX, in lists the
//! linker gathers (`cg_kernel::kernels::registered`): the host finds them by
//! name, and no file lists the kernels by hand.
#![cfg_attr(target_arch = "nvptx64", no_std)]
// A kernel is an `unsafe fn`, but each access inside it still says why it is
// in bounds: a read or write outside `unsafe { }` is an error, not a warning.
#![feature(const_trait_impl)]
#![deny(unsafe_op_in_unsafe_fn)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel))]

#[cfg(not(target_arch = "nvptx64"))]
pub use cg_emulator as emu;
pub use cg_kernel::{cg, clock, mem, trace};

pub mod kernels;
pub mod lesson;

/// Declares a GPU kernel: the C++ `__global__` ([`cg_kernel::kernel`] says how).
#[doc(inline)]
pub use cg_kernel::kernel;
