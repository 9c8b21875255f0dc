//! Safe launches: each checks the buffers against its kernel's contract, then
//! makes the one `unsafe` launch call.

use super::{Args, CooperativeLaunch, Input, Kernel};
use crate::device::{Gpu, View, ViewMut};
use crate::error::{Error, Result};
use gpu_core::kernels::Params;
use gpu_core::mem::{In, Out};
use serde::Serialize;

pub use crate::kernels::{LastBlockParams, MultiParams, SumParams};

pub(super) fn ensure_len(kernel: &'static str, buffer: &'static str, needed: usize, got: usize) -> Result<()> {
    if got < needed {
        return Err(Error::BufferTooShort { kernel, buffer, needed, got });
    }
    Ok(())
}

impl<P: Params> CooperativeLaunch<'_, '_, P> {
    /// # Safety
    /// `args` satisfy the kernel's contract for this launch's shape.
    pub(super) unsafe fn go<A: Args<P>>(&self, args: A) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe { self.kernel.loaded.launch(self.shape, true, args.values().as_ref()) }
    }
}

impl CooperativeLaunch<'_, '_, SumParams> {
    /// Sums `input` into `out[0]` in one cooperative launch, with one partial
    /// per block in `partials`.
    pub fn sum(&self, input: &impl Input, partials: ViewMut<'_, f32>, out: ViewMut<'_, f32>) -> Result<()> {
        let def = &self.kernel.loaded.def;
        let view = input.view();
        ensure_len(def.name(), "the guard after the input", def.overread(self.shape.threads_per_block), input.guard())?;
        ensure_len(def.name(), "partials", self.shape.blocks as usize, partials.len())?;
        ensure_len(def.name(), "out", 1, out.len())?;
        let n = view.len();
        // SAFETY: the kernel reads input[..n + overread], which the guard
        // covers, and writes partials[..blocks] and out[0], checked above.
        unsafe { self.go((&view, partials, out, n)) }
    }
}

/// Where the GPUs of a sum across GPUs meet: the barrier's words and the
/// exchanged totals, both in memory every GPU reaches, and this GPU's place.
pub struct Meeting<'a> {
    pub barrier: ViewMut<'a, u32>,
    pub totals: ViewMut<'a, f32>,
    pub rank: u32,
    pub gpus: u32,
}

impl CooperativeLaunch<'_, '_, MultiParams> {
    /// This GPU's part of the sum across GPUs: its shard `input`, one partial
    /// per block, and (on GPU 0) the total into `out[0]`.
    pub fn sum_across(&self, input: &impl Input, partials: ViewMut<'_, f32>, out: ViewMut<'_, f32>, m: Meeting<'_>) -> Result<()> {
        let def = &self.kernel.loaded.def;
        ensure_len(def.name(), "partials", self.shape.blocks as usize, partials.len())?;
        ensure_len(def.name(), "out", 1, out.len())?;
        ensure_len(def.name(), "totals", 2 * m.gpus as usize, m.totals.len())?;
        ensure_len(def.name(), "barrier", gpu_core::cg::multi_grid::barrier_words(m.gpus), m.barrier.len())?;
        if m.rank >= m.gpus {
            return Err(Error::RankOutOfRange { flag: "the meeting's rank", rank: m.rank, ranks: m.gpus });
        }
        let view = input.view();
        let n = view.len();
        // SAFETY: the kernel reads input[..n], writes partials[..blocks],
        // out[0], totals[..2 gpus] and the barrier's words, checked above; the
        // caller launches the same kernel on every GPU of the meeting.
        unsafe { self.go((&view, partials, m.totals, out, m.barrier, m.rank, m.gpus, n)) }
    }
}

impl CooperativeLaunch<'_, '_, (Out<u32>, u32, u32)> {
    /// Only the barrier across GPUs (for timing it).
    pub fn meet(&self, barrier: ViewMut<'_, u32>, rank: u32, gpus: u32) -> Result<()> {
        ensure_len(self.kernel.loaded.def.name(), "barrier", gpu_core::cg::multi_grid::barrier_words(gpus), barrier.len())?;
        // SAFETY: the kernel touches the barrier's words only, checked above.
        unsafe { self.go((barrier, rank, gpus)) }
    }
}

impl CooperativeLaunch<'_, '_, (u32,)> {
    /// `barriers` grid barriers back to back (`grid_sync_loop`).
    pub fn barriers(&self, barriers: u32) -> Result<()> {
        // SAFETY: the kernel touches no memory but its grid barrier's.
        unsafe { self.go((barriers,)) }
    }

