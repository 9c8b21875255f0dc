//! The CUDA backend: cudarc's safe layer for the context, stream, modules,
//! functions and events, and [`crate::driver`] for the rest. Here the
//! device, its modules, events and timed runs, and the backend's calls;
//! memory, kernels, the watched barrier's memory and traces have a file each.

mod barriers;
mod kernel;
mod memory;
mod trace;

pub(crate) use barriers::CudaGraph;
use barriers::{GRAPH_BARRIERS, GraphBarriers};
use kernel::{CudaKernel, FunctionKey, Loaded};
pub(crate) use memory::Allocation;
use memory::HeldFrees;

use super::group::Comm;
use super::ptx_index::PtxIndex;
use super::{ArgRepr, Backend, Captured, DeviceInfo, Function, KernelSpec, Memory, Module, Occupancy, Owner, Queued, SharedOwner};
use crate::driver;
use crate::error::{Error, Result};
use crate::shape::Shape;
use crate::sizing::SmResources;
use cg_kernel::cg::barrier::{WATCHED_ENTRY_SUFFIX, is_watched, watched};
use cudarc::driver::sys::{self, CUdevice_attribute as Attr, CUevent_flags, CUfunction_attribute as FnAttr};
use cudarc::driver::{CudaContext, CudaEvent, CudaFunction, CudaModule, CudaStream, DevicePtr};
use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The launcher's own module: one kernel, [`HOLD`], that keeps the GPU busy
/// for a given number of nanoseconds (`hold.ptx`).
const HOLD_PTX: &str = include_str!("hold.ptx");
/// The hold kernel's name in [`HOLD_PTX`].
const HOLD: &str = "cg_launcher_hold_for";

/// An open CUDA device: its context, the one stream everything runs on, the module.
pub(crate) struct Cuda {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// The program's kernel crates' modules, by crate, loaded on first use.
    modules: RefCell<std::collections::HashMap<&'static str, Arc<CudaModule>>>,
    /// The sm_90 module (`crate::ptx_of(krate)?.sm90`), for the cluster kernels.
    sm90_modules: RefCell<std::collections::HashMap<&'static str, Arc<CudaModule>>>,
    compute_capability: (i32, i32),
    /// The most shared memory a block may opt in to (`sm.max_shared_per_block`).
    max_shared_per_block: u32,
    /// The kernel launched last, for naming it in errors.
    last_kernel: Cell<&'static str>,
    /// The kernel that did not finish within the timeout, until a later wait
    /// sees it end: it cannot be stopped, so meanwhile no new work is queued
    /// behind it (a launch, a copy to or from the host) and no teardown call
    /// that would wait for it is made. `finish` may still wait for it again.
    stuck: Cell<Option<&'static str>>,
    timeout: Cell<Duration>,
    /// The program's kernels loaded so far, by (in the sm_90 module, name):
    /// the function and its watched entry.
    functions: RefCell<std::collections::HashMap<FunctionKey, Loaded>>,
    /// Occupancy answers so far, by kernel, threads per block and dynamic shared bytes.
    occupancies: RefCell<std::collections::HashMap<(FunctionKey, u32, u32), Occupancy>>,
    /// Which entries of the plain and the sm_90 PTX call `grid.sync()`, read once each.
    indexes: RefCell<std::collections::HashMap<(&'static str, bool), std::rc::Rc<PtxIndex>>>,
    /// The event [`Backend::finish`] records and waits for.
    finished: OnceLock<CudaEvent>,
    /// The event one stream records for another to wait on
    /// (`stream_waits`), made once and recorded again each time: a wait
    /// takes the record made before it, so a later record moves no wait.
    ordering: OnceLock<CudaEvent>,
    /// `hold_for`, loaded on the first timed batch.
    hold_function: OnceLock<CudaFunction>,
    /// How long the next batch of timed runs is held (see `time_queued`).
    hold_time: Cell<Duration>,
    /// While a graph is being captured, the stream it is captured from:
    /// launches go there instead of `stream`.
    capturing: Cell<Option<sys::CUstream>>,
    /// While a branch of [`Backend::in_parallel`] runs, its stream: launches
    /// go there (it is in the capture too, during one).
    branch: Cell<Option<sys::CUstream>>,
    /// The branches' streams, made on first use and kept.
    branch_streams: RefCell<Vec<Arc<CudaStream>>>,
    /// Frees held back while a branch runs, until its join.
    frees: Arc<HeldFrees>,
    /// The watched barrier's memory for launches outside a capture: one
    /// block of `watched::BYTES` per stream (see [`GraphBarriers`] and `docs/abi.md`).
    barriers: RefCell<Vec<(usize, cudarc::driver::CudaSlice<u8>)>>,
    /// The blocks each launch memory's scratch has room for: the most any
    /// cooperative launch on this device has (blocks per SM times SMs).
    launch_capacity: u32,
    /// During a capture, the graph's own barrier memory, one block per
    /// captured watched launch.
    capture_barriers: RefCell<Option<GraphBarriers>>,
    /// Loads the traced build of the kernels; and reads each launch's trace, or not.
    traced: Option<super::Tracing>,
    /// With `Tracing::Unread`: the one buffer every launch records into.
    unread: OnceLock<cudarc::driver::CudaSlice<u64>>,
    traces: RefCell<Vec<super::LaunchTrace>>,
    #[cfg(feature = "barrier-timeout")]
    barrier_report: OnceLock<driver::HostMapped>,
    /// The mutant of the shared barrier memory ([`Backend::mutant_share_barrier_memory`]).
    #[cfg(all(cg_mutants, feature = "barrier-timeout"))]
    mutant_shared_barrier: Cell<bool>,
    /// The mutant of memory out of order in branches ([`Backend::mutant_unordered_branch_memory`]).
    #[cfg(all(cg_mutants, feature = "barrier-timeout"))]
    mutant_unordered_memory: Cell<bool>,
}

impl Cuda {
    pub fn device_count() -> Result<usize> {
        if !driver::driver_present() {
            return Err(Error::NoDriver);
        }
        Ok(CudaContext::device_count().map_err(Error::driver("cuDeviceGetCount"))?.max(0) as usize)
    }

