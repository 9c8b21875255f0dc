//! Device-wide algorithms on a [`Gpu`] (a CUDA GPU or the emulator): what
//! CUB's `DeviceReduce`, `DeviceScan`, `DeviceSelect`, `DeviceHistogram`
//! and `DeviceRadixSort` do, each one call, with the temporary storage
//! owned by an [`Algorithms`] and kept between calls.
//!
//! | call | CUB | launch |
//! |---|---|---|
//! | [`Algorithms::reduce`] | `DeviceReduce::Sum`, `Min`, `Max` | one cooperative launch, one `grid.sync()` |
//! | [`Algorithms::inclusive_scan`], [`Algorithms::exclusive_scan`] | `DeviceScan::InclusiveScan`, `ExclusiveScan` | one launch, decoupled look-back |
//! | [`Algorithms::reduce_with`], [`Algorithms::inclusive_scan_with`], [`Algorithms::exclusive_scan_with`] | `DeviceReduce::Reduce`, `DeviceScan::InclusiveScan`, `ExclusiveScan` with a functor | as above |
//! | [`Algorithms::select_if`], [`Algorithms::select_flagged`] | `DeviceSelect::If`, `Flagged` | one launch, decoupled look-back |
//! | [`Algorithms::run_length_encode`] | `DeviceRunLengthEncode::Encode` | two launches: the heads by decoupled look-back, then the runs |
//! | [`Algorithms::histogram_even`] | `DeviceHistogram::HistogramEven` | one cooperative launch, one `grid.sync()` |
//! | [`Algorithms::sort_keys`], [`Algorithms::sort_pairs`], [`Algorithms::sort_keys_double_buffer`], [`Algorithms::sort_pairs_double_buffer`] | `DeviceRadixSort::SortKeys`, `SortPairs` (descending, `begin_bit`, `end_bit`: [`Order`]; [`DoubleBuffer`]) | one cooperative launch counts every pass's digits, then a launch per 8 bits by decoupled look-back on each digit's count |
//!
//! Reduce, scan and select take `f32`, `i32` and `u32` ([`Element`]) with
//! [`Op::Sum`], [`Op::Min`] and [`Op::Max`]; reduce and scan also take an
//! operator of yours ([`Algorithms::reduce_with`],
//! [`Algorithms::inclusive_scan_with`], [`Algorithms::exclusive_scan_with`]),
//! whose kernels `cg_algorithms_kernels::operator_kernels!` stamps in a
//! kernel crate of yours; the histogram takes `u8`,
//! `u16`, `i32` and `f32` samples ([`Sample`]); the sorts take keys of
//! `u8` to `u64`, `i8` to `i64`, `f32` and `f64` ([`Key`], which says how
//! signed and float keys order), with values of any [`Element`]. Every call is safe: it checks
//! the buffers' lengths and the arguments, sizes the grid (a cooperative one
//! from the kernel's own occupancy, so its `grid.sync()` always completes),
//! and makes the one `unsafe` launch whose contract those checks keep.
//! Which algorithm uses a grid barrier, and why, is in
//! `cg_algorithms_kernels`'s documentation; the timings against CUB are in
//! the repository's `docs/algorithms.md`.
//!
//! ```
//! use cg_algorithms::{Algorithms, Op, Order, Rule};
//! use cg_launcher::device::{EmulatedDevice, EmulatorOptions, Gpu};
//!
//! # fn main() -> Result<(), cg_algorithms::Error> {
//! let gpu = Gpu::emulated(EmulatedDevice::T4, EmulatorOptions::default());
//! let mut alg = Algorithms::new(&gpu);
//! let x = gpu.upload(&[3.0f32, -1.0, 4.0, 1.0, -5.0])?;
//! assert_eq!(alg.reduce(&x, Op::Sum)?, 2.0);
//! assert_eq!(alg.reduce(&x, Op::Min)?, -5.0);
//!
//! let mut y = gpu.zeros::<f32>(5)?;
//! alg.inclusive_scan(&x, &mut y, Op::Max)?;
//! assert_eq!(gpu.read(&y)?, [3.0, 3.0, 4.0, 4.0, 4.0]);
//!
//! let kept = alg.select_if(&x, &mut y, Rule::Greater(0.0))?;
//! assert_eq!(gpu.read(&y)?[..kept], [3.0, 4.0, 1.0]);
//!
//! let bytes = gpu.upload(&[0u8, 7, 255, 7])?;
//! let mut bins = gpu.zeros::<u32>(4)?;
//! alg.histogram_even(&bytes, &mut bins, 0, 256)?; // 4 bins of 64 values
//! assert_eq!(gpu.read(&bins)?, [3, 0, 0, 1]);
//!
//! let keys = gpu.upload(&[30u32, 10, 20, 10])?;
//! let values = gpu.upload(&[0i32, 1, 2, 3])?;
//! let (mut sorted, mut moved) = (gpu.zeros::<u32>(4)?, gpu.zeros::<i32>(4)?);
//! alg.sort_pairs(&keys, &mut sorted, &values, &mut moved, Order::ASCENDING)?;
//! assert_eq!(gpu.read(&sorted)?, [10, 10, 20, 30]);
//! assert_eq!(gpu.read(&moved)?, [1, 3, 2, 0]); // the two 10s in their order
//! # Ok(())
//! # }
//! ```

