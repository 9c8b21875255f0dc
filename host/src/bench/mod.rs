//! `cg-lesson bench`: the lesson's sums, the fast cooperative sum, a
//! device-to-device copy (the memory ceiling) and, where `nvcc` is on PATH,
//! the same kernels in C++ (`host/cpp`) and CUB's `DeviceReduce::Sum`, swept
//! over n in one run. Every run's total is checked; both timing methods
//! (see [`crate::timing`]) are recorded for every point.

pub mod barrier;
pub mod clusters;
pub(crate) mod cpp;
pub mod launch_cost;
pub mod paired;
mod peer;
pub mod plot;
mod render;
mod rounds;

pub use render::{render, targets};

use crate::device::Gpu;
use crate::error::Result;
use crate::launch::{DeviceInput, Input, Window, device_bytes};
use crate::progress::Progress;
use crate::reference::{self, Reference};
use crate::sums::{Path, Scratch, Sums};
use crate::timing::{Repeats, Stats, Timing, time_path, time_runs, warm_clocks};
use serde::Serialize;

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    pub sizes: Vec<u64>,
    pub runs: usize,
    pub warmups: usize,
    /// Copies of the input, back to back in one allocation, to rotate among;
    /// `None` picks enough to overflow the L2.
    pub rotate: Option<usize>,
    pub threads_per_block: u32,
    pub cpp: bool,
    pub sweeps: bool,
    /// cuda-oxide's PTX of the lesson's kernels, to time beside them.
    pub oxide: Option<std::path::PathBuf>,
    /// Paired rounds for the ratio targets (0: no targets judged).
    pub rounds: usize,
    /// Timed runs and warm-ups of each variant in each round.
    pub round_runs: usize,
    pub round_warmups: usize,
    /// Compare the sum with a cluster stage with its C++ twin (compute capability 9.0+).
    pub clusters: bool,
}

impl BenchConfig {
    /// The warm-ups and timed runs of every point.
    pub fn repeats(&self) -> Repeats {
        Repeats { warmups: self.warmups, runs: self.runs }
    }

    /// The warm-ups and timed runs of each variant in each paired round.
    pub fn round_repeats(&self) -> Repeats {
        Repeats { warmups: self.round_warmups, runs: self.round_runs }
    }
}

/// The sweep's sizes: 2^min_log2 to 2^max_log2, and the lesson's 4,194,915 where it falls inside.
pub fn default_sizes(min_log2: u32, max_log2: u32) -> Vec<u64> {
    let mut sizes: Vec<u64> = (min_log2..=max_log2).map(|k| 1u64 << k).collect();
    if min_log2 <= 22 && max_log2 >= 23 {
        sizes.push(4_194_915);
    }
    sizes.sort_unstable();
    sizes
}

/// Buffers to rotate among so that one pass over all of them is at least
/// twice the L2 (at most 256, at least 1).
pub fn auto_rotate(n: u64, l2_bytes: u64) -> usize {
    let bytes = (n * 4).max(1);
    (2 * l2_bytes).div_ceil(bytes).clamp(1, 256) as usize
}

/// Bytes read per second, in GB/s, for `n` floats in `ms` milliseconds.
pub fn read_gb_s(n: u64, ms: f64) -> f64 {
    n as f64 * 4.0 / (ms * 1e-3) / 1e9
}

/// What was timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    RustTwoLaunches,
    RustCooperative,
    RustTwoLaunchesGraph,
    RustCooperativeGraph,
    RustFast,
    RustFastCooperative,
    RustSingleBlock,
    RustFastLastBlock,
    CppTwoLaunches,
    CppCooperative,
    CppTwoLaunchesGraph,
    CppCooperativeGraph,
    Cub,
    /// nvcc's build of the lesson's kernels, launched through this program's launch path.
    NvccKernelsTwoLaunches,
    NvccKernelsCooperative,
    /// NVlabs cuda-oxide's build of the lesson's kernels (`--oxide`), launched through this program's launch path.
    OxideKernelsTwoLaunches,
    OxideKernelsCooperative,
    Copy,
}

