//! Loading and launching kernels: the only layer with `unsafe` code.
//!
//! A kernel is loaded through its definition in `gpu::kernels`, and the
//! definition's launch contract picks the host type:
//! - [`Kernel`] (`NoGridSync`): ordinary launches, any grid;
//! - [`CooperativeKernel`] (`GridSync`, the kernel calls `grid.sync()`): no
//!   ordinary launch at all, and a cooperative launch only of a grid that
//!   [`CooperativeKernel::configure`] has checked against that kernel's own
//!   occupancy, so a grid barrier that cannot complete is never launched.
//!
//! ```compile_fail,E0599
//! # fn f(gpu: &host::device::Gpu) -> host::error::Result<()> {
//! // A grid-synchronizing kernel has no ordinary launch: this does not compile.
//! let kernel = gpu.cooperative_kernel(&gpu::kernels::REDUCE_COOPERATIVE_GRID)?;
//! kernel.launch(1056, 256)?;
//! # Ok(()) }
//! ```
//!
//! ```compile_fail,E0308
//! # fn f(gpu: &host::device::Gpu) -> host::error::Result<()> {
//! // Nor can it be loaded as an ordinary kernel.
//! let kernel = gpu.kernel(&gpu::kernels::REDUCE_COOPERATIVE_GRID)?;
//! # Ok(()) }
//! ```
//!
//! The way that compiles: size the grid from the kernel, then launch.
//! ```no_run
//! # fn f(gpu: &host::device::Gpu, input: &host::launch::DeviceInput) -> host::error::Result<()> {
//! let kernel = gpu.cooperative_kernel(&gpu::kernels::REDUCE_COOPERATIVE_GRID)?;
//! let launch = kernel.configure(kernel.limits(256)?.capacity(), 256)?;
//! let (mut partials, mut total) = (gpu.zeros(launch.blocks() as usize)?, gpu.zeros(1)?);
//! launch.sum(input, &mut partials, &mut total)?;
//! # Ok(()) }
//! ```

mod args;
mod calls;
mod input;
pub mod raw;

pub use calls::{CoalescedRecord, Probe};
pub use input::{DeviceInput, Input, Window, device_bytes};

use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::sizing::{BlockResources, Limits, check_block};
use args::{Args, param_pointers};
use cudarc::driver::sys::CUfunction_attribute as FnAttr;
use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, DeviceRepr, ValidAsZeroBits};
use gpu::kernels::{GridSync, KernelDef, NoGridSync};
use raw::Shape;
use std::marker::PhantomData;
use std::sync::Arc;

/// A function loaded from the embedded PTX, with its definition's facts.
struct Loaded<'g> {
    gpu: &'g Gpu,
    func: CudaFunction,
    name: &'static str,
    shared_bytes: fn(u32) -> u32,
    overread: fn(u32) -> usize,
    /// The last [`Loaded::limits`] answer, so a launch in a timed loop asks the driver nothing.
    limits_cache: std::cell::RefCell<Option<Limits>>,
}

impl<'g> Loaded<'g> {
    fn load<P, C>(gpu: &'g Gpu, def: &KernelDef<P, C>) -> Result<Self> {
        let func = gpu.module()?.load_function(def.name).map_err(Error::driver("cuModuleGetFunction"))?;
        Ok(Loaded { gpu, func, name: def.name, shared_bytes: def.shared_bytes, overread: def.overread, limits_cache: Default::default() })
    }

    fn limits(&self, threads: u32) -> Result<Limits> {
        if let Some(limits) = self.limits_cache.borrow().as_ref().filter(|l| l.block.threads == threads) {
            return Ok(limits.clone());
        }
        let limits = self.query_limits(threads)?;
        *self.limits_cache.borrow_mut() = Some(limits.clone());
        Ok(limits)
    }

