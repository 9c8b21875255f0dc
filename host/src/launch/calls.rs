//! Safe launches: each checks the buffers against its kernel's contract, then
//! makes the one `unsafe` launch call.

use super::{Buffer, CooperativeLaunch, Input, Kernel, View};
use crate::device::Gpu;
use crate::error::{Error, Result};
use gpu::kernels::{COALESCED_DEMO, COALESCED_DEMO_THREADS, In, Out, PROBE_COOPERATIVE, SumParams};
use serde::Serialize;

fn ensure_len(kernel: &'static str, buffer: &'static str, needed: usize, got: usize) -> Result<()> {
    if got < needed {
        return Err(Error::BufferTooShort { kernel, buffer, needed, got });
    }
    Ok(())
}

impl CooperativeLaunch<'_, '_, SumParams> {
    /// Sums `input` into `total[0]` in one cooperative launch, with one
    /// partial per block in `partials`.
    pub fn sum(&self, input: &impl Input, partials: &mut Buffer<f32>, total: &mut Buffer<f32>) -> Result<()> {
        let k = &self.kernel.loaded;
        let view = input.view();
        ensure_len(k.name, "the input's guard", (k.overread)(self.shape.threads), input.guard())?;
        ensure_len(k.name, "partials", self.shape.blocks as usize, partials.len())?;
        ensure_len(k.name, "total", 1, total.len())?;
        // SAFETY: the kernel reads input[..len + overread], which the guard
        // covers, and writes partials[..blocks] and total[0], checked above.
        unsafe { k.launch(self.shape, true, (&view, partials, total, view.len())) }
    }
}

impl Kernel<'_, (In<f32>, Out<f32>, usize)> {
    /// Launches `blocks` blocks that each sum their grid-stride share of
    /// `input` and write it to `out[block]`.
    pub fn reduce(&self, blocks: u64, threads: u32, input: &View<'_, f32>, out: &mut Buffer<f32>) -> Result<()> {
        let k = &self.loaded;
        let shape = k.shape(blocks, threads)?;
        ensure_len(k.name, "reads past the input (none allowed here)", (k.overread)(threads), 0)?;
        ensure_len(k.name, "out", shape.blocks as usize, out.len())?;
        // SAFETY: the kernel reads input[..len] and writes out[..blocks], checked above.
        unsafe { k.launch(shape, false, (input, out, input.len())) }
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

impl Gpu {
    /// Launches the probe (no barrier, so any launch is safe) and returns what
    /// `this_grid()` reported, or the driver's refusal.
    pub fn probe(&self, blocks: u64, threads: u32, cooperative: bool) -> Result<Probe> {
        let kernel = self.kernel(&PROBE_COOPERATIVE)?;
        let k = &kernel.loaded;
        let shape = k.shape(blocks, threads)?;
        let mut out = self.zeros::<u32>(2)?;
        // SAFETY: the probe writes out[0] and out[1] from one thread and nothing else.
        unsafe { k.launch(shape, cooperative, (&mut out,))? };
        let v = self.read(&out)?;
        Ok(Probe { is_valid: v[0] != 0, num_blocks: v[1] })
    }

    /// Runs `coalesced_demo` on one block of two warps and returns one row
    /// per thread that took the branch.
    pub fn coalesced_demo(&self) -> Result<Vec<CoalescedRecord>> {
        let kernel = self.kernel(&COALESCED_DEMO)?;
        let k = &kernel.loaded;
        let threads = COALESCED_DEMO_THREADS;
        let shape = k.shape(1, threads)?;
        let mut out = self.zeros::<u32>(4 * threads as usize)?;
        // SAFETY: each thread writes at most its own four u32.
        unsafe { k.launch(shape, false, (&mut out,))? };
        Ok(self
            .read(&out)?
            .chunks_exact(4)
            .filter(|r| r[2] != 0)
            .map(|r| CoalescedRecord { warp: r[0], lane: r[1], group_size: r[2], rank: r[3] })
            .collect())
    }
}

#[cfg(feature = "barrier-timeout")]
impl CooperativeLaunch<'_, '_, (Out<u32>,)> {
    /// Launches a kernel that writes one `u32` per block into `out`.
    pub fn per_block(&self, out: &mut Buffer<u32>) -> Result<()> {
        let k = &self.kernel.loaded;
        ensure_len(k.name, "out", self.shape.blocks as usize, out.len())?;
        // SAFETY: the kernel writes out[..blocks], checked above.
        unsafe { k.launch(self.shape, true, (out,)) }
    }
}
