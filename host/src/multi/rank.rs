//! One GPU's part of `cg-lesson multi-gpu`, run by the host thread that
//! drives it: its kernels and grids, its checked sums, its timed runs, each
//! step met by every other GPU's thread first.

use super::rendezvous::Rendezvous;
use super::shard::{Shard, grid, shard_chain};
use super::{GpuLine, GpuSum, MultiConfig, NcclMode, RUNS_PER_GATE, Way, my_shards};
use crate::device::{Buffer, Gpu, Shared};
use crate::error::{Error, Result};
use crate::group::{CommId, Communicator};
use crate::launch::prelude::*;
use crate::launch::{CooperativeKernel, CooperativeLaunch, DeviceInput, Meeting, MultiParams, SumParams, device_bytes};
use crate::lesson::Capacity;
use crate::reference::{self, Reference, check, error_bound, fill_range_sum};
use crate::sizing::cooperative_grid;
use cg_kernel::cg::multi_grid::{FLAGS, REPORT, REPORT_MAGIC, REPORTER, TIMEOUT_NS, barrier_words};
use cg_launcher::error::Error as L;
use std::cell::Cell;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// How long a GPU timing alone is held while its runs are queued.
const HOLD: Duration = Duration::from_millis(20);

/// Free device memory the sweep leaves beside its input.
const SWEEP_MARGIN: u64 = 1 << 30;

/// Memory every GPU of the process maps, made by GPU 0's thread.
struct Exchange {
    /// Each GPU's total, two halves used in turn (`reduce_multi_gpu`).
    totals: Shared<f32>,
    /// The barrier across GPUs' words.
    barrier: Shared<u32>,
    /// A second barrier the host takes part in too (as rank `gpus`): each
    /// GPU's timed runs wait behind it until every thread has queued them.
    gate: Shared<u32>,
}

/// What the threads of one process share.
pub(super) struct Team<'a> {
    cfg: &'a MultiConfig,
    /// GPUs of this process.
    gpus: u32,
    /// GPUs of every process.
    ranks: u32,
    first_rank: u32,
    comm_id: Option<CommId>,
    pub meet: Rendezvous,
    exchange: OnceLock<Exchange>,
    /// Each GPU's longest chains (path a, path b), for the combined bound.
    chains: Mutex<Vec<[u64; 2]>>,
    sweep_stopped: Mutex<Option<String>>,
    step: &'a (dyn Fn(&str) + Sync),
}

/// One way's timed runs on one GPU at one n.
pub(super) struct Timed {
    pub way: Way,
    pub n: usize,
    /// Part of the sweep (else the timing at the lesson's n).
    pub sweep: bool,
    pub times: Vec<f64>,
    pub wrong_totals: usize,
    pub checked: usize,
}

/// The pieces' times on one GPU.
#[derive(Default)]
pub(super) struct RankPieces {
    pub barrier: Option<Vec<f64>>,
    pub barrier_unbounded: Option<Vec<f64>>,
    pub empty_launch: Option<Vec<f64>>,
    pub barrier_one_block: Option<Vec<f64>>,
    pub empty_launch_one_block: Option<Vec<f64>>,
    pub all_reduce_queued: Option<Vec<f64>>,
    pub all_reduce_waited: Option<Vec<f64>>,
}

/// Everything one GPU found.
pub(super) struct RankReport {
    pub line: GpuLine,
    pub tile: u32,
    pub chains: [u64; 2],
    pub sums: Vec<(Way, GpuSum)>,
    pub timing: Vec<Timed>,
    pub pieces: RankPieces,
    pub sweep_stopped: Option<String>,
}

/// One GPU's place, device and communicator.
struct Worker<'a> {
    team: &'a Team<'a>,
    gpu: &'a Gpu,
    /// This GPU among the process's threads.
    local: u32,
    /// This GPU among all ranks.
    rank: u32,
    tile: u32,
    comm: Option<Communicator>,
    /// Gates passed so far (the host's flag in the gate's words).
    gates: Cell<u32>,
}

