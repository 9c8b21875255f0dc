//! The emulated backend: `cg_emulator`'s device, memory and launches, with CPU
//! wall time for timings.

use super::group::Comm;
use super::{ArgRepr, Backend, Captured, DeviceInfo, Function, KernelSpec, Memory, Module, Occupancy, Owner, Queued, SharedOwner};
use crate::error::plural;
use crate::error::{Error, Result};
use crate::shape::Shape;
use crate::sizing::SmResources;
use cg_emulator as emu;
use std::cell::{Cell, RefCell};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Ends the process with one line naming the kernel, when the emulator has
/// stopped a launch and a thread of it runs on regardless: one in a loop
/// that never touches memory or waits cannot be interrupted, and the launch
/// cannot return while it runs (`emu::Options::on_runaway`).
fn runaway(kernel: &str, fault: &emu::Fault) {
    eprintln!("error: {kernel} on the emulated device: {fault}: stopping");
    std::process::exit(1);
}

pub(crate) struct Emulated {
    device: emu::Device,
    options: Cell<emu::Options>,
    /// While a graph is being captured, the launches made so far.
    recording: RefCell<Option<Vec<Recorded>>>,
    /// Whether a branch of `in_parallel` is running.
    in_branch: Cell<bool>,
    /// Whether launches record their blocks, and what they recorded.
    pub(super) tracing: Cell<bool>,
    traces: RefCell<Vec<super::LaunchTrace>>,
    /// The last launch's most atomic updates on one word, if it ran and finished.
    last_atomics: Cell<Option<u64>>,
}

/// One launch in an emulated graph.
#[derive(Clone)]
pub(crate) struct Recorded {
    spec: KernelSpec,
    shape: Shape,
    cooperative: bool,
    args: Vec<ArgRepr>,
}

impl Emulated {
    pub fn new(device: emu::Device, options: emu::Options) -> (Emulated, DeviceInfo) {
        let info = DeviceInfo {
            ordinal: 0,
            name: format!(
                "emulated {} on the CPU ({} of {} threads, {} blocks and {} KiB of shared memory each)",
                match device {
                    emu::Device::T4 => "Tesla T4",
                    emu::Device::H200 => "H200 (clusters as measured on one)",
                    _ => "GPU",
                },
                plural(device.sms.into(), "SM", "SMs"),
                device.threads_per_sm,
                device.blocks_per_sm,
                device.shared_bytes_per_sm / 1024
            ),
            compute_capability: None,
            sms: device.sms,
            cooperative_launch: true,
            clusters: device.clusters.is_some(),
            max_threads_per_block: device.max_threads_per_block,
            l2_bytes: None,
            sm: SmResources {
                max_threads: device.threads_per_sm,
                max_blocks: device.blocks_per_sm,
                registers: Some(device.registers_per_sm),
                shared_bytes: device.shared_bytes_per_sm,
                reserved_shared_per_block: 0,
                max_shared_per_block: device.max_shared_per_block,
            },
            driver_version: None,
            emulated: true,
            seed: options.seed,
        };
        (
            Emulated {
                device,
                options: Cell::new(options),
                recording: RefCell::new(None),
                in_branch: Cell::new(false),
                tracing: Cell::new(false),
                traces: RefCell::new(Vec::new()),
                last_atomics: Cell::new(None),
            },
            info,
        )
    }

    /// Memory work during a capture is refused, as on a GPU, where nothing
    /// runs until the graph does.
    fn not_capturing(&self, what: &'static str) -> Result<()> {
        if self.recording.borrow().is_some() { Err(Error::MemoryInCapture { what }) } else { Ok(()) }
    }

    fn memory(mem: &Memory) -> Result<&emu::Memory> {
        match &mem.owner {
            Owner::Emulated(m) => Ok(m),
            Owner::Cuda(_) => Err(Error::OtherDevice { what: "memory a GPU allocated" }),
        }
    }

