//! `DeviceScan`: one ordinary launch, decoupled look-back.

use crate::{Algorithms, Element, Op, Result, THREADS, tiles};
use cg_launcher::device::Buffer;
use cg_launcher::launch::ensure_len;

impl Algorithms<'_> {
    /// `y[i] = x[0] op ... op x[i]` for every `i < x.len()`: CUB's
    /// `DeviceScan::InclusiveScan` (`InclusiveSum` for [`Op::Sum`]). `y`
    /// holds at least `x.len()` elements; those past it are left as they were.
    pub fn inclusive_scan<T: Element>(&mut self, x: &Buffer<T>, y: &mut Buffer<T>, op: Op) -> Result<()> {
        self.scan(x, y, op, true)
    }

    /// `y[i] = x[0] op ... op x[i - 1]`, and `y[0]` the identity of `op`
    /// ([`Element::identity`]): CUB's `DeviceScan::ExclusiveScan`
    /// (`ExclusiveSum` for [`Op::Sum`]), with the identity as its initial value.
    pub fn exclusive_scan<T: Element>(&mut self, x: &Buffer<T>, y: &mut Buffer<T>, op: Op) -> Result<()> {
        self.scan(x, y, op, false)
    }

    fn scan<T: Element>(&mut self, x: &Buffer<T>, y: &mut Buffer<T>, op: Op, inclusive: bool) -> Result<()> {
        let n = x.len();
        let def = T::scan_def(op, inclusive);
        ensure_len(def.name(), "y", n, y.len())?;
        if n == 0 {
            return Ok(());
        }
        let blocks = tiles(n)?;
        let gpu = self.gpu;
        let kernel = gpu.kernel(def)?;
        let l = self.lookback(blocks as usize)?;
        // SAFETY: x and y hold n elements (checked above) and are whole
        // buffers, 256-byte aligned; status holds a word per tile, none of
        // this epoch (each launch takes a new one, and the words are cleared
        // before the epochs wrap); the ticket is 0 (zeroed, and each launch's
        // last tile sets it back; a failed launch's is replaced); one block
        // of THREADS per tile; the launch gives the kernel's own shared
        // memory; this Algorithms' calls run one after another.
        let launched = unsafe { kernel.launch(blocks, THREADS, (&x.slice(..), y.slice_mut(..), l.status.slice_mut(..), l.ticket.slice_mut(..), l.epoch, n)) };
        self.finish_lookback(launched).map(|_| ())
    }
}
