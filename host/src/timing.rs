//! Timing: warm-ups, then CUDA events around each run, two ways.
//!
//! - **GPU time, launches queued**: every run gets its own pair of events,
//!   and the runs are queued in batches, each behind a kernel that holds the
//!   GPU until the host has queued the whole batch; then the GPU runs the
//!   batch back to back. A run's time is what the GPU spends on it, gaps
//!   between its own launches included, however fast or slow the host is at
//!   submitting (without the hold, a run of a few microseconds is timed at
//!   the host's pace). This is the primary figure, and how `host/cpp` times
//!   the C++.
//! - **Launch to completion**: the host waits for each run before launching
//!   the next, so each run also pays for its own submission: the start event
//!   completes at once on an idle GPU, and the launch arrives after it.
//!
//! On the emulator both are the same CPU wall time, measured once.

use crate::device::Gpu;
use crate::error::Result;
use crate::launch::Input;
use crate::launch::prelude::*;
use crate::reference::Reference;
use crate::sums::{Path, Scratch, Sums};
use serde::Serialize;
use std::time::{Duration, Instant};

/// Keeps the GPU busy for `time` before it starts what is queued next (the
/// lesson's `hold_for`, one block of 32 threads spinning on the GPU's timer),
/// so that the host can queue work the GPU does not wait for. Nothing on
/// the emulator, where each launch runs when made.
pub fn hold(gpu: &Gpu, time: Duration) -> Result<()> {
    if gpu.info.emulated {
        return Ok(());
    }
    let kernel = gpu.kernel(&crate::kernels().hold_for)?;
    let ns = usize::try_from(time.as_nanos()).unwrap_or(usize::MAX);
    // SAFETY: hold_for touches no memory.
    Ok(unsafe { kernel.launch(1, 32, (ns,)) }?)
}

/// Summary of timed runs, in milliseconds.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Stats {
    pub runs: usize,
    pub mean_ms: f64,
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
}

impl Stats {
    /// Mean, median, min and max of `samples` (none when empty).
    pub fn of(samples: &[f64]) -> Option<Stats> {
        if samples.is_empty() {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mid = sorted.len() / 2;
        let median = if sorted.len() % 2 == 1 { sorted[mid] } else { (sorted[mid - 1] + sorted[mid]) / 2.0 };
        Some(Stats {
            runs: sorted.len(),
            mean_ms: sorted.iter().sum::<f64>() / sorted.len() as f64,
            median_ms: median,
            min_ms: sorted[0],
            max_ms: sorted[sorted.len() - 1],
        })
    }
}

/// The timings of one path.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Timing {
    /// GPU time per run, runs queued back to back (CUDA events).
    pub gpu_queued: Option<Stats>,
    /// GPU time per run, the host waiting for each run (CUDA events).
    pub launch_to_completion: Option<Stats>,
    /// Wall time per run on the emulator's CPU.
    pub cpu_wall: Option<Stats>,
}

impl Timing {
    /// The figure to compare and print first: GPU time with launches queued,
    /// or the emulator's wall time.
    pub fn primary(&self) -> Option<Stats> {
        self.gpu_queued.or(self.cpu_wall)
    }
}

/// How many untimed warm-ups, then timed runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repeats {
    pub warmups: usize,
    pub runs: usize,
}

impl Repeats {
    /// The total slots [`time_path`] needs: one per run it may make.
    pub fn slots(self) -> usize {
        self.warmups + 2 * self.runs
    }
}

/// How long [`warm_clocks`] keeps the GPU busy.
pub const CLOCK_WARM_UP: Duration = Duration::from_millis(10);

/// Repeats `work` untimed, waiting for it every 32 runs, until the GPU has
/// been at it for [`CLOCK_WARM_UP`]. Between sizes the host computes the
/// reference and uploads the inputs for milliseconds while the GPU idles and
/// lowers its clock; a size's warm-up runs, a few microseconds each, do not
/// bring it back, so without this the first path timed at each size paid for
/// it and the later ones did not. The C++ bench does the same.
pub fn warm_clocks(gpu: &Gpu, work: &mut dyn FnMut() -> Result<()>) -> Result<()> {
    if gpu.info.emulated {
        return Ok(());
    }
    let start = Instant::now();
    while start.elapsed() < CLOCK_WARM_UP {
        for _ in 0..32 {
            work()?;
        }
        gpu.finish()?;
    }
    Ok(())
}