/// A shard and the launches that sum it: path a's (within one process
/// only) and path b's, each on its kernel's own grid for the shard.
struct Launches<'a> {
    shard: Shard,
    across: Option<CooperativeLaunch<'a, 'a, MultiParams>>,
    lesson: CooperativeLaunch<'a, 'a, SumParams>,
}

impl Launches<'_> {
    /// The most partials either launch writes.
    fn blocks(&self) -> u32 {
        self.across.as_ref().map_or(0, |l| l.blocks()).max(self.lesson.blocks())
    }
}

impl<'a> Team<'a> {
    pub fn new(cfg: &'a MultiConfig, gpus: u32, ranks: u32, first_rank: u32, comm_id: Option<CommId>, step: &'a (dyn Fn(&str) + Sync)) -> Team<'a> {
        Team {
            cfg,
            gpus,
            ranks,
            first_rank,
            comm_id,
            meet: Rendezvous::new(gpus, cfg.timeout),
            exchange: OnceLock::new(),
            chains: Mutex::new(vec![[0; 2]; gpus as usize]),
            sweep_stopped: Mutex::new(None),
            step,
        }
    }

    /// Whether path a runs: GPUs of one process only.
    fn across_gpus(&self) -> bool {
        !matches!(self.cfg.nccl, NcclMode::Process { .. })
    }

    /// GPU `local`'s whole part, on `gpu`.
    pub fn work(&self, local: u32, gpu: &Gpu) -> Result<RankReport> {
        let cfg = self.cfg;
        let tpb = cfg.threads_per_block;
        let shard = my_shards(cfg.n, self.ranks, self.first_rank, self.gpus)[local as usize];
        let across_def = if cfg.without_barrier_across { &crate::kernels().mutant_multi_gpu_without_barrier } else { &crate::kernels().reduce_multi_gpu };
        let across_kernel = gpu.cooperative_kernel(across_def)?;
        let lesson_kernel = gpu.cooperative_kernel(&crate::kernels().reduce_cooperative_grid)?;
        let (al, ll) = (across_kernel.limits(tpb)?, lesson_kernel.limits(tpb)?);
        let grids = [grid(shard.len, tpb, al.capacity()), grid(shard.len, tpb, ll.capacity())];
        let tile = crate::kernels().reduce_cooperative_grid.tile().unwrap_or(32);
        let chains = [shard_chain(shard.len, grids[0], tpb, tile), shard_chain(shard.len, grids[1], tpb, tile)];
        self.chains.lock().unwrap_or_else(|e| e.into_inner())[local as usize] = chains;
        if local == 0 && self.across_gpus() {
            let exchange = Exchange {
                totals: gpu.shared(2 * self.gpus as usize)?,
                barrier: gpu.shared(barrier_words(self.gpus))?,
                gate: gpu.shared(barrier_words(self.gpus + 1))?,
            };
            let _ = self.exchange.set(exchange);
        }
        let line = GpuLine {
            rank: self.first_rank + local,
            device: gpu.info.clone(),
            across: Capacity::of(across_def.name(), &al),
            lesson: Capacity::of(crate::kernels().reduce_cooperative_grid.name(), &ll),
            shard,
            grids,
        };
        self.meet.wait(local, "the start")?;
        if local == 0 {
            (self.step)("joining NCCL's communicator");
        }
        let comm = match &self.comm_id {
            Some(id) => Some(gpu.communicator(id, self.first_rank + local, self.ranks)?),
            None => None,
        };
        self.meet.wait(local, "NCCL's communicator")?;
        let w = Worker { team: self, gpu, local, rank: self.first_rank + local, tile, comm, gates: Cell::new(0) };
        let l = Launches {
            shard,
            across: if self.across_gpus() { Some(across_kernel.configure(grids[0], tpb)?) } else { None },
            lesson: lesson_kernel.configure(grids[1], tpb)?,
        };
        let mut report = RankReport { line, tile, chains, sums: Vec::new(), timing: Vec::new(), pieces: RankPieces::default(), sweep_stopped: None };
        w.checked_sums(&l, &mut report)?;
        if cfg.runs > 0 {
            w.timings(&l, &mut report)?;
        }
        if let Some((lo, hi)) = cfg.sweep.filter(|_| self.across_gpus() && self.gpus > 1 && cfg.runs > 0) {
            w.sweep(lo, hi, (&across_kernel, &lesson_kernel), &mut report)?;
        }
        report.sweep_stopped = self.sweep_stopped.lock().unwrap_or_else(|e| e.into_inner()).clone();
        Ok(report)
    }

    fn exchange(&self) -> &Exchange {
        self.exchange.get().expect("GPU 0's thread made the exchange before the start")
    }

    /// The longest chain of the combined total of `way`, over every GPU this
    /// process drives (other processes' GPUs taken to be no longer).
    fn combined_chain(&self, way: Way) -> u64 {
        let chains: Vec<u64> = self.chains.lock().unwrap_or_else(|e| e.into_inner()).iter().map(|c| c[(way == Way::Nccl) as usize]).collect();
        super::shard::combined_chain(&chains, self.ranks)
    }

    /// What went wrong, in the barrier's words when a GPU gave up there.
    fn diagnose(&self, error: Error) -> Error {
        let Some(ex) = self.exchange.get() else { return error };
        let words = ex.barrier.read();
        if words[REPORT] != REPORT_MAGIC {
            return error;
        }
        let gave_up = words[REPORTER];
        let reached = words[FLAGS + gave_up as usize];
        let missing = (0..self.gpus).filter(|&r| words[FLAGS + r as usize] < reached).collect();
        Error::AcrossGpusTimedOut { kernel: crate::kernels().reduce_multi_gpu.name(), gave_up, missing, seconds: TIMEOUT_NS as f64 / 1e9 }
    }
}

