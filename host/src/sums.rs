//! The lesson's two ways to sum one input, on one grid: two ordinary launches
//! (day 25) or one cooperative launch with `grid.sync()` between the stages;
//! and the fast cooperative sum. Every run starts from poisoned buffers.

use crate::device::{Buffer, Gpu, Module};
use crate::error::Result;
use crate::launch::{CooperativeKernel, Input, Kernel, SumParams};
use crate::reference::{self, Reference, StageChecks, SumCheck};
use crate::sizing::{Limits, cooperative_grid};
use gpu::kernels::{FAST_FLOATS_PER_TRIP, KernelDef, NoGridSync, REDUCE_BLOCKS_TO_PARTIALS, REDUCE_COOPERATIVE_FAST, REDUCE_COOPERATIVE_GRID, REDUCE_PARTIALS_TO_TOTAL};
use gpu::mem::{In, Out};
use serde::Serialize;

type StageParams = (In<f32>, Out<f32>, usize);

/// Which sum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Path {
    /// Day 25: a launch writes the partials, a second launch of one block sums them.
    TwoLaunches,
    /// One cooperative launch, `grid.sync()` between the stages.
    Cooperative,
    /// The fast cooperative sum (`gpu/src/kernels/fast.rs`).
    Fast,
}

impl Path {
    /// How the output names it.
    pub fn label(self) -> &'static str {
        match self {
            Path::TwoLaunches => "two launches",
            Path::Cooperative => "one cooperative launch",
            Path::Fast => "fast cooperative launch",
        }
    }
}

/// The sum kernels, loaded, for blocks of `threads_per_block`.
pub struct Sums<'g> {
    gpu: &'g Gpu,
    stage1: Kernel<'g, StageParams>,
    stage2: Kernel<'g, StageParams>,
    cooperative: CooperativeKernel<'g, SumParams>,
    fast: CooperativeKernel<'g, SumParams>,
    pub threads_per_block: u32,
    /// The tile size the lesson's kernels were built with.
    pub tile: u32,
    /// The cooperative kernel's limits at this block size.
    pub limits: Limits,
    /// The fast cooperative kernel's limits at this block size.
    pub fast_limits: Limits,
}

/// Device buffers sums write: one partial per block, and `slots` totals
/// (one per timed run, so that every run's total can be checked).
pub struct Scratch {
    pub partials: Buffer<f32>,
    pub out: Buffer<f32>,
}

/// A run's results, read back.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Run {
    pub path: Path,
    pub blocks: u32,
    pub total: SumCheck,
    /// Stage-by-stage checks (the lesson's two paths; the fast path's blocks
    /// read a different pattern, so only its total is checked).
    pub stages: Option<StageChecks>,
}

impl Run {
    pub fn pass(&self) -> bool {
        self.total.pass && self.stages.as_ref().is_none_or(|s| s.pass())
    }
}

