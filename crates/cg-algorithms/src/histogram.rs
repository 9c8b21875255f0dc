//! `DeviceHistogram::HistogramEven`: one cooperative launch, one `grid.sync()`.

use crate::element::Level;
use crate::{Algorithms, Error, Result, Sample, check_u32_count};
use cg_launcher::device::Buffer;

/// Threads per block of the histogram: 32 warps, 16 copies of 256 bins.
/// With [`HISTOGRAM_SPAN`] and the kernels' counting loop per way of finding
/// a bin, on an H100 the histogram of bytes took 0.65 to 0.90 times CUB's
/// time from 2^20 bytes, where 256-thread blocks of at least 4,096 samples
/// took 0.76 to 1.45 with those loops
/// (`records/2026-12-07-h100-histogram-loops`).
const HISTOGRAM_THREADS: u32 = 1024;

/// The fewest samples a block of the histogram takes (one 16-byte vector
/// per thread of bytes), so that short inputs have fewer blocks, each with
/// fewer bins to add into the global ones.
const HISTOGRAM_SPAN: usize = 16 * 1024;

impl Algorithms<'_> {
    /// `bins[b]` = how many of `samples` fall in bin `b` of `bins.len()`
    /// even bins over `[lower, upper)` (CUB's
    /// `DeviceHistogram::HistogramEven` with `bins.len() + 1` levels from
    /// `lower` to `upper`; the levels are `i64` for integer samples, so that
    /// `[0, 256)` takes every byte, and `f32` for `f32`): bin `(s - lower) * bins / (upper - lower)`,
    /// rounded down, computed in integers for integer samples and in `f32`
    /// for `f32` ([`Sample`]'s `bin`). Samples outside the range, and NaN,
    /// are in no bin. The bins are overwritten, not added to.
    pub fn histogram_even<S: Sample>(&mut self, samples: &Buffer<S>, bins: &mut Buffer<u32>, lower: Level<S>, upper: Level<S>) -> Result<()> {
        let n = samples.len();
        let num_bins = u32::try_from(bins.len()).map_err(|_| Error::TooLong { n: bins.len(), most: u32::MAX as usize })?;
        if num_bins == 0 {
            return Err(Error::NoBins);
        }
        // Not `lower < upper` (NaN included) is refused.
        if lower.partial_cmp(&upper) != Some(std::cmp::Ordering::Less) {
            return Err(Error::EmptyRange { lower: format!("{lower:?}"), upper: format!("{upper:?}") });
        }
        if !S::range_fits(lower, upper, num_bins) {
            return Err(Error::RangeTooWide { lower: format!("{lower:?}"), upper: format!("{upper:?}") });
        }
        check_u32_count(n)?;
        let def = S::histogram_def();
        let blocks = self.capacity(def, HISTOGRAM_THREADS)?.min(n.div_ceil(HISTOGRAM_SPAN).max(1) as u32);
        let kernel = self.gpu.cooperative_kernel(def)?;
        let launch = kernel.configure(blocks, HISTOGRAM_THREADS)?;
        // SAFETY: samples holds n elements and is a whole buffer (256-byte
        // aligned); bins holds num_bins > 0 counters and is borrowed mutably
        // for the call; lower < upper (checked above); n is below 2^32; the
        // launch gives the kernel's own shared memory.
        unsafe { launch.launch((&samples.slice(..), bins.slice_mut(..), num_bins, lower, upper, n))? };
        Ok(())
    }
}