/// Scratch for one GPU's sums: partials, and one output slot per run.
struct Scratch {
    partials: Buffer<f32>,
    /// Path a's combined total (GPU 0), path b's shard total, one per run.
    outs: Buffer<f32>,
    /// Path b's combined total, one per run.
    combined: Buffer<f32>,
}

impl<'a> Worker<'a> {
    fn cfg(&self) -> &MultiConfig {
        self.team.cfg
    }

    fn scratch(&self, blocks: u32) -> Result<Scratch> {
        let slots = (self.cfg().warmups + self.cfg().runs).max(1);
        Ok(Scratch { partials: self.gpu.zeros(blocks as usize)?, outs: self.gpu.zeros(slots)?, combined: self.gpu.zeros(slots)? })
    }

    fn poison(&self, s: &mut Scratch) -> Result<()> {
        self.gpu.fill(&mut s.partials, f32::NAN)?;
        self.gpu.fill(&mut s.outs, f32::NAN)?;
        self.gpu.fill(&mut s.combined, f32::NAN)?;
        if self.local == 0
            && let Some(ex) = self.team.exchange.get()
        {
            ex.totals.fill(f32::NAN);
        }
        Ok(self.gpu.finish()?)
    }

    /// Path a, run `k`: this GPU's launch of the sum across GPUs.
    fn across(&self, l: &Launches<'_>, input: &DeviceInput, s: &mut Scratch, k: usize) -> Result<()> {
        let launch = l.across.as_ref().expect("path a runs only within one process");
        let ex = self.team.exchange();
        let meeting = Meeting { barrier: ex.barrier.out(), totals: ex.totals.out(), rank: self.local, gpus: self.team.gpus };
        let blocks = launch.blocks() as usize;
        launch.sum_across(input, s.partials.slice_mut(..blocks), s.outs.slice_mut(k..k + 1), meeting)
    }