impl Variant {
    /// The name in tables, the plot's legend and the JSON (`variant_label`).
    pub fn label(self) -> &'static str {
        match self {
            Variant::RustTwoLaunches => "Rust, two launches",
            Variant::RustCooperative => "Rust, cooperative",
            Variant::RustTwoLaunchesGraph => "Rust, two launches in a graph",
            Variant::RustCooperativeGraph => "Rust, cooperative in a graph",
            Variant::RustFast => "Rust, fast (chosen per n)",
            Variant::RustFastCooperative => "Rust, fast: one cooperative launch",
            Variant::RustSingleBlock => "Rust, fast: one block",
            Variant::RustFastLastBlock => "Rust, fast: last block adds up",
            Variant::CppTwoLaunches => "C++, two launches",
            Variant::CppCooperative => "C++, cooperative",
            Variant::CppTwoLaunchesGraph => "C++, two launches in a graph",
            Variant::CppCooperativeGraph => "C++, cooperative in a graph",
            Variant::Cub => "CUB DeviceReduce::Sum",
            Variant::NvccKernelsTwoLaunches => "C++ kernels, Rust launch: two launches",
            Variant::NvccKernelsCooperative => "C++ kernels, Rust launch: cooperative",
            Variant::OxideKernelsTwoLaunches => "cuda-oxide kernels, Rust launch: two launches",
            Variant::OxideKernelsCooperative => "cuda-oxide kernels, Rust launch: cooperative",
            Variant::Copy => "copy (device to device)",
        }
    }

    fn of_path(path: Path) -> Variant {
        match path {
            Path::TwoLaunches => Variant::RustTwoLaunches,
            Path::Cooperative => Variant::RustCooperative,
            Path::TwoLaunchesGraph => Variant::RustTwoLaunchesGraph,
            Path::CooperativeGraph => Variant::RustCooperativeGraph,
            Path::Fast => Variant::RustFast,
            Path::FastCooperative => Variant::RustFastCooperative,
            Path::SingleBlock => Variant::RustSingleBlock,
            Path::FastLastBlock => Variant::RustFastLastBlock,
        }
    }
}

/// One variant at one size.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    pub variant: Variant,
    pub variant_label: &'static str,
    pub n: u64,
    pub rotate: usize,
    pub blocks: u32,
    pub threads_per_block: u32,
    /// GPU time per run, runs queued behind a hold, then run back to back.
    pub queued: Stats,
    /// GPU time per run, the host waiting for each run.
    pub to_completion: Stats,
    /// Input bytes over the queued median (for the copy: bytes read).
    pub read_gb_s: f64,
    /// This variant's read bandwidth over the copy's read + write bandwidth.
    pub of_copy: Option<f64>,
    /// Every run's total (warm-ups included) within the bound; `None` for the copy.
    pub totals_ok: Option<bool>,
}

impl Point {
    #[allow(clippy::too_many_arguments, reason = "a record's constructor: each argument is one of its fields")]
    fn new(
        variant: Variant,
        n: u64,
        rotate: usize,
        blocks: u32,
        threads_per_block: u32,
        queued: Stats,
        to_completion: Stats,
        totals_ok: Option<bool>,
    ) -> Point {
        Point {
            variant,
            variant_label: variant.label(),
            n,
            rotate,
            blocks,
            threads_per_block,
            queued,
            to_completion,
            read_gb_s: read_gb_s(n, queued.median_ms),
            of_copy: None,
            totals_ok,
        }
    }

    /// What the plot draws as bandwidth: read, and for the copy read + write.
    pub fn plotted_gb_s(&self) -> f64 {
        if self.variant == Variant::Copy { 2.0 * self.read_gb_s } else { self.read_gb_s }
    }
}

