//! The command line.

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Cooperative groups and grid-wide sync, in Rust, on your GPU.
///
/// With no subcommand, runs the lesson: the cooperative grid's size, what
/// this_grid() reports, the sum two ways, coalesced_threads(), and timings.
#[derive(Debug, Parser)]
#[command(name = "host", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub lesson: LessonArgs,
    /// CUDA device index.
    #[arg(long, global = true, default_value_t = 0)]
    pub device: usize,
    /// Print the results as one JSON object on stdout instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(flatten)]
    pub emulation: EmulationArgs,
    /// Seconds to wait for the GPU before calling a kernel stuck.
    #[arg(long, global = true, default_value_t = 60.0, value_parser = parse_seconds)]
    pub timeout_s: f64,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Benchmark the sums over n = 2^10 .. 2^max-log2 against a device-to-device
    /// copy, and against C++ and CUB where nvcc is on PATH; writes an SVG plot.
    Bench {
        /// Timed runs per point.
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=100_000))]
        runs: u32,
        /// Untimed warm-up runs per point.
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(0..=100_000))]
        warmups: u32,
        /// Input buffers to rotate among (0: enough to overflow the L2 twice).
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=4096))]
        rotate: u32,
        /// Largest size, as a power of two.
        #[arg(long, default_value_t = 28, value_parser = clap::value_parser!(u32).range(10..=32))]
        max_log2: u32,
        /// Threads per block.
        #[arg(long, default_value_t = 256, value_parser = parse_block)]
        block: u32,
        /// Where to write the SVG plot (the results go beside it, as .json).
        #[arg(long, default_value = "bench-bandwidth.svg")]
        plot: std::path::PathBuf,
        /// Skip the C++ and CUB comparison even where nvcc is available.
        #[arg(long)]
        no_cpp: bool,
        /// Skip the grid-size and block-size sweeps.
        #[arg(long)]
        no_sweeps: bool,
    },
    /// Run the exercise's harness against solve() in host/src/exercise/solve.rs.
    Exercise {
        /// Which solver to run: yours, or one that makes a mistake the lesson describes.
        #[arg(long, value_enum, default_value_t = Variant::Solve)]
        variant: Variant,
    },
}

/// The exercise's solvers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// solve() as written in host/src/exercise/solve.rs.
    Solve,
    /// The grid sized from n alone: the largest cases ask for more blocks than fit.
    GridFromN,
    /// No n = 0 special case: the empty case asks for a 0-block launch.
    ZeroGrid,
    /// The loop bound rounded up to whole blocks: reads past the input.
    BoundsBug,
}

/// The emulated GPU: the same kernels run on the CPU, one OS thread per GPU
/// thread. The default is a T4's SM (1024 threads, 16 blocks, 64 KiB of
/// shared memory) on 4 SMs instead of 40.
#[derive(Debug, Args)]
pub struct EmulationArgs {
    /// Run on the emulated GPU on the CPU: no GPU or driver needed; timings are CPU wall time.
    #[arg(long, global = true)]
    pub emulate: bool,
    /// SMs of the emulated GPU.
    #[arg(long, global = true, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub sms: u32,
    /// Threads one emulated SM holds.
    #[arg(long, global = true, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(32..=2048))]
    pub threads_per_sm: u32,
    /// Blocks one emulated SM holds at most.
    #[arg(long, global = true, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=32))]
    pub blocks_per_sm: u32,
}

impl EmulationArgs {
    /// The emulated device these flags describe.
    pub fn device(&self) -> gpu::emu::Device {
        gpu::emu::Device {
            sms: self.sms,
            max_threads_per_sm: self.threads_per_sm,
            max_blocks_per_sm: self.blocks_per_sm,
            ..gpu::emu::Device::T4_LIKE
        }
    }
}

#[derive(Debug, Args)]
pub struct LessonArgs {
    /// Number of floats to sum.
    #[arg(long, default_value_t = 4_194_915)]
    pub n: usize,
    /// Threads per block: a multiple of 32, at most 1024 (and the device's limit).
    #[arg(long, default_value_t = 256, value_parser = parse_block)]
    pub block: u32,
    /// Timed runs per path.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub runs: u32,
    /// Untimed warm-up runs before timing.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    pub warmups: u32,
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 86_400.0 => Ok(v),
        _ => Err(format!("'{s}' is not a number of seconds from 0 to 86400")),
    }
}

fn parse_block(s: &str) -> Result<u32, String> {
    let block: u32 = s.parse().map_err(|_| format!("'{s}' is not a whole number"))?;
    if block == 0 || block % 32 != 0 || block > 1024 {
        return Err(format!("{block} threads per block: use a multiple of 32 from 32 to 1024"));
    }
    Ok(block)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("host").chain(args.iter().copied()))
    }

    #[test]
    fn defaults_are_the_lessons() {
        let cli = parse(&[]).unwrap();
        assert_eq!((cli.lesson.n, cli.lesson.block, cli.lesson.runs, cli.lesson.warmups), (4_194_915, 256, 10, 3));
        assert!(cli.command.is_none() && !cli.json && cli.device == 0);
    }

    #[test]
    fn emulation_defaults_to_a_t4_sm_on_four_sms() {
        let cli = parse(&["--emulate"]).unwrap();
        assert!(cli.emulation.emulate);
        assert_eq!(cli.emulation.device(), gpu::emu::Device::T4_LIKE);
        let cli = parse(&["exercise", "--emulate", "--sms", "2"]).unwrap();
        assert_eq!(cli.emulation.device().sms, 2);
    }

    #[test]
    fn exercise_takes_a_variant() {
        let cli = parse(&["exercise", "--variant", "grid-from-n", "--json"]).unwrap();
        assert!(matches!(cli.command, Some(Command::Exercise { variant: Variant::GridFromN })));
        assert!(cli.json);
    }

    #[test]
    fn bad_values_are_refused_with_a_reason() {
        for (args, needle) in [
            (&["--n", "-5"][..], "-5"),
            (&["--n", "many"], "many"),
            (&["--block", "0"], "multiple of 32"),
            (&["--block", "100"], "multiple of 32"),
            (&["--block", "2048"], "multiple of 32"),
            (&["--runs", "0"], "runs"),
            (&["--device", "x"], "device"),
            (&["--timeout-s", "0"], "seconds"),
            (&["--timeout-s", "inf"], "seconds"),
            (&["exercise", "--variant", "nope"], "nope"),
            (&["bench", "--max-log2", "40"], "40"),
            (&["--emulate", "--sms", "0"], "--sms"),
            (&["--emulate", "--threads-per-sm", "16"], "--threads-per-sm"),
            (&["bench", "--block", "33"], "multiple of 32"),
        ] {
            let err = parse(args).unwrap_err().to_string();
            assert!(err.contains(needle), "{args:?}: {err}");
        }
    }
}
