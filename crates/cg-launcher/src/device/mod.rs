//! The device: a CUDA GPU (`cuda.rs`) or the emulated one (`emulated.rs`),
//! two implementations of one trait, `Backend`, behind one facade, [`Gpu`].
//! Everything above this module is the same code for both.

mod branches;
mod cuda;
mod emulated;
mod graph;
pub(crate) mod group;
mod memory;
pub(crate) mod observe;
mod ptx_index;

use branches::BranchUse;
pub(crate) use branches::{Branch, Origin, Span, Use};
/// The emulated devices (`EmulatedDevice::T4`, `EmulatedDevice::H200`), for [`Gpu::emulated`].
pub use cg_emulator::Device as EmulatedDevice;
/// How the emulator runs a launch (its seed, timeout and workers), for
/// [`Gpu::emulated`]; what an emulated launch's error carries
/// ([`Error::Emulated`]). Re-exported so that
/// a program drives the emulator with this crate alone.
pub use cg_emulator::{Fault as EmulatorFault, Options as EmulatorOptions};
pub(crate) use graph::Captured;
pub use graph::Graph;
pub(crate) use group::{CommId, Communicator};
pub use memory::{Buffer, Pod, Shared, SharedOut, View, ViewMut};
pub(crate) use observe::{BlockTrace, LaunchTrace, Launched, TraceUnit, Tracing};
pub use ptx_index::ptx_calls_grid_sync;

use crate::error::{Error, Result};
use crate::shape::Shape;
use crate::sizing::SmResources;
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;

/// Bytes of memory the host can still give this process (Linux's
/// `MemAvailable`), or `None` where it cannot tell: what the emulated
/// device reports as its free memory.
pub fn host_available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// How long the host waits for the device before calling a kernel stuck.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// What a device is: its name, SMs and limits, as the driver (or the emulator) reports them.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceInfo {
    /// The device's index (the driver's ordinal; 0 on the emulator).
    pub ordinal: usize,
    /// The device's name, as the driver reports it.
    pub name: String,
    /// `None` on the emulator.
    pub compute_capability: Option<(i32, i32)>,
    /// Streaming multiprocessors.
    pub sms: u32,
    /// `cudaDevAttrCooperativeLaunch`.
    pub cooperative_launch: bool,
    /// Thread-block clusters: compute capability 9.0 or later, or the emulated H200.
    pub clusters: bool,
    /// The most threads a block may have.
    pub max_threads_per_block: u32,
    /// `None` on the emulator.
    pub l2_bytes: Option<u32>,
    /// What one SM offers.
    pub sm: SmResources,
    /// The CUDA version the driver supports; `None` on the emulator.
    pub driver_version: Option<String>,
    /// Whether this is the emulated device.
    pub emulated: bool,
    /// The emulator's interleaving seed, when it was given one.
    pub seed: Option<u64>,
}

/// An allocation of device memory: its address as kernels see it, its size,
/// what keeps it alive, and where it was made.
pub(crate) struct Memory {
    pub address: u64,
    pub bytes: usize,
    owner: Owner,
    pub origin: Origin,
}

/// What keeps an allocation alive, by the backend that made it.
#[allow(dead_code, reason = "a GPU's allocation is held only to be freed when dropped")]
pub(crate) enum Owner {
    Cuda(cuda::Allocation),
    Emulated(cg_emulator::Memory),
}

/// What keeps memory every device reaches alive ([`Shared`]), by backend.
#[allow(dead_code, reason = "held only to be freed when dropped")]
pub(crate) enum SharedOwner {
    Cuda(crate::driver::HostMapped),
    Emulated(cg_emulator::Memory),
}

/// Which open device made a handle (a module, a graph, queued runs, a
/// communicator): a handle given to another device is refused by name
/// ([`Error::OtherDevice`]), never used in a context it does not belong to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DeviceKey(u64);