    pub fn open(ordinal: usize, traced: Option<super::Tracing>) -> Result<(Cuda, DeviceInfo)> {
        if cg_kernel::kernels::PTX_MODULES.iter().all(|p| p.plain.is_empty()) {
            return Err(Error::EmulatorOnlyBuild);
        }
        if traced.is_some() && cg_kernel::kernels::PTX_MODULES.iter().all(|p| p.traced.is_empty()) {
            return Err(Error::NoTracedModule);
        }
        let count = Self::device_count()?;
        super::check_ordinal(ordinal, count)?;
        let ctx = CudaContext::new(ordinal).map_err(Error::driver("cuDevicePrimaryCtxRetain"))?;
        let attr = |a: Attr| ctx.attribute(a).map(|v| v.max(0) as u32).map_err(Error::driver("cuDeviceGetAttribute"));
        let name = ctx.name().map_err(Error::driver("cuDeviceGetName"))?;
        let compute_capability = ctx.compute_capability().map_err(Error::driver("cuDeviceGetAttribute"))?;
        let cooperative_launch = attr(Attr::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)? == 1;
        super::check_cooperative(&name, compute_capability, cooperative_launch)?;
        let info = DeviceInfo {
            ordinal,
            name,
            compute_capability: Some(compute_capability),
            sms: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            cooperative_launch,
            clusters: compute_capability.0 >= 9,
            max_threads_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            l2_bytes: Some(attr(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?),
            sm: SmResources {
                max_threads: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
                max_blocks: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)?,
                registers: Some(attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)?),
                shared_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)?,
                reserved_shared_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK)?,
                max_shared_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
            },
            driver_version: Some(driver::driver_version()?),
            emulated: false,
            seed: None,
        };
        driver::single_stream(&ctx);
        ctx.bind_to_thread().map_err(Error::driver("cuCtxSetCurrent"))?;
        let stream = ctx.default_stream();
        let cuda = Cuda {
            ctx,
            stream,
            modules: RefCell::default(),
            sm90_modules: RefCell::default(),
            compute_capability,
            max_shared_per_block: info.sm.max_shared_per_block,
            // The most blocks a cooperative launch can have on this device.
            launch_capacity: info.sm.max_blocks.saturating_mul(info.sms),
            last_kernel: Cell::new("(no kernel yet)"),
            stuck: Cell::new(None),
            timeout: Cell::new(super::DEFAULT_TIMEOUT),
            functions: RefCell::default(),
            occupancies: RefCell::default(),
            indexes: RefCell::default(),
            finished: OnceLock::new(),
            ordering: OnceLock::new(),
            hold_function: OnceLock::new(),
            hold_time: Cell::new(FIRST_HOLD),
            capturing: Cell::new(None),
            branch: Cell::new(None),
            branch_streams: RefCell::new(Vec::new()),
            frees: Arc::new(HeldFrees::default()),
            barriers: RefCell::new(Vec::new()),
            capture_barriers: RefCell::new(None),
            traced,
            unread: OnceLock::new(),
            traces: RefCell::new(Vec::new()),
            #[cfg(feature = "barrier-timeout")]
            barrier_report: OnceLock::new(),
            #[cfg(all(cg_mutants, feature = "barrier-timeout"))]
            mutant_shared_barrier: Cell::new(false),
            #[cfg(all(cg_mutants, feature = "barrier-timeout"))]
            mutant_unordered_memory: Cell::new(false),
        };
        Ok((cuda, info))
    }

    /// Kernel crate `krate`'s module (its traced build on a traced device),
    /// loaded once: on a device of compute capability 9.0, the plain module
    /// as ptxas assembled it at build time where it did (`Ptx::cubin_sm90`),
    /// else, or where the driver refuses that image (one from a newer ptxas
    /// than it knows), the PTX, which the driver JIT-compiles.
    fn module(&self, krate: &'static str) -> Result<Arc<CudaModule>> {
        if let Some(m) = self.modules.borrow().get(krate) {
            return Ok(m.clone());
        }
        let ptx = crate::ptx_of(krate)?;
        let text = match self.traced {
            Some(_) if ptx.traced.is_empty() => return Err(Error::NoTracedModule),
            Some(_) => ptx.traced,
            None => ptx.plain,
        };
        let image = (self.traced.is_none() && self.compute_capability == (9, 0) && !ptx.cubin_sm90.is_empty())
            .then(|| self.ctx.load_module(cudarc::nvrtc::Ptx::from_binary(ptx.cubin_sm90.to_vec())).ok())
            .flatten();
        let m = match image {
            Some(m) => m,
            None => self.ctx.load_module(cudarc::nvrtc::Ptx::from_src(text)).map_err(Error::driver("cuModuleLoadData"))?,
        };
        #[cfg(feature = "barrier-timeout")]
        {
            if self.barrier_report.get().is_none() {
                let _ = self.barrier_report.set(driver::HostMapped::new(16)?);
            }
            let report = self.barrier_report.get().expect("made above");
            let mut slot = m.get_global("GRID_BARRIER_REPORT", &self.stream).map_err(Error::driver("cuModuleGetGlobal"))?;
            self.stream.memcpy_htod(&report.device_address().to_ne_bytes(), &mut slot).map_err(Error::driver("cuMemcpyHtoD"))?;
        }
        self.modules.borrow_mut().insert(krate, m.clone());
        Ok(m)
    }

    /// Kernel crate `krate`'s sm_90 module, loaded once: the only one holding
    /// its `#[kernel(cluster)]` kernels (not traced: a trace of a cluster
    /// launch comes from the emulator).
    fn sm90_module(&self, krate: &'static str, kernel: &'static str) -> Result<Arc<CudaModule>> {
        if let Some(m) = self.sm90_modules.borrow().get(krate) {
            return Ok(m.clone());
        }
        let (major, minor) = self.compute_capability;
        if major < 9 {
            return Err(Error::ClustersNeedSm90 { kernel, major, minor });
        }
        let m = self.ctx.load_module(cudarc::nvrtc::Ptx::from_src(crate::ptx_of(krate)?.sm90)).map_err(Error::driver("cuModuleLoadData"))?;
        self.sm90_modules.borrow_mut().insert(krate, m.clone());
        Ok(m)
    }

    fn event(&self) -> Result<CudaEvent> {
        self.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map_err(Error::driver("cuEventCreate"))
    }

    fn record(&self, event: &CudaEvent) -> Result<()> {
        // SAFETY: the event and the stream are this context's, which `open`
        // made current on this thread (the only one that uses it).
        unsafe { driver::record_event(event.cu_event(), self.stream.cu_stream()) }.map_err(Error::driver("cuEventRecord"))
    }

    /// Waits, at most the timeout, for `event`; a failure or a timeout names
    /// the last kernel launched. Polls without sleeping for the first
    /// millisecond, then sleeps between polls.
    fn wait_for(&self, event: &CudaEvent) -> Result<()> {
        let start = Instant::now();
        let spin = Duration::from_millis(1);
        loop {
            match event.try_is_complete() {
                Ok(true) => {
                    self.stuck.set(None);
                    return Ok(());
                }
                Ok(false) if start.elapsed() > self.timeout.get() => {
                    self.stuck.set(Some(self.last_kernel.get()));
                    driver::KERNEL_STUCK.store(true, std::sync::atomic::Ordering::Relaxed);
                    return Err(Error::Timeout { kernel: self.last_kernel.get(), seconds: self.timeout.get().as_secs_f64() });
                }
                Ok(false) if start.elapsed() < spin => std::hint::spin_loop(),
                Ok(false) => std::thread::sleep(Duration::from_micros(200)),
                Err(error) => {
                    self.stuck.set(None);
                    return Err(self.kernel_failure(error));
                }
            }
        }
    }

    /// Refuses new work while a kernel is stuck.
    fn usable(&self) -> Result<()> {
        match self.stuck.get() {
            Some(kernel) => Err(Error::DeviceStuck { kernel }),
            None => Ok(()),
        }
    }

    /// The error for a kernel that failed while running: the diagnosing
    /// barrier's report where there is one.
    fn kernel_failure(&self, error: cudarc::driver::DriverError) -> Error {
        let kernel = self.last_kernel.get();
        #[cfg(feature = "barrier-timeout")]
        if let Some(report) = self.barrier_report.get().and_then(|r| cg_kernel::cg::barrier::Report::from_words(r.words())) {
            return Error::GridBarrierTimedOut { kernel, report };
        }
        Error::KernelFailed { kernel, error: crate::error::DriverError::from_cudarc(error) }
    }

    /// The stream launches go to: a branch's own while one runs, else the
    /// capture stream while a graph is being captured, else `stream`.
    fn launch_stream(&self) -> sys::CUstream {
        self.branch.get().or(self.capturing.get()).unwrap_or(self.stream.cu_stream())
    }

    /// Queues run `r` of `work` between `events[r]`'s two records, for each `r` of `runs`.
    fn queue_between(&self, events: &[(CudaEvent, CudaEvent)], runs: std::ops::Range<usize>, work: &mut dyn FnMut(usize) -> Result<()>) -> Result<()> {
        for r in runs {
            self.record(&events[r].0)?;
            work(r)?;
            self.record(&events[r].1)?;
        }
        Ok(())
    }

    fn elapsed(start: &CudaEvent, end: &CudaEvent) -> Result<f64> {
        Ok(start.elapsed_ms(end).map_err(Error::driver("cuEventElapsedTime"))? as f64)
    }
}

