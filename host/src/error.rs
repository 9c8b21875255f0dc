//! The one error type at the host boundary. Each variant's `Display` is the
//! single line a user reads: what is wrong and what to do.

use crate::sizing::Limits;
use cudarc::driver::DriverError;
use std::fmt;

#[derive(Debug)]
pub enum Error {
    /// `libcuda` could not be loaded.
    NoDriver,
    /// The driver is there but reports no device at that index.
    NoDevice { requested: usize, count: usize },
    /// Cooperative launch needs compute capability 6.0 or newer.
    ComputeCapabilityTooLow { name: String, major: i32, minor: i32 },
    /// The device or platform does not support cooperative launch.
    NoCooperativeLaunch { name: String },
    /// A driver call failed.
    Driver { call: &'static str, error: DriverError },
    /// A cooperative grid larger than can be resident at once was asked for;
    /// refused before launching, because its barrier could never complete.
    CooperativeGridTooLarge { kernel: &'static str, requested: u64, limits: Limits },
    /// A launch of zero blocks was asked for.
    EmptyGrid { kernel: &'static str },
    /// Threads per block the device or this program cannot use.
    BadBlockSize { block: u32, max: u32 },
    /// A buffer is shorter than the kernel's contract needs.
    BufferTooShort { kernel: &'static str, buffer: &'static str, needed: usize, got: usize },
    /// Not enough free device memory for the input.
    OutOfDeviceMemory { needed: u64, free: u64 },
    /// A kernel failed while running (the launch itself was accepted).
    KernelFailed { kernel: &'static str, error: DriverError },
    /// The device did not finish within the host's time limit.
    Timeout { kernel: &'static str, seconds: f64 },
    /// A diagnosing `grid.sync()` gave up (build feature `barrier-timeout`).
    GridBarrierTimedOut { kernel: &'static str, report: gpu::cg::barrier::Report },
    /// A grid of more blocks than a launch can describe.
    GridTooLarge { kernel: &'static str, blocks: u64 },
    /// A launch on the emulated device failed.
    Emulated { kernel: &'static str, fault: gpu::emu::Fault },
    /// A command that measures a real GPU was asked of the emulator.
    NotOnEmulator(&'static str),
    /// Not enough host memory for the input and its reference.
    OutOfHostMemory { needed: u64 },
    /// The benchmark's plot could not be written.
    Plot(String),
    /// One or more of the run's checks failed; each is listed by name above.
    ChecksFailed(Vec<String>),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps a failed driver call, naming the call.
    pub fn driver(call: &'static str) -> impl FnOnce(DriverError) -> Error {
        move |error| Error::Driver { call, error }
    }

    /// The driver's name for the error (`CUDA_ERROR_...`), where there is one.
    pub fn driver_name(&self) -> Option<String> {
        match self {
            Error::Driver { error, .. } | Error::KernelFailed { error, .. } => error.error_name().ok().map(|n| n.to_string_lossy().into_owned()),
            Error::Emulated { fault, .. } => Some(fault.driver_name().to_string()),
            _ => None,
        }
    }
}

const MIB: f64 = 1024.0 * 1024.0;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoDriver => write!(f, "no NVIDIA driver found (libcuda could not be loaded): install the NVIDIA driver, or run this on a machine with an NVIDIA GPU"),
            Error::NoDevice { requested, count } => write!(f, "no CUDA device {requested}: the driver reports {count} device(s), so use --device 0..{}", count.saturating_sub(1)),
            Error::ComputeCapabilityTooLow { name, major, minor } => write!(f, "{name} is compute capability {major}.{minor}; cooperative launch needs 6.0 or newer"),
            Error::NoCooperativeLaunch { name } => write!(f, "{name} does not support cooperative launch (cudaDevAttrCooperativeLaunch = 0); on Linux, stop MPS or use a device of compute capability 7.0 or newer"),
            Error::Driver { call, error } => {
                let name = error.error_name().ok().and_then(|n| n.to_str().ok()).unwrap_or("unknown error");
                let text = error.error_string().ok().and_then(|s| s.to_str().ok()).unwrap_or("");
                write!(f, "{call} failed: {name}: {text}")
            }
            Error::CooperativeGridTooLarge { kernel, requested, limits } => write!(
                f,
                "cooperative launch of {kernel} with {requested} blocks refused: at most {} can be resident at once ({} blocks/SM x {} SMs; blocks/SM limited by {})",
                limits.capacity(),
                limits.blocks_per_sm,
                limits.sms,
                limits.explain()
            ),
            Error::EmptyGrid { kernel } => write!(f, "launch of {kernel} with 0 blocks refused: a grid needs at least one block (for n = 0, return without launching)"),
            Error::BadBlockSize { block, max } => write!(f, "--block {block} is not usable: threads per block must be a multiple of 32 from 32 to {max}"),
            Error::BufferTooShort { kernel, buffer, needed, got } => write!(f, "{kernel}: {buffer} holds {got} elements but the launch needs {needed}"),
            Error::OutOfDeviceMemory { needed, free } => write!(
                f,
                "the input needs {:.1} MiB of device memory but only {:.1} MiB is free: use a smaller --n",
                *needed as f64 / MIB,
                *free as f64 / MIB
            ),
            Error::KernelFailed { kernel, error } => {
                let name = error.error_name().ok().and_then(|n| n.to_str().ok()).unwrap_or("unknown error");
                write!(f, "{kernel} failed while running: {name}")
            }
            Error::Timeout { kernel, seconds } => write!(
                f,
                "{kernel} did not finish within {seconds} s: a kernel is stuck (a barrier that some thread never reaches?); exiting ends it (raise the limit with --timeout-s)"
            ),
            Error::GridBarrierTimedOut { kernel, report } => write!(
                f,
                "grid barrier timed out in {kernel}: {} of {} blocks arrived (block {} gave up after {} s)",
                report.arrived,
                report.expected,
                report.block,
                gpu::cg::barrier::TIMEOUT_NS as f64 / 1e9
            ),
            Error::NotOnEmulator(what) => write!(f, "{what} measures a GPU, so it does not run on the emulated one: drop --emulate"),
            Error::GridTooLarge { kernel, blocks } => write!(f, "launch of {kernel} with {blocks} blocks refused: a grid has at most {} blocks", u32::MAX),
            Error::Emulated { kernel, fault } => write!(f, "{kernel} on the emulated device: {fault}"),
            Error::OutOfHostMemory { needed } => write!(f, "the input needs {:.1} MiB of host memory, which could not be allocated: use a smaller --n", *needed as f64 / MIB),
            Error::Plot(why) => write!(f, "could not write the plot: {why}"),
            Error::ChecksFailed(names) => write!(f, "{} check(s) failed: {}", names.len(), names.join("; ")),
        }
    }
}

impl std::error::Error for Error {}