impl DeviceKey {
    fn new() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        DeviceKey(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

impl Memory {
    /// An allocation a backend made; [`Gpu`] sets its origin.
    pub(crate) fn new(address: u64, bytes: usize, owner: Owner) -> Memory {
        Memory { address, bytes, owner, origin: Origin { device: None, branch: None, allocation: address } }
    }

    /// Checks that `offset .. offset + len` lies inside; the address of its start.
    fn at(&self, offset: usize, len: usize) -> u64 {
        assert!(offset.checked_add(len).is_some_and(|end| end <= self.bytes), "{offset}+{len} outside an allocation of {} bytes", self.bytes);
        self.address + offset as u64
    }
}

/// A kernel as the emulator calls it, with the launch's arguments.
pub(crate) type EmulatedEntry = Arc<dyn Fn(&[cg_emulator::Arg]) + Send + Sync>;

/// A kernel as a backend loads it.
#[derive(Clone)]
pub(crate) struct KernelSpec {
    pub name: &'static str,
    /// The kernel crate whose PTX holds it (`KernelDef::crate_name`).
    pub krate: &'static str,
    pub params: &'static [&'static str],
    /// Declared `#[kernel(cooperative)]`: it calls `grid.sync()`.
    pub grid_sync: bool,
    /// Declared `#[kernel(cluster)]`: it calls `this_cluster()`, so it is in
    /// the sm_90 module only and runs only with a cluster dimension.
    pub cluster: bool,
    /// Whether the PTX module holds it (false for a tile made only for the emulator).
    pub in_ptx: bool,
    pub tile: Option<u32>,
    /// The bytes of its shared memory its `dynamic_shared()` addresses, by
    /// block size (`KernelDef::dynamic_shared_bytes`): a launch's shared
    /// memory past them is its fixed end (`shared_array!`s, the grid
    /// collectives'), which the emulator does not let `dynamic_shared()` reach.
    pub dynamic_shared: Arc<dyn Fn(u32) -> u32 + Send + Sync>,
    /// The kernel for the emulator.
    pub emulated: EmulatedEntry,
}

impl KernelSpec {
    /// Its registers per thread as `ptxas` counts them for sm_75 (the
    /// emulated devices' figure): `None` for a tile the PTX does not hold,
    /// or where the build found no ptxas.
    pub fn registers(&self) -> Option<u32> {
        if self.in_ptx { crate::ptx_of(self.krate).ok()?.registers_sm75(self.name) } else { None }
    }
}

/// One kernel argument, as a launch passes it: made by [`Arg`](crate::launch::Arg)
/// for a typed launch, or by the constructors below for a [`RawKernel`](crate::launch::RawKernel).
/// It borrows the buffer it names, so the buffer outlives the call that
/// queues the launch.
#[derive(Clone, Copy, Debug)]
pub struct ArgValue<'a> {
    pub(crate) repr: ArgRepr,
    _buffer: std::marker::PhantomData<&'a ()>,
}

impl<'a> ArgValue<'a> {
    /// A buffer the kernel reads.
    pub fn input<T: Pod>(view: &View<'a, T>) -> ArgValue<'a> {
        let (origin, bytes) = view.origin();
        ArgValue::of(ArgRepr::In { address: view.address(), len: view.len(), elem: size_of::<T>(), origin, bytes })
    }

    /// A buffer the kernel writes.
    pub fn output<T: Pod>(view: &'a ViewMut<'_, T>) -> ArgValue<'a> {
        let (origin, bytes) = view.origin();
        ArgValue::of(ArgRepr::Out { address: view.address(), len: view.len(), elem: size_of::<T>(), origin, bytes })
    }

    /// Memory every device reaches, which the kernel writes.
    pub fn shared<T: Pod>(out: &'a SharedOut<'_, T>) -> ArgValue<'a> {
        let origin = Origin { device: None, branch: None, allocation: out.address };
        ArgValue::of(ArgRepr::Out { address: out.address, len: out.len(), elem: size_of::<T>(), origin, bytes: (0, out.len() * size_of::<T>()) })
    }

    /// A number, passed as 64 bits: its own bits (a float's `to_bits()`),
    /// zero- or sign-extended; the kernel reads the parameter's own size of
    /// them (the low bytes, on a little-endian host).
    pub fn number(v: u64) -> ArgValue<'static> {
        ArgValue::of(ArgRepr::Value(v, |bits| bits.to_string()))
    }

    /// A number of a type that reports show as `show` shows its bits (a
    /// float as a float, a negative integer with its sign).
    pub(crate) fn typed(bits: u64, show: fn(u64) -> String) -> ArgValue<'static> {
        ArgValue::of(ArgRepr::Value(bits, show))
    }

    fn of(repr: ArgRepr) -> Self {
        ArgValue { repr, _buffer: std::marker::PhantomData }
    }
}

