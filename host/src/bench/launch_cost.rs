//! What one launch costs the host: many back-to-back launches of an empty
//! kernel, timed on the host, through this program's launch path and through
//! cudarc's own launch builder (the C++ program measures the runtime's).

use crate::device::Gpu;
use crate::error::{Error, Result};
use cudarc::driver::{CudaContext, LaunchConfig};
use gpu::kernels::{EMPTY, EMPTY_COOPERATIVE};
use serde::Serialize;
use std::time::Instant;

/// Launches per measurement.
pub const LAUNCHES: usize = 10_000;

/// One way of launching, measured.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LaunchCost {
    /// `rust`, `cudarc` or `cpp`, and the call.
    pub path: String,
    pub cooperative: bool,
    pub blocks: u32,
    pub launches: usize,
    /// Host time per launch call, from the first call to the last return.
    pub submit_us: f64,
    /// Host time per launch until the GPU had run them all.
    pub total_us: f64,
}

fn measure(path: &str, cooperative: bool, blocks: u32, mut launch: impl FnMut() -> Result<()>, finish: impl Fn() -> Result<()>) -> Result<LaunchCost> {
    for _ in 0..100 {
        launch()?;
    }
    finish()?;
    let start = Instant::now();
    for _ in 0..LAUNCHES {
        launch()?;
    }
    let submitted = start.elapsed();
    finish()?;
    let total = start.elapsed();
    let per = |d: std::time::Duration| d.as_secs_f64() * 1e6 / LAUNCHES as f64;
    Ok(LaunchCost { path: path.to_string(), cooperative, blocks, launches: LAUNCHES, submit_us: per(submitted), total_us: per(total) })
}

/// This program's launch path, ordinary and cooperative, at 1 block and at the
/// cooperative maximum for blocks of `threads_per_block`.
pub fn rust(gpu: &Gpu, threads_per_block: u32) -> Result<Vec<LaunchCost>> {
    let ordinary = gpu.kernel(&EMPTY)?;
    let cooperative = gpu.cooperative_kernel(&EMPTY_COOPERATIVE)?;
    let max = cooperative.limits(threads_per_block)?.capacity();
    let mut out = Vec::new();
    for blocks in [1, max] {
        out.push(measure("rust: cuLaunchKernelEx", false, blocks, || ordinary.launch(blocks, threads_per_block), || gpu.finish())?);
        let launch = cooperative.configure(blocks, threads_per_block)?;
        out.push(measure("rust: cuLaunchKernelEx", true, blocks, || launch.launch(), || gpu.finish())?);
    }
    Ok(out)
}

/// cudarc's launch builder on its own context (the same device and PTX).
pub fn cudarc(ordinal: usize, threads_per_block: u32, blocks_max: u32) -> Result<Vec<LaunchCost>> {
    let ctx = CudaContext::new(ordinal).map_err(Error::driver("cuDevicePrimaryCtxRetain"))?;
    let stream = ctx.default_stream();
    let module = ctx.load_module(cudarc::nvrtc::Ptx::from_src(crate::PTX)).map_err(Error::driver("cuModuleLoadData"))?;
    let f = module.load_function(EMPTY.name()).map_err(Error::driver("cuModuleGetFunction"))?;
    let coop = module.load_function(EMPTY_COOPERATIVE.name()).map_err(Error::driver("cuModuleGetFunction"))?;
    let finish = || stream.synchronize().map_err(Error::driver("cuStreamSynchronize"));
    let mut out = Vec::new();
    for blocks in [1, blocks_max] {
        let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (threads_per_block, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: the empty kernels take no parameters and touch no memory.
        out.push(measure("cudarc: launch_builder().launch", false, blocks, || unsafe { stream.launch_builder(&f).launch(cfg) }.map(|_| ()).map_err(Error::driver("cuLaunchKernel")), finish)?);
        // SAFETY: as above; the grid is at most the cooperative maximum.
        out.push(measure(
            "cudarc: launch_builder().launch_cooperative",
            true,
            blocks,
            || unsafe { stream.launch_builder(&coop).launch_cooperative(cfg) }.map(|_| ()).map_err(Error::driver("cuLaunchCooperativeKernel")),
            finish,
        )?);
    }
    Ok(out)
}
