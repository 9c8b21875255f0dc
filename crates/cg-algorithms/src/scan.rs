//! `DeviceScan`: one ordinary launch, decoupled look-back. Where the tiles
//! are at most [`PERSISTENT_TILES_PER_BLOCK`] times the blocks the GPU holds
//! at once, the grid is the blocks it holds, each looping over tiles and
//! loading its next while it waits on the look-back (the kernels crate's
//! `persistent_*` scans); beyond that, one block per tile.

use crate::element::ScanDef;
use crate::{Algorithms, Element, Op, Result, THREADS, tiles};
use cg_algorithms_kernels::operator::OperatorKernels;
use cg_launcher::device::Buffer;
use cg_launcher::launch::ensure_len;

/// The most tiles per resident block for which a scan takes the persistent
/// kernels: measured on an H100 (records/2026-12-06-h100-persistent-scan),
/// they took 9% and 11% less time than the one-tile kernels at 2^20 and
/// 2^22 elements (0.5 and 1.9 tiles per resident block), and more from
/// 2^24 (7.8), where each block's tiles wait in turn on the look-back.
pub(crate) const PERSISTENT_TILES_PER_BLOCK: u32 = 2;

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

    /// [`inclusive_scan`](Self::inclusive_scan) by an operator of your own,
    /// whose kernels `cg_algorithms_kernels::operator_kernels!` stamped in
    /// your kernel crate (CUB's `DeviceScan::InclusiveScan` with a functor).
    pub fn inclusive_scan_with<T: Element>(&mut self, x: &Buffer<T>, y: &mut Buffer<T>, op: &OperatorKernels<T>) -> Result<()> {
        self.scan_by("inclusive_scan_with", x, y, op.scan(true), None)
    }

    /// [`exclusive_scan`](Self::exclusive_scan) by an operator of your own,
    /// `y[0]` its identity (CUB's `DeviceScan::ExclusiveScan` with a functor
    /// and the identity as its initial value).
    pub fn exclusive_scan_with<T: Element>(&mut self, x: &Buffer<T>, y: &mut Buffer<T>, op: &OperatorKernels<T>) -> Result<()> {
        self.scan_by("exclusive_scan_with", x, y, op.scan(false), None)
    }

    fn scan<T: Element>(&mut self, x: &Buffer<T>, y: &mut Buffer<T>, op: Op, inclusive: bool) -> Result<()> {
        let call = if inclusive { "inclusive_scan" } else { "exclusive_scan" };
        self.scan_by(call, x, y, T::scan_def(op, inclusive, false), Some(T::scan_def(op, inclusive, true)))
    }

    /// The scan of `x` into `y` by the one-tile kernel `def`, or by the
    /// `persistent` one where it is given and the tiles are few enough;
    /// `call` names the call in an error.
    fn scan_by<T: Element>(
        &mut self,
        call: &'static str,
        x: &Buffer<T>,
        y: &mut Buffer<T>,
        def: &'static ScanDef<T>,
        persistent: Option<&'static ScanDef<T>>,
    ) -> Result<()> {
        let n = x.len();
        ensure_len(call, "y", n, y.len())?;
        if n == 0 {
            return Ok(());
        }
        let tiles = tiles(n)?;
        let (def, blocks) = match persistent {
            Some(persistent) => {
                let resident = self.resident(persistent)?;
                if tiles <= PERSISTENT_TILES_PER_BLOCK.saturating_mul(resident) { (persistent, tiles.min(resident).max(1)) } else { (def, tiles) }
            }
            None => (def, tiles),
        };
        let gpu = self.gpu;
        let kernel = gpu.kernel(def)?;
        let l = self.lookback(tiles as usize)?;
        // SAFETY: x and y hold n elements (checked above) and are whole
        // buffers, 256-byte aligned; status holds a word per tile, none of
        // this epoch (each launch takes a new one, and the words are cleared
        // before the epochs wrap); the ticket is 0 (zeroed, and each launch's
        // last ticket sets it back; a failed launch's is replaced); blocks
        // of THREADS, one per tile for the one-tile kernels and at least one
        // for the persistent ones; the launch gives the kernel's own shared
        // memory; this Algorithms' calls run one after another.
        let launched = unsafe { kernel.launch(blocks, THREADS, (&x.slice(..), y.slice_mut(..), l.status.slice_mut(..), l.ticket.slice_mut(..), l.epoch, n)) };
        self.finish_lookback(launched).map(|_| ())
    }
}
