//! `cg-lesson multi-gpu`'s results as text.

use super::shard::Crossover;
use super::{MultiReport, Way};
use crate::checks;
use crate::text::plural;
use crate::timing::Stats;
use std::fmt::Write;

/// `2^20` for a power of two, else the number.
fn size(n: usize) -> String {
    if n.is_power_of_two() { format!("2^{}", n.trailing_zeros()) } else { n.to_string() }
}

/// Mean and spread in microseconds.
fn micros(s: &Stats) -> String {
    format!("{:>9.1} us  ({:.1} .. {:.1})", s.mean_ms * 1e3, s.min_ms * 1e3, s.max_ms * 1e3)
}

fn crossover(c: Option<Crossover>) -> String {
    match c {
        None => "not measured".to_string(),
        Some(Crossover::AllFaster) => "every GPU together was faster at every n measured".to_string(),
        Some(Crossover::OneFaster) => "one GPU was faster up to the largest n measured".to_string(),
        Some(Crossover::Below { n }) => format!("one GPU is faster below n = {}; from there on, every GPU together is", size(n)),
    }
}

/// The whole report.
pub fn render(r: &MultiReport) -> String {
    let mut o = String::new();
    let emulated = r.gpus.first().is_some_and(|g| g.device.emulated);
    let _ = writeln!(
        o,
        "The sum over {}: n = {} floats, {:.1} MiB, {} threads/block, tiles of {}",
        plural(r.process.map_or(r.gpus.len(), |(_, ranks)| ranks as usize), "GPU", "GPUs"),
        r.n,
        r.n as f64 * 4.0 / (1024.0 * 1024.0),
        r.threads_per_block,
        r.tile
    );
    if let Some((rank, ranks)) = r.process {
        let _ = writeln!(
            o,
            "this process is rank {rank} of {ranks}, one process per GPU: the NCCL path only (the barrier across GPUs needs memory every GPU maps)"
        );
    }
    if emulated {
        o.push_str("emulated devices (cg_emulator on the CPU): every check, with CPU times that say nothing about a GPU\n");
    }
    let _ = writeln!(o, "input: {}; the GPUs' shards are contiguous, in rank order", r.fill);
    let _ = writeln!(o, "all-reduce: {}", r.nccl);
    o.push_str("\nEach GPU's grid, from its own occupancy\n");
    for g in &r.gpus {
        let d = &g.device;
        let _ = writeln!(o, "  GPU {}: {}{}", g.rank, d.name, if emulated { String::new() } else { format!(" (device {})", d.ordinal) });
        for (c, grid) in [(&g.across, g.grids[0]), (&g.lesson, g.grids[1])] {
            let _ = writeln!(o, "    {:<24} {}; runs {}", c.kernel, c.product(), plural(grid, "block", "blocks"));
        }
        let s = &g.shard;
        let _ = writeln!(o, "    shard: elements {} .. {} ({})", s.first, s.first + s.len, plural(s.len, "float", "floats"));
    }
    let _ = writeln!(o, "\nThe sums, each from poisoned buffers; reference (double) {:.6}", r.reference);
    let _ = writeln!(o, "  bound: {}", r.bound_rule);
    for w in &r.sums {
        let _ = writeln!(o, "  {}", w.way.label(emulated));
        for g in &w.gpus {
            let _ = writeln!(o, "    GPU {} total  {}", g.rank, g.total.detail());
        }
        for (g, c) in w.gpus.iter().filter(|g| g.combined.is_some()).zip(&w.combined) {
            let _ = writeln!(o, "    combined on GPU {}: {}", g.rank, c.detail());
        }
    }
    if !r.timing.is_empty() {
        let clock = if emulated { "CPU wall time" } else { "GPU time" };
        let _ = writeln!(
            o,
            "\nTiming at n = {}: mean of {} after {}, {clock}; a run across GPUs takes its slowest GPU's time",
            r.n,
            plural(r.runs, "run", "runs"),
            plural(r.warmups, "warm-up", "warm-ups")
        );
        // No ratios of the emulator's CPU time: they would read as findings about GPUs.
        let one = r.timing.iter().find(|t| t.way == Way::OneGpu && !emulated).map(|t| t.stats.mean_ms);
        for t in &r.timing {
            let ratio = match one {
                Some(one) if t.way != Way::OneGpu => format!("   {:.3} x one GPU", t.stats.mean_ms / one),
                _ => String::new(),
            };
            let _ = writeln!(o, "  {:<56} {}{ratio}", t.way.label(emulated), micros(&t.stats));
        }
    }
    let p = &r.pieces;
    let pieces = [
        ("the barrier across GPUs (grid.sync, meet, grid.sync)", p.barrier),
        ("the same, its wait unbounded", p.barrier_unbounded),
        ("an empty cooperative launch of the same grids", p.empty_launch),
        ("the barrier across GPUs, one block per GPU", p.barrier_one_block),
        ("an empty cooperative launch of one block", p.empty_launch_one_block),
        ("all-reduce of one float, runs queued", p.all_reduce_queued),
        ("all-reduce of one float, the host waiting for each", p.all_reduce_waited),
    ];
    if pieces.iter().any(|(_, s)| s.is_some()) {
        o.push_str("\nThe pieces on their own\n");
        for (what, s) in pieces {
            if let Some(s) = s {
                let _ = writeln!(o, "  {what:<56} {}  ({})", micros(&s), plural(s.runs, "run", "runs"));
            }
        }
        if let (Some(b), Some(u), Some(e), false) = (p.barrier, p.barrier_unbounded, p.empty_launch, emulated) {
            let (bound, spread) = ((b.mean_ms - u.mean_ms) * 1e3, (b.max_ms - b.min_ms).max(u.max_ms - u.min_ms) * 1e3);
            let bound = if bound.abs() <= spread {
                format!("the bound on its wait costs nothing the runs can tell ({bound:+.2} us, spread {spread:.1} us)")
            } else {
                format!("the bound on its wait {bound:.2} us of that")
            };
            let _ = writeln!(o, "  the barrier costs {:.1} us over an empty launch of its grids; {bound}", (b.mean_ms - e.mean_ms) * 1e3);
        }
        if let (Some(b), Some(e), false) = (p.barrier_one_block, p.empty_launch_one_block, emulated) {
            let _ = writeln!(o, "  the meeting alone (one block per GPU) costs {:.1} us over an empty launch", (b.mean_ms - e.mean_ms) * 1e3);
        }
    }
    if !r.sweep.is_empty() && emulated {
        o.push_str("\nOne GPU against every GPU (mean ms of CPU time; no ratios or crossover on the emulator)\n");
        let _ = writeln!(o, "  {:>6} {:>12} {:>12} {:>12}", "n", "one GPU", "(a) across", "(b) NCCL");
        for s in &r.sweep {
            let col = |t: Option<f64>| t.map_or(format!("{:>12}", "-"), |t| format!("{t:>12.4}"));
            let _ = writeln!(o, "  {:>6} {:>12.4} {} {}", size(s.n), s.one_gpu_ms, col(s.across_ms), col(s.nccl_ms));
        }
        if let Some(why) = &r.sweep_stopped {
            let _ = writeln!(o, "  ({why})");
        }
    }
    if !r.sweep.is_empty() && !emulated {
        o.push_str("\nOne GPU against every GPU (mean ms; ratio to one GPU)\n");
        let _ = writeln!(o, "  {:>6} {:>12} {:>12} {:>7} {:>12} {:>7}", "n", "one GPU", "(a) across", "ratio", "(b) NCCL", "ratio");
        for s in &r.sweep {
            let col = |t: Option<f64>| t.map_or(format!("{:>12} {:>7}", "-", "-"), |t| format!("{t:>12.4} {:>7.3}", t / s.one_gpu_ms));
            let _ = writeln!(o, "  {:>6} {:>12.4} {} {}", size(s.n), s.one_gpu_ms, col(s.across_ms), col(s.nccl_ms));
        }
        if let Some(why) = &r.sweep_stopped {
            let _ = writeln!(o, "  ({why})");
        }
        let _ = writeln!(o, "  (a): {}", crossover(r.crossover.across));
        if r.crossover.nccl.is_some() {
            let _ = writeln!(o, "  (b): {}", crossover(r.crossover.nccl));
        }
    }
    o.push('\n');
    checks::render(&mut o, &r.checks);
    o
}
