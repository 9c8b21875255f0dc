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
mod buffer;
mod calls;
mod input;
pub mod raw;

pub use buffer::{Buffer, View};
pub use calls::{CoalescedRecord, Probe};
pub use input::{DeviceInput, Input, Window, device_bytes};

use crate::device::{Backend, Gpu};
use crate::error::{Error, Result};
use crate::sizing::{BlockResources, Limits, check_block};
use args::{Args, param_pointers};
use buffer::{Mem, ViewMem};
use cudarc::driver::sys::CUfunction_attribute as FnAttr;
use cudarc::driver::{CudaFunction, CudaModule, DeviceRepr, ValidAsZeroBits};
use gpu::kernels::{GridSync, KernelDef, NoGridSync, Params};
use raw::Shape;
use std::sync::Arc;

/// A kernel ready to launch on one device, with its definition's facts: the
/// CUDA function on a GPU, the Rust function itself on the emulator.
struct Loaded<'g, P: Params> {
    gpu: &'g Gpu,
    func: Option<CudaFunction>,
    entry: P::Entry,
    name: &'static str,
    shared_bytes: fn(u32) -> u32,
    overread: fn(u32) -> usize,
    /// The last [`Loaded::limits`] answer, so a launch in a timed loop asks the driver nothing.
    limits_cache: std::cell::RefCell<Option<Limits>>,
}

impl<'g, P: Params> Loaded<'g, P> {
    fn load<C>(gpu: &'g Gpu, module: Option<&Module>, def: &KernelDef<P, C>) -> Result<Self> {
        let func = match (&gpu.backend, module) {
            (Backend::Cuda(_), Some(m)) => Some(m.0.load_function(def.name).map_err(Error::driver("cuModuleGetFunction"))?),
            (Backend::Cuda(_), None) => Some(gpu.module()?.load_function(def.name).map_err(Error::driver("cuModuleGetFunction"))?),
            (Backend::Emulated(_), _) => None,
        };
        Ok(Loaded {
            gpu,
            func,
            entry: def.entry,
            name: def.name,
            shared_bytes: def.shared_bytes,
            overread: def.overread,
            limits_cache: Default::default(),
        })
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
        let (blocks_per_sm, registers_per_thread, static_shared) = match (&self.gpu.backend, &self.func) {
            (Backend::Cuda(_), Some(func)) => {
                let blocks = func
                    .occupancy_max_active_blocks_per_multiprocessor(threads, shared as usize, None)
                    .map_err(Error::driver("cuOccupancyMaxActiveBlocksPerMultiprocessor"))?;
                let f = func.cu_function();
                (
                    blocks,
                    raw::function_attribute(f, FnAttr::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
                    raw::function_attribute(f, FnAttr::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
                )
            }
            (Backend::Emulated(device), _) => (device.blocks_per_sm(threads, shared), 0, 0),
            (Backend::Cuda(_), None) => unreachable!("a CUDA kernel is loaded with its function"),
        };
        Ok(Limits {
            blocks_per_sm,
            sms: self.gpu.info.sms,
            block: BlockResources { threads, registers_per_thread, shared_bytes: static_shared + shared },
            sm: self.gpu.info.sm,
        })
    }

    fn shape(&self, blocks: u64, threads: u32) -> Result<Shape> {
        check_block(threads, self.gpu.info.max_threads_per_block)?;
        if blocks == 0 {
            return Err(Error::EmptyGrid { kernel: self.name });
        }
        let blocks = u32::try_from(blocks).map_err(|_| Error::GridTooLarge { kernel: self.name, blocks })?;
        Ok(Shape { blocks, threads, shared_bytes: (self.shared_bytes)(threads) })
    }

    /// # Safety
    /// `args` satisfy the kernel's contract for `shape`.
    unsafe fn launch<'a>(&'a self, shape: Shape, cooperative: bool, args: impl Args<'a, P>) -> Result<()> {
        self.gpu.last_kernel.set(self.name);
        let (mut bits, guards) = args.raw(self.gpu);
        let result = match (&self.gpu.backend, &self.func) {
            (Backend::Cuda(cuda), Some(func)) => {
                let mut params = param_pointers(&mut bits);
                // SAFETY: `params` has one value per parameter (the `Args` impl
                // follows the definition's parameter tuple); the caller vouches
                // for the contract.
                unsafe { raw::launch_kernel_ex(func.cu_function(), cuda.stream.cu_stream(), shape, cooperative, &mut params) }
                    .map_err(Error::driver(if cooperative { "cooperative cuLaunchKernelEx" } else { "cuLaunchKernelEx" }))
            }
            (Backend::Emulated(device), _) => {
                let entry = self.entry;
                // SAFETY: as above; the emulator calls the kernel with these values.
                let kernel = || unsafe { P::call(entry, &bits) };
                device.launch(shape.blocks, shape.threads, shape.shared_bytes, cooperative, &kernel).map_err(|fault| Error::Emulated { kernel: self.name, fault })
            }
            (Backend::Cuda(_), None) => unreachable!("a CUDA kernel is loaded with its function"),
        };
        drop(guards);
        result
    }
}

/// A CUDA module from a file (see [`Gpu::load_module_file`]).
pub struct Module(Arc<CudaModule>);

/// A kernel with no grid barrier (`NoGridSync`): launched the ordinary way.
pub struct Kernel<'g, P: Params> {
    loaded: Loaded<'g, P>,
}

