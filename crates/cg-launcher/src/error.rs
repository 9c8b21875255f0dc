//! The launcher's error type. Each variant's `Display` is one line: what is
//! wrong and what to do.

use crate::sizing::{BadBlock, Limits};
use std::fmt;

/// `n` and the noun for it: `1 SM`, `40 SMs`.
pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A CUDA driver call's failure: its `CUresult`, with the driver's name and
/// description for it. The driver binding's own error type (cudarc's) is
/// this one's [`source`](std::error::Error::source), not part of this API.
#[derive(Debug, Clone)]
pub struct DriverError {
    code: i32,
    name: String,
    description: String,
    source: cudarc::driver::DriverError,
}

impl DriverError {
    /// The `CUresult` value (`CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE` is 720).
    pub fn code(&self) -> i32 {
        self.code
    }

    /// The driver's name for it (`CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE`),
    /// or `an unknown error` where the driver has none.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The driver's description of it.
    pub fn description(&self) -> &str {
        &self.description
    }
}

impl DriverError {
    /// The error from the binding's, which stays inside this crate: a
    /// function, not a `From` impl, so that cudarc's type is no part of
    /// this crate's public API (a `From` impl would be).
    pub(crate) fn from_cudarc(e: cudarc::driver::DriverError) -> Self {
        let text = |r: Result<&std::ffi::CStr, _>| r.ok().map(|c: &std::ffi::CStr| c.to_string_lossy().into_owned());
        DriverError {
            code: e.0 as i32,
            name: text(e.error_name()).unwrap_or_else(|| "an unknown error".to_string()),
            description: text(e.error_string()).unwrap_or_default(),
            source: e,
        }
    }
}

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.description.as_str() {
            "" => write!(f, "{}", self.name),
            d => write!(f, "{}: {d}", self.name),
        }
    }
}

impl std::error::Error for DriverError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