    /// The same by the entry whose `grid.sync()` is the watched barrier, or
    /// by the plain one, whatever the grid's size: to time the barrier a
    /// launch of this grid does not choose (GPU only).
    pub(crate) fn barriers_by(&self, barriers: u32, watched: bool) -> Result<()> {
        // SAFETY: as above; either entry takes the same parameters, and the
        // watched one's barrier memory comes with the launch.
        unsafe { self.kernel.loaded.function.launch_entry(self.shape, true, Some(watched), (barriers,).values().as_ref()) }
    }
}

impl CooperativeLaunch<'_, '_, (Out<u32>, Out<u32>, u32, u32)> {
    /// `grid_sync_stress`: `rounds` rounds of write, barrier, read a
    /// neighbour's, barrier; each block's count of wrong reads into `errors`.
    pub fn stress(&self, slots: ViewMut<'_, u32>, errors: ViewMut<'_, u32>, rounds: u32, skip_first_sync: bool) -> Result<()> {
        let name = self.kernel.loaded.def.name();
        ensure_len(name, "slots", self.shape.blocks as usize, slots.len())?;
        ensure_len(name, "errors", self.shape.blocks as usize, errors.len())?;
        // SAFETY: the kernel writes slots[..blocks] and errors[..blocks], checked above.
        unsafe { self.go((slots, errors, rounds, skip_first_sync as u32)) }
    }
}

impl CooperativeLaunch<'_, '_, (Out<u32>,)> {
    /// Launches a kernel that writes one `u32` per block into `out`.
    pub fn per_block(&self, out: ViewMut<'_, u32>) -> Result<()> {
        ensure_len(self.kernel.loaded.def.name(), "out", self.shape.blocks as usize, out.len())?;
        // SAFETY: the kernel writes out[..blocks], checked above.
        unsafe { self.go((out,)) }
    }
}

impl Kernel<'_, (In<f32>, Out<f32>, usize)> {
    /// Launches `blocks` blocks that each sum their grid-stride share of
    /// `input` (block-stride, for a single block) and write it to `out[block]`.
    pub fn reduce(&self, blocks: u32, threads_per_block: u32, input: &View<'_, f32>, out: ViewMut<'_, f32>) -> Result<()> {
        let l = &self.loaded;
        let shape = l.shape(blocks, threads_per_block)?;
        ensure_len(l.def.name(), "reads past the input (none allowed here)", l.def.overread(threads_per_block), 0)?;
        ensure_len(l.def.name(), "out", shape.blocks as usize, out.len())?;
        let n = input.len();
        // SAFETY: the kernel reads input[..n] and writes out[..blocks], checked above.
        unsafe { l.launch(shape, false, (input, out, n).values().as_ref()) }
    }
}

impl Kernel<'_, (Out<f32>, usize, usize)> {
    /// Writes elements `first .. first + out.len()` of the lesson's input into `out`.
    pub fn fill_lesson(&self, out: ViewMut<'_, f32>, first: usize) -> Result<()> {
        let l = &self.loaded;
        let threads = 256;
        let blocks = crate::sizing::ordinary_blocks(out.len(), threads).clamp(1, l.gpu.info.sms as u64 * 16) as u32;
        let shape = l.shape(blocks, threads)?;
        let n = out.len();
        // SAFETY: the kernel writes out[..n] and nothing else.
        unsafe { l.launch(shape, false, (out, first, n).values().as_ref()) }
    }
}

impl CooperativeLaunch<'_, '_, ()> {
    /// Launches a kernel that takes nothing.
    pub fn launch(&self) -> Result<()> {
        // SAFETY: the kernel takes no parameters and touches no memory.
        unsafe { self.go(()) }
    }
}

impl Kernel<'_, ()> {
    /// Launches a kernel that takes nothing.
    pub fn launch(&self, blocks: u32, threads_per_block: u32) -> Result<()> {
        let shape = self.loaded.shape(blocks, threads_per_block)?;
        // SAFETY: the kernel takes no parameters and touches no memory.
        unsafe { self.loaded.launch(shape, false, &[]) }
    }
}