/// What an [`ArgValue`] holds.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ArgRepr {
    /// A buffer the kernel reads: `len` elements of `elem` bytes at `address`,
    /// `bytes` of the allocation `origin` names.
    In { address: u64, len: usize, elem: usize, origin: Origin, bytes: Span },
    /// A buffer the kernel writes.
    Out { address: u64, len: usize, elem: usize, origin: Origin, bytes: Span },
    /// A number's bits, and how a report shows them.
    Value(u64, fn(u64) -> String),
}

/// What the occupancy API and the function attributes say about one kernel.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Occupancy {
    pub blocks_per_sm: u32,
    pub registers_per_thread: Option<u32>,
    pub static_shared_bytes: u32,
}

/// A loaded kernel.
pub(crate) trait Function {
    /// Blocks per SM for blocks of `threads_per_block` with `shared_bytes` of dynamic shared memory.
    fn occupancy(&self, threads_per_block: u32, shared_bytes: u32) -> Result<Occupancy>;

    /// Clusters of `shape.cluster` (blocks of `shape`'s threads and shared
    /// memory) that fit on the device at once (`cuOccupancyMaxActiveClusters`).
    fn max_active_clusters(&self, shape: Shape) -> Result<u32>;

    /// Launches it: a cooperative kernel's watched entry above
    /// `WATCHED_ABOVE_BLOCKS` blocks, its plain entry otherwise.
    ///
    /// # Safety
    /// `args` hold one value per parameter, each of its kind, and the memory
    /// they address satisfies the kernel's contract for `shape`.
    unsafe fn launch(&self, shape: Shape, cooperative: bool, args: &[ArgRepr]) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe { self.launch_entry(shape, cooperative, None, args) }
    }

    /// Launches it, running the watched entry if `watched` says so, the
    /// plain one if it says not, or the one the grid's size chooses (`None`).
    /// Only the bench forces an entry, to time the barrier a launch did not choose.
    ///
    /// # Safety
    /// As [`launch`](Self::launch).
    unsafe fn launch_entry(&self, shape: Shape, cooperative: bool, watched: Option<bool>, args: &[ArgRepr]) -> Result<()>;

    /// After a launch that finished on the emulator, the most atomic
    /// updates one word received ([`Launched::most_atomics_on_one_word`]);
    /// `None` on a GPU, which does not count them.
    fn most_atomics_on_one_word(&self) -> Option<u64> {
        None
    }
}

/// A CUDA module from a file (see [`Gpu::load_module_file`]); only a GPU loads one.
pub struct Module {
    made_by: DeviceKey,
    pub(crate) cuda: Arc<cudarc::driver::CudaModule>,
}

/// Runs queued with their events, not yet waited for (see [`Gpu::queue_timed`]).
pub struct QueuedRuns {
    made_by: DeviceKey,
    runs: Queued,
}

/// Queued runs, by backend.
pub(crate) enum Queued {
    /// Each run's start and end events.
    Cuda(Vec<(cudarc::driver::CudaEvent, cudarc::driver::CudaEvent)>),
    /// The emulator ran them when queued: their milliseconds.
    Emulated(Vec<f64>),
}

impl Gpu {
    /// Milliseconds of each of `runs` runs of `work` (given the run's
    /// index), by events on the GPU: queued behind a hold, so that the GPU
    /// runs them back to back and the events time the GPU alone (on the
    /// emulator, the host's wall time).
    pub fn time_queued(&self, runs: usize, work: &mut dyn FnMut(usize) -> Result<()>) -> Result<Vec<f64>> {
        self.backend().time_queued(runs, work)
    }

    /// Milliseconds of each of `runs` runs of `work`, the host waiting for
    /// each to finish before it queues the next: launch to completion.
    pub fn time_waited(&self, runs: usize, work: &mut dyn FnMut(usize) -> Result<()>) -> Result<Vec<f64>> {
        self.backend().time_waited(runs, work)
    }
}