    fn query_limits(&self, threads: u32) -> Result<Limits> {
        check_block(threads, self.gpu.info.max_threads_per_block)?;
        let shared = (self.shared_bytes)(threads);
        let blocks_per_sm = self
            .func
            .occupancy_max_active_blocks_per_multiprocessor(threads, shared as usize, None)
            .map_err(Error::driver("cuOccupancyMaxActiveBlocksPerMultiprocessor"))?;
        let f = self.func.cu_function();
        Ok(Limits {
            blocks_per_sm,
            sms: self.gpu.info.sms,
            block: BlockResources {
                threads,
                registers_per_thread: raw::function_attribute(f, FnAttr::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
                shared_bytes: raw::function_attribute(f, FnAttr::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)? + shared,
            },
            sm: self.gpu.info.sm,
        })
    }

    fn shape(&self, blocks: u64, threads: u32) -> Result<Shape> {
        check_block(threads, self.gpu.info.max_threads_per_block)?;
        if blocks == 0 {
            return Err(Error::EmptyGrid { kernel: self.name });
        }
        let blocks = u32::try_from(blocks).map_err(|_| Error::Driver {
            call: "cuLaunchKernelEx",
            error: cudarc::driver::DriverError(cudarc::driver::sys::CUresult::CUDA_ERROR_INVALID_VALUE),
        })?;
        Ok(Shape { blocks, threads, shared_bytes: (self.shared_bytes)(threads) })
    }

    /// # Safety
    /// `args` satisfy the kernel's contract for `shape`.
    unsafe fn launch<'a, P>(&'a self, shape: Shape, cooperative: bool, args: impl Args<'a, P>) -> Result<()> {
        let stream = &self.gpu.stream;
        self.gpu.last_kernel.set(self.name);
        let (mut bits, guards) = args.raw(stream);
        let mut params = param_pointers(&mut bits);
        // SAFETY: `params` has one value per parameter (the `Args` impl follows
        // the definition's parameter tuple); the caller vouches for the contract.
        let result = unsafe { raw::launch_kernel_ex(self.func.cu_function(), stream.cu_stream(), shape, cooperative, &mut params) };
        drop(guards);
        result.map_err(Error::driver(if cooperative { "cooperative cuLaunchKernelEx" } else { "cuLaunchKernelEx" }))
    }
}

/// A kernel with no grid barrier (`NoGridSync`): launched the ordinary way.
pub struct Kernel<'g, P> {
    loaded: Loaded<'g>,
    _params: PhantomData<P>,
}

/// A kernel that calls `grid.sync()` (`GridSync`). It has no ordinary launch;
/// its only launch is [`CooperativeLaunch`], made by [`configure`](Self::configure).
pub struct CooperativeKernel<'g, P> {
    loaded: Loaded<'g>,
    _params: PhantomData<P>,
}

/// A cooperative launch of one kernel whose grid fits on the device at once.
pub struct CooperativeLaunch<'k, 'g, P> {
    kernel: &'k CooperativeKernel<'g, P>,
    shape: Shape,
}

