//! Memory made and dropped inside branches of `Gpu::in_parallel`
//! (`mod branch_memory_case;`): the case the emulator's test and the GPU's
//! share. Before 2026-12-03 a branch's allocations, zeroing and frees ran on
//! the default stream, ordered against no branch: a buffer freed at the end
//! of branch 0 could be handed to branch 1 while branch 0's kernel still
//! used it, and a zeroing could land after the kernel had written.

#![allow(dead_code)] // each test binary uses part of it

use host::device::{Buffer, Gpu};
use host::error::Result;
use host::launch::prelude::*;
use host::reference;

/// The sums whose totals missed their bound, of `2 * rounds`.
pub struct Missed {
    pub wrong: Vec<(usize, usize, f32)>,
    pub expected: f64,
}

/// `rounds` times, two branches each run the lesson's cooperative sum of
/// `n` floats on half the cooperative capacity (so that both can be resident
/// together), with partials allocated in the branch and dropped at its end.
/// With `out_in_branch`, the total too is allocated in the branch and copied
/// out there (the program of issue 47, word for word); otherwise it is
/// written straight into a buffer made before the branches, which keeps the
/// branches free to overlap. Every total is checked against the CPU's.
pub fn sums_with_buffers_made_in_branches(gpu: &Gpu, n: usize, rounds: usize, out_in_branch: bool) -> Result<Missed> {
    let kernel = gpu.cooperative_kernel(&host::kernels().reduce_cooperative_grid)?;
    let threads = 256;
    let blocks = (kernel.limits(threads)?.capacity() / 2).max(1);
    let launch = kernel.configure(blocks, threads)?;
    let xs = reference::fill(n)?;
    let (expected, magnitude) = reference::reference_sum(&xs);
    let bound = reference::error_bound(reference::longest_chain(n, blocks, threads, 32), magnitude);
    let input = host::launch::DeviceInput::upload(gpu, &xs)?;
    let mut totals: Vec<Buffer<f32>> = (0..2).map(|_| gpu.zeros::<f32>(1)).collect::<cg_launcher::error::Result<_>>()?;
    let mut wrong = Vec::new();
    for round in 0..rounds {
        for t in &mut totals {
            gpu.fill(t, f32::NAN)?;
        }
        gpu.in_parallel(2, &mut |b| {
            let mut partials = gpu.zeros::<f32>(blocks as usize)?;
            if out_in_branch {
                let mut out = gpu.zeros::<f32>(1)?;
                launch.sum(&input, partials.slice_mut(..), out.slice_mut(..))?;
                gpu.copy(&out.slice(..), &mut totals[b])
            } else {
                Ok(launch.sum(&input, partials.slice_mut(..), totals[b].slice_mut(..))?)
            }
        })?;
        for (b, t) in totals.iter().enumerate() {
            let total = gpu.read(t)?[0];
            if !reference::check(total, expected, bound).pass {
                wrong.push((round, b, total));
            }
        }
    }
    Ok(Missed { wrong, expected })
}
