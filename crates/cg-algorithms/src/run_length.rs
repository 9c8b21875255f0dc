//! `DeviceRunLengthEncode::Encode`: the runs' heads selected by decoupled
//! look-back (as `DeviceSelect`), then each run's value and length.

use crate::{Algorithms, Element, Result, THREADS, check_u32_count, tiles};
use cg_launcher::device::Buffer;
use cg_launcher::launch::ensure_len;

impl Algorithms<'_> {
    /// The runs of equal consecutive elements of `x`: each run's value into
    /// the front of `unique` and its length into the front of `lengths`, in
    /// order; returns how many runs (CUB's `DeviceRunLengthEncode::Encode`,
    /// the count read back, which waits for the device). Elements are equal
    /// as `==` says (so each `f32` NaN is a run of its own, as in CUB).
    /// `unique` and `lengths` hold at least `x.len()` elements; those past
    /// the count are left as they were.
    ///
    /// Two launches: the heads' indices (a run's first element) selected by
    /// look-back into storage this `Algorithms` keeps, then the values and
    /// lengths from them.
    pub fn run_length_encode<T: Element>(&mut self, x: &Buffer<T>, unique: &mut Buffer<T>, lengths: &mut Buffer<u32>) -> Result<usize> {
        let gpu = self.gpu;
        let count = self.run_length_encode_on_device(x, unique, lengths)?;
        Ok(gpu.read(count)?[0] as usize)
    }

    /// [`run_length_encode`](Self::run_length_encode), its count of runs
    /// left on the device in the returned one-element buffer, which holds it
    /// until the next selection or encoding (nothing waits for the device:
    /// what a timed loop calls).
    pub fn run_length_encode_on_device<T: Element>(&mut self, x: &Buffer<T>, unique: &mut Buffer<T>, lengths: &mut Buffer<u32>) -> Result<&Buffer<u32>> {
        let n = x.len();
        let (heads_def, runs_def) = T::run_length_defs();
        ensure_len("run_length_encode", "unique", n, unique.len())?;
        ensure_len("run_length_encode", "lengths", n, lengths.len())?;
        check_u32_count(n)?;
        let gpu = self.gpu;
        if n > 0 && self.scratch.heads.as_ref().is_none_or(|h| h.len() < n) {
            self.scratch.heads = Some(gpu.zeros::<u32>(n)?);
        }
        // Out of the scratch while the selection borrows the look-back's storage
        // (run_selection launches only for n > 0).
        let mut heads = self.scratch.heads.take();
        // SAFETY: x holds n elements and heads at least n (made above), whole
        // buffers, 256-byte aligned; count holds one; n is below 2^32; status
        // holds a word per tile, none of this epoch; the ticket is 0; one
        // block of THREADS per tile; the launch gives the kernel's own shared
        // memory; this Algorithms' calls run one after another.
        let selected = self
            .run_selection(n, tiles(n)?, |blocks, l| unsafe {
                gpu.kernel(heads_def)?.launch(
                    blocks,
                    THREADS,
                    (
                        &x.slice(..),
                        heads.as_mut().expect("made for n > 0").slice_mut(..),
                        l.count.slice_mut(..),
                        l.status.slice_mut(..),
                        l.ticket.slice_mut(..),
                        l.epoch,
                        n,
                    ),
                )
            })
            .map(|_| ());
        self.scratch.heads = heads;
        selected?;
        if n > 0 {
            let (heads, count) = (self.scratch.heads.as_ref().expect("made above"), self.scratch.count.as_ref().expect("made by lookback"));
            let grid = n.div_ceil(THREADS as usize).min(4 * 1024) as u32;
            // SAFETY: heads holds count[0] heads of x's runs in order (the
            // launch above, on the same stream); unique and lengths hold n
            // elements (checked above); x holds n.
            unsafe {
                gpu.kernel(runs_def)?.launch(
                    grid,
                    THREADS,
                    (&x.slice(..), &heads.slice(..), &count.slice(..), unique.slice_mut(..), lengths.slice_mut(..), n),
                )?
            };
        }
        Ok(self.scratch.count.as_ref().expect("made by lookback"))
    }
}