    fn memory_mut(mem: &mut Memory) -> Result<&mut emu::Memory> {
        match &mut mem.owner {
            Owner::Emulated(m) => Ok(m),
            Owner::Cuda(_) => Err(Error::OtherDevice { what: "memory a GPU allocated" }),
        }
    }

    fn recorded(graph: &Captured) -> Result<&[Recorded]> {
        match graph {
            Captured::Emulated(launches) => Ok(launches),
            Captured::Cuda(_) => Err(Error::OtherDevice { what: "a graph a GPU captured" }),
        }
    }

    fn time(runs: usize, work: &mut dyn FnMut(usize) -> Result<()>) -> Result<Vec<f64>> {
        (0..runs)
            .map(|r| {
                let start = Instant::now();
                work(r)?;
                Ok(start.elapsed().as_secs_f64() * 1e3)
            })
            .collect()
    }
}

impl Backend for Emulated {
    fn alloc(&self, bytes: usize) -> Result<Memory> {
        self.not_capturing("device memory allocated")?;
        let mem = emu::Memory::zeroed(bytes).ok_or(Error::OutOfHostMemory { needed: bytes as u64 })?;
        Ok(Memory::new(mem.address() as u64, bytes, Owner::Emulated(mem)))
    }

    fn alloc_shared(&self, bytes: usize) -> Result<(SharedOwner, u64, *mut u8)> {
        let mem = emu::Memory::zeroed(bytes).ok_or(Error::OutOfHostMemory { needed: bytes as u64 })?;
        let address = mem.address();
        Ok((SharedOwner::Emulated(mem), address as u64, address as *mut u8))
    }

    /// Poison, with a shadow of what has been written: a kernel's read of a
    /// byte nothing wrote is a named fault (`emu::Fault::Uninitialized`).
    fn alloc_uninit(&self, bytes: usize) -> Result<Memory> {
        self.not_capturing("device memory allocated")?;
        let mem = emu::Memory::uninit(bytes).ok_or(Error::OutOfHostMemory { needed: bytes as u64 })?;
        Ok(Memory::new(mem.address() as u64, bytes, Owner::Emulated(mem)))
    }

    fn write(&self, dst: &mut Memory, offset: usize, src: &[u8]) -> Result<()> {
        self.not_capturing("a copy to the device")?;
        Self::memory_mut(dst)?.write(offset, src);
        Ok(())
    }

    fn read(&self, src: &Memory, offset: usize, dst: &mut [u8]) -> Result<()> {
        self.not_capturing("a copy from the device")?;
        Self::memory(src)?.read(offset, dst);
        Ok(())
    }

    fn copy(&self, src: &Memory, src_offset: usize, dst: &mut Memory, dst_offset: usize, bytes: usize) -> Result<()> {
        self.not_capturing("a copy on the device")?;
        Self::memory_mut(dst)?.copy_from(dst_offset, Self::memory(src)?, src_offset, bytes);
        Ok(())
    }

    fn fill(&self, dst: &mut Memory, offset: usize, pattern: &[u8], count: usize) -> Result<()> {
        self.not_capturing("a fill of device memory")?;
        Self::memory_mut(dst)?.fill(offset, pattern, count);
        Ok(())
    }

    /// The emulated device's memory is the host's.
    fn free_memory(&self) -> Result<u64> {
        Ok(crate::device::host_available().unwrap_or(u64::MAX))
    }

    fn load<'g>(&'g self, spec: &KernelSpec, module: Option<&'g Module>) -> Result<Box<dyn Function + 'g>> {
        if module.is_some() {
            return Err(Error::NotOnEmulator("a kernel from a CUDA module"));
        }
        Ok(Box::new(EmulatedKernel { emulated: self, spec: spec.clone() }))
    }

    fn load_module_file(&self, _path: &std::path::Path) -> Result<std::sync::Arc<cudarc::driver::CudaModule>> {
        Err(Error::NotOnEmulator("loading a CUDA module"))
    }