/// Fills in each point's fraction of the copy's read + write bandwidth at its n.
pub fn relate_to_copy(points: &mut [Point]) {
    let copies: Vec<(u64, f64)> = points.iter().filter(|p| p.variant == Variant::Copy).map(|p| (p.n, p.plotted_gb_s())).collect();
    for p in points.iter_mut().filter(|p| p.variant != Variant::Copy) {
        p.of_copy = copies.iter().find(|(n, _)| *n == p.n).map(|(_, c)| p.read_gb_s / c);
    }
}

/// A sweep of one knob at a fixed n.
#[derive(Clone, Debug, Serialize)]
pub struct SweepPoint {
    pub variant: Variant,
    pub blocks: u32,
    pub threads_per_block: u32,
    pub queued: Stats,
    pub read_gb_s: f64,
}

/// Everything `bench` measured (`bench.json`).
#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    pub device: String,
    pub driver: Option<String>,
    pub runs: usize,
    pub warmups: usize,
    pub threads_per_block: u32,
    pub points: Vec<Point>,
    /// How the C++ comparison went: `ran: ...` or `skipped: why`.
    pub cpp: String,
    pub sweep_n: u64,
    pub grid_sweep: Vec<SweepPoint>,
    pub block_sweep: Vec<SweepPoint>,
    /// What one launch costs the host, each way measured.
    pub launch_costs: Vec<launch_cost::LaunchCost>,
    /// Paired rounds run for the targets, and runs per variant in each.
    pub rounds: usize,
    pub round_runs: usize,
    /// Every ratio a target judges, from the paired rounds.
    pub paired: Vec<paired::PairedRatio>,
    /// What one grid barrier costs, by grid ([`barrier`]).
    pub barrier: Vec<crate::timing::BarrierCost>,
    /// Why NVIDIA's barrier is missing from it, where it is.
    pub barrier_nvidia: Option<String>,
    /// The sum with a cluster stage against its C++ twin (compute capability 9.0+; null below).
    pub clusters: Option<clusters::ClusterBench>,
}

/// One size of the sweep: its rotation and its reference.
pub(crate) struct Case {
    pub n: u64,
    pub rotate: usize,
    pub sum: f64,
    pub abs: f64,
}

/// Copies of an `n`-float input to rotate among: `--rotate`, or enough to
/// overflow the L2 twice, at most what fits in half the free device memory.
fn rotation(gpu: &Gpu, cfg: &BenchConfig, n: u64) -> Result<usize> {
    let wanted = cfg.rotate.unwrap_or_else(|| auto_rotate(n, gpu.info.l2_bytes.unwrap_or(0) as u64));
    Ok(wanted.min((gpu.free_memory()? / 2 / device_bytes(n as usize)?).max(1) as usize))
}

/// Times `path` of `sums` on rotating inputs, every run's total checked:
/// the timing, and whether every total was within its bound.
fn time_checked(cfg: &BenchConfig, sums: &Sums, path: Path, blocks: u32, inputs: &[Window], s: &mut Scratch, reference: &Reference) -> Result<(Timing, bool)> {
    let t = time_path(sums, path, blocks, inputs, s, reference, cfg.repeats())?;
    Ok((t.timing, t.wrong_totals == 0))
}

fn both(t: Timing) -> (Stats, Stats) {
    (t.gpu_queued.expect("a GPU times queued runs"), t.launch_to_completion.expect("a GPU times waited runs"))
}

