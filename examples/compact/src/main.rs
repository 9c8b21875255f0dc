//! A stream compaction of n floats in one cooperative launch, built on the
//! three toolkit crates alone: the kernel (`kernels/`) and this program. It
//! keeps the floats above a threshold, in their order, checks the result
//! against the CPU's on a ladder of sizes and, with `--bench` on a GPU,
//! times it against CUB's `DeviceSelect::If`, built by nvcc at run time.

use cg_algorithms::{Algorithms, Rule};
use cg_launcher::device::{Buffer, Gpu};
use cg_launcher::error::{Error, Result};
use cg_launcher::launch::ensure_len;
use clap::Parser;
use compact_kernels::COMPACT;
use example_bench::program;
use std::process::ExitCode;

// Links the kernels' crate, whose PTX and kernels the launcher finds by name.
use compact_kernels as _;

/// The ladder: a block and a warp and one either side, an odd size, a
/// larger odd size, and two large ones (the last on a GPU only).
const LADDER: [usize; 9] = [1, 31, 32, 33, 611, 4_096, (1 << 20) + 7, (1 << 24) + 3, 1 << 26];
/// Threads per block.
const THREADS: u32 = 256;
/// The threshold: about half the input is above it.
const THRESHOLD: f32 = 0.5;
/// Sizes timed against CUB, and the target from 2^24 up.
const BENCH_SIZES: [usize; 4] = [1 << 20, 1 << 22, (1 << 24) + 3, 1 << 26];
const TARGET: f64 = 1.1;
/// Runs per measurement, after as many warm-ups.
const RUNS: usize = 20;

#[derive(Parser)]
#[command(name = "compact", about = "Stream compaction (the floats above 0.5, in order) in one cooperative launch, checked against the CPU's")]
struct Args {
    /// Run on the emulated GPU (a T4) instead of a CUDA GPU.
    #[arg(long)]
    emulate: bool,
    /// Sizes to check instead of the ladder.
    #[arg(long, value_delimiter = ',')]
    n: Vec<usize>,
    /// Also time it against CUB's DeviceSelect::If (a GPU and nvcc needed).
    #[arg(long)]
    bench: bool,
    /// Rounds of the benchmark, each timing both once.
    #[arg(long, default_value_t = 15)]
    rounds: usize,
    /// Compact with cg-algorithms' `select_if` (one ordinary launch,
    /// decoupled look-back) instead of this example's cooperative kernel.
    #[arg(long)]
    library: bool,
}

/// Which compaction runs: this example's cooperative kernel, or
/// cg-algorithms' `select_if`, with the storage it owns.
enum Way<'g> {
    Grid,
    Library(Box<Algorithms<'g>>),
}

/// One compaction of `b.x` into `b.y` the chosen way, nothing read back;
/// returns the blocks it launched.
fn run_once(gpu: &Gpu, b: &mut Buffers, way: &mut Way<'_>) -> Result<u32> {
    match way {
        Way::Grid => compact(gpu, b),
        Way::Library(alg) => {
            alg.select_if_on_device(&b.x, &mut b.y, Rule::Greater(THRESHOLD))?;
            Ok(b.x.len().div_ceil(cg_algorithms::LOOKBACK_TILE) as u32)
        }
    }
}

/// How many elements the last compaction kept.
fn kept(gpu: &Gpu, b: &mut Buffers, way: &mut Way<'_>) -> Result<usize> {
    match way {
        Way::Grid => Ok(gpu.read(&b.selected)?[0] as usize),
        // The call again, its count read back (the same input: the same count).
        Way::Library(alg) => alg.select_if(&b.x, &mut b.y, Rule::Greater(THRESHOLD)).map_err(Error::from),
    }
}

/// `n` floats in [0, 1), each exact in f32, from a hash of the index.
fn fill(n: usize) -> Vec<f32> {
    (0..n as u64)
        .map(|i| {
            let z = (i.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0xbf58_476d_1ce4_e5b9).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z >> 40) as f32 / (1u64 << 24) as f32
        })
        .collect()
}

/// The device buffers of one compaction.
struct Buffers {
    x: Buffer<f32>,
    y: Buffer<f32>,
    counts: Buffer<u32>,
    selected: Buffer<u32>,
}