#![deny(unsafe_op_in_unsafe_fn, missing_docs)]

mod element;
mod error;
mod histogram;
mod reduce;
mod run_length;
mod scan;
mod select;
mod sort;

pub use cg_algorithms_kernels::operator::OperatorKernels;
pub use element::{Element, Level, Op, Sample};
pub use error::Error;
pub use select::Rule;
pub use sort::{DoubleBuffer, Key, Order};

use cg_launcher::device::{Buffer, Gpu};

// Links the kernels' crate, whose PTX and kernels the launcher finds by name.
use cg_algorithms_kernels as _;

/// Elements per tile of the look-back calls (the scans and selections):
/// each tile is scanned by one block of 256 threads, 16 elements a thread.
pub const LOOKBACK_TILE: usize = cg_algorithms_kernels::TILE_LEN;

/// Elements per block of the grid-strided cooperative calls (the reduce and
/// the histogram) when the input is too short to fill the GPU: a block for
/// every 4,096 elements, up to the kernel's capacity.
const GRID_SPAN: usize = THREADS as usize * 16;

/// The result of a call here.
pub type Result<T> = std::result::Result<T, Error>;

/// Threads per block of every kernel.
const THREADS: u32 = cg_algorithms_kernels::THREADS;

/// The algorithms on one [`Gpu`], and their temporary storage: the
/// look-back's status words, ticket and epoch, the blocks' partial results
/// and the one-element results, and the sorts' digit counts, look-back
/// words and other buffer of keys and of values (as long as the longest
/// simple-form sort's), each grown when a call needs more and kept for the
/// next.
///
/// Calls on one `Algorithms` run one after another on the device's stream:
/// one `Algorithms` per stream of work (its storage is what a call in
/// flight uses).
pub struct Algorithms<'g> {
    gpu: &'g Gpu,
    scratch: Scratch,
}

/// What the kernels keep between calls.
#[derive(Default)]
pub(crate) struct Scratch {
    /// One status word per look-back tile.
    status: Option<Buffer<u64>>,
    /// The look-back's ticket: 0 between launches.
    ticket: Option<Buffer<u32>>,
    /// The look-back's last epoch (0: none yet).
    epoch: u32,
    /// A selection's count.
    count: Option<Buffer<u32>>,
    /// The run-length encoding's heads: one index per element.
    heads: Option<Buffer<u32>>,
    /// The reductions' partial results and results, per element type.
    pub(crate) partials: element::PerType,
    /// The radix sort's storage.
    sort: sort::SortScratch,
    /// The cooperative kernels' capacity in blocks, and the resident blocks
    /// of the persistent scans, by kernel crate and name.
    capacity: std::collections::HashMap<(&'static str, &'static str), u32>,
}