impl<'g> Sums<'g> {
    /// The lesson's kernels as written.
    pub fn load(gpu: &'g Gpu, threads_per_block: u32) -> Result<Sums<'g>> {
        Self::load_with(gpu, threads_per_block, REDUCE_BLOCKS_TO_PARTIALS, REDUCE_PARTIALS_TO_TOTAL, REDUCE_COOPERATIVE_GRID, None)
    }

    /// The lesson's kernels built with tiles of `tile` threads (the emulator
    /// runs any; the GPU only the tile in the source). `None` for a size
    /// `tiled_partition` does not take.
    pub fn load_with_tile(gpu: &'g Gpu, threads_per_block: u32, tile: u32) -> Option<Result<Sums<'g>>> {
        Some(Self::load_with(
            gpu,
            threads_per_block,
            REDUCE_BLOCKS_TO_PARTIALS.with_tile(tile)?,
            REDUCE_PARTIALS_TO_TOTAL.with_tile(tile)?,
            REDUCE_COOPERATIVE_GRID.with_tile(tile)?,
            None,
        ))
    }

    /// The lesson's sums with another kernel in the cooperative path (a
    /// mutant, to show the checks catch it).
    pub fn load_with_cooperative(gpu: &'g Gpu, threads_per_block: u32, cooperative: KernelDef<SumParams, gpu::kernels::GridSync>) -> Result<Sums<'g>> {
        Self::load_with(gpu, threads_per_block, REDUCE_BLOCKS_TO_PARTIALS, REDUCE_PARTIALS_TO_TOTAL, cooperative, None)
    }

    /// The same sums with the lesson's three kernels taken from `module`
    /// under `names` (stage 1, stage 2, cooperative): the C++ build of the
    /// same algorithm, launched through this program's launch path.
    ///
    /// # Safety
    /// The three kernels have the Rust kernels' parameters, shared memory
    /// and contracts (the third alone calls `grid.sync()`).
    pub unsafe fn load_foreign(gpu: &'g Gpu, threads_per_block: u32, module: &'g Module, names: [&'static str; 3]) -> Result<Sums<'g>> {
        // SAFETY: the caller's contract.
        let (s1, s2, coop) = unsafe { (REDUCE_BLOCKS_TO_PARTIALS.renamed(names[0]), REDUCE_PARTIALS_TO_TOTAL.renamed(names[1]), REDUCE_COOPERATIVE_GRID.renamed(names[2])) };
        Self::load_with(gpu, threads_per_block, s1, s2, coop, Some(module))
    }

    fn load_with(
        gpu: &'g Gpu,
        threads_per_block: u32,
        stage1: KernelDef<StageParams, NoGridSync>,
        stage2: KernelDef<StageParams, NoGridSync>,
        cooperative: KernelDef<SumParams, gpu::kernels::GridSync>,
        module: Option<&'g Module>,
    ) -> Result<Sums<'g>> {
        let tile = cooperative.tile().unwrap_or(32);
        let (stage1, stage2, cooperative) = match module {
            Some(m) => (gpu.kernel_in(m, &stage1)?, gpu.kernel_in(m, &stage2)?, gpu.cooperative_kernel_in(m, &cooperative)?),
            None => (gpu.kernel(&stage1)?, gpu.kernel(&stage2)?, gpu.cooperative_kernel(&cooperative)?),
        };
        let limits = cooperative.limits(threads_per_block)?;
        let fast = gpu.cooperative_kernel(&REDUCE_COOPERATIVE_FAST)?;
        let fast_limits = fast.limits(threads_per_block)?;
        Ok(Sums { gpu, stage1, stage2, cooperative, fast, threads_per_block, tile, limits, fast_limits })
    }

    /// The grid both lesson paths use for `n` elements: `min(ceil(n / threads_per_block), capacity)`.
    pub fn grid(&self, n: usize) -> u32 {
        cooperative_grid(n, self.threads_per_block, self.limits.capacity())
    }

    /// The fast kernel's grid: enough blocks for one loop trip per thread,
    /// rounded up to a whole number per SM so no SM has one block more than
    /// another, at most its cooperative maximum.
    pub fn fast_grid(&self, n: usize) -> u32 {
        let sms = self.fast_limits.sms as u64;
        let needed = (n as u64).div_ceil((self.threads_per_block * FAST_FLOATS_PER_TRIP) as u64);
        needed.div_ceil(sms).saturating_mul(sms).min(cooperative_grid(n, self.threads_per_block, self.fast_limits.capacity()) as u64) as u32
    }

    /// The grid `path` uses for `n` elements.
    pub fn grid_for(&self, path: Path, n: usize) -> u32 {
        match path {
            Path::Fast => self.fast_grid(n),
            _ => self.grid(n),
        }
    }

    /// Buffers for sums on grids up to `blocks`, with `slots` totals.
    pub fn scratch(&self, blocks: u32, slots: usize) -> Result<Scratch> {
        Ok(Scratch { partials: self.gpu.zeros(blocks.max(1) as usize)?, out: self.gpu.zeros(slots.max(1))? })
    }

    /// Runs `path` on `blocks` blocks, its total into `out[slot]`.
    pub fn run(&self, path: Path, blocks: u32, input: &impl Input, s: &mut Scratch, slot: usize) -> Result<()> {
        let (b, tpb) = (blocks as usize, self.threads_per_block);
        match path {
            Path::TwoLaunches => {
                self.stage1.reduce(blocks, tpb, &input.view(), s.partials.slice_mut(..b))?;
                self.stage2.reduce(1, tpb, &s.partials.slice(..b), s.out.slice_mut(slot..slot + 1))
            }
            Path::Cooperative => self.cooperative.configure(blocks, tpb)?.sum(input, s.partials.slice_mut(..b), s.out.slice_mut(slot..slot + 1)),
            Path::Fast => self.fast.configure(blocks, tpb)?.sum(input, s.partials.slice_mut(..b), s.out.slice_mut(slot..slot + 1)),
        }
    }

    /// Poisons the partials (NaN), so a run that leaves one unwritten shows.
    pub fn poison_partials(&self, s: &mut Scratch) -> Result<()> {
        self.gpu.fill(&mut s.partials, f32::NAN)
    }

    /// Runs `path` once from poisoned partials and total, and checks what it
    /// wrote against the reference: the total, and for the lesson's paths
    /// every partial and the second stage.
    pub fn checked(&self, path: Path, input: &impl Input, reference: &Reference, s: &mut Scratch) -> Result<Run> {
        let n = reference.xs.len();
        let blocks = self.grid_for(path, n);
        self.poison_partials(s)?;
        self.gpu.fill(&mut s.out, f32::NAN)?;
        self.run(path, blocks, input, s, 0)?;
        let total = self.gpu.read_view(&s.out.slice(..1))?[0];
        let partials = self.gpu.read_view(&s.partials.slice(..blocks as usize))?;
        let stages = (path != Path::Fast).then(|| reference.check_stages(&partials, total, self.threads_per_block, self.tile));
        Ok(Run { path, blocks, total: reference.check_total(total, self.chain(path, n, blocks)), stages })
    }

    /// The longest chain of additions `path` makes over `n` elements on `blocks` blocks.
    pub fn chain(&self, path: Path, n: usize, blocks: u32) -> u64 {
        match path {
            Path::Fast => reference::longest_chain_fast(n, blocks, self.threads_per_block, self.tile),
            _ => reference::longest_chain(n, blocks, self.threads_per_block, self.tile),
        }
    }
}
