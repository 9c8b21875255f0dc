//! The lesson's safe launches: each checks the buffers against its kernel's
//! contract, then makes the one `unsafe` launch call. They are traits on the
//! launcher's types (`use host::launch::*` brings them in).

use super::Input;
use crate::device::{Gpu, SharedOut, View, ViewMut};
use crate::error::{Error, Result};
use crate::kernels::StageParams;
use cg_kernel::kernels::{GridSync, NoGridSync};
use cg_kernel::mem::{In, Out};
use cg_launcher::launch::{ClusterKernel, ClusterLaunch, ClusterShape, CooperativeLaunch, Kernel, ensure_len};
use serde::Serialize;

pub use crate::kernels::{LastBlockParams, MultiParams, SumParams};

/// A sum of an input into `out[0]` in one launch, one partial per block
/// (per cluster, for a cluster launch) in `partials`.
pub trait Sum {
    /// Sums `input` into `out[0]`.
    fn sum(&self, input: &impl Input, partials: ViewMut<'_, f32>, out: ViewMut<'_, f32>) -> Result<()>;
}

impl Sum for CooperativeLaunch<'_, '_, SumParams> {
    fn sum(&self, input: &impl Input, partials: ViewMut<'_, f32>, out: ViewMut<'_, f32>) -> Result<()> {
        let def = self.def();
        let view = input.view();
        ensure_len(def.name(), "the guard after the input", def.overread(self.threads_per_block()), input.guard())?;
        ensure_len(def.name(), "partials", self.blocks() as usize, partials.len())?;
        ensure_len(def.name(), "out", 1, out.len())?;
        let n = view.len();
        // SAFETY: the kernel reads input[..n + overread], which the guard
        // covers, and writes partials[..blocks] and out[0], checked above.
        Ok(unsafe { self.launch((&view, partials, out, n)) }?)
    }
}

impl Sum for ClusterLaunch<'_, '_, SumParams, GridSync> {
    fn sum(&self, input: &impl Input, partials: ViewMut<'_, f32>, out: ViewMut<'_, f32>) -> Result<()> {
        let view = input.view();
        self.ensure("partials", self.clusters() as usize, partials.len())?;
        self.ensure("out", 1, out.len())?;
        let n = view.len();
        // SAFETY: the kernel reads input[..n] and writes partials[..clusters] and out[0], checked above.
        Ok(unsafe { self.launch((&view, partials, out, n)) }?)
    }
}

/// The first stage of the two-stage cluster sum.
pub trait ClusterPartials {
    /// Sums `input` into one partial per cluster, `partials[cluster]`.
    fn partials(&self, input: &impl Input, partials: ViewMut<'_, f32>) -> Result<()>;
}

impl ClusterPartials for ClusterLaunch<'_, '_, StageParams, NoGridSync> {
    fn partials(&self, input: &impl Input, partials: ViewMut<'_, f32>) -> Result<()> {
        let view = input.view();
        self.ensure("partials", self.clusters() as usize, partials.len())?;
        let n = view.len();
        // SAFETY: the kernel reads input[..n] and writes partials[..clusters], checked above.
        Ok(unsafe { self.launch((&view, partials, n)) }?)
    }
}

/// `cluster_sync_loop` launched cooperatively with no check against the cluster ceiling.
pub trait ProbeCooperative {
    /// A cooperative launch of `blocks` blocks in clusters of `cluster`,
    /// with no barrier and no check of the grid against the cluster ceiling:
    /// what the device itself says of the grid. Safe at any size, since the
    /// kernel (`cluster_sync_loop(0)`) waits for nothing.
    fn probe_cooperative(&self, blocks: u32, threads_per_block: u32, cluster: ClusterShape) -> Result<()>;
}

impl ProbeCooperative for ClusterKernel<'_, (u32,), NoGridSync> {
    fn probe_cooperative(&self, blocks: u32, threads_per_block: u32, cluster: ClusterShape) -> Result<()> {
        // SAFETY: the kernel takes one u32 and, with no barriers, touches nothing and waits for no one.
        Ok(unsafe { self.launch_cooperatively(blocks, threads_per_block, cluster, (0u32,)) }?)
    }
}

