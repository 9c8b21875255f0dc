//! `cg-lesson multi-gpu`: the lesson's sum over every GPU of a host, the n
//! floats cut into contiguous shards, one per GPU, each GPU's cooperative
//! grid sized by that GPU's own occupancy, and the shards' totals combined
//! two ways:
//!
//! - **across GPUs, in the kernel** (`reduce_multi_gpu`, `cg_kernel::cg::multi_grid`):
//!   one cooperative launch per GPU; each sums its shard as the lesson's
//!   kernel does, then `grid.sync()`, a barrier across the GPUs, `grid.sync()`,
//!   and block 0 of GPU 0 adds every GPU's total: NVIDIA's
//!   `conjugateGradientMultiDeviceCG` sample's way, since CUDA 13 has no
//!   multi-device launch;
//! - **NCCL**: each GPU runs the lesson's cooperative sum on its shard, then
//!   `ncclAllReduce` adds the totals on the devices (on the emulator a
//!   host-side stand-in, labelled so).
//!
//! One host thread drives each GPU (they meet at a [`Rendezvous`](rendezvous::Rendezvous) between
//! steps); with `--rank`, `--ranks` and `--nccl-id`, one process drives one
//! GPU, as NCCL runs across hosts (the NCCL path only: the barrier across
//! GPUs needs memory every GPU maps, which processes do not share).
//!
//! Every sum is checked as the lesson checks: each GPU's total against its
//! shard's double sum, each block's partial against its elements, the
//! combined total against the whole input's, all from poisoned buffers.

mod id_file;
mod rank;
pub mod rendezvous;
pub mod render;
pub mod shard;

use crate::checks::{self, Check, Status};
use crate::device::{DeviceInfo, Gpu};
use crate::error::{Error, Result};
use crate::group::CommId;
use crate::lesson::Capacity;
use crate::reference::{self, SumCheck, check, error_bound, fill_range_sum};
use crate::timing::Stats;
use serde::Serialize;
use shard::{Crossover, Shard, combined_chain, crossover, shards, slowest};
use std::path::PathBuf;
use std::time::Duration;

/// How the NCCL path runs.
#[derive(Clone, Debug)]
pub enum NcclMode {
    /// Not at all (`--no-nccl`).
    Off,
    /// One process, one thread per GPU.
    InProcess,
    /// This process is rank `rank` of `ranks` processes, one GPU each,
    /// meeting through the NCCL id rank 0 writes to `id_file`.
    Process { rank: u32, ranks: u32, id_file: PathBuf },
}

/// What the user asked for.
#[derive(Clone, Debug)]
pub struct MultiConfig {
    pub n: usize,
    pub threads_per_block: u32,
    pub warmups: usize,
    pub runs: usize,
    pub nccl: NcclMode,
    /// Powers of two to compare one GPU with all of them at (none: no sweep).
    pub sweep: Option<(u32, u32)>,
    /// A GPU whose sum across GPUs is never launched: the others must name it
    /// (a mutation kept as a test, `--never-launch`).
    pub never_launch: Option<u32>,
    /// Launch `mutant_multi_gpu_without_barrier` as the sum across GPUs: the
    /// checks must fail (a mutation kept as a test).
    pub without_barrier_across: bool,
    /// How long a host thread waits for the others at a step, and for a GPU.
    pub timeout: Duration,
    pub emulated: bool,
}

/// Timed runs queued behind one gate at most (the driver's launch queue is finite).
const RUNS_PER_GATE: usize = 50;

/// All-reduces of one float timed queued, as the PyTorch baseline queues 200.
pub const ALL_REDUCE_RUNS: usize = 200;

/// The two ways to combine the shards, and the one-GPU sum they are compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Way {
    /// The lesson's cooperative sum of all n on GPU 0 alone.
    OneGpu,
    /// One cooperative launch per GPU meeting at the barrier across GPUs.
    AcrossGpus,
    /// The lesson's cooperative sum per GPU, then NCCL's all-reduce.
    Nccl,
}

impl Way {
    pub fn label(self, emulated: bool) -> &'static str {
        match (self, emulated) {
            (Way::OneGpu, _) => "one GPU, one cooperative launch",
            (Way::AcrossGpus, _) => "(a) grid across GPUs, in the kernel",
            (Way::Nccl, false) => "(b) per-GPU sum + NCCL all-reduce",
            (Way::Nccl, true) => "(b) per-GPU sum + all-reduce (host stand-in for NCCL)",
        }
    }
}

