//! The solver's benchmark: every path at every N, in rounds whose order
//! rotates, and the persistent kernel's ratio to each other path round by
//! round (`docs/schema/conjugate-gradient.schema.json` is its JSON).

use super::{OnChipRun, Path, Problem, Settings, Solver, Twin, reference, tridiagonal};
use crate::bench::paired::{interval, median};
use crate::device::Gpu;
use crate::error::{Error, Result};
use serde::Serialize;
use std::fmt::Write;

/// One path at one N.
#[derive(Clone, Debug, Serialize)]
pub struct PathTimes {
    pub path: Path,
    pub blocks: u32,
    /// Registers per thread of a persistent kernel (the driver's answer).
    pub registers_per_thread: Option<u32>,
    pub iterations: u32,
    /// Median milliseconds to solution.
    pub median_ms: f64,
    /// The median divided by the iterations, in microseconds.
    pub median_us_per_iteration: f64,
    /// Every timed round's milliseconds.
    pub rounds_ms: Vec<f64>,
    /// Threads per block of its launch.
    pub threads_per_block: u32,
    /// Where the on-chip path did not fit: why, and that the graph ran.
    pub fallback: Option<String>,
    /// The on-chip path: how it ran.
    pub on_chip: Option<OnChipRun>,
}

/// `of`'s time over `to`'s, round by round: the median and its 95% interval.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Ratio {
    pub of: Path,
    pub to: Path,
    pub median: f64,
    pub low: f64,
    pub high: f64,
}

/// One size of the benchmark.
#[derive(Clone, Debug, Serialize)]
pub struct BenchRow {
    pub n: usize,
    pub paths: Vec<PathTimes>,
    pub ratios: Vec<Ratio>,
    /// A device-to-device copy of the solver's five vectors (20 N bytes),
    /// median milliseconds queued back to back, in the same run: the
    /// memory's ceiling ([`COPY_RUNS`] runs after 3 warm-ups); none on the emulator.
    pub copy_ms: Option<f64>,
    /// Stored values per row of the matrix (3 tridiagonal, about 5 Poisson).
    pub values_per_row: f64,
}

/// Timed runs of the copy at each N.
pub const COPY_RUNS: usize = 20;

/// Bytes a persistent kernel moves per row per iteration past the matrix's:
/// for the three-barrier kernel p = r + beta p (read r, p, write p: 12),
/// the SpMV's p and Ap (8), and x += alpha p, r -= alpha Ap (read 4, write
/// 2 vectors: 24); for the fused kernels the SpMV's r and A r (8), then p,
/// s, x, r updated from r, w, p, s, x (read 5, write 4: 36). 44 either way:
/// the fused kernel saves a barrier, not bytes.
pub const VECTOR_BYTES_PER_ROW_ITERATION: f64 = 44.0;

/// Bytes per row per iteration with the matrix (4-byte offset, column and
/// value): 72 on the tridiagonal matrix (3 values a row), 88 on Poisson.
pub fn bytes_per_row_iteration(values_per_row: f64) -> f64 {
    4.0 + 8.0 * values_per_row + VECTOR_BYTES_PER_ROW_ITERATION
}

impl BenchRow {
    /// The fastest Rust persistent path at this N, by median.
    pub fn best_persistent(&self) -> Option<&PathTimes> {
        self.paths.iter().filter(|p| matches!(p.path, Path::Persistent | Path::Fused | Path::FusedResident)).min_by(|a, b| a.median_ms.total_cmp(&b.median_ms))
    }

    /// The memory bandwidth `path` reaches, over the copy's (read plus
    /// write), by [`bytes_per_row_iteration`]: for the kernels that stream
    /// every vector through device memory.
    pub fn of_copy(&self, path: &PathTimes) -> Option<f64> {
        let copy = self.copy_ms?;
        let moved = bytes_per_row_iteration(self.values_per_row) * self.n as f64 * path.iterations as f64 / path.median_ms;
        Some(moved / (2.0 * 20.0 * self.n as f64 / copy))
    }
}

impl BenchRow {
    /// The times of `path`, if it ran.
    pub fn path(&self, path: Path) -> Option<&PathTimes> {
        self.paths.iter().find(|p| p.path == path)
    }

    /// The ratio of `of` to `to`, if both ran.
    pub fn ratio(&self, of: Path, to: Path) -> Option<&Ratio> {
        self.ratios.iter().find(|r| r.of == of && r.to == to)
    }
}

