//! The command line.

use crate::exercise::Variant;
use crate::invocation::Runner;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Cooperative groups and grid-wide sync, in Rust, on your GPU (or, with
/// --emulate, on an emulated one).
///
/// With no subcommand, runs the lesson: the cooperative grid's size, what
/// this_grid() reports, the sum two ways, coalesced_threads(), and timings.
#[derive(Debug, Parser)]
#[command(name = "cg-lesson", version, args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub lesson: LessonArgs,
    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the exercise's harness against solve() in exercise/solve.rs.
    Exercise {
        /// Which solver to run: yours, or one that makes a mistake the lesson describes.
        #[arg(long, value_enum, default_value_t = Variant::Solve)]
        variant: Variant,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Benchmark the sums over n = 2^10 .. 2^max-log2 against a device-to-device
    /// copy, and against C++ and CUB where nvcc is on PATH (needs a GPU).
    Bench(BenchArgs),
    /// Solve A x = b by conjugate gradient on every path, each checked
    /// against the CPU: a launch per step; a CUDA graph; one persistent
    /// cooperative kernel (three grid.sync() an iteration); fused (one
    /// reduction, two grid.sync()) and fused-resident; on chip (the vectors
    /// in shared memory, one grid.reduce_array an iteration), on-chip
    /// stencil (Poisson) and on-chip streamed; and with nvcc, the C++ twins
    /// of the persistent and fused kernels. With --bench, time them over N.
    ConjugateGradient(ConjugateGradientArgs),
    /// Draw where and when each block ran (SVG): the cooperative launch, the
    /// two launches, an ordinary launch sized to n, and (emulator only) an
    /// ordinary launch of the cooperative kernel, which deadlocks.
    Trace {
        /// Folder for the pictures.
        #[arg(long, default_value = "target/trace")]
        out: PathBuf,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// The cooperative ceiling by kernel and block size: registers, shared
    /// memory, blocks per SM, what limits them.
    Occupancy {
        #[command(flatten)]
        target: TargetArgs,
    },
    /// The lesson's sum over every GPU of this host: each GPU sums its shard
    /// in one cooperative launch, and the totals are combined (a) by a
    /// barrier across the GPUs inside the kernel and (b) by NCCL's
    /// all-reduce; both checked and timed, then one GPU against all of them
    /// from n = 2^20 up.
    MultiGpu(MultiArgs),
}

/// The flags of `multi-gpu`.
#[derive(Debug, Args)]
pub struct MultiArgs {
    /// GPUs to use, from device 0 [default: every GPU; 2 on the emulator].
    #[arg(long, value_parser = parse_between::<1, 64>, allow_negative_numbers = true)]
    pub gpus: Option<u32>,
    /// Number of floats to sum, across all the GPUs.
    #[arg(long, default_value_t = 4_194_915, value_parser = parse_count::<usize>, allow_negative_numbers = true)]
    pub n: usize,
    /// Threads per block: a multiple of 32, at most 1024.
    #[arg(long, default_value_t = 256, value_parser = parse_threads_per_block, allow_negative_numbers = true)]
    pub threads_per_block: u32,
    /// Timed runs per way [default: 10 on GPUs; 1 on the emulator, whose
    /// times are the CPU's wall time, printed as such: they say nothing about a GPU].
    #[arg(long, value_parser = parse_between::<0, 100_000>, allow_negative_numbers = true)]
    pub runs: Option<u32>,
    /// Untimed warm-up runs [default: 3 on GPUs, 0 on the emulator].
    #[arg(long, value_parser = parse_between::<0, 100_000>, allow_negative_numbers = true)]
    pub warmups: Option<u32>,
    /// Skip NCCL: only the grid across GPUs (NCCL needs no install for that).
    #[arg(long, conflicts_with_all = ["rank", "ranks", "nccl_id"])]
    pub no_nccl: bool,
    /// This process's rank, with one process per GPU (the NCCL path only).
    #[arg(long, requires_all = ["ranks", "nccl_id"], value_parser = parse_between::<0, 65_535>, allow_negative_numbers = true)]
    pub rank: Option<u32>,
    /// How many processes there are, one per GPU.
    #[arg(long, requires_all = ["rank", "nccl_id"], value_parser = parse_between::<1, 65_536>, allow_negative_numbers = true)]
    pub ranks: Option<u32>,
    /// The file rank 0 writes NCCL's unique id to and the other ranks read
    /// it from (on a folder every host sees, for several hosts).
    #[arg(long, value_name = "FILE", requires_all = ["rank", "ranks"], conflicts_with_all = ["gpus", "emulate"])]
    pub nccl_id: Option<PathBuf>,
    /// With --rank: the CUDA device of this process [default: rank mod the device count].
    #[arg(long, requires = "rank", value_parser = parse_count::<usize>, allow_negative_numbers = true)]
    pub device: Option<usize>,
    /// Smallest n of the one-GPU-against-all sweep, as a power of two.
    #[arg(long, default_value_t = 20, value_parser = parse_between::<0, 40>, allow_negative_numbers = true)]
    pub min_log2: u32,
    /// Largest n of the sweep, as a power of two; it stops earlier where one
    /// GPU cannot hold n [default: 36 on GPUs; no sweep on the emulator].
    #[arg(long, value_parser = parse_between::<0, 40>, allow_negative_numbers = true)]
    pub max_log2: Option<u32>,
    /// Skip the sweep.
    #[arg(long, conflicts_with = "max_log2")]
    pub no_sweep: bool,
    /// Never launch this GPU's part of the sum across GPUs: the mistake the
    /// barrier's bounded wait is there to name (for tests).
    #[arg(long, hide = true, value_parser = parse_between::<0, 63>, allow_negative_numbers = true)]
    pub never_launch: Option<u32>,
    /// Print the results as one JSON object on stdout instead of text.
    #[arg(long)]
    pub json: bool,
    /// Seconds a GPU's thread waits for the others, or for its GPU, before calling it stuck.
    #[arg(long, default_value_t = 60.0, value_parser = parse_seconds, allow_negative_numbers = true)]
    pub timeout_s: f64,
    #[command(flatten)]
    pub emulation: EmulationArgs,
}

/// The lesson's own flags.
#[derive(Debug, Args)]
pub struct LessonArgs {
    /// Number of floats to sum.
    #[arg(long, default_value_t = 4_194_915, value_parser = parse_count::<usize>, allow_negative_numbers = true)]
    pub n: usize,
    /// Threads per block: a multiple of 32, at most 1024 (and the device's limit).
    #[arg(long, default_value_t = 256, value_parser = parse_threads_per_block, allow_negative_numbers = true)]
    pub threads_per_block: u32,
    /// Timed runs per path; 0 times nothing (the sums are still run and
    /// checked once) [default: 10 on a GPU, 1 on the emulator].
    #[arg(long, value_parser = parse_between::<0, 100_000>, allow_negative_numbers = true)]
    pub runs: Option<u32>,
    /// Untimed warm-up runs before timing [default: 3 on a GPU, 0 on the emulator].
    #[arg(long, value_parser = parse_between::<0, 100_000>, allow_negative_numbers = true)]
    pub warmups: Option<u32>,
}

/// Where the lesson or the exercise runs, and how its results are printed.
#[derive(Debug, Args, Clone)]
pub struct TargetArgs {
    /// CUDA device index.
    #[arg(long, default_value_t = 0, value_parser = parse_count::<usize>, allow_negative_numbers = true, conflicts_with = "emulate")]
    pub device: usize,
    /// Print the results as one JSON object on stdout instead of text.
    #[arg(long)]
    pub json: bool,
    /// Seconds to wait for the device before calling a kernel stuck (on the
    /// emulator: seconds with no block ending and no barrier completing).
    #[arg(long, default_value_t = 60.0, value_parser = parse_seconds, allow_negative_numbers = true)]
    pub timeout_s: f64,
    #[command(flatten)]
    pub emulation: EmulationArgs,
}

/// The emulated GPU: the same kernels, run on the CPU. The default is the
/// lesson's Tesla T4: 40 SMs of 1024 threads, 16 blocks and 64 KiB of shared
/// memory; `--gpu h200` is an H200 (132 SMs of 2048 threads, 32 blocks, 228
/// KiB, and thread-block clusters as measured on one).
#[derive(Debug, Args, Clone)]
pub struct EmulationArgs {
    /// Run on the emulated GPU on the CPU: no GPU or driver needed.
    #[arg(long)]
    pub emulate: bool,
    /// Which GPU to emulate: the lesson's T4, or an H200 (which has clusters).
    #[arg(long, value_enum, default_value_t = EmulatedGpu::T4, requires = "emulate")]
    pub gpu: EmulatedGpu,
    /// SMs of the emulated GPU [default: the GPU's, 40 on the T4].
    #[arg(long, requires = "emulate", value_parser = parse_between::<1, 160>, allow_negative_numbers = true)]
    pub sms: Option<u32>,
    /// Threads one emulated SM holds [default: the GPU's, 1024 on the T4].
    #[arg(long, requires = "emulate", value_parser = parse_between::<32, 2048>, allow_negative_numbers = true)]
    pub threads_per_sm: Option<u32>,
    /// Blocks one emulated SM holds at most [default: the GPU's, 16 on the T4].
    #[arg(long, requires = "emulate", value_parser = parse_between::<1, 32>, allow_negative_numbers = true)]
    pub blocks_per_sm: Option<u32>,
    /// Interleave each block's threads in an order drawn from this seed (a
    /// number, or `random` for a new one, printed so the run can be repeated).
    #[arg(long, requires = "emulate", value_parser = parse_seed)]
    pub seed: Option<u64>,
}

/// A GPU the emulator can be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EmulatedGpu {
    /// The lesson's Tesla T4 (compute capability 7.5: no clusters).
    T4,
    /// An NVIDIA H200 (9.0): 1,056 cooperative blocks of 256 threads, and clusters.
    H200,
}

impl EmulationArgs {
    /// The emulated device these flags describe.
    pub fn device(&self) -> cg_emulator::Device {
        let base = match self.gpu {
            EmulatedGpu::T4 => cg_emulator::Device::T4,
            EmulatedGpu::H200 => cg_emulator::Device::H200,
        };
        cg_emulator::Device {
            sms: self.sms.unwrap_or(base.sms),
            threads_per_sm: self.threads_per_sm.unwrap_or(base.threads_per_sm),
            blocks_per_sm: self.blocks_per_sm.unwrap_or(base.blocks_per_sm),
            ..base
        }
    }
}

/// The conjugate-gradient solver's flags.
#[derive(Debug, Args)]
pub struct ConjugateGradientArgs {
    /// Rows of the matrix, 1024 ..= 16777216 (at most 16384 on the emulator);
    /// default 1048576 on a GPU, 4096 on the emulator.
    #[arg(long, value_parser = parse_count::<usize>, allow_negative_numbers = true)]
    pub n: Option<usize>,
    /// Solve the 2-D Poisson equation on an M x M grid instead (the 5-point
    /// Laplacian, Dirichlet boundary, b = 1; N = M^2), M from 32 to 2048 (at
    /// most 128 on the emulator): hundreds to thousands of iterations.
    #[arg(long, value_name = "M", value_parser = parse_count::<usize>, allow_negative_numbers = true, conflicts_with = "n")]
    pub poisson: Option<usize>,
    /// Stop when the residual's norm is at most this [default: 1e-5; with
    /// --poisson, 1e-5 of the norm of b, 1e-5 M].
    #[arg(long, allow_negative_numbers = true)]
    pub tolerance: Option<f64>,
    /// Give up after this many iterations.
    #[arg(long, default_value_t = 10_000, value_parser = parse_count::<u32>, allow_negative_numbers = true)]
    pub max_iterations: u32,
    /// Seed of the random matrix.
    #[arg(long, default_value_t = 1, value_parser = parse_count::<u64>, allow_negative_numbers = true)]
    pub matrix_seed: u64,
    /// Time the three paths and the persistent kernel's C++ twin at every
    /// N = 2^10 ..= 2^max-log2 instead (a GPU only).
    #[arg(long)]
    pub bench: bool,
    /// Largest N of the benchmark, as a power of two.
    #[arg(long, default_value_t = 24, value_parser = parse_between::<10, 24>, requires = "bench")]
    pub max_log2: u32,
    /// Timed rounds per N of the benchmark (each runs the three paths, in rotating order).
    #[arg(long, default_value_t = 10, value_parser = parse_between::<1, 1000>, requires = "bench")]
    pub rounds: u32,
    /// Folder for the benchmark's JSON and SVG.
    #[arg(long, default_value = "target/conjugate-gradient", requires = "bench")]
    pub out: PathBuf,
    /// Leave out the C++ twin (built with nvcc, which the benchmark otherwise needs).
    #[arg(long, requires = "bench")]
    pub no_cpp: bool,
    #[command(flatten)]
    pub target: TargetArgs,
}

/// The benchmark's flags (a CUDA GPU only).
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// CUDA device index.
    #[arg(long, default_value_t = 0, value_parser = parse_count::<usize>, allow_negative_numbers = true)]
    pub device: usize,
    /// Timed runs per point.
    #[arg(long, default_value_t = 100, value_parser = parse_between::<1, 100_000>, allow_negative_numbers = true)]
    pub runs: u32,
    /// Untimed warm-up runs per point.
    #[arg(long, default_value_t = 10, value_parser = parse_between::<0, 100_000>, allow_negative_numbers = true)]
    pub warmups: u32,
    /// Input buffers to rotate among (0: enough to overflow the L2 twice).
    #[arg(long, default_value_t = 0, value_parser = parse_between::<0, 4096>, allow_negative_numbers = true)]
    pub rotate: u32,
    /// Smallest size, as a power of two.
    #[arg(long, default_value_t = 10, value_parser = parse_between::<10, 32>, allow_negative_numbers = true)]
    pub min_log2: u32,
    /// Largest size, as a power of two.
    #[arg(long, default_value_t = 28, value_parser = parse_between::<10, 32>, allow_negative_numbers = true)]
    pub max_log2: u32,
    /// Threads per block.
    #[arg(long, default_value_t = 256, value_parser = parse_threads_per_block, allow_negative_numbers = true)]
    pub threads_per_block: u32,
    /// Folder for the plot (bench.svg) and the results (bench.json).
    #[arg(long, default_value = "target/bench")]
    pub out: PathBuf,
    /// Paired rounds for the ratio targets (each pair timed A B, then B A, ...); 0 judges none.
    #[arg(long, default_value_t = 16, value_parser = parse_between::<0, 10_000>, allow_negative_numbers = true)]
    pub rounds: u32,
    /// Timed runs of each variant in each round (after 3 warm-ups).
    #[arg(long, default_value_t = 10, value_parser = parse_between::<1, 100_000>, allow_negative_numbers = true)]
    pub round_runs: u32,
    /// Skip the C++ and CUB comparison even where nvcc is available.
    #[arg(long)]
    pub no_cpp: bool,
    /// Only what one grid barrier costs (this project's, NVIDIA's, a kernel
    /// boundary, a graph node), at a few grid sizes: no sweep over n.
    #[arg(long, conflicts_with = "only_clusters")]
    pub only_barrier: bool,
    /// Only the sum with a cluster stage against its C++ twin, and one
    /// cluster.sync() against one grid.sync() (compute capability 9.0+).
    #[arg(long)]
    pub only_clusters: bool,
    /// Skip the grid-size and block-size sweeps.
    #[arg(long)]
    pub no_sweeps: bool,
    /// Also time the lesson's kernels as NVlabs cuda-oxide builds them, from
    /// this PTX file (the lesson's three kernels compiled with cuda-oxide for
    /// sm_90: not in this repository; docs/benchmarks.md says what it holds),
    /// through the same launch path.
    #[arg(long, value_name = "PTX")]
    pub oxide: Option<PathBuf>,
    /// Print the results as one JSON object on stdout instead of text.
    #[arg(long)]
    pub json: bool,
    /// Seconds to wait for the GPU before calling a kernel stuck.
    #[arg(long, default_value_t = 60.0, value_parser = parse_seconds, allow_negative_numbers = true)]
    pub timeout_s: f64,
}

