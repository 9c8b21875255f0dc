//! The level between block and grid: the lesson's sum with a cluster stage
//! (`gpu::kernels::reduce_cluster_grid`), on compute capability 9.0 or the
//! emulated H200. Every run starts from poisoned buffers and is checked
//! cluster by cluster against the double reference.

use crate::device::{Buffer, Gpu};
use crate::error::Result;
use crate::kernels::StageParams;
use crate::launch::SumParams;
use crate::launch::prelude::*;
use crate::launch::{ClusterKernel, ClusterLimits, ClusterShape, Input, Kernel};
use crate::reference::{self, Reference, StageChecks, SumCheck};
use crate::sizing::{Limits, ordinary_blocks};
use cg_kernel::kernels::{Cluster, GridSync, KernelDef, NoGridSync};
use serde::Serialize;

/// The cluster sizes the lesson's ceiling table shows: the portable ones, and 16 (non-portable).
pub const TABLE_SIZES: [u32; 5] = [1, 2, 4, 8, 16];

/// The cluster size the lesson's sums use: the first size whose ceiling
/// falls below the block ceiling on the H200 (992 of 1,056 blocks).
pub const LESSON_CLUSTER: ClusterShape = ClusterShape { blocks: 4, non_portable: false };

/// A cluster size as the lesson asks for it: non-portable past 8.
pub fn shape(blocks: u32) -> ClusterShape {
    ClusterShape { blocks, non_portable: blocks > cg_emulator::MAX_PORTABLE_CLUSTER }
}

/// Which sum with a cluster stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClusterPath {
    /// One cooperative launch with clusters: block sums, cluster stage, `grid.sync()`, block 0 adds the cluster partials.
    OneLaunch,
    /// An ordinary cluster launch writes one partial per cluster; a second launch of one block adds them.
    TwoLaunches,
}

impl ClusterPath {
    pub fn label(self) -> &'static str {
        match self {
            ClusterPath::OneLaunch => "clusters, one cooperative launch",
            ClusterPath::TwoLaunches => "clusters, two launches",
        }
    }
}

/// One row of the ceiling table.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct CeilingRow {
    pub cluster: u32,
    pub clusters: u32,
    pub blocks: u32,
    pub non_portable: bool,
}

/// A checked run of a sum with a cluster stage.
#[derive(Clone, Debug, Serialize)]
pub struct ClusterRun {
    pub path: ClusterPath,
    pub blocks: u32,
    pub cluster: u32,
    pub total: SumCheck,
    /// `bad_partials` numbers clusters.
    pub stages: StageChecks,
}

impl ClusterRun {
    pub fn pass(&self) -> bool {
        self.total.pass && self.stages.pass()
    }

    /// The cluster partials' check in words.
    pub fn partials_detail(&self) -> String {
        let clusters = self.blocks / self.cluster;
        match &self.stages.first_bad {
            Some(c) => format!(
                "{} of {clusters} cluster partials outside their bounds, first cluster {}: {} vs {:.6}",
                self.stages.bad_partials.len(),
                self.stages.bad_partials[0],
                c.value,
                c.reference
            ),
            None if self.cluster == 1 => {
                format!("{}, each within the bound of its block's elements", crate::text::plural(clusters, "cluster partial", "cluster partials"))
            }
            None => format!(
                "{}, each within the bound of its {} blocks' elements",
                crate::text::plural(clusters, "cluster partial", "cluster partials"),
                self.cluster
            ),
        }
    }
}

/// The cluster kernels, loaded, for blocks of `threads_per_block`.
pub struct ClusterSums<'g> {
    gpu: &'g Gpu,
    one_launch: ClusterKernel<'g, SumParams, GridSync>,
    staged: ClusterKernel<'g, StageParams, NoGridSync>,
    second: Kernel<'g, StageParams>,
    pub threads_per_block: u32,
    pub tile: u32,
}

/// Buffers the cluster sums write: one partial per cluster, and totals.
pub struct ClusterScratch {
    pub partials: Buffer<f32>,
    pub out: Buffer<f32>,
}

impl<'g> ClusterSums<'g> {
    /// The lesson's cluster kernels.
    pub fn load(gpu: &'g Gpu, threads_per_block: u32) -> Result<ClusterSums<'g>> {
        Self::load_with(gpu, threads_per_block, crate::kernels().reduce_cluster_grid, crate::kernels().reduce_clusters_to_partials)
    }

    /// The same sums with other kernels in their places (mutants, to show the checks catch them).
    pub fn load_with(
        gpu: &'g Gpu,
        threads_per_block: u32,
        one_launch: KernelDef<SumParams, Cluster<GridSync>>,
        staged: KernelDef<StageParams, Cluster<NoGridSync>>,
    ) -> Result<ClusterSums<'g>> {
        Self::load_in(gpu, threads_per_block, one_launch, staged, None)
    }

