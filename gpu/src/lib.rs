//! The lesson's kernels and a cooperative-groups API, in Rust.
//!
//! Built twice from one source:
//! - for `nvptx64-nvidia-cuda` by `host/build.rs`: the kernels become a PTX module;
//! - for the host as an ordinary library: the host reads the kernel definitions
//!   ([`kernels`]) and the pure arithmetic ([`cg::barrier`], [`cg::lanes`]) from
//!   here, and `cargo test` runs their unit tests on the CPU.
//!
//! Kernel bodies call only [`cg`] and the intrinsics in `arch`; all inline
//! assembly lives in `arch`'s PTX half. Its other half runs the same kernels on
//! the CPU, on the emulated device in [`emu`].
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        abi_gpu_kernel,
        stdarch_nvptx,
        asm_experimental_arch,
        core_intrinsics,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem
    )
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

mod arch;
pub mod cg;
#[cfg(not(target_arch = "nvptx64"))]
pub mod emu;
pub mod kernels;

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    arch::trap()
}
