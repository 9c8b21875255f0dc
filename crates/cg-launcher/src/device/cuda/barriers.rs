//! A cooperative launch's own memory (`cg_kernel::cg::barrier::launch_memory`,
//! `docs/abi.md`): the watched barrier's lines and the grid collectives'
//! scratch, a block per stream outside a capture, a block per cooperative
//! launch inside a graph, so that no two launches in flight share one.

use super::*;
use cg_kernel::cg::barrier::launch_memory;

impl Cuda {
    /// Bytes of one launch's memory on this device.
    fn launch_memory_bytes(&self) -> usize {
        launch_memory::bytes(self.launch_capacity).next_multiple_of(watched::LINE_BYTES as usize)
    }

    /// Launch memory for `blocks` launches at once, each zeroed with its
    /// scratch's room in its header, ready before anything queued after
    /// this call.
    pub(super) fn barrier_memory(&self, blocks: usize) -> Result<cudarc::driver::CudaSlice<u8>> {
        let each = self.launch_memory_bytes();
        let mut m = self.stream.alloc_zeros::<u8>(blocks * each).map_err(Error::driver("cuMemAllocAsync"))?;
        let room = self.launch_capacity.to_ne_bytes();
        for b in 0..blocks {
            let at = b * each + launch_memory::SCRATCH_OFFSET as usize;
            self.stream.memcpy_htod(&room, &mut m.slice_mut(at..at + 4)).map_err(Error::driver("cuMemcpyHtoDAsync"))?;
        }
        // Launches on other streams are not ordered after the writes: wait for them.
        self.finish()?;
        Ok(m)
    }

    /// A cooperative launch's memory now (`cg_kernel::cg::barrier::launch_memory`):
    /// no other launch in flight may use it (see [`GraphBarriers`] and `docs/abi.md`).
    pub(super) fn launch_memory(&self) -> Result<u64> {
        if self.capturing.get().is_some() {
            let mut slab = self.capture_barriers.borrow_mut();
            let slab = slab.as_mut().expect("barrier memory for every capture");
            if slab.taken == GRAPH_BARRIERS {
                return Err(Error::GraphBarriersExhausted { kernel: self.last_kernel.get(), max: GRAPH_BARRIERS });
            }
            let (base, _) = slab.memory.device_ptr(&self.stream);
            slab.taken += 1;
            return Ok(base + ((slab.taken - 1) * self.launch_memory_bytes()) as u64);
        }
        let stream = self.launch_stream() as usize;
        // Today's bug, kept as a test of the test: every stream's launches on one block.
        #[cfg(all(cg_mutants, feature = "barrier-timeout"))]
        let stream = if self.mutant_shared_barrier.get() { 0 } else { stream };
        if let Some((_, m)) = self.barriers.borrow().iter().find(|(s, _)| *s == stream) {
            return Ok(m.device_ptr(&self.stream).0);
        }
        let m = self.barrier_memory(1)?;
        let address = m.device_ptr(&self.stream).0;
        self.barriers.borrow_mut().push((stream, m));
        Ok(address)
    }
}

/// A captured graph, and the barrier memory its watched launches use.
pub(crate) struct CudaGraph {
    pub(super) exec: driver::GraphExec,
    pub(super) _barriers: cudarc::driver::CudaSlice<u8>,
}

impl Cuda {
    pub(super) fn cuda_graph(graph: &Captured) -> Result<&CudaGraph> {
        match graph {
            Captured::Cuda(g) => Ok(g),
            Captured::Emulated(_) => Err(Error::OtherDevice { what: "a graph the emulator captured" }),
        }
    }
}

/// The most cooperative launches one graph holds ([`GraphBarriers`]).
pub(super) const GRAPH_BARRIERS: usize = 8;

/// Where a cooperative launch's memory comes from (`cg_kernel::cg::barrier::launch_memory`,
/// `docs/abi.md`): it must not be shared by two launches in flight. Outside
/// a capture, launches on one stream run one after another and each leaves
/// its memory at rest, so each stream has one block. A graph's launches may
/// run beside launches on any stream, and beside each other on parallel
/// branches, so each cooperative launch captured gets a block of the graph's
/// own; a graph is never in flight twice (CUDA orders the launches of one
/// executable graph).
pub(super) struct GraphBarriers {
    pub(super) memory: cudarc::driver::CudaSlice<u8>,
    pub(super) taken: usize,
}