impl Drop for Cuda {
    /// With a kernel stuck, unloading any module (the program's, its sm_90
    /// one, the hold's), freeing host-mapped memory or releasing the context
    /// would wait for it forever: all are left to the process's exit, which
    /// ends the kernel.
    fn drop(&mut self) {
        if self.stuck.get().is_some() {
            std::mem::forget(self.ctx.clone());
            std::mem::forget(std::mem::take(&mut *self.modules.borrow_mut()));
            std::mem::forget(std::mem::take(&mut *self.sm90_modules.borrow_mut()));
            std::mem::forget(self.hold_function.take());
            std::mem::forget(std::mem::take(&mut *self.functions.borrow_mut()));
            #[cfg(feature = "barrier-timeout")]
            std::mem::forget(self.barrier_report.take());
        }
    }
}

impl Backend for Cuda {
    fn alloc(&self, bytes: usize) -> Result<Memory> {
        self.in_order("device memory allocated", || {
            let slice = self.stream.alloc_zeros::<u8>(bytes.max(1)).map_err(Error::driver("cuMemAllocAsync"))?;
            Ok(self.allocation(slice, bytes))
        })
    }

    fn alloc_shared(&self, bytes: usize) -> Result<(SharedOwner, u64, *mut u8)> {
        self.usable()?;
        self.ctx.bind_to_thread().map_err(Error::driver("cuCtxSetCurrent"))?;
        let m = driver::HostMapped::new(bytes)?;
        let (address, host) = (m.device_address(), m.host());
        Ok((SharedOwner::Cuda(m), address, host))
    }