    /// Path b, run `k`: the lesson's sum of this GPU's shard, then the all-reduce.
    fn nccl(&self, l: &Launches<'_>, input: &DeviceInput, s: &mut Scratch, k: usize) -> Result<()> {
        let comm = self.comm.as_ref().expect("path b runs with a communicator");
        let blocks = l.lesson.blocks() as usize;
        l.lesson.sum(input, s.partials.slice_mut(..blocks), s.outs.slice_mut(k..k + 1))?;
        Ok(self.gpu.all_reduce_sum(comm, &s.outs.slice(k..k + 1), s.combined.slice_mut(k..k + 1))?)
    }

    /// Each way once, from poisoned buffers, checked block by block.
    fn checked_sums(&self, l: &Launches<'_>, report: &mut RankReport) -> Result<()> {
        let (team, gpu, shard) = (self.team, self.gpu, l.shard);
        if self.local == 0 {
            (team.step)("summing the shards both ways");
        }
        let xs = reference::fill_range(shard.first, shard.len)?;
        let reference = Reference::new(&xs);
        let input = DeviceInput::upload(gpu, &xs)?;
        let mut s = self.scratch(l.blocks())?;
        if let Some(across) = &l.across {
            self.poison(&mut s)?;
            team.meet.wait(self.local, "the sum across GPUs")?;
            if team.cfg.never_launch != Some(self.local) {
                self.across(l, &input, &mut s, 0).and_then(|()| Ok(gpu.finish()?)).map_err(|e| team.diagnose(e))?;
            }
            team.meet.wait(self.local, "the end of the sum across GPUs")?;
            let ex = team.exchange();
            let generation = ex.barrier.read()[FLAGS + self.local as usize];
            let total = ex.totals.read()[((generation % 2) * team.gpus + self.local) as usize];
            let combined = (self.rank == 0).then(|| gpu.read_view(&s.outs.slice(0..1))).transpose()?.map(|v| v[0]);
            report.sums.push((Way::AcrossGpus, self.gpu_sum(&reference, &s, across.blocks(), total, report.chains[0], combined)?));
            team.meet.wait(self.local, "the check of the sum across GPUs")?;
        }
        if self.comm.is_some() {
            self.poison(&mut s)?;
            team.meet.wait(self.local, "the NCCL sum")?;
            self.nccl(l, &input, &mut s, 0)?;
            gpu.finish()?;
            let total = gpu.read_view(&s.outs.slice(0..1))?[0];
            let combined = gpu.read_view(&s.combined.slice(0..1))?[0];
            report.sums.push((Way::Nccl, self.gpu_sum(&reference, &s, l.lesson.blocks(), total, report.chains[1], Some(combined))?));
        }
        Ok(())
    }

    fn gpu_sum(&self, reference: &Reference<'_>, s: &Scratch, blocks: u32, total: f32, chain: u64, combined: Option<f32>) -> Result<GpuSum> {
        let tpb = self.cfg().threads_per_block;
        let partials = self.gpu.read_view(&s.partials.slice(..blocks as usize))?;
        Ok(GpuSum {
            rank: self.rank,
            total: reference.check_total(total, chain),
            stages: reference.check_stages(&partials, total, tpb, self.tile),
            blocks,
            combined,
        })
    }

