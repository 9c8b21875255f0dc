//! Device memory on the CUDA backend: allocations freed in stream order,
//! held back while branches or a capture run, and memory work kept in a
//! branch's order.

use super::*;

/// Frees of device memory held back while a branch of `in_parallel` runs
/// or a graph is captured: every allocation is freed on the stream that
/// made it, the context's default stream, which waits for the branches only
/// at the join, and cannot be used at all during a capture.
#[derive(Default)]
pub(crate) struct HeldFrees {
    /// Branch runs and captures under way (a branch may be inside a capture).
    holding: std::sync::atomic::AtomicUsize,
    held: std::sync::Mutex<Vec<cudarc::driver::CudaSlice<u8>>>,
}

impl HeldFrees {
    fn hold(&self) {
        self.holding.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Ends one hold; after the last, frees what was held, on the default
    /// stream, which by then waits for every branch.
    fn release(&self) {
        if self.holding.fetch_sub(1, std::sync::atomic::Ordering::Relaxed) == 1 {
            drop(std::mem::take(&mut *self.held.lock().unwrap_or_else(|e| e.into_inner())));
        }
    }
}

/// A device allocation, freed when dropped, after the join if dropped in a
/// branch (see [`HeldFrees`]).
pub(crate) struct Allocation {
    slice: Option<cudarc::driver::CudaSlice<u8>>,
    frees: Arc<HeldFrees>,
}

impl Drop for Allocation {
    fn drop(&mut self) {
        if let Some(slice) = self.slice.take()
            && self.frees.holding.load(std::sync::atomic::Ordering::Relaxed) > 0
        {
            self.frees.held.lock().unwrap_or_else(|e| e.into_inner()).push(slice);
        }
    }
}

impl Cuda {
    /// Refuses memory work during a capture; inside a branch of
    /// `in_parallel`, runs `op` (which queues on the default stream) in the
    /// branch's order: after the branch's work so far, before its later work.
    pub(super) fn in_order<R>(&self, what: &'static str, op: impl FnOnce() -> Result<R>) -> Result<R> {
        self.usable()?;
        if self.capturing.get().is_some() {
            return Err(Error::MemoryInCapture { what });
        }
        #[cfg(all(cg_mutants, feature = "barrier-timeout"))]
        if self.mutant_unordered_memory.get() {
            return op();
        }
        let Some(branch) = self.branch.get() else { return op() };
        let main = self.stream.cu_stream();
        self.stream_waits(main, branch)?;
        let r = op()?;
        self.stream_waits(branch, main)?;
        Ok(r)
    }

    /// Makes `waiter` wait for what is queued on `on` so far.
    pub(super) fn stream_waits(&self, waiter: sys::CUstream, on: sys::CUstream) -> Result<()> {
        let e = match self.ordering.get() {
            Some(e) => e,
            None => {
                let e = self.ctx.new_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING)).map_err(Error::driver("cuEventCreate"))?;
                self.ordering.get_or_init(|| e)
            }
        };
        // SAFETY: the event and both streams are this context's, live for the call.
        unsafe {
            driver::record_event(e.cu_event(), on).map_err(Error::driver("cuEventRecord"))?;
            cudarc::driver::result::stream::wait_event(waiter, e.cu_event(), sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT)
                .map_err(Error::driver("cuStreamWaitEvent"))
        }
    }

    /// Holds frees until [`release_frees`](Self::release_frees) (see [`HeldFrees`]).
    pub(super) fn hold_frees(&self) {
        #[cfg(all(cg_mutants, feature = "barrier-timeout"))]
        if self.mutant_unordered_memory.get() {
            return;
        }
        self.frees.hold();
    }

    pub(super) fn release_frees(&self) {
        #[cfg(all(cg_mutants, feature = "barrier-timeout"))]
        if self.mutant_unordered_memory.get() {
            return;
        }
        self.frees.release();
    }

    pub(super) fn allocation(&self, slice: cudarc::driver::CudaSlice<u8>, bytes: usize) -> Memory {
        let (address, _) = slice.device_ptr(&self.stream);
        Memory::new(address, bytes, Owner::Cuda(Allocation { slice: Some(slice), frees: self.frees.clone() }))
    }
}
