//! A 256-bin histogram of n bytes in one cooperative launch, with
//! shared-memory atomics, built on the three toolkit crates alone: the
//! kernel (`kernels/`) and this program. It checks the counts against the
//! CPU's on a ladder of sizes, on uniform bytes and on constant ones (the
//! worst case for atomics), and, with `--bench` on a GPU, times it against
//! CUB's `DeviceHistogram::HistogramEven`, built by nvcc at run time.

use cg_algorithms::Algorithms;
use cg_launcher::device::{Buffer, Gpu, View};
use cg_launcher::error::Result;
use cg_launcher::launch::ensure_len;
use clap::Parser;
use example_bench::program;
use histogram_kernels::{BINS, HISTOGRAM};
use std::process::ExitCode;

// Links the kernels' crate, whose PTX and kernels the launcher finds by name.
use histogram_kernels as _;

/// The ladder: sizes around a word and a block, odd sizes, and two large
/// ones (the last on a GPU only).
const LADDER: [usize; 10] = [1, 3, 4, 5, 611, 4_097, (1 << 20) + 7, (1 << 24) + 3, 1 << 26, 1 << 28];
/// Threads per block.
const THREADS: u32 = 256;
/// Sizes timed against CUB, and the target from 2^24 up.
const BENCH_SIZES: [usize; 4] = [1 << 22, 1 << 24, 1 << 26, 1 << 28];
const TARGET: f64 = 1.1;
/// Runs per measurement, after as many warm-ups.
const RUNS: usize = 20;

#[derive(Parser)]
#[command(name = "histogram", about = "A 256-bin histogram of bytes in one cooperative launch, checked against the CPU's count")]
struct Args {
    /// Run on the emulated GPU (a T4) instead of a CUDA GPU.
    #[arg(long)]
    emulate: bool,
    /// Sizes to check instead of the ladder.
    #[arg(long, value_delimiter = ',')]
    n: Vec<usize>,
    /// Also time it against CUB's DeviceHistogram::HistogramEven (a GPU and nvcc needed).
    #[arg(long)]
    bench: bool,
    /// Rounds of the benchmark, each timing both once.
    #[arg(long, default_value_t = 15)]
    rounds: usize,
    /// Count with cg-algorithms' `histogram_even` (256 bins over [0, 256),
    /// the bytes as they are) instead of this example's kernel.
    #[arg(long)]
    library: bool,
}

/// The input on the device: its bytes as they are for cg-algorithms' call,
/// and for this example's kernel, which reads them four to a `u32` word,
/// padded with zero bytes to whole words (the kernel counts the first `n`).
fn upload(gpu: &Gpu, bytes: &[u8], library: bool) -> Result<Buffer<u8>> {
    if library {
        return gpu.upload(bytes);
    }
    let mut padded = gpu.zeros::<u8>(bytes.len().next_multiple_of(4))?;
    gpu.write(&mut padded, 0, bytes)?;
    Ok(padded)
}

/// The histogram of the first `n` uploaded bytes into `bins`, by this
/// example's kernel (the bytes viewed as words, no copy) or by
/// cg-algorithms' call (`algorithms`); returns the blocks launched.
fn count(gpu: &Gpu, input: &Buffer<u8>, n: usize, bins: &mut Buffer<u32>, algorithms: &mut Option<Algorithms<'_>>) -> Result<u32> {
    match algorithms {
        Some(alg) => {
            alg.histogram_even(input, bins, 0, 256)?;
            Ok(0)
        }
        None => histogram(gpu, &input.slice(..).cast::<u32>()?, n, bins),
    }
}

/// The two inputs: bytes from a hash of the index, and every byte 7.
#[derive(Clone, Copy, Debug)]
enum Input {
    Uniform,
    Constant,
}

impl Input {
    fn bytes(self, n: usize) -> Vec<u8> {
        match self {
            Input::Uniform => (0..n as u64).map(|i| ((i.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x94d0_49bb_1331_11eb) >> 56) as u8).collect(),
            Input::Constant => vec![7; n],
        }
    }

