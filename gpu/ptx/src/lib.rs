//! The lesson's kernels (the `gpu` crate) as PTX: this crate's `build.rs`
//! compiles `gpu/` for the GPU with `cg-builder`, and this file registers
//! the modules under the `gpu` crate's name, where the launcher looks for
//! them (`cg_kernel::kernels::ptx_of("gpu")`).
//!
//! Why a crate apart: a crate with a build script compiles only after the
//! script ends, so with the GPU build in the `gpu` crate's own build script a kernel edit waited
//! for the PTX, then for the kernels' host build (and every new PTX made
//! that whole crate compile again, as the PTX is a constant in it). Apart,
//! the two builds run side by side and the `gpu` crate compiles only what
//! the edit changed. A kernel crate of a learner's own needs none of this:
//! its `build.rs` and `cg_kernel::ptx!()` are enough
//! (`docs/your-own-kernel.md`).
#![no_std]

cg_kernel::ptx!();
