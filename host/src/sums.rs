//! The lesson's two ways to sum one input, on one grid: two ordinary launches
//! (day 25) or one cooperative launch with `grid.sync()` between the stages;
//! and the fast cooperative sum. Every run starts from poisoned buffers.

use crate::device::{Buffer, Gpu, Graph, Module};
use crate::error::Result;
use crate::launch::{CooperativeKernel, Input, Kernel, LastBlockParams, SumParams};
use crate::reference::{self, Reference, StageChecks, SumCheck};
use crate::sizing::{Limits, cooperative_grid};
use cg_kernel::kernels::{KernelDef, NoGridSync};
use serde::Serialize;

use crate::kernels::StageParams;
use crate::launch::prelude::*;

/// Which sum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Path {
    /// Day 25: a launch writes the partials, a second launch of one block sums them.
    TwoLaunches,
    /// One cooperative launch, `grid.sync()` between the stages.
    Cooperative,
    /// The two launches captured once as one CUDA graph, replayed.
    TwoLaunchesGraph,
    /// The cooperative launch captured as a graph (a cooperative kernel node), replayed.
    CooperativeGraph,
    /// The fast sum: whichever of the three below suits n ([`Sums::fast_choice`]).
    Fast,
    /// The fast first stage in one cooperative launch with `grid.sync()`.
    FastCooperative,
    /// The whole sum in one block of one ordinary launch.
    SingleBlock,
    /// The fast first stage in one ordinary launch whose last block adds the partials.
    FastLastBlock,
}

impl Path {
    /// How the output names it.
    pub fn label(self) -> &'static str {
        match self {
            Path::TwoLaunches => "two launches",
            Path::Cooperative => "one cooperative launch",
            Path::TwoLaunchesGraph => "two launches, one graph",
            Path::CooperativeGraph => "cooperative, in a graph",
            Path::Fast => "fast sum",
            Path::FastCooperative => "fast, one cooperative launch",
            Path::SingleBlock => "fast, one block",
            Path::FastLastBlock => "fast, last block adds up",
        }
    }
}

impl Path {
    /// For a graph path, the launches it captures.
    pub fn captured(self) -> Option<Path> {
        match self {
            Path::TwoLaunchesGraph => Some(Path::TwoLaunches),
            Path::CooperativeGraph => Some(Path::Cooperative),
            _ => None,
        }
    }

    /// The path whose launches, grid and arithmetic this one uses: itself,
    /// or what a graph path captures.
    pub fn launches(self) -> Path {
        self.captured().unwrap_or(self)
    }
}

/// Up to this many floats, [`Path::Fast`] runs one block of one ordinary launch.
pub const SINGLE_BLOCK_UP_TO: usize = 1 << 15;

/// Threads of the single block of [`Path::SingleBlock`] for `n` floats: one
/// loop trip each (`fast_floats_per_trip` floats, from the kernels), at least 256 and at most
/// 1024 (or the device's largest block). Measured on the H200 (2026-11-30,
/// `records/NOTES.md`): 256 threads are fastest up to 4,096 floats, 512 at
/// 8,192, 1024 from 16,384.
pub fn single_block_threads(n: usize, max_threads_per_block: u32) -> u32 {
    single_block_threads_for(n, crate::kernels().fast_floats_per_trip, max_threads_per_block)
}

/// The fast cooperative sum's grid (pure arithmetic) for `n` floats: enough blocks of
/// `threads_per_block` for one loop trip of `floats_per_trip` per thread,
/// rounded up to a whole number per SM (so no SM holds one block more than
/// another), at most `threads_per_sm` worth of blocks per SM (at least one),
/// at most `ceil(n / threads_per_block)` and the cooperative `capacity`.
pub fn fast_grid_for(n: usize, threads_per_block: u32, floats_per_trip: u32, threads_per_sm: u32, sms: u32, capacity: u32) -> u32 {
    let sms = sms.max(1) as u64;
    let needed = (n as u64).div_ceil(threads_per_block as u64 * floats_per_trip as u64);
    let per_sm = (threads_per_sm / threads_per_block).max(1) as u64;
    needed.div_ceil(sms).saturating_mul(sms).min(per_sm * sms).min(cooperative_grid(n, threads_per_block, capacity) as u64) as u32
}

/// Threads for a sum of `n` floats in one block: one loop trip of
/// `floats_per_trip` each, as a power of two from 256 to 1024, at most
/// `max_threads_per_block`.
fn single_block_threads_for(n: usize, floats_per_trip: u32, max_threads_per_block: u32) -> u32 {
    let wanted = n.div_ceil(floats_per_trip.max(1) as usize).next_power_of_two().clamp(256, 1024) as u32;
    wanted.min(max_threads_per_block)
}

