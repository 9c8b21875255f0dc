//! The lesson's two ways to sum one input, on one grid: two ordinary launches
//! (day 25) or one cooperative launch with `grid.sync()` between the stages.

use crate::device::Gpu;
use crate::error::Result;
use crate::launch::{Buffer, CooperativeKernel, Input, Kernel, Module};
use crate::sizing::{Limits, cooperative_grid};
use gpu::kernels::{
    FAST_FLOATS_PER_TRIP, In, KernelDef, Out, REDUCE_BLOCKS_TO_PARTIALS, REDUCE_COOPERATIVE_FAST, REDUCE_COOPERATIVE_GRID, REDUCE_PARTIALS_TO_TOTAL,
    SumParams, one_f32_per_warp,
};

/// The sum kernels, loaded, for blocks of `threads`.
pub struct Sums<'g> {
    gpu: &'g Gpu,
    stage1: Kernel<'g, (In<f32>, Out<f32>, usize)>,
    stage2: Kernel<'g, (In<f32>, Out<f32>, usize)>,
    cooperative: CooperativeKernel<'g, SumParams>,
    fast: CooperativeKernel<'g, SumParams>,
    pub threads: u32,
    /// The cooperative kernel's limits at this block size.
    pub limits: Limits,
    /// The fast cooperative kernel's limits at this block size.
    pub fast_limits: Limits,
}

/// Device buffers a sum writes: one partial per block, and the total.
pub struct Scratch {
    pub partials: Buffer<f32>,
    pub total: Buffer<f32>,
}

impl<'g> Sums<'g> {
    pub fn load(gpu: &'g Gpu, threads: u32) -> Result<Sums<'g>> {
        Self::with_lesson_kernels(gpu, threads, gpu.kernel(&REDUCE_BLOCKS_TO_PARTIALS)?, gpu.kernel(&REDUCE_PARTIALS_TO_TOTAL)?, gpu.cooperative_kernel(&REDUCE_COOPERATIVE_GRID)?)
    }

    /// The same sums with the lesson's three kernels taken from `module`
    /// under `names` (stage 1, stage 2, cooperative): the C++ build of the same
    /// algorithm, launched through this program's launch path.
    pub fn load_lesson_kernels_from(gpu: &'g Gpu, threads: u32, module: &Module, names: [&'static str; 3]) -> Result<Sums<'g>> {
        let stage1 = KernelDef::new(names[0], REDUCE_BLOCKS_TO_PARTIALS.entry, one_f32_per_warp);
        let stage2 = KernelDef::new(names[1], REDUCE_PARTIALS_TO_TOTAL.entry, one_f32_per_warp);
        let cooperative = KernelDef::new(names[2], REDUCE_COOPERATIVE_GRID.entry, one_f32_per_warp);
        Self::with_lesson_kernels(
            gpu,
            threads,
            gpu.kernel_in(module, &stage1)?,
            gpu.kernel_in(module, &stage2)?,
            gpu.cooperative_kernel_in(module, &cooperative)?,
        )
    }

    fn with_lesson_kernels(
        gpu: &'g Gpu,
        threads: u32,
        stage1: Kernel<'g, (In<f32>, Out<f32>, usize)>,
        stage2: Kernel<'g, (In<f32>, Out<f32>, usize)>,
        cooperative: CooperativeKernel<'g, SumParams>,
    ) -> Result<Sums<'g>> {
        let limits = cooperative.limits(threads)?;
        let fast = gpu.cooperative_kernel(&REDUCE_COOPERATIVE_FAST)?;
        let fast_limits = fast.limits(threads)?;
        Ok(Sums {
            gpu,
            stage1,
            stage2,
            cooperative,
            fast,
            threads,
            limits,
            fast_limits,
        })
    }

    /// The grid both paths use for `n` elements: `min(ceil(n / threads), capacity)`.
    pub fn grid(&self, n: usize) -> u64 {
        cooperative_grid(n as u64, self.threads, self.limits.capacity())
    }

    /// The fast kernel's grid: enough blocks for one loop trip per thread,
    /// rounded up to a whole number per SM so no SM has one block more than
    /// another, at most its cooperative maximum.
    pub fn fast_grid(&self, n: usize) -> u64 {
        let sms = self.fast_limits.sms as u64;
        let needed = (n as u64).div_ceil((self.threads * FAST_FLOATS_PER_TRIP) as u64);
        needed.div_ceil(sms).saturating_mul(sms).min(cooperative_grid(n as u64, self.threads, self.fast_limits.capacity()))
    }

    /// Buffers for sums on a grid of `blocks`.
    pub fn scratch(&self, blocks: u64) -> Result<Scratch> {
        Ok(Scratch { partials: self.gpu.zeros(blocks as usize)?, total: self.gpu.zeros(1)? })
    }

    /// Day 25: a launch of `blocks` blocks writes the partials, a second launch
    /// of one block sums them.
    pub fn two_launches(&self, blocks: u64, input: &impl Input, s: &mut Scratch) -> Result<()> {
        self.stage1.reduce(blocks, self.threads, &input.view(), &mut s.partials)?;
        self.stage2.reduce(1, self.threads, &s.partials.slice(..blocks as usize), &mut s.total)
    }

    /// One cooperative launch of `blocks` blocks with `grid.sync()` in the middle.
    pub fn one_cooperative_launch(&self, blocks: u64, input: &impl Input, s: &mut Scratch) -> Result<()> {
        self.cooperative.configure(blocks, self.threads)?.sum(input, &mut s.partials, &mut s.total)
    }

    /// The fast cooperative sum, one launch of `blocks` blocks.
    pub fn one_fast_launch(&self, blocks: u64, input: &impl Input, s: &mut Scratch) -> Result<()> {
        self.fast.configure(blocks, self.threads)?.sum(input, &mut s.partials, &mut s.total)
    }

    /// Runs `path`, with the total poisoned to NaN first, and reads the total.
    pub fn total_of(&self, s: &mut Scratch, path: impl FnOnce(&mut Scratch) -> Result<()>) -> Result<f32> {
        self.gpu.fill(&mut s.total, f32::NAN)?;
        path(s)?;
        Ok(self.gpu.read(&s.total)?[0])
    }
}