/// Where the GPUs of a sum across GPUs meet: the barrier's words and the
/// exchanged totals, both in memory every GPU reaches, and this GPU's place.
pub struct Meeting<'a> {
    /// The barrier's words.
    pub barrier: SharedOut<'a, u32>,
    /// Two totals per GPU.
    pub totals: SharedOut<'a, f32>,
    /// This GPU's rank.
    pub rank: u32,
    /// GPUs in the meeting.
    pub gpus: u32,
}

/// This GPU's part of the sum across GPUs.
pub trait SumAcross {
    /// This GPU's part of the sum across GPUs: its shard `input`, one partial
    /// per block, and (on GPU 0) the total into `out[0]`.
    fn sum_across(&self, input: &impl Input, partials: ViewMut<'_, f32>, out: ViewMut<'_, f32>, m: Meeting<'_>) -> Result<()>;
}

impl SumAcross for CooperativeLaunch<'_, '_, MultiParams> {
    fn sum_across(&self, input: &impl Input, partials: ViewMut<'_, f32>, out: ViewMut<'_, f32>, m: Meeting<'_>) -> Result<()> {
        let def = self.def();
        ensure_len(def.name(), "partials", self.blocks() as usize, partials.len())?;
        ensure_len(def.name(), "out", 1, out.len())?;
        ensure_len(def.name(), "totals", 2 * m.gpus as usize, m.totals.len())?;
        ensure_len(def.name(), "barrier", cg_kernel::cg::multi_grid::barrier_words(m.gpus), m.barrier.len())?;
        if m.rank >= m.gpus {
            return Err(Error::RankOutOfRange { flag: "the meeting's rank", rank: m.rank, ranks: m.gpus });
        }
        let view = input.view();
        let n = view.len();
        // SAFETY: the kernel reads input[..n], writes partials[..blocks],
        // out[0], totals[..2 gpus] and the barrier's words, checked above; the
        // caller launches the same kernel on every GPU of the meeting, and
        // keeps the shared memory (`Meeting` borrows it) until they finish.
        Ok(unsafe { self.launch((&view, partials, m.totals, out, m.barrier, m.rank, m.gpus, n)) }?)
    }
}

/// Only the barrier across GPUs (for timing it).
pub trait Meet {
    /// Meets the other GPUs at the barrier across GPUs, once.
    fn meet(&self, barrier: SharedOut<'_, u32>, rank: u32, gpus: u32) -> Result<()>;
}

impl Meet for CooperativeLaunch<'_, '_, (Out<u32>, u32, u32)> {
    fn meet(&self, barrier: SharedOut<'_, u32>, rank: u32, gpus: u32) -> Result<()> {
        ensure_len(self.def().name(), "barrier", cg_kernel::cg::multi_grid::barrier_words(gpus), barrier.len())?;
        // SAFETY: the kernel touches the barrier's words only, checked above,
        // with system-scope atomics; the caller keeps them until it finishes.
        Ok(unsafe { self.launch((barrier, rank, gpus)) }?)
    }
}

/// `barriers` barriers back to back (`grid_sync_loop`, `cluster_sync_loop`).
pub trait Barriers {
    /// `barriers` barriers back to back.
    fn barriers(&self, barriers: u32) -> Result<()>;
}

impl Barriers for CooperativeLaunch<'_, '_, (u32,)> {
    fn barriers(&self, barriers: u32) -> Result<()> {
        // SAFETY: the kernel touches no memory but its grid barrier's.
        Ok(unsafe { self.launch((barriers,)) }?)
    }
}

impl Barriers for ClusterLaunch<'_, '_, (u32,), NoGridSync> {
    fn barriers(&self, barriers: u32) -> Result<()> {
        // SAFETY: the kernel touches no memory.
        Ok(unsafe { self.launch((barriers,)) }?)
    }
}

/// `grid_sync_loop` by the entry of one's choice.
pub trait BarriersBy {
    /// `barriers` grid barriers by the entry whose `grid.sync()` is the
    /// watched barrier, or by the plain one, whatever the grid's size: to
    /// time the barrier a launch of this grid does not choose (GPU only).
    fn barriers_by(&self, barriers: u32, watched: bool) -> Result<()>;
}

impl BarriersBy for CooperativeLaunch<'_, '_, (u32,)> {
    fn barriers_by(&self, barriers: u32, watched: bool) -> Result<()> {
        // SAFETY: as `barriers`; either entry takes the same parameters, and
        // the watched one's barrier memory comes with the launch.
        Ok(unsafe { self.launch_by_entry(watched, (barriers,)) }?)
    }
}

/// `grid_sync_stress`.
pub trait Stress {
    /// `rounds` rounds of write, barrier, read a neighbour's, barrier; each
    /// block's count of wrong reads into `errors`.
    fn stress(&self, slots: ViewMut<'_, u32>, errors: ViewMut<'_, u32>, rounds: u32, skip_first_sync: bool) -> Result<()>;
}

impl Stress for CooperativeLaunch<'_, '_, (Out<u32>, Out<u32>, u32, u32)> {
    fn stress(&self, slots: ViewMut<'_, u32>, errors: ViewMut<'_, u32>, rounds: u32, skip_first_sync: bool) -> Result<()> {
        let name = self.def().name();
        ensure_len(name, "slots", self.blocks() as usize, slots.len())?;
        ensure_len(name, "errors", self.blocks() as usize, errors.len())?;
        // SAFETY: the kernel writes slots[..blocks] and errors[..blocks], checked above.
        Ok(unsafe { self.launch((slots, errors, rounds, skip_first_sync as u32)) }?)
    }
}

/// A cooperative kernel that writes one `u32` per block.
pub trait PerBlock {
    /// Launches it, one `u32` per block into `out`.
    fn per_block(&self, out: ViewMut<'_, u32>) -> Result<()>;
}

impl PerBlock for CooperativeLaunch<'_, '_, (Out<u32>,)> {
    fn per_block(&self, out: ViewMut<'_, u32>) -> Result<()> {
        ensure_len(self.def().name(), "out", self.blocks() as usize, out.len())?;
        // SAFETY: the kernel writes out[..blocks], checked above.
        Ok(unsafe { self.launch((out,)) }?)
    }
}

/// One stage of the two-launch sum.
pub trait Reduce {
    /// Launches `blocks` blocks that each sum their grid-stride share of
    /// `input` (block-stride, for a single block) and write it to `out[block]`.
    fn reduce(&self, blocks: u32, threads_per_block: u32, input: &View<'_, f32>, out: ViewMut<'_, f32>) -> Result<()>;
}

impl Reduce for Kernel<'_, (In<f32>, Out<f32>, usize)> {
    fn reduce(&self, blocks: u32, threads_per_block: u32, input: &View<'_, f32>, out: ViewMut<'_, f32>) -> Result<()> {
        self.check_shape(blocks, threads_per_block)?;
        let def = self.def();
        ensure_len(def.name(), "reads past the input (none allowed here)", def.overread(threads_per_block), 0)?;
        ensure_len(def.name(), "out", blocks as usize, out.len())?;
        let n = input.len();
        // SAFETY: the kernel reads input[..n] and writes out[..blocks], checked above.
        Ok(unsafe { self.launch(blocks, threads_per_block, (input, out, n)) }?)
    }
}

/// `fill_lesson_input`.
pub trait FillLesson {
    /// Writes elements `first .. first + out.len()` of the lesson's input into `out`.
    fn fill_lesson(&self, out: ViewMut<'_, f32>, first: usize) -> Result<()>;
}

impl FillLesson for Kernel<'_, (Out<f32>, usize, usize)> {
    fn fill_lesson(&self, out: ViewMut<'_, f32>, first: usize) -> Result<()> {
        let threads = 256;
        let blocks = crate::sizing::ordinary_blocks(out.len(), threads).clamp(1, self.gpu().info.sms as u64 * 16) as u32;
        let n = out.len();
        // SAFETY: the kernel writes out[..n] and nothing else.
        Ok(unsafe { self.launch(blocks, threads, (out, first, n)) }?)
    }
}

/// A cooperative kernel that takes nothing.
pub trait LaunchEmptyCooperative {
    /// Launches it.
    fn launch_empty(&self) -> Result<()>;
}

impl LaunchEmptyCooperative for CooperativeLaunch<'_, '_, ()> {
    fn launch_empty(&self) -> Result<()> {
        // SAFETY: the kernel takes no parameters and touches no memory.
        Ok(unsafe { self.launch(()) }?)
    }
}

/// A kernel that takes nothing.
pub trait LaunchEmpty {
    /// Launches `blocks` blocks of it.
    fn launch_empty(&self, blocks: u32, threads_per_block: u32) -> Result<()>;
}

impl LaunchEmpty for Kernel<'_, ()> {
    fn launch_empty(&self, blocks: u32, threads_per_block: u32) -> Result<()> {
        // SAFETY: the kernel takes no parameters and touches no memory.
        Ok(unsafe { self.launch(blocks, threads_per_block, ()) }?)
    }
}

/// The last-block sum (`reduce_last_block`).
pub trait LastBlockSum {
    /// Sums `input` into `out[0]` in one ordinary launch of `blocks` blocks,
    /// the last block to finish adding the partials; `ticket` must hold 0
    /// (the kernel leaves it 0).
    fn sum(
        &self,
        blocks: u32,
        threads_per_block: u32,
        input: &View<'_, f32>,
        partials: ViewMut<'_, f32>,
        ticket: ViewMut<'_, u32>,
        out: ViewMut<'_, f32>,
    ) -> Result<()>;
}

impl LastBlockSum for Kernel<'_, LastBlockParams> {
    fn sum(
        &self,
        blocks: u32,
        threads_per_block: u32,
        input: &View<'_, f32>,
        partials: ViewMut<'_, f32>,
        ticket: ViewMut<'_, u32>,
        out: ViewMut<'_, f32>,
    ) -> Result<()> {
        self.check_shape(blocks, threads_per_block)?;
        let name = self.def().name();
        ensure_len(name, "partials", blocks as usize, partials.len())?;
        ensure_len(name, "ticket", 1, ticket.len())?;
        ensure_len(name, "out", 1, out.len())?;
        let n = input.len();
        // SAFETY: the kernel reads input[..n], writes partials[..blocks],
        // ticket[0] and out[0], checked above; the ticket's 0 is the caller's.
        Ok(unsafe { self.launch(blocks, threads_per_block, (input, partials, ticket, out, n)) }?)
    }
}

