//! The sum with a cluster stage against its C++ twin (`bench --only-clusters`,
//! and part of every `bench` on compute capability 9.0): `reduce_cluster_grid`
//! and nvcc's `reduceClusterGrid` (`host/cpp/cluster.cu`), launched through the
//! same launch path on the same grid (clusters of 4), timed in paired,
//! alternating rounds with every total checked. Beside them, without a
//! target: the lesson's cooperative sum on its own grid, and one
//! `cluster.sync()` against one `grid.sync()`.

use super::cpp;
use super::paired::{PairedRatio, a_first};
use crate::clusters::{ClusterPath, ClusterScratch, ClusterSums, LESSON_CLUSTER, cluster_sync_cost};
use crate::device::Gpu;
use crate::error::Result;
use crate::launch::DeviceInput;
use crate::reference::{self, Reference};
use crate::sums::{Path, Sums};
use crate::timing::{Repeats, Stats, time_path};
use serde::Serialize;
use std::fmt::Write;

/// Rust / C++ at most this at every n (issue #29).
pub const TARGET: f64 = 1.03;

/// The sizes: 2^10 to 2^28 by fours, and the lesson's n.
pub fn sizes(max_log2: u32) -> Vec<u64> {
    let mut s: Vec<u64> = (10..=max_log2.min(28)).step_by(2).map(|k| 1u64 << k).collect();
    s.push(4_194_915);
    s.sort_unstable();
    s
}

/// One size.
#[derive(Clone, Debug, Serialize)]
pub struct ClusterRow {
    pub n: u64,
    pub blocks: u32,
    pub cluster: u32,
    /// Median of the per-round medians, GPU time (ms).
    pub rust_ms: f64,
    pub cpp_ms: Option<f64>,
    /// The lesson's cooperative sum, on its own grid (median, ms).
    pub cooperative_ms: f64,
    pub cooperative_blocks: u32,
    /// Rust cluster / C++ cluster, paired rounds, judged against [`TARGET`].
    pub ratio: Option<PairedRatio>,
    /// Every total of every timed run was within its bound.
    pub totals_ok: bool,
}

/// The whole comparison.
#[derive(Clone, Debug, Serialize)]
pub struct ClusterBench {
    pub rows: Vec<ClusterRow>,
    /// One `cluster.sync()` and one `grid.sync()` on the cluster ceiling's grid, µs.
    pub cluster_sync_us: f64,
    pub grid_sync_us: f64,
    pub barrier_blocks: u32,
    /// Why the C++ twin was not measured, where it was not.
    pub why_no_cpp: Option<String>,
}

/// One variant's per-round timing: the median of `repeats.runs` queued runs (ms), and whether every total was right.
fn time_one(sums: &ClusterSums, blocks: u32, input: &DeviceInput, s: &mut ClusterScratch, r: &Reference, repeats: Repeats) -> Result<(f64, bool)> {
    let t = sums.time(ClusterPath::OneLaunch, blocks, LESSON_CLUSTER, input, r, s, repeats)?;
    Ok((t.timing.primary().map_or(f64::NAN, |s| s.median_ms), t.wrong_totals == 0))
}