/// The compaction of `b.x`: a safe wrapper that checks the buffers against
/// the kernel's contract, sizes the grid from the kernel's own occupancy,
/// and makes the one `unsafe` launch. Returns the blocks it launched.
fn compact(gpu: &Gpu, b: &mut Buffers) -> Result<u32> {
    let kernel = gpu.cooperative_kernel(&COMPACT)?;
    let n = b.x.len();
    let span = THREADS as usize * compact_kernels::ITEMS;
    let blocks = kernel.limits(THREADS)?.capacity().min(n.div_ceil(span).max(1) as u32);
    let launch = kernel.configure(blocks, THREADS)?;
    ensure_len(COMPACT.name(), "y", n, b.y.len())?;
    ensure_len(COMPACT.name(), "counts", blocks as usize, b.counts.len())?;
    ensure_len(COMPACT.name(), "selected", 1, b.selected.len())?;
    if u32::try_from(n).is_err() {
        return Err(Error::InputTooLarge { n });
    }
    // SAFETY: x and y hold n floats (checked above), x a whole buffer
    // (256-byte aligned); counts one per block; selected one; n < 2^32.
    unsafe { launch.launch((&b.x.slice(..), b.y.slice_mut(..), b.counts.slice_mut(..), b.selected.slice_mut(..), THRESHOLD, n))? };
    Ok(blocks)
}

/// Refuses a size before anything is allocated.
fn check_size(gpu: &Gpu, n: usize) -> std::result::Result<(), String> {
    if n == 0 {
        return Err("--n 0: a compaction needs at least one element".into());
    }
    if n > u32::MAX as usize {
        return Err(format!("--n {n}: the kernel counts in 32 bits; give at most {}", u32::MAX));
    }
    program::memory_fits(gpu, n, 16, 8)
}

fn buffers(gpu: &Gpu, xs: &[f32]) -> Result<Buffers> {
    let capacity = gpu.cooperative_kernel(&COMPACT)?.limits(THREADS)?.capacity() as usize;
    Ok(Buffers { x: gpu.upload(xs)?, y: gpu.zeros(xs.len())?, counts: gpu.zeros(capacity)?, selected: gpu.zeros(1)? })
}

/// Each size compacted and checked against the CPU's, a row each; whether all passed.
fn ladder(gpu: &Gpu, sizes: &[usize], way: &mut Way<'_>) -> Result<bool> {
    if let Way::Library(_) = way {
        println!(
            "cg_algorithms::select_if on {}: one ordinary launch, one block per tile of {} floats; no grid barrier",
            gpu.info.name,
            cg_algorithms::LOOKBACK_TILE
        );
    } else {
        let capacity = gpu.cooperative_kernel(&COMPACT)?.limits(THREADS)?;
        println!("{}", program::header("compact", gpu, THREADS, &capacity));
    }
    println!("input: x[i] in [0, 1) from a hash of i; kept: x[i] > {THRESHOLD}, in order; checked element by element against the CPU's");
    println!("{:>10}  {:>6}  {:>10}  {:>10}  result", "n", "blocks", "kept", "CPU kept");
    let mut all = true;
    for &n in sizes {
        let xs = fill(n);
        let want: Vec<f32> = xs.iter().copied().filter(|&x| x > THRESHOLD).collect();
        let mut b = buffers(gpu, &xs)?;
        gpu.fill(&mut b.y, f32::NAN)?;
        gpu.fill(&mut b.selected, u32::MAX)?;
        let blocks = run_once(gpu, &mut b, way)?;
        let kept = kept(gpu, &mut b, way)?;
        let ys = gpu.read(&b.y)?;
        let verdict = if kept != want.len() {
            format!("FAIL: {kept} kept, the CPU {}", want.len())
        } else {
            match ys[..kept].iter().zip(&want).position(|(a, b)| a.to_bits() != b.to_bits()) {
                Some(i) => format!("FAIL at y[{i}]: {} where the CPU has {}", ys[i], want[i]),
                None => "pass".to_string(),
            }
        };
        all &= verdict == "pass";
        println!("{n:>10}  {blocks:>6}  {kept:>10}  {:>10}  {verdict}", want.len());
    }
    Ok(all)
}

/// CUB's side: `cub/cub_select.cu`, built and loaded.
type Cub = example_bench::Baseline<unsafe extern "C" fn(*const f32, i32, f32) -> i32, unsafe extern "C" fn(*mut f32, *mut i32) -> i32>;

fn cub() -> std::result::Result<Cub, String> {
    // SAFETY: cub/cub_select.cu exports these signatures.
    unsafe { example_bench::baseline("cub_select", include_str!("../cub/cub_select.cu")) }
}