/// The command line as `runner` presents it in `--help`: its usage lines
/// spelled as the learner runs the program (`Usage: cargo emulate exercise`),
/// and, for `cargo emulate`, without the flags the alias sets (`--emulate`)
/// or refuses (`--device`, and multi-gpu's `--rank`, `--ranks`, `--nccl-id`,
/// which pick CUDA GPUs).
pub fn command_for(runner: Runner) -> clap::Command {
    use clap::CommandFactory;
    fn hide(cmd: clap::Command, ids: &[&str]) -> clap::Command {
        let present: Vec<String> = cmd.get_arguments().map(|a| a.get_id().to_string()).filter(|id| ids.contains(&id.as_str())).collect();
        let cmd = present.iter().fold(cmd, |cmd, id| cmd.mut_arg(id.as_str(), |a| a.hide(true)));
        let subs: Vec<String> = cmd.get_subcommands().map(|c| c.get_name().to_string()).collect();
        subs.iter().fold(cmd, |cmd, sub| cmd.mut_subcommand(sub.as_str(), |c| hide(c, ids)))
    }
    let bin = match runner {
        Runner::CargoEmulate => "cargo emulate",
        Runner::CargoRun => "cargo run --release -p host --",
        Runner::Installed => "cg-lesson",
    };
    let cmd = Cli::command().bin_name(bin);
    match runner {
        Runner::CargoEmulate => hide(cmd, &["emulate", "device", "rank", "ranks", "nccl_id"]),
        _ => cmd,
    }
}