#[derive(Debug)]
#[non_exhaustive]
/// What went wrong, in a form a caller can match and a user can read.
pub enum Error {
    /// `libcuda` could not be loaded.
    NoDriver,
    /// A GPU asked of a program whose kernels were built for the emulator only (empty PTX).
    EmulatorOnlyBuild,
    /// A traced device asked of a program whose kernel crate built no traced
    /// module (`cg_builder::Builder::traced`).
    NoTracedModule,
    /// A kernel's PTX is not in the program: its crate said no
    /// `cg_kernel::ptx!()`, or is not linked (the registry's words).
    NotLinked(String),
    /// A graph capture that captured no launch.
    EmptyGraph,
    /// The driver is there but reports no device at that index.
    NoDevice {
        /// The device asked for.
        requested: usize,
        /// Devices the driver reports.
        count: usize,
    },
    /// The kernels' PTX needs compute capability 7.0 or newer.
    ComputeCapabilityTooLow {
        /// The device's name.
        name: String,
        /// Compute capability, major.
        major: i32,
        /// Compute capability, minor.
        minor: i32,
    },
    /// Streams or a capture begun inside a branch of `in_parallel` or a capture.
    NestedStreams {
        /// What was begun.
        what: &'static str,
    },
    /// A graph captured more watched launches than it has barrier memory for.
    GraphBarriersExhausted {
        /// The kernel's name.
        kernel: &'static str,
        /// Cooperative launches one graph may hold.
        max: usize,
    },
    /// The watched entry of a kernel that has none (a module from a file).
    NoWatchedEntry {
        /// The kernel's name.
        kernel: &'static str,
    },
    /// The device or platform does not support cooperative launch.
    NoCooperativeLaunch {
        /// The device's name.
        name: String,
    },
    /// A driver call failed.
    Driver {
        /// The driver call.
        call: &'static str,
        /// The driver's error.
        error: DriverError,
    },
    /// A cooperative grid larger than can be resident at once was asked for;
    /// refused before launching, because its barrier could never complete.
    CooperativeGridTooLarge {
        /// The kernel's name.
        kernel: &'static str,
        /// Blocks asked for.
        requested: u32,
        /// What the device holds of this kernel at that block size.
        limits: Box<Limits>,
    },
    /// A cluster kernel on a GPU older than compute capability 9.0.
    ClustersNeedSm90 {
        /// The kernel's name.
        kernel: &'static str,
        /// Compute capability, major.
        major: i32,
        /// Compute capability, minor.
        minor: i32,
    },
    /// A cluster size the device cannot take, or that does not divide the grid.
    BadCluster {
        /// The kernel's name.
        kernel: &'static str,
        /// Why it was refused.
        why: String,
    },
    /// A cooperative cluster launch past the clusters that fit at once.
    ClusterGridTooLarge {
        /// The kernel's name.
        kernel: &'static str,
        /// Blocks asked for.
        requested: u32,
        /// Blocks per cluster.
        cluster: u32,
        /// Clusters resident at once.
        clusters: u32,
        /// Blocks the block ceiling allows.
        block_ceiling: u32,
    },
    /// A cooperative launch of a kernel from another module, larger than fits.
    ForeignGridTooLarge {
        /// The kernel's name.
        kernel: &'static str,
        /// Blocks asked for.
        requested: u32,
        /// Blocks that can be resident at once.
        capacity: u32,
    },
    /// A launch of zero blocks was asked for.
    EmptyGrid {
        /// The kernel's name.
        kernel: &'static str,
    },
    /// A grid of more blocks than a launch can describe.
    GridTooLarge {
        /// The kernel's name.
        kernel: &'static str,
        /// Blocks asked for.
        blocks: u64,
    },
    /// A grid of 2^32 threads or more: cg-kernel's kernels count a grid's
    /// threads in 32 bits, and trap on such a grid.
    GridTooManyThreads {
        /// The kernel's name.
        kernel: &'static str,
        /// Blocks asked for.
        blocks: u32,
        /// Threads per block.
        threads_per_block: u32,
    },
    /// Threads per block this device cannot use.
    BadThreadsPerBlock {
        /// Threads per block.
        threads_per_block: u32,
        /// What is wrong with it.
        why: BadBlock,
    },
    /// A block larger than the kernel's `launch_bounds` (`.maxntid`), which CUDA would refuse.
    OverLaunchBounds {
        /// The kernel's name.
        kernel: &'static str,
        /// Threads per block.
        threads_per_block: u32,
        /// Its launch bounds' most threads per block.
        max_threads: u32,
    },
    /// A block of another size than the kernel's `block_size`.
    NotTheBlockSize {
        /// The kernel's name.
        kernel: &'static str,
        /// Threads per block.
        threads_per_block: u32,
        /// The block size it is declared for.
        required: u32,
    },
    /// Not one block of this kernel fits on an SM.
    BlockDoesNotFit {
        /// The kernel's name.
        kernel: &'static str,
        /// What the device holds of this kernel at that block size.
        limits: Box<Limits>,
    },
    /// A buffer is shorter than the kernel's contract needs.
    BufferTooShort {
        /// The kernel's name, or the safe call's that launches it (what the
        /// caller called: `inclusive_scan`, not a kernel inside it).
        kernel: &'static str,
        /// The buffer's name.
        buffer: &'static str,
        /// Elements the launch needs.
        needed: usize,
        /// Elements it holds.
        got: usize,
    },
    /// An input whose size in bytes this machine cannot even express.
    InputTooLarge {
        /// The element count.
        n: usize,
    },
    /// Not enough free device memory for the input.
    OutOfDeviceMemory {
        /// Bytes needed.
        needed: u64,
        /// Bytes free.
        free: u64,
    },
    /// Not enough host memory for the input and its reference.
    OutOfHostMemory {
        /// Bytes needed.
        needed: u64,
    },
    /// A kernel failed while running (the launch itself was accepted).
    KernelFailed {
        /// The kernel's name.
        kernel: &'static str,
        /// The driver's error.
        error: DriverError,
    },
    /// The device did not finish within the host's time limit.
    Timeout {
        /// The kernel's name.
        kernel: &'static str,
        /// Seconds waited.
        seconds: f64,
    },
    /// Work asked of a device on which a kernel timed out earlier and still runs.
    DeviceStuck {
        /// The kernel's name.
        kernel: &'static str,
    },
    /// A diagnosing `grid.sync()` gave up (build feature `barrier-timeout`).
    GridBarrierTimedOut {
        /// The kernel's name.
        kernel: &'static str,
        /// What the barrier recorded.
        report: cg_kernel::cg::barrier::Report,
    },
    /// A launch on the emulated device failed.
    Emulated {
        /// The kernel's name.
        kernel: &'static str,
        /// What the emulator found.
        fault: Box<cg_emulator::Fault>,
        /// For an access outside a buffer or one never written, the launch
        /// it happened in (`describe`): its grid, buffer lengths and numbers,
        /// since the argument that sized them may be the mistake.
        launch: Option<String>,
    },
    /// A kernel whose PTX calls `grid.sync()` was declared without `cooperative`.
    UndeclaredGridSync {
        /// The kernel's name.
        kernel: &'static str,
    },
    /// A kernel built with a tile the PTX module does not hold, or (no
    /// tile) one declared `#[kernel(emulator)]`, which has no GPU entry.
    NotInPtx {
        /// The kernel's name.
        kernel: &'static str,
        /// The tile it was built with, if the kernel has one.
        tile: Option<u32>,
    },
    /// Something only a CUDA GPU has was asked of the emulator.
    NotOnEmulator(&'static str),
    /// A handle (a module, a graph, queued runs, a communicator, memory)
    /// given to a device other than the one that made it.
    OtherDevice {
        /// What was done.
        what: &'static str,
    },
    /// Two arguments of one launch that name the same bytes, one of them
    /// written (an `Out`): one `Shared` passed twice, say.
    ArgumentsOverlap {
        /// The kernel's name.
        kernel: &'static str,
        /// The first argument, as the kernel names it.
        first: String,
        /// The second.
        second: String,
    },
    /// A buffer made in one branch of `in_parallel`, used in another.
    OtherBranch {
        /// The branch that allocated it.
        made_in: usize,
        /// The branch that used it.
        used_in: usize,
    },
    /// A buffer made before `in_parallel`, used by two of its branches in a
    /// way that could race: one writes bytes the other reads or writes.
    RaceBetweenBranches {
        /// The branch that used it first.
        first: usize,
        /// Whether that use wrote it.
        first_wrote: bool,
        /// That use: `gpu.write`, or a kernel's parameter (`scan's \`y\``).
        first_use: String,
        /// The branch using it now.
        second: usize,
        /// Whether this use writes it.
        second_writes: bool,
        /// This use.
        second_use: String,
    },
    /// Two buffers a call needs as long as each other are not
    /// (`gpu.all_reduce_sum`'s source and destination).
    LengthsDiffer {
        /// The call.
        what: &'static str,
        /// The first buffer's name and length.
        first: (&'static str, usize),
        /// The second buffer's name and length.
        second: (&'static str, usize),
    },
    /// A copy to or from a buffer past its end.
    OutOfRange {
        /// The call (`gpu.write`).
        what: &'static str,
        /// The first element.
        start: usize,
        /// Elements copied.
        count: usize,
        /// Elements the buffer holds.
        len: usize,
    },
    /// A view cast to an element type its bytes do not divide into
    /// ([`View::cast`](crate::device::View::cast)): it must start on a
    /// multiple of the new element's size and span a whole number of them.
    MisfitCast {
        /// The element type it had.
        from: &'static str,
        /// The one asked for.
        to: &'static str,
        /// The size in bytes of the one asked for.
        to_size: usize,
        /// Its first byte, within its buffer.
        start_byte: usize,
        /// Its length, in bytes.
        bytes: usize,
    },
    /// A raw launch with more arguments than a kernel entry takes.
    TooManyParameters {
        /// The kernel's name.
        kernel: &'static str,
        /// Arguments given.
        count: usize,
        /// The most a launch passes.
        max: usize,
    },
    /// Shared memory per block past what a launch can describe (`u32` bytes).
    SharedMemoryTooLarge {
        /// The kernel's name.
        kernel: &'static str,
    },
    /// Memory allocated, copied or freed while a graph is captured.
    MemoryInCapture {
        /// What was done.
        what: &'static str,
    },
    /// cudarc cannot load NCCL; `why` says what to do.
    NoNccl {
        /// What to do.
        why: String,
    },
    /// A group of a size the communicator cannot make (the emulator's
    /// stand-in takes 1 to `MAX_STAND_IN_RANKS`).
    BadGroupSize {
        /// The group's size, as asked for.
        ranks: u32,
        /// Why it is refused.
        why: &'static str,
    },
    /// A communicator asked for with a rank outside its group, or a rank
    /// that another communicator of the group already holds.
    BadRank {
        /// The rank asked for.
        rank: u32,
        /// The group's size, as asked for.
        ranks: u32,
        /// What is wrong with it.
        why: &'static str,
    },
    /// An NCCL call failed.
    Nccl {
        /// The NCCL call.
        call: &'static str,
        /// NCCL's error.
        error: String,
    },
    /// An error of the caller's own, from a closure the launcher ran
    /// (`Gpu::capture`, `Gpu::in_parallel`, `Gpu::queue_timed`), passed through.
    Caller(Box<dyn std::error::Error + Send + Sync>),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps a failed driver call, naming the call.
    pub(crate) fn driver(call: &'static str) -> impl FnOnce(cudarc::driver::DriverError) -> Error {
        move |error| Error::Driver { call, error: DriverError::from_cudarc(error) }
    }

    /// The driver call that failed, where the error came from one.
    pub fn call(&self) -> Option<&'static str> {
        match self {
            Error::Driver { call, .. } => Some(call),
            _ => None,
        }
    }

    /// The driver's name for the error (`CUDA_ERROR_...`), where there is one.
    pub fn driver_name(&self) -> Option<String> {
        match self {
            Error::Driver { error, .. } | Error::KernelFailed { error, .. } => Some(error.name().to_string()),
            Error::Emulated { fault, .. } => fault.driver_name().map(str::to_string),
            _ => None,
        }
    }
}

const MIB: f64 = 1024.0 * 1024.0;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::ForeignGridTooLarge { kernel, requested, capacity } => {
                write!(f, "cooperative launch of {kernel} with {requested} blocks refused: at most {capacity} can be resident at once")
            }
            Error::EmulatorOnlyBuild => write!(
                f,
                "this program's kernels were built for the emulator only (their crate's feature emulator-only), so it holds no PTX for a GPU: open the emulated device (Gpu::emulated), or build without that feature"
            ),
            Error::NoTracedModule => write!(
                f,
                "this program's kernels were built without their traced module, which a traced GPU needs: build the kernel crate with `cg_builder::Builder::traced(true)`, or trace on the emulated device (Gpu::emulated_traced)"
            ),
            Error::NotLinked(why) => write!(f, "{why}"),
            Error::EmptyGraph => write!(f, "the graph capture captured no launch: nothing to replay"),
            Error::NoDriver => {
                write!(f, "no NVIDIA driver found (libcuda could not be loaded): install the NVIDIA driver, or open the emulated device (Gpu::emulated)")
            }
            Error::NoDevice { requested, count } => match count {
                0 => write!(f, "no CUDA device {requested}: the driver reports no devices (open the emulated device, Gpu::emulated)"),
                _ => write!(f, "no CUDA device {requested}: the driver reports {}, numbered 0..{}", plural(*count as u64, "device", "devices"), count - 1),
            },
            Error::ComputeCapabilityTooLow { name, major, minor } => write!(
                f,
                "{name} is compute capability {major}.{minor}; cg-kernel's kernels need 7.0 or newer (their PTX is sm_70, with acquire/release atomics and barrier.sync that older GPUs lack): use the emulated device"
            ),
            Error::NestedStreams { what } => {
                write!(f, "{what} cannot begin inside a branch of in_parallel or a graph capture: begin it outside, or make one the branch of the other")
            }
            Error::GraphBarriersExhausted { kernel, max } => write!(
                f,
                "{kernel}: one graph holds at most {max} cooperative launches, each with launch memory of its own (its grid barrier's and its grid collectives'): capture fewer per graph"
            ),
            Error::NoWatchedEntry { kernel } => write!(f, "{kernel} has no watched entry (only a module cg-builder built has one)"),
            Error::NoCooperativeLaunch { name } => write!(
                f,
                "{name} does not support cooperative launch (cudaDevAttrCooperativeLaunch = 0): on Linux, stop MPS or use a device of compute capability 7.0 or newer (or use the emulated device)"
            ),
            Error::Driver { call, error } => write!(f, "{call} failed: {}: {}", error.name(), error.description()),
            Error::CooperativeGridTooLarge { kernel, requested, limits } => write!(
                f,
                "cooperative launch of {kernel} with {requested} blocks refused: at most {} can be resident at once ({} x {}; blocks/SM limited by {})",
                limits.capacity(),
                plural(limits.blocks_per_sm.into(), "block/SM", "blocks/SM"),
                plural(limits.sms.into(), "SM", "SMs"),
                limits.explain()
            ),
            Error::ClustersNeedSm90 { kernel, major, minor } => write!(
                f,
                "{kernel} uses thread-block clusters (#[kernel(cluster)]), which need compute capability 9.0 (Hopper) or later; this GPU is {major}.{minor}: run it on an H100/H200, or on the emulated H200 (emu::Device::H200)"
            ),
            Error::BadCluster { kernel, why } => write!(f, "cluster launch of {kernel} refused: {why}"),
            Error::ClusterGridTooLarge { kernel, requested, cluster, clusters, block_ceiling } => write!(
                f,
                "cooperative launch of {kernel} with {requested} blocks in clusters of {cluster} refused: at most {clusters} clusters of {cluster} ({} blocks) are resident at once (cuOccupancyMaxActiveClusters), fewer than the {block_ceiling} blocks the block ceiling allows: a cluster is scheduled whole on one GPC, so size a cluster launch from the cluster ceiling (ClusterKernel::cluster_limits)",
                clusters * cluster
            ),
            Error::EmptyGrid { kernel } => {
                write!(f, "launch of {kernel} with 0 blocks refused: a grid needs at least one block (for n = 0, return without launching)")
            }
            Error::GridTooManyThreads { kernel, blocks, threads_per_block } => write!(
                f,
                "launch of {kernel} with {blocks} blocks of {threads_per_block} threads refused: that is {} threads, and cg-kernel's kernels count a grid's threads in 32 bits (a grid of 2^32 or more traps); a grid-stride loop covers any n with fewer blocks",
                *blocks as u64 * *threads_per_block as u64
            ),
            Error::GridTooLarge { kernel, blocks } => write!(f, "launch of {kernel} with {blocks} blocks refused: a grid has at most {} blocks", u32::MAX),
            Error::BadThreadsPerBlock { threads_per_block, why } => match why {
                BadBlock::Empty => write!(f, "blocks of 0 threads: launches here take whole warps, 32 threads or more per block"),
                BadBlock::NotWarps => write!(f, "blocks of {threads_per_block} threads: use a multiple of 32 (whole warps)"),
                BadBlock::OverDeviceMax(max) => write!(f, "blocks of {threads_per_block} threads: this device runs at most {max} threads per block"),
            },
            Error::OverLaunchBounds { kernel, threads_per_block, max_threads } => write!(
                f,
                "blocks of {threads_per_block} threads refused: {kernel} is declared `launch_bounds({max_threads}, ...)` (C++'s __launch_bounds__), so its PTX runs blocks of at most {max_threads} threads"
            ),
            Error::NotTheBlockSize { kernel, threads_per_block, required } => write!(
                f,
                "blocks of {threads_per_block} threads refused: {kernel} is declared `block_size = {required}`, its body written for blocks of exactly {required} threads: launch it with {required}"
            ),
            Error::BlockDoesNotFit { kernel, limits } => write!(
                f,
                "one block of {kernel} ({} threads, {} B of shared memory) does not fit on an SM of this device: limited by {}",
                limits.block.threads_per_block,
                limits.block.shared_bytes,
                limits.explain()
            ),
            Error::BufferTooShort { kernel, buffer, needed, got } => {
                write!(f, "{kernel}: {buffer} holds {} but the launch needs {needed}", plural(*got as u64, "element", "elements"))
            }
            Error::InputTooLarge { n } => write!(f, "{n} elements are too many: their bytes cannot be counted in this machine's address space"),
            Error::OutOfDeviceMemory { needed, free } => {
                write!(f, "the input needs {:.1} MiB of device memory but only {:.1} MiB is free: ask for less", *needed as f64 / MIB, *free as f64 / MIB)
            }
            Error::OutOfHostMemory { needed } => {
                write!(f, "the input needs {:.1} MiB of host memory, more than this machine can give it: ask for less", *needed as f64 / MIB)
            }
            Error::KernelFailed { kernel, error } => write!(f, "{kernel} failed while running: {}", error.name()),
            Error::Timeout { kernel, seconds } => write!(
                f,
                "{kernel} did not finish within {seconds} s: a kernel is stuck (a barrier that some thread never reaches?); exiting ends it (raise the limit with Gpu::set_timeout)"
            ),
            Error::DeviceStuck { kernel } => {
                write!(f, "not run: the GPU is still running {kernel}, which did not finish in time earlier; nothing else can run until this program exits")
            }
            Error::GridBarrierTimedOut { kernel, report } => write!(
                f,
                "grid barrier timed out in {kernel}: {} of {} blocks arrived (block {} gave up after {} s)",
                report.arrived,
                report.expected,
                report.block,
                cg_kernel::cg::barrier::TIMEOUT_NS as f64 / 1e9
            ),
            Error::Emulated { kernel, fault, launch } => match (&**fault, launch) {
                (cg_emulator::Fault::Deadlock(_), _) => write!(f, "{fault}"),
                (_, Some(launch)) => write!(f, "{kernel} on the emulated device: {fault}; the launch: {launch}"),
                (_, None) => write!(f, "{kernel} on the emulated device: {fault}"),
            },
            Error::UndeclaredGridSync { kernel } => write!(
                f,
                "{kernel} calls grid.sync() but is declared #[kernel] without `cooperative`, so it would be launched the ordinary way: declare it #[kernel(cooperative)]"
            ),
            Error::NotInPtx { kernel, tile } => match tile {
                Some(t) => write!(f, "{kernel} with tiles of {t} exists only on the emulator: change the tile in the kernel's source to run it on the GPU"),
                None => write!(f, "{kernel} is declared #[kernel(emulator)]: it has no GPU entry and runs only on the emulator"),
            },
            Error::NotOnEmulator(what) => write!(f, "{what} needs a CUDA GPU, and this device is the emulated one"),
            Error::OtherDevice { what } => write!(f, "{what} was made by another device than the one it was given to: use it on the device that made it"),
            Error::ArgumentsOverlap { kernel, first, second } => write!(
                f,
                "{kernel}'s `{first}` and `{second}` name the same memory, and the kernel writes it: two arguments of one launch may share memory only if both are read (In); pass each its own buffer, or one argument"
            ),
            Error::OtherBranch { made_in, used_in } => write!(
                f,
                "a buffer allocated in branch {made_in} of in_parallel was given to a launch in branch {used_in}, whose stream does not wait for branch {made_in}: allocate it before in_parallel, or in the branch that uses it"
            ),
            Error::RaceBetweenBranches { first, first_wrote, first_use, second, second_writes, second_use } => write!(
                f,
                "a buffer {} in branch {first} of in_parallel (as {first_use}) was given to a {} in branch {second} (as {second_use}): the branches' streams are not ordered against each other, so the two could race; use it in one branch only, or after in_parallel returns",
                if *first_wrote { "written" } else { "read" },
                if *second_writes { "write" } else { "read" }
            ),
            Error::LengthsDiffer { what, first, second } => write!(
                f,
                "{what}: {} holds {} and {} {}: they must be as long as each other",
                first.0,
                plural(first.1 as u64, "element", "elements"),
                second.0,
                second.1
            ),
            Error::OutOfRange { what, start, count, len } => match start.checked_add(*count) {
                Some(end) => write!(f, "{what}: elements {start}..{end} of a buffer of {len}: past its end"),
                // The end is past what an index can be: name the start and the count.
                None => write!(f, "{what}: {count} elements from element {start} of a buffer of {len}: past its end (and past the largest index)"),
            },
            Error::MisfitCast { from, to, to_size: size, start_byte, bytes } => {
                write!(
                    f,
                    "a view of {from} as {to} refused: it spans bytes {start_byte}..{} of its buffer, and a {to} view must start on a multiple of {size} bytes and span a whole number of {size}-byte elements; slice it so that it does (`.slice(a..b)` with a and b in elements of {from}), then cast",
                    start_byte + bytes
                )
            }
            Error::TooManyParameters { kernel, count, max } => write!(f, "launch of {kernel} with {count} arguments refused: a kernel takes at most {max}"),
            Error::SharedMemoryTooLarge { kernel } => {
                write!(f, "{kernel}: its dynamic shared memory per block does not fit in the 32 bits a launch describes it with")
            }
            Error::MemoryInCapture { what } => {
                write!(f, "{what} while a graph is captured: nothing runs during a capture, so allocate, copy and free before it or after it")
            }
            Error::Caller(e) => write!(f, "{e}"),
            Error::NoNccl { why } => write!(f, "{why}"),
            Error::BadRank { rank, ranks, why } => write!(f, "rank {rank} of a group of {ranks}: {why}"),
            Error::BadGroupSize { ranks, why } => write!(f, "a group of {ranks} ranks: {why}"),
            Error::Nccl { call, error } => write!(f, "{call} failed: {error}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Driver { error, .. } | Error::KernelFailed { error, .. } => Some(error),
            Error::Caller(e) => Some(&**e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sizing::{BlockResources, SmResources};

    #[test]
    fn a_count_of_one_takes_the_singular() {
        let sm =
            SmResources { max_threads: 1024, max_blocks: 16, registers: None, shared_bytes: 65536, reserved_shared_per_block: 0, max_shared_per_block: 65536 };
        let block = BlockResources { threads_per_block: 1024, registers_per_thread: None, shared_bytes: 128 };
        let limits = Box::new(Limits { blocks_per_sm: 1, sms: 1, block, sm });
        let e = Error::CooperativeGridTooLarge { kernel: "k", requested: 2, limits }.to_string();
        assert!(e.contains("at most 1 can be resident at once (1 block/SM x 1 SM; "), "{e}");
        let e = Error::BufferTooShort { kernel: "k", buffer: "partials", needed: 3, got: 1 }.to_string();
        assert_eq!(e, "k: partials holds 1 element but the launch needs 3");
        let e = Error::BufferTooShort { kernel: "k", buffer: "partials", needed: 3, got: 2 }.to_string();
        assert_eq!(e, "k: partials holds 2 elements but the launch needs 3");
        let e = Error::BadThreadsPerBlock { threads_per_block: 2048, why: BadBlock::OverDeviceMax(1024) }.to_string();
        assert_eq!(e, "blocks of 2048 threads: this device runs at most 1024 threads per block");
    }
}