/// The whole benchmark: `conjugate-gradient.json`, whose schema is
/// `docs/schema/conjugate-gradient.schema.json`.
#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    pub device: String,
    pub driver: Option<String>,
    pub rounds: u32,
    pub threads_per_block: u32,
    pub tolerance: f64,
    pub max_iterations: u32,
    pub matrix_seed: u64,
    /// Why the C++ twin is not in the rows, or null where it is.
    pub cpp_twin_left_out: Option<String>,
    pub rows: Vec<BenchRow>,
}

/// The ratios the benchmark reports: each persistent kernel against the
/// graph, the fused kernels against the three-barrier one, and each Rust
/// kernel against its C++ twin.
const RATIOS: [(Path, Path); 12] = [
    (Path::OnChip, Path::Graph),
    (Path::OnChipStencil, Path::Graph),
    (Path::OnChipStreamed, Path::Graph),
    (Path::OnChip, Path::Persistent),
    (Path::Persistent, Path::LaunchPerStep),
    (Path::Persistent, Path::Graph),
    (Path::Fused, Path::Graph),
    (Path::FusedResident, Path::Graph),
    (Path::Fused, Path::Persistent),
    (Path::Persistent, Path::CppTwin),
    (Path::Fused, Path::FusedCppTwin),
    (Path::FusedResident, Path::FusedResidentCppTwin),
];

/// Times each path (the Rust ones, and the C++ twin if given) at each `n`,
/// `rounds` rounds, the order of the paths rotating from round to round
/// (after one untimed solve of each). Every solve is checked against the
/// CPU's: a path that strays is an error, not a time.
pub fn bench(gpu: &Gpu, sizes: &[usize], rounds: usize, settings: Settings, twin: Option<&Twin>, progress: &mut dyn FnMut(&BenchRow)) -> Result<Vec<BenchRow>> {
    let twins = Path::TWINS.iter().filter(|_| twin.is_some()).map(|&(t, _)| t);
    let paths: Vec<Path> = Path::for_problem(settings.problem).into_iter().chain(twins).collect();
    let mut rows = Vec::new();
    for &n in sizes {
        let settings = match settings.problem {
            Problem::Tridiagonal => Settings { n, ..settings },
            Problem::Poisson => Settings { n, tolerance: super::POISSON_RELATIVE_TOLERANCE * n.isqrt() as f64, ..settings },
        }
        .checked(gpu.info.emulated)?;
        let a = match settings.problem {
            Problem::Tridiagonal => tridiagonal(n, settings.seed)?,
            Problem::Poisson => super::poisson(n.isqrt())?,
        };
        let reference = reference(&a, &settings);
        let mut solver = Solver::new(gpu, &a, settings, &[])?;
        if let Some(twin) = twin {
            solver.add_twin(twin)?;
        }
        let mut times = vec![Vec::new(); paths.len()];
        let mut solved = Vec::new();
        for round in 0..=rounds {
            for k in 0..paths.len() {
                let p = (round + k) % paths.len();
                let s = solver.solve(&a, paths[p])?;
                if !s.iterations_agree(&reference, settings.problem) || !s.converged(settings.tolerance) {
                    return Err(Error::BadSystem {
                        why: format!(
                            "at N = {n}, {} took {} iterations to residual {:.3e} (CPU: {})",
                            s.path.name(),
                            s.iterations,
                            s.residual,
                            reference.iterations
                        ),
                    });
                }
                if round > 0 {
                    times[p].push(s.ms);
                } else {
                    solved.push(s);
                }
            }
        }
        let paths_times: Vec<PathTimes> = paths
            .iter()
            .zip(&times)
            .map(|(&path, rounds_ms)| {
                let s = solved.iter().find(|s| s.path == path).expect("every path was solved in the untimed round");
                let median_ms = median(rounds_ms);
                PathTimes {
                    path,
                    blocks: s.blocks,
                    registers_per_thread: s.registers_per_thread,
                    iterations: s.iterations,
                    median_ms,
                    median_us_per_iteration: median_ms * 1e3 / s.iterations.max(1) as f64,
                    rounds_ms: rounds_ms.clone(),
                    threads_per_block: s.threads_per_block,
                    fallback: s.fallback.clone(),
                    on_chip: s.on_chip.clone(),
                }
            })
            .collect();
        let at = |path: Path| paths.iter().position(|&p| p == path);
        let ratios = RATIOS
            .iter()
            .filter_map(|&(of, to)| {
                let (a, b) = (at(of)?, at(to)?);
                let (median, low, high) = interval(&times[a].iter().zip(&times[b]).map(|(x, y)| x / y).collect::<Vec<_>>());
                Some(Ratio { of, to, median, low, high })
            })
            .collect();
        let copy_ms = if gpu.info.emulated {
            None
        } else {
            let src = gpu.zeros::<f32>(5 * n)?;
            let mut dst = gpu.zeros::<f32>(5 * n)?;
            let t = crate::timing::time_runs(gpu, crate::timing::Repeats { warmups: 3, runs: COPY_RUNS }, &mut |_| Ok(gpu.copy(&src.slice(..), &mut dst)?))?;
            t.gpu_queued.map(|s| s.median_ms)
        };
        let row = BenchRow { n, paths: paths_times, ratios, copy_ms, values_per_row: a.row_count_values() as f64 / n as f64 };
        progress(&row);
        rows.push(row);
    }
    Ok(rows)
}

