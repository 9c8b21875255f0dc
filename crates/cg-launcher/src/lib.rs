//! Launches GPU kernels written with `cg-kernel` from Rust on the host: on a
//! CUDA GPU through the driver API (`cudarc`, loaded at run time), or on the
//! emulated GPU that runs the same kernels on the CPU, behind one type,
//! [`Gpu`](device::Gpu).
//!
//! - [`device`]: opening a device ([`Gpu::open`](device::Gpu::open),
//!   [`Gpu::emulated`](device::Gpu::emulated)), typed device memory
//!   ([`Buffer`](device::Buffer), its views), streams run side by side
//!   ([`Gpu::in_parallel`](device::Gpu::in_parallel)), graphs
//!   ([`Gpu::capture`](device::Gpu::capture)), timed runs;
//! - [`launch`]: kernels loaded through the definitions `#[kernel]` emits, so
//!   their parameter types are checked at compile time. A kernel declared
//!   `#[kernel(cooperative)]` (it calls `grid.sync()`) loads only as a
//!   [`CooperativeKernel`](launch::CooperativeKernel), which has no ordinary
//!   launch, and launches only on a grid that its own occupancy says fits on
//!   the device at once: a grid barrier that cannot complete is refused by
//!   name before it is launched. Clusters (sm_90) likewise;
//! - [`sizing`]: the occupancy arithmetic, blocks per SM and why;
//! - [`error`]: one error type, each variant one line saying what to do;
//! - [`group`]: devices working as a group, a sum across them (NCCL's
//!   all-reduce on GPUs, with the module `nccl` and feature `nccl`; a host-side
//!   stand-in on the emulator);
//! - [`observe`]: watching launches, for tools (a record of which launches a
//!   closure made, per-block traces); nothing a launch needs.
//!
//! The kernels and their PTX come from the kernel crate linked into the
//! program (the one that says `cg_kernel::ptx!()`; `use my_kernels as _;`
//! is enough to link it); the launcher finds both by name.
//!
//! ```no_run
//! # mod my_kernels {
//! #   use cg_kernel::{kernel, cg::this_grid, mem::Out};
//! #   /// # Safety
//! #   /// `out` holds one element per block.
//! #   #[kernel(cooperative)]
//! #   pub unsafe fn mark(out: Out<u32>) {
//! #       this_grid().sync();
//! #   }
//! # }
//! use cg_launcher::device::{EmulatedDevice, EmulatorOptions, Gpu};
//! use cg_launcher::launch::ensure_len;
//!
//! fn main() -> cg_launcher::error::Result<()> {
//!     // A CUDA GPU where there is one, else the emulated T4, its threads
//!     // interleaved at random from seed 7 (a race found that way repeats).
//!     let options = EmulatorOptions { seed: Some(7), ..Default::default() };
//!     let gpu = Gpu::open(0).unwrap_or_else(|_| Gpu::emulated(EmulatedDevice::T4, options));
//!     let kernel = gpu.cooperative_kernel(&my_kernels::MARK)?;
//!     let limits = kernel.limits(256)?; // blocks per SM x SMs, from the occupancy API
//!     let launch = kernel.configure(limits.capacity(), 256)?; // refused if it could not be resident
//!     let mut out = gpu.zeros::<u32>(launch.blocks() as usize)?;
//!     ensure_len("mark", "out", launch.blocks() as usize, out.len())?;
//!     // SAFETY: `out` holds one element per block (checked above).
//!     unsafe { launch.launch((out.slice_mut(..),))? };
//!     gpu.finish()?;
//!     Ok(())
//! }
//! ```
//!
//! # Process-wide effects
//!
//! The first launch on an emulated device changes four things of the
//! whole process, once, and leaves them so (each in `cg_emulator`):
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
//!
//! A CUDA device changes none of them.
#![deny(missing_docs)]

pub mod device;
mod driver;
pub mod error;
pub mod group {
    //! Devices working as a group: the sum of a buffer across them
    //! ([`Gpu::all_reduce_sum`](crate::device::Gpu::all_reduce_sum) through a
    //! [`Communicator`] that
    //! [`Gpu::communicator`](crate::device::Gpu::communicator) joins): NCCL's
    //! all-reduce on GPUs (feature `nccl`), a host-side stand-in on the
    //! emulator, whose ranks are the caller's threads.
    pub use crate::device::group::{CommId, Communicator, MAX_STAND_IN_RANKS, StandIn};
}
pub mod launch;
#[cfg(feature = "nccl")]
pub mod nccl;
pub mod observe {
    //! Watching launches, for tools built on the launcher (the lesson's
    //! `trace` command and its exercise's harness are two): no program needs
    //! them to launch anything.
    //!
    //! - **A record of launches**: [`Gpu::recording_launches`] runs a closure
    //!   and returns, with its result, a [`Launched`] for each launch it made
    //!   through a kernel's definition: which kernel, on what grid, whether
    //!   cooperative, and on the emulator how many atomics its busiest word took.
    //! - **Traces**: a device opened traced ([`Gpu::open_traced`],
    //!   [`Gpu::emulated_traced`]) runs the kernels' traced build, in which each
    //!   block records its SM and when it started, met its first `grid.sync()`
    //!   and ended; [`Gpu::take_traces`] hands them over as [`LaunchTrace`]s.
    //!   For pictures, not timings: a traced launch waits for its records.
    #[cfg(doc)]
    use crate::device::Gpu;
    pub use crate::device::observe::{BlockTrace, LaunchTrace, Launched, TraceUnit, Tracing};
}
mod shape;
pub mod sizing;

/// The PTX of kernel crate `krate` linked into this program (its
/// `cg_kernel::ptx!()`), or why there is none: a kernel whose crate did not
/// say `ptx!()`, or was not linked.
pub(crate) fn ptx_of(krate: &str) -> error::Result<&'static cg_kernel::kernels::Ptx> {
    cg_kernel::kernels::ptx_of(krate).map_err(|e| error::Error::NotLinked(e.to_string()))
}