/// A kernel that calls `grid.sync()` (`GridSync`). It has no ordinary launch;
/// its only launch is [`CooperativeLaunch`], made by [`configure`](Self::configure).
pub struct CooperativeKernel<'g, P: Params> {
    loaded: Loaded<'g, P>,
}

/// A cooperative launch of one kernel whose grid fits on the device at once.
pub struct CooperativeLaunch<'k, 'g, P: Params> {
    kernel: &'k CooperativeKernel<'g, P>,
    shape: Shape,
}

impl Gpu {
    /// Loads the embedded PTX module once per CUDA device.
    fn module(&self) -> Result<&Arc<CudaModule>> {
        let Backend::Cuda(cuda) = &self.backend else { unreachable!("the emulator runs the kernels without PTX") };
        if let Some(m) = cuda.module.get() {
            return Ok(m);
        }
        let m = cuda.ctx.load_module(cudarc::nvrtc::Ptx::from_src(crate::PTX)).map_err(Error::driver("cuModuleLoadData"))?;
        #[cfg(feature = "barrier-timeout")]
        {
            let report = raw::HostMapped::new()?;
            let mut slot = m.get_global("GRID_BARRIER_REPORT", &cuda.stream).map_err(Error::driver("cuModuleGetGlobal"))?;
            cuda.stream
                .memcpy_htod(&report.device_address().to_ne_bytes(), &mut slot)
                .map_err(Error::driver("cuMemcpyHtoD"))?;
            let _ = cuda.barrier_report.set(report);
        }
        Ok(cuda.module.get_or_init(|| m))
    }