/// What `probe_cooperative` read on the device.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
pub struct Probe {
    pub is_valid: bool,
    pub num_blocks: u32,
}

/// One row of the `coalesced_threads()` table.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
pub struct CoalescedRecord {
    pub warp: u32,
    pub lane: u32,
    pub group_size: u32,
    pub rank: u32,
}

/// Launches `blocks` blocks of `threads_per_block` of `kernel`
/// (cooperatively if asked) with a zeroed output of `len` words, and reads
/// it back.
///
/// # Safety
/// At this shape the kernel writes nothing but `out[..len]`.
unsafe fn written(kernel: &Kernel<'_, (Out<u32>,)>, blocks: u32, threads_per_block: u32, cooperative: bool, len: usize) -> Result<Vec<u32>> {
    kernel.check_shape(blocks, threads_per_block)?;
    let gpu = kernel.gpu();
    let mut out = gpu.zeros::<u32>(len)?;
    // SAFETY: the caller's contract; the kernel has no grid barrier, so a cooperative launch of it completes.
    unsafe {
        if cooperative {
            kernel.launch_cooperatively(blocks, threads_per_block, (out.slice_mut(..),))?
        } else {
            kernel.launch(blocks, threads_per_block, (out.slice_mut(..),))?
        }
    };
    Ok(gpu.read(&out)?)
}