/// The subcommands, by name.
pub const SUBCOMMANDS: [&str; 6] = ["exercise", "bench", "conjugate-gradient", "trace", "occupancy", "multi-gpu"];

/// The flags that describe the emulated GPU, which need `--emulate`.
const EMULATOR_ONLY: [&str; 5] = crate::invocation::EMULATOR_FLAGS;

/// Why `bench` does not run on the emulator, and what does, for a learner
/// whose runner is `runner`.
fn bench_needs_a_gpu(runner: Runner, typed: &[String]) -> String {
    let on_emulator: Vec<String> =
        ["", "exercise", "trace", "occupancy", "conjugate-gradient", "multi-gpu"].iter().map(|s| format!("`{}`", runner.command(s, true))).collect();
    format!(
        "bench times a GPU, so it needs one (on a GPU: `{}`); the emulator times nothing, and runs the lesson and every other subcommand: {}",
        runner.again(typed, false),
        on_emulator.join(", ")
    )
}

/// The long flags, across the program and its subcommands, that take a
/// value: read once from clap's definition of the command line.
fn flags_with_values() -> &'static [String] {
    static FLAGS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    FLAGS.get_or_init(|| {
        use clap::CommandFactory;
        let cli = Cli::command();
        let mut flags = Vec::new();
        for cmd in std::iter::once(&cli).chain(cli.get_subcommands()) {
            for arg in cmd.get_arguments() {
                if arg.get_action().takes_values()
                    && let Some(long) = arg.get_long()
                {
                    flags.push(format!("--{long}"));
                }
            }
        }
        flags
    })
}

/// Whether `--name` is a flag of the program or of any subcommand.
fn known_flag(name: &str) -> bool {
    use clap::CommandFactory;
    let cli = Cli::command();
    std::iter::once(&cli).chain(cli.get_subcommands()).any(|cmd| cmd.get_arguments().any(|a| a.get_long() == Some(name)))
}

