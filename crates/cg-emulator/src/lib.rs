//! An emulated NVIDIA GPU on the CPU, for kernels written with
//! [cg-kernel](https://docs.rs/cg-kernel): the same kernel source, run with a
//! GPU's execution model, so a learner without a GPU can run, change and
//! break kernels and be told what went wrong.
//!
//! Most programs never name this crate: cg-launcher's `Gpu::emulated` opens
//! an emulated device behind the same API as a CUDA one, and cg-kernel's
//! host build calls [`thread`] from every instruction, memory access and
//! collective of a kernel. [`Device::launch`] is the way in beneath that,
//! for a launcher of one's own.
//!
//! - **Threads**: every GPU thread is a stackful coroutine; a block's threads
//!   run on one worker thread, switching only where a GPU thread waits (a
//!   block barrier, a warp collective, `grid.sync()`, a spin on memory). One
//!   worker per core runs whole blocks, and a block whose threads all poll
//!   a word only another block can change gives its worker way, so that
//!   blocks waiting for each other finish with any number of workers.
//!   Stacks: each thread has a slot of 256 KiB above a guard page, and a
//!   parked block's stacks are saved aside.
//! - **The device** has SMs with per-SM limits ([`Device`]), so occupancy,
//!   the cooperative maximum and the refusal of one block more behave as on
//!   hardware; the default is the lesson's Tesla T4.
//! - **Memory**: a block sees other blocks' writes only after `grid.sync()`
//!   (`launch.rs` says why), which makes every run deterministic.
//!   Atomics are the exception, as on a GPU: each updates the launch's
//!   memory at once, so every block sees one sequence of updates (`atomic.rs`).
//! - **Checks a GPU needs a sanitizer for**: an access outside a kernel
//!   parameter's buffer or the dynamic shared memory, a misaligned vector
//!   load, a data race in a block (no barrier between two threads' accesses,
//!   one a write) or between blocks (no `grid.sync()` between), a barrier met
//!   from different places, and a deadlock (every live thread waits for
//!   something that cannot happen), each a [`Fault`] that names the kernel,
//!   the threads, the source line and what is missing.
//! - **Stuck, not slow**: a launch is stopped only when no block has ended
//!   and no barrier completed for [`Options::timeout`], counted in the
//!   emulator's own steps, so a loaded machine gives an idle one's verdict;
//!   barriers alone keep a block going for ten timeouts' work (`watch.rs` has the rule).
//!   The fault names what was running and where.
//! - **Interleavings**: by default each block runs its threads in order; with
//!   a seed ([`Options::seed`]) it picks the next thread and preempts at
//!   random, to shake out code that relies on an order the GPU does not promise.
//!
//! # Process-wide effects
//!
//! The first launch changes four things of the whole process, once, and
//! leaves them so:
//! - glibc's malloc is told to keep what the workers' heaps grew to
//!   (`mallopt(M_TOP_PAD, 64 MiB)`, `mallopt(M_TRIM_THRESHOLD, 256 MiB)`):
//!   parked blocks save their threads' stacks on the heap, and giving those
//!   pages back at every free cost the emulator a sixth of its time;
//! - a panic hook is put in front of the one before it, which it still calls
//!   for every panic outside an emulated kernel: a kernel's panic becomes
//!   the launch's named fault instead of a message on stderr;
//! - a `SIGSEGV` handler is installed, which names an emulated thread's
//!   stack overflow (a guard page of its stack) on stderr, with its kernel,
//!   block and thread, before the process dies of the signal (no launch
//!   returns from it), and hands every other `SIGSEGV` to the handler before it;
//! - the regions of stack slots its workers mapped are kept for later
//!   launches (at most 64 regions of 65,536 slots in all, address space
//!   mapped without reserve; a region of more than 256 slots has the pages
//!   its stacks touched handed back lazily, with `MADV_FREE`): mapping them
//!   and their guard pages again cost a small launch most of its time.
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(missing_docs)]

// The floors, lowest first: each module uses only those above it in this
// list (`tests/emu_layers.rs` reads this list and holds every file to it).
//
// The ground: who and where (the words of every report), what a stopped
// launch saw, faults, memory, the handler that names a coroutine stack's
// overflow, coroutine stacks, what a launch is, the per-worker clock, and
// the watchdog's rule.
mod site;
mod stall;
pub mod fault;
mod memory;
mod overflow;
mod stack;
mod spec;
mod clock;
mod watch;
// What every block of a launch shares, and panics turned into faults.
mod info;
// The race shadow of one word.
mod race;
// One thread's and one warp's state; one block's memory.
mod warp;
mod shared;
// A cluster's barrier and distributed shared memory.
mod cluster;
// One block: its barrier and faults, then its warp collectives, its memory
// accesses, its atomics, and its reports.
mod block;
mod collectives;
mod access;
mod atomic;
mod report;
// The scheduler that runs a block's threads as coroutines.
mod scheduler;
// A traced launch laid out in the emulated device's time.
mod timeline;
// Global memory between two grid barriers: the races it shows, its publication.
mod phase;
// One launch: workers, the grid barrier, global memory between blocks.
mod launch;
// What kernels call: the emulated thread's view (cg-kernel's `arch/cpu.rs`,
// `mem` and `cg` use it; the functions that trust their arguments are `unsafe`).
pub mod thread;

pub use fault::{Access, Doing, Fault, PartialBarrier, Running, Site, Stall, ThreadId};
pub use memory::Memory;
pub use spec::{
    Arg, BlockTrace, ClusterCeilings, ClusterShape, Device, H200_CLUSTERS, Launch, LaunchStats, MAX_CLUSTER, MAX_PORTABLE_CLUSTER, MAX_THREADS_PER_BLOCK,
    Options,
};

impl Device {
    /// Runs a launch to completion: `Ok` once every thread has returned, or
    /// the fault that stopped it.
    ///
    /// # Safety
    /// The kernel reads and writes host memory at the addresses `launch.args`
    /// give, as a kernel on a GPU would, so for the whole call:
    /// - every [`Arg::In`] and [`Arg::Out`] addresses `len` elements of
    ///   `elem` bytes (1, 2, 4 or 8) of live memory, aligned to `elem`;
    /// - nothing writes an `In` argument's memory, and nothing but this
    ///   launch reads or writes an `Out` argument's, and no two `Out`
    ///   arguments overlap;
    /// - `launch.entry` called with `launch.args` satisfies the safety
    ///   contract of the kernel it calls (each argument of the kind its
    ///   parameter takes, and as long as the kernel reads and writes);
    /// - the kernel lends no reference to its own stack to another OS
    ///   thread (it starts none that outlives a barrier or a fault): each
    ///   GPU thread runs on a stack slot that the emulator copies out and
    ///   gives to another block while the thread waits at `grid.sync()`,
    ///   and a thread whose launch faulted is abandoned where it stopped.
    pub unsafe fn launch(&self, launch: &Launch, options: &Options) -> Result<LaunchStats, Fault> {
        launch::run(self, launch, options)
    }
}