impl Gpu {
    /// Queues `runs` runs of `work`, each between two CUDA events, neither
    /// holding the GPU first nor waiting: for runs on several GPUs that start
    /// together behind a gate the caller queued (on the emulator, the runs
    /// are made now). [`queued_times`](Self::queued_times) reads the times.
    pub fn queue_timed(&self, runs: usize, work: &mut dyn FnMut(usize) -> Result<()>) -> Result<QueuedRuns> {
        Ok(QueuedRuns { made_by: self.key, runs: self.backend.queue_timed(runs, work)? })
    }

    /// Waits (at most the timeout) for runs queued by [`queue_timed`](Self::queue_timed):
    /// each run's milliseconds, GPU time (CPU wall time on the emulator).
    pub fn queued_times(&self, queued: QueuedRuns) -> Result<Vec<f64>> {
        self.owns(queued.made_by, "runs queued")?;
        self.backend.queued_times(queued.runs)
    }
}

/// What a device does.
pub(crate) trait Backend {
    fn alloc(&self, bytes: usize) -> Result<Memory>;
    /// An allocation whose contents are whatever the device left there.
    fn alloc_uninit(&self, bytes: usize) -> Result<Memory>;
    /// Zeroed memory every device of the process reaches at one address,
    /// and the host too: its owner, that address, and the host's pointer.
    fn alloc_shared(&self, bytes: usize) -> Result<(SharedOwner, u64, *mut u8)>;
    fn write(&self, dst: &mut Memory, offset: usize, src: &[u8]) -> Result<()>;
    fn read(&self, src: &Memory, offset: usize, dst: &mut [u8]) -> Result<()>;
    fn copy(&self, src: &Memory, src_offset: usize, dst: &mut Memory, dst_offset: usize, bytes: usize) -> Result<()>;
    /// Sets `count` elements of `pattern.len()` bytes from `offset` to `pattern`.
    fn fill(&self, dst: &mut Memory, offset: usize, pattern: &[u8], count: usize) -> Result<()>;
    fn free_memory(&self) -> Result<u64>;
    fn load<'g>(&'g self, spec: &KernelSpec, module: Option<&'g Module>) -> Result<Box<dyn Function + 'g>>;
    fn load_module_file(&self, path: &std::path::Path) -> Result<Arc<cudarc::driver::CudaModule>>;
    /// Waits, at most the timeout, for everything queued so far.
    fn finish(&self) -> Result<()>;
    /// Queues `hold_for(time)`: work queued after it starts once the GPU has
    /// spent `time` on it.
    fn hold(&self, time: Duration) -> Result<()>;
    /// Milliseconds of each of `runs` runs of `work` (given the run's index),
    /// on the GPU: queued before the GPU starts them, then run back to back.
    fn time_queued(&self, runs: usize, work: &mut dyn FnMut(usize) -> Result<()>) -> Result<Vec<f64>>;
    /// Milliseconds of each of `runs` runs, the host waiting for each before the next.
    fn time_waited(&self, runs: usize, work: &mut dyn FnMut(usize) -> Result<()>) -> Result<Vec<f64>>;
    /// Queues `runs` runs of `work`, each between two events, without
    /// holding the GPU or waiting; [`queued_times`](Backend::queued_times)
    /// reads their times. (The emulator runs them now.)
    fn queue_timed(&self, runs: usize, work: &mut dyn FnMut(usize) -> Result<()>) -> Result<Queued>;
    /// Waits for runs queued by [`queue_timed`](Backend::queue_timed); the milliseconds of each.
    fn queued_times(&self, queued: Queued) -> Result<Vec<f64>>;
    /// This device's rank of a group made from `id` (see [`Gpu::communicator`]).
    fn communicator(&self, id: &CommId, rank: u32, ranks: u32) -> Result<group::Comm>;
    /// Queues the sum across the group of `count` floats (see [`Gpu::all_reduce_sum`]).
    fn all_reduce_sum(&self, comm: &Communicator, src: &Memory, src_offset: usize, dst: &mut Memory, dst_offset: usize, count: usize) -> Result<()>;
    fn set_timeout(&self, timeout: Duration);
    /// The launches `work` makes, captured into a graph and instantiated
    /// instead of run.
    fn capture(&self, work: &mut dyn FnMut() -> Result<()>) -> Result<Captured>;
    /// Runs `work(b)`'s launches for each branch on a stream of its own, after
    /// what was queued before and before what is queued after (see [`Gpu::in_parallel`]).
    fn in_parallel(&self, branches: usize, work: &mut dyn FnMut(usize) -> Result<()>) -> Result<()>;
    /// Queues `graph`'s launches, in capture order, as one launch.
    fn launch_graph(&self, graph: &Captured) -> Result<()>;
    /// For each kernel launch in `graph`, whether it is cooperative, as the
    /// graph itself records it.
    fn graph_cooperative_launches(&self, graph: &Captured) -> Result<Vec<bool>>;
    /// The launches traced since the last call (see [`Gpu::open_traced`]).
    fn take_traces(&self) -> Vec<LaunchTrace>;
    /// See [`Gpu::mutant_share_barrier_memory`].
    #[cfg(all(cg_mutants, feature = "barrier-timeout"))]
    fn mutant_share_barrier_memory(&self) {}
    /// See [`Gpu::mutant_unordered_branch_memory`].
    #[cfg(all(cg_mutants, feature = "barrier-timeout"))]
    fn mutant_unordered_branch_memory(&self) {}
}

