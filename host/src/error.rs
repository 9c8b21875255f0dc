//! The one error type at the host boundary. Each variant's `Display` is the
//! single line a user reads: what is wrong and what to do.

use crate::sizing::{BadBlock, Limits};
use crate::text::plural;
use cudarc::driver::DriverError;
use std::fmt;

#[derive(Debug)]
pub enum Error {
    /// `libcuda` could not be loaded.
    NoDriver,
    /// A GPU asked of the program `cargo emulate` built, which has no PTX.
    EmulatorOnlyBuild,
    /// A graph capture that captured no launch.
    EmptyGraph,
    /// `bench` on a machine without the NVIDIA driver.
    BenchNeedsGpu,
    /// The driver is there but reports no device at that index.
    NoDevice { requested: usize, count: usize },
    /// The kernels' PTX needs compute capability 7.0 or newer.
    ComputeCapabilityTooLow { name: String, major: i32, minor: i32 },
    /// Streams or a capture begun inside a branch of `in_parallel` or a capture.
    NestedStreams { what: &'static str },
    /// A graph captured more watched launches than it has barrier memory for.
    GraphBarriersExhausted { kernel: &'static str, max: usize },
    /// The watched entry of a kernel that has none (a module from a file).
    NoWatchedEntry { kernel: &'static str },
    /// The device or platform does not support cooperative launch.
    NoCooperativeLaunch { name: String },
    /// A driver call failed.
    Driver { call: &'static str, error: DriverError },
    /// A cooperative grid larger than can be resident at once was asked for;
    /// refused before launching, because its barrier could never complete.
    CooperativeGridTooLarge { kernel: &'static str, requested: u32, limits: Box<Limits> },
    /// A cluster kernel on a GPU older than compute capability 9.0.
    ClustersNeedSm90 { kernel: &'static str, major: i32, minor: i32 },
    /// A cluster size the device cannot take, or that does not divide the grid.
    BadCluster { kernel: &'static str, why: String },
    /// A cooperative cluster launch past the clusters that fit at once.
    ClusterGridTooLarge { kernel: &'static str, requested: u32, cluster: u32, clusters: u32, block_ceiling: u32 },
    /// A cooperative launch of a kernel from another module, larger than fits.
    ForeignGridTooLarge { kernel: &'static str, requested: u32, capacity: u32 },
    /// A launch of zero blocks was asked for.
    EmptyGrid { kernel: &'static str },
    /// The exercise's `solve()` as it ships, before the learner writes it.
    SolveUnwritten,
    /// A grid of more blocks than a launch can describe.
    GridTooLarge { kernel: &'static str, blocks: u64 },
    /// A grid of 2^32 threads or more: this project's kernels count a grid's
    /// threads in 32 bits, and trap on such a grid.
    GridTooManyThreads { kernel: &'static str, blocks: u32, threads_per_block: u32 },
    /// Threads per block this device cannot use.
    BadThreadsPerBlock { threads_per_block: u32, why: BadBlock },
    /// A block larger than the kernel's `launch_bounds` (`.maxntid`), which CUDA would refuse.
    OverLaunchBounds { kernel: &'static str, threads_per_block: u32, max_threads: u32 },
    /// Not one block of this kernel fits on an SM.
    BlockDoesNotFit { kernel: &'static str, limits: Box<Limits> },
    /// A buffer is shorter than the kernel's contract needs.
    BufferTooShort { kernel: &'static str, buffer: &'static str, needed: usize, got: usize },
    /// An input whose size in bytes this machine cannot even express.
    InputTooLarge { n: usize },
    /// Not enough free device memory for the input.
    OutOfDeviceMemory { needed: u64, free: u64 },
    /// Not enough host memory for the input and its reference.
    OutOfHostMemory { needed: u64 },
    /// A kernel failed while running (the launch itself was accepted).
    KernelFailed { kernel: &'static str, error: DriverError },
    /// The device did not finish within the host's time limit.
    Timeout { kernel: &'static str, seconds: f64 },
    /// Work asked of a device on which a kernel timed out earlier and still runs.
    DeviceStuck { kernel: &'static str },
    /// A diagnosing `grid.sync()` gave up (build feature `barrier-timeout`).
    GridBarrierTimedOut { kernel: &'static str, report: cg_kernel::cg::barrier::Report },
    /// A launch on the emulated device failed.
    Emulated { kernel: &'static str, fault: Box<cg_kernel::emu::Fault> },
    /// A kernel whose PTX calls `grid.sync()` was declared without `cooperative`.
    UndeclaredGridSync { kernel: &'static str },
    /// A kernel built with a tile the PTX module does not hold, or (no
    /// tile) one declared `#[kernel(emulator)]`, which has no GPU entry.
    NotInPtx { kernel: &'static str, tile: Option<u32> },
    /// Something only a CUDA GPU has was asked of the emulator.
    NotOnEmulator(&'static str),
    /// A sparse matrix whose offsets or columns would read outside it.
    BadMatrix { why: String },
    /// A conjugate-gradient problem the solver refuses: the reason.
    BadSystem { why: String },
    /// A conjugate-gradient solve that stopped at its iteration limit.
    DidNotConverge { path: &'static str, iterations: u32, residual: f64, tolerance: f64 },
    /// A handle (a module, a graph, queued runs, a communicator, memory)
    /// given to a device other than the one that made it.
    OtherDevice { what: &'static str },
    /// A buffer made in one branch of `in_parallel`, used in another.
    OtherBranch { made_in: usize, used_in: usize },
    /// Memory allocated, copied or freed while a graph is captured.
    MemoryInCapture { what: &'static str },
    /// A file could not be written.
    Io { path: String, error: std::io::Error },
    /// One or more of the run's checks failed; each is listed by name above.
    ChecksFailed { failed: usize, total: usize },
    /// cudarc cannot load NCCL; `why` says what to do.
    NoNccl { why: String },
    /// An NCCL call failed.
    Nccl { call: &'static str, error: String },
    /// `--gpus` more than the driver reports.
    TooManyGpus { requested: u32, count: u32 },
    /// Another GPU's host thread failed first (its error is the one to read).
    PeerStopped { rank: u32 },
    /// Host threads of some GPUs did not reach a step the others waited at.
    RanksDidNotArrive { step: &'static str, missing: Vec<u32>, seconds: f64 },
    /// The barrier across GPUs gave up: `gave_up` waited for `missing`.
    AcrossGpusTimedOut { kernel: &'static str, gave_up: u32, missing: Vec<u32>, seconds: f64 },
    /// A rank of several processes waited in vain for rank 0's NCCL id.
    NoNcclId { path: String, seconds: f64 },
    /// The file named by `--nccl-id` holds no NCCL id.
    BadNcclId { path: String },
    /// A sweep whose smallest size is above its largest.
    BadSweep { lo: u32, hi: u32 },
    /// A GPU's rank (`flag`: `--rank`, `--never-launch`, a launch's) not below the `ranks` there are.
    RankOutOfRange { flag: &'static str, rank: u32, ranks: u32 },
    /// An error from code of someone else's that the launcher ran.
    Caller(Box<dyn std::error::Error + Send + Sync>),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The launcher's errors, as the lesson's: the same variants, whose words
/// name this program's flags (`--emulate`, `--n`, `--timeout-s`). An error of
/// the lesson's own that passed through a closure the launcher ran comes
/// back as itself.
impl From<cg_launcher::error::Error> for Error {
    fn from(e: cg_launcher::error::Error) -> Error {
        use cg_launcher::error::Error as L;
        match e {
            L::NoDriver => Error::NoDriver,
            L::EmulatorOnlyBuild => Error::EmulatorOnlyBuild,
            L::EmptyGraph => Error::EmptyGraph,
            L::NoDevice { requested, count } => Error::NoDevice { requested, count },
            L::ComputeCapabilityTooLow { name, major, minor } => Error::ComputeCapabilityTooLow { name, major, minor },
            L::NestedStreams { what } => Error::NestedStreams { what },
            L::GraphBarriersExhausted { kernel, max } => Error::GraphBarriersExhausted { kernel, max },
            L::NoWatchedEntry { kernel } => Error::NoWatchedEntry { kernel },
            L::NoCooperativeLaunch { name } => Error::NoCooperativeLaunch { name },
            L::Driver { call, error } => Error::Driver { call, error },
            L::CooperativeGridTooLarge { kernel, requested, limits } => Error::CooperativeGridTooLarge { kernel, requested, limits },
            L::ClustersNeedSm90 { kernel, major, minor } => Error::ClustersNeedSm90 { kernel, major, minor },
            L::BadCluster { kernel, why } => Error::BadCluster { kernel, why },
            L::ClusterGridTooLarge { kernel, requested, cluster, clusters, block_ceiling } => {
                Error::ClusterGridTooLarge { kernel, requested, cluster, clusters, block_ceiling }
            }
            L::ForeignGridTooLarge { kernel, requested, capacity } => Error::ForeignGridTooLarge { kernel, requested, capacity },
            L::EmptyGrid { kernel } => Error::EmptyGrid { kernel },
            L::GridTooLarge { kernel, blocks } => Error::GridTooLarge { kernel, blocks },
            L::GridTooManyThreads { kernel, blocks, threads_per_block } => Error::GridTooManyThreads { kernel, blocks, threads_per_block },
            L::BadThreadsPerBlock { threads_per_block, why } => Error::BadThreadsPerBlock { threads_per_block, why },
            L::OverLaunchBounds { kernel, threads_per_block, max_threads } => Error::OverLaunchBounds { kernel, threads_per_block, max_threads },
            L::BlockDoesNotFit { kernel, limits } => Error::BlockDoesNotFit { kernel, limits },
            L::BufferTooShort { kernel, buffer, needed, got } => Error::BufferTooShort { kernel, buffer, needed, got },
            L::InputTooLarge { n } => Error::InputTooLarge { n },
            L::OutOfDeviceMemory { needed, free } => Error::OutOfDeviceMemory { needed, free },
            L::OutOfHostMemory { needed } => Error::OutOfHostMemory { needed },
            L::KernelFailed { kernel, error } => Error::KernelFailed { kernel, error },
            L::Timeout { kernel, seconds } => Error::Timeout { kernel, seconds },
            L::DeviceStuck { kernel } => Error::DeviceStuck { kernel },
            L::GridBarrierTimedOut { kernel, report } => Error::GridBarrierTimedOut { kernel, report },
            L::Emulated { kernel, fault } => Error::Emulated { kernel, fault },
            L::UndeclaredGridSync { kernel } => Error::UndeclaredGridSync { kernel },
            L::NotInPtx { kernel, tile } => Error::NotInPtx { kernel, tile },
            L::NotOnEmulator(x) => Error::NotOnEmulator(x),
            L::OtherDevice { what } => Error::OtherDevice { what },
            L::OtherBranch { made_in, used_in } => Error::OtherBranch { made_in, used_in },
            L::MemoryInCapture { what } => Error::MemoryInCapture { what },
            L::NoNccl { why } => Error::NoNccl { why },
            L::Nccl { call, error } => Error::Nccl { call, error },
            L::PeerStopped { rank } => Error::PeerStopped { rank },
            L::RanksDidNotArrive { step, missing, seconds } => Error::RanksDidNotArrive { step, missing, seconds },
            L::Caller(e) => match e.downcast::<Error>() {
                Ok(mine) => *mine,
                Err(other) => Error::Caller(other),
            },
        }
    }
}

/// The lesson's errors, passed through the launcher (out of a closure it runs).
impl From<Error> for cg_launcher::error::Error {
    fn from(e: Error) -> cg_launcher::error::Error {
        cg_launcher::error::Error::Caller(Box::new(e))
    }
}

impl Error {
    /// Wraps a failed driver call, naming the call.
    pub fn driver(call: &'static str) -> impl FnOnce(DriverError) -> Error {
        move |error| Error::Driver { call, error }
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
            Error::Driver { error, .. } | Error::KernelFailed { error, .. } => error.error_name().ok().map(|n| n.to_string_lossy().into_owned()),
            Error::Emulated { fault, .. } => fault.driver_name().map(str::to_string),
            _ => None,
        }
    }
}

const MIB: f64 = 1024.0 * 1024.0;

/// `GPU 1`, `GPUs 1 and 3`, `GPUs 1, 2 and 3`.
fn gpus_named(ranks: &[u32]) -> String {
    let names: Vec<String> = ranks.iter().map(u32::to_string).collect();
    match names.as_slice() {
        [] => "no GPU".to_string(),
        [one] => format!("GPU {one}"),
        [rest @ .., last] => format!("GPUs {} and {last}", rest.join(", ")),
    }
}

fn driver_error_name(error: &DriverError) -> &str {
    error.error_name().ok().and_then(|n| n.to_str().ok()).unwrap_or("an unknown error")
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::ForeignGridTooLarge { kernel, requested, capacity } => {
                write!(f, "cooperative launch of {kernel} with {requested} blocks refused: at most {capacity} can be resident at once")
            }
            Error::EmulatorOnlyBuild => write!(
                f,
                "this program was built for the emulator only (`cargo emulate`), so it holds no PTX for a GPU: run it on the emulator with `cargo emulate`, or build it for the GPU with `cargo run --release -p host`"
            ),
            Error::EmptyGraph => write!(f, "the graph capture captured no launch: nothing to replay"),
            Error::BenchNeedsGpu => write!(
                f,
                "bench times a GPU, and no NVIDIA driver was found (libcuda could not be loaded): install the driver, or run the lesson and the exercise on the emulated GPU (`{}`, `{}`)",
                crate::invocation::command("", true),
                crate::invocation::command("exercise", true)
            ),
            Error::NoDriver => write!(
                f,
                "no NVIDIA driver found (libcuda could not be loaded): run the lesson without a GPU on the emulated one with --emulate, or install the NVIDIA driver"
            ),
            Error::NoDevice { requested, count } => match count {
                0 => write!(f, "no CUDA device {requested}: the driver reports no devices (run the lesson on the emulated GPU with --emulate)"),
                _ => write!(f, "no CUDA device {requested}: the driver reports {}, so use --device 0..{}", plural(*count, "device", "devices"), count - 1),
            },
            Error::ComputeCapabilityTooLow { name, major, minor } => write!(
                f,
                "{name} is compute capability {major}.{minor}; this project's kernels need 7.0 or newer (their PTX is sm_70, with acquire/release atomics and barrier.sync that older GPUs lack), so run with --emulate"
            ),
            Error::NestedStreams { what } => {
                write!(f, "{what} cannot begin inside a branch of in_parallel or a graph capture: begin it outside, or make one the branch of the other")
            }
            Error::GraphBarriersExhausted { kernel, max } => write!(
                f,
                "{kernel}: one graph holds at most {max} cooperative launches of more than {} blocks, each with barrier memory of its own: capture fewer per graph",
                cg_kernel::cg::barrier::WATCHED_ABOVE_BLOCKS
            ),
            Error::NoWatchedEntry { kernel } => write!(f, "{kernel} has no watched entry (only this project's own module has one)"),
            Error::NoCooperativeLaunch { name } => write!(
                f,
                "{name} does not support cooperative launch (cudaDevAttrCooperativeLaunch = 0): on Linux, stop MPS or use a device of compute capability 7.0 or newer (or run with --emulate)"
            ),
            Error::Driver { call, error } => {
                let text = error.error_string().ok().and_then(|s| s.to_str().ok()).unwrap_or("");
                write!(f, "{call} failed: {}: {text}", driver_error_name(error))
            }
            Error::CooperativeGridTooLarge { kernel, requested, limits } => write!(
                f,
                "cooperative launch of {kernel} with {requested} blocks refused: at most {} can be resident at once ({} blocks/SM x {}; blocks/SM limited by {})",
                limits.capacity(),
                limits.blocks_per_sm,
                plural(limits.sms, "SM", "SMs"),
                limits.explain()
            ),
            Error::ClustersNeedSm90 { kernel, major, minor } => write!(
                f,
                "{kernel} uses thread-block clusters (#[kernel(cluster)]), which need compute capability 9.0 (Hopper) or later; this GPU is {major}.{minor}: run it on an H100/H200, or on the emulated H200 (`--emulate --gpu h200`)"
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
            Error::SolveUnwritten => write!(
                f,
                "solve() is yours to write, in exercise/solve.rs: launch exercise_sum once, cooperatively, on a grid you size, leave the sum in total[0] and return Solved {{ blocks, threads_per_block, blocks_per_sm, sms }} (--variant reference runs ours)"
            ),
            Error::GridTooManyThreads { kernel, blocks, threads_per_block } => write!(
                f,
                "launch of {kernel} with {blocks} blocks of {threads_per_block} threads refused: that is {} threads, and this project's kernels count a grid's threads in 32 bits (a grid of 2^32 or more traps); a grid-stride loop covers any n with fewer blocks",
                *blocks as u64 * *threads_per_block as u64
            ),
            Error::GridTooLarge { kernel, blocks } => write!(f, "launch of {kernel} with {blocks} blocks refused: a grid has at most {} blocks", u32::MAX),
            Error::BadThreadsPerBlock { threads_per_block, why } => match why {
                BadBlock::Empty => write!(f, "blocks of 0 threads: a block needs at least one warp, 32 threads"),
                BadBlock::NotWarps => write!(f, "blocks of {threads_per_block} threads: use a multiple of 32 (whole warps)"),
                BadBlock::OverDeviceMax(max) => write!(f, "blocks of {threads_per_block} threads: this device runs at most {max} threads per block"),
            },
            Error::OverLaunchBounds { kernel, threads_per_block, max_threads } => write!(
                f,
                "blocks of {threads_per_block} threads refused: {kernel} is declared `launch_bounds({max_threads}, ...)` (C++'s __launch_bounds__), so its PTX runs blocks of at most {max_threads} threads"
            ),
            Error::BlockDoesNotFit { kernel, limits } => write!(
                f,
                "one block of {kernel} ({} threads, {} B of shared memory) does not fit on an SM of this device: limited by {}",
                limits.block.threads_per_block,
                limits.block.shared_bytes,
                limits.explain()
            ),
            Error::BufferTooShort { kernel, buffer, needed, got } => write!(f, "{kernel}: {buffer} holds {got} elements but the launch needs {needed}"),
            Error::InputTooLarge { n } => write!(f, "--n {n} is too large: its bytes cannot be counted in this machine's address space"),
            Error::OutOfDeviceMemory { needed, free } => {
                write!(f, "the input needs {:.1} MiB of device memory but only {:.1} MiB is free: use a smaller --n", *needed as f64 / MIB, *free as f64 / MIB)
            }
            Error::OutOfHostMemory { needed } => {
                write!(f, "the input needs {:.1} MiB of host memory, more than this machine can give it: use a smaller --n", *needed as f64 / MIB)
            }
            Error::KernelFailed { kernel, error } => write!(f, "{kernel} failed while running: {}", driver_error_name(error)),
            Error::Timeout { kernel, seconds } => write!(
                f,
                "{kernel} did not finish within {seconds} s: a kernel is stuck (a barrier that some thread never reaches?); exiting ends it (raise the limit with --timeout-s)"
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
            Error::Emulated { kernel, fault } => match **fault {
                cg_kernel::emu::Fault::Deadlock(_) => write!(f, "{fault}"),
                _ => write!(f, "{kernel} on the emulated device: {fault}"),
            },
            Error::UndeclaredGridSync { kernel } => write!(
                f,
                "{kernel} calls grid.sync() but is declared #[kernel] without `cooperative`, so it would be launched the ordinary way: declare it #[kernel(cooperative)]"
            ),
            Error::NotInPtx { kernel, tile } => match tile {
                Some(t) => write!(f, "{kernel} with tiles of {t} exists only on the emulator: change the tile in the kernel's source to run it on the GPU"),
                None => write!(f, "{kernel} is declared #[kernel(emulator)]: it has no GPU entry and runs only on the emulator (--emulate)"),
            },
            Error::NotOnEmulator(what) => write!(f, "{what} needs a CUDA GPU: drop --emulate"),
            Error::BadMatrix { why } => write!(f, "not a sparse matrix the solver can read: {why}"),
            Error::BadSystem { why } => write!(f, "{why}"),
            Error::DidNotConverge { path, iterations, residual, tolerance } => write!(
                f,
                "{path} did not converge: after {iterations} iterations the residual's norm is {residual:.3e}, above the tolerance {tolerance:.1e}: raise --max-iterations or the tolerance"
            ),
            Error::OtherDevice { what } => write!(f, "{what} was made by another device than the one it was given to: use it on the device that made it"),
            Error::OtherBranch { made_in, used_in } => write!(
                f,
                "a buffer allocated in branch {made_in} of in_parallel was given to a launch in branch {used_in}, whose stream does not wait for branch {made_in}: allocate it before in_parallel, or in the branch that uses it"
            ),
            Error::MemoryInCapture { what } => {
                write!(f, "{what} while a graph is captured: nothing runs during a capture, so allocate, copy and free before it or after it")
            }
            Error::Io { path, error } => write!(f, "could not write {path}: {error}"),
            Error::ChecksFailed { failed, total } => write!(f, "{} of {total} failed (listed above)", plural(*failed, "check", "checks")),
            Error::NoNccl { why } => write!(f, "{why}; or run the grid across GPUs alone with --no-nccl"),
            Error::Nccl { call, error } => write!(f, "{call} failed: {error}"),
            Error::TooManyGpus { requested, count } => {
                write!(
                    f,
                    "--gpus {requested}, but the driver reports {}: give --gpus 1..{count}, or leave it out for all of them",
                    plural(*count as usize, "GPU", "GPUs")
                )
            }
            Error::PeerStopped { rank } => write!(f, "GPU {rank} stopped on an error, so the others stopped too"),
            Error::RanksDidNotArrive { step, missing, seconds } => {
                write!(f, "{} did not reach {step} within {seconds} s while the others waited there", gpus_named(missing))
            }
            Error::AcrossGpusTimedOut { kernel, gave_up, missing, seconds } => write!(
                f,
                "the barrier across GPUs in {kernel} timed out: GPU {gave_up} waited {seconds} s for {}, which never arrived (every GPU's grid must be launched and running at once)",
                gpus_named(missing)
            ),
            Error::NoNcclId { path, seconds } => {
                write!(f, "no NCCL id appeared in {path} within {seconds} s: start rank 0 with the same --nccl-id (it writes the id there)")
            }
            Error::BadSweep { lo, hi } => write!(f, "--min-log2 {lo} is above --max-log2 {hi}: the sweep would have no size"),
            Error::RankOutOfRange { flag, rank, ranks } => {
                write!(
                    f,
                    "{flag} {rank} is out of range: there are {}, numbered from 0 to {}",
                    plural(*ranks as usize, "rank", "ranks"),
                    ranks.saturating_sub(1)
                )
            }
            Error::Caller(e) => write!(f, "{e}"),
            Error::BadNcclId { path } => write!(f, "{path} does not hold an NCCL id (256 hex digits, as rank 0 writes it): remove it and start rank 0 again"),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_a_user_can_cause_are_one_line_in_their_words() {
        let errors = [
            Error::NoDriver,
            Error::NoDevice { requested: 3, count: 1 },
            Error::OutOfDeviceMemory { needed: 1 << 40, free: 1 << 30 },
            Error::OutOfHostMemory { needed: 1 << 40 },
            Error::InputTooLarge { n: usize::MAX },
            Error::BadThreadsPerBlock { threads_per_block: 48, why: BadBlock::NotWarps },
            Error::OverLaunchBounds { kernel: "conjugate_gradient_persistent", threads_per_block: 512, max_threads: 256 },
            Error::Timeout { kernel: "reduce_cooperative_grid", seconds: 60.0 },
            Error::DeviceStuck { kernel: "exercise_sum" },
            Error::ChecksFailed { failed: 1, total: 5 },
            Error::GridBarrierTimedOut {
                kernel: "grid_sync_missing_block",
                report: cg_kernel::cg::barrier::Report { block: 4, arrived: 1055, expected: 1056 },
            },
            Error::TooManyGpus { requested: 3, count: 2 },
            Error::AcrossGpusTimedOut { kernel: "reduce_multi_gpu", gave_up: 0, missing: vec![1, 3], seconds: 5.0 },
            Error::RanksDidNotArrive { step: "the sum", missing: vec![2], seconds: 60.0 },
            Error::NoNccl { why: "no NCCL library was found".into() },
            Error::RankOutOfRange { flag: "--rank", rank: 3, ranks: 2 },
        ];
        for e in errors {
            let s = e.to_string();
            assert_eq!(s.lines().count(), 1, "{s}");
            assert!(!s.contains("Some(") && !s.contains("Ok(") && !s.contains("Err(") && !s.contains("()"), "{s}");
        }
        assert_eq!(Error::NoDevice { requested: 3, count: 1 }.to_string(), "no CUDA device 3: the driver reports 1 device, so use --device 0..0");
        assert!(Error::NoDriver.to_string().contains("--emulate"));
        assert_eq!(Error::ChecksFailed { failed: 1, total: 5 }.to_string(), "1 check of 5 failed (listed above)");
        assert_eq!(
            Error::TooManyGpus { requested: 3, count: 2 }.to_string(),
            "--gpus 3, but the driver reports 2 GPUs: give --gpus 1..2, or leave it out for all of them"
        );
        assert_eq!(
            Error::RankOutOfRange { flag: "--rank", rank: 3, ranks: 2 }.to_string(),
            "--rank 3 is out of range: there are 2 ranks, numbered from 0 to 1"
        );
        let stranded = Error::AcrossGpusTimedOut { kernel: "reduce_multi_gpu", gave_up: 0, missing: vec![1, 2, 3], seconds: 5.0 }.to_string();
        assert!(stranded.contains("GPU 0 waited 5 s for GPUs 1, 2 and 3, which never arrived"), "{stranded}");
        let oom = Error::OutOfDeviceMemory { needed: 3 << 30, free: 1 << 30 }.to_string();
        assert!(oom.contains("3072.0 MiB") && oom.contains("1024.0 MiB is free"), "{oom}");
    }
}
