//! `DeviceSelect`: one ordinary launch, decoupled look-back over the kept
//! counts: a block per tile where the GPU holds them all at once, else the
//! blocks it holds, each looping over tiles.

use crate::{Algorithms, Element, Lookback, Result, THREADS, check_u32_count, tiles};
use cg_algorithms_kernels::select as k;
use cg_launcher::device::Buffer;
use cg_launcher::launch::ensure_len;

/// Which elements [`Algorithms::select_if`] keeps (CUB's `DeviceSelect::If`
/// with a comparison against one value as its operator).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule<T> {
    /// `x > value`.
    Greater(T),
    /// `x < value`.
    Less(T),
    /// `x == value`.
    Equal(T),
    /// `x != value`.
    NotEqual(T),
}

impl<T: Copy + PartialOrd> Rule<T> {
    /// The kernel's rule number and value.
    fn encode(self) -> (u32, T) {
        match self {
            Rule::Greater(v) => (k::GREATER, v),
            Rule::Less(v) => (k::LESS, v),
            Rule::Equal(v) => (k::EQUAL, v),
            Rule::NotEqual(v) => (k::NOT_EQUAL, v),
        }
    }

    /// Whether the rule keeps `x`, as the kernel decides it.
    pub fn keeps(self, x: T) -> bool {
        let (rule, value) = self.encode();
        k::keeps(rule, x, value)
    }
}

