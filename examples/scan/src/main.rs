//! An inclusive prefix sum of n floats in one cooperative launch, built on
//! the three toolkit crates alone: the kernel (`kernels/`, cg-kernel,
//! compiled to PTX by cg-builder in its `build.rs`) and this program
//! (cg-launcher). It checks the scan against a double-precision CPU scan on
//! a ladder of sizes and, with `--bench` on a GPU, times it against CUB's
//! `DeviceScan::InclusiveSum`, built by nvcc at run time.

mod check;
mod cub;

use cg_algorithms::{Algorithms, Op};
use cg_launcher::device::{Buffer, Gpu};
use cg_launcher::error::Result;
use cg_launcher::launch::ensure_len;
use clap::Parser;
use example_bench::program;
use scan_kernels::{INCLUSIVE_SCAN, INCLUSIVE_SCAN_ONCE};
use std::process::ExitCode;

// Links the kernels' crate, whose PTX and kernels the launcher finds by name.
use scan_kernels as _;

/// The ladder: a block and a warp and one either side, an odd size, a
/// larger odd size, and two large ones (the last on a GPU only).
const LADDER: [usize; 9] = [1, 31, 32, 33, 611, 4_096, (1 << 20) + 7, 1 << 24, 1 << 26];
/// Threads per block.
pub(crate) const THREADS: u32 = 256;
/// Threads per block of the look-back scan (cg-algorithms', one tile each:
/// 16 floats a thread).
pub(crate) const LOOKBACK_THREADS: u32 = (cg_algorithms::LOOKBACK_TILE / 16) as u32;

#[derive(Parser)]
#[command(name = "scan", about = "A grid-wide inclusive scan in one cooperative launch, checked against a double-precision CPU scan")]
struct Args {
    /// Run on the emulated GPU (a T4) instead of a CUDA GPU.
    #[arg(long)]
    emulate: bool,
    /// Sizes to check instead of the ladder.
    #[arg(long, value_delimiter = ',')]
    n: Vec<usize>,
    /// Scan with the kernel that keeps each block's part in shared memory
    /// across the grid barrier and reads the input once
    /// (`inclusive_scan_once`), not the one that reads it twice
    /// (`--kernel once`).
    #[arg(long, conflicts_with = "kernel")]
    once: bool,
    /// Which kernel scans.
    #[arg(long, value_enum, default_value_t = Kernel::TwoPass)]
    kernel: Kernel,
    /// Also time it against CUB's DeviceScan::InclusiveSum (a GPU and nvcc needed).
    #[arg(long)]
    bench: bool,
    /// Rounds of the benchmark, each timing both once.
    #[arg(long, default_value_t = 15)]
    rounds: usize,
}

/// Which kernel scans.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Kernel {
    /// `inclusive_scan`: one cooperative launch, the input read twice around one `grid.sync()`.
    TwoPass,
    /// `inclusive_scan_once`: one cooperative launch, the input read once and kept on chip across the barrier.
    Once,
    /// cg-algorithms' `inclusive_scan`: one ordinary launch, one pass, decoupled look-back (CUB's way), tiles taken by an atomic ticket.
    Lookback,
}

impl Kernel {
    fn is_lookback(self) -> bool {
        self == Kernel::Lookback
    }

    /// The grid-barrier kernel: the one that reads its input once for
    /// `Once`, else the one that reads it twice.
    fn grid_def(self) -> &'static scan_kernels::GridScanDef {
        if self == Kernel::Once { &INCLUSIVE_SCAN_ONCE } else { &INCLUSIVE_SCAN }
    }

    fn def(self) -> &'static str {
        match self {
            Kernel::TwoPass => INCLUSIVE_SCAN.name(),
            Kernel::Once => INCLUSIVE_SCAN_ONCE.name(),
            Kernel::Lookback => "cg_algorithms::inclusive_scan",
        }
    }
}

/// A scan's kernel and the scratch it keeps between launches: the block
/// totals of the cooperative kernels; for the look-back, cg-algorithms'
/// `Algorithms`, which owns its own.
pub(crate) struct Scanner<'g> {
    kernel: Kernel,
    totals: Buffer<f32>,
    algorithms: Algorithms<'g>,
}