    /// `runs` timed runs of `work` (after `warmups` untimed ones), every GPU
    /// of the process starting each batch together behind the gate; each
    /// run's GPU time on this GPU.
    fn together(&self, warmups: usize, runs: usize, work: &mut dyn FnMut(usize) -> Result<()>) -> Result<Vec<f64>> {
        let (team, gpu) = (self.team, self.gpu);
        for k in 0..warmups {
            work(k)?;
        }
        let gated = team.across_gpus() && !gpu.info.emulated;
        let mut times = Vec::with_capacity(runs);
        while times.len() < runs {
            let done = times.len();
            let batch = (runs - done).min(RUNS_PER_GATE);
            let ex = team.exchange.get().filter(|_| gated);
            match ex {
                Some(ex) => {
                    gpu.cooperative_kernel(&crate::kernels().multi_grid_barrier)?.configure(1, 32)?.meet(ex.gate.out(), self.local, team.gpus + 1)?;
                }
                None => crate::timing::hold(gpu, HOLD)?,
            }
            let queued = gpu.queue_timed(batch, &mut |k| (work(warmups + done + k)).map_err(Into::into))?;
            team.meet.wait(self.local, "the timed runs")?;
            self.gates.set(self.gates.get() + 1);
            if let Some(ex) = ex.filter(|_| self.local == 0) {
                ex.gate.store_release(FLAGS + team.gpus as usize, self.gates.get());
            }
            times.extend(gpu.queued_times(queued).map_err(|e| team.diagnose(e.into()))?);
        }
        Ok(times)
    }

    /// This GPU alone: runs queued behind a hold, no other GPU waited for.
    fn alone(&self, warmups: usize, runs: usize, work: &mut dyn FnMut(usize) -> Result<()>) -> Result<Vec<f64>> {
        for k in 0..warmups {
            work(k)?;
        }
        let mut times = Vec::with_capacity(runs);
        while times.len() < runs {
            let done = times.len();
            crate::timing::hold(self.gpu, HOLD)?;
            let queued = self.gpu.queue_timed((runs - done).min(RUNS_PER_GATE), &mut |k| (work(warmups + done + k)).map_err(Into::into))?;
            times.extend(self.gpu.queued_times(queued)?);
        }
        Ok(times)
    }

    /// How many of the first `made` slots of `values` are outside `bound` of `want`.
    fn wrong(values: &[f32], made: usize, want: f64, bound: f64) -> usize {
        values[..made].iter().filter(|&&v| !check(v, want, bound).pass).count()
    }

    /// Each way timed at the lesson's n, and the pieces on their own.
    fn timings(&self, l: &Launches<'_>, report: &mut RankReport) -> Result<()> {
        if self.local == 0 {
            (self.team.step)("timing each way");
        }
        let input = DeviceInput::lesson_range(self.gpu, l.shard.first, l.shard.len)?;
        self.time_ways(self.cfg().n, l, &input, false, report)?;
        drop(input);
        if self.rank == 0 {
            report.timing.extend(self.time_one_gpu(self.cfg().n, false)?);
        }
        self.team.meet.wait(self.local, "the one-GPU timing")?;
        self.time_pieces(l, &mut report.pieces)
    }

    /// Paths a and b on this GPU's shard of `n` (made on the device as `input`).
    fn time_ways(&self, n: usize, l: &Launches<'_>, input: &DeviceInput, sweep: bool, report: &mut RankReport) -> Result<()> {
        let (team, gpu) = (self.team, self.gpu);
        let (warmups, runs) = (self.cfg().warmups, self.cfg().runs);
        let made = warmups + runs;
        let shard_sum = fill_range_sum(l.shard.first, l.shard.len);
        let whole = fill_range_sum(0, n);
        let mut s = self.scratch(l.blocks())?;
        if l.across.is_some() {
            self.poison(&mut s)?;
            team.meet.wait(self.local, "the timed sums across GPUs")?;
            let times = self.together(warmups, runs, &mut |k| self.across(l, input, &mut s, k))?;
            gpu.finish().map_err(|e| team.diagnose(e.into()))?;
            let (wrong, checked) = if self.rank == 0 {
                let bound = error_bound(team.combined_chain(Way::AcrossGpus), whole);
                (Self::wrong(&gpu.read(&s.outs)?, made, whole, bound), made)
            } else {
                (0, 0)
            };
            report.timing.push(Timed { way: Way::AcrossGpus, n, sweep, times, wrong_totals: wrong, checked });
        }
        if self.comm.is_some() {
            self.poison(&mut s)?;
            team.meet.wait(self.local, "the timed NCCL sums")?;
            let times = self.together(warmups, runs, &mut |k| self.nccl(l, input, &mut s, k))?;
            gpu.finish()?;
            let own = error_bound(shard_chain(l.shard.len, l.lesson.blocks(), self.cfg().threads_per_block, self.tile), shard_sum);
            let bound = error_bound(team.combined_chain(Way::Nccl), whole);
            let wrong = Self::wrong(&gpu.read(&s.outs)?, made, shard_sum, own) + Self::wrong(&gpu.read(&s.combined)?, made, whole, bound);
            report.timing.push(Timed { way: Way::Nccl, n, sweep, times, wrong_totals: wrong, checked: 2 * made });
        }
        Ok(())
    }

