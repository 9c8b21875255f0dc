//! `host bench`: the lesson's sums, a fast cooperative sum, a device-to-device
//! copy (the memory ceiling) and, where `nvcc` is on PATH, the same kernels in
//! C++ and CUB's `DeviceReduce::Sum`, swept over n in one run.

mod cpp;
pub mod plot;
mod render;

pub use render::render;

use crate::device::Gpu;
use crate::error::Result;
use crate::launch::{DeviceInput, Input, Window, device_bytes};
use crate::reference;
use crate::sums::{Scratch, Sums};
use crate::timing::{Stats, time_runs};
use serde::Serialize;
use std::path::PathBuf;

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    pub sizes: Vec<u64>,
    pub runs: usize,
    pub warmups: usize,
    /// Copies of the input, back to back in one allocation, to rotate among;
    /// `None` picks enough to overflow the L2.
    pub rotate: Option<usize>,
    pub threads: u32,
    pub plot: PathBuf,
    pub cpp: bool,
    pub sweeps: bool,
}

/// The sweep's sizes: 2^10 to 2^max_log2, and the lesson's 4,194,915.
pub fn default_sizes(max_log2: u32) -> Vec<u64> {
    let mut sizes: Vec<u64> = (10..=max_log2).map(|k| 1u64 << k).collect();
    if max_log2 >= 23 {
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

/// The variant that stands for the memory ceiling.
pub const COPY: &str = "copy (D2D memcpy)";
/// nvcc's build of the lesson's kernels, launched by this program (same launch path as Rust's).
pub const CPP_IN_RUST_TWO: &str = "cpp kernels, rust launch: two launches";
/// As [`CPP_IN_RUST_TWO`], the cooperative kernel.
pub const CPP_IN_RUST_COOP: &str = "cpp kernels, rust launch: cooperative";

/// One variant at one size.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    pub variant: String,
    pub n: u64,
    pub rotate: usize,
    pub blocks: u64,
    pub threads: u32,
    pub stats: Stats,
    /// Input bytes over the median time (for the copy: bytes read).
    pub read_gb_s: f64,
    /// This variant's read bandwidth over the copy's read + write bandwidth.
    pub of_copy: Option<f64>,
    /// The total checked against the double reference (the copy has none).
    pub sum_ok: Option<bool>,
}

impl Point {
    fn new(variant: &str, n: u64, rotate: usize, blocks: u64, threads: u32, stats: Stats, sum_ok: Option<bool>) -> Point {
        Point { variant: variant.into(), n, rotate, blocks, threads, stats, read_gb_s: read_gb_s(n, stats.median_ms), of_copy: None, sum_ok }
    }

    /// What the plot draws: read bandwidth, and for the copy read + write.
    pub fn plotted_gb_s(&self) -> f64 {
        if self.variant == COPY { 2.0 * self.read_gb_s } else { self.read_gb_s }
    }
}

/// Fills in each point's fraction of the copy's read + write bandwidth at its n.
pub fn relate_to_copy(points: &mut [Point]) {
    let copies: Vec<(u64, f64)> = points.iter().filter(|p| p.variant == COPY).map(|p| (p.n, p.plotted_gb_s())).collect();
    for p in points.iter_mut().filter(|p| p.variant != COPY) {
        p.of_copy = copies.iter().find(|(n, _)| *n == p.n).map(|(_, c)| p.read_gb_s / c);
    }
}

/// A sweep of one knob at a fixed n.
#[derive(Clone, Debug, Serialize)]
pub struct SweepPoint {
    pub variant: String,
    pub blocks: u64,
    pub threads: u32,
    pub stats: Stats,
    pub read_gb_s: f64,
}

/// Everything `bench` measured.
#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    pub device: String,
    pub runs: usize,
    pub warmups: usize,
    pub threads: u32,
    pub points: Vec<Point>,
    pub cpp: String,
    pub sweep_n: u64,
    pub grid_sweep: Vec<SweepPoint>,
    pub block_sweep: Vec<SweepPoint>,
    pub plot: String,
}

/// Times `run` on rotating inputs.
struct Timer<'a> {
    gpu: &'a Gpu,
    cfg: &'a BenchConfig,
}

impl Timer<'_> {
    fn time(&self, inputs: &[Window], mut run: impl FnMut(&Window) -> Result<()>) -> Result<Stats> {
        let mut k = 0;
        let stats = time_runs(self.gpu, self.cfg.warmups, self.cfg.runs, || {
            k += 1;
            run(&inputs[k % inputs.len()])
        })?;
        Ok(stats.expect("at least one timed run"))
    }
}

/// One size of the sweep: its rotation and the reference the totals are checked against.
pub(crate) struct Case {
    pub n: u64,
    pub rotate: usize,
    pub want: f64,
    pub abs: f64,
}

/// Copies of an `n`-float input to rotate among: `--rotate`, or enough to
/// overflow the L2 twice, at most what fits in half the free device memory.
fn rotation(gpu: &Gpu, cfg: &BenchConfig, n: u64) -> Result<usize> {
    let wanted = cfg.rotate.unwrap_or_else(|| auto_rotate(n, gpu.info.l2_bytes as u64));
    Ok(wanted.min((gpu.free_memory()? / 2 / device_bytes(n)).max(1) as usize))
}