/// Threads per SM the fast cooperative grid aims at: 3 blocks of 256. A
/// grid sweep on the H200 (2026-11-30, `records/NOTES.md`) found 3 blocks
/// of 256 per SM fastest from 2^21 to 2^25 floats and within 0.5% of the
/// best above: fewer blocks arrive at the grid barrier and write partials,
/// and four 16-byte loads in flight per thread keep the memory busy.
pub const FAST_THREADS_PER_SM: u32 = 768;

/// The sum kernels, loaded, for blocks of `threads_per_block`.
pub struct Sums<'g> {
    gpu: &'g Gpu,
    stage1: Kernel<'g, StageParams>,
    stage2: Kernel<'g, StageParams>,
    cooperative: CooperativeKernel<'g, SumParams>,
    fast: CooperativeKernel<'g, SumParams>,
    single_block: Kernel<'g, StageParams>,
    last_block: Kernel<'g, LastBlockParams>,
    pub threads_per_block: u32,
    /// The tile size the lesson's kernels were built with.
    pub tile: u32,
    /// The cooperative kernel's limits at this block size.
    pub limits: Limits,
    /// The fast cooperative kernel's limits at this block size.
    pub fast_limits: Limits,
    /// The last-block kernel's limits at this block size.
    pub last_block_limits: Limits,
}