    /// The lesson's cooperative sum of all `n` floats on this GPU alone
    /// (nothing when n = 0, as the lesson launches nothing then).
    fn time_one_gpu(&self, n: usize, sweep: bool) -> Result<Option<Timed>> {
        let gpu = self.gpu;
        let tpb = self.cfg().threads_per_block;
        let kernel = gpu.cooperative_kernel(&crate::kernels().reduce_cooperative_grid)?;
        let blocks = cooperative_grid(n, tpb, kernel.limits(tpb)?.capacity());
        if blocks == 0 {
            return Ok(None);
        }
        let launch = kernel.configure(blocks, tpb)?;
        let input = DeviceInput::lesson_range(gpu, 0, n)?;
        let mut s = self.scratch(blocks)?;
        self.poison(&mut s)?;
        let (warmups, runs) = (self.cfg().warmups, self.cfg().runs);
        let times = self.alone(warmups, runs, &mut |k| launch.sum(&input, s.partials.slice_mut(..), s.outs.slice_mut(k..k + 1)))?;
        let whole = fill_range_sum(0, n);
        let bound = error_bound(shard_chain(n, blocks, tpb, self.tile), whole);
        let wrong = Self::wrong(&gpu.read(&s.outs)?, warmups + runs, whole, bound);
        Ok(Some(Timed { way: Way::OneGpu, n, sweep, times, wrong_totals: wrong, checked: warmups + runs }))
    }

    /// The barrier across GPUs alone (bounded and not), an empty cooperative
    /// launch of the same grid, and the all-reduce of one float.
    fn time_pieces(&self, l: &Launches<'_>, pieces: &mut RankPieces) -> Result<()> {
        let (team, gpu) = (self.team, self.gpu);
        let (warmups, runs) = (self.cfg().warmups, self.cfg().runs);
        if let Some(across) = &l.across {
            let (blocks, tpb) = (across.blocks(), across.threads_per_block());
            let ex = team.exchange();
            let words = &ex.barrier;
            let bounded = gpu.cooperative_kernel(&crate::kernels().multi_grid_barrier)?;
            let launch = bounded.configure(blocks, tpb)?;
            pieces.barrier = Some(self.together(warmups, runs, &mut |_| launch.meet(words.out(), self.local, team.gpus))?);
            gpu.finish().map_err(|e| team.diagnose(e.into()))?;
            // Only now that the bounded barrier met on every GPU.
            team.meet.wait(self.local, "the unbounded barrier")?;
            let unbounded = gpu.cooperative_kernel(&crate::kernels().multi_grid_barrier_unbounded)?;
            let launch = unbounded.configure(blocks, tpb)?;
            pieces.barrier_unbounded = Some(self.together(warmups, runs, &mut |_| launch.meet(words.out(), self.local, team.gpus))?);
            let empty = gpu.cooperative_kernel(&crate::kernels().empty_cooperative)?;
            let launch = empty.configure(blocks, tpb)?;
            pieces.empty_launch = Some(self.together(warmups, runs, &mut |_| launch.launch_empty())?);
            let launch = bounded.configure(1, 32)?;
            pieces.barrier_one_block = Some(self.together(warmups, runs, &mut |_| launch.meet(words.out(), self.local, team.gpus))?);
            gpu.finish().map_err(|e| team.diagnose(e.into()))?;
            let launch = empty.configure(1, 32)?;
            pieces.empty_launch_one_block = Some(self.together(warmups, runs, &mut |_| launch.launch_empty())?);
        }
        if let Some(comm) = &self.comm {
            let mut one = gpu.zeros::<f32>(1)?;
            gpu.fill(&mut one, 1.0)?;
            let mut sum = gpu.zeros::<f32>(1)?;
            let queued = super::ALL_REDUCE_RUNS.max(runs);
            let mut all_reduce = || gpu.all_reduce_sum(comm, &one.slice(..), sum.slice_mut(..));
            pieces.all_reduce_queued = Some(self.together(warmups, queued, &mut |_| Ok(all_reduce()?))?);
            let mut waited = Vec::with_capacity(runs);
            for _ in 0..runs {
                gpu.finish()?;
                team.meet.wait(self.local, "the waited all-reduce")?;
                waited.extend(gpu.time_waited(1, &mut |_| all_reduce())?);
            }
            pieces.all_reduce_waited = Some(waited);
            let got = gpu.read(&sum)?[0];
            if got != team.ranks as f32 {
                return Err(Error::Launch(L::Nccl {
                    call: "ncclAllReduce",
                    error: format!("one float of 1.0 from each of {} ranks summed to {got}", team.ranks),
                }));
            }
        }
        Ok(())
    }