/// Runs the comparison: `rounds` paired rounds of `round_runs` runs per size.
pub fn run(gpu: &Gpu, threads_per_block: u32, max_log2: u32, rounds: usize, round_runs: usize) -> Result<ClusterBench> {
    let built = cpp::build_cluster();
    let module = built.as_ref().ok().map(|b| gpu.load_module_file(&b.cubin)).transpose()?;
    let ours = ClusterSums::load(gpu, threads_per_block)?;
    // SAFETY: reduceClusterGrid is the C++ twin: the same parameters, shared
    // memory (oneFloatPerTileAndTheBlockTotal) and contract.
    let theirs = module.as_ref().map(|m| unsafe { ClusterSums::load_foreign(gpu, threads_per_block, m, cpp::CLUSTER_KERNEL) }).transpose()?;
    let lesson = Sums::load(gpu, threads_per_block)?;
    let repeats = Repeats { warmups: 3, runs: round_runs };
    let mut rows = Vec::new();
    for n in sizes(max_log2) {
        let xs = reference::fill(n as usize)?;
        let r = Reference::new(&xs);
        let input = DeviceInput::upload(gpu, &xs)?;
        let blocks = ours.grid(n as usize, LESSON_CLUSTER)?;
        let (mut s_ours, mut s_theirs) = (ours.scratch(blocks, repeats.slots())?, ours.scratch(blocks, repeats.slots())?);
        let (mut a, mut b, mut ratios, mut ok) = (Vec::new(), Vec::new(), Vec::new(), true);
        for round in 0..rounds.max(1) {
            let mut rust = || time_one(&ours, blocks, &input, &mut s_ours, &r, repeats);
            let Some(theirs) = &theirs else {
                let (ms, good) = rust()?;
                a.push(ms);
                ok &= good;
                continue;
            };
            let mut cpp = || time_one(theirs, blocks, &input, &mut s_theirs, &r, repeats);
            let ((ra, ga), (rb, gb)) = if a_first(round) {
                let x = rust()?;
                (x, cpp()?)
            } else {
                let y = cpp()?;
                (rust()?, y)
            };
            a.push(ra);
            b.push(rb);
            ratios.push(ra / rb);
            ok &= ga && gb;
        }
        let grid = lesson.grid(n as usize);
        let mut scratch = lesson.scratch(grid, Repeats { warmups: 3, runs: round_runs.max(10) }.slots())?;
        let co = time_path(&lesson, Path::Cooperative, grid, std::slice::from_ref(&input), &mut scratch, &r, Repeats { warmups: 3, runs: round_runs.max(10) })?;
        ok &= co.wrong_totals == 0;
        let ratio = (!ratios.is_empty()).then(|| {
            let mut p = PairedRatio::new("Rust cluster sum / C++ cluster sum", "rust cluster", "c++ cluster", n, TARGET, ratios);
            p.totals_ok = ok;
            p
        });
        rows.push(ClusterRow {
            n,
            blocks,
            cluster: LESSON_CLUSTER.blocks,
            rust_ms: Stats::of(&a).map_or(f64::NAN, |s| s.median_ms),
            cpp_ms: Stats::of(&b).map(|s| s.median_ms),
            cooperative_ms: co.timing.primary().map_or(f64::NAN, |s| s.median_ms),
            cooperative_blocks: grid,
            ratio,
            totals_ok: ok,
        });
    }
    let barrier_blocks = ours.limits(LESSON_CLUSTER)?.capacity();
    let cluster_sync_us = cluster_sync_cost(gpu, barrier_blocks, threads_per_block, LESSON_CLUSTER)?;
    let grid_sync_us = crate::timing::barrier_cost(gpu, barrier_blocks, threads_per_block, None, None)?.grid_sync_us;
    Ok(ClusterBench { rows, cluster_sync_us, grid_sync_us, barrier_blocks, why_no_cpp: built.err() })
}

/// The comparison as text.
pub fn render(c: &ClusterBench) -> String {
    let mut o = String::from("\nThe sum with a cluster stage (clusters of 4, one cooperative launch) against its C++ twin, GPU time, paired rounds\n");
    let _ = writeln!(
        o,
        "  {:>11} {:>6} {:>10} {:>10}  {:<40} {:>12} {:>10}",
        "n", "blocks", "Rust ms", "C++ ms", "Rust / C++ (target <= 1.03)", "cooperative", "cl / coop"
    );
    for r in &c.rows {
        let cpp = r.cpp_ms.map_or("-".to_string(), |m| format!("{m:.4}"));
        let ratio = r.ratio.as_ref().map_or("-".to_string(), |p| format!("{} {}", p.summary(), p.verdict.word()));
        let _ = writeln!(
            o,
            "  {:>11} {:>6} {:>10.4} {:>10}  {:<40} {:>12.4} {:>10.3}{}",
            r.n,
            r.blocks,
            r.rust_ms,
            cpp,
            ratio,
            r.cooperative_ms,
            r.rust_ms / r.cooperative_ms,
            if r.totals_ok { "" } else { "  (a total outside its bound)" }
        );
    }
    let _ = writeln!(
        o,
        "  one cluster.sync(): {:.3} µs; one grid.sync(): {:.3} µs (both on {} blocks; no target)",
        c.cluster_sync_us, c.grid_sync_us, c.barrier_blocks
    );
    if let Some(why) = &c.why_no_cpp {
        let _ = writeln!(o, "  (the C++ twin not measured: {why})");
    }
    o
}