/// What the cooperative probe read when launched from a graph, and whether
/// the graph's node kept the cooperative attribute.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct GraphProbe {
    pub probe: Probe,
    /// For each kernel node, `CU_LAUNCH_ATTRIBUTE_COOPERATIVE` as read back from the graph.
    pub cooperative_nodes: Vec<bool>,
}

/// The lesson's probes, run on a device.
pub trait Probes {
    fn probe_graph(&self, blocks: u32, threads_per_block: u32) -> Result<GraphProbe>;
    /// Launches the probe (no barrier, so any launch is safe) and returns what
    /// `this_grid()` reported, or the driver's refusal.
    fn probe(&self, blocks: u32, threads_per_block: u32, cooperative: bool) -> Result<Probe>;
    /// Runs `shuffle_out_of_range` on one warp and returns what it wrote.
    fn shuffle_out_of_range(&self) -> Result<Vec<u32>>;
    /// Runs `coalesced_demo` on one block of two warps and returns one row
    /// per thread that took the branch.
    fn coalesced_demo(&self) -> Result<Vec<CoalescedRecord>>;
}

impl Probes for Gpu {
    fn probe_graph(&self, blocks: u32, threads_per_block: u32) -> Result<GraphProbe> {
        let kernel = self.kernel(&crate::kernels().probe_cooperative)?;
        let mut out = self.zeros::<u32>(2)?;
        // SAFETY: the probe writes out[0] and out[1] from one thread and nothing else.
        let graph = self.capture(&mut || unsafe { kernel.launch_cooperatively(blocks, threads_per_block, (out.slice_mut(..),)) })?;
        let cooperative_nodes = self.graph_cooperative_launches(&graph)?;
        // SAFETY: `out`, the one buffer the graph addresses, lives to the end.
        unsafe { self.launch_graph(&graph)? };
        let v = self.read(&out)?;
        Ok(GraphProbe { probe: Probe { is_valid: v[0] != 0, num_blocks: v[1] }, cooperative_nodes })
    }