    fn name(self) -> &'static str {
        match self {
            Input::Uniform => "uniform",
            Input::Constant => "constant",
        }
    }
}

fn cpu_count(bytes: &[u8]) -> Vec<u32> {
    let mut bins = vec![0u32; BINS];
    for &b in bytes {
        bins[b as usize] += 1;
    }
    bins
}

/// The histogram of the `n` bytes in `words` into `bins`: a safe wrapper
/// that checks the buffers against the kernel's contract, sizes the grid
/// from the kernel's own occupancy, and makes the one `unsafe` launch.
fn histogram(gpu: &Gpu, words: &View<'_, u32>, n: usize, bins: &mut Buffer<u32>) -> Result<u32> {
    let kernel = gpu.cooperative_kernel(&HISTOGRAM)?;
    let blocks = kernel.limits(THREADS)?.capacity().min(n.div_ceil(4 * THREADS as usize).max(1) as u32);
    let launch = kernel.configure(blocks, THREADS)?;
    ensure_len(HISTOGRAM.name(), "words", n.div_ceil(4), words.len())?;
    ensure_len(HISTOGRAM.name(), "bins", BINS, bins.len())?;
    // SAFETY: words holds n bytes (checked above), bins 256 counts.
    unsafe { launch.launch((words, bins.slice_mut(..), n))? };
    Ok(blocks)
}

/// Refuses a size before anything is allocated.
fn check_size(gpu: &Gpu, n: usize) -> std::result::Result<(), String> {
    if n == 0 {
        return Err("--n 0: a histogram needs at least one byte".into());
    }
    program::memory_fits(gpu, n, 3, 2)
}

/// Each size and input counted and checked against the CPU's, a row each; whether all passed.
fn ladder(gpu: &Gpu, sizes: &[usize], algorithms: &mut Option<Algorithms<'_>>) -> Result<bool> {
    if algorithms.is_some() {
        println!("cg_algorithms::histogram_even on {}: one cooperative launch sized by its own occupancy (blocks column: 0)", gpu.info.name);
    } else {
        let capacity = gpu.cooperative_kernel(&HISTOGRAM)?.limits(THREADS)?;
        println!("{}", program::header("histogram", gpu, THREADS, &capacity));
    }
    println!("inputs: uniform bytes (a hash of the index) and constant ones (every byte 7); each bin checked against the CPU's count");
    println!("{:>10}  {:>9}  {:>6}  {:>10}  result", "n", "input", "blocks", "bin 7");
    let mut all = true;
    for &n in sizes {
        for input in [Input::Uniform, Input::Constant] {
            let bytes = input.bytes(n);
            let want = cpu_count(&bytes);
            let w = upload(gpu, &bytes, algorithms.is_some())?;
            let mut bins = gpu.zeros::<u32>(BINS)?;
            // Poisoned: the kernel clears the bins itself.
            gpu.fill(&mut bins, u32::MAX)?;
            let blocks = count(gpu, &w, n, &mut bins, algorithms)?;
            let got = gpu.read(&bins)?;
            let verdict = match got.iter().zip(&want).position(|(a, b)| a != b) {
                Some(b) => format!("FAIL at bin {b}: {} where the CPU counts {}", got[b], want[b]),
                None => "pass".to_string(),
            };
            all &= verdict == "pass";
            println!("{n:>10}  {:>9}  {blocks:>6}  {:>10}  {verdict}", input.name(), got[7]);
        }
    }
    Ok(all)
}

/// CUB's side: `cub/cub_histogram.cu`, built and loaded.
type Cub = example_bench::Baseline<unsafe extern "C" fn(*const u8, i32) -> i32, unsafe extern "C" fn(*mut u32) -> i32>;