/// The benchmark as tables: milliseconds to solution per path, microseconds
/// per iteration, then the ratios.
pub fn render_bench(device: &str, rows: &[BenchRow]) -> String {
    let mut o = String::new();
    let Some(first) = rows.first() else { return o };
    let _ = writeln!(o, "Conjugate gradient on {device}: milliseconds to solution (median over the rounds)");
    per_path(&mut o, rows, |p| format!("{:.4}", p.median_ms), true);
    let _ = writeln!(o);
    let _ = writeln!(o, "Microseconds per iteration (the median time to solution over the iterations)");
    per_path(&mut o, rows, |p| format!("{:.2}", p.median_us_per_iteration), false);
    let regs: Vec<String> = first.paths.iter().filter_map(|p| p.registers_per_thread.map(|k| format!("{} {k}", short(p.path)))).collect();
    if !regs.is_empty() {
        let _ = write!(o, "registers per thread: {}; ", regs.join(", "));
    }
    let _ = writeln!(o, "grid.sync() per iteration: 3 in the persistent kernel and its twin, 2 in the fused ones");
    let _ = writeln!(o);
    let _ = writeln!(o, "Ratios of time to solution, round by round: median [95% interval]; below 1 the first is faster");
    let _ = write!(o, "{:>9}", "N");
    for r in &first.ratios {
        let _ = write!(o, " {:>30}", format!("{} / {}", short(r.of), short(r.to)));
    }
    let _ = writeln!(o);
    for row in rows {
        let _ = write!(o, "{:>9}", row.n);
        for r in &row.ratios {
            let _ = write!(o, " {:>30}", format!("{:.3} [{:.3}, {:.3}]", r.median, r.low, r.high));
        }
        let _ = writeln!(o);
    }
    let _ = writeln!(o);
    o.push_str(&verdicts(rows));
    o
}

/// Whether a ratio's interval is at most `limit` (met), above it (missed),
/// or straddles it (inside the noise: neither).
fn against(r: &Ratio, limit: f64) -> &'static str {
    if r.high <= limit {
        "met"
    } else if r.low > limit {
        "MISSED"
    } else {
        "inside the noise"
    }
}