/// Where the subcommand is in `args` (which start with the program's name):
/// the first word that is not a flag or a flag's value; with it, whether it
/// is a subcommand.
fn subcommand_at(args: &[String]) -> Option<(usize, bool)> {
    let takes_value = flags_with_values();
    let mut k = 1;
    while k < args.len() {
        let a = &args[k];
        if a == "--" {
            return None;
        }
        if a.starts_with('-') {
            k += if !a.contains('=') && takes_value.contains(a) { 2 } else { 1 };
            continue;
        }
        return Some((k, SUBCOMMANDS.contains(&a.as_str())));
    }
    None
}

/// `args` with the flags written before the subcommand moved after it, where
/// clap takes them: `--gpu h200 trace` is `trace --gpu h200`, so a learner
/// may write a flag on either side. A `--` is dropped: the program takes no
/// arguments but flags and a subcommand, so it can only be the habit of
/// `cargo run -- ...` (`cargo emulate -- --n 5`, whose alias has its own `--`).
pub fn flags_after_the_subcommand(args: Vec<String>) -> Vec<String> {
    let takes_value = flags_with_values();
    let mut kept: Vec<String> = Vec::with_capacity(args.len());
    for a in args {
        let a_value = kept.last().is_some_and(|f| !f.contains('=') && takes_value.contains(f));
        if a == "--" && !a_value {
            continue;
        }
        kept.push(a);
    }
    let mut args = kept;
    if let Some((k, true)) = subcommand_at(&args) {
        args[1..].rotate_left(k - 1);
    }
    args
}

/// cargo's own flags, which a learner may add after `cargo emulate` as after
/// `cargo run`: the alias hands them to the program, which takes none.
const CARGO_FLAGS: [&str; 16] = [
    "--release",
    "-r",
    "--features",
    "-F",
    "--package",
    "-p",
    "--bin",
    "--profile",
    "--offline",
    "--locked",
    "--frozen",
    "--jobs",
    "-j",
    "--target-dir",
    "--manifest-path",
    "--all-features",
];

/// Those of [`CARGO_FLAGS`] that take a value.
const CARGO_FLAGS_WITH_VALUES: [&str; 10] = ["--features", "-F", "--package", "-p", "--bin", "--profile", "--jobs", "-j", "--target-dir", "--manifest-path"];

/// The lesson's own flags, which neither subcommand takes.
const LESSON_ONLY: [&str; 4] = ["--n", "--threads-per-block", "--runs", "--warmups"];

/// What is wrong, in the user's words, with a command line clap would refuse
/// in its own (`--emulate exercise` reads to clap as "exercise cannot be
/// emulated"): a flag before the subcommand, a lesson flag given to the
/// exercise, the emulator asked to run the benchmark, a CUDA device asked of
/// the emulator. `args` starts with the program's name. Each message names
/// only flags the learner typed (not the `--emulate` that `cargo emulate`
/// adds), and each command in it runs as the learner runs the program.
pub fn explain_misuse(args: &[String]) -> Option<String> {
    explain_misuse_as(Runner::current(), args)
}

/// [`explain_misuse`] for a program started by `runner`.
pub fn explain_misuse_as(runner: Runner, args: &[String]) -> Option<String> {
    let flag_name = |a: &String| a.split('=').next().unwrap_or(a).to_string();
    // Help is clap's to print, whatever else the line holds.
    if args.iter().any(|a| a == "--help" || a == "-h") {
        return None;
    }
    let typed = runner.typed(args.get(1..).unwrap_or_default());
    if runner.adds_emulate()
        && let Some(flag) = typed.iter().map(|a| a.split('=').next().unwrap_or(a)).find(|f| CARGO_FLAGS.contains(f))
    {
        let mut rest = typed.clone();
        if let Some(k) = rest.iter().position(|a| a.split('=').next() == Some(flag)) {
            let with_value = !rest[k].contains('=') && CARGO_FLAGS_WITH_VALUES.contains(&flag);
            rest.drain(k..(k + 1 + with_value as usize).min(rest.len()));
        }
        let again = runner.again(&rest, true);
        return Some(match flag {
            "--release" | "-r" => {
                format!(
                    "{flag} is cargo's, and `cargo emulate` already builds in release (the alias is `cargo run --release -p host --features host/emulator-only -- --emulate`, in .cargo/config.toml): drop it (`{again}`)"
                )
            }
            _ => format!(
                "{flag} is cargo's, and what follows `cargo emulate` goes to the program, which takes no {flag} (the alias, in .cargo/config.toml, ends in `--` and chooses the build): drop it (`{again}`)"
            ),
        });
    }
    // A word after a flag the program does not have (`--tile 16`): the flag
    // is the mistake, not the word taken for a subcommand.
    if let Some((k, false)) = subcommand_at(args)
        && k > 1
        && let Some(flag) = args[k - 1].strip_prefix("--").filter(|f| !f.contains('=') && !known_flag(f))
    {
        return Some(format!(
            "unknown flag '--{flag}' (with '{}' after it): `{}` lists the flags{}",
            args[k],
            runner.again(
                &[typed.first().cloned().filter(|s| SUBCOMMANDS.contains(&s.as_str())).unwrap_or_default(), "--help".into()]
                    .into_iter()
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>(),
                args.iter().any(|a| a == "--emulate")
            ),
            if flag == "tile" { "; the tile size is the kernels' own, set in their source (`<const TILE: u32 = 32>`, docs/kernels.md)" } else { "" }
        ));
    }
    let args = &flags_after_the_subcommand(args.to_vec());
    if let Some((k, false)) = subcommand_at(args) {
        return Some(format!("unknown subcommand '{}': the subcommands are {}", args[k], SUBCOMMANDS.join(", ")));
    }
    let emulated = args.iter().any(|a| a == "--emulate");
    let typed_emulate = typed.iter().any(|a| a == "--emulate");
    if !emulated && let Some(flag) = args.iter().skip(1).map(flag_name).find(|f| EMULATOR_ONLY.contains(&f.as_str())) {
        return Some(format!("{flag} describes the emulated GPU: run it on the emulator (`{}`)", runner.again(&typed, true)));
    }
    let sub = subcommand_at(args).map(|(k, _)| args[k].as_str());
    if sub == Some("bench") && emulated {
        return Some(bench_needs_a_gpu(runner, &typed));
    }
    // The emulator's device is the emulated GPU: a CUDA device index means nothing there.
    let gpu_only: Vec<String> = match sub {
        Some("multi-gpu") => args.iter().map(flag_name).filter(|f| ["--nccl-id", "--rank", "--ranks"].contains(&f.as_str())).collect(),
        _ => args.iter().map(flag_name).filter(|f| f == "--device").collect(),
    };
    if emulated && !gpu_only.is_empty() {
        let flags = crate::text::listed(&gpu_only);
        let (what, emulator, gpus) = match sub {
            Some("multi-gpu") if gpu_only.len() == 1 => ("runs one process per CUDA GPU", "runs every emulated GPU in one process", "GPUs"),
            Some("multi-gpu") => ("run one process per CUDA GPU", "runs every emulated GPU in one process", "GPUs"),
            _ => ("picks a CUDA GPU", "runs on the emulated one", "a GPU"),
        };
        let on_gpu = runner.again(&typed, false);
        let on_emulator = runner.again(&without(&typed, &gpu_only), true);
        return Some(match typed_emulate {
            true => format!("{flags} {what}, and --emulate {emulator}: give one or the other (`{on_gpu}`, or `{on_emulator}`)"),
            false => format!("{flags} {what}, and `cargo emulate` {emulator}: drop {flags} (`{on_emulator}`), or run on {gpus} (`{on_gpu}`)"),
        });
    }
    let (k, true) = subcommand_at(args)? else { return None };
    let sub = &args[k];
    let after = &args[k + 1..];
    if !["bench", "exercise", "multi-gpu", "conjugate-gradient"].contains(&sub.as_str())
        && let Some(flag) = after.iter().map(flag_name).find(|f| LESSON_ONLY.contains(&f.as_str()))
    {
        return Some(format!("{sub} takes no {flag}: it uses the lesson's n, 4,194,915, and blocks of 256"));
    }
    if sub == "exercise"
        && let Some(flag) = after.iter().map(flag_name).find(|f| LESSON_ONLY.contains(&f.as_str()))
    {
        return Some(format!(
            "the exercise takes no {flag}: it runs the lesson's nine sizes, 0 to 67,108,864 floats, through your solve(), which chooses its own grid and block (run the lesson for one size: `{}`)",
            runner.command(&format!("{flag} ..."), emulated)
        ));
    }
    None
}