impl<'g> Algorithms<'g> {
    /// The algorithms on `gpu`, with no storage yet.
    pub fn new(gpu: &'g Gpu) -> Algorithms<'g> {
        Algorithms { gpu, scratch: Scratch::default() }
    }

    /// The device the calls run on.
    pub fn gpu(&self) -> &'g Gpu {
        self.gpu
    }

    /// The look-back's storage for `tiles` tiles and a new epoch: the status
    /// words (cleared before the epochs wrap), the ticket, and a
    /// selection's count.
    fn lookback(&mut self, tiles: usize) -> Result<Lookback<'_>> {
        let s = &mut self.scratch;
        if s.status.as_ref().is_none_or(|b| b.len() < tiles) || s.epoch + 1 == cg_algorithms_kernels::lookback::EPOCHS {
            let len = tiles.max(s.status.as_ref().map_or(0, |b| b.len()));
            s.status = Some(self.gpu.zeros::<u64>(len)?);
            s.epoch = 0;
        }
        if s.ticket.is_none() {
            s.ticket = Some(self.gpu.zeros::<u32>(1)?);
        }
        if s.count.is_none() {
            s.count = Some(self.gpu.zeros::<u32>(1)?);
        }
        s.epoch += 1;
        Ok(Lookback {
            status: s.status.as_mut().expect("made above"),
            ticket: s.ticket.as_mut().expect("made above"),
            epoch: s.epoch,
            count: s.count.as_mut().expect("made above"),
        })
    }

    /// After a look-back launch that failed: the ticket may be where it
    /// stopped, so the next launch gets a new one.
    fn lookback_failed(&mut self) {
        self.scratch.ticket = None;
    }

    /// The most blocks of `threads` a cooperative launch of `def` may use,
    /// asked of the occupancy API once per kernel (each kernel is launched
    /// with one block size).
    fn capacity<P: cg_kernel::kernels::Params>(&mut self, def: &cg_kernel::kernels::KernelDef<P, cg_kernel::kernels::GridSync>, threads: u32) -> Result<u32> {
        let gpu = self.gpu;
        self.blocks_once((def.crate_name(), def.name()), || Ok(gpu.cooperative_kernel(def)?.limits(threads)?.capacity()))
    }

    /// The blocks of `def` the GPU holds at once (the occupancy API's
    /// blocks per SM times the SMs), asked once per kernel.
    fn resident<P: cg_kernel::kernels::Params>(&mut self, def: &cg_kernel::kernels::KernelDef<P, cg_kernel::kernels::NoGridSync>) -> Result<u32> {
        let gpu = self.gpu;
        self.blocks_once((def.crate_name(), def.name()), || Ok(gpu.kernel(def)?.occupancy(THREADS)?.capacity()))
    }

    /// The blocks kept for kernel `name` (its crate's and its own), or what `ask` gives, kept.
    fn blocks_once(&mut self, name: (&'static str, &'static str), ask: impl FnOnce() -> Result<u32>) -> Result<u32> {
        if let Some(&c) = self.scratch.capacity.get(&name) {
            return Ok(c);
        }
        let c = ask()?;
        self.scratch.capacity.insert(name, c);
        Ok(c)
    }
}

/// A look-back launch's storage.
struct Lookback<'a> {
    status: &'a mut Buffer<u64>,
    ticket: &'a mut Buffer<u32>,
    epoch: u32,
    count: &'a mut Buffer<u32>,
}

/// The tiles of a look-back launch over `n` elements, as a grid size.
fn tiles(n: usize) -> Result<u32> {
    u32::try_from(n.div_ceil(cg_algorithms_kernels::TILE_LEN)).map_err(|_| Error::TooLong { n, most: u32::MAX as usize })
}

/// Refuses `n` at or above 2^32 for the kernels that count in `u32`.
fn check_u32_count(n: usize) -> Result<()> {
    if n > u32::MAX as usize {
        return Err(Error::TooLong { n, most: u32::MAX as usize });
    }
    Ok(())
}
