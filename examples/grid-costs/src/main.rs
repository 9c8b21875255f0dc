//! What one grid collective costs inside a cooperative kernel, against one
//! `grid.sync()` timed in the same process: a launch of `--calls` calls
//! back to back less a launch of none, over `--calls`, for `grid.sync()`,
//! `grid.reduce` of one `f32` per thread, `grid.exclusive_scan` of one
//! `u32`, `grid.select` of one flag and `grid.reduce_array` of five `f64`
//! (the on-chip conjugate-gradient iteration's floor: its one grid-wide
//! step, with no matrix work); each collective's ratio to the
//! barrier from paired rounds in alternating order, with its 95% interval.
//! The targets are at one block of 256 per SM: a reduce at most 1.3
//! barriers, a scan at most 2.
//!
//! On the emulator (`--emulate`) it runs each loop once and checks that it
//! finishes, and times nothing. A target missed is printed (`MISSED`), and
//! the run still exits 0: it is a measurement.

use cg_kernel::mem::Out;
use cg_launcher::device::Gpu;
use cg_launcher::error::Result;
use cg_launcher::launch::CooperativeKernel;
use clap::Parser;
use example_bench::{median_ms, paired, program};
use grid_costs_kernels::{REDUCE_LOOP, REDUCE5_LOOP, SCAN_LOOP, SELECT_LOOP, SYNC_LOOP};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "grid-costs", about = "What one grid collective costs inside a kernel, against one grid.sync() in the same process")]
struct Args {
    /// Run on the emulated GPU (a T4): each loop once, nothing timed.
    #[arg(long)]
    emulate: bool,
    /// Calls per timed launch.
    #[arg(long, default_value_t = 2000)]
    calls: u32,
    /// Paired rounds per grid.
    #[arg(long, default_value_t = 15)]
    rounds: usize,
    /// Timed launches per measure in a round (the median is taken).
    #[arg(long, default_value_t = 5)]
    runs: usize,
}

/// A loop kernel of one collective, its name, and its target at one block per SM.
struct Loop<'g> {
    name: &'static str,
    kernel: CooperativeKernel<'g, (u32, Out<u32>)>,
    target: Option<f64>,
}

/// Microseconds per call of `kernel` on `blocks` of `threads`: the median
/// of `runs` launches of `calls` calls less that of `runs` of none, over `calls`.
fn per_call(gpu: &Gpu, kernel: &CooperativeKernel<'_, (u32, Out<u32>)>, blocks: u32, threads: u32, calls: u32, runs: usize) -> Result<f64> {
    let launch = kernel.configure(blocks, threads)?;
    let mut out = gpu.zeros::<u32>(1)?;
    // SAFETY: `out` holds one u32, all each loop writes.
    let mut run = |k: u32| unsafe { launch.launch((k, out.slice_mut(..))) };
    let with = median_ms(gpu, runs, &mut || run(calls))?;
    let without = median_ms(gpu, runs, &mut || run(0))?;
    Ok((with - without) * 1e3 / calls as f64)
}

fn run(args: &Args) -> std::result::Result<bool, String> {
    let gpu = program::device(args.emulate)?;
    if args.calls == 0 || args.rounds < 2 || args.runs == 0 {
        return Err(format!("--calls {} --rounds {} --runs {}: each must be at least 1, and the rounds at least 2", args.calls, args.rounds, args.runs));
    }
    let e = |e: cg_launcher::error::Error| e.to_string();
    let load = |def| gpu.cooperative_kernel(def).map_err(e);
    let sync = load(&SYNC_LOOP)?;
    let loops = [
        Loop { name: "grid.reduce (f32, Plus)", kernel: load(&REDUCE_LOOP)?, target: Some(1.3) },
        Loop { name: "grid.exclusive_scan (u32, Plus)", kernel: load(&SCAN_LOOP)?, target: Some(2.0) },
        Loop { name: "grid.select (one flag)", kernel: load(&SELECT_LOOP)?, target: None },
        Loop { name: "grid.reduce_array (5 f64)", kernel: load(&REDUCE5_LOOP)?, target: None },
    ];
    let sms = gpu.info.sms;
    if gpu.info.emulated {
        for (name, kernel) in std::iter::once(("grid.sync()", &sync)).chain(loops.iter().map(|l| (l.name, &l.kernel))) {
            let launch = kernel.configure(2, 64).map_err(e)?;
            let mut out = gpu.zeros::<u32>(1).map_err(e)?;
            // SAFETY: `out` holds one u32.
            unsafe { launch.launch((3, out.slice_mut(..))) }.and_then(|_| gpu.finish()).map_err(e)?;
            println!("{name}: 3 calls on 2 blocks of 64 on {}: ran (the emulator times nothing)", gpu.info.name);
        }
        return Ok(true);
    }
    println!(
        "grid collectives against grid.sync() on {} ({sms} SMs): {} calls per launch, median of {} launches, {} paired rounds; µs per call, ratio to grid.sync() with its 95% interval",
        gpu.info.name, args.calls, args.runs, args.rounds
    );
    let capacity = sync.limits(256).map_err(e)?.capacity();
    for (blocks, threads, one_per_sm) in [(sms, 256, true), (2 * sms, 256, false), (capacity, 256, false), (sms, 1024, false)] {
        let sync_us = per_call(&gpu, &sync, blocks, threads, args.calls, args.runs).map_err(e)?;
        println!("{blocks} blocks of {threads}: grid.sync() {sync_us:.3} µs");
        for l in &loops {
            let p = paired(args.rounds, &mut || per_call(&gpu, &l.kernel, blocks, threads, args.calls, args.runs), &mut || {
                per_call(&gpu, &sync, blocks, threads, args.calls, args.runs)
            })
            .map_err(e)?;
            let (ratio, lo, hi) = p.ratio;
            let verdict = match l.target.filter(|_| one_per_sm) {
                Some(t) => p.verdict(t).0,
                None => "no target here".to_string(),
            };
            println!("  {:<34} {:>7.3} µs  {ratio:.3}x grid.sync() [{lo:.3}, {hi:.3}]  {verdict}", l.name, p.ours_ms);
        }
    }
    // A missed target is a measurement, printed, not a failed run.
    Ok(true)
}

fn main() -> ExitCode {
    program::exit(run(&Args::parse()))
}
