//! What one launch costs the host, two ways, through this program's launch
//! path and through cudarc's own launch builder (the C++ program measures
//! the runtime's the same two ways):
//! - **held**: [`HELD_LAUNCHES`] launches of an empty kernel queued while
//!   `hold_for` keeps the GPU busy, so nothing waits on the GPU and the time
//!   is the host's own cost per call;
//! - **back to back**: [`LAUNCHES`] launches on an idle GPU, timed to the
//!   last call's return and until the GPU has run them all; once the queue
//!   fills, this is the GPU's rate of launches as much as the host's.

use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::launch::prelude::*;
use cudarc::driver::{CudaContext, LaunchConfig};
use serde::Serialize;
use std::time::{Duration, Instant};

/// Launches per back-to-back measurement.
pub const LAUNCHES: usize = 10_000;

/// Launches per held measurement: few enough for the queue to take them all.
pub const HELD_LAUNCHES: usize = 256;

/// How long the GPU is held for each held measurement.
const HOLD: Duration = Duration::from_millis(50);

/// Held measurements per call; the median is reported.
const HELD_REPEATS: usize = 7;

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
    /// Host time per launch call while the GPU is held, the median of
    /// `HELD_REPEATS`; NaN if the queue filled before the hold ended.
    pub held_us: f64,
    /// GPU time per launch, [`GPU_LAUNCHES`] launches queued behind a hold
    /// between two events, the median of `HELD_REPEATS`: what a launch
    /// costs the GPU itself, with no host in the way.
    pub gpu_us: f64,
}

/// Launches between the two events of a GPU-time measurement.
pub const GPU_LAUNCHES: usize = 64;

/// The device whose launches are timed behind a hold.
struct Holder<'g> {
    gpu: &'g Gpu,
}

impl Holder<'_> {
    /// Host time per call of `launch`, made [`HELD_LAUNCHES`] times behind a hold.
    fn held(&self, launch: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        let mut samples = Vec::with_capacity(HELD_REPEATS);
        for _ in 0..HELD_REPEATS {
            crate::timing::hold(self.gpu, HOLD)?;
            let start = Instant::now();
            for _ in 0..HELD_LAUNCHES {
                launch()?;
            }
            let took = start.elapsed();
            self.gpu.finish()?;
            // Past half the hold, the GPU may have started on them.
            samples.push(if took * 2 > HOLD { f64::NAN } else { took.as_secs_f64() * 1e6 / HELD_LAUNCHES as f64 });
        }
        samples.sort_by(f64::total_cmp);
        Ok(samples[HELD_REPEATS / 2])
    }

    /// GPU time per call of `launch`, [`GPU_LAUNCHES`] calls between two
    /// events, timed as the sums are (queued behind a hold).
    fn gpu_time(&self, launch: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        let mut ms = self.gpu.time_queued(HELD_REPEATS, &mut |_| ((0..GPU_LAUNCHES).try_for_each(|_| launch())).map_err(Into::into))?;
        ms.sort_by(f64::total_cmp);
        Ok(ms[HELD_REPEATS / 2] * 1e3 / GPU_LAUNCHES as f64)
    }
}

fn measure(
    holder: &Holder,
    path: &str,
    cooperative: bool,
    blocks: u32,
    mut launch: impl FnMut() -> Result<()>,
    finish: impl Fn() -> Result<()>,
) -> Result<LaunchCost> {
    for _ in 0..100 {
        launch()?;
    }
    finish()?;
    let held_us = holder.held(&mut launch)?;
    let gpu_us = holder.gpu_time(&mut launch)?;
    let start = Instant::now();
    for _ in 0..LAUNCHES {
        launch()?;
    }
    let submitted = start.elapsed();
    finish()?;
    let total = start.elapsed();
    let per = |d: std::time::Duration| d.as_secs_f64() * 1e6 / LAUNCHES as f64;
    Ok(LaunchCost { path: path.to_string(), cooperative, blocks, launches: LAUNCHES, submit_us: per(submitted), total_us: per(total), held_us, gpu_us })
}

/// This program's launch path, ordinary and cooperative, at 1 block and at the
/// cooperative maximum for blocks of `threads_per_block`.
pub fn rust(gpu: &Gpu, threads_per_block: u32) -> Result<Vec<LaunchCost>> {
    let holder = Holder { gpu };
    let ordinary = gpu.kernel(&crate::kernels().empty)?;
    let cooperative = gpu.cooperative_kernel(&crate::kernels().empty_cooperative)?;
    let max = cooperative.limits(threads_per_block)?.capacity();
    let mut out = Vec::new();
    for blocks in [1, max] {
        out.push(measure(&holder, "rust: cuLaunchKernelEx", false, blocks, || ordinary.launch_empty(blocks, threads_per_block), || Ok(gpu.finish()?))?);
        let launch = cooperative.configure(blocks, threads_per_block)?;
        out.push(measure(&holder, "rust: cuLaunchKernelEx", true, blocks, || launch.launch_empty(), || Ok(gpu.finish()?))?);
    }
    Ok(out)
}

/// cudarc's launch builder on its own handle to the device's primary context
/// (the same context, default stream and PTX as `gpu`'s).
pub fn cudarc(gpu: &Gpu, threads_per_block: u32, blocks_max: u32) -> Result<Vec<LaunchCost>> {
    let holder = Holder { gpu };
    let ctx = CudaContext::new(gpu.info.ordinal).map_err(Error::driver("cuDevicePrimaryCtxRetain"))?;
    let stream = ctx.default_stream();
    let module = ctx.load_module(cudarc::nvrtc::Ptx::from_src(crate::kernels().ptx.plain)).map_err(Error::driver("cuModuleLoadData"))?;
    let f = module.load_function(crate::kernels().empty.name()).map_err(Error::driver("cuModuleGetFunction"))?;
    let coop = module.load_function(crate::kernels().empty_cooperative.name()).map_err(Error::driver("cuModuleGetFunction"))?;
    let finish = || stream.synchronize().map_err(Error::driver("cuStreamSynchronize"));
    let mut out = Vec::new();
    for blocks in [1, blocks_max] {
        let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (threads_per_block, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: the empty kernels take no parameters and touch no memory.
        out.push(measure(
            &holder,
            "cudarc: launch_builder().launch",
            false,
            blocks,
            || unsafe { stream.launch_builder(&f).launch(cfg) }.map(|_| ()).map_err(Error::driver("cuLaunchKernel")),
            finish,
        )?);
        // SAFETY: as above; the grid is at most the cooperative maximum.
        out.push(measure(
            &holder,
            "cudarc: launch_builder().launch_cooperative",
            true,
            blocks,
            || unsafe { stream.launch_builder(&coop).launch_cooperative(cfg) }.map(|_| ()).map_err(Error::driver("cuLaunchCooperativeKernel")),
            finish,
        )?);
    }
    Ok(out)
}
