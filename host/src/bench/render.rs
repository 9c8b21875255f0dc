//! `bench` as text: times, bandwidths, ratios, the sweeps, and where each
//! target stands.

use super::paired::{self, PairedRatio, Verdict};
use super::{BenchReport, Point, Variant};
use std::fmt::Write;

fn find(r: &BenchReport, variant: Variant, n: u64) -> Option<&Point> {
    r.points.iter().find(|p| p.variant == variant && p.n == n)
}

fn sizes(r: &BenchReport) -> Vec<u64> {
    let mut sizes: Vec<u64> = r.points.iter().map(|p| p.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// Median time ratio `a / b` at `n`, by the queued (`to_completion` false) or waited timing.
fn ratio(r: &BenchReport, a: Variant, b: Variant, n: u64, to_completion: bool) -> Option<f64> {
    let t = |p: &Point| if to_completion { p.to_completion.median_ms } else { p.queued.median_ms };
    Some(t(find(r, a, n)?) / t(find(r, b, n)?))
}

const COLUMNS: [(Variant, &str); 11] = [
    (Variant::RustTwoLaunches, "Rust 2L"),
    (Variant::RustCooperative, "Rust coop"),
    (Variant::RustTwoLaunchesGraph, "Rust 2L-g"),
    (Variant::RustCooperativeGraph, "Rust co-g"),
    (Variant::RustFast, "Rust fast"),
    (Variant::CppTwoLaunches, "C++ 2L"),
    (Variant::CppCooperative, "C++ coop"),
    (Variant::CppTwoLaunchesGraph, "C++ 2L-g"),
    (Variant::CppCooperativeGraph, "C++ co-g"),
    (Variant::Cub, "CUB"),
    (Variant::Copy, "copy"),
];

fn time_table(o: &mut String, r: &BenchReport, to_completion: bool) {
    let _ = write!(o, "{:>10} {:>4} ", "n", "rot");
    for (_, h) in COLUMNS {
        let _ = write!(o, " {h:>9}");
    }
    o.push('\n');
    for n in sizes(r) {
        let rot = find(r, Variant::Copy, n).map_or(0, |p| p.rotate);
        let _ = write!(o, "{n:>10} {rot:>4} ");
        for (v, _) in COLUMNS {
            let us =
                find(r, v, n).map_or("-".to_string(), |p| format!("{:.1}", 1e3 * if to_completion { p.to_completion.median_ms } else { p.queued.median_ms }));
            let _ = write!(o, " {us:>9}");
        }
        o.push('\n');
    }
}

pub fn render(r: &BenchReport) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "Benchmark on {} ({}): median of {} runs after {} warm-ups, {} threads/block",
        r.device,
        r.driver.as_deref().unwrap_or("driver unknown"),
        r.runs,
        r.warmups,
        r.threads_per_block
    );
    let _ = writeln!(o, "C++ and CUB: {}\n", r.cpp);
    o.push_str("GPU time per sum, µs: runs queued behind a hold, then run back to back, CUDA events around each (rot = input buffers rotated)\n");
    time_table(&mut o, r, false);
    o.push_str("\nLaunch to completion, µs: the host waits for each run before launching the next\n");
    time_table(&mut o, r, true);

    o.push_str("\nRead bandwidth, GB/s (fraction of the copy's read + write bandwidth); time ratios, GPU time (to completion)\n");
    o.push_str("(Rust/C++: against the C++ program; Rust/nvcc, Rust/oxide: against nvcc's and cuda-oxide's kernels through this program's launch path)\n");
    let _ = writeln!(
        o,
        "{:>10}  {:>14} {:>14} {:>14} {:>10}  {:>16} {:>16} {:>12} {:>12} {:>12} {:>12} {:>10}",
        "n",
        "Rust coop",
        "Rust fast",
        "CUB",
        "copy r+w",
        "2L Rust/C++",
        "coop Rust/C++",
        "2L Rust/nvcc",
        "coop Rust/nvcc",
        "2L Rust/oxide",
        "coop Rust/oxi",
        "fast/CUB"
    );
    for n in sizes(r) {
        let bw = |v| find(r, v, n).map_or("-".into(), |p| format!("{:.0} ({:.2})", p.read_gb_s, p.of_copy.unwrap_or(f64::NAN)));
        let copy = find(r, Variant::Copy, n).map_or("-".into(), |p| format!("{:.0}", p.plotted_gb_s()));
        let both = |a, b| match (ratio(r, a, b, n, false), ratio(r, a, b, n, true)) {
            (Some(q), Some(w)) => format!("{q:.3} ({w:.3})"),
            _ => "-".into(),
        };
        let one = |a, b| ratio(r, a, b, n, false).map_or("-".into(), |x| format!("{x:.3}"));
        let _ = writeln!(
            o,
            "{n:>10}  {:>14} {:>14} {:>14} {:>10}  {:>16} {:>16} {:>12} {:>12} {:>12} {:>12} {:>10}",
            bw(Variant::RustCooperative),
            bw(Variant::RustFast),
            bw(Variant::Cub),
            copy,
            both(Variant::RustTwoLaunches, Variant::CppTwoLaunches),
            both(Variant::RustCooperative, Variant::CppCooperative),
            one(Variant::RustTwoLaunches, Variant::NvccKernelsTwoLaunches),
            one(Variant::RustCooperative, Variant::NvccKernelsCooperative),
            one(Variant::RustTwoLaunches, Variant::OxideKernelsTwoLaunches),
            one(Variant::RustCooperative, Variant::OxideKernelsCooperative),
            one(Variant::RustFast, Variant::Cub),
        );
    }
    let wrong: Vec<String> = r.points.iter().filter(|p| p.totals_ok == Some(false)).map(|p| format!("{} at n = {}", p.variant.label(), p.n)).collect();
    if wrong.is_empty() {
        o.push_str("\nEvery run's total (warm-ups included) was checked against the double reference: all within the bound.\n");
    } else {
        let _ = writeln!(o, "\nWRONG TOTALS: {}", wrong.join(", "));
    }

    if !r.grid_sweep.is_empty() {
        let _ = writeln!(o, "\nGPU time against grid size, n = {}", r.sweep_n);
        for s in &r.grid_sweep {
            let _ = writeln!(
                o,
                "  {:<24} {:>5} blocks x {:>4}   {:>8.1} µs  {:>6.0} GB/s",
                s.variant.label(),
                s.blocks,
                s.threads_per_block,
                s.queued.median_ms * 1e3,
                s.read_gb_s
            );
        }
        let _ = writeln!(o, "\nGPU time against block size, n = {} (grid: min(needed, cooperative maximum))", r.sweep_n);
        for s in &r.block_sweep {
            let _ = writeln!(
                o,
                "  {:<24} {:>5} blocks x {:>4}   {:>8.1} µs  {:>6.0} GB/s",
                s.variant.label(),
                s.blocks,
                s.threads_per_block,
                s.queued.median_ms * 1e3,
                s.read_gb_s
            );
        }
    }

    if let Some(first) = r.launch_costs.first() {
        let _ = writeln!(
            o,
            "\nTime per launch of an empty kernel, µs: host, held = {} launches queued while the GPU is held (the host's own cost, median of 7); GPU = {} launches queued behind a hold, between two events (the GPU's own cost, median of 7); back to back = {} launches on an idle GPU, host time to the last call's return and until the GPU has run them",
            super::launch_cost::HELD_LAUNCHES,
            super::launch_cost::GPU_LAUNCHES,
            first.launches
        );
        let _ = writeln!(o, "  {:<46} {:>11} {:>7}  {:>11} {:>7}  {:>9} {:>14}", "call", "kind", "blocks", "host, held", "GPU", "submit", "to finish");
        for c in &r.launch_costs {
            let kind = if c.cooperative { "cooperative" } else { "ordinary" };
            let _ =
                writeln!(o, "  {:<46} {:>11} {:>7}  {:>11.3} {:>7.3}  {:>9.3} {:>14.3}", c.path, kind, c.blocks, c.held_us, c.gpu_us, c.submit_us, c.total_us);
        }
    }

    if !r.barrier.is_empty() {
        o += &super::barrier::render(&r.barrier, r.barrier_nvidia.as_deref());
    }
    if let Some(c) = &r.clusters {
        o += &super::clusters::render(c);
    }
    o.push_str("\nTargets\n");
    for line in targets(r) {
        let _ = writeln!(o, "  {line}");
    }
    o
}

