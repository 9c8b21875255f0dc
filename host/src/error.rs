//! The program's error type: the launcher's errors, and the program's own.
//! Each `Display` is the single line a user reads: what is wrong and what to
//! do, in this program's words (its flags, `--emulate`, `--n`).

use crate::invocation::{self, Runner};
use crate::text::{gpus_named, plural};
use cg_launcher::error::Error as L;
use std::fmt;

#[derive(Debug)]
pub enum Error {
    /// An error of the launcher library (devices, memory, launches).
    Launch(cg_launcher::error::Error),
    /// `bench` on a machine without the NVIDIA driver.
    BenchNeedsGpu,
    /// The exercise's `solve()` as it ships, before the learner writes it.
    SolveUnwritten,
    /// A sparse matrix whose offsets or columns would read outside it.
    BadMatrix { why: String },
    /// A conjugate-gradient problem the solver refuses: the reason.
    BadSystem { why: String },
    /// A conjugate-gradient solve that stopped at its iteration limit.
    DidNotConverge { path: &'static str, iterations: u32, residual: f64, tolerance: f64 },
    /// A file could not be written.
    Io { path: String, error: std::io::Error },
    /// One or more of the run's checks failed; each is listed by name above.
    ChecksFailed { failed: usize, total: usize },
    /// `--gpus` more than the driver reports.
    TooManyGpus { requested: u32, count: u32 },
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
    /// Another GPU's host thread failed first (its error is the one to read).
    PeerStopped { rank: u32 },
    /// Host threads of some GPUs did not reach a step the others waited at.
    RanksDidNotArrive { step: &'static str, missing: Vec<u32>, seconds: f64 },
    /// A driver call this program makes through cudarc itself (the launch-cost
    /// bench's raw launches), which failed.
    RawDriver { call: &'static str, error: cudarc::driver::DriverError },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The launcher's errors, as the program's. An error of the program's own
/// that passed through a closure the launcher ran comes back as itself.
impl From<cg_launcher::error::Error> for Error {
    fn from(e: cg_launcher::error::Error) -> Error {
        match e {
            cg_launcher::error::Error::Caller(e) => match e.downcast::<Error>() {
                Ok(mine) => *mine,
                Err(other) => Error::Launch(cg_launcher::error::Error::Caller(other)),
            },
            e => Error::Launch(e),
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
    pub fn driver(call: &'static str) -> impl FnOnce(cudarc::driver::DriverError) -> Error {
        move |error| Error::RawDriver { call, error }
    }

    /// The launcher's error, if this is one.
    pub fn launch(&self) -> Option<&L> {
        match self {
            Error::Launch(e) => Some(e),
            _ => None,
        }
    }

    /// The driver call that failed, where the error came from one.
    pub fn call(&self) -> Option<&'static str> {
        self.launch().and_then(L::call)
    }

    /// The driver's name for the error (`CUDA_ERROR_...`), where there is one.
    pub fn driver_name(&self) -> Option<String> {
        self.launch().and_then(L::driver_name)
    }
}

const MIB: f64 = 1024.0 * 1024.0;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::RawDriver { call, error } => write!(f, "the CUDA driver's {call} failed: {error}"),
            Error::BenchNeedsGpu => write!(
                f,
                "bench times a GPU, and no NVIDIA driver was found (libcuda could not be loaded): install the driver, or run the lesson and the exercise on the emulated GPU (`{}`, `{}`)",
                crate::invocation::command("", true),
                crate::invocation::command("exercise", true)
            ),
            Error::SolveUnwritten => write!(
                f,
                "solve() is yours to write, in exercise/solve.rs: launch exercise_sum once, cooperatively, on a grid you size, leave the sum in total[0] and return Solved {{ blocks, threads_per_block, blocks_per_sm, sms }} (`{}` runs ours)",
                invocation::again_with("--variant reference")
            ),
            Error::BadMatrix { why } => write!(f, "not a sparse matrix the solver can read: {why}"),
            Error::BadSystem { why } => write!(f, "{why}"),
            Error::DidNotConverge { path, iterations, residual, tolerance } => write!(
                f,
                "{path} did not converge: after {iterations} iterations the residual's norm is {residual:.3e}, above the tolerance {tolerance:.1e}: raise --max-iterations or the tolerance"
            ),
            Error::Io { path, error } => write!(f, "could not write {path}: {error}"),
            Error::ChecksFailed { failed, total } => write!(f, "{} of {total} failed (listed above)", plural(*failed, "check", "checks")),
            Error::TooManyGpus { requested, count } => {
                write!(
                    f,
                    "--gpus {requested}, but the driver reports {}: give --gpus 1..{count}, or leave it out for all of them",
                    plural(*count as usize, "GPU", "GPUs")
                )
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
            Error::BadNcclId { path } => write!(f, "{path} does not hold an NCCL id (256 hex digits, as rank 0 writes it): remove it and start rank 0 again"),
            Error::Launch(L::EmulatorOnlyBuild) => write!(
                f,
                "this program was built for the emulator only (`cargo emulate`), so it holds no PTX for a GPU: run it on the emulator (`{}`), or build it for the GPU (`{}`)",
                Runner::CargoEmulate.again(&invocation::typed(), true),
                Runner::CargoRun.again(&invocation::typed(), false)
            ),
            Error::Launch(L::NoDriver) => write!(
                f,
                "no NVIDIA driver found (libcuda could not be loaded): run it without a GPU, on the emulated one (`{}`), or install the NVIDIA driver",
                invocation::again_emulated()
            ),
            Error::Launch(L::NoDevice { requested, count }) => match count {
                0 => write!(f, "no CUDA device {requested}: the driver reports no devices (run it on the emulated GPU: `{}`)", invocation::again_emulated()),
                _ => write!(f, "no CUDA device {requested}: the driver reports {}, so use --device 0..{}", plural(*count, "device", "devices"), count - 1),
            },
            Error::Launch(L::ComputeCapabilityTooLow { name, major, minor }) => write!(
                f,
                "{name} is compute capability {major}.{minor}; this project's kernels need 7.0 or newer (their PTX is sm_70, with acquire/release atomics and barrier.sync that older GPUs lack), so run it on the emulated GPU (`{}`)",
                invocation::again_emulated()
            ),
            Error::Launch(L::NoCooperativeLaunch { name }) => write!(
                f,
                "{name} does not support cooperative launch (cudaDevAttrCooperativeLaunch = 0): on Linux, stop MPS or use a device of compute capability 7.0 or newer (or run it on the emulated GPU: `{}`)",
                invocation::again_emulated()
            ),
            Error::Launch(L::ClustersNeedSm90 { kernel, major, minor }) => write!(
                f,
                "{kernel} uses thread-block clusters (#[kernel(cluster)]), which need compute capability 9.0 (Hopper) or later; this GPU is {major}.{minor}: run it on an H100/H200, or on the emulated H200 (`{}`)",
                Runner::current().again(&[invocation::typed(), vec!["--gpu".into(), "h200".into()]].concat(), true)
            ),
            Error::Launch(L::GridTooManyThreads { kernel, blocks, threads_per_block }) => write!(
                f,
                "launch of {kernel} with {blocks} blocks of {threads_per_block} threads refused: that is {} threads, and this project's kernels count a grid's threads in 32 bits (a grid of 2^32 or more traps); a grid-stride loop covers any n with fewer blocks",
                *blocks as u64 * *threads_per_block as u64
            ),
            Error::Launch(L::InputTooLarge { n }) => write!(f, "--n {n} is too large: its bytes cannot be counted in this machine's address space"),
            Error::Launch(L::OutOfDeviceMemory { needed, free }) => {
                write!(f, "the input needs {:.1} MiB of device memory but only {:.1} MiB is free: use a smaller --n", *needed as f64 / MIB, *free as f64 / MIB)
            }
            Error::Launch(L::OutOfHostMemory { needed }) => {
                write!(f, "the input needs {:.1} MiB of host memory, more than this machine can give it: use a smaller --n", *needed as f64 / MIB)
            }
            Error::Launch(L::Timeout { kernel, seconds }) => write!(
                f,
                "{kernel} did not finish within {seconds} s: a kernel is stuck (a barrier that some thread never reaches?); exiting ends it (raise the limit with --timeout-s)"
            ),
            Error::Launch(L::NotInPtx { kernel, tile }) => match tile {
                Some(t) => write!(f, "{kernel} with tiles of {t} exists only on the emulator: change the tile in the kernel's source to run it on the GPU"),
                None => write!(
                    f,
                    "{kernel} is declared #[kernel(emulator)]: it has no GPU entry and runs only on the emulator (`{}`)",
                    invocation::again_emulated()
                ),
            },
            Error::Launch(L::NoTracedModule) => write!(
                f,
                "this build has no traced module (it is a third GPU build of the kernels after every edit, so it is built only when asked for): build it with `cargo run --release -p host --features host/traced -- trace`, or trace on the emulator (`{}`)",
                invocation::again_emulated()
            ),
            Error::Launch(L::NotOnEmulator(what)) => {
                write!(f, "{what} needs a CUDA GPU, and this run is on the emulated one: on a GPU, `{}`", invocation::again_on_a_gpu())
            }
            Error::Launch(L::NoNccl { why }) => write!(f, "{why}; or run the grid across GPUs alone with --no-nccl"),
            Error::PeerStopped { rank } => write!(f, "GPU {rank} stopped on an error, so the others stopped too"),
            Error::RanksDidNotArrive { step, missing, seconds } => {
                write!(f, "{} did not reach {step} within {seconds} s while the others waited there", gpus_named(missing))
            }
            Error::Launch(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sizing::BadBlock;

    #[test]
    fn errors_a_user_can_cause_are_one_line_in_their_words() {
        let errors = [
            Error::Launch(L::NoDriver),
            Error::Launch(L::NoDevice { requested: 3, count: 1 }),
            Error::Launch(L::OutOfDeviceMemory { needed: 1 << 40, free: 1 << 30 }),
            Error::Launch(L::OutOfHostMemory { needed: 1 << 40 }),
            Error::Launch(L::InputTooLarge { n: usize::MAX }),
            Error::Launch(L::BadThreadsPerBlock { threads_per_block: 48, why: BadBlock::NotWarps }),
            Error::Launch(L::OverLaunchBounds { kernel: "conjugate_gradient_persistent", threads_per_block: 512, max_threads: 256 }),
            Error::Launch(L::Timeout { kernel: "reduce_cooperative_grid", seconds: 60.0 }),
            Error::Launch(L::DeviceStuck { kernel: "exercise_sum" }),
            Error::ChecksFailed { failed: 1, total: 5 },
            Error::Launch(L::GridBarrierTimedOut {
                kernel: "grid_sync_missing_block",
                report: cg_kernel::cg::barrier::Report { block: 4, arrived: 1055, expected: 1056 },
            }),
            Error::TooManyGpus { requested: 3, count: 2 },
            Error::AcrossGpusTimedOut { kernel: "reduce_multi_gpu", gave_up: 0, missing: vec![1, 3], seconds: 5.0 },
            Error::RanksDidNotArrive { step: "the sum", missing: vec![2], seconds: 60.0 },
            Error::PeerStopped { rank: 1 },
            Error::Launch(L::NoNccl { why: "no NCCL library was found".into() }),
            Error::RankOutOfRange { flag: "--rank", rank: 3, ranks: 2 },
        ];
        for e in errors {
            let s = e.to_string();
            assert_eq!(s.lines().count(), 1, "{s}");
            assert!(!s.contains("Some(") && !s.contains("Ok(") && !s.contains("Err(") && !s.contains("()"), "{s}");
        }
        assert_eq!(Error::Launch(L::NoDevice { requested: 3, count: 1 }).to_string(), "no CUDA device 3: the driver reports 1 device, so use --device 0..0");
        assert!(Error::Launch(L::NoDriver).to_string().contains("--emulate"));
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
        let oom = Error::Launch(L::OutOfDeviceMemory { needed: 3 << 30, free: 1 << 30 }).to_string();
        assert!(oom.contains("3072.0 MiB") && oom.contains("1024.0 MiB is free"), "{oom}");
    }
}