    fn alloc_uninit(&self, bytes: usize) -> Result<Memory> {
        self.in_order("device memory allocated", || {
            // SAFETY: the bytes are only ever read by kernels, as device memory
            // (a `Pod` type), never as host values that would need to be initialized.
            let slice = unsafe { self.stream.alloc::<u8>(bytes.max(1)) }.map_err(Error::driver("cuMemAllocAsync"))?;
            Ok(self.allocation(slice, bytes))
        })
    }

    /// One bounded wait: a copy from pageable memory may wait for the stream
    /// (for room to stage what it copies), so the stream is drained first,
    /// within the timeout; the call then returns once `src` is staged, and
    /// the copy completes in stream order.
    fn write(&self, dst: &mut Memory, offset: usize, src: &[u8]) -> Result<()> {
        let address = dst.at(offset, src.len());
        self.in_order("a copy to the device", || {
            self.finish()?;
            // SAFETY: `address .. + src.len()` lies inside `dst`, a live allocation
            // of this context (checked by `at`); the copy is in stream order,
            // and has read `src` when the call returns (pageable memory is staged).
            unsafe { cudarc::driver::result::memcpy_htod_async(address, src, self.stream.cu_stream()) }.map_err(Error::driver("cuMemcpyHtoDAsync"))
        })
    }