/// Device buffers sums write: one partial per block, `slots` totals (one per
/// timed run, so that every run's total can be checked), and the last-block
/// sum's ticket.
pub struct Scratch {
    pub partials: Buffer<f32>,
    pub out: Buffer<f32>,
    ticket: Buffer<u32>,
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
        Self::load_with(
            gpu,
            threads_per_block,
            crate::kernels().reduce_blocks_to_partials,
            crate::kernels().reduce_partials_to_total,
            crate::kernels().reduce_cooperative_grid,
            None,
        )
    }

    /// The lesson's kernels built with tiles of `tile` threads (the emulator
    /// runs any; the GPU only the tile in the source). `None` for a size
    /// `tiled_partition` does not take.
    pub fn load_with_tile(gpu: &'g Gpu, threads_per_block: u32, tile: u32) -> Option<Result<Sums<'g>>> {
        Some(Self::load_with(
            gpu,
            threads_per_block,
            crate::kernels().reduce_blocks_to_partials.with_tile(tile)?,
            crate::kernels().reduce_partials_to_total.with_tile(tile)?,
            crate::kernels().reduce_cooperative_grid.with_tile(tile)?,
            None,
        ))
    }

    /// The lesson's sums with another kernel in the cooperative path (a
    /// mutant, to show the checks catch it).
    pub fn load_with_cooperative(gpu: &'g Gpu, threads_per_block: u32, cooperative: KernelDef<SumParams, cg_kernel::kernels::GridSync>) -> Result<Sums<'g>> {
        Self::load_with(gpu, threads_per_block, crate::kernels().reduce_blocks_to_partials, crate::kernels().reduce_partials_to_total, cooperative, None)
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
        let (s1, s2, coop) = unsafe {
            (
                crate::kernels().reduce_blocks_to_partials.renamed(names[0]),
                crate::kernels().reduce_partials_to_total.renamed(names[1]),
                crate::kernels().reduce_cooperative_grid.renamed(names[2]),
            )
        };
        Self::load_with(gpu, threads_per_block, s1, s2, coop, Some(module))
    }

    fn load_with(
        gpu: &'g Gpu,
        threads_per_block: u32,
        stage1: KernelDef<StageParams, NoGridSync>,
        stage2: KernelDef<StageParams, NoGridSync>,
        cooperative: KernelDef<SumParams, cg_kernel::kernels::GridSync>,
        module: Option<&'g Module>,
    ) -> Result<Sums<'g>> {
        let tile = cooperative.tile().unwrap_or(32);
        let (stage1, stage2, cooperative) = match module {
            Some(m) => (gpu.kernel_in(m, &stage1)?, gpu.kernel_in(m, &stage2)?, gpu.cooperative_kernel_in(m, &cooperative)?),
            None => (gpu.kernel(&stage1)?, gpu.kernel(&stage2)?, gpu.cooperative_kernel(&cooperative)?),
        };
        let limits = cooperative.limits(threads_per_block)?;
        let fast = gpu.cooperative_kernel(&crate::kernels().reduce_cooperative_fast)?;
        let fast_limits = fast.limits(threads_per_block)?;
        let single_block = gpu.kernel(&crate::kernels().reduce_single_block)?;
        let last_block = gpu.kernel(&crate::kernels().reduce_last_block)?;
        let last_block_limits = last_block.limits(threads_per_block)?;
        Ok(Sums { gpu, stage1, stage2, cooperative, fast, single_block, last_block, threads_per_block, tile, limits, fast_limits, last_block_limits })
    }

    /// The device the kernels are loaded on.
    pub fn gpu(&self) -> &'g Gpu {
        self.gpu
    }

    /// The grid both lesson paths use for `n` elements: `min(ceil(n / threads_per_block), capacity)`.
    pub fn grid(&self, n: usize) -> u32 {
        cooperative_grid(n, self.threads_per_block, self.limits.capacity())
    }

    /// The fast kernel's grid: enough blocks for one loop trip per thread,
    /// rounded up to a whole number per SM so no SM has one block more than
    /// another, at most [`FAST_THREADS_PER_SM`] worth of blocks per SM (one
    /// block where a block is larger) and what the device holds at once.
    pub fn fast_grid(&self, n: usize) -> u32 {
        Self::fast_grid_within(n, self.threads_per_block, &self.fast_limits)
    }

    fn fast_grid_within(n: usize, threads_per_block: u32, limits: &Limits) -> u32 {
        fast_grid_for(n, threads_per_block, crate::kernels().fast_floats_per_trip, FAST_THREADS_PER_SM, limits.sms, limits.capacity())
    }

    /// Which fast path suits `n`: one block of one ordinary launch for small
    /// inputs, one cooperative launch past them. Chosen from three whole
    /// benchmark runs on the H200 (`records/NOTES.md`): one block wins up
    /// to 32,768 floats, and the cooperative launch is at least as fast as the
    /// last-block launch at every size above.
    pub fn fast_choice(&self, n: usize) -> Path {
        if n <= SINGLE_BLOCK_UP_TO { Path::SingleBlock } else { Path::FastCooperative }
    }

    /// The grid `path` uses for `n` elements.
    pub fn grid_for(&self, path: Path, n: usize) -> u32 {
        match path {
            Path::Fast => self.grid_for(self.fast_choice(n), n),
            Path::FastCooperative => self.fast_grid(n),
            Path::FastLastBlock => Self::fast_grid_within(n, self.threads_per_block, &self.last_block_limits),
            Path::SingleBlock => 1,
            Path::TwoLaunches | Path::Cooperative | Path::TwoLaunchesGraph | Path::CooperativeGraph => self.grid(n),
        }
    }

    /// Buffers for sums on grids up to `blocks`, with `slots` totals.
    pub fn scratch(&self, blocks: u32, slots: usize) -> Result<Scratch> {
        Ok(Scratch { partials: self.gpu.zeros(blocks.max(1) as usize)?, out: self.gpu.zeros(slots.max(1))?, ticket: self.gpu.zeros(1)? })
    }

    /// Captures `path` (not itself a graph path) on `blocks` blocks, its
    /// total into `out[slot]`, as a graph to replay with [`Sums::replay`].
    pub fn capture(&self, path: Path, blocks: u32, input: &impl Input, s: &mut Scratch, slot: usize) -> Result<Graph> {
        Ok(self.gpu.capture(&mut || Ok(self.run(path, blocks, input, s, slot)?))?)
    }

    /// Replays a graph made by [`Sums::capture`] with `input` and `s`, which
    /// must be the ones it was captured with: the borrows keep them alive.
    pub fn replay(&self, graph: &Graph, _input: &impl Input, _s: &mut Scratch) -> Result<()> {
        // SAFETY: the graph's launches address `input` and `s`, borrowed
        // here, so they are allocated (the caller's promise: the same ones).
        unsafe { Ok(self.gpu.launch_graph(graph)?) }
    }

    /// Runs `path` on `blocks` blocks, its total into `out[slot]`. A graph
    /// path captures its launches and replays them once.
    pub fn run(&self, path: Path, blocks: u32, input: &impl Input, s: &mut Scratch, slot: usize) -> Result<()> {
        if let Some(captured) = path.captured() {
            let graph = self.capture(captured, blocks, input, s, slot)?;
            return self.replay(&graph, input, s);
        }
        let (b, tpb) = (blocks as usize, self.threads_per_block);
        let slot = slot..slot + 1;
        match path {
            Path::TwoLaunches => {
                self.stage1.reduce(blocks, tpb, &input.view(), s.partials.slice_mut(..b))?;
                self.stage2.reduce(1, tpb, &s.partials.slice(..b), s.out.slice_mut(slot))
            }
            Path::Cooperative => self.cooperative.configure(blocks, tpb)?.sum(input, s.partials.slice_mut(..b), s.out.slice_mut(slot)),
            Path::FastCooperative => self.fast.configure(blocks, tpb)?.sum(input, s.partials.slice_mut(..b), s.out.slice_mut(slot)),
            Path::SingleBlock => {
                let view = input.view();
                self.single_block.reduce(1, single_block_threads(view.len(), self.gpu.info.max_threads_per_block), &view, s.out.slice_mut(slot))
            }
            Path::FastLastBlock => self.last_block.sum(blocks, tpb, &input.view(), s.partials.slice_mut(..b), s.ticket.slice_mut(..), s.out.slice_mut(slot)),
            Path::Fast => self.run(self.fast_choice(input.view().len()), blocks, input, s, slot.start),
            Path::TwoLaunchesGraph | Path::CooperativeGraph => unreachable!("graph paths return above"),
        }
    }

    /// Poisons the partials (NaN), so a run that leaves one unwritten shows.
    pub fn poison_partials(&self, s: &mut Scratch) -> Result<()> {
        Ok(self.gpu.fill(&mut s.partials, f32::NAN)?)
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
        // The fast paths' blocks read other elements than the lesson's, and one
        // block writes no partial: only their totals are checked.
        let stages = matches!(path.launches(), Path::TwoLaunches | Path::Cooperative)
            .then(|| reference.check_stages(&partials, total, self.threads_per_block, self.tile));
        Ok(Run { path, blocks, total: reference.check_total(total, self.chain(path, n, blocks)), stages })
    }

    /// The longest chain of additions `path` makes over `n` elements on `blocks` blocks.
    pub fn chain(&self, path: Path, n: usize, blocks: u32) -> u64 {
        match path.launches() {
            Path::TwoLaunches | Path::Cooperative => reference::longest_chain(n, blocks, self.threads_per_block, self.tile),
            Path::SingleBlock => reference::longest_chain_fast(n, 1, single_block_threads(n, self.gpu.info.max_threads_per_block), self.tile),
            Path::Fast => self.chain(self.fast_choice(n), n, blocks),
            Path::FastCooperative | Path::FastLastBlock => reference::longest_chain_fast(n, blocks, self.threads_per_block, self.tile),
            Path::TwoLaunchesGraph | Path::CooperativeGraph => unreachable!("launches() is not a graph path"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_grid_is_three_blocks_of_256_per_h200_sm_at_most() {
        // The lesson's block of 256 on an H200: 8 blocks/SM x 132 SMs.
        let capacity = 1056;
        // One trip of 16 floats per thread: 4,096 floats per block.
        assert_eq!(fast_grid_for(1 << 28, 256, 16, 768, 132, capacity), 396);
        assert_eq!(fast_grid_for(4_194_915, 256, 16, 768, 132, capacity), 396);
        // 2^20 floats need 256 blocks: rounded up to 2 per SM.
        assert_eq!(fast_grid_for(1 << 20, 256, 16, 768, 132, capacity), 264);
        // Small inputs: never more blocks than ceil(n / 256), none for n = 0.
        assert_eq!(fast_grid_for(1024, 256, 16, 768, 132, capacity), 4);
        assert_eq!(fast_grid_for(0, 256, 16, 768, 132, capacity), 0);
        // Larger blocks: one per SM; smaller: more of them, within the capacity.
        assert_eq!(fast_grid_for(1 << 28, 1024, 16, 768, 132, 264), 132);
        // Blocks of 64: 32 blocks/SM x 132 SMs.
        let capacity_64 = 4224;
        assert_eq!(fast_grid_for(1 << 28, 64, 16, 768, 132, capacity_64), 12 * 132);
        assert_eq!(fast_grid_for(1 << 28, 64, 16, 768, 132, 1000), 1000);
    }

    #[test]
    fn a_single_block_gets_one_trip_per_thread_from_256_to_1024_threads() {
        let threads: Vec<u32> = [1, 1024, 4096, 4097, 8192, 16384, 32768, 1 << 20].iter().map(|&n| single_block_threads_for(n, 16, 1024)).collect();
        assert_eq!(threads, [256, 256, 256, 512, 512, 1024, 1024, 1024]);
        assert_eq!(single_block_threads_for(32768, 16, 512), 512);
    }
}