/// Runs the whole benchmark.
pub fn run(gpu: &Gpu, cfg: &BenchConfig) -> Result<BenchReport> {
    let sums = Sums::load(gpu, cfg.threads)?;
    let cpp_build = if cfg.cpp { cpp::build() } else { Err("--no-cpp".to_string()) };
    // The C++ build's kernels, launched through this program's own launch path.
    let cpp_module = cpp_build.as_ref().ok().map(|b| gpu.load_module_file(&b.cubin)).transpose()?;
    let cpp_sums = cpp_module.as_ref().map(|m| Sums::load_lesson_kernels_from(gpu, cfg.threads, m, cpp::KERNELS)).transpose()?;
    let timer = Timer { gpu, cfg };
    let mut points = Vec::new();
    let mut cases = Vec::new();
    for (i, &n) in cfg.sizes.iter().enumerate() {
        eprintln!("bench: [{}/{}] n = {n}", i + 1, cfg.sizes.len());
        let xs = reference::fill(n as usize)?;
        let (want, abs) = reference::reference_sum(&xs);
        let rotate = rotation(gpu, cfg, n)?;
        cases.push(Case { n, rotate, want, abs });
        let all = DeviceInput::upload_copies(gpu, &xs, rotate)?;
        let inputs = all.windows(n as usize);
        drop(xs);
        let (grid, fast_grid) = (sums.grid(n as usize).max(1), sums.fast_grid(n as usize).max(1));
        let mut s = sums.scratch(grid.max(fast_grid))?;
        let threads = cfg.threads;
        let check = |s: &mut Scratch, chain: u64| -> Result<bool> {
            let total = gpu.read(&s.total)?[0];
            Ok(reference::check(total, want, reference::error_bound(chain, abs)).pass)
        };
        let lesson_chain = reference::longest_chain(n, grid, threads);
        let stats = timer.time(&inputs, |input| sums.two_launches(grid, input, &mut s))?;
        points.push(Point::new("rust two launches", n, rotate, grid, threads, stats, Some(check(&mut s, lesson_chain)?)));
        let stats = timer.time(&inputs, |input| sums.one_cooperative_launch(grid, input, &mut s))?;
        points.push(Point::new("rust cooperative", n, rotate, grid, threads, stats, Some(check(&mut s, lesson_chain)?)));
        let stats = timer.time(&inputs, |input| sums.one_fast_launch(fast_grid, input, &mut s))?;
        let fast_chain = reference::longest_chain_fast(n, fast_grid, threads);
        points.push(Point::new("rust fast cooperative", n, rotate, fast_grid, threads, stats, Some(check(&mut s, fast_chain)?)));
        if let Some(cpp) = &cpp_sums {
            let grid = cpp.grid(n as usize).max(1);
            let mut s = cpp.scratch(grid)?;
            let chain = reference::longest_chain(n, grid, threads);
            let stats = timer.time(&inputs, |input| cpp.two_launches(grid, input, &mut s))?;
            points.push(Point::new(CPP_IN_RUST_TWO, n, rotate, grid, threads, stats, Some(check(&mut s, chain)?)));
            let stats = timer.time(&inputs, |input| cpp.one_cooperative_launch(grid, input, &mut s))?;
            points.push(Point::new(CPP_IN_RUST_COOP, n, rotate, grid, threads, stats, Some(check(&mut s, chain)?)));
        }
        let mut dst = gpu.zeros::<f32>(n as usize)?;
        let stats = timer.time(&inputs, |input| gpu.copy(&input.view(), &mut dst))?;
        points.push(Point::new(COPY, n, rotate, 0, 0, stats, None));
    }
    let cpp = match cpp_build.and_then(|b| cpp::run(&b, cfg, &cases)) {
        Ok(mut cpp_points) => {
            points.append(&mut cpp_points);
            "ran: nvcc -O3 -arch=native, the same input, rotation and timing; its kernels also from a cubin through this program's launch path".to_string()
        }
        Err(why) => {
            eprintln!("bench: C++ comparison skipped: {why}");
            format!("skipped: {why}")
        }
    };
    relate_to_copy(&mut points);

    let sweep_n = cfg.sizes.iter().copied().filter(|&n| n <= 1 << 26).max().unwrap_or(1 << 26);
    let (grid_sweep, block_sweep) = if cfg.sweeps { sweeps(gpu, cfg, &timer, sweep_n)? } else { (Vec::new(), Vec::new()) };

    let title = format!("Sum of n floats on {} ({} runs each, median)", gpu.info.name, cfg.runs);
    plot::bandwidth_svg(&points, &title, &cfg.plot).map_err(crate::error::Error::Plot)?;
    Ok(BenchReport {
        device: gpu.info.name.clone(),
        runs: cfg.runs,
        warmups: cfg.warmups,
        threads: cfg.threads,
        points,
        cpp,
        sweep_n,
        grid_sweep,
        block_sweep,
        plot: cfg.plot.display().to_string(),
    })
}