    fn finish(&self) -> Result<()> {
        // A launch on the emulator has finished when it returns.
        Ok(())
    }

    fn hold(&self, _time: Duration) -> Result<()> {
        // Each emulated launch runs to completion when made: nothing is queued to hold.
        Ok(())
    }

    fn time_queued(&self, runs: usize, work: &mut dyn FnMut(usize) -> Result<()>) -> Result<Vec<f64>> {
        Self::time(runs, work)
    }

    fn time_waited(&self, runs: usize, work: &mut dyn FnMut(usize) -> Result<()>) -> Result<Vec<f64>> {
        Self::time(runs, work)
    }

    fn queue_timed(&self, runs: usize, work: &mut dyn FnMut(usize) -> Result<()>) -> Result<Queued> {
        Ok(Queued::Emulated(Self::time(runs, work)?))
    }

    fn queued_times(&self, queued: Queued) -> Result<Vec<f64>> {
        match queued {
            Queued::Emulated(times) => Ok(times),
            Queued::Cuda(_) => Err(Error::OtherDevice { what: "runs a GPU queued" }),
        }
    }

    fn communicator(&self, id: &super::CommId, rank: u32, ranks: u32) -> Result<Comm> {
        match id {
            super::CommId::StandIn(s) => {
                s.join(rank, ranks)?;
                Ok(Comm::StandIn(s.clone()))
            }
            #[cfg(feature = "nccl")]
            super::CommId::Nccl(_) => Err(Error::NotOnEmulator("NCCL")),
        }
    }

    fn all_reduce_sum(&self, comm: &super::Communicator, src: &Memory, src_offset: usize, dst: &mut Memory, dst_offset: usize, count: usize) -> Result<()> {
        #[cfg_attr(not(feature = "nccl"), allow(irrefutable_let_patterns))]
        let Comm::StandIn(stand_in) = &comm.inner else { return Err(Error::OtherDevice { what: "an NCCL communicator" }) };
        let mut bytes = vec![0u8; count * 4];
        self.read(src, src_offset, &mut bytes)?;
        let sum = stand_in.all_reduce_sum(comm.rank(), bytemuck::cast_slice(&bytes).to_vec())?;
        self.write(dst, dst_offset, bytemuck::cast_slice(&sum))
    }

    fn set_timeout(&self, timeout: Duration) {
        self.options.set(emu::Options { timeout, ..self.options.get() });
    }

    fn capture(&self, work: &mut dyn FnMut() -> Result<()>) -> Result<Captured> {
        if self.in_branch.get() || self.recording.borrow().is_some() {
            return Err(Error::NestedStreams { what: "a graph capture" });
        }
        *self.recording.borrow_mut() = Some(Vec::new());
        // A panic in `work` still ends the recording before it goes on:
        // launches made after it run, as they would after any capture.
        let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(&mut *work));
        let launches = self.recording.borrow_mut().take().unwrap_or_default();
        made.unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        if launches.is_empty() {
            return Err(Error::EmptyGraph);
        }
        Ok(Captured::Emulated(launches))
    }

    /// One branch after another (see `Gpu::in_parallel`): each launch runs
    /// to completion when made, with its own barrier state, so no branch can
    /// wait on another.
    fn in_parallel(&self, branches: usize, work: &mut dyn FnMut(usize) -> Result<()>) -> Result<()> {
        if self.in_branch.replace(true) {
            return Err(Error::NestedStreams { what: "a branch of in_parallel" });
        }
        let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (0..branches).try_for_each(&mut *work)));
        self.in_branch.set(false);
        made.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }

    /// Runs the recorded launches in order, each as when it was captured.
    fn launch_graph(&self, graph: &Captured) -> Result<()> {
        let launches = Self::recorded(graph)?;
        for l in launches {
            // SAFETY: each was a checked launch when captured, and the caller
            // keeps its buffers alive as for a launch.
            unsafe { self.run(&l.spec, l.shape, l.cooperative, &l.args)? };
        }
        Ok(())
    }

    fn take_traces(&self) -> Vec<super::LaunchTrace> {
        std::mem::take(&mut *self.traces.borrow_mut())
    }

    fn graph_cooperative_launches(&self, graph: &Captured) -> Result<Vec<bool>> {
        let launches = Self::recorded(graph)?;
        Ok(launches.iter().map(|l| l.cooperative).collect())
    }
}

