//! The lesson's kernels and a cooperative-groups API, in Rust.
//!
//! Built twice from one source:
//! - for `nvptx64-nvidia-cuda` by `host/build.rs`: the kernels become a PTX module;
//! - for the host as an ordinary library: each kernel's launch definition
//!   ([`kernels`]), the pure arithmetic ([`cg::barrier`], [`cg::lanes`]), and
//!   the kernels themselves, which the emulated GPU in [`emu`] runs on the CPU.
//!
//! Layers: `arch` holds one small function per PTX instruction (the only
//! inline assembly) and, on the host, the emulator's version of each; [`cg`]
//! (cooperative groups) and [`mem`] (kernel parameters and shared memory) are
//! the safe surface built on them; the kernels in [`kernels`] call only those.
#![cfg_attr(target_arch = "nvptx64", no_std)]
// A kernel is an `unsafe fn`, but each access inside it still says why it is
// in bounds: a read or write outside `unsafe { }` is an error, not a warning.
#![deny(unsafe_op_in_unsafe_fn)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(abi_gpu_kernel, stdarch_nvptx, asm_experimental_arch, core_intrinsics, gpu_intrinsics, gpu_launch_sized_workgroup_mem)
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

// `#[kernel]` names this crate `::gpu`, inside it as outside.
extern crate self as gpu;

mod arch;
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

pub use gpu_macros::kernel;