    /// Loads a kernel that has no grid barrier.
    pub fn kernel<P: Params>(&self, def: &KernelDef<P, NoGridSync>) -> Result<Kernel<'_, P>> {
        Ok(Kernel { loaded: Loaded::load(self, None, def)? })
    }

    /// Loads a kernel that calls `grid.sync()`.
    pub fn cooperative_kernel<P: Params>(&self, def: &KernelDef<P, GridSync>) -> Result<CooperativeKernel<'_, P>> {
        Ok(CooperativeKernel { loaded: Loaded::load(self, None, def)? })
    }

    /// Loads a module that another compiler built (a cubin or PTX file), for
    /// launching its kernels through the same path as this project's.
    pub fn load_module_file(&self, path: &std::path::Path) -> Result<Module> {
        let Backend::Cuda(cuda) = &self.backend else { return Err(Error::NotOnEmulator("loading a CUDA module")) };
        let ptx = cudarc::nvrtc::Ptx::from_file(path);
        Ok(Module(cuda.ctx.load_module(ptx).map_err(Error::driver("cuModuleLoad"))?))
    }

    /// Loads a kernel with no grid barrier from `module`; `def` states its
    /// contract, which the caller vouches the foreign kernel keeps.
    pub fn kernel_in<P: Params>(&self, module: &Module, def: &KernelDef<P, NoGridSync>) -> Result<Kernel<'_, P>> {
        Ok(Kernel { loaded: Loaded::load(self, Some(module), def)? })
    }

    /// Loads a grid-synchronizing kernel from `module` (see [`Gpu::kernel_in`]).
    pub fn cooperative_kernel_in<P: Params>(&self, module: &Module, def: &KernelDef<P, GridSync>) -> Result<CooperativeKernel<'_, P>> {
        Ok(CooperativeKernel { loaded: Loaded::load(self, Some(module), def)? })
    }

    /// A zeroed device buffer (at least one element).
    pub fn zeros<T: DeviceRepr + ValidAsZeroBits + Default + Clone>(&self, len: usize) -> Result<Buffer<T>> {
        let len = len.max(1);
        let mem = match &self.backend {
            Backend::Cuda(c) => Mem::Cuda(c.stream.alloc_zeros(len).map_err(Error::driver("cuMemAllocAsync"))?),
            Backend::Emulated(_) => Mem::Host(vec![T::default(); len].into_boxed_slice()),
        };
        Ok(Buffer { mem })
    }

    /// A device buffer holding `values`.
    pub fn upload<T: DeviceRepr + Clone>(&self, values: &[T]) -> Result<Buffer<T>> {
        let mem = match &self.backend {
            Backend::Cuda(c) => {
                // A copy from pageable memory waits for the stream: bound that wait first.
                self.finish()?;
                Mem::Cuda(c.stream.clone_htod(values).map_err(Error::driver("cuMemcpyHtoD"))?)
            }
            Backend::Emulated(_) => Mem::Host(values.to_vec().into_boxed_slice()),
        };
        Ok(Buffer { mem })
    }

    /// Copies `src` into the start of `dst` on the device (`cuMemcpyDtoDAsync`).
    pub fn copy(&self, src: &View<'_, f32>, dst: &mut Buffer<f32>) -> Result<()> {
        match (&src.mem, &mut dst.mem) {
            (ViewMem::Cuda(s), Mem::Cuda(d)) => self.stream().memcpy_dtod(s, d).map_err(Error::driver("cuMemcpyDtoD")),
            (ViewMem::Host(s), Mem::Host(d)) => {
                d[..s.len()].copy_from_slice(s);
                Ok(())
            }
            _ => unreachable!("buffers of one device"),
        }
    }

    /// Copies a device buffer to the host, once the work before it is done.
    pub fn read<T: DeviceRepr + Default + Clone>(&self, buffer: &Buffer<T>) -> Result<Vec<T>> {
        self.finish()?;
        match &buffer.mem {
            Mem::Cuda(s) => self.stream().clone_dtoh(s).map_err(Error::driver("cuMemcpyDtoH")),
            Mem::Host(h) => Ok(h.to_vec()),
        }
    }

    /// Fills a device buffer with `value` (to poison an output before a run).
    pub fn fill<T: DeviceRepr + Clone>(&self, buffer: &mut Buffer<T>, value: T) -> Result<()> {
        match &mut buffer.mem {
            Mem::Cuda(s) => {
                // A copy from pageable memory waits for the stream: bound that wait first.
                self.finish()?;
                let host = vec![value; s.len()];
                self.stream().memcpy_htod(&host, s).map_err(Error::driver("cuMemcpyHtoD"))
            }
            Mem::Host(h) => {
                h.fill(value);
                Ok(())
            }
        }
    }

    /// Waits, at most the timeout, for everything queued so far (the
    /// emulator's launches are already finished when they return).
    pub fn finish(&self) -> Result<()> {
        match &self.backend {
            Backend::Cuda(c) => {
                let event = c.ctx.new_event(None).map_err(Error::driver("cuEventCreate"))?;
                event.record(&c.stream).map_err(Error::driver("cuEventRecord"))?;
                self.wait_for(&event)
            }
            Backend::Emulated(_) => Ok(()),
        }
    }

    /// Milliseconds each of `runs` runs of `work` takes: between two CUDA
    /// events on a GPU (created once, so nothing but `work` separates one run
    /// from the next), wall time on the emulator.
    pub fn time_each(&self, runs: usize, work: &mut dyn FnMut() -> Result<()>) -> Result<Vec<f64>> {
        match &self.backend {
            Backend::Cuda(c) => {
                let event = || c.ctx.new_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT)).map_err(Error::driver("cuEventCreate"));
                let (start, end) = (event()?, event()?);
                (0..runs)
                    .map(|_| {
                        start.record(&c.stream).map_err(Error::driver("cuEventRecord"))?;
                        work()?;
                        end.record(&c.stream).map_err(Error::driver("cuEventRecord"))?;
                        self.wait_for(&end)?;
                        Ok(start.elapsed_ms(&end).map_err(Error::driver("cuEventElapsedTime"))? as f64)
                    })
                    .collect()
            }
            Backend::Emulated(_) => (0..runs)
                .map(|_| {
                    let start = std::time::Instant::now();
                    work()?;
                    Ok(start.elapsed().as_secs_f64() * 1e3)
                })
                .collect(),
        }
    }

    /// Waits, at most the timeout, for `event`; a failure or a timeout names
    /// the last kernel launched. Polls without sleeping for the first
    /// millisecond, so back-to-back timed runs leave the GPU no idle gaps
    /// (as `cudaEventSynchronize` would), then sleeps between polls.
    fn wait_for(&self, event: &cudarc::driver::CudaEvent) -> Result<()> {
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
        if let Backend::Cuda(cuda) = &self.backend
            && let Some(report) = cuda.barrier_report.get().and_then(|r| gpu::cg::barrier::Report::from_words(r.words()))
        {
            return Error::GridBarrierTimedOut { kernel, report };
        }
        Error::KernelFailed { kernel, error }
    }
}

impl<'g, P: Params> Kernel<'g, P> {
    /// The PTX entry name.
    pub fn name(&self) -> &'static str {
        self.loaded.name
    }

    /// Occupancy and resources for blocks of `threads`.
    pub fn limits(&self, threads: u32) -> Result<Limits> {
        self.loaded.limits(threads)
    }
}

impl<'g, P: Params> CooperativeKernel<'g, P> {
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

impl<P: Params> CooperativeLaunch<'_, '_, P> {
    /// Blocks in the grid.
    pub fn blocks(&self) -> u32 {
        self.shape.blocks
    }

    /// Threads per block.
    pub fn threads(&self) -> u32 {
        self.shape.threads
    }
}