/// `typed` without the flags `names` (and the value of each that takes one).
fn without(typed: &[String], names: &[String]) -> Vec<String> {
    let takes_value = flags_with_values();
    let mut kept = Vec::new();
    let mut k = 0;
    while k < typed.len() {
        let word = &typed[k];
        let name = word.split('=').next().unwrap_or(word).to_string();
        k += 1;
        if names.contains(&name) {
            if !word.contains('=') && takes_value.contains(&name) {
                k += 1;
            }
            continue;
        }
        kept.push(word.clone());
    }
    kept
}

// Each parser's message names the rule the value broke, with the value as
// the learner wrote it: a number bare (`48 is not ...`), anything else in
// quotes (`'x' is not a whole number`).

fn parse_count<T: TryFrom<u128>>(s: &str) -> Result<T, String> {
    let v: i128 = s.trim().parse().map_err(|_| format!("'{s}' is not a whole number"))?;
    if v < 0 {
        return Err(format!("{v} is negative: give 0 or more"));
    }
    T::try_from(v as u128).map_err(|_| format!("{v} is more than this machine can count"))
}

fn parse_between<const MIN: u32, const MAX: u32>(s: &str) -> Result<u32, String> {
    let v: i128 = s.trim().parse().map_err(|_| format!("'{s}' is not a whole number"))?;
    if v < MIN as i128 || v > MAX as i128 {
        return Err(format!("{v} is outside {MIN}..={MAX}"));
    }
    Ok(v as u32)
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 86_400.0 => Ok(v),
        Ok(v) if v.is_finite() && v <= 0.0 => Err(format!("{} is not above 0: give seconds above 0 and at most 86400", s.trim())),
        Ok(v) if v.is_finite() => Err(format!("{} is more than 86400 seconds, a day", s.trim())),
        _ => Err(format!("'{s}' is not a number of seconds: give one above 0 and at most 86400")),
    }
}

/// Threads per block: whole warps (a multiple of 32), at least one, and at
/// most 1024, the most any CUDA GPU runs in one block. The message names the
/// rule that failed.
fn parse_threads_per_block(s: &str) -> Result<u32, String> {
    let Ok(v) = s.trim().parse::<i128>() else {
        return Err(format!("'{s}' is not a whole number of threads: give a multiple of 32 from 32 to 1024"));
    };
    match v {
        ..=-1 => Err(format!("{v} is negative: give a multiple of 32 from 32 to 1024")),
        0..=31 => Err(format!("{v} is fewer than 32: a block is at least one warp, 32 threads")),
        1025.. => Err(format!("{v} is more than 1024, the most threads a block can have (give a multiple of 32 from 32 to 1024)")),
        v if v % 32 != 0 => Err(format!("{v} is not a multiple of 32: a block is whole warps of 32 threads")),
        v => Ok(v as u32),
    }
}

/// clap's error as the one line a user reads: its message, with the usage
/// and the pointer to `--help` that clap appends left out.
pub fn one_line(clap_error: &str) -> String {
    let mut paragraphs = clap_error.split("\n\n");
    let message = paragraphs.next().unwrap_or(clap_error);
    let flat = |p: &str| p.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ");
    let mut line = flat(message);
    // clap's tips ("a similar argument exists: '--variant'") say what to type.
    // A value in the wrong case gets that said, in place of clap's "a similar value exists".
    let tips: Vec<String> = match case_hint(&line) {
        Some(hint) => vec![hint],
        None => paragraphs.map(flat).filter(|p| p.starts_with("tip:")).collect(),
    };
    for tip in tips {
        line += &format!(" ({tip})");
    }
    line
}

/// For a value clap refused that one of its possible values spells in
/// another case (`--gpu H200`), that value.
fn case_hint(message: &str) -> Option<String> {
    let value = message.split_once("invalid value '")?.1.split_once('\'')?.0;
    let possible = message.split_once("[possible values: ")?.1.split_once(']')?.0;
    let same = possible.split(", ").find(|p| *p != value && p.eq_ignore_ascii_case(value))?;
    Some(format!("tip: the values are written in lower case: '{same}'"))
}

/// [`one_line`], in the words of a learner whose runner is `runner`: where
/// `cargo emulate` put `--emulate` on the command line, clap's mention of it
/// is of `cargo emulate`, which the learner did type.
pub fn one_line_as(runner: Runner, clap_error: &str) -> String {
    let line = one_line(clap_error);
    if runner.adds_emulate() { line.replace("'--emulate'", "`cargo emulate`") } else { line }
}

