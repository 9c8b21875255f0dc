//! `bench` as text: times, bandwidths, the sweeps, and where the targets stand.

use super::{BenchReport, COPY, Point};
use std::fmt::Write;

fn find<'a>(r: &'a BenchReport, variant: &str, n: u64) -> Option<&'a Point> {
    r.points.iter().find(|p| p.variant == variant && p.n == n)
}

/// Median time in microseconds, or a dash.
fn us(p: Option<&Point>) -> String {
    p.map_or("-".into(), |p| format!("{:.1}", p.stats.median_ms * 1e3))
}

pub fn render(r: &BenchReport) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "Benchmark on {}: median of {} runs after {} warm-ups, CUDA events, {} threads/block", r.device, r.runs, r.warmups, r.threads);
    let _ = writeln!(o, "C++ and CUB: {}\n", r.cpp);
    let mut sizes: Vec<u64> = r.points.iter().map(|p| p.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let cols = ["rust two launches", "rust cooperative", "rust fast cooperative", "cpp-two-launches", "cpp-cooperative", "cub-device-reduce", COPY];
    o.push_str("Median time, µs (rot = input buffers rotated)\n");
    let _ = writeln!(o, "{:>10} {:>4}  {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}", "n", "rot", "rust 2L", "rust coop", "rust fast", "C++ 2L", "C++ coop", "CUB", "copy");
    for &n in &sizes {
        let rot = find(r, COPY, n).map_or(0, |p| p.rotate);
        let _ = write!(o, "{n:>10} {rot:>4} ");
        for c in cols {
            let _ = write!(o, " {:>9}", us(find(r, c, n)));
        }
        o.push('\n');
    }
    o.push_str("\nRead bandwidth, GB/s, and fraction of the copy's read + write bandwidth; Rust / C++ time\n");
    o.push_str("(rs/c++: against the C++ program; same: against nvcc's kernels launched by this program, in the same process, right after Rust's at each size)\n");
    let _ = writeln!(
        o,
        "{:>10}  {:>16} {:>16} {:>16} {:>16} {:>10} {:>10} {:>10} {:>10}",
        "n", "rust coop", "rust fast", "CUB", "copy (r+w)", "2L rs/c++", "coop rs/c++", "2L same", "coop same"
    );
    for &n in &sizes {
        let bw = |v: &str| find(r, v, n).map_or("-".into(), |p| format!("{:.0} ({:.2})", p.read_gb_s, p.of_copy.unwrap_or(f64::NAN)));
        let copy = find(r, COPY, n).map_or("-".into(), |p| format!("{:.0}", p.plotted_gb_s()));
        let ratio = |a: &str, b: &str| match (find(r, a, n), find(r, b, n)) {
            (Some(a), Some(b)) => format!("{:.3}", a.stats.median_ms / b.stats.median_ms),
            _ => "-".into(),
        };
        let _ = writeln!(
            o,
            "{n:>10}  {:>16} {:>16} {:>16} {:>16} {:>10} {:>10} {:>10} {:>10}",
            bw("rust cooperative"),
            bw("rust fast cooperative"),
            bw("cub-device-reduce"),
            copy,
            ratio("rust two launches", "cpp-two-launches"),
            ratio("rust cooperative", "cpp-cooperative"),
            ratio("rust two launches", super::CPP_IN_RUST_TWO),
            ratio("rust cooperative", super::CPP_IN_RUST_COOP)
        );
    }
    let wrong: Vec<String> = r.points.iter().filter(|p| p.sum_ok == Some(false)).map(|p| format!("{} at n = {}", p.variant, p.n)).collect();
    if wrong.is_empty() {
        o.push_str("\nEvery timed total was checked against the double reference: all within the bound.\n");
    } else {
        let _ = writeln!(o, "\nWRONG TOTALS: {}", wrong.join(", "));
    }

    if !r.grid_sweep.is_empty() {
        let _ = writeln!(o, "\nTime against grid size, n = {}", r.sweep_n);
        for s in &r.grid_sweep {
            let _ = writeln!(o, "  {:<22} {:>5} blocks x {:>4}   {:>8.1} µs  {:>6.0} GB/s", s.variant, s.blocks, s.threads, s.stats.median_ms * 1e3, s.read_gb_s);
        }
        let _ = writeln!(o, "\nTime against block size, n = {} (grid: min(needed, cooperative maximum))", r.sweep_n);
        for s in &r.block_sweep {
            let _ = writeln!(o, "  {:<22} {:>5} blocks x {:>4}   {:>8.1} µs  {:>6.0} GB/s", s.variant, s.blocks, s.threads, s.stats.median_ms * 1e3, s.read_gb_s);
        }
    }

    o.push_str("\nTargets\n");
    for line in targets(r, &sizes) {
        let _ = writeln!(o, "  {line}");
    }
    let _ = writeln!(o, "\nplot: {}", r.plot);
    o
}

/// Where each of the targets stands, one line each.
pub fn targets(r: &BenchReport, sizes: &[u64]) -> Vec<String> {
    let mut lines = Vec::new();
    for (rust, cpp) in [
        ("rust two launches", "cpp-two-launches"),
        ("rust cooperative", "cpp-cooperative"),
        ("rust two launches", super::CPP_IN_RUST_TWO),
        ("rust cooperative", super::CPP_IN_RUST_COOP),
    ] {
        let ratios: Vec<(u64, f64)> = sizes
            .iter()
            .filter_map(|&n| Some((n, find(r, rust, n)?.stats.median_ms / find(r, cpp, n)?.stats.median_ms)))
            .collect();
        if let Some(&(n, worst)) = ratios.iter().max_by(|a, b| (a.1 - 1.0).abs().total_cmp(&(b.1 - 1.0).abs())) {
            let met = ratios.iter().all(|(_, x)| (x - 1.0).abs() <= 0.05);
            lines.push(format!("{}: {rust} within ±5% of {cpp} at every size (worst {worst:.3} at n = {n})", if met { "MET" } else { "MISSED" }));
        }
    }
    for n in [1u64 << 26, 1 << 28] {
        if let Some(p) = find(r, "rust fast cooperative", n) {
            let f = p.of_copy.unwrap_or(0.0);
            lines.push(format!("{}: fast sum at n = 2^{} reads at {f:.3} x the copy's read+write bandwidth (target 0.96)", if f >= 0.96 { "MET" } else { "MISSED" }, n.trailing_zeros()));
        }
    }
    let vs_cub: Vec<(u64, f64)> = sizes
        .iter()
        .filter(|&&n| (1 << 10..=1 << 24).contains(&n))
        .filter_map(|&n| Some((n, find(r, "rust fast cooperative", n)?.stats.median_ms / find(r, "cub-device-reduce", n)?.stats.median_ms)))
        .collect();
    if !vs_cub.is_empty() {
        let slower: Vec<String> = vs_cub.iter().filter(|(_, x)| *x >= 1.0).map(|(n, x)| format!("n = {n}: {x:.2}")).collect();
        let met = slower.is_empty();
        lines.push(format!(
            "{}: fast sum faster than CUB at every n from 2^10 to 2^24{}",
            if met { "MET" } else { "MISSED" },
            if met { String::new() } else { format!(" (time ratio >= 1 at {})", slower.join(", ")) }
        ));
    }
    lines
}