/// Runs `work` `warmups` times, then times `runs` runs each way (once on the
/// emulator). Runs are numbered across all of them: warm-ups `0..warmups`,
/// then the queued runs, then the waited ones; `work(k)` is run `k` (a run
/// can write its result to slot `k`, so that every one can be checked).
pub fn time_runs(gpu: &Gpu, Repeats { warmups, runs }: Repeats, work: &mut dyn FnMut(usize) -> Result<()>) -> Result<Timing> {
    for r in 0..warmups {
        work(r)?;
    }
    let (first, second) = (warmups, warmups + runs);
    let queued = gpu.time_queued(runs, &mut |r| Ok(work(first + r)?))?;
    if gpu.info.emulated {
        return Ok(Timing { gpu_queued: None, launch_to_completion: None, cpu_wall: Stats::of(&queued) });
    }
    let waited = gpu.time_waited(runs, &mut |r| Ok(work(second + r)?))?;
    Ok(Timing { gpu_queued: Stats::of(&queued), launch_to_completion: Stats::of(&waited), cpu_wall: None })
}

/// A path's timings, and how its runs' totals checked out.
#[derive(Clone, Copy, Debug)]
pub struct CheckedTiming {
    pub timing: Timing,
    /// Runs whose total is outside the reference's bound.
    pub wrong_totals: usize,
    /// Runs made, warm-ups included: every one's total was checked.
    pub checked: usize,
}

/// Times `path` on `blocks` blocks as [`time_runs`] does, run `k` reading
/// `inputs[k % inputs.len()]`, starting from poisoned partials and totals;
/// each run writes its total to its own slot of `s.out` (at least
/// [`Repeats::slots`] of them), and every one is checked against `reference`.
/// A graph path is captured once per input buffer, each graph with its own
/// slot, and replayed; the slots it wrote are checked.
pub fn time_path<I: Input>(
    sums: &Sums,
    path: Path,
    blocks: u32,
    inputs: &[I],
    s: &mut Scratch,
    reference: &Reference,
    repeats: Repeats,
) -> Result<CheckedTiming> {
    let gpu = sums.gpu();
    sums.poison_partials(s)?;
    gpu.fill(&mut s.out, f32::NAN)?;
    let made = if gpu.info.emulated { repeats.warmups + repeats.runs } else { repeats.slots() };
    let (timing, checked) = match path.captured() {
        None => (time_runs(gpu, repeats, &mut |k| sums.run(path, blocks, &inputs[k % inputs.len()], s, k))?, made),
        Some(captured) => {
            // Captured once per input buffer, before timing, each graph
            // writing its total to its own slot; then run k replays graph
            // k mod their count. Every slot a graph wrote is checked: the
            // last total each graph wrote.
            let graphs = inputs.iter().take(made).enumerate().map(|(j, input)| sums.capture(captured, blocks, input, s, j)).collect::<Result<Vec<_>>>()?;
            let timing = time_runs(gpu, repeats, &mut |k| sums.replay(&graphs[k % graphs.len()], &inputs[k % graphs.len()], s))?;
            (timing, graphs.len())
        }
    };
    let chain = sums.chain(path, reference.xs.len(), blocks);
    let totals = gpu.read(&s.out)?;
    let wrong_totals = totals[..checked].iter().filter(|&&t| !reference.check_total(t, chain).pass).count();
    Ok(CheckedTiming { timing, wrong_totals, checked })
}

/// Barriers in one timed launch of [`per_barrier`].
pub const BARRIERS: u32 = 2000;

/// Launches or graph nodes per timed batch of [`per_launch`]: few enough to
/// queue behind a hold.
pub const LAUNCHES_PER_BATCH: usize = 64;

/// What one grid barrier costs, in µs: one cooperative launch of
/// [`BARRIERS`] barriers and one of none, `rounds` of each interleaved,
/// (median with - median without) / [`BARRIERS`]. `launch(k)` makes the
/// launch of `k` barriers.
pub fn per_barrier(gpu: &Gpu, rounds: usize, launch: &mut dyn FnMut(u32) -> Result<()>) -> Result<f64> {
    let (mut with, mut without) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    launch(BARRIERS)?;
    for _ in 0..rounds {
        with.extend(gpu.time_queued(1, &mut |_| (launch(BARRIERS)).map_err(Into::into))?);
        without.extend(gpu.time_queued(1, &mut |_| (launch(0)).map_err(Into::into))?);
    }
    let median = |xs: &[f64]| Stats::of(xs).expect("at least one round").median_ms;
    Ok((median(&with) - median(&without)) * 1e3 / BARRIERS as f64)
}