/// Says once per process, on stderr, that the emulator sizes a kernel's
/// grid without its registers where its PTX was built but ptxas was not
/// found (an emulator-only build has no PTX to ask, by design): such a grid
/// may hold more blocks than a GPU's would.
fn note_registers_unknown(spec: &KernelSpec) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    let Ok(ptx) = crate::ptx_of(spec.krate) else { return };
    if !spec.in_ptx || ptx.plain.is_empty() {
        return;
    }
    if let Err(why) = ptx.ptxas_sm75 {
        ONCE.call_once(|| {
            eprintln!(
                "note: the emulator sizes grids without the kernels' registers ({why}): blocks per SM may be more than a GPU runs, until it is rebuilt where ptxas is found"
            )
        });
    }
}

struct EmulatedKernel<'g> {
    emulated: &'g Emulated,
    spec: KernelSpec,
}

impl Function for EmulatedKernel<'_> {
    fn most_atomics_on_one_word(&self) -> Option<u64> {
        self.emulated.last_atomics.get()
    }

    fn occupancy(&self, threads_per_block: u32, shared_bytes: u32) -> Result<Occupancy> {
        let registers_per_thread = self.spec.registers();
        if registers_per_thread.is_none() {
            note_registers_unknown(&self.spec);
        }
        let blocks_per_sm = self.emulated.device.blocks_per_sm_using(threads_per_block, shared_bytes, registers_per_thread);
        Ok(Occupancy { blocks_per_sm, registers_per_thread, static_shared_bytes: 0 })
    }

    fn max_active_clusters(&self, shape: Shape) -> Result<u32> {
        let fault = |why: String| Error::Emulated { kernel: self.spec.name, fault: Box::new(emu::Fault::InvalidClusterSize(why)), launch: None };
        let occupancy = self.occupancy(shape.threads_per_block, shape.shared_bytes)?;
        let device = &self.emulated.device;
        match device.cluster_ceiling(occupancy.blocks_per_sm, shape.cluster.map_or(1, |c| c.blocks)) {
            Some(clusters) => Ok(clusters),
            None => Err(fault("this emulated device (the lesson's T4, compute capability 7.5) has no thread-block clusters: they need 9.0".into())),
        }
    }

    unsafe fn launch_entry(&self, shape: Shape, cooperative: bool, watched: Option<bool>, args: &[ArgRepr]) -> Result<()> {
        if watched.is_some() {
            return Err(Error::NotOnEmulator("a launch of a chosen grid-barrier entry (the emulator chooses by the grid's size, as the host does)"));
        }
        if let Some(recording) = self.emulated.recording.borrow_mut().as_mut() {
            recording.push(Recorded { spec: self.spec.clone(), shape, cooperative, args: args.to_vec() });
            self.emulated.last_atomics.set(None);
            return Ok(());
        }
        // SAFETY: the caller's contract.
        unsafe { self.emulated.run(&self.spec, shape, cooperative, args) }
    }
}