/// The targets, N by N: the best persistent path at most the graph's time
/// everywhere, and 1.5x faster up to 2^16; each Rust kernel at most its C++
/// twin's time; the best persistent path's bandwidth against the copy's.
pub fn verdicts(rows: &[BenchRow]) -> String {
    let mut o = String::from("Targets (a ratio is met when its whole 95% interval is within the target)\n");
    let _ = writeln!(o, "{:>9} {:>11} {:>34} {:>34} {:>14}", "N", "best", "best / graph <= 1.00", "<= 0.667 (1.5x) up to 2^16", "of the copy");
    for row in rows {
        let Some(best) = row.best_persistent() else { continue };
        let ratio = row.ratio(best.path, Path::Graph);
        let show = |limit: f64| ratio.map_or("-".to_string(), |r| format!("{:.3} [{:.3}, {:.3}] {}", r.median, r.low, r.high, against(r, limit)));
        let fast = if row.n <= 1 << 16 { show(1.0 / 1.5) } else { String::new() };
        // Below 2^20 the copy is too short to measure the memory's ceiling.
        let copy = row.of_copy(best).filter(|_| row.n >= 1 << 20).map_or(String::new(), |f| format!("{:.0}%", 100.0 * f));
        let _ = writeln!(o, "{:>9} {:>11} {:>34} {:>34} {:>14}", row.n, short(best.path), show(1.0), fast, copy);
    }
    for path in [Path::OnChip, Path::OnChipStencil, Path::OnChipStreamed] {
        for row in rows {
            let Some(t) = row.path(path) else { continue };
            let (limit, label) = if row.n <= 1 << 18 {
                (0.2, "<= 0.20 (1/5)")
            } else if row.n <= 1 << 20 {
                (1.0 / 3.0, "<= 0.333 (1/3)")
            } else {
                (1.0, "<= 1.00")
            };
            let verdict = match (&t.fallback, row.ratio(path, Path::Graph)) {
                (Some(_), _) => "does not fit on the chip: the graph solved it (ratio 1 by construction)".to_string(),
                (None, Some(r)) => format!("{:.3} [{:.3}, {:.3}] {label}: {}", r.median, r.low, r.high, against(r, limit)),
                (None, None) => "-".to_string(),
            };
            let detail = t.on_chip.as_ref().map_or(String::new(), |c| {
                format!(
                    "; {}, {} x {} threads, {} KiB shared, {:.1} bytes off chip a row an iteration, {} restarts",
                    c.plan.source.name(),
                    c.plan.blocks,
                    c.plan.threads_per_block,
                    c.plan.shared_bytes.div_ceil(1024),
                    c.bytes_off_chip_per_iteration / row.n as f64,
                    c.restarts
                )
            });
            let _ = writeln!(o, "{} / graph at 2^{}: {verdict}{detail}", short(path), row.n.ilog2());
        }
    }
    for (twin, rust) in Path::TWINS {
        let cells: Vec<String> =
            rows.iter().filter_map(|row| row.ratio(rust, twin).map(|r| format!("2^{} {:.3} {}", row.n.ilog2(), r.median, against(r, 1.0)))).collect();
        if !cells.is_empty() {
            let _ = writeln!(o, "{} / {} <= 1.00: {}", short(rust), short(twin), cells.join(", "));
        }
    }
    if let Some(last) = rows.last()
        && let Some(best) = last.best_persistent()
        && let Some(f) = last.of_copy(best)
    {
        let _ = writeln!(
            o,
            "at N = {}: {} moves {:.0}% of the copy's bandwidth ({} bytes a row an iteration): the target, 85%, {}",
            last.n,
            short(best.path),
            100.0 * f,
            bytes_per_row_iteration(last.values_per_row),
            if f >= 0.85 { "met" } else { "MISSED" }
        );
    }
    o
}

/// A table of one figure per path and N, with the persistent kernel's
/// iterations (and its blocks, if `blocks`).
fn per_path(o: &mut String, rows: &[BenchRow], figure: impl Fn(&PathTimes) -> String, blocks: bool) {
    let persistent = |r: &BenchRow| r.path(Path::Persistent).map_or((0, 0), |p| (p.iterations, p.blocks));
    let _ = write!(o, "{:>9} {:>6}", "N", "iters");
    for p in rows.first().map_or(&[][..], |r| &r.paths) {
        let _ = write!(o, " {:>14}", short(p.path));
    }
    let _ = writeln!(o, "{}", if blocks { format!(" {:>8}", "blocks") } else { String::new() });
    for r in rows {
        let _ = write!(o, "{:>9} {:>6}", r.n, persistent(r).0);
        for p in &r.paths {
            let _ = write!(o, " {:>14}", figure(p));
        }
        let _ = writeln!(o, "{}", if blocks { format!(" {:>8}", persistent(r).1) } else { String::new() });
    }
}

/// A path's name in a table's heading.
fn short(p: Path) -> &'static str {
    match p {
        Path::LaunchPerStep => "per step",
        Path::Graph => "graph",
        Path::Persistent => "persistent",
        Path::CppTwin => "C++ twin",
        Path::Fused => "fused",
        Path::FusedResident => "resident",
        Path::FusedCppTwin => "fused C++",
        Path::FusedResidentCppTwin => "resident C++",
        Path::OnChip => "on chip",
        Path::OnChipStencil => "stencil",
        Path::OnChipStreamed => "streamed",
    }
}