/// Runs the whole benchmark.
pub fn run(gpu: &Gpu, cfg: &BenchConfig, progress: &Progress) -> Result<BenchReport> {
    let tpb = cfg.threads_per_block;
    let sums = Sums::load(gpu, tpb)?;
    let cpp_build = if cfg.cpp { cpp::build() } else { Err("--no-cpp".to_string()) };
    // The C++ build's kernels, launched through this program's own launch path.
    let cpp_module = cpp_build.as_ref().ok().map(|b| gpu.load_module_file(&b.cubin)).transpose()?;
    // SAFETY: host/cpp/lesson.cu's kernels take the Rust kernels' parameters,
    // the same dynamic shared memory (one float per tile of 32), and only
    // reduceCooperativeGrid calls grid.sync().
    let cpp_sums = cpp_module.as_ref().map(|m| unsafe { Sums::load_foreign(gpu, tpb, m, cpp::KERNELS) }).transpose()?;
    let oxide_module = cfg.oxide.as_ref().map(|p| gpu.load_module_file(p)).transpose()?;
    let oxide = oxide_module.as_ref().map(|m| peer::Oxide::load(gpu, m)).transpose()?;
    let mut points = Vec::new();
    let mut cases = Vec::new();
    let mut kept = Vec::new();
    let bar = progress.bar(cfg.sizes.len() as u64, "sizes");
    for &n in &cfg.sizes {
        bar.advance(format!("n = {n}"));
        let xs = reference::fill(n as usize)?;
        let reference = Reference::new(&xs);
        let rotate = rotation(gpu, cfg, n)?;
        cases.push(Case { n, rotate, sum: reference.sum, abs: reference.abs });
        let all = DeviceInput::upload_copies(gpu, &xs, rotate)?;
        let inputs = all.windows(n as usize);
        let slots = cfg.repeats().slots();
        let grid = sums.grid(n as usize);
        // Kept for the paired rounds too, so room for theirs.
        let mut s = sums.scratch(grid.max(sums.fast_grid(n as usize)), slots.max(cfg.round_repeats().slots()))?;
        warm_clocks(gpu, &mut || sums.run(Path::TwoLaunches, grid, &inputs[0], &mut s, 0))?;
        for path in [
            Path::TwoLaunches,
            Path::Cooperative,
            Path::TwoLaunchesGraph,
            Path::CooperativeGraph,
            Path::Fast,
            Path::FastCooperative,
            Path::SingleBlock,
            Path::FastLastBlock,
        ] {
            if path == Path::SingleBlock && n > 1 << 20 {
                continue;
            }
            let blocks = sums.grid_for(path, n as usize);
            let (timing, ok) = time_checked(cfg, &sums, path, blocks, &inputs, &mut s, &reference)?;
            let (q, w) = both(timing);
            points.push(Point::new(Variant::of_path(path), n, rotate, blocks, tpb, q, w, Some(ok)));
        }
        if let Some(cpp) = &cpp_sums {
            let blocks = cpp.grid(n as usize);
            let mut s = cpp.scratch(blocks, slots)?;
            for (path, variant) in [(Path::TwoLaunches, Variant::NvccKernelsTwoLaunches), (Path::Cooperative, Variant::NvccKernelsCooperative)] {
                let (timing, ok) = time_checked(cfg, cpp, path, blocks, &inputs, &mut s, &reference)?;
                let (q, w) = both(timing);
                points.push(Point::new(variant, n, rotate, blocks, tpb, q, w, Some(ok)));
            }
        }
        if let Some(oxide) = &oxide {
            points.extend(oxide.time(&sums, cfg.repeats(), &inputs, &mut s, &reference, rotate)?);
        }
        let mut dst = gpu.zeros::<f32>(n as usize)?;
        let timing = time_runs(gpu, cfg.repeats(), &mut |k| Ok(gpu.copy(&inputs[k % inputs.len()].view(), &mut dst)?))?;
        let (q, w) = both(timing);
        points.push(Point::new(Variant::Copy, n, rotate, 0, 0, q, w, None));
        if cfg.rounds > 0 {
            drop(inputs);
            let cpp_s = cpp_sums.as_ref().map(|c| c.scratch(c.grid(n as usize), cfg.round_repeats().slots())).transpose()?;
            let copy_dst = rounds::COPY_TARGET_SIZES.contains(&n).then_some(dst);
            kept.push(rounds::Kept { n, xs, all, s, cpp_s, copy_dst });
        }
    }
    drop(bar);
    let cpp = match cpp_build.as_ref().map_err(Clone::clone).and_then(|b| cpp::run(b, cfg, &cases)) {
        Ok(mut cpp_points) => {
            points.append(&mut cpp_points);
            "ran: nvcc -O3 -arch=native, the same input, rotation and timing; its kernels also from a cubin through this program's launch path".to_string()
        }
        Err(why) => format!("skipped: {why}"),
    };
    relate_to_copy(&mut points);

    let sides = rounds::Sides { sums: &sums, nvcc: cpp_sums.as_ref(), oxide: oxide.as_ref(), cpp: cpp_build.as_ref().ok() };
    let (paired, cpp_failed) = rounds::run(gpu, cfg, &sides, &mut kept, &cases, progress)?;
    drop(kept);
    let cpp = match cpp_failed {
        Some(why) => format!("{cpp}; its paired rounds failed: {why}"),
        None => cpp,
    };

    let mut launch_costs = launch_cost::rust(gpu, tpb)?;
    let blocks_max = launch_costs.iter().map(|c| c.blocks).max().unwrap_or(1);
    launch_costs.extend(launch_cost::cudarc(gpu, tpb, blocks_max)?);
    if let Ok(b) = &cpp_build {
        launch_costs.extend(cpp::launch_costs(b, tpb).unwrap_or_default());
    }

    let (barrier, barrier_nvidia) = {
        let _step = progress.spinner("what one grid barrier costs");
        barrier::run(gpu)?
    };
    let clusters = if gpu.info.clusters && cfg.clusters {
        let _step = progress.spinner("the sum with a cluster stage against its C++ twin");
        let max_log2 = cfg.sizes.iter().max().map_or(28, |&n| 63 - n.leading_zeros());
        Some(clusters::run(gpu, tpb, max_log2, cfg.rounds.max(1), cfg.round_runs)?)
    } else {
        None
    };
    // Its target is judged with the others.
    let mut paired = paired;
    paired.extend(clusters.iter().flat_map(|c| c.rows.iter().filter_map(|r| r.ratio.clone())));
    let sweep_n = cfg.sizes.iter().copied().filter(|&n| n <= 1 << 26).max().unwrap_or(1 << 26);
    let (grid_sweep, block_sweep) = if cfg.sweeps { sweeps(gpu, cfg, sweep_n, progress)? } else { (Vec::new(), Vec::new()) };
    Ok(BenchReport {
        device: gpu.info.name.clone(),
        driver: gpu.info.driver_version.clone(),
        runs: cfg.runs,
        warmups: cfg.warmups,
        threads_per_block: tpb,
        points,
        cpp,
        sweep_n,
        grid_sweep,
        block_sweep,
        launch_costs,
        rounds: cfg.rounds,
        round_runs: cfg.round_runs,
        paired,
        barrier,
        barrier_nvidia,
        clusters,
    })
}