impl Kernel<'_, LastBlockParams> {
    /// Sums `input` into `out[0]` in one ordinary launch of `blocks` blocks,
    /// the last block to finish adding the partials; `ticket` must hold 0
    /// (the kernel leaves it 0).
    pub fn sum(
        &self,
        blocks: u32,
        threads_per_block: u32,
        input: &View<'_, f32>,
        partials: ViewMut<'_, f32>,
        ticket: ViewMut<'_, u32>,
        out: ViewMut<'_, f32>,
    ) -> Result<()> {
        let l = &self.loaded;
        let shape = l.shape(blocks, threads_per_block)?;
        ensure_len(l.def.name(), "partials", shape.blocks as usize, partials.len())?;
        ensure_len(l.def.name(), "ticket", 1, ticket.len())?;
        ensure_len(l.def.name(), "out", 1, out.len())?;
        let n = input.len();
        // SAFETY: the kernel reads input[..n], writes partials[..blocks],
        // ticket[0] and out[0], checked above; the ticket's 0 is the caller's.
        unsafe { l.launch(shape, false, (input, partials, ticket, out, n).values().as_ref()) }
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

impl Kernel<'_, (Out<u32>,)> {
    /// Launches `blocks` blocks of `threads_per_block` (cooperatively if
    /// asked) with a zeroed output of `len` words, and reads it back.
    ///
    /// # Safety
    /// At this shape the kernel writes nothing but `out[..len]`, and calls
    /// no `grid.sync()`.
    unsafe fn written(&self, blocks: u32, threads_per_block: u32, cooperative: bool, len: usize) -> Result<Vec<u32>> {
        let l = &self.loaded;
        let shape = l.shape(blocks, threads_per_block)?;
        let mut out = l.gpu.zeros::<u32>(len)?;
        // SAFETY: the caller's contract.
        unsafe { l.launch(shape, cooperative, (out.slice_mut(..),).values().as_ref())? };
        l.gpu.read(&out)
    }
}

/// What the cooperative probe read when launched from a graph, and whether
/// the graph's node kept the cooperative attribute.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct GraphProbe {
    pub probe: Probe,
    /// For each kernel node, `CU_LAUNCH_ATTRIBUTE_COOPERATIVE` as read back from the graph.
    pub cooperative_nodes: Vec<bool>,
}

impl Gpu {
    /// Captures a cooperative launch of the probe into a graph, reads the
    /// node's cooperative attribute back, replays the graph and returns what
    /// `this_grid()` reported, or the first refusal (at capture,
    /// instantiation or launch: the error names the call).
    pub fn probe_graph(&self, blocks: u32, threads_per_block: u32) -> Result<GraphProbe> {
        let kernel = self.kernel(&crate::kernels().probe_cooperative)?;
        let l = &kernel.loaded;
        let shape = l.shape(blocks, threads_per_block)?;
        let mut out = self.zeros::<u32>(2)?;
        // SAFETY: the probe writes out[0] and out[1] from one thread and nothing else.
        let graph = self.capture(&mut || unsafe { l.launch(shape, true, (out.slice_mut(..),).values().as_ref()) })?;
        let cooperative_nodes = self.graph_cooperative_launches(&graph)?;
        // SAFETY: `out`, the one buffer the graph addresses, lives to the end.
        unsafe { self.launch_graph(&graph)? };
        let v = self.read(&out)?;
        Ok(GraphProbe { probe: Probe { is_valid: v[0] != 0, num_blocks: v[1] }, cooperative_nodes })
    }

    /// Launches the probe (no barrier, so any launch is safe) and returns what
    /// `this_grid()` reported, or the driver's refusal.
    pub fn probe(&self, blocks: u32, threads_per_block: u32, cooperative: bool) -> Result<Probe> {
        // SAFETY: the probe writes out[0] and out[1] from one thread and nothing else.
        let v = unsafe { self.kernel(&crate::kernels().probe_cooperative)?.written(blocks, threads_per_block, cooperative, 2)? };
        Ok(Probe { is_valid: v[0] != 0, num_blocks: v[1] })
    }

    /// Runs `shuffle_out_of_range` on one warp and returns what it wrote.
    pub fn shuffle_out_of_range(&self) -> Result<Vec<u32>> {
        // SAFETY: each lane writes its own SHUFFLE_PROBES u32.
        unsafe { self.kernel(&crate::kernels().shuffle_out_of_range)?.written(1, 32, false, 32 * crate::kernels().shuffle_probes) }
    }

    /// Runs `coalesced_demo` on one block of two warps and returns one row
    /// per thread that took the branch.
    pub fn coalesced_demo(&self) -> Result<Vec<CoalescedRecord>> {
        let threads = crate::kernels().coalesced_demo_threads;
        // SAFETY: each thread writes at most its own four u32.
        let words = unsafe { self.kernel(&crate::kernels().coalesced_demo)?.written(1, threads, false, 4 * threads as usize)? };
        Ok(words.chunks_exact(4).filter(|r| r[2] != 0).map(|r| CoalescedRecord { warp: r[0], lane: r[1], group_size: r[2], rank: r[3] }).collect())
    }
}