/// What one more launch costs the GPU, in µs: [`LAUNCHES_PER_BATCH`] calls of
/// `launch` queued behind a hold between two events, the median of `rounds`
/// batches, per call. `launch` is one kernel launch, or one graph of
/// [`LAUNCHES_PER_BATCH`] nodes with `per_call` = that many.
pub fn per_launch(gpu: &Gpu, rounds: usize, calls: usize, per_call: usize, launch: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
    launch()?;
    let ms = gpu.time_queued(rounds, &mut |_| ((0..calls).try_for_each(|_| launch())).map_err(Into::into))?;
    Ok(Stats::of(&ms).expect("at least one round").median_ms * 1e3 / (calls * per_call) as f64)
}

/// One grid barrier against a kernel boundary, on one grid.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct BarrierCost {
    pub blocks: u32,
    pub threads_per_block: u32,
    /// This project's `grid.sync()`, µs per barrier.
    pub grid_sync_us: f64,
    /// NVIDIA's `cg::this_grid().sync()` (nvcc), launched through this
    /// program's launch path, where nvcc was found.
    pub nvidia_us: Option<f64>,
    /// The barrier the launch did not choose at this grid, µs per barrier
    /// (the watched one up to `WATCHED_ABOVE_BLOCKS` blocks, the single word
    /// above), where measured (`bench`): the figures behind the choice.
    pub other_barrier_us: Option<f64>,
    /// One more empty launch of the same grid, queued (GPU time).
    pub kernel_boundary_us: f64,
    /// One more kernel node of the same grid in a graph (GPU time).
    pub graph_node_us: f64,
}

/// A launch of `k` barriers back to back on the grid being measured.
pub type BarrierLoop<'a> = &'a mut dyn FnMut(u32) -> Result<()>;

/// This project's `grid.sync()`, a kernel boundary and a graph node on
/// `blocks` blocks of `threads_per_block`; `nvidia` and `other_barrier`, if
/// given, time NVIDIA's barrier and the barrier the launch did not choose the
/// same way.
pub fn barrier_cost(gpu: &Gpu, blocks: u32, threads_per_block: u32, nvidia: Option<BarrierLoop>, other_barrier: Option<BarrierLoop>) -> Result<BarrierCost> {
    const ROUNDS: usize = 7;
    let looping = gpu.cooperative_kernel(&crate::kernels().grid_sync_loop)?;
    let launch = looping.configure(blocks, threads_per_block)?;
    let grid_sync_us = per_barrier(gpu, ROUNDS, &mut |k| launch.barriers(k))?;
    let nvidia_us = nvidia.map(|f| per_barrier(gpu, ROUNDS, f)).transpose()?;
    let other_barrier_us = other_barrier.map(|f| per_barrier(gpu, ROUNDS, f)).transpose()?;
    let empty = gpu.kernel(&crate::kernels().empty)?;
    let kernel_boundary_us = per_launch(gpu, ROUNDS, LAUNCHES_PER_BATCH, 1, &mut || empty.launch_empty(blocks, threads_per_block))?;
    let graph = gpu.capture(&mut || ((0..LAUNCHES_PER_BATCH).try_for_each(|_| empty.launch_empty(blocks, threads_per_block))).map_err(Into::into))?;
    // SAFETY: the graph's nodes are empty launches: they address no memory.
    let graph_node_us = per_launch(gpu, ROUNDS, 1, LAUNCHES_PER_BATCH, &mut || unsafe { Ok(gpu.launch_graph(&graph)?) })?;
    Ok(BarrierCost { blocks, threads_per_block, grid_sync_us, nvidia_us, other_barrier_us, kernel_boundary_us, graph_node_us })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_of_odd_and_even_sample_counts() {
        let s = Stats::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.mean_ms, s.median_ms, s.min_ms, s.max_ms, s.runs), (2.0, 2.0, 1.0, 3.0, 3));
        let s = Stats::of(&[4.0, 1.0, 2.0, 3.0]).unwrap();
        assert_eq!((s.median_ms, s.mean_ms), (2.5, 2.5));
        assert_eq!(Stats::of(&[]), None);
    }
}