impl Algorithms<'_> {
    /// The elements of `x` that `rule` keeps, in order, into the front of
    /// `y`; returns how many (CUB's `DeviceSelect::If`, the count read back,
    /// which waits for the device). `y` holds at least `x.len()` elements;
    /// those past the count are left as they were.
    pub fn select_if<T: Element>(&mut self, x: &Buffer<T>, y: &mut Buffer<T>, rule: Rule<T>) -> Result<usize> {
        let gpu = self.gpu;
        let count = self.select_if_on_device(x, y, rule)?;
        Ok(gpu.read(count)?[0] as usize)
    }

    /// The elements of `x` whose byte in `flags` is not 0, in order, into
    /// the front of `y`; returns how many (CUB's `DeviceSelect::Flagged`).
    /// `flags` and `y` hold at least `x.len()` elements.
    pub fn select_flagged<T: Element>(&mut self, x: &Buffer<T>, flags: &Buffer<u8>, y: &mut Buffer<T>) -> Result<usize> {
        let gpu = self.gpu;
        let count = self.select_flagged_on_device(x, flags, y)?;
        Ok(gpu.read(count)?[0] as usize)
    }

    /// [`select_if`](Self::select_if), its count left on the device in the
    /// returned one-element buffer, which holds it until the next selection
    /// (nothing waits for the device: what a timed loop calls).
    pub fn select_if_on_device<T: Element>(&mut self, x: &Buffer<T>, y: &mut Buffer<T>, rule: Rule<T>) -> Result<&Buffer<u32>> {
        let n = x.len();
        let def = T::select_if_def(false);
        ensure_len("select_if", "y", n, y.len())?;
        check_u32_count(n)?;
        let (rule, value) = rule.encode();
        let (def, blocks) = self.selection_grid(n, def, T::select_if_def(true))?;
        let kernel = self.gpu.kernel(def)?;
        // SAFETY: x and y hold n elements (checked above) and are whole
        // buffers, 256-byte aligned; count holds one; n is below 2^32;
        // status holds a word per tile, none of this epoch; the ticket is 0;
        // blocks of THREADS, one per tile for the one-tile kernel and at
        // least one for the persistent one; the launch gives the kernel's
        // own shared memory; this Algorithms' calls run one after another
        // (as for the scan).
        self.run_selection(n, blocks, |blocks, l| unsafe {
            kernel.launch(
                blocks,
                THREADS,
                (&x.slice(..), y.slice_mut(..), l.count.slice_mut(..), l.status.slice_mut(..), l.ticket.slice_mut(..), l.epoch, rule, value, n),
            )
        })
    }

    /// [`select_flagged`](Self::select_flagged), its count left on the
    /// device as [`select_if_on_device`](Self::select_if_on_device) leaves it.
    pub fn select_flagged_on_device<T: Element>(&mut self, x: &Buffer<T>, flags: &Buffer<u8>, y: &mut Buffer<T>) -> Result<&Buffer<u32>> {
        let n = x.len();
        let def = T::select_flagged_def(false);
        ensure_len("select_flagged", "flags", n, flags.len())?;
        ensure_len("select_flagged", "y", n, y.len())?;
        check_u32_count(n)?;
        let (def, blocks) = self.selection_grid(n, def, T::select_flagged_def(true))?;
        let kernel = self.gpu.kernel(def)?;
        // SAFETY: as select_if_on_device's; flags holds n bytes (checked
        // above) and is a whole buffer, 256-byte aligned.
        self.run_selection(n, blocks, |blocks, l| unsafe {
            kernel.launch(
                blocks,
                THREADS,
                (&x.slice(..), &flags.slice(..), y.slice_mut(..), l.count.slice_mut(..), l.status.slice_mut(..), l.ticket.slice_mut(..), l.epoch, n),
            )
        })
    }

    /// The kernel and grid of a selection over `n` elements: a block per
    /// tile where the GPU holds them all at once, else the persistent
    /// kernel on the blocks it holds.
    ///
    /// Measured on an H100 (`records/2026-12-07-h100-persistent-select`),
    /// each against CUB in the same process: where there are more tiles
    /// than resident blocks, the blocks that loop took 0.92 times CUB's time
    /// against 1.01 at 2^22 elements, 0.92 against 1.05 at 2^23, 0.99
    /// against 1.08 at 2^24 and 1.06 against 1.09 at 2^26; where there are
    /// not (2^16, 2^20), the one-tile blocks were 1-7% faster. The scans
    /// take the blocks that loop only up to twice the resident blocks
    /// (`crate::scan`), having measured them slower beyond.
    fn selection_grid<P: cg_kernel::kernels::Params>(
        &mut self,
        n: usize,
        one_tile: &'static cg_kernel::kernels::KernelDef<P, cg_kernel::kernels::NoGridSync>,
        persistent: &'static cg_kernel::kernels::KernelDef<P, cg_kernel::kernels::NoGridSync>,
    ) -> Result<(&'static cg_kernel::kernels::KernelDef<P, cg_kernel::kernels::NoGridSync>, u32)> {
        let tiles = tiles(n)?;
        let resident = self.resident(persistent)?;
        Ok(if tiles <= resident { (one_tile, tiles) } else { (persistent, resident.max(1)) })
    }

    /// A selection over `n` elements in `blocks`: the look-back's storage
    /// for its tiles, then `launch(blocks, storage)`, or for no elements the
    /// count set to 0 and no launch; returns the count's buffer.
    pub(crate) fn run_selection(
        &mut self,
        n: usize,
        blocks: u32,
        launch: impl FnOnce(u32, Lookback<'_>) -> cg_launcher::error::Result<()>,
    ) -> Result<&Buffer<u32>> {
        let tiles = tiles(n)?;
        let gpu = self.gpu;
        let l = self.lookback(tiles as usize)?;
        let launched = if n == 0 { gpu.write(l.count, 0, &[0]) } else { launch(blocks, l) };
        self.finish_lookback(launched)
    }

    /// The count buffer after a selection's launch; a failed launch's ticket replaced.
    pub(crate) fn finish_lookback(&mut self, launched: cg_launcher::error::Result<()>) -> Result<&Buffer<u32>> {
        if launched.is_err() {
            self.lookback_failed();
        }
        launched?;
        Ok(self.scratch.count.as_ref().expect("made by lookback"))
    }
}