    /// One bounded wait: a copy to pageable memory returns only once it has
    /// completed, after everything queued before it, so the stream is
    /// drained first, within the timeout.
    fn read(&self, src: &Memory, offset: usize, dst: &mut [u8]) -> Result<()> {
        let address = src.at(offset, dst.len());
        self.in_order("a copy from the device", || {
            self.finish()?;
            // SAFETY: as in `write`, the other way; the copy has completed when the call returns.
            unsafe { cudarc::driver::result::memcpy_dtoh_async(dst, address, self.stream.cu_stream()) }.map_err(Error::driver("cuMemcpyDtoHAsync"))
        })
    }

    fn copy(&self, src: &Memory, src_offset: usize, dst: &mut Memory, dst_offset: usize, bytes: usize) -> Result<()> {
        let (from, to) = (src.at(src_offset, bytes), dst.at(dst_offset, bytes));
        self.in_order("a copy on the device", || {
            // SAFETY: both ranges lie inside live allocations of this context.
            unsafe { cudarc::driver::result::memcpy_dtod_async(to, from, bytes, self.stream.cu_stream()) }.map_err(Error::driver("cuMemcpyDtoDAsync"))
        })
    }

    fn fill(&self, dst: &mut Memory, offset: usize, pattern: &[u8], count: usize) -> Result<()> {
        let address = dst.at(offset, count * pattern.len());
        self.in_order("a fill of device memory", || {
            // SAFETY: the range lies inside a live allocation of this context
            // (`at`), whose base is 256-byte aligned, at an offset that is a
            // multiple of the element's size (`Gpu::fill`).
            unsafe { driver::memset(address, pattern, count, self.stream.cu_stream()) }.map_err(Error::driver("cuMemsetAsync"))
        })
    }

    fn free_memory(&self) -> Result<u64> {
        // Memory freed with cuMemFreeAsync returns to the device only when the
        // pool is trimmed after the host has seen the free done in a synchronize
        // (an event query is not enough). `finish` first, so that this one cannot hang.
        self.finish()?;
        self.stream.synchronize().map_err(Error::driver("cuStreamSynchronize"))?;
        // Best effort: a device without memory pools has nothing to trim.
        let _ = driver::trim_default_pool(self.ctx.cu_device());
        Ok(self.ctx.mem_get_info().map_err(Error::driver("cuMemGetInfo"))?.0 as u64)
    }