/// An open device and its facts.
pub struct Gpu {
    backend: Box<dyn Backend>,
    key: DeviceKey,
    /// What the device is.
    pub info: DeviceInfo,
    /// While [`Gpu::recording_launches`] runs, every launch made through a
    /// kernel's definition.
    launches: std::cell::RefCell<Option<Vec<Launched>>>,
    /// The branch of [`Gpu::in_parallel`] running now, if any.
    branch: std::cell::Cell<Option<Branch>>,
    /// How many `in_parallel` calls have begun.
    forks: std::cell::Cell<u64>,
    /// What the branches of the running `in_parallel` call did with each
    /// allocation (by its base address) made before it: see [`Gpu::check_use`].
    branch_uses: std::cell::RefCell<std::collections::HashMap<u64, Vec<BranchUse>>>,
}

impl Gpu {
    fn with(backend: Box<dyn Backend>, info: DeviceInfo) -> Gpu {
        Gpu {
            backend,
            key: DeviceKey::new(),
            info,
            launches: std::cell::RefCell::new(None),
            branch: std::cell::Cell::new(None),
            forks: std::cell::Cell::new(0),
            branch_uses: Default::default(),
        }
    }

    /// Refuses a handle another device made.
    fn owns(&self, made_by: DeviceKey, what: &'static str) -> Result<()> {
        if made_by == self.key { Ok(()) } else { Err(Error::OtherDevice { what }) }
    }

    /// [`check_use`](Self::check_use) for every buffer of a launch of
    /// `kernel`, whose parameters are named `params` where known.
    pub(crate) fn check_args(&self, kernel: &'static str, params: &[&str], args: &[ArgRepr]) -> Result<()> {
        // No two arguments on the same bytes where one is written: the
        // kernel's `Out` is its own (the emulator keys each argument's
        // shadow by its slot, and a GPU gives either write).
        let memory = |a: &ArgRepr| match *a {
            ArgRepr::In { origin, bytes, .. } => Some((origin, bytes, false)),
            ArgRepr::Out { origin, bytes, .. } => Some((origin, bytes, true)),
            ArgRepr::Value(..) => None,
        };
        let name = |k: usize| params.get(k).map_or_else(|| format!("argument {k}"), |n| n.to_string());
        for (i, a) in args.iter().enumerate() {
            let Some((origin, bytes, writes)) = memory(a) else { continue };
            for (j, b) in args.iter().enumerate().skip(i + 1) {
                let Some((other, other_bytes, other_writes)) = memory(b) else { continue };
                let same = origin.device == other.device && origin.allocation == other.allocation;
                let overlap = bytes.0 < other_bytes.1 && other_bytes.0 < bytes.1;
                if (writes || other_writes) && same && overlap {
                    return Err(Error::ArgumentsOverlap { kernel, first: name(i), second: name(j) });
                }
            }
        }
        args.iter().enumerate().try_for_each(|(k, a)| {
            let what = || match params.get(k) {
                Some(name) => format!("{kernel}'s `{name}`"),
                None => format!("{kernel}'s argument {k}"),
            };
            match *a {
                ArgRepr::In { origin, bytes, .. } => self.check_use(origin, bytes, Use::Read, &what),
                ArgRepr::Out { origin, bytes, .. } => self.check_use(origin, bytes, Use::Write, &what),
                ArgRepr::Value(..) => Ok(()),
            }
        })
    }

