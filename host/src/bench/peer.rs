//! NVIDIA's own Rust compiler as a peer: the lesson's three kernels as
//! NVlabs cuda-oxide built them (a PTX file, `bench --oxide FILE`), launched
//! through this program's launch path on the same input, grid, timing and
//! checks as the Rust kernels. cuda-oxide passes each slice as a pointer and
//! a length, and keeps its block totals in static shared memory, so its
//! kernels are launched with raw arguments ([`RawKernel`]).

use super::{Point, Variant};
use crate::device::{ArgValue, Gpu, Module};
use crate::error::Result;
use crate::launch::Shape;
use crate::launch::{Input, RawKernel, Window};
use crate::reference::Reference;
use crate::sums::{Path, Scratch, Sums};
use crate::timing::{Repeats, Timing, time_runs};

/// The lesson's kernels in cuda-oxide's PTX (a file given to `bench --oxide`; `docs/benchmarks.md` says what it holds).
pub struct Oxide<'g> {
    stage1: RawKernel<'g>,
    stage2: RawKernel<'g>,
    cooperative: RawKernel<'g>,
}

impl<'g> Oxide<'g> {
    /// Loads the three kernels from `module`.
    pub fn load(gpu: &'g Gpu, module: &'g Module) -> Result<Oxide<'g>> {
        Ok(Oxide {
            stage1: gpu.raw_kernel_in(module, "reduce_blocks_to_partials")?,
            stage2: gpu.raw_kernel_in(module, "reduce_partials_to_total")?,
            cooperative: gpu.raw_kernel_in(module, "reduce_cooperative_grid")?,
        })
    }

    /// Runs `path` (two launches or cooperative) on `blocks` blocks of
    /// `threads_per_block`, its total into `s.out[slot]`.
    fn run(&self, path: Path, blocks: u32, threads_per_block: u32, x: &Window, s: &mut Scratch, slot: usize) -> Result<()> {
        let view = x.view();
        let n = ArgValue::number(view.len() as u64);
        let m = ArgValue::number(blocks as u64);
        let (partials, out) = (s.partials.slice_mut(..blocks as usize), s.out.slice_mut(slot..slot + 1));
        let (input, partials, out) = (ArgValue::input(&view), ArgValue::output(&partials), ArgValue::output(&out));
        let one = ArgValue::number(1);
        let shape = |blocks| Shape::new(blocks, threads_per_block, 0);
        // SAFETY: cuda-oxide's kernels take (input, n, partials, m) and
        // (partials, m, out, 1) and (input, n, partials, m, out, 1), each
        // slice a pointer and its length, which these are; they read input[..n]
        // and partials[..m] and write partials[..blocks] and out[0]; only the
        // third synchronizes its grid, and it is launched cooperatively.
        unsafe {
            match path {
                Path::TwoLaunches => {
                    self.stage1.launch(shape(blocks), false, &[input, n, partials, m])?;
                    Ok(self.stage2.launch(shape(1), false, &[partials, m, out, one])?)
                }
                Path::Cooperative => Ok(self.cooperative.launch(shape(blocks), true, &[input, n, partials, m, out, one])?),
                _ => unreachable!("cuda-oxide's kernels are the lesson's two paths"),
            }
        }
    }

    /// One path at one size, timed as the Rust kernels are: the timing, and
    /// whether every run's total was within its bound.
    pub(crate) fn time_one(
        &self,
        sums: &Sums,
        path: Path,
        repeats: Repeats,
        inputs: &[Window],
        s: &mut Scratch,
        reference: &Reference,
    ) -> Result<(Timing, bool)> {
        let gpu = sums.gpu();
        let (n, tpb) = (reference.xs.len(), sums.threads_per_block);
        let blocks = sums.grid(n);
        sums.poison_partials(s)?;
        gpu.fill(&mut s.out, f32::NAN)?;
        let timing = time_runs(gpu, repeats, &mut |k| self.run(path, blocks, tpb, &inputs[k % inputs.len()], s, k))?;
        // cuda-oxide adds in its own order: bound it as the lesson's grid does, with room for its block reduction.
        let chain = sums.chain(path, n, blocks) + 8;
        let totals = gpu.read(&s.out)?;
        let ok = totals[..repeats.slots()].iter().all(|&t| reference.check_total(t, chain).pass);
        Ok((timing, ok))
    }

    /// Both paths at one size, every run's total checked.
    pub(crate) fn time(&self, sums: &Sums, repeats: Repeats, inputs: &[Window], s: &mut Scratch, reference: &Reference, rotate: usize) -> Result<Vec<Point>> {
        let (n, tpb) = (reference.xs.len(), sums.threads_per_block);
        let blocks = sums.grid(n);
        let mut points = Vec::new();
        for (path, variant) in [(Path::TwoLaunches, Variant::OxideKernelsTwoLaunches), (Path::Cooperative, Variant::OxideKernelsCooperative)] {
            let (timing, ok) = self.time_one(sums, path, repeats, inputs, s, reference)?;
            let (q, w) = (timing.gpu_queued.expect("a GPU times queued runs"), timing.launch_to_completion.expect("a GPU times waited runs"));
            points.push(Point::new(variant, n as u64, rotate, blocks, tpb, q, w, Some(ok)));
        }
        Ok(points)
    }
}