fn parse_seed(s: &str) -> Result<u64, String> {
    if s == "random" {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        return Ok(nanos ^ (std::process::id() as u64) << 32);
    }
    s.parse().map_err(|_| format!("'{s}' is not a seed: give a whole number from 0 to {}, or `random`", u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_block_size_names_the_rule_it_broke_and_clap_errors_are_one_line() {
        for (bad, rule) in [
            ("2048", "2048 is more than 1024, the most threads a block can have (give a multiple of 32 from 32 to 1024)"),
            ("1056", "1056 is more than 1024, the most threads a block can have (give a multiple of 32 from 32 to 1024)"),
            ("0", "0 is fewer than 32: a block is at least one warp, 32 threads"),
            ("16", "16 is fewer than 32: a block is at least one warp, 32 threads"),
            ("48", "48 is not a multiple of 32: a block is whole warps of 32 threads"),
            ("-32", "-32 is negative: give a multiple of 32 from 32 to 1024"),
            ("x", "'x' is not a whole number of threads: give a multiple of 32 from 32 to 1024"),
        ] {
            assert_eq!(parse_threads_per_block(bad).unwrap_err(), rule, "{bad}");
        }
        assert_eq!(parse_threads_per_block("1024"), Ok(1024));
        assert_eq!(parse_threads_per_block("32"), Ok(32));
        let clap = "error: invalid value '2048' for '--threads-per-block <N>': 2048 is more than 1024\n\nFor more information, try '--help'.\n";
        assert_eq!(one_line(clap), "error: invalid value '2048' for '--threads-per-block <N>': 2048 is more than 1024");
        let listed = "error: the following required arguments were not provided:\n  --rank <RANK>\n\nUsage: cg-lesson multi-gpu --rank <RANK>\n\nFor more information, try '--help'.\n";
        assert_eq!(one_line(listed), "error: the following required arguments were not provided: --rank <RANK>");
    }

    /// clap's error for `args`, as the learner reads it.
    fn refusal(args: &[&str]) -> String {
        one_line(&parse(args).unwrap_err().to_string())
    }

    #[test]
    fn clap_tips_are_kept_in_the_one_line_and_a_value_in_the_wrong_case_is_told_so() {
        assert_eq!(
            refusal(&["exercise", "--varient", "reference"]),
            "error: unexpected argument '--varient' found (tip: a similar argument exists: '--variant')"
        );
        let gpu = refusal(&["--emulate", "--gpu", "H200"]);
        assert_eq!(gpu, "error: invalid value 'H200' for '--gpu <GPU>' [possible values: t4, h200] (tip: the values are written in lower case: 'h200')");
        assert!(refusal(&["exercise", "--variant", "Reference"]).ends_with("(tip: the values are written in lower case: 'reference')"));
        // No tip where clap gives none, and none made up.
        assert_eq!(refusal(&["--n", "x"]), "error: invalid value 'x' for '--n <N>': 'x' is not a whole number");
    }

    #[test]
    fn cargos_own_flags_after_cargo_emulate_are_refused_naming_what_the_alias_does() {
        let line = |args: &[&str]| std::iter::once("cg-lesson").chain(args.iter().copied()).map(String::from).collect::<Vec<_>>();
        let release = explain_misuse_as(Runner::CargoEmulate, &line(&["--emulate", "--release", "exercise"])).unwrap();
        assert_eq!(
            release,
            "--release is cargo's, and `cargo emulate` already builds in release (the alias is `cargo run --release -p host --features host/emulator-only -- --emulate`, in .cargo/config.toml): drop it (`cargo emulate exercise`)"
        );
        let features = explain_misuse_as(Runner::CargoEmulate, &line(&["--emulate", "--features", "x", "--n", "5"])).unwrap();
        assert!(features.starts_with("--features is cargo's") && features.ends_with("drop it (`cargo emulate --n 5`)"), "{features}");
        // `cargo run --release -p host -- ...`: cargo took its own flags before `--`.
        assert_eq!(explain_misuse_as(Runner::CargoRun, &line(&["--emulate", "--n", "5"])), None);
    }

    #[test]
    fn help_is_spelled_as_the_learner_runs_the_program_and_lists_only_flags_they_may_give() {
        let help = |runner: Runner, args: &[&str]| {
            let e = command_for(runner).try_get_matches_from(std::iter::once("cg-lesson").chain(args.iter().copied())).unwrap_err();
            assert!(!e.use_stderr(), "help, not an error");
            e.to_string()
        };
        let h = help(Runner::CargoEmulate, &["exercise", "--help", "--emulate"]);
        assert!(h.contains("Usage: cargo emulate exercise [OPTIONS]"), "{h}");
        for set_or_refused in ["--emulate", "--device"] {
            assert!(!h.contains(set_or_refused), "{set_or_refused} in:\n{h}");
        }
        assert!(h.contains("--variant") && h.contains("--gpu") && h.contains("--seed"), "{h}");
        let m = help(Runner::CargoEmulate, &["multi-gpu", "--help", "--emulate"]);
        assert!(!m.contains("--rank") && !m.contains("--nccl-id") && m.contains("--gpus"), "{m}");
        // On a GPU the flags are all there, under the command that runs it.
        let h = help(Runner::CargoRun, &["exercise", "--help"]);
        assert!(h.contains("Usage: cargo run --release -p host -- exercise [OPTIONS]") && h.contains("--device") && h.contains("--emulate"), "{h}");
        let installed = help(Runner::Installed, &["--help"]);
        assert!(installed.contains("Usage: cg-lesson ") && !installed.contains("cargo"), "{installed}");
    }

    #[test]
    fn a_value_is_quoted_only_where_it_is_not_a_number() {
        for (parsed, expected) in [
            (parse_between::<1, 160>("0"), "0 is outside 1..=160"),
            (parse_between::<1, 160>("many"), "'many' is not a whole number"),
            (parse_count::<usize>("-1").map(|_| 0), "-1 is negative: give 0 or more"),
            (parse_seconds("-1").map(|_| 0), "-1 is not above 0: give seconds above 0 and at most 86400"),
            (parse_seconds("soon").map(|_| 0), "'soon' is not a number of seconds: give one above 0 and at most 86400"),
        ] {
            assert_eq!(parsed.unwrap_err(), expected);
        }
    }

    #[test]
    fn clap_names_cargo_emulate_where_the_learner_typed_no_emulate() {
        let clap = "error: the argument '--nccl-id <FILE>' cannot be used with '--emulate'\n\nUsage: ...\n";
        assert_eq!(one_line_as(Runner::CargoEmulate, clap), "error: the argument '--nccl-id <FILE>' cannot be used with `cargo emulate`");
        assert_eq!(one_line_as(Runner::CargoRun, clap), "error: the argument '--nccl-id <FILE>' cannot be used with '--emulate'");
    }

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("cg-lesson").chain(args.iter().copied()))
    }

    #[test]
    fn defaults_are_the_lessons() {
        let cli = parse(&[]).unwrap();
        let l = &cli.lesson;
        assert_eq!((l.n, l.threads_per_block, l.runs, l.warmups), (4_194_915, 256, None, None));
        assert!(cli.command.is_none() && !cli.target.json && cli.target.device == 0);
    }

    #[test]
    fn emulation_defaults_to_the_lessons_t4() {
        let cli = parse(&["--emulate"]).unwrap();
        assert!(cli.target.emulation.emulate);
        assert_eq!(cli.target.emulation.device(), cg_emulator::Device::T4);
        let cli = parse(&["exercise", "--emulate", "--sms", "2"]).unwrap();
        let Some(Command::Exercise { target, .. }) = cli.command else { panic!() };
        assert_eq!(target.emulation.device().sms, 2);
    }

    #[test]
    fn exercise_takes_a_variant() {
        let cli = parse(&["exercise", "--variant", "grid-from-n", "--json"]).unwrap();
        assert!(matches!(cli.command, Some(Command::Exercise { variant: Variant::GridFromN, ref target }) if target.json));
    }

    #[test]
    fn bad_values_are_refused_naming_their_flag() {
        for (args, needle) in [
            (&["--n", "-5"][..], "--n"),
            (&["--n", "-1"], "negative"),
            (&["--n", "many"], "many"),
            (&["--n", "18446744073709551616"], "more than this machine can count"),
            (&["--threads-per-block", "0"], "--threads-per-block"),
            (&["--threads-per-block", "100"], "multiple of 32"),
            (&["--threads-per-block", "2048"], "2048 is more than 1024"),
            (&["--runs", "100001"], "--runs"),
            (&["--runs", "-3"], "--runs"),
            (&["--device", "x"], "--device"),
            (&["--device", "-1"], "--device"),
            (&["--timeout-s", "0"], "seconds"),
            (&["--timeout-s", "inf"], "seconds"),
            (&["exercise", "--variant", "nope"], "nope"),
            (&["bench", "--max-log2", "40"], "40"),
            (&["--emulate", "--sms", "0"], "--sms"),
            (&["--emulate", "--threads-per-sm", "16"], "--threads-per-sm"),
            (&["--emulate", "--seed", "x"], "--seed"),
            (&["bench", "--threads-per-block", "33"], "33 is not a multiple of 32"),
        ] {
            let err = parse(args).unwrap_err().to_string();
            assert!(err.contains(needle), "{args:?}: {err}");
        }
    }

    #[test]
    fn flags_where_they_do_nothing_are_refused() {
        for args in [
            &["--n", "5", "exercise"][..],
            &["--threads-per-block", "1024", "exercise"],
            &["--sms", "4"],
            &["--seed", "1"],
            &["bench", "--emulate"],
            &["bench", "--sms", "4"],
            &["--emulate", "--device", "1"],
        ] {
            assert!(parse(args).is_err(), "{args:?} was accepted");
        }
    }

    #[test]
    fn misplaced_and_inapplicable_flags_are_explained_in_the_users_words() {
        let line = |args: &[&str]| std::iter::once("cg-lesson").chain(args.iter().copied()).map(String::from).collect::<Vec<_>>();
        let explain = |args: &[&str]| explain_misuse_as(Runner::CargoEmulate, &line(args));
        // Flags may stand before the subcommand: they are moved after it.
        assert_eq!(explain(&["--emulate", "exercise"]), None);
        assert_eq!(explain(&["--json", "bench", "--runs", "5"]), None);
        assert!(explain(&["--n", "5", "exercise"]).unwrap().starts_with("the exercise takes no --n"));
        let n = explain(&["exercise", "--n", "5", "--emulate"]).unwrap();
        assert!(n.starts_with("the exercise takes no --n: it runs the lesson's nine sizes, 0 to 67,108,864 floats"), "{n}");
        assert!(explain(&["exercise", "--threads-per-block=64"]).unwrap().starts_with("the exercise takes no --threads-per-block"));
        assert!(explain(&["bench", "--emulate"]).unwrap().starts_with("bench times a GPU, so it needs one"));
        // The emulator first, then bench: the same answer, not a suggestion that is itself refused.
        assert_eq!(explain(&["--emulate", "bench"]), explain(&["bench", "--emulate"]));
        // Without --emulate the program is the repository's build, and the hint its command.
        assert_eq!(
            explain_misuse_as(Runner::CargoRun, &line(&["--gpu", "h200"])).unwrap(),
            "--gpu describes the emulated GPU: run it on the emulator (`cargo run --release -p host -- --emulate --gpu h200`)"
        );
        assert_eq!(
            explain_misuse_as(Runner::Installed, &line(&["trace", "--sms", "4"])).unwrap(),
            "--sms describes the emulated GPU: run it on the emulator (`cg-lesson --emulate trace --sms 4`)"
        );
        assert_eq!(explain(&["--emulate", "--gpu", "h200", "trace"]), None);
        let unknown = explain(&["--emulate", "frobnicate"]).unwrap();
        assert_eq!(unknown, "unknown subcommand 'frobnicate': the subcommands are exercise, bench, conjugate-gradient, trace, occupancy, multi-gpu");
        // A value after a flag the program does not have: the flag is named.
        let tile = explain_misuse_as(Runner::CargoEmulate, &line(&["--emulate", "--tile", "16"])).unwrap();
        assert!(
            tile.starts_with("unknown flag '--tile' (with '16' after it): `cargo emulate --help` lists the flags; the tile size is the kernels' own"),
            "{tile}"
        );
        // A flag's value is not a subcommand; help is clap's to print.
        assert_eq!(explain(&["--emulate", "--gpu", "h200"]), None);
        assert_eq!(explain(&["--emulate", "bench", "--help"]), None);
        let bench = explain(&["bench", "--emulate"]).unwrap();
        for sub in [
            "`cargo emulate`",
            "`cargo emulate exercise`",
            "`cargo emulate trace`",
            "`cargo emulate occupancy`",
            "`cargo emulate conjugate-gradient`",
            "`cargo emulate multi-gpu`",
        ] {
            assert!(bench.contains(sub), "{bench}");
        }
        assert!(explain_misuse_as(Runner::CargoRun, &line(&["exercise", "--sms=4"])).unwrap().starts_with("--sms describes the emulated GPU"));
        assert_eq!(explain(&["--emulate", "--gpu", "h200"]), None);
        for fine in [&["exercise", "--emulate"][..], &["--emulate", "--n", "5"], &["bench", "--runs", "5"], &[]] {
            assert_eq!(explain(fine), None, "{fine:?}");
        }
    }

    #[test]
    fn a_cuda_device_asked_of_the_emulator_names_only_what_the_learner_typed() {
        let line = |args: &[&str]| std::iter::once("cg-lesson").chain(args.iter().copied()).map(String::from).collect::<Vec<_>>();
        // `cargo emulate --device 3`: the learner typed no --emulate.
        let e = explain_misuse_as(Runner::CargoEmulate, &line(&["--emulate", "--device", "3"])).unwrap();
        assert_eq!(
            e,
            "--device picks a CUDA GPU, and `cargo emulate` runs on the emulated one: drop --device (`cargo emulate`), or run on a GPU (`cargo run --release -p host -- --device 3`)"
        );
        assert!(!e.contains("--emulate"), "{e}");
        // `cargo run --release -p host -- --emulate exercise --device=3`: they did.
        let e = explain_misuse_as(Runner::CargoRun, &line(&["--emulate", "exercise", "--device=3"])).unwrap();
        assert_eq!(
            e,
            "--device picks a CUDA GPU, and --emulate runs on the emulated one: give one or the other (`cargo run --release -p host -- exercise --device=3`, or `cargo run --release -p host -- --emulate exercise`)"
        );
        let e = explain_misuse_as(Runner::CargoEmulate, &line(&["--emulate", "multi-gpu", "--rank", "0", "--ranks", "2", "--nccl-id", "f"])).unwrap();
        assert!(
            e.starts_with("--rank, --ranks and --nccl-id run one process per CUDA GPU, and `cargo emulate` runs every emulated GPU in one process: drop --rank, --ranks and --nccl-id (`cargo emulate multi-gpu`), or run on GPUs (`cargo run --release -p host -- multi-gpu --rank 0 --ranks 2 --nccl-id f`)"),
            "{e}"
        );
        // multi-gpu's own --device goes with --rank, on GPUs: clap's to judge.
        assert_eq!(explain_misuse_as(Runner::CargoRun, &line(&["multi-gpu", "--rank", "0", "--device", "1"])), None);
    }

    #[test]
    fn a_double_dash_as_cargo_run_puts_it_is_dropped() {
        let moved = |args: &[&str]| flags_after_the_subcommand(std::iter::once("cg-lesson").chain(args.iter().copied()).map(String::from).collect()).join(" ");
        // `cargo emulate -- --n 5`: the alias has a `--` of its own.
        assert_eq!(moved(&["--emulate", "--", "--n", "5"]), "cg-lesson --emulate --n 5");
        assert_eq!(moved(&["--emulate", "--", "exercise", "--variant", "reference"]), "cg-lesson exercise --variant reference --emulate");
        // A flag's value is its own, even `--`.
        assert_eq!(moved(&["trace", "--out", "--"]), "cg-lesson trace --out --");
        assert!(
            parse(
                &flags_after_the_subcommand(["cg-lesson", "--emulate", "--", "--n", "5"].map(String::from).to_vec())[1..]
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
            )
            .is_ok()
        );
    }

    #[test]
    fn multi_gpu_takes_its_own_flags_and_refuses_mixed_modes() {
        let cli = parse(&["multi-gpu", "--emulate", "--gpus", "3", "--n", "10", "--no-nccl"]).unwrap();
        let Some(Command::MultiGpu(a)) = cli.command else { panic!() };
        assert_eq!((a.gpus, a.n, a.no_nccl, a.emulation.emulate), (Some(3), 10, true, true));
        let cli = parse(&["multi-gpu", "--rank", "1", "--ranks", "2", "--nccl-id", "id"]).unwrap();
        let Some(Command::MultiGpu(a)) = cli.command else { panic!() };
        assert_eq!((a.rank, a.ranks), (Some(1), Some(2)));
        for args in [
            &["multi-gpu", "--rank", "0"][..],
            &["multi-gpu", "--rank", "0", "--ranks", "2", "--nccl-id", "f", "--gpus", "2"],
            &["multi-gpu", "--rank", "0", "--ranks", "2", "--nccl-id", "f", "--emulate"],
            &["multi-gpu", "--no-nccl", "--rank", "0", "--ranks", "2", "--nccl-id", "f"],
            &["multi-gpu", "--gpus", "0"],
            &["multi-gpu", "--no-sweep", "--max-log2", "30"],
        ] {
            assert!(parse(args).is_err(), "{args:?} was accepted");
        }
        let explain = |args: &[&str]| explain_misuse(&std::iter::once("cg-lesson").chain(args.iter().copied()).map(String::from).collect::<Vec<_>>());
        assert_eq!(explain(&["multi-gpu", "--n", "5", "--emulate"]), None);
        assert_eq!(explain(&["conjugate-gradient", "--n", "4096", "--emulate"]), None);
        assert_eq!(explain(&["--emulate", "conjugate-gradient"]), None);
        assert_eq!(explain(&["--emulate", "multi-gpu"]), None);
    }

    #[test]
    fn flags_before_the_subcommand_move_after_it_with_their_values() {
        let moved = |args: &[&str]| flags_after_the_subcommand(std::iter::once("cg-lesson").chain(args.iter().copied()).map(String::from).collect()).join(" ");
        assert_eq!(moved(&["--emulate", "--gpu", "h200", "trace", "--out", "t"]), "cg-lesson trace --out t --emulate --gpu h200");
        assert_eq!(moved(&["--gpu=h200", "--emulate", "exercise"]), "cg-lesson exercise --gpu=h200 --emulate");
        assert_eq!(moved(&["trace", "--gpu", "h200"]), "cg-lesson trace --gpu h200");
        assert_eq!(moved(&["--emulate", "--n", "611"]), "cg-lesson --emulate --n 611");
        for args in [&["--emulate", "--gpu", "h200", "trace"][..], &["--gpu", "h200", "--emulate", "occupancy"]] {
            let cli = parse(
                &flags_after_the_subcommand(std::iter::once("cg-lesson").chain(args.iter().copied()).map(String::from).collect::<Vec<_>>())[1..]
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>(),
            );
            assert!(cli.is_ok(), "{args:?}");
        }
    }

    #[test]
    fn a_random_seed_is_a_number() {
        let cli = parse(&["--emulate", "--seed", "random"]).unwrap();
        assert!(cli.target.emulation.seed.is_some());
        assert_eq!(parse(&["--emulate", "--seed", "42"]).unwrap().target.emulation.seed, Some(42));
    }
}