    /// Loads a kernel, from `module` if given (one this device loaded).
    pub(crate) fn load<'g>(&'g self, spec: &KernelSpec, module: Option<&'g Module>) -> Result<Box<dyn Function + 'g>> {
        if let Some(m) = module {
            self.owns(m.made_by, "a CUDA module")?;
        }
        self.backend.load(spec, module)
    }
}

impl Gpu {
    /// Opens CUDA device `ordinal`, refusing one that cannot run a cooperative launch.
    pub fn open(ordinal: usize) -> Result<Gpu> {
        let (backend, info) = cuda::Cuda::open(ordinal, None)?;
        Ok(Gpu::with(Box::new(backend), info))
    }

    /// The emulated device (see `cg_emulator`): the same kernels, run on the CPU.
    pub fn emulated(device: EmulatedDevice, options: EmulatorOptions) -> Gpu {
        let (backend, info) = emulated::Emulated::new(device, options);
        Gpu::with(Box::new(backend), info)
    }

    pub(crate) fn backend(&self) -> &dyn Backend {
        &*self.backend
    }

    /// Sets how long the host waits for the device before calling a kernel
    /// stuck; on the emulator, how long a launch may go with no block ending
    /// and no barrier completing (`cg_emulator::Options::timeout`).
    pub fn set_timeout(&self, timeout: Duration) {
        self.backend.set_timeout(timeout);
    }

    /// Free device memory in bytes, once everything queued (frees too) has finished.
    pub fn free_memory(&self) -> Result<u64> {
        self.backend.free_memory()
    }

    /// Fails with a named error unless `bytes` more device memory is free.
    pub fn ensure_free(&self, bytes: u64) -> Result<()> {
        let free = self.free_memory()?;
        if bytes > free {
            return Err(Error::OutOfDeviceMemory { needed: bytes, free });
        }
        Ok(())
    }

    /// Waits, at most the timeout, for everything queued so far.
    pub fn finish(&self) -> Result<()> {
        self.backend.finish()
    }

    /// Broken on purpose, for the test that shows the concurrent-launch test
    /// can fail: from now on every stream's watched launches share one block
    /// of barrier memory, as every launch shared the module's static before
    /// 2026-12-02 (two in flight together then count each other's arrivals
    /// and never finish). Only in the diagnosing build, which names the hang.
    #[cfg(all(cg_mutants, feature = "barrier-timeout"))]
    #[doc(hidden)]
    pub fn mutant_share_barrier_memory(&self) {
        self.backend.mutant_share_barrier_memory();
    }

    /// Broken on purpose, for the test that shows the branch-memory test can
    /// fail: from now on memory work in a branch of `in_parallel` runs on the
    /// default stream unordered against the branch, and frees are not held
    /// to the join, as before 2026-12-03. Only in the diagnosing build.
    #[cfg(all(cg_mutants, feature = "barrier-timeout"))]
    #[doc(hidden)]
    pub fn mutant_unordered_branch_memory(&self) {
        self.backend.mutant_unordered_branch_memory();
    }

    /// Loads a module that another compiler built (a cubin or PTX file), for
    /// launching its kernels through the same path as this project's.
    pub fn load_module_file(&self, path: &std::path::Path) -> Result<Module> {
        Ok(Module { made_by: self.key, cuda: self.backend.load_module_file(path)? })
    }
}

/// How many CUDA devices the driver reports (the error names a missing driver).
pub fn cuda_device_count() -> Result<usize> {
    cuda::Cuda::device_count()
}

/// A device index must be below the driver's device count.
pub fn check_ordinal(requested: usize, count: usize) -> Result<()> {
    if requested >= count {
        return Err(Error::NoDevice { requested, count });
    }
    Ok(())
}

