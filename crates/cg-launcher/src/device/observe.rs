//! Watching launches: what `cg_launcher::observe` re-exports (its docs say
//! what for), and the `Gpu` methods that make them.

use super::{EmulatedDevice, EmulatorOptions, Gpu, cuda, emulated};
use crate::error::Result;
use serde::Serialize;

pub use cg_emulator::BlockTrace;

/// How a GPU opened with the traced kernels treats their records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tracing {
    /// Each launch waits for its blocks and its trace is read ([`Gpu::take_traces`]).
    Read,
    /// Every launch records into one buffer nobody reads: launches queue as
    /// usual, so timing them times the recording.
    Unread,
}

/// What a trace's times count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceUnit {
    /// `%globaltimer` on a GPU.
    Nanoseconds,
    /// Memory accesses the whole emulated launch has made so far.
    EmulatorSteps,
}

/// One traced launch: each block's course through it (see `cg_kernel::trace`).
#[derive(Clone, Debug)]
pub struct LaunchTrace {
    /// The kernel's name.
    pub kernel: &'static str,
    /// Blocks launched.
    pub blocks: u32,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Whether the launch was cooperative.
    pub cooperative: bool,
    /// Blocks per cluster, for a cluster launch.
    pub cluster: Option<u32>,
    /// What the trace's times count.
    pub unit: TraceUnit,
    /// The blocks that started, in block order.
    pub trace: Vec<BlockTrace>,
    /// How the launch ended, if it failed.
    pub error: Option<String>,
}

/// One launch as the launch path made it: which kernel, on what grid, how.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Launched {
    /// The kernel's name.
    pub kernel: &'static str,
    /// Blocks launched.
    pub blocks: u32,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Whether the launch was cooperative.
    pub cooperative: bool,
    /// On the emulator, once the launch has finished, the most atomic
    /// updates (`atomic_add` and the rest, not loads) that any one word of
    /// its buffers received from all its blocks
    /// ([`cg_emulator::LaunchStats::most_atomics_on_one_word`]): a GPU
    /// applies atomics on one address one after another, so a sum that adds
    /// every element with `out.atomic_add(0, x)` makes n of them in a row.
    /// `None` on a GPU, which does not count them, and for a launch that
    /// failed or was captured into a graph.
    pub most_atomics_on_one_word: Option<u64>,
}

impl Gpu {
    /// Runs `work`, and returns with its result every launch it made through
    /// a kernel's definition (what the exercise's harness checks a `Solved` against).
    /// Calls nest: an outer recording gets the inner one's launches too. If
    /// `work` panics, recording stops as it would have on return.
    pub fn recording_launches<R>(&self, work: impl FnOnce() -> R) -> (R, Vec<Launched>) {
        /// Puts the outer recording back, the launches made meanwhile added
        /// to it, when `work` returns or unwinds.
        struct Restore<'g> {
            gpu: &'g Gpu,
            outer: Option<Vec<Launched>>,
        }
        impl Drop for Restore<'_> {
            fn drop(&mut self) {
                let made = self.gpu.launches.replace(None).unwrap_or_default();
                *self.gpu.launches.borrow_mut() = self.outer.take().map(|mut o| {
                    o.extend(made);
                    o
                });
            }
        }
        let _restore = Restore { gpu: self, outer: self.launches.replace(Some(Vec::new())) };
        let r = work();
        let made = self.launches.borrow().clone().unwrap_or_default();
        (r, made)
    }

    pub(crate) fn note_launch(&self, launch: Launched) {
        if let Some(l) = self.launches.borrow_mut().as_mut() {
            l.push(launch);
        }
    }

    /// Adds what the emulator counted to the launch noted last.
    pub(crate) fn note_atomics(&self, most_on_one_word: Option<u64>) {
        if let Some(last) = self.launches.borrow_mut().as_mut().and_then(|l| l.last_mut()) {
            last.most_atomics_on_one_word = most_on_one_word;
        }
    }

    /// Opens CUDA device `ordinal` with the traced build of the kernels
    /// (`crate::ptx_of(krate)?.traced`): every launch then records each block's SM and
    /// times, and waits for the launch to read them ([`Gpu::take_traces`]).
    /// For pictures, not timings.
    pub fn open_traced(ordinal: usize, tracing: Tracing) -> Result<Gpu> {
        let (backend, info) = cuda::Cuda::open(ordinal, Some(tracing))?;
        Ok(Gpu::with(Box::new(backend), info))
    }

    /// The emulated device, recording each launch's blocks as [`Gpu::open_traced`] does.
    pub fn emulated_traced(device: EmulatedDevice, options: EmulatorOptions) -> Gpu {
        let (backend, info) = emulated::Emulated::new(device, options);
        backend.tracing.set(true);
        Gpu::with(Box::new(backend), info)
    }

    /// The launches traced since the last call (none unless opened traced).
    pub fn take_traces(&self) -> Vec<LaunchTrace> {
        self.backend.take_traces()
    }
}