    /// The same sums with the one-launch kernel taken from `module` under
    /// `name`: the C++ twin (`host/cpp/cluster.cu`), built by nvcc, launched
    /// through this program's launch path.
    ///
    /// # Safety
    /// That kernel has `reduce_cluster_grid`'s parameters, shared memory and
    /// contract (a cluster launch that calls `grid.sync()`).
    pub unsafe fn load_foreign(gpu: &'g Gpu, threads_per_block: u32, module: &'g crate::device::Module, name: &'static str) -> Result<ClusterSums<'g>> {
        // SAFETY: the caller's contract.
        let one_launch = unsafe { crate::kernels().reduce_cluster_grid.renamed(name) };
        Self::load_in(gpu, threads_per_block, one_launch, crate::kernels().reduce_clusters_to_partials, Some(module))
    }

    fn load_in(
        gpu: &'g Gpu,
        threads_per_block: u32,
        one_launch: KernelDef<SumParams, Cluster<GridSync>>,
        staged: KernelDef<StageParams, Cluster<NoGridSync>>,
        module: Option<&'g crate::device::Module>,
    ) -> Result<ClusterSums<'g>> {
        let tile = one_launch.tile().unwrap_or(32);
        Ok(ClusterSums {
            gpu,
            one_launch: match module {
                Some(m) => gpu.cluster_kernel_in(m, &one_launch)?,
                None => gpu.cluster_kernel(&one_launch)?,
            },
            staged: gpu.cluster_kernel(&staged)?,
            second: gpu.kernel(&crate::kernels().reduce_partials_to_total)?,
            threads_per_block,
            tile,
        })
    }

    /// The one-launch kernel's block ceiling (no clusters).
    pub fn block_limits(&self) -> Result<Limits> {
        Ok(self.one_launch.limits(self.threads_per_block)?)
    }

    /// How many clusters of `cluster` blocks the one-launch kernel may have resident at once.
    pub fn limits(&self, cluster: ClusterShape) -> Result<ClusterLimits> {
        Ok(self.one_launch.cluster_limits(self.threads_per_block, cluster)?)
    }

    /// The ceiling table: each size of [`TABLE_SIZES`] the device takes.
    pub fn ceilings(&self) -> Result<Vec<CeilingRow>> {
        let mut rows = Vec::new();
        for size in TABLE_SIZES {
            match self.limits(shape(size)) {
                Ok(l) => rows.push(CeilingRow { cluster: size, clusters: l.clusters, blocks: l.capacity(), non_portable: shape(size).non_portable }),
                // A device without non-portable sizes refuses 16: the table shows the sizes it takes.
                Err(_) if shape(size).non_portable => {}
                Err(e) => return Err(e),
            }
        }
        Ok(rows)
    }

    /// The grid the sums use for `n` elements: the lesson's (one block per
    /// `threads_per_block` elements) in whole clusters, at most the clusters
    /// resident at once.
    pub fn grid(&self, n: usize, cluster: ClusterShape) -> Result<u32> {
        let capacity = self.limits(cluster)?.capacity() as u64;
        let k = cluster.blocks as u64;
        Ok(ordinary_blocks(n, self.threads_per_block).div_ceil(k).saturating_mul(k).clamp(k, capacity) as u32)
    }

    /// Buffers for sums on grids up to `blocks`, with `slots` totals.
    pub fn scratch(&self, blocks: u32, slots: usize) -> Result<ClusterScratch> {
        Ok(ClusterScratch { partials: self.gpu.zeros(blocks.max(1) as usize)?, out: self.gpu.zeros(slots.max(1))? })
    }

    /// Runs `path` on `blocks` blocks in clusters of `cluster`, its total into `out[slot]`.
    pub fn run(&self, path: ClusterPath, blocks: u32, cluster: ClusterShape, input: &impl Input, s: &mut ClusterScratch, slot: usize) -> Result<()> {
        let (tpb, clusters) = (self.threads_per_block, (blocks / cluster.blocks) as usize);
        let slot = slot..slot + 1;
        match path {
            ClusterPath::OneLaunch => self.one_launch.configure(blocks, tpb, cluster)?.sum(input, s.partials.slice_mut(..clusters), s.out.slice_mut(slot)),
            ClusterPath::TwoLaunches => {
                self.staged.configure(blocks, tpb, cluster)?.partials(input, s.partials.slice_mut(..clusters))?;
                self.second.reduce(1, tpb, &s.partials.slice(..clusters), s.out.slice_mut(slot))
            }
        }
    }