impl<'g> Scanner<'g> {
    /// The scratch for inputs of up to `n` floats on `gpu`.
    fn new(gpu: &'g Gpu, kernel: Kernel) -> Result<Scanner<'g>> {
        let blocks = match kernel {
            Kernel::Lookback => 0,
            _ => gpu.cooperative_kernel(kernel.grid_def())?.limits(THREADS)?.capacity() as usize,
        };
        Ok(Scanner { kernel, totals: gpu.zeros::<f32>(2 * blocks.max(1))?, algorithms: Algorithms::new(gpu) })
    }

    /// The scan of `x` into `y`: for the look-back, cg-algorithms' safe
    /// call; for the cooperative kernels, a safe wrapper that checks the
    /// buffers against the kernel's contract, sizes the grid from the
    /// kernel's own occupancy (every block must be resident at once for
    /// its `grid.sync()`), and makes the one `unsafe` launch. Returns the
    /// blocks it launched.
    fn scan(&mut self, gpu: &Gpu, x: &Buffer<f32>, y: &mut Buffer<f32>) -> Result<u32> {
        let n = x.len();
        if self.kernel == Kernel::Lookback {
            self.algorithms.inclusive_scan(x, y, Op::Sum)?;
            return Ok(n.div_ceil(cg_algorithms::LOOKBACK_TILE) as u32);
        }
        ensure_len(self.kernel.def(), "y", n, y.len())?;
        let def = self.kernel.grid_def();
        let kernel = gpu.cooperative_kernel(def)?;
        let span = THREADS as usize * scan_kernels::ITEMS;
        let blocks = kernel.limits(THREADS)?.capacity().min(n.div_ceil(span).max(1) as u32);
        let launch = kernel.configure(blocks, THREADS)?;
        ensure_len(def.name(), "block_totals", blocks as usize * if self.kernel == Kernel::Once { 2 } else { 1 }, self.totals.len())?;
        // SAFETY: x and y hold n floats (checked above) and are whole buffers,
        // whose starts are 256-byte aligned; block_totals holds one float per
        // block (two for the kernel that reads once), and the launch gives the
        // kernel's own shared memory.
        unsafe { launch.launch((&x.slice(..), y.slice_mut(..), self.totals.slice_mut(..), n))? };
        Ok(blocks)
    }
}

/// Refuses a size before anything is allocated: zero, or more than the host
/// (input, output and the reference) or the device (input and output) can hold.
fn check_size(gpu: &Gpu, n: usize) -> std::result::Result<(), String> {
    if n == 0 {
        return Err("--n 0: a scan needs at least one element".into());
    }
    program::memory_fits(gpu, n, 16, 8)
}

fn run(args: &Args) -> std::result::Result<bool, String> {
    let gpu = program::device(args.emulate)?;
    let sizes = program::sizes(&gpu, &args.n, &LADDER, 1);
    for &n in &sizes {
        check_size(&gpu, n)?;
    }
    program::bench_needs_a_gpu(&gpu, args.bench)?;
    let kernel = if args.once { Kernel::Once } else { args.kernel };
    ladder(&gpu, &sizes, kernel).and_then(|all| Ok(all && (!args.bench || cub::bench(&gpu, args.rounds, kernel)?))).map_err(|e| e.to_string())
}

/// The longest chain of float additions to any output of `kernel`, for the check's bound.
pub(crate) fn depth(kernel: Kernel, n: usize, blocks: usize) -> usize {
    match kernel {
        Kernel::TwoPass => check::additions(n, blocks, THREADS as usize),
        Kernel::Once => check::additions_once(n, blocks, THREADS as usize),
        Kernel::Lookback => check::additions_lookback(n, LOOKBACK_THREADS as usize),
    }
}

/// Each size scanned and checked, a row each; whether all passed.
fn ladder(gpu: &Gpu, sizes: &[usize], kernel: Kernel) -> Result<bool> {
    let name = kernel.def();
    if kernel.is_lookback() {
        println!(
            "{name} on {}: one ordinary launch, one block of {LOOKBACK_THREADS} threads per tile of {} floats; no grid barrier",
            gpu.info.name,
            cg_algorithms::LOOKBACK_TILE
        );
    } else {
        let def = kernel.grid_def();
        let capacity = gpu.cooperative_kernel(def)?.limits(THREADS)?;
        println!("{}", program::header(name, gpu, THREADS, &capacity));
    }
    println!("input: {}; reference: double-precision scan; bound per element: gamma_h * (|x[0]| + ... + |x[i]|)", check::FILL_RULE);
    println!("and the exact check: {}, whose scan is exact in f32, so one element dropped or added twice fails it", check::SIGNS_RULE);
    println!("{:>10}  {:>6}  {:>16}  {:>16}  {:>9}  {:>9}  {:>11}  result", "n", "blocks", "y[n-1]", "reference", "max err", "its bound", "exact");
    let mut all = true;
    for &n in sizes {
        let xs = check::fill(n);
        let mut x = gpu.upload(&xs)?;
        let mut y = gpu.zeros::<f32>(n)?;
        let mut scanner = Scanner::new(gpu, kernel)?;
        let blocks = scanner.scan(gpu, &x, &mut y)?;
        let ys = gpu.read(&y)?;
        let c = check::within(&xs, &ys, depth(kernel, n, blocks as usize));
        let signs = check::signs(n);
        gpu.write(&mut x, 0, &signs)?;
        scanner.scan(gpu, &x, &mut y)?;
        let inexact = check::first_inexact(&signs, &gpu.read(&y)?);
        all &= c.pass && inexact.is_none();
        let verdict = match (c.pass, inexact) {
            (true, None) => "pass".to_string(),
            (false, _) => format!("FAIL at y[{}]", c.worst_index),
            (true, Some(k)) => format!("FAIL at y[{k}] (exact check)"),
        };
        println!(
            "{n:>10}  {blocks:>6}  {:>16.4}  {:>16.4}  {:>9.2e}  {:>9.2e}  {:>11}  {verdict}",
            ys[n - 1],
            c.last_reference,
            c.worst_error,
            c.worst_bound,
            if inexact.is_none() { "equal" } else { "differs" }
        );
    }
    Ok(all)
}

fn main() -> ExitCode {
    program::exit(run(&Args::parse()))
}