/// Time against grid size (1 block per SM up to the cooperative maximum) and
/// against block size (64 to 1024 threads), for both cooperative sums.
fn sweeps(gpu: &Gpu, cfg: &BenchConfig, n: u64, progress: &Progress) -> Result<(Vec<SweepPoint>, Vec<SweepPoint>)> {
    let _step = progress.spinner(format!("grid and block sweeps at n = {n}"));
    let xs = reference::fill(n as usize)?;
    let reference = Reference::new(&xs);
    let all = DeviceInput::upload_copies(gpu, &xs, rotation(gpu, cfg, n)?)?;
    let inputs = all.windows(n as usize);
    let point = |variant: Variant, blocks: u32, threads_per_block: u32, t: Timing| {
        let queued = t.gpu_queued.expect("a GPU times queued runs");
        SweepPoint { variant, blocks, threads_per_block, queued, read_gb_s: read_gb_s(n, queued.median_ms) }
    };
    let sums = Sums::load(gpu, cfg.threads_per_block)?;
    let slots = cfg.repeats().slots();
    let mut s = sums.scratch(sums.limits.capacity().max(sums.fast_limits.capacity()), slots)?;
    let mut grid = Vec::new();
    for path in [Path::Cooperative, Path::FastCooperative] {
        let per_sm = if path == Path::FastCooperative { sums.fast_limits.blocks_per_sm } else { sums.limits.blocks_per_sm };
        for k in 1..=per_sm {
            let blocks = k * gpu.info.sms;
            let (t, _) = time_checked(cfg, &sums, path, blocks, &inputs, &mut s, &reference)?;
            grid.push(point(Variant::of_path(path), blocks, cfg.threads_per_block, t));
        }
    }
    let mut block = Vec::new();
    for tpb in [64, 128, 256, 512, 1024] {
        let sums = Sums::load(gpu, tpb)?;
        let mut s = sums.scratch(sums.grid(n as usize).max(sums.fast_grid(n as usize)), slots)?;
        for path in [Path::Cooperative, Path::FastCooperative] {
            let blocks = sums.grid_for(path, n as usize);
            let (t, _) = time_checked(cfg, &sums, path, blocks, &inputs, &mut s, &reference)?;
            block.push(point(Variant::of_path(path), blocks, tpb, t));
        }
    }
    Ok((grid, block))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(ms: f64) -> Stats {
        Stats::of(&[ms, ms, ms]).unwrap()
    }

    #[test]
    fn sizes_run_from_2_to_the_10_to_the_maximum_with_the_lesson_size() {
        let sizes = default_sizes(10, 28);
        assert_eq!(sizes.len(), 20);
        assert_eq!((sizes[0], sizes[19]), (1024, 1 << 28));
        assert!(sizes.contains(&4_194_915));
        assert!(sizes.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(default_sizes(10, 12), vec![1024, 2048, 4096]);
        assert_eq!(default_sizes(23, 23), vec![1 << 23]);
    }

    #[test]
    fn rotation_overflows_the_l2_twice_and_stays_bounded() {
        let l2 = 50 << 20;
        assert_eq!(auto_rotate(1 << 28, l2), 1);
        assert_eq!(auto_rotate(4_194_915, l2), 7);
        assert_eq!(auto_rotate(1024, l2), 256);
    }

    #[test]
    fn bandwidth_counts_bytes_read_and_the_copy_counts_both_ways() {
        // 2^28 floats (1 GiB) read in 0.25 ms.
        assert!((read_gb_s(1 << 28, 0.25) - 4294.967296).abs() < 1e-6);
        let mut points = vec![
            Point::new(Variant::RustFast, 1 << 28, 1, 1056, 256, stats(0.26), stats(0.27), Some(true)),
            Point::new(Variant::Copy, 1 << 28, 1, 0, 0, stats(0.5), stats(0.51), None),
        ];
        relate_to_copy(&mut points);
        // The copy moves 2 GiB in 0.5 ms; the sum reads 1 GiB in 0.26 ms.
        assert!((points[0].of_copy.unwrap() - 0.5 / (2.0 * 0.26)).abs() < 1e-9);
        assert_eq!(points[1].plotted_gb_s(), 2.0 * points[1].read_gb_s);
    }

    #[test]
    fn the_report_serializes_with_its_points_and_sweeps() {
        let report = BenchReport {
            device: "test".into(),
            driver: None,
            runs: 3,
            warmups: 1,
            threads_per_block: 256,
            points: vec![Point::new(Variant::Copy, 1024, 1, 0, 0, stats(0.01), stats(0.02), None)],
            cpp: "skipped: --no-cpp".into(),
            sweep_n: 1024,
            grid_sweep: vec![],
            block_sweep: vec![],
            launch_costs: vec![],
            rounds: 0,
            round_runs: 0,
            paired: vec![],
            barrier: vec![],
            barrier_nvidia: None,
            clusters: None,
        };
        let v: serde_json::Value = serde_json::from_str(&crate::json::to_string(&report)).unwrap();
        for key in ["device", "runs", "warmups", "threads_per_block", "points", "cpp", "sweep_n", "grid_sweep", "block_sweep"] {
            assert!(v.get(key).is_some(), "no {key}");
        }
        let p = &v["points"][0];
        assert_eq!(p["variant"], "copy");
        assert_eq!(p["variant_label"], "copy (device to device)");
        assert!(p["queued"]["median_ms"].is_number() && p["to_completion"]["median_ms"].is_number());
    }
}
