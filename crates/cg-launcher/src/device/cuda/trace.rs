//! A traced launch on a CUDA device: the traced module's `CG_TRACE`
//! pointed at fresh words, and what the blocks recorded kept after it.

use super::*;

impl Cuda {
    /// Points the traced module's `CG_TRACE` at fresh zeroed words for a
    /// launch of `blocks` blocks (`cg_kernel::trace`).
    pub(super) fn start_trace(&self, module: &Arc<CudaModule>, blocks: u32) -> Result<cudarc::driver::CudaSlice<u64>> {
        let words = self.stream.alloc_zeros::<u64>(blocks as usize * cg_kernel::trace::WORDS_PER_BLOCK).map_err(Error::driver("cuMemAllocAsync"))?;
        let (address, _) = words.device_ptr(&self.stream);
        let mut slot = module.get_global("CG_TRACE", &self.stream).map_err(Error::driver("cuModuleGetGlobal"))?;
        self.stream.memcpy_htod(&address.to_ne_bytes(), &mut slot).map_err(Error::driver("cuMemcpyHtoD"))?;
        Ok(words)
    }

    /// Points `CG_TRACE` once at one buffer that every launch of up to
    /// `cg_kernel::trace::MAX_TIMED_BLOCKS` blocks records into, unread.
    pub(super) fn unread_trace(&self, module: &Arc<CudaModule>, blocks: u32) -> Result<()> {
        if blocks as usize > cg_kernel::trace::MAX_TIMED_BLOCKS {
            return Err(Error::GridTooLarge { kernel: self.last_kernel.get(), blocks: blocks as u64 });
        }
        if self.unread.get().is_none() {
            let words = self.start_trace(module, cg_kernel::trace::MAX_TIMED_BLOCKS as u32)?;
            let _ = self.unread.set(words);
        }
        Ok(())
    }

    /// Waits for the traced launch and keeps what its blocks recorded.
    pub(super) fn end_trace(&self, kernel: &'static str, shape: Shape, cooperative: bool, words: &cudarc::driver::CudaSlice<u64>) -> Result<()> {
        self.finish()?;
        let w = self.stream.clone_dtoh(words).map_err(Error::driver("cuMemcpyDtoH"))?;
        let nonzero = |x: u64| (x != 0).then_some(x);
        let trace = w
            .chunks_exact(cg_kernel::trace::WORDS_PER_BLOCK)
            .enumerate()
            .filter(|(_, r)| r[0] != 0)
            .map(|(b, r)| super::super::BlockTrace {
                block: b as u32,
                place: (r[0] - 1) as u32,
                start: r[1],
                arrive: nonzero(r[2]),
                leave: nonzero(r[3]),
                end: nonzero(r[4]),
                // The traced module holds no cluster kernels (they are sm_90 only).
                cluster_arrive: None,
                cluster_leave: None,
            })
            .collect();
        self.traces.borrow_mut().push(super::super::LaunchTrace {
            kernel,
            blocks: shape.blocks,
            threads_per_block: shape.threads_per_block,
            cooperative,
            cluster: shape.cluster.map(|c| c.blocks),
            unit: super::super::TraceUnit::Nanoseconds,
            trace,
            error: None,
        });
        Ok(())
    }
}