    /// Launches the probe (no barrier, so any launch is safe) and returns what
    /// `this_grid()` reported, or the driver's refusal.
    fn probe(&self, blocks: u32, threads_per_block: u32, cooperative: bool) -> Result<Probe> {
        // SAFETY: the probe writes out[0] and out[1] from one thread and nothing else.
        let v = unsafe { written(&self.kernel(&crate::kernels().probe_cooperative)?, blocks, threads_per_block, cooperative, 2)? };
        Ok(Probe { is_valid: v[0] != 0, num_blocks: v[1] })
    }

    /// Runs `shuffle_out_of_range` on one warp and returns what it wrote.
    fn shuffle_out_of_range(&self) -> Result<Vec<u32>> {
        // SAFETY: each lane writes its own SHUFFLE_PROBES u32.
        unsafe { written(&self.kernel(&crate::kernels().shuffle_out_of_range)?, 1, 32, false, 32 * crate::kernels().shuffle_probes) }
    }

    /// Runs `coalesced_demo` on one block of two warps and returns one row
    /// per thread that took the branch.
    fn coalesced_demo(&self) -> Result<Vec<CoalescedRecord>> {
        let threads = crate::kernels().coalesced_demo_threads;
        // SAFETY: each thread writes at most its own four u32.
        let words = unsafe { written(&self.kernel(&crate::kernels().coalesced_demo)?, 1, threads, false, 4 * threads as usize)? };
        Ok(words.chunks_exact(4).filter(|r| r[2] != 0).map(|r| CoalescedRecord { warp: r[0], lane: r[1], group_size: r[2], rank: r[3] }).collect())
    }
}