/// Time against grid size (1 block/SM up to the cooperative maximum) and
/// against block size (64 to 1024 threads), for both cooperative sums.
fn sweeps(gpu: &Gpu, cfg: &BenchConfig, timer: &Timer, n: u64) -> Result<(Vec<SweepPoint>, Vec<SweepPoint>)> {
    eprintln!("bench: grid and block sweeps at n = {n}");
    let xs = reference::fill(n as usize)?;
    let all = DeviceInput::upload_copies(gpu, &xs, rotation(gpu, cfg, n)?)?;
    let inputs = all.windows(n as usize);
    let point = |variant: &str, blocks: u64, threads: u32, stats: Stats| SweepPoint {
        variant: variant.into(),
        blocks,
        threads,
        stats,
        read_gb_s: read_gb_s(n, stats.median_ms),
    };
    let sums = Sums::load(gpu, cfg.threads)?;
    let mut s = sums.scratch(sums.limits.capacity().max(sums.fast_limits.capacity()))?;
    let mut grid = Vec::new();
    for per_sm in 1..=sums.limits.blocks_per_sm {
        let blocks = per_sm as u64 * gpu.info.sms as u64;
        grid.push(point("rust cooperative", blocks, cfg.threads, timer.time(&inputs, |i| sums.one_cooperative_launch(blocks, i, &mut s))?));
    }
    for per_sm in 1..=sums.fast_limits.blocks_per_sm {
        let blocks = per_sm as u64 * gpu.info.sms as u64;
        grid.push(point("rust fast cooperative", blocks, cfg.threads, timer.time(&inputs, |i| sums.one_fast_launch(blocks, i, &mut s))?));
    }
    let mut block = Vec::new();
    for threads in [64, 128, 256, 512, 1024] {
        let sums = Sums::load(gpu, threads)?;
        let (blocks, fast_blocks) = (sums.grid(n as usize), sums.fast_grid(n as usize));
        let mut s = sums.scratch(blocks.max(fast_blocks))?;
        block.push(point("rust cooperative", blocks, threads, timer.time(&inputs, |i| sums.one_cooperative_launch(blocks, i, &mut s))?));
        block.push(point("rust fast cooperative", fast_blocks, threads, timer.time(&inputs, |i| sums.one_fast_launch(fast_blocks, i, &mut s))?));
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
        let sizes = default_sizes(28);
        assert_eq!(sizes.len(), 20);
        assert_eq!((sizes[0], sizes[19]), (1024, 1 << 28));
        assert!(sizes.contains(&4_194_915));
        assert!(sizes.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(default_sizes(12), vec![1024, 2048, 4096]);
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
            Point::new("rust fast cooperative", 1 << 28, 1, 1056, 256, stats(0.26), Some(true)),
            Point::new(COPY, 1 << 28, 1, 0, 0, stats(0.5), None),
        ];
        relate_to_copy(&mut points);
        let fast = &points[0];
        // The copy moves 2 GiB in 0.5 ms; the sum reads 1 GiB in 0.26 ms.
        assert!((fast.of_copy.unwrap() - 0.5 / (2.0 * 0.26)).abs() < 1e-9);
        assert_eq!(points[1].plotted_gb_s(), 2.0 * points[1].read_gb_s);
    }

    #[test]
    fn the_plot_is_an_svg_with_a_line_per_variant() {
        let mut points = Vec::new();
        for n in default_sizes(14) {
            for (variant, ms) in [("rust cooperative", 0.010), ("rust fast cooperative", 0.008), (COPY, 0.007)] {
                points.push(Point::new(variant, n, 1, 1, 256, stats(ms), Some(true)));
            }
        }
        let path = std::env::temp_dir().join(format!("bench-plot-{}.svg", std::process::id()));
        plot::bandwidth_svg(&points, "synthetic", &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).ok();
        let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        for label in ["rust cooperative", "rust fast cooperative", COPY, "synthetic"] {
            assert!(svg.contains(label), "no {label} in the plot");
        }
        assert!(doc.descendants().filter(|n| n.tag_name().name() == "polyline").count() >= 3);
    }

    #[test]
    fn the_report_serializes_with_its_points_and_sweeps() {
        let report = BenchReport {
            device: "test".into(),
            runs: 3,
            warmups: 1,
            threads: 256,
            points: vec![Point::new(COPY, 1024, 1, 0, 0, stats(0.01), None)],
            cpp: "skipped".into(),
            sweep_n: 1024,
            grid_sweep: vec![],
            block_sweep: vec![],
            plot: "bench.svg".into(),
        };
        let v: serde_json::Value = serde_json::from_str(&crate::report::json(&report)).unwrap();
        for key in ["device", "runs", "warmups", "threads", "points", "cpp", "sweep_n", "grid_sweep", "block_sweep", "plot"] {
            assert!(v.get(key).is_some(), "no {key}");
        }
        let p = &v["points"][0];
        for key in ["variant", "n", "rotate", "blocks", "threads", "stats", "read_gb_s", "of_copy", "sum_ok"] {
            assert!(p.get(key).is_some(), "no points[0].{key}");
        }
        assert!(p["stats"]["median_ms"].is_number());
    }
}