/// Times ours against CUB at each size; prints the table; whether both were
/// right and no size from 2^24 missed the target.
fn bench(gpu: &Gpu, rounds: usize, way: &mut Way<'_>) -> Result<bool> {
    let cub = match cub() {
        Ok(c) => c,
        Err(why) => {
            eprintln!("error: CUB's DeviceSelect::If could not be built: {why}");
            return Ok(false);
        }
    };
    println!();
    println!(
        "Against CUB's DeviceSelect::If on {}: {rounds} rounds, each timing both ({RUNS} runs each, by events, after as many warm-ups), in alternating order",
        gpu.info.name
    );
    println!("{:>10}  {:>10}  {:>10}  {:>22}  {:>9}  {:>8}  target", "n", "ours us", "CUB us", "ours/CUB [95% CI]", "ours GB/s", "CUB GB/s");
    let mut ok = true;
    for n in BENCH_SIZES {
        let xs = fill(n);
        let mut b = buffers(gpu, &xs)?;
        // SAFETY: xs holds n floats.
        if unsafe { (cub.setup)(xs.as_ptr(), n as i32, THRESHOLD) } != 0 {
            eprintln!("error: CUB's setup failed at n = {n}");
            return Ok(false);
        }
        let paired = example_bench::paired(
            rounds,
            &mut || example_bench::median_ms(gpu, RUNS, &mut || run_once(gpu, &mut b, way).map(|_| ())),
            // SAFETY: the library was set up for n.
            &mut || Ok(unsafe { cub.median_ms(RUNS) }),
        )?;
        let want: Vec<f32> = xs.iter().copied().filter(|&x| x > THRESHOLD).collect();
        let kept = kept(gpu, &mut b, way)?;
        let ys = gpu.read(&b.y)?;
        let ours_right = kept == want.len() && ys[..kept].iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits());
        let (mut cub_ys, mut cub_kept) = (vec![0f32; n], 0i32);
        // SAFETY: cub_ys holds n floats, more than CUB can select.
        unsafe { (cub.result)(cub_ys.as_mut_ptr(), &mut cub_kept) };
        // SAFETY: set up above.
        unsafe { (cub.teardown)() };
        let cub_right = cub_kept as usize == want.len() && cub_ys[..want.len()] == want[..];
        let (verdict, missed) = if n < 1 << 24 { ("-".to_string(), false) } else { paired.verdict(TARGET) };
        ok &= !missed && ours_right;
        let (r, lo, hi) = paired.ratio;
        // Bytes each must move: the cooperative kernel reads x twice, the
        // library's and CUB's once; each writes what it keeps.
        let (x_bytes, y_bytes) = (4.0 * n as f64, 4.0 * want.len() as f64);
        println!(
            "{n:>10}  {:>10.1}  {:>10.1}  {:>8.3} [{lo:.3}, {hi:.3}]  {:>9.0}  {:>8.0}  {verdict}{}",
            paired.ours_ms * 1e3,
            paired.theirs_ms * 1e3,
            r,
            (if matches!(way, Way::Library(_)) { x_bytes } else { 2.0 * x_bytes } + y_bytes) / (paired.ours_ms * 1e-3) / 1e9,
            (x_bytes + y_bytes) / (paired.theirs_ms * 1e-3) / 1e9,
            match (ours_right, cub_right) {
                (true, true) => "",
                (false, _) => "  (ours WRONG)",
                (_, false) => "  (CUB's output differs from the CPU's)",
            }
        );
    }
    println!("GB/s counts the bytes each must move: the cooperative kernel x twice, select_if and CUB's x once; each the kept floats once.");
    Ok(ok)
}

fn run(args: &Args) -> std::result::Result<bool, String> {
    let gpu = program::device(args.emulate)?;
    let sizes = program::sizes(&gpu, &args.n, &LADDER, 2);
    for &n in &sizes {
        check_size(&gpu, n)?;
    }
    program::bench_needs_a_gpu(&gpu, args.bench)?;
    let mut way = if args.library { Way::Library(Box::new(Algorithms::new(&gpu))) } else { Way::Grid };
    ladder(&gpu, &sizes, &mut way).and_then(|all| Ok(all && (!args.bench || bench(&gpu, args.rounds, &mut way)?))).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    program::exit(run(&Args::parse()))
}