/// Where each target stands, one line each, judged on the paired rounds:
/// MET, MISSED or NOT RESOLVED, with the size that decides it.
pub fn targets(r: &BenchReport) -> Vec<String> {
    if r.paired.is_empty() {
        return vec!["not judged: no paired rounds (--rounds 0, or nothing to pair)".to_string()];
    }
    let mut names: Vec<&str> = Vec::new();
    for p in &r.paired {
        if !names.contains(&p.target_name.as_str()) {
            names.push(&p.target_name);
        }
    }
    let mut lines = Vec::new();
    for name in names {
        let of: Vec<&PairedRatio> = r.paired.iter().filter(|p| p.target_name == name).collect();
        let Some(verdict) = paired::overall(&of) else { continue };
        let wrong: Vec<u64> = of.iter().filter(|p| !p.totals_ok).map(|p| p.n).collect();
        // The size that decides it: a missed one, else the least resolved, else the worst median.
        let decides = of
            .iter()
            .filter(|p| p.verdict == verdict)
            .max_by(|a, b| (a.median - a.target).total_cmp(&(b.median - b.target)))
            .expect("the overall verdict is one of theirs");
        let mut line = format!("{}: {name} (", if wrong.is_empty() { verdict.word() } else { "WRONG TOTALS" });
        match verdict {
            Verdict::Met => line += &format!("worst: {} at n = {}", decides.summary(), decides.n),
            Verdict::Missed => {
                let missed: Vec<String> = of.iter().filter(|p| p.verdict == Verdict::Missed).map(|p| format!("{} at n = {}", p.summary(), p.n)).collect();
                line += &format!("missed at {}", missed.join("; "));
            }
            Verdict::NotResolved { rounds } => {
                line += &format!("{} at n = {} straddles {:.3}; about {rounds} rounds would resolve it", decides.summary(), decides.n, decides.target)
            }
        }
        if !wrong.is_empty() {
            line += &format!("; a total out of bounds at n = {wrong:?}");
        }
        line.push(')');
        lines.push(line);
    }
    lines
}
