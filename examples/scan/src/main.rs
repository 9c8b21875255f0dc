//! An inclusive prefix sum of n floats in one cooperative launch, built on
//! the three toolkit crates alone: the kernel (`kernels/`, cg-kernel,
//! compiled to PTX by cg-builder in its `build.rs`) and this program
//! (cg-launcher). It checks the scan against a double-precision CPU scan on
//! a ladder of sizes and, with `--bench` on a GPU, times it against CUB's
//! `DeviceScan::InclusiveSum`, built by nvcc at run time.

mod check;
mod cub;

use cg_launcher::device::{Buffer, Gpu};
use cg_launcher::error::Result;
use cg_launcher::launch::ensure_len;
use clap::Parser;
use example_bench::program;
use scan_kernels::{INCLUSIVE_SCAN, INCLUSIVE_SCAN_LOOKBACK, INCLUSIVE_SCAN_ONCE};
use std::process::ExitCode;

// Links the kernels' crate, whose PTX and kernels the launcher finds by name.
use scan_kernels as _;

/// The ladder: a block and a warp and one either side, an odd size, a
/// larger odd size, and two large ones (the last on a GPU only).
const LADDER: [usize; 9] = [1, 31, 32, 33, 611, 4_096, (1 << 20) + 7, 1 << 24, 1 << 26];
/// Threads per block.
pub(crate) const THREADS: u32 = 256;
/// Threads per block of the look-back scan (one tile each).
pub(crate) const LOOKBACK_THREADS: u32 = 256;

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
    /// `inclusive_scan_lookback`: one ordinary launch, one pass, decoupled look-back (CUB's way), tiles taken by an atomic ticket.
    Lookback,
    /// The same, each block's tile its own index, as CUB takes it (trusting the GPU to start blocks in order).
    LookbackByIndex,
}

impl Kernel {
    fn is_lookback(self) -> bool {
        matches!(self, Kernel::Lookback | Kernel::LookbackByIndex)
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
            Kernel::Lookback | Kernel::LookbackByIndex => INCLUSIVE_SCAN_LOOKBACK.name(),
        }
    }
}

/// A scan's kernel and the scratch it keeps between launches: the block
/// totals of the cooperative kernels; the look-back's status words, ticket
/// and epoch.
pub(crate) struct Scanner {
    kernel: Kernel,
    totals: Buffer<f32>,
    status: Buffer<u64>,
    ticket: Buffer<u32>,
    epoch: u32,
}

impl Scanner {
    /// The scratch for inputs of up to `n` floats on `gpu`.
    fn new(gpu: &Gpu, kernel: Kernel, n: usize) -> Result<Scanner> {
        let blocks = match kernel {
            Kernel::Lookback | Kernel::LookbackByIndex => 0,
            _ => gpu.cooperative_kernel(kernel.grid_def())?.limits(THREADS)?.capacity() as usize,
        };
        let tiles = if kernel.is_lookback() { n.div_ceil(scan_kernels::tile_len(LOOKBACK_THREADS as usize)).max(1) } else { 1 };
        Ok(Scanner { kernel, totals: gpu.zeros::<f32>(2 * blocks.max(1))?, status: gpu.zeros::<u64>(tiles)?, ticket: gpu.zeros::<u32>(1)?, epoch: 0 })
    }

    /// The scan of `x` into `y`: a safe wrapper that checks the buffers
    /// against the kernel's contract, sizes the grid (for the cooperative
    /// kernels from their own occupancy: every block must be resident at
    /// once for their `grid.sync()`; for the look-back one block per tile),
    /// and makes the one `unsafe` launch. Returns the blocks it launched.
    fn scan(&mut self, gpu: &Gpu, x: &Buffer<f32>, y: &mut Buffer<f32>) -> Result<u32> {
        let n = x.len();
        ensure_len(self.kernel.def(), "y", n, y.len())?;
        if self.kernel.is_lookback() {
            let tiles = n.div_ceil(scan_kernels::tile_len(LOOKBACK_THREADS as usize));
            ensure_len(self.kernel.def(), "status", tiles, self.status.len())?;
            let kernel = gpu.kernel(&INCLUSIVE_SCAN_LOOKBACK)?;
            // A new epoch per launch; after the last, the statuses cleared and 1 again.
            self.epoch += 1;
            if self.epoch == scan_kernels::EPOCHS {
                let len = self.status.len();
                self.status = gpu.zeros::<u64>(len)?;
                self.epoch = 1;
            }
            let blocks = u32::try_from(tiles).map_err(|_| cg_launcher::error::Error::InputTooLarge { n })?;
            // SAFETY: x and y hold n floats (checked above) and are whole
            // buffers, 256-byte aligned; status holds one word per tile, none
            // of this epoch (each launch takes a new one, and the words are
            // cleared before the epochs wrap); the ticket is 0 (zeroed, and
            // each launch's last tile sets it back); one block per tile.
            let launched = unsafe {
                kernel.launch(
                    blocks,
                    LOOKBACK_THREADS,
                    (
                        &x.slice(..),
                        y.slice_mut(..),
                        self.status.slice_mut(..),
                        self.ticket.slice_mut(..),
                        self.epoch,
                        u32::from(self.kernel == Kernel::Lookback),
                        n,
                    ),
                )
            };
            if launched.is_err() {
                // A launch that did not run to its end leaves the ticket where it stopped.
                self.ticket = gpu.zeros::<u32>(1)?;
            }
            launched?;
            return Ok(blocks);
        }
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
        Kernel::Lookback | Kernel::LookbackByIndex => check::additions_lookback(n, LOOKBACK_THREADS as usize),
    }
}

/// Each size scanned and checked, a row each; whether all passed.
fn ladder(gpu: &Gpu, sizes: &[usize], kernel: Kernel) -> Result<bool> {
    let name = kernel.def();
    if kernel.is_lookback() {
        println!(
            "{name} on {}: one ordinary launch, one block of {LOOKBACK_THREADS} threads per tile of {} floats; no grid barrier",
            gpu.info.name,
            scan_kernels::tile_len(LOOKBACK_THREADS as usize)
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
        let mut scanner = Scanner::new(gpu, kernel, n)?;
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