fn cub() -> std::result::Result<Cub, String> {
    // SAFETY: cub/cub_histogram.cu exports these signatures.
    unsafe { example_bench::baseline("cub_histogram", include_str!("../cub/cub_histogram.cu")) }
}

/// Times ours against CUB at each size and input; prints the table;
/// whether both were right and no size from 2^24 missed the target.
fn bench(gpu: &Gpu, rounds: usize, algorithms: &mut Option<Algorithms<'_>>) -> Result<bool> {
    let cub = match cub() {
        Ok(c) => c,
        Err(why) => {
            eprintln!("error: CUB's DeviceHistogram::HistogramEven could not be built: {why}");
            return Ok(false);
        }
    };
    println!();
    println!(
        "Against CUB's DeviceHistogram::HistogramEven on {}: {rounds} rounds, each timing both ({RUNS} runs each, by events, after as many warm-ups), in alternating order",
        gpu.info.name
    );
    println!("{:>10}  {:>9}  {:>10}  {:>10}  {:>22}  {:>9}  {:>8}  target", "n", "input", "ours us", "CUB us", "ours/CUB [95% CI]", "ours GB/s", "CUB GB/s");
    let mut ok = true;
    for n in BENCH_SIZES {
        for input in [Input::Uniform, Input::Constant] {
            let bytes = input.bytes(n);
            let want = cpu_count(&bytes);
            let w = upload(gpu, &bytes, algorithms.is_some())?;
            let mut bins = gpu.zeros::<u32>(BINS)?;
            // SAFETY: bytes holds n bytes.
            if unsafe { (cub.setup)(bytes.as_ptr(), n as i32) } != 0 {
                eprintln!("error: CUB's setup failed at n = {n}");
                return Ok(false);
            }
            let paired = example_bench::paired(
                rounds,
                &mut || example_bench::median_ms(gpu, RUNS, &mut || count(gpu, &w, n, &mut bins, algorithms).map(|_| ())),
                // SAFETY: the library was set up for n.
                &mut || Ok(unsafe { cub.median_ms(RUNS) }),
            )?;
            let ours_right = gpu.read(&bins)? == want;
            let mut cub_bins = vec![0u32; BINS];
            // SAFETY: cub_bins holds 256 counts.
            unsafe { (cub.result)(cub_bins.as_mut_ptr()) };
            // SAFETY: set up above.
            unsafe { (cub.teardown)() };
            let (verdict, missed) = if n < 1 << 24 { ("-".to_string(), false) } else { paired.verdict(TARGET) };
            ok &= !missed && ours_right;
            let (r, lo, hi) = paired.ratio;
            println!(
                "{n:>10}  {:>9}  {:>10.1}  {:>10.1}  {:>8.3} [{lo:.3}, {hi:.3}]  {:>9.0}  {:>8.0}  {verdict}{}",
                input.name(),
                paired.ours_ms * 1e3,
                paired.theirs_ms * 1e3,
                r,
                n as f64 / (paired.ours_ms * 1e-3) / 1e9,
                n as f64 / (paired.theirs_ms * 1e-3) / 1e9,
                match (ours_right, cub_bins == want) {
                    (true, true) => "",
                    (false, _) => "  (ours WRONG)",
                    (_, false) => "  (CUB's counts differ from the CPU's)",
                }
            );
        }
    }
    println!("GB/s counts the input's bytes, read once by each.");
    Ok(ok)
}

fn run(args: &Args) -> std::result::Result<bool, String> {
    let gpu = program::device(args.emulate)?;
    let sizes = program::sizes(&gpu, &args.n, &LADDER, 3);
    for &n in &sizes {
        check_size(&gpu, n)?;
    }
    program::bench_needs_a_gpu(&gpu, args.bench)?;
    let mut algorithms = args.library.then(|| Algorithms::new(&gpu));
    ladder(&gpu, &sizes, &mut algorithms).and_then(|all| Ok(all && (!args.bench || bench(&gpu, args.rounds, &mut algorithms)?))).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    program::exit(run(&Args::parse()))
}