    fn load<'g>(&'g self, spec: &KernelSpec, module: Option<&'g Module>) -> Result<Box<dyn Function + 'g>> {
        // Loading a module may wait for the device: refused while a kernel is stuck.
        self.usable()?;
        let Some(module) = module else { return self.load_ours(spec) };
        let function = module.cuda.load_function(spec.name).map_err(Error::driver("cuModuleGetFunction"))?;
        Ok(Box::new(CudaKernel {
            cuda: self,
            name: spec.name,
            module: module.cuda.clone(),
            function,
            watched: None,
            cache: None,
            opted_in: std::rc::Rc::new(Cell::new(0)),
        }))
    }

    fn load_module_file(&self, path: &std::path::Path) -> Result<Arc<CudaModule>> {
        self.usable()?;
        self.ctx.load_module(cudarc::nvrtc::Ptx::from_file(path)).map_err(Error::driver("cuModuleLoad"))
    }

    /// Records one event, made on the first call and kept, and waits for it.
    fn finish(&self) -> Result<()> {
        let event = match self.finished.get() {
            Some(e) => e,
            None => {
                let e = self.ctx.new_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING)).map_err(Error::driver("cuEventCreate"))?;
                self.finished.get_or_init(|| e)
            }
        };
        self.record(event)?;
        self.wait_for(event)
    }

    fn hold(&self, time: Duration) -> Result<()> {
        self.usable()?;
        let hold = match self.hold_function.get() {
            Some(f) => f,
            None => {
                let module = self.ctx.load_module(cudarc::nvrtc::Ptx::from_src(HOLD_PTX)).map_err(Error::driver("cuModuleLoadData"))?;
                let f = module.load_function(HOLD).map_err(Error::driver("cuModuleGetFunction"))?;
                self.hold_function.get_or_init(|| f)
            }
        };
        self.last_kernel.set(HOLD);
        let mut ns = time.as_nanos() as u64;
        let shape = Shape::new(1, 32, 0);
        // SAFETY: the hold takes one u64 and touches no memory.
        unsafe { driver::launch_kernel_ex(hold.cu_function(), self.stream.cu_stream(), shape, false, &mut [&mut ns as *mut u64 as *mut c_void]) }
            .map_err(Error::driver("cuLaunchKernelEx"))
    }

    /// Runs are queued in batches of [`BATCH`], each behind a `hold_for`
    /// that keeps the GPU from starting the batch before the host has queued
    /// all of it: so the GPU runs the batch back to back, and a run's events
    /// time the GPU alone, not how fast the host submits. A batch the host
    /// took more than half the hold to queue is run again behind a hold twice
    /// as long (up to [`MAX_HOLD`]); the hold that sufficed is kept for the
    /// next batch.
    fn time_queued(&self, runs: usize, work: &mut dyn FnMut(usize) -> Result<()>) -> Result<Vec<f64>> {
        let events: Vec<(CudaEvent, CudaEvent)> = (0..runs).map(|_| Ok((self.event()?, self.event()?))).collect::<Result<_>>()?;
        let mut first = 0;
        while first < runs {
            let batch = first..(first + BATCH).min(runs);
            let hold = self.hold_time.get();
            self.hold(hold)?;
            let queueing = Instant::now();
            self.queue_between(&events, batch.clone(), work)?;
            let queued_in = queueing.elapsed();
            self.wait_for(&events[batch.end - 1].1)?;
            if queued_in * 2 > hold && hold < MAX_HOLD {
                self.hold_time.set(hold * 2);
                continue;
            }
            first = batch.end;
        }
        events.iter().map(|(s, e)| Self::elapsed(s, e)).collect()
    }

    fn time_waited(&self, runs: usize, work: &mut dyn FnMut(usize) -> Result<()>) -> Result<Vec<f64>> {
        let (start, end) = (self.event()?, self.event()?);
        (0..runs)
            .map(|r| {
                self.finish()?;
                self.record(&start)?;
                work(r)?;
                self.record(&end)?;
                self.wait_for(&end)?;
                Self::elapsed(&start, &end)
            })
            .collect()
    }

    fn queue_timed(&self, runs: usize, work: &mut dyn FnMut(usize) -> Result<()>) -> Result<Queued> {
        let events: Vec<(CudaEvent, CudaEvent)> = (0..runs).map(|_| Ok((self.event()?, self.event()?))).collect::<Result<_>>()?;
        self.queue_between(&events, 0..runs, work)?;
        Ok(Queued::Cuda(events))
    }

    fn queued_times(&self, queued: Queued) -> Result<Vec<f64>> {
        let Queued::Cuda(events) = queued else { return Err(Error::OtherDevice { what: "runs the emulator queued" }) };
        if let Some((_, last)) = events.last() {
            self.wait_for(last)?;
        }
        events.iter().map(|(s, e)| Self::elapsed(s, e)).collect()
    }

    fn communicator(&self, id: &super::CommId, rank: u32, ranks: u32) -> Result<Comm> {
        #[cfg(feature = "nccl")]
        if let super::CommId::Nccl(id) = id {
            self.ctx.bind_to_thread().map_err(Error::driver("cuCtxSetCurrent"))?;
            // SAFETY: this device's context is current on this thread, just above.
            return Ok(Comm::Nccl(unsafe { crate::nccl::Comm::init_rank(id, rank, ranks)? }));
        }
        let _ = (id, rank, ranks);
        Err(Error::Nccl { call: "ncclCommInitRank", error: "given the emulator's stand-in instead of an NCCL id".to_string() })
    }

    #[cfg(not(feature = "nccl"))]
    fn all_reduce_sum(&self, _: &super::Communicator, _: &Memory, _: usize, _: &mut Memory, _: usize, _: usize) -> Result<()> {
        Err(Error::OtherDevice { what: "the emulator's stand-in communicator" })
    }

    #[cfg(feature = "nccl")]
    fn all_reduce_sum(&self, comm: &super::Communicator, src: &Memory, src_offset: usize, dst: &mut Memory, dst_offset: usize, count: usize) -> Result<()> {
        self.usable()?;
        let Comm::Nccl(comm) = &comm.inner else { return Err(Error::OtherDevice { what: "the emulator's stand-in communicator" }) };
        let (src, dst) = (src.at(src_offset, count * 4), dst.at(dst_offset, count * 4));
        self.last_kernel.set("ncclAllReduce");
        // SAFETY: both ranges lie inside this device's allocations, checked
        // by `at`; the stream is this context's.
        unsafe { comm.all_reduce_sum(src, dst, count, self.launch_stream()) }
    }

    fn set_timeout(&self, timeout: Duration) {
        self.timeout.set(timeout);
    }

    fn capture(&self, work: &mut dyn FnMut() -> Result<()>) -> Result<Captured> {
        self.usable()?;
        if self.capturing.get().is_some() || self.branch.get().is_some() {
            return Err(Error::NestedStreams { what: "a graph capture" });
        }
        // Memory cannot be allocated during a capture: the graph's barrier
        // memory is allocated first, and belongs to the graph.
        let memory = self.barrier_memory(GRAPH_BARRIERS)?;
        *self.capture_barriers.borrow_mut() = Some(GraphBarriers { memory, taken: 0 });
        let side = self.ctx.new_stream().map_err(Error::driver("cuStreamCreate"))?;
        side.begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL).map_err(Error::driver("cuStreamBeginCapture"))?;
        self.capturing.set(Some(side.cu_stream()));
        self.hold_frees();
        // A panic in `work` still ends the capture and releases the held
        // frees (below) before it goes on.
        let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(&mut *work));
        self.capturing.set(None);
        let barriers = self.capture_barriers.borrow_mut().take().expect("the capture's barrier memory");
        // End the capture whatever `work` did, so the stream leaves capture mode.
        // SAFETY: `side` is this context's, in capture since above.
        let ended = unsafe { driver::GraphExec::end_capture(side.cu_stream()) };
        self.release_frees();
        made.unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        let exec = ended?.ok_or(Error::EmptyGraph)?;
        side.synchronize().map_err(Error::driver("cuStreamSynchronize"))?;
        Ok(Captured::Cuda(CudaGraph { exec, _barriers: barriers.memory }))
    }

    /// Fork and join with events: each branch's stream waits for what was
    /// queued before, runs the branch's launches, and what is queued after
    /// waits for every branch. During a capture the same calls make
    /// parallel branches of the graph.
    fn in_parallel(&self, branches: usize, work: &mut dyn FnMut(usize) -> Result<()>) -> Result<()> {
        self.usable()?;
        if self.branch.get().is_some() {
            return Err(Error::NestedStreams { what: "a branch of in_parallel" });
        }
        while self.branch_streams.borrow().len() < branches {
            let stream = self.ctx.new_stream().map_err(Error::driver("cuStreamCreate"))?;
            self.branch_streams.borrow_mut().push(stream);
        }
        let origin = self.launch_stream();
        let event = || self.ctx.new_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING)).map_err(Error::driver("cuEventCreate"));
        let wait = |stream: sys::CUstream, e: &CudaEvent| {
            // SAFETY: both are this context's, live for the call.
            unsafe { cudarc::driver::result::stream::wait_event(stream, e.cu_event(), sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT) }
                .map_err(Error::driver("cuStreamWaitEvent"))
        };
        let fork = event()?;
        // SAFETY: the event and the stream are this context's.
        unsafe { driver::record_event(fork.cu_event(), origin) }.map_err(Error::driver("cuEventRecord"))?;
        let streams: Vec<sys::CUstream> = self.branch_streams.borrow()[..branches].iter().map(|s| s.cu_stream()).collect();
        let mut joins = Vec::with_capacity(branches);
        self.hold_frees();
        let mut panicked = None;
        let made = streams.iter().enumerate().try_for_each(|(b, &stream)| {
            wait(stream, &fork)?;
            self.branch.set(Some(stream));
            let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(b)));
            self.branch.set(None);
            let join = event()?;
            // SAFETY: as above.
            unsafe { driver::record_event(join.cu_event(), stream) }.map_err(Error::driver("cuEventRecord"))?;
            joins.push(join);
            made.unwrap_or_else(|panic| {
                // Stop here, join what ran, then go on panicking.
                panicked = Some(panic);
                Err(Error::NestedStreams { what: "a branch that panicked" })
            })
        });
        // Join whatever ran, so that a capture can end; then free what the
        // branches dropped, on the default stream, after the join.
        let joined = joins.iter().try_for_each(|join| wait(origin, join));
        self.release_frees();
        if let Some(panic) = panicked {
            std::panic::resume_unwind(panic);
        }
        made.and(joined)
    }

    fn launch_graph(&self, graph: &Captured) -> Result<()> {
        self.usable()?;
        let g = &Self::cuda_graph(graph)?.exec;
        self.last_kernel.set("a captured graph");
        // SAFETY: the graph was captured and instantiated in this context, and
        // its kernels' buffers are the caller's to keep alive (as for a launch).
        unsafe { driver::graph_launch(g.exec(), self.launch_stream()) }.map_err(Error::driver("cuGraphLaunch"))
    }

    fn take_traces(&self) -> Vec<super::LaunchTrace> {
        std::mem::take(&mut *self.traces.borrow_mut())
    }

    #[cfg(all(cg_mutants, feature = "barrier-timeout"))]
    fn mutant_share_barrier_memory(&self) {
        self.mutant_shared_barrier.set(true);
    }

    #[cfg(all(cg_mutants, feature = "barrier-timeout"))]
    fn mutant_unordered_branch_memory(&self) {
        self.mutant_unordered_memory.set(true);
    }

    fn graph_cooperative_launches(&self, graph: &Captured) -> Result<Vec<bool>> {
        let g = &Self::cuda_graph(graph)?.exec;
        // SAFETY: the graph is live (owned by `g`) and of this context.
        unsafe { driver::graph_kernel_nodes_cooperative(g.graph()) }.map_err(Error::driver("cuGraphKernelNodeGetAttribute"))
    }
}

/// Timed runs queued behind one hold.
const BATCH: usize = 32;
/// The first hold: about four times what the H200 machine's host took to
/// queue 32 two-launch runs (some 3.5 µs per launch or event record there).
const FIRST_HOLD: Duration = Duration::from_millis(2);
/// The longest hold.
const MAX_HOLD: Duration = Duration::from_secs(1);
