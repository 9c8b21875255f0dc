//! The ground the lesson's kernels stand on: a cooperative-groups API in
//! Rust ([`cg`]), kernel parameters and shared memory ([`mem`]), the
//! instructions under them (`arch`), and an emulated GPU that runs the same
//! kernels on the CPU ([`emu`]).
//!
//! The kernels themselves are in the `gpu` crate, which re-exports all of
//! this; they are apart so that editing a kernel rebuilds only the kernels'
//! crate and the program, never this crate or the host library, which
//! depend on it alone. This crate names no kernel: each `#[kernel]` adds
//! itself to a list the linker gathers when it links the program
//! ([`kernels::registered`]), where the host finds it by name.
//!
//! Layers: `arch` holds one small function per PTX instruction (LLVM's
//! convergent intrinsics for the collectives, inline assembly for the rest)
//! and, on the host, the emulator's version of each; [`cg`]
//! and [`mem`] are the safe surface built on them; kernels call only those.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![deny(unsafe_op_in_unsafe_fn)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(stdarch_nvptx, asm_experimental_arch, link_llvm_intrinsics, abi_unadjusted, core_intrinsics, gpu_intrinsics, gpu_launch_sized_workgroup_mem)
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

#[doc(hidden)]
pub mod arch;
pub mod cg;
#[cfg(not(target_arch = "nvptx64"))]
pub mod emu;
pub mod kernels;
pub mod mem;
pub mod trace;

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    arch::trap()
}