impl Gpu {
    /// Loads the embedded PTX module once per device.
    fn module(&self) -> Result<&Arc<CudaModule>> {
        if let Some(m) = self.module.get() {
            return Ok(m);
        }
        let m = self
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_src(crate::PTX))
            .map_err(Error::driver("cuModuleLoadData"))?;
        #[cfg(feature = "barrier-timeout")]
        {
            let report = raw::HostMapped::new()?;
            let mut slot = m.get_global("GRID_BARRIER_REPORT", &self.stream).map_err(Error::driver("cuModuleGetGlobal"))?;
            self.stream
                .memcpy_htod(&report.device_address().to_ne_bytes(), &mut slot)
                .map_err(Error::driver("cuMemcpyHtoD"))?;
            let _ = self.barrier_report.set(report);
        }
        Ok(self.module.get_or_init(|| m))
    }

    /// Loads a kernel that has no grid barrier.
    pub fn kernel<P>(&self, def: &KernelDef<P, NoGridSync>) -> Result<Kernel<'_, P>> {
        Ok(Kernel { loaded: Loaded::load(self, def)?, _params: PhantomData })
    }

    /// Loads a kernel that calls `grid.sync()`.
    pub fn cooperative_kernel<P>(&self, def: &KernelDef<P, GridSync>) -> Result<CooperativeKernel<'_, P>> {
        Ok(CooperativeKernel { loaded: Loaded::load(self, def)?, _params: PhantomData })
    }

    /// A zeroed device buffer.
    pub fn zeros<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> Result<CudaSlice<T>> {
        self.stream.alloc_zeros(len.max(1)).map_err(Error::driver("cuMemAllocAsync"))
    }

    /// Copies `src` into `dst` on the device (`cuMemcpyDtoDAsync`).
    pub fn copy(&self, src: &cudarc::driver::CudaView<'_, f32>, dst: &mut CudaSlice<f32>) -> Result<()> {
        self.stream.memcpy_dtod(src, dst).map_err(Error::driver("cuMemcpyDtoD"))
    }

    /// Copies a device buffer to the host, once the work before it is done.
    pub fn read<T: DeviceRepr + Default + Clone>(&self, buffer: &CudaSlice<T>) -> Result<Vec<T>> {
        self.finish()?;
        self.stream.clone_dtoh(buffer).map_err(Error::driver("cuMemcpyDtoH"))
    }

    /// Waits, at most the timeout, for everything queued so far.
    pub fn finish(&self) -> Result<()> {
        let event = self.ctx.new_event(None).map_err(Error::driver("cuEventCreate"))?;
        event.record(&self.stream).map_err(Error::driver("cuEventRecord"))?;
        self.wait_for(&event)
    }

    /// Waits, at most the timeout, for `event`; a failure or a timeout names
    /// the last kernel launched. Polls without sleeping for the first
    /// millisecond, so back-to-back timed runs leave the GPU no idle gaps
    /// (as `cudaEventSynchronize` would), then sleeps between polls.
    pub fn wait_for(&self, event: &cudarc::driver::CudaEvent) -> Result<()> {
        let start = std::time::Instant::now();
        let spin = std::time::Duration::from_millis(1);
        loop {
            match event.try_is_complete() {
                Ok(true) => return Ok(()),
                Ok(false) if start.elapsed() > self.timeout.get() => {
                    return Err(Error::Timeout { kernel: self.last_kernel.get(), seconds: self.timeout.get().as_secs_f64() });
                }
                Ok(false) if start.elapsed() < spin => std::hint::spin_loop(),
                Ok(false) => std::thread::sleep(std::time::Duration::from_micros(200)),
                Err(error) => return Err(self.kernel_failure(error)),
            }
        }
    }

    /// The error for a kernel that failed while running: the diagnosing
    /// barrier's report where there is one.
    fn kernel_failure(&self, error: cudarc::driver::DriverError) -> Error {
        let kernel = self.last_kernel.get();
        #[cfg(feature = "barrier-timeout")]
        if let Some(report) = self.barrier_report.get().and_then(|r| gpu::cg::barrier::Report::from_words(r.words())) {
            return Error::GridBarrierTimedOut { kernel, report };
        }
        Error::KernelFailed { kernel, error }
    }

    /// Fills a device buffer with `value` (to poison an output before a run).
    pub fn fill<T: DeviceRepr + Clone>(&self, buffer: &mut CudaSlice<T>, value: T) -> Result<()> {
        // A copy from pageable memory waits for the stream: bound that wait first.
        self.finish()?;
        let host = vec![value; buffer.len()];
        self.stream.memcpy_htod(&host, buffer).map_err(Error::driver("cuMemcpyHtoD"))
    }

}

impl<'g, P> Kernel<'g, P> {
    /// The PTX entry name.
    pub fn name(&self) -> &'static str {
        self.loaded.name
    }

    /// Occupancy and resources for blocks of `threads`.
    pub fn limits(&self, threads: u32) -> Result<Limits> {
        self.loaded.limits(threads)
    }
}

impl<'g, P> CooperativeKernel<'g, P> {
    /// The PTX entry name.
    pub fn name(&self) -> &'static str {
        self.loaded.name
    }

    /// This kernel's cooperative limit for blocks of `threads`: the occupancy
    /// API asked about this kernel, this block size and its dynamic shared memory.
    pub fn limits(&self, threads: u32) -> Result<Limits> {
        self.loaded.limits(threads)
    }

    /// A cooperative launch of `blocks` blocks of `threads`, refused unless
    /// every block can be resident at once.
    pub fn configure(&self, blocks: u64, threads: u32) -> Result<CooperativeLaunch<'_, 'g, P>> {
        let limits = self.limits(threads)?;
        if blocks > limits.capacity() {
            return Err(Error::CooperativeGridTooLarge { kernel: self.loaded.name, requested: blocks, limits });
        }
        Ok(CooperativeLaunch { kernel: self, shape: self.loaded.shape(blocks, threads)? })
    }
}

impl<P> CooperativeLaunch<'_, '_, P> {
    /// Blocks in the grid.
    pub fn blocks(&self) -> u32 {
        self.shape.blocks
    }

    /// Threads per block.
    pub fn threads(&self) -> u32 {
        self.shape.threads
    }
}