/// One GPU of the run.
#[derive(Clone, Debug, Serialize)]
pub struct GpuLine {
    pub rank: u32,
    pub device: DeviceInfo,
    /// `reduce_multi_gpu`'s cooperative capacity on this GPU (path a).
    pub across: Capacity,
    /// `reduce_cooperative_grid`'s (path b and one GPU).
    pub lesson: Capacity,
    pub shard: Shard,
    /// The grids this GPU runs for its shard: path a's, path b's.
    pub grids: [u32; 2],
}

/// One GPU's part of a checked sum.
#[derive(Clone, Debug, Serialize)]
pub struct GpuSum {
    pub rank: u32,
    /// This GPU's total against its shard's double sum.
    pub total: SumCheck,
    /// Its blocks' partials against their elements, and its total against them.
    pub stages: reference::StageChecks,
    pub blocks: u32,
    /// The combined total as this GPU holds it (GPU 0 for path a, every GPU for path b).
    pub combined: Option<f32>,
}

/// A checked sum one way.
#[derive(Clone, Debug, Serialize)]
pub struct WaySum {
    pub way: Way,
    pub gpus: Vec<GpuSum>,
    /// Each combined total held against the whole input's double sum.
    pub combined: Vec<SumCheck>,
}

/// A way's timings: each run's time is the slowest GPU's.
#[derive(Clone, Debug, Serialize)]
pub struct WayTiming {
    pub way: Way,
    pub n: usize,
    pub stats: Stats,
    /// Runs (warm-ups included) whose total was outside its bound, of those made.
    pub wrong_totals: usize,
    pub checked: usize,
}

impl WayTiming {
    /// The check that every timed total (`what`, `at` some n) is within its bound.
    fn check(&self, what: &str, at: &str) -> Check {
        Check::new(
            format!("every timed {what} total{at} is within the bound"),
            self.wrong_totals == 0,
            format!("{} of {} outside", self.wrong_totals, self.checked),
        )
    }
}

/// The pieces timed on their own.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Pieces {
    /// `multi_grid_barrier` on path a's grids: grid.sync, the meeting, grid.sync.
    pub barrier: Option<Stats>,
    /// The same without the bound on the wait.
    pub barrier_unbounded: Option<Stats>,
    /// An empty cooperative launch of the same grids: what the launch alone costs.
    pub empty_launch: Option<Stats>,
    /// `multi_grid_barrier` with one block per GPU: the meeting with
    /// (nearly) nothing of the grid barriers around it.
    pub barrier_one_block: Option<Stats>,
    /// An empty cooperative launch of one block per GPU.
    pub empty_launch_one_block: Option<Stats>,
    /// The all-reduce of one float, runs queued back to back.
    pub all_reduce_queued: Option<Stats>,
    /// The same, the host waiting for each before the next.
    pub all_reduce_waited: Option<Stats>,
}

/// One n of the sweep.
#[derive(Clone, Debug, Serialize)]
pub struct SweepPoint {
    pub n: usize,
    pub one_gpu_ms: f64,
    pub across_ms: Option<f64>,
    pub nccl_ms: Option<f64>,
}

/// Where every GPU starts to beat one, for each way.
#[derive(Clone, Debug, Serialize)]
pub struct Crossovers {
    pub across: Option<Crossover>,
    pub nccl: Option<Crossover>,
}

/// The whole run (`--json` prints this).
#[derive(Clone, Debug, Serialize)]
pub struct MultiReport {
    pub status: Status,
    pub n: usize,
    pub threads_per_block: u32,
    pub tile: u32,
    pub fill: &'static str,
    /// This process's rank and the ranks in all, when one process drives each GPU.
    pub process: Option<(u32, u32)>,
    pub gpus: Vec<GpuLine>,
    /// `NCCL 2.28.9`, the stand-in, or off.
    pub nccl: String,
    #[serde(serialize_with = "crate::json::float")]
    pub reference: f64,
    pub bound_rule: &'static str,
    pub sums: Vec<WaySum>,
    pub warmups: usize,
    pub runs: usize,
    pub timing: Vec<WayTiming>,
    pub pieces: Pieces,
    pub sweep: Vec<SweepPoint>,
    /// Why the sweep stopped before its last size, if it did.
    pub sweep_stopped: Option<String>,
    pub crossover: Crossovers,
    pub checks: Vec<Check>,
}

impl MultiReport {
    /// Ok when every check passed, else how many failed.
    pub fn verdict(&self) -> Result<()> {
        checks::verdict(&self.checks)
    }
}