    /// Runs `path` once from poisoned (NaN) partials and total, and checks
    /// every cluster partial and the total against the reference.
    pub fn checked(
        &self,
        path: ClusterPath,
        blocks: u32,
        cluster: ClusterShape,
        input: &impl Input,
        reference: &Reference,
        s: &mut ClusterScratch,
    ) -> Result<ClusterRun> {
        self.gpu.fill(&mut s.partials, f32::NAN)?;
        self.gpu.fill(&mut s.out, f32::NAN)?;
        self.run(path, blocks, cluster, input, s, 0)?;
        let clusters = (blocks / cluster.blocks) as usize;
        let total = self.gpu.read_view(&s.out.slice(..1))?[0];
        let partials = self.gpu.read_view(&s.partials.slice(..clusters))?;
        let k = cluster.blocks;
        let stages = reference.check_cluster_stages(&partials, total, blocks, self.threads_per_block, self.tile, k);
        let chain = self.chain(reference.xs.len(), blocks, cluster);
        Ok(ClusterRun { path, blocks, cluster: k, total: reference.check_total(total, chain), stages })
    }

    /// Times `path` as `timing::time_runs` does, each run writing its total
    /// to its own slot of `s.out` (poisoned first, at least
    /// [`Repeats::slots`](crate::timing::Repeats::slots) of them), every one
    /// checked against `reference`.
    #[allow(clippy::too_many_arguments, reason = "a launch, its input and its check, as `checked` takes them, and the repeats")]
    pub fn time(
        &self,
        path: ClusterPath,
        blocks: u32,
        cluster: ClusterShape,
        input: &impl Input,
        reference: &Reference,
        s: &mut ClusterScratch,
        repeats: crate::timing::Repeats,
    ) -> Result<ClusterTiming> {
        self.gpu.fill(&mut s.out, f32::NAN)?;
        let timing = crate::timing::time_runs(self.gpu, repeats, &mut |k| self.run(path, blocks, cluster, input, s, k))?;
        let checked = if self.gpu.info.emulated { repeats.warmups + repeats.runs } else { repeats.slots() };
        let chain = self.chain(reference.xs.len(), blocks, cluster);
        let wrong_totals = self.gpu.read(&s.out)?[..checked].iter().filter(|&&t| !reference.check_total(t, chain).pass).count();
        Ok(ClusterTiming { path, timing, wrong_totals, checked })
    }

    /// The longest chain of additions of `path` (both paths add in the same order).
    pub fn chain(&self, n: usize, blocks: u32, cluster: ClusterShape) -> u64 {
        reference::longest_chain_clusters(n, blocks, self.threads_per_block, self.tile, cluster.blocks)
    }
}

/// A cooperative launch of `blocks` blocks in clusters of `cluster` of a
/// kernel with no grid barrier (`cluster_sync_loop` with no barriers), with
/// no check of its size: the device's own answer to a grid past the cluster
/// ceiling (`CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE` on a GPU). Safe at any
/// size, since nothing in it waits for another block.
pub fn probe_cooperative_clusters(gpu: &Gpu, blocks: u32, threads_per_block: u32, cluster: ClusterShape) -> Result<()> {
    let k = gpu.cluster_kernel(&crate::kernels().cluster_sync_loop)?;
    k.probe_cooperative(blocks, threads_per_block, cluster)?;
    Ok(gpu.finish()?)
}

/// One `cluster.sync()`'s cost in µs on `blocks` blocks of
/// `threads_per_block` in clusters of `cluster`, measured as `grid.sync()`'s
/// is (`timing::per_barrier`).
pub fn cluster_sync_cost(gpu: &Gpu, blocks: u32, threads_per_block: u32, cluster: ClusterShape) -> Result<f64> {
    let k = gpu.cluster_kernel(&crate::kernels().cluster_sync_loop)?;
    let launch = k.configure(blocks, threads_per_block, cluster)?;
    crate::timing::per_barrier(gpu, 7, &mut |b| launch.barriers(b))
}

/// Why clusters are not shown on this device, in one line, or `None` where they are.
pub fn unavailable(gpu: &Gpu) -> Option<String> {
    if gpu.info.clusters {
        return None;
    }
    let h200 = crate::invocation::command("--gpu h200", true);
    Some(match gpu.info.compute_capability {
        Some((major, minor)) => format!(
            "thread-block clusters need compute capability 9.0 (Hopper) or later; this GPU is {major}.{minor}: `{h200}` runs this section on an emulated H200"
        ),
        None => format!("thread-block clusters need compute capability 9.0; the emulated T4 is 7.5: `{h200}` runs this section on an emulated H200"),
    })
}

/// A cooperative launch probed with clusters: the blocks, and the device's answer.
#[derive(Clone, Debug, Serialize)]
pub struct ClusterProbe {
    pub blocks: u32,
    pub cluster: u32,
    /// `None` when it ran; else the driver's error name.
    pub error: Option<String>,
}

/// One path's timings, and whether every timed run's total was right.
#[derive(Clone, Debug, Serialize)]
pub struct ClusterTiming {
    pub path: ClusterPath,
    pub timing: crate::timing::Timing,
    pub wrong_totals: usize,
    pub checked: usize,
}