/// The oldest GPU this project's PTX runs on: it targets sm_70, and uses
/// instructions that need it (`ld.acquire`, `red.release`, `atom.acq_rel`,
/// `barrier.sync`, `nanosleep`). Cooperative launch itself needs only 6.0.
pub const MIN_COMPUTE_CAPABILITY: (i32, i32) = (7, 0);

/// Refuses, before anything is loaded, a GPU older than
/// [`MIN_COMPUTE_CAPABILITY`] or one without cooperative launch.
pub fn check_cooperative(name: &str, (major, minor): (i32, i32), cooperative_launch: bool) -> Result<()> {
    if (major, minor) < MIN_COMPUTE_CAPABILITY {
        return Err(Error::ComputeCapabilityTooLow { name: name.to_string(), major, minor });
    }
    if !cooperative_launch {
        return Err(Error::NoCooperativeLaunch { name: name.to_string() });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Before 2026-12-04 a branch that panicked left the device in the
    /// branch: a caller who caught the panic then had every later
    /// `in_parallel` refused as nested, and every buffer counted as the
    /// dead branch's.
    #[test]
    fn a_branch_that_panics_leaves_the_device_out_of_every_branch() {
        let gpu = Gpu::emulated(cg_emulator::Device::T4, cg_emulator::Options::default());
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            gpu.in_parallel(2, &mut |b| {
                assert!(b == 0, "a bug in branch {b}");
                Ok(())
            })
        }));
        assert!(caught.is_err(), "the branch's panic goes on to the caller");
        let x = gpu.upload(&[1.0f32, 2.0]).unwrap();
        gpu.in_parallel(2, &mut |_| {
            assert_eq!(gpu.read(&x)?, [1.0, 2.0]);
            Ok(())
        })
        .unwrap();
    }

    /// Before 2026-12-04 a panic in a capture's closure left the device
    /// recording: every later launch was recorded into a graph no one would
    /// get, and never ran, and reads and allocations were refused.
    #[test]
    fn a_capture_that_panics_leaves_the_device_out_of_the_capture() {
        let gpu = Gpu::emulated(cg_emulator::Device::T4, cg_emulator::Options::default());
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| gpu.capture(&mut || panic!("a bug in the captured work"))));
        assert!(caught.is_err(), "the panic goes on to the caller");
        let x = gpu.upload(&[3u32]).unwrap();
        assert_eq!(gpu.read(&x).unwrap(), [3]);
        assert!(matches!(gpu.capture(&mut || Ok(())), Err(Error::EmptyGraph)), "a new capture may begin");
    }

    #[test]
    fn a_device_index_past_the_count_is_refused_with_the_range() {
        assert!(check_ordinal(0, 1).is_ok());
        assert_eq!(check_ordinal(3, 1).unwrap_err().to_string(), "no CUDA device 3: the driver reports 1 device, numbered 0..0");
        assert!(check_ordinal(0, 0).unwrap_err().to_string().contains("reports no devices"));
    }

    #[test]
    fn old_or_unsupported_devices_are_refused_by_name() {
        assert!(check_cooperative("NVIDIA H200", (9, 0), true).is_ok());
        let old = check_cooperative("Tesla K80", (3, 7), true).unwrap_err().to_string();
        assert!(old.contains("Tesla K80 is compute capability 3.7; cg-kernel's kernels need 7.0"), "{old}");
        // Cooperative launch works from 6.0, but the PTX is sm_70: a Pascal
        // GPU is refused here, by name, not by the driver's module load.
        for (major, minor) in [(6, 0), (6, 1), (6, 2)] {
            let pascal = check_cooperative("Tesla P100", (major, minor), true).unwrap_err().to_string();
            assert!(pascal.contains(&format!("compute capability {major}.{minor}; cg-kernel's kernels need 7.0")), "{pascal}");
            assert!(pascal.contains("sm_70"), "{pascal}");
        }
        for cc in [(7, 0), (7, 5), (8, 0), (8, 9), (9, 0), (10, 0), (12, 0)] {
            assert!(check_cooperative("a newer GPU", cc, true).is_ok(), "{cc:?}");
        }
        let no = check_cooperative("Tesla T4", (7, 5), false).unwrap_err().to_string();
        assert!(no.contains("does not support cooperative launch"), "{no}");
    }
}