    /// One GPU against every GPU at n = 2^lo .. 2^hi, the inputs made on the
    /// device; stops where one GPU cannot hold n.
    fn sweep(
        &self,
        lo: u32,
        hi: u32,
        kernels: (&'a CooperativeKernel<'a, MultiParams>, &'a CooperativeKernel<'a, SumParams>),
        report: &mut RankReport,
    ) -> Result<()> {
        let team = self.team;
        let tpb = self.cfg().threads_per_block;
        let (across, lesson) = kernels;
        let (across_capacity, lesson_capacity) = (across.limits(tpb)?.capacity(), lesson.limits(tpb)?.capacity());
        for log2 in lo..=hi {
            let n = 1usize << log2;
            if self.local == 0 {
                (team.step)(&format!("sweep: n = 2^{log2}"));
                let (need, free) = (device_bytes(n)?, self.gpu.free_memory()?);
                if need + SWEEP_MARGIN > free {
                    *team.sweep_stopped.lock().unwrap_or_else(|e| e.into_inner()) =
                        Some(format!("stopped before n = 2^{log2}: one GPU would hold {:.1} GiB and has {:.1} GiB free", need as f64 / GIB, free as f64 / GIB));
                }
            }
            team.meet.wait(self.local, "the next size")?;
            if team.sweep_stopped.lock().unwrap_or_else(|e| e.into_inner()).is_some() {
                break;
            }
            if self.rank == 0 {
                report.timing.extend(self.time_one_gpu(n, true)?);
            }
            team.meet.wait(self.local, "the one-GPU sum of the sweep")?;
            let shard = super::shards(n, team.ranks)[self.rank as usize];
            let l = Launches {
                shard,
                across: Some(across.configure(grid(shard.len, tpb, across_capacity), tpb)?),
                lesson: lesson.configure(grid(shard.len, tpb, lesson_capacity), tpb)?,
            };
            team.chains.lock().unwrap_or_else(|e| e.into_inner())[self.local as usize] = [
                shard_chain(shard.len, l.across.as_ref().map_or(1, |a| a.blocks()), tpb, self.tile),
                shard_chain(shard.len, l.lesson.blocks(), tpb, self.tile),
            ];
            let input = DeviceInput::lesson_range(self.gpu, shard.first, shard.len)?;
            self.time_ways(n, &l, &input, true, report)?;
        }
        Ok(())
    }
}

const GIB: f64 = (1u64 << 30) as f64;