/// A launch as a report names it: `exercise_sum on 1 block of 256 threads,
/// with input holding 1 element, partials 1, out 1, and n = 257`.
fn describe(spec: &KernelSpec, shape: Shape, args: &[ArgRepr]) -> String {
    let mut buffers = Vec::new();
    let mut numbers = Vec::new();
    for (a, name) in args.iter().zip(spec.params) {
        match *a {
            ArgRepr::In { len, .. } | ArgRepr::Out { len, .. } => buffers.push((name, len)),
            ArgRepr::Value(v, show) => numbers.push(format!("{name} = {}", show(v))),
        }
    }
    let buffers: Vec<String> = buffers
        .iter()
        .enumerate()
        .map(|(k, (name, len))| if k == 0 { format!("{name} holding {}", plural(*len as u64, "element", "elements")) } else { format!("{name} {len}") })
        .collect();
    let mut with: Vec<String> = buffers;
    with.extend(numbers);
    let with = match with.as_slice() {
        [] => String::new(),
        [one] => format!(", with {one}"),
        [rest @ .., last] => format!(", with {} and {last}", rest.join(", ")),
    };
    format!("{} on {} of {}{with}", spec.name, plural(shape.blocks.into(), "block", "blocks"), plural(shape.threads_per_block.into(), "thread", "threads"))
}

impl Emulated {
    /// Runs one launch to completion.
    ///
    /// # Safety
    /// As [`Function::launch`].
    unsafe fn run(&self, spec: &KernelSpec, shape: Shape, cooperative: bool, args: &[ArgRepr]) -> Result<()> {
        let mut slot = 0;
        let emu_args: Vec<emu::Arg> = args
            .iter()
            .zip(spec.params)
            .map(|(a, &name)| match *a {
                ArgRepr::In { address, len, elem, .. } => emu::Arg::In { name, address: address as usize, len, elem },
                ArgRepr::Out { address, len, elem, .. } => {
                    slot += 1;
                    emu::Arg::Out { name, address: address as usize, len, elem, slot: slot - 1 }
                }
                ArgRepr::Value(v, _) => emu::Arg::Value(v),
            })
            .collect();
        let sink = Mutex::new(Vec::new());
        let launch = emu::Launch {
            kernel: spec.name,
            grid: shape.blocks,
            threads: shape.threads_per_block,
            shared_bytes: shape.shared_bytes,
            shared_tail: shape.shared_bytes.saturating_sub((spec.dynamic_shared)(shape.threads_per_block)),
            registers_per_thread: spec.registers(),
            cooperative,
            grid_sync: spec.grid_sync,
            cluster: shape.cluster,
            cluster_kernel: spec.cluster,
            args: &emu_args,
            entry: &*spec.emulated,
            trace: self.tracing.get().then_some(&sink),
        };
        let options = self.options.get();
        let options = emu::Options { on_runaway: options.on_runaway.or(Some(runaway)), ..options };
        // SAFETY: the caller's contract (`Function::launch`): each buffer
        // argument addresses its `len` elements of live memory that nothing
        // else touches while the launch runs (the host is in this call); no
        // two arguments overlap where one is written, which
        // `Gpu::check_args` refused before any launch reached here.
        let result = unsafe { self.device.launch(&launch, &options) };
        self.last_atomics.set(result.as_ref().ok().map(|s| s.most_atomics_on_one_word));
        if self.tracing.get() {
            self.traces.borrow_mut().push(super::LaunchTrace {
                kernel: spec.name,
                blocks: shape.blocks,
                threads_per_block: shape.threads_per_block,
                cooperative,
                cluster: shape.cluster.map(|c| c.blocks),
                unit: super::TraceUnit::EmulatorSteps,
                trace: sink.into_inner().unwrap_or_else(|e| e.into_inner()),
                error: result.as_ref().err().map(|f| f.to_string()),
            });
        }
        result.map(|_| ()).map_err(|fault| {
            // A bad index names the launch too: the argument that sized it may be the mistake.
            let launch = matches!(fault, emu::Fault::OutOfBounds { .. } | emu::Fault::Uninitialized { .. } | emu::Fault::Misaligned { .. })
                .then(|| describe(spec, shape, args));
            Error::Emulated { kernel: spec.name, fault: Box::new(fault), launch }
        })
    }
}