/// How each GPU is opened, in the thread that drives it (rank to device).
pub type Opener<'a> = &'a (dyn Fn(u32) -> Result<Gpu> + Sync);

/// Runs the sum across `gpus` GPUs of this process (one with `NcclMode::Process`),
/// each opened by `open` in its own thread.
pub fn run(cfg: &MultiConfig, gpus: u32, open: Opener<'_>, step: &(dyn Fn(&str) + Sync)) -> Result<MultiReport> {
    let (ranks, first_rank) = match &cfg.nccl {
        NcclMode::Process { rank, ranks, .. } => (*ranks, *rank),
        _ => (gpus, 0),
    };
    if let Some(r) = cfg.never_launch.filter(|&r| r >= gpus) {
        return Err(Error::RankOutOfRange { flag: "--never-launch", rank: r, ranks: gpus });
    }
    let comm_id = match &cfg.nccl {
        NcclMode::Off => None,
        NcclMode::InProcess => Some(CommId::new(cfg.emulated, ranks, cfg.timeout)?),
        NcclMode::Process { rank, id_file, .. } => Some(id_file::exchange(cfg, *rank, id_file)?),
    };
    let nccl = match (&comm_id, cfg.emulated) {
        (None, _) => "off".to_string(),
        (Some(_), true) => "a host-side stand-in (the emulator has no NCCL)".to_string(),
        (Some(_), false) => format!("NCCL {}", crate::nccl::version()?),
    };
    let team = rank::Team::new(cfg, gpus, ranks, first_rank, comm_id, step);
    let results: Vec<Result<rank::RankReport>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..gpus)
            .map(|local| {
                let team = &team;
                s.spawn(move || {
                    let r = open(local).and_then(|gpu| team.work(local, &gpu));
                    if r.is_err() {
                        team.meet.abandon(local);
                    }
                    r
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    });
    if let NcclMode::Process { rank: 0, id_file, .. } = &cfg.nccl {
        let _ = std::fs::remove_file(id_file);
    }
    let reports = first_error(results)?;
    Ok(combine(cfg, ranks, first_rank, nccl, reports))
}

/// Every GPU's report, or the error that started the failure: one that is
/// not another GPU stopping because of it, and not a GPU left waiting at the
/// barrier for one that failed (lowest rank first).
fn first_error(results: Vec<Result<rank::RankReport>>) -> Result<Vec<rank::RankReport>> {
    let weight = |e: &Error| match e {
        Error::PeerStopped { .. } => 2,
        Error::AcrossGpusTimedOut { .. } => 1,
        _ => 0,
    };
    let mut errors: Vec<Error> = Vec::new();
    let mut reports = Vec::new();
    for r in results {
        match r {
            Ok(report) => reports.push(report),
            Err(e) => errors.push(e),
        }
    }
    errors.sort_by_key(weight);
    match errors.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(reports),
    }
}