/// The lesson's cluster section ("The level between block and grid").
#[derive(Clone, Debug, Serialize)]
pub struct ClusterSection {
    /// Why the device shows no clusters (then nothing else is filled in).
    pub unavailable: Option<String>,
    pub kernel: &'static str,
    pub threads_per_block: u32,
    /// The kernel's block ceiling, and its arithmetic (`8 blocks/SM x 132 SMs`).
    pub block_ceiling: u32,
    pub block_ceiling_product: String,
    pub ceilings: Vec<CeilingRow>,
    /// The cluster size and grid the sums use.
    pub cluster: u32,
    pub blocks: u32,
    /// The host's refusal of a grid one too many in clusters of
    /// [`LESSON_CLUSTER`]: the block ceiling where that is above the
    /// cluster ceiling (the H200), else one cluster more than fit.
    pub refusal: Option<String>,
    /// The device's own answers, with no check in front: that grid, then the cluster ceiling.
    pub probes: Vec<ClusterProbe>,
    pub runs: Vec<ClusterRun>,
    pub timing: Vec<ClusterTiming>,
    /// One `cluster.sync()` on the sums' grid, µs (a GPU only).
    pub cluster_sync_us: Option<f64>,
}

impl ClusterSection {
    fn unavailable(kernel: &'static str, threads_per_block: u32, why: String) -> ClusterSection {
        ClusterSection {
            unavailable: Some(why),
            kernel,
            threads_per_block,
            block_ceiling: 0,
            block_ceiling_product: String::new(),
            ceilings: Vec::new(),
            cluster: LESSON_CLUSTER.blocks,
            blocks: 0,
            refusal: None,
            probes: Vec::new(),
            runs: Vec::new(),
            timing: Vec::new(),
            cluster_sync_us: None,
        }
    }
}

/// Runs the cluster section on `gpu`: the ceiling table, the refusal of the
/// block ceiling, both sums checked, and (with `repeats.runs > 0`) timed.
pub fn section(gpu: &Gpu, threads_per_block: u32, input: &impl Input, reference: &Reference, repeats: crate::timing::Repeats) -> Result<ClusterSection> {
    let kernel = crate::kernels().reduce_cluster_grid.name();
    if let Some(why) = unavailable(gpu) {
        return Ok(ClusterSection::unavailable(kernel, threads_per_block, why));
    }
    let sums = ClusterSums::load(gpu, threads_per_block)?;
    let limits = sums.block_limits()?;
    let ceilings = sums.ceilings()?;
    let cluster = LESSON_CLUSTER;
    let n = reference.xs.len();
    let blocks = if n == 0 { 0 } else { sums.grid(n, cluster)? };
    let block_ceiling = limits.capacity();
    let block_ceiling_product = crate::text::per_sm_times_sms(limits.blocks_per_sm, limits.sms);
    let capacity = sums.limits(cluster)?.capacity();
    // One grid too many: the block ceiling where clusters hold fewer blocks
    // (the H200), else one cluster more than fit.
    let too_many = if block_ceiling > capacity { block_ceiling } else { capacity + cluster.blocks };
    let mut scratch = sums.scratch(too_many.max(blocks), repeats.slots())?;
    let refusal = sums.run(ClusterPath::OneLaunch, too_many, cluster, input, &mut scratch, 0).err().map(|e| e.to_string());
    let probes = [too_many, capacity]
        .into_iter()
        .map(|b| ClusterProbe {
            blocks: b,
            cluster: cluster.blocks,
            error: probe_cooperative_clusters(gpu, b, threads_per_block, cluster).err().map(|e| e.driver_name().unwrap_or_else(|| e.to_string())),
        })
        .collect();
    let mut s = ClusterSection {
        unavailable: None,
        kernel,
        threads_per_block,
        block_ceiling,
        block_ceiling_product,
        ceilings,
        cluster: cluster.blocks,
        blocks,
        refusal,
        probes,
        runs: Vec::new(),
        timing: Vec::new(),
        cluster_sync_us: None,
    };
    if blocks == 0 {
        return Ok(s);
    }
    for path in [ClusterPath::OneLaunch, ClusterPath::TwoLaunches] {
        s.runs.push(sums.checked(path, blocks, cluster, input, reference, &mut scratch)?);
    }
    if repeats.runs > 0 {
        for path in [ClusterPath::OneLaunch, ClusterPath::TwoLaunches] {
            s.timing.push(sums.time(path, blocks, cluster, input, reference, &mut scratch, repeats)?);
        }
        if !gpu.info.emulated {
            s.cluster_sync_us = Some(cluster_sync_cost(gpu, blocks, threads_per_block, cluster)?);
        }
    }
    Ok(s)
}