/// The benchmark's picture: milliseconds to solution against N, one line per path.
pub fn svg(device: &str, rows: &[BenchRow], path: &std::path::Path) -> Result<()> {
    use plotters::prelude::*;
    let io = |e: String| Error::Io { path: path.display().to_string(), error: std::io::Error::other(e) };
    let (t0, t1) = rows.iter().flat_map(|r| r.paths.iter().map(|p| p.median_ms)).fold((f64::MAX, 0.0f64), |(a, b), t| (a.min(t), b.max(t)));
    let (x0, x1) = (rows.first().map_or(10.0, |r| (r.n as f64).log2()), rows.last().map_or(24.0, |r| (r.n as f64).log2()));
    let root = SVGBackend::new(path, (900, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| io(e.to_string()))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("Conjugate gradient to 1e-5 on {device}: time to solution"), ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, (t0 * 0.8..t1 * 1.25).log_scale())
        .map_err(|e| io(e.to_string()))?;
    chart
        .configure_mesh()
        .x_desc("N (rows)")
        .y_desc("ms to solution (median)")
        .x_label_formatter(&|x| format!("2^{x:.0}"))
        .draw()
        .map_err(|e| io(e.to_string()))?;
    let colours = [
        RGBColor(213, 94, 0),
        RGBColor(0, 114, 178),
        RGBColor(0, 0, 0),
        RGBColor(0, 158, 115),
        RGBColor(204, 121, 167),
        RGBColor(230, 159, 0),
        RGBColor(86, 180, 233),
        RGBColor(120, 120, 120),
        RGBColor(180, 0, 180),
        RGBColor(0, 180, 180),
        RGBColor(150, 150, 0),
    ];
    let all = [
        Path::LaunchPerStep,
        Path::Graph,
        Path::Persistent,
        Path::CppTwin,
        Path::Fused,
        Path::FusedResident,
        Path::FusedCppTwin,
        Path::FusedResidentCppTwin,
        Path::OnChip,
        Path::OnChipStencil,
        Path::OnChipStreamed,
    ];
    for (k, &p) in all.iter().enumerate() {
        let points: Vec<(f64, f64)> = rows.iter().filter_map(|r| Some(((r.n as f64).log2(), r.path(p)?.median_ms))).collect();
        if points.is_empty() {
            continue;
        }
        let c = colours[k];
        chart
            .draw_series(LineSeries::new(points.clone(), c.stroke_width(2)))
            .map_err(|e| io(e.to_string()))?
            .label(p.name())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        chart.draw_series(points.into_iter().map(|xy| Circle::new(xy, 3, c.filled()))).map_err(|e| io(e.to_string()))?;
    }
    chart.configure_series_labels().background_style(WHITE).border_style(BLACK).draw().map_err(|e| io(e.to_string()))?;
    root.present().map_err(|e| io(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(path: Path, median_ms: f64) -> PathTimes {
        PathTimes {
            path,
            blocks: 4,
            registers_per_thread: None,
            iterations: 6,
            median_ms,
            median_us_per_iteration: median_ms * 1e3 / 6.0,
            rounds_ms: vec![median_ms],
            threads_per_block: 256,
            fallback: None,
            on_chip: None,
        }
    }

    #[test]
    fn the_tables_show_each_path_its_time_per_iteration_and_each_ratio_with_its_interval() {
        let row = |twin: bool| BenchRow {
            n: 1024,
            paths: [times(Path::LaunchPerStep, 0.2), times(Path::Graph, 0.072), times(Path::Persistent, 0.054)]
                .into_iter()
                .chain(twin.then(|| times(Path::CppTwin, 0.053)))
                .collect(),
            ratios: vec![Ratio { of: Path::Persistent, to: Path::Graph, median: 0.746, low: 0.739, high: 0.756 }],
            copy_ms: None,
            values_per_row: 3.0,
        };
        let text = render_bench("H200", &[row(true)]);
        assert!(text.contains("C++ twin") && text.contains("persistent / graph") && text.contains("0.746 [0.739, 0.756]"), "{text}");
        assert!(text.contains("Microseconds per iteration") && text.contains("9.00"), "54 µs over 6 iterations: {text}");
        assert!(!render_bench("H200", &[row(false)]).contains("C++ twin"));
        assert!(render_bench("H200", &[]).is_empty());
    }
}