/// The report from every GPU's.
fn combine(cfg: &MultiConfig, ranks: u32, first_rank: u32, nccl: String, reports: Vec<rank::RankReport>) -> MultiReport {
    let total = fill_range_sum(0, cfg.n);
    let tile = reports[0].tile;
    let mut r = MultiReport {
        status: Status::Failed,
        n: cfg.n,
        threads_per_block: cfg.threads_per_block,
        tile,
        fill: reference::FILL_RULE,
        process: matches!(cfg.nccl, NcclMode::Process { .. }).then_some((first_rank, ranks)),
        gpus: reports.iter().map(|g| g.line.clone()).collect(),
        nccl,
        reference: total,
        bound_rule: reference::BOUND_RULE,
        sums: Vec::new(),
        warmups: cfg.warmups,
        runs: cfg.runs,
        timing: Vec::new(),
        pieces: Pieces::default(),
        sweep: Vec::new(),
        sweep_stopped: reports[0].sweep_stopped.clone(),
        crossover: Crossovers { across: None, nccl: None },
        checks: Vec::new(),
    };
    for way in [Way::AcrossGpus, Way::Nccl] {
        let gpus: Vec<GpuSum> = reports.iter().filter_map(|g| g.sums.iter().find(|s| s.0 == way).map(|s| s.1.clone())).collect();
        if gpus.is_empty() {
            continue;
        }
        let chains: Vec<u64> = reports.iter().map(|g| g.chains[(way == Way::Nccl) as usize]).collect();
        let bound = error_bound(combined_chain(&chains, ranks), total);
        let combined: Vec<SumCheck> = gpus.iter().filter_map(|g| g.combined).map(|c| check(c, total, bound)).collect();
        for g in &gpus {
            r.checks.push(Check::new(format!("{}: GPU {}'s total is its shard's sum", way.label(cfg.emulated), g.rank), g.total.pass, g.total.detail()));
            r.checks.push(Check::new(
                format!("{}: GPU {}'s partials match the elements each block read", way.label(cfg.emulated), g.rank),
                g.stages.pass(),
                g.stages.partials_detail(g.blocks),
            ));
        }
        for (g, c) in gpus.iter().filter(|g| g.combined.is_some()).zip(&combined) {
            r.checks.push(Check::new(
                format!("{}: the combined total on GPU {} is the whole input's sum", way.label(cfg.emulated), g.rank),
                c.pass,
                c.detail(),
            ));
        }
        r.sums.push(WaySum { way, gpus, combined });
    }
    for way in [Way::OneGpu, Way::AcrossGpus, Way::Nccl] {
        let per_gpu: Vec<&rank::Timed> = reports.iter().filter_map(|g| g.timing.iter().find(|t| t.way == way && t.n == cfg.n)).collect();
        if let Some(t) = timed(way, cfg.n, &per_gpu) {
            r.checks.push(t.check(way.label(cfg.emulated), ""));
            r.timing.push(t);
        }
    }
    let piece = |f: fn(&rank::RankReport) -> &Option<Vec<f64>>| {
        let per: Vec<Vec<f64>> = reports.iter().filter_map(|g| f(g).clone()).collect();
        if per.is_empty() { None } else { Stats::of(&slowest(&per)) }
    };
    r.pieces = Pieces {
        barrier: piece(|g| &g.pieces.barrier),
        barrier_unbounded: piece(|g| &g.pieces.barrier_unbounded),
        empty_launch: piece(|g| &g.pieces.empty_launch),
        barrier_one_block: piece(|g| &g.pieces.barrier_one_block),
        empty_launch_one_block: piece(|g| &g.pieces.empty_launch_one_block),
        all_reduce_queued: piece(|g| &g.pieces.all_reduce_queued),
        all_reduce_waited: piece(|g| &g.pieces.all_reduce_waited),
    };
    let sizes: Vec<usize> = reports[0].timing.iter().filter(|t| t.way == Way::OneGpu && t.sweep).map(|t| t.n).collect();
    for n in sizes {
        let mut mean = |way| {
            let per: Vec<&rank::Timed> = reports.iter().filter_map(|g| g.timing.iter().find(|t| t.way == way && t.n == n && t.sweep)).collect();
            timed(way, n, &per).map(|t| {
                r.checks.push(t.check(way.label(cfg.emulated), &format!(" at n = {n}")));
                t.stats.mean_ms
            })
        };
        let (one, across, nccl) = (mean(Way::OneGpu), mean(Way::AcrossGpus), mean(Way::Nccl));
        r.sweep.push(SweepPoint { n, one_gpu_ms: one.unwrap_or(f64::NAN), across_ms: across, nccl_ms: nccl });
    }
    let cross = |f: fn(&SweepPoint) -> Option<f64>| {
        let points: Vec<(usize, f64, f64)> = r.sweep.iter().filter_map(|p| f(p).map(|t| (p.n, p.one_gpu_ms, t))).collect();
        (!points.is_empty()).then(|| crossover(&points))
    };
    r.crossover = Crossovers { across: cross(|p| p.across_ms), nccl: cross(|p| p.nccl_ms) };
    r.status = checks::status(&r.checks);
    r
}

/// A way's timing at one n from each GPU's runs of it.
fn timed(way: Way, n: usize, per_gpu: &[&rank::Timed]) -> Option<WayTiming> {
    let times: Vec<Vec<f64>> = per_gpu.iter().map(|t| t.times.clone()).collect();
    let stats = Stats::of(&slowest(&times))?;
    Some(WayTiming { way, n, stats, wrong_totals: per_gpu.iter().map(|t| t.wrong_totals).sum(), checked: per_gpu.iter().map(|t| t.checked).sum() })
}

/// `shards(n, ranks)`, this process's ones.
fn my_shards(n: usize, ranks: u32, first_rank: u32, gpus: u32) -> Vec<Shard> {
    shards(n, ranks).into_iter().skip(first_rank as usize).take(gpus as usize).collect()
}
