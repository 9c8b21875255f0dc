//! Compiles the `gpu` crate (`..`) to PTX with `cg-builder` (rustc's
//! `nvptx64-nvidia-cuda` target): the module the lesson runs, a traced
//! twin for `cg-lesson trace` on a GPU (feature `traced`), and an sm_90 module that adds the
//! `#[kernel(cluster)]` kernels, which `src/lib.rs` registers
//! (`cg_kernel::ptx!()`). Where `ptxas` is found (`PTXAS`, the one
//! `scripts/test.sh` installs, or `PATH`), the builder asks it each
//! kernel's registers on the lesson's T4 (sm_75), for the emulated occupancy.

fn main() {
    println!("cargo:rerun-if-env-changed=GPU_PTX_ARCH");
    let arch = std::env::var("GPU_PTX_ARCH").unwrap_or_else(|_| cg_builder::DEFAULT_ARCH.to_string());
    cg_builder::Builder::new()
        .kernels_of("..", "gpu")
        .arch(arch)
        .forward_feature("barrier-timeout")
        .forward_feature("probes")
        // The traced twin only where asked for (`cg-lesson trace` on a GPU):
        // a third fat-LTO build of the crate on every kernel edit otherwise.
        .traced(std::env::var_os("CARGO_FEATURE_TRACED").is_some())
        .sm90(true)
        .ptxas("../../target/ptxas-pkg/nvidia/cuda_nvcc/bin/ptxas")
        .toolchain("nightly-2026-05-20")
        // The launch-cost bench's empty cooperative kernel, and the mutant
        // the tests launch to show what a missing grid.sync() does.
        .cooperative_without_grid_sync("empty_cooperative")
        .cooperative_without_grid_sync("mutant_without_grid_sync")
        .build();
}
