//! An emulated GPU on the CPU: the same kernel source, run with a GPU's
//! execution model, so a learner without a GPU can run, change and break the
//! lesson's kernels and be told what went wrong.
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
//!   (`emu::launch` says why), which makes every run deterministic.
//!   Atomics are the exception, as on a GPU: each updates the launch's
//!   memory at once, so every block sees one sequence of updates (`emu::atomic`).
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
//!   barriers alone keep a block going for ten timeouts' work (`watch` has the rule).
//!   The fault names what was running and where.
//! - **Interleavings**: by default each block runs its threads in order; with
//!   a seed ([`Options::seed`]) it picks the next thread and preempts at
//!   random, to shake out code that relies on an order the GPU does not promise.

// The floors, lowest first: each module uses only those above it in this
// list (`crates/cg-kernel/tests/emu_layers.rs` reads this list and holds every file to it).
//
// The ground: faults and where they happened, memory, the handler that
// names a coroutine stack's overflow, coroutine stacks, what a launch is,
// the per-worker clock, and the watchdog's rule.
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
// One launch: workers, the grid barrier, global memory between blocks.
mod launch;
// What kernels call: the emulated thread's view (`arch/cpu.rs`, `mem` and
// `cg` use it; private, since its functions trust their arguments).
pub(crate) mod thread;

pub use fault::{Access, Doing, Fault, PartialBarrier, Running, Site, Stall, ThreadId};
pub use memory::Memory;
pub use spec::{Arg, BlockTrace, ClusterCeilings, ClusterShape, Device, H200_CLUSTERS, Launch, LaunchStats, MAX_CLUSTER, MAX_PORTABLE_CLUSTER, Options};

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
