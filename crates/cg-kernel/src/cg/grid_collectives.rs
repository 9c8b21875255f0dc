//! Collectives over the whole grid, inside one `#[kernel(cooperative)]`
//! kernel: [`GridGroup::reduce`], [`GridGroup::inclusive_scan`],
//! [`GridGroup::exclusive_scan`], [`GridGroup::select`] (stream
//! compaction), each with a form for several items per thread, and
//! [`GridGroup::histogram_even`]. C++ cooperative groups has `cg::reduce` and
//! the scans for tiles only; CCCL's experimental
//! `cudax::coop::reduce(this_grid, ...)` is the grid reduce, with the grid's
//! size fixed at compile time and its partials in one `__device__` array.
//!
//! How each works: every block combines its threads' values (the warps'
//! shuffles, then one warp over the warps' totals, in shared memory), its
//! thread 0 writes the block's word to the launch's scratch, the grid barrier,
//! then every block combines the words it needs, in a fixed order. So a call
//! costs about one `grid.sync()` plus two block-wide reductions and one read
//! of the words, and a float result is the same on every run of the same grid
//! and block (the order depends on nothing else): there is no faster order
//! that gives up determinism.
//!
//! Where their memory is:
//! - the words: the launch's own memory (`cg::barrier::launch_memory`),
//!   which the host brings in the kernel's hidden last parameter, one block
//!   per stream and one per launch captured in a graph, as it does for the
//!   watched barrier. Several launches in flight never share it; nothing
//!   about the grid is fixed at compile time.
//! - the block's part: [`GRID_SHARED_BYTES`] of shared memory that
//!   `#[kernel(cooperative)]` adds at the end of every cooperative kernel's
//!   shared memory, used by nothing else.
//!
//! **Every block, and every thread of each, makes the same calls in the same
//! order**, as for `grid.sync()`, which each call contains: with the same
//! types and operator, and the same number of items. That is the one rule
//! the compiler cannot see. On the emulator a call some blocks skip is named
//! with its line, as a barrier some blocks never reach, and so are blocks
//! that meet at the barrier from different calls (`grid.reduce::<f32, Plus>()`
//! against `grid.sync()`, another operator, another item count). On a GPU
//! the same mistake hangs or combines the wrong words; the memory the calls
//! touch is their own and is reached only with relaxed (volatile) accesses,
//! so it is a wrong answer or a hang, never undefined behaviour.
//!
//! The operator must be associative and commutative (the blocks' words are
//! combined as a tree), as C++'s `cg::reduce` asks.

use super::block::{MAX_THREADS_PER_BLOCK, ThreadBlock, this_thread_block};
use super::block_collectives::block_exclusive_scan;
use super::grid::{CanCollect, GridGroup, LaunchKind};
use super::ops::{Plus, ReduceOp};
use super::tile::{ShuffleValue, ThreadBlockTile, tiled_partition};
use crate::mem::{DynamicShared, Out, Word};

/// Threads in a warp.
const WARP: u32 = 32;

/// Warps in the largest block: one shared slot each.
const MAX_WARPS: usize = (MAX_THREADS_PER_BLOCK / WARP) as usize;

/// Values of one call a block sends in its words: [`GridGroup::reduce_array`]'s
/// `K` is at most this (the launch memory's words per block).
pub const MAX_GRID_VALUES: usize = super::barrier::launch_memory::SLOT_WORDS as usize;

/// Bytes of shared memory the grid collectives use in each block: one slot
/// of [`MAX_GRID_VALUES`] 8-byte values per warp of the largest block, then
/// the word that tells the block where the launch's scratch is (16 bytes,
/// so the region stays a whole number of 16-byte lines).
/// `#[kernel(cooperative)]` adds them at the end of every cooperative
/// kernel's shared memory (`KernelDef::shared_bytes` counts them), so a
/// kernel declares nothing.
pub const GRID_SHARED_BYTES: u32 = (MAX_WARPS * MAX_GRID_VALUES * 8 + 16) as u32;

/// The byte of the word that says which slot and how many blocks of scratch.
#[cfg_attr(not(target_arch = "nvptx64"), allow(dead_code))]
const TICKET_BYTE: usize = MAX_WARPS * MAX_GRID_VALUES * 8;

/// A value the grid collectives combine: `u32`, `i32`, `u64`, `i64`, `f32`
/// and `f64` (a tile's shuffles move it, and the launch's scratch holds it
/// in one 8-byte word).
pub trait GridValue: ShuffleValue + Word {}
impl<T: ShuffleValue + Word> GridValue for T {}

/// What [`GridGroup::select`] tells a thread: where its kept value goes, and
/// how many the grid keeps (CUB's `DeviceSelect` writes the second to
/// `num_selected_out`; here every thread gets it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Selected {
    /// This thread's place among the kept values, in grid rank order, if it
    /// keeps one; `None` if it does not.
    pub index: Option<usize>,
    /// How many threads of the grid keep one.
    pub count: usize,
}

/// What [`GridGroup::select_items`] tells a thread: where each of its kept
/// items goes, and how many the grid keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SelectedItems<const K: usize> {
    /// Each item's place among the kept items (in grid rank order, then item
    /// order), if it is kept.
    pub index: [Option<usize>; K],
    /// How many items of the grid are kept.
    pub count: usize,
}

/// A sample [`GridGroup::histogram_even`] bins: `u8`, `u16`, `u32`, `i32`,
/// `f32` (the types of cg-algorithms' `histogram_even`, and `u32`).
pub trait Sample: Copy + sealed::Sealed {
    /// The type of the range's bounds: `i64` for the integers, so that a
    /// range may end past the type's largest value (`0..256` for bytes, as
    /// CUB takes an `int` level), `f32` for `f32`.
    type Level: Copy;

    /// The bin of `self` among `bins` even bins from `lower` (included) to
    /// `upper` (excluded), as CUB's `HistogramEven` computes it; `None`
    /// outside the range (and for a NaN).
    fn bin(self, lower: Self::Level, upper: Self::Level, bins: u32) -> Option<u32>;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! integer_sample {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Sample for $t {
            type Level = i64;

            #[inline(always)]
            fn bin(self, lower: i64, upper: i64, bins: u32) -> Option<u32> {
                let x = self as i64;
                if x < lower || x >= upper {
                    return None;
                }
                // x - lower < upper - lower <= 2^64: both fit a u64.
                let (offset, width) = (x.wrapping_sub(lower) as u64, upper.wrapping_sub(lower) as u64);
                Some(if width <= u32::MAX as u64 {
                    // offset < 2^32 and bins < 2^32: the product fits in 64 bits.
                    offset * bins as u64 / width
                } else {
                    (offset as u128 * bins as u128 / width as u128) as u64
                } as u32)
            }
        }
    )*};
}
integer_sample!(u8, u16, u32, i32);

impl sealed::Sealed for f32 {}
impl Sample for f32 {
    type Level = f32;

    /// As CUB computes it, in `f32`: a range whose width overflows `f32`
    /// (wider than `f32::MAX`) puts every sample in range in bin 0, and
    /// one too narrow for `bins / (upper - lower)` to be finite, in the
    /// last. cg-algorithms' host call refuses such a range by name; inside a
    /// kernel, keep `upper - lower` a normal float.
    #[inline(always)]
    fn bin(self, lower: f32, upper: f32, bins: u32) -> Option<u32> {
        // A NaN fails both comparisons' negation: out of range.
        if !(self >= lower && self < upper) {
            return None;
        }
        let b = ((self - lower) * (bins as f32 / (upper - lower))) as u32;
        Some(b.min(bins - 1))
    }
}

/// The grid collectives' shared memory in this block: the last
/// [`GRID_SHARED_BYTES`] of the launch's shared memory.
#[derive(Clone, Copy)]
struct Region {
    start: usize,
}

impl Region {
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn here() -> Region {
        Region { start: crate::mem::shared_tail_start(GRID_SHARED_BYTES as usize) }
    }

    /// The warps' values: warp `w`'s value `k` at `w * MAX_GRID_VALUES + k`
    /// (a block's scan uses the first `MAX_WARPS`, one per warp).
    #[inline(always)]
    fn warps<T: Word>(self) -> DynamicShared<T> {
        // SAFETY: the region's first MAX_WARPS * MAX_GRID_VALUES values of at
        // most 8 bytes, 8-byte aligned (the tail starts on 16), within the
        // launch's shared memory (`shared_tail_start` checked the launch's size).
        unsafe { crate::mem::static_array::<T>(self.start, MAX_WARPS * MAX_GRID_VALUES) }
    }

    #[cfg_attr(not(target_arch = "nvptx64"), allow(dead_code))]
    #[inline(always)]
    fn ticket(self) -> DynamicShared<u32> {
        // SAFETY: as above: the ticket word.
        unsafe { crate::mem::static_array::<u32>(self.start + TICKET_BYTE, 1) }
    }
}

/// Where this call's words are in the launch's scratch: the slot (the grid
/// barriers' parity) and the blocks the scratch has room for, packed as
/// `capacity << 1 | slot`. Read by thread 0 at the call's start, so that
/// the loads overlap the block's own reduction.
#[derive(Clone, Copy)]
struct Ticket(#[cfg_attr(not(target_arch = "nvptx64"), allow(dead_code))] u32);

impl<L: LaunchKind> GridGroup<L> {
    /// `v` combined over every thread of the grid, returned to every thread
    /// (the grid-wide `cg::reduce(grid, v, op)`; CUB's `DeviceReduce::Reduce`
    /// called from inside a kernel).
    ///
    /// The order is fixed by the grid's and the block's sizes alone, so a
    /// float sum is the same on every run of the same launch.
    ///
    /// ```
    /// use cg_kernel::cg::{Plus, this_grid};
    /// use cg_kernel::kernel;
    /// use cg_kernel::mem::{In, Out};
    ///
    /// /// Each thread's share of `x`, then the grid's sum of all of them, in
    /// /// one launch: the lesson's exercise, one call.
    /// ///
    /// /// # Safety
    /// /// `x` holds `n` floats and `out` one.
    /// #[kernel(cooperative)]
    /// pub unsafe fn sum(x: In<f32>, out: Out<f32>, n: usize) {
    ///     let grid = this_grid();
    ///     let mut v = 0.0;
    ///     let mut i = grid.thread_rank();
    ///     while i < n {
    ///         // SAFETY: i < n.
    ///         v += unsafe { x.read(i) };
    ///         i += grid.num_threads();
    ///     }
    ///     let total = grid.reduce(v, Plus);
    ///     if grid.thread_rank() == 0 {
    ///         // SAFETY: one float.
    ///         unsafe { out.write(0, total) };
    ///     }
    /// }
    /// # assert_eq!(SUM.name(), "sum");
    /// ```
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn reduce<T: GridValue, Op: const ReduceOp<T>>(&self, v: T, op: Op) -> T
    where
        L: CanCollect,
    {
        emu_call!(collective("grid.reduce", &[core::any::type_name::<T>(), core::any::type_name::<Op>()]));
        self.reduce_in_order([v], op)[0]
    }

    /// Each of `K` values combined over every thread of the grid, in one
    /// grid barrier: several dot products of an iterative solver at the
    /// price of one (`K` at most [`MAX_GRID_VALUES`], a compile-time error
    /// otherwise). Value `k` is the [`reduce`](Self::reduce) of every
    /// thread's `v[k]`, in the same order.
    ///
    /// ```
    /// use cg_kernel::cg::{Plus, this_grid};
    /// use cg_kernel::kernel;
    /// use cg_kernel::mem::{In, Out};
    ///
    /// /// `x·y` and `x·x` over the grid, one barrier for both.
    /// ///
    /// /// # Safety
    /// /// `x` and `y` hold `n` floats; `out` two.
    /// #[kernel(cooperative)]
    /// pub unsafe fn two_dots(x: In<f32>, y: In<f32>, out: Out<f32>, n: usize) {
    ///     let grid = this_grid();
    ///     let mut dots = [0.0f32; 2];
    ///     let mut i = grid.thread_rank();
    ///     while i < n {
    ///         // SAFETY: i < n.
    ///         let (a, b) = unsafe { (x.read(i), y.read(i)) };
    ///         dots[0] += a * b;
    ///         dots[1] += a * a;
    ///         i += grid.num_threads();
    ///     }
    ///     let [xy, xx] = grid.reduce_array(dots, Plus);
    ///     if grid.thread_rank() == 0 {
    ///         // SAFETY: two floats.
    ///         unsafe {
    ///             out.write(0, xy);
    ///             out.write(1, xx);
    ///         }
    ///     }
    /// }
    /// # assert!(TWO_DOTS.grid_sync());
    /// ```
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn reduce_array<T: GridValue, Op: const ReduceOp<T>, const K: usize>(&self, v: [T; K], op: Op) -> [T; K]
    where
        L: CanCollect,
    {
        emu_call!(collective("grid.reduce_array", &[core::any::type_name::<T>(), core::any::type_name::<Op>(), items_name::<K>()]));
        self.reduce_in_order(v, op)
    }

    /// The combination of each thread's `K` items over the grid, returned
    /// to every thread ([`reduce`](Self::reduce) of each thread's items
    /// combined left to right).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn reduce_items<T: GridValue, Op: const ReduceOp<T>, const K: usize>(&self, items: [T; K], op: Op) -> T
    where
        L: CanCollect,
    {
        emu_call!(collective("grid.reduce_items", &[core::any::type_name::<T>(), core::any::type_name::<Op>(), items_name::<K>()]));
        self.reduce_in_order([fold::<T, Op, K>(items)], op)[0]
    }

    /// `v` combined over this thread and every thread of lower grid rank
    /// (the grid-wide `cg::inclusive_scan`; CUB's `DeviceScan::InclusiveScan`
    /// inside a kernel).
    ///
    /// ```
    /// use cg_kernel::cg::{Plus, this_grid};
    /// use cg_kernel::kernel;
    /// use cg_kernel::mem::Out;
    ///
    /// /// `y[i] = 1 + 2 + ... + (i + 1)` over every thread of the grid.
    /// ///
    /// /// # Safety
    /// /// `y` holds one `u32` per thread of the grid.
    /// #[kernel(cooperative)]
    /// pub unsafe fn triangle(y: Out<u32>) {
    ///     let grid = this_grid();
    ///     let i = grid.thread_rank();
    ///     let running = grid.inclusive_scan(i as u32 + 1, Plus);
    ///     // SAFETY: one element per thread.
    ///     unsafe { y.write(i, running) };
    /// }
    /// # assert!(TRIANGLE.grid_sync());
    /// ```
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn inclusive_scan<T: GridValue, Op: const ReduceOp<T>>(&self, v: T, op: Op) -> T
    where
        L: CanCollect,
    {
        emu_call!(collective("grid.inclusive_scan", &[core::any::type_name::<T>(), core::any::type_name::<Op>()]));
        Op::combine(self.exclusive_in_order(v, op), v)
    }

    /// `v` combined over every thread of lower grid rank, the operator's
    /// identity for rank 0 (the grid-wide `cg::exclusive_scan`; CUB's
    /// `DeviceScan::ExclusiveScan` inside a kernel).
    ///
    /// ```
    /// use cg_kernel::cg::{Plus, this_grid};
    /// use cg_kernel::kernel;
    /// use cg_kernel::mem::{In, Out};
    ///
    /// /// Where each thread's `counts[i]` items start, packed one after another.
    /// ///
    /// /// # Safety
    /// /// `counts` and `starts` hold one `u32` per thread of the grid.
    /// #[kernel(cooperative)]
    /// pub unsafe fn offsets(counts: In<u32>, starts: Out<u32>) {
    ///     let grid = this_grid();
    ///     let i = grid.thread_rank();
    ///     // SAFETY: one element per thread.
    ///     let start = grid.exclusive_scan(unsafe { counts.read(i) }, Plus);
    ///     // SAFETY: as above.
    ///     unsafe { starts.write(i, start) };
    /// }
    /// # assert!(OFFSETS.grid_sync());
    /// ```
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn exclusive_scan<T: GridValue, Op: const ReduceOp<T>>(&self, v: T, op: Op) -> T
    where
        L: CanCollect,
    {
        emu_call!(collective("grid.exclusive_scan", &[core::any::type_name::<T>(), core::any::type_name::<Op>()]));
        self.exclusive_in_order(v, op)
    }

    /// Each of this thread's `K` items combined with every item before it
    /// (in grid rank order, then item order), itself included.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn inclusive_scan_items<T: GridValue, Op: const ReduceOp<T>, const K: usize>(&self, items: [T; K], op: Op) -> [T; K]
    where
        L: CanCollect,
    {
        emu_call!(collective("grid.inclusive_scan_items", &[core::any::type_name::<T>(), core::any::type_name::<Op>(), items_name::<K>()]));
        let mut acc = self.exclusive_in_order(fold::<T, Op, K>(items), op);
        items.map(|x| {
            acc = Op::combine(acc, x);
            acc
        })
    }

    /// Each of this thread's `K` items' exclusive scan: every item before it
    /// (in grid rank order, then item order) combined, the identity for the
    /// grid's first item.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn exclusive_scan_items<T: GridValue, Op: const ReduceOp<T>, const K: usize>(&self, items: [T; K], op: Op) -> [T; K]
    where
        L: CanCollect,
    {
        emu_call!(collective("grid.exclusive_scan_items", &[core::any::type_name::<T>(), core::any::type_name::<Op>(), items_name::<K>()]));
        let mut acc = self.exclusive_in_order(fold::<T, Op, K>(items), op);
        items.map(|x| {
            let before = acc;
            acc = Op::combine(acc, x);
            before
        })
    }

    /// Stream compaction inside a kernel: each thread says whether it keeps
    /// a value, and learns where the kept values go, packed in grid rank
    /// order (stable), and how many the grid keeps (CUB's `DeviceSelect::Flagged`
    /// inside a kernel). The count reaches every thread, so the kernel can
    /// go on with the compacted array at once.
    ///
    /// ```
    /// use cg_kernel::cg::this_grid;
    /// use cg_kernel::kernel;
    /// use cg_kernel::mem::{In, Out};
    ///
    /// /// The positive values of `x` (one per thread), packed in order into
    /// /// `kept`, and their count in `count[0]`.
    /// ///
    /// /// # Safety
    /// /// `x` and `kept` hold one float per thread of the grid, `count` one `u32`.
    /// #[kernel(cooperative)]
    /// pub unsafe fn positives(x: In<f32>, kept: Out<f32>, count: Out<u32>) {
    ///     let grid = this_grid();
    ///     let i = grid.thread_rank();
    ///     // SAFETY: one float per thread.
    ///     let v = unsafe { x.read(i) };
    ///     let s = grid.select(v > 0.0);
    ///     if let Some(at) = s.index {
    ///         // SAFETY: at < s.count <= threads of the grid.
    ///         unsafe { kept.write(at, v) };
    ///     }
    ///     if i == 0 {
    ///         // SAFETY: one count.
    ///         unsafe { count.write(0, s.count as u32) };
    ///     }
    /// }
    /// # assert!(POSITIVES.grid_sync());
    /// ```
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn select(&self, keep: bool) -> Selected
    where
        L: CanCollect,
    {
        emu_call!("grid.select()");
        let (before, count) = self.count_in_order(keep as u32);
        Selected { index: keep.then_some(before as usize), count: count as usize }
    }

    /// [`select`](Self::select) of `K` items per thread: where each kept item
    /// goes (grid rank order, then item order) and how many the grid keeps.
    /// The grid's items, `K` times its threads, must be fewer than 2^32: a
    /// larger count traps on a GPU and faults on the emulator.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn select_items<const K: usize>(&self, keep: [bool; K]) -> SelectedItems<K>
    where
        L: CanCollect,
    {
        emu_call!(collective("grid.select_items", &[items_name::<K>()]));
        if (self.num_threads() as u64).saturating_mul(K as u64) >= 1 << 32 {
            #[cfg(target_arch = "nvptx64")]
            crate::arch::trap();
            #[cfg(not(target_arch = "nvptx64"))]
            panic!("grid.select_items() of {K} items per thread over {} threads: the grid's items must be fewer than 2^32", self.num_threads());
        }
        let mine = keep.iter().filter(|&&k| k).count() as u32;
        let (mut at, count) = self.count_in_order(mine);
        let index = keep.map(|k| {
            let i = k.then_some(at as usize);
            at += k as u32;
            i
        });
        SelectedItems { index, count: count as usize }
    }

    /// An even-bin histogram of every thread's samples, into `bins`:
    /// `bins[b]` counts the grid's samples in `[lower + b w, lower + (b + 1) w)`
    /// where `w = (upper - lower) / bins.len()`, as CUB's `HistogramEven`
    /// (`None` samples, and samples outside `[lower, upper)`, are not
    /// counted). `bins` is zeroed by the call, and the counts are complete,
    /// and visible to every thread, when it returns.
    ///
    /// Lanes of a warp whose samples fall in one bin add once, together
    /// (`match_any`), so a histogram of few bins does not queue every thread
    /// on one counter. Two grid barriers: one after the zeroing, one after the
    /// adds.
    ///
    /// ```
    /// use cg_kernel::cg::this_grid;
    /// use cg_kernel::kernel;
    /// use cg_kernel::mem::{In, Out};
    ///
    /// /// 16 bins of the bytes of `x` (0 to 255, each bin 16 values), one byte per thread.
    /// ///
    /// /// # Safety
    /// /// `x` holds one byte per thread of the grid; `bins` 16 counts, which
    /// /// nothing else reads or writes while the kernel runs.
    /// #[kernel(cooperative)]
    /// pub unsafe fn byte_histogram(x: In<u8>, bins: Out<u32>) {
    ///     let grid = this_grid();
    ///     // SAFETY: one byte per thread.
    ///     let b = unsafe { x.read(grid.thread_rank()) };
    ///     // SAFETY: `bins` holds 16 counts, the kernel's alone.
    ///     unsafe { grid.histogram_even([Some(b)], bins, 16, 0, 256) };
    /// }
    /// # assert!(BYTE_HISTOGRAM.grid_sync());
    /// ```
    ///
    /// # Safety
    /// Every thread of the grid passes the same `bins`, `num_bins`, `lower`
    /// and `upper`; `bins` holds `num_bins` counts that nothing else reads or
    /// writes from the call's start to its end (this grid's threads may read
    /// them after it); `num_bins` is at least 1 and `lower < upper`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn histogram_even<S: Sample, const K: usize>(&self, samples: [Option<S>; K], bins: Out<u32>, num_bins: u32, lower: S::Level, upper: S::Level)
    where
        L: CanCollect,
    {
        emu_call!(collective("grid.histogram_even", &[core::any::type_name::<S>(), items_name::<K>()]));
        let (rank, threads) = (self.thread_rank(), self.num_threads());
        let mut b = rank;
        while b < num_bins as usize {
            // SAFETY: b < num_bins, the caller's `bins`.
            unsafe { bins.write(b, 0) };
            b += threads;
        }
        self.sync();
        let warp = tiled_partition::<WARP>(&this_thread_block());
        for s in samples {
            let bin = s.and_then(|s| s.bin(lower, upper, num_bins));
            // Every lane takes part in the match; lanes without a bin match
            // among themselves on u32::MAX and add nothing.
            let key = bin.unwrap_or(u32::MAX);
            let same = warp.match_any(key);
            let leader = same.trailing_zeros();
            if let Some(bin) = bin
                && warp.thread_rank() == leader
            {
                // SAFETY: bin < num_bins (Sample::bin), the caller's `bins`,
                // written between the two barriers by atomic adds only.
                unsafe { bins.atomic_add(bin as usize, same.count_ones()) };
            }
        }
        self.sync();
    }

    /// The collectives' shared memory, after what a grid barrier needs: on
    /// the emulator a collective in a kernel not declared
    /// `#[kernel(cooperative)]` (reached around the compile-time guard) or
    /// not launched cooperatively is named here, as `grid.sync()` is.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn region(&self) -> Region
    where
        L: CanCollect,
    {
        #[cfg(not(target_arch = "nvptx64"))]
        cg_emulator::thread::grid_barrier_allowed(self.is_valid());
        Region::here()
    }

    /// Thread 0's early loads of where this call's words go (see [`Ticket`]);
    /// nothing in the other threads, and nothing on the emulator.
    #[inline(always)]
    fn ticket(&self, block: &ThreadBlock) -> Ticket
    where
        L: CanCollect,
    {
        #[cfg(target_arch = "nvptx64")]
        if block.thread_rank() == 0 {
            return self.scratch_ticket();
        }
        let _ = block;
        Ticket(0)
    }

    /// The slot (the parity of the grid barriers completed: the single
    /// word's top bit, or the watched barrier's epoch) and the scratch's
    /// room, from the launch's memory. A grid made without launch memory,
    /// or with room for fewer blocks than it has, traps here, before any word
    /// is written.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    fn scratch_ticket(&self) -> Ticket
    where
        L: CanCollect,
    {
        use super::barrier::launch_memory::SCRATCH_OFFSET;
        use super::barrier::watched::{COUNTERS, LINE_BYTES, group};
        use crate::arch;
        if self.launch.is_null() {
            arch::trap();
        }
        // SAFETY (each load): the launch memory's header word, and the
        // barrier word this block alone has not yet arrived at (a barrier
        // cannot complete before this block arrives, so every block reads
        // the same parity); valid global addresses (the entry's contract).
        let capacity = unsafe { arch::ld_relaxed_gpu(self.launch.add(SCRATCH_OFFSET as usize / 4)) };
        let slot = if self.watched {
            let g = group(self.block_rank() as u32, COUNTERS);
            (unsafe { arch::ld_relaxed_gpu(self.launch.add(((COUNTERS + g) * LINE_BYTES / 4) as usize)) }) & 1
        } else {
            (unsafe { arch::ld_relaxed_gpu(self.workspace.add(1)) }) >> 31
        };
        if capacity < self.num_blocks() as u32 || capacity >= 1 << 31 {
            arch::trap();
        }
        Ticket(capacity << 1 | slot)
    }

    /// The block's words to every block: thread 0 writes `mine` (its own
    /// values; the other threads' are ignored) to the launch's scratch,
    /// then the grid barrier; returns where the words are, for
    /// [`word`](Self::word).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn exchange<const K: usize>(&self, block: &ThreadBlock, ticket: Ticket, mine: [u64; K], region: Region) -> Ticket
    where
        L: CanCollect,
    {
        const { assert!(K <= MAX_GRID_VALUES, "a grid collective sends at most MAX_GRID_VALUES (8) values a block") };
        if block.thread_rank() == 0 {
            #[cfg(target_arch = "nvptx64")]
            {
                let (capacity, slot) = (ticket.0 >> 1, ticket.0 & 1);
                for (k, &w) in mine.iter().enumerate() {
                    let at = super::barrier::launch_memory::word(slot, self.block_rank() as u32, k as u32, capacity);
                    // SAFETY: block_rank < capacity (checked by the ticket)
                    // and k < SLOT_WORDS, in the launch's scratch.
                    unsafe { crate::arch::st_relaxed_gpu_b64((self.launch as *mut u64).add(at), w) };
                }
                // SAFETY: the ticket word of the region.
                unsafe { region.ticket().store(0, ticket.0) };
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                let _ = (ticket, region);
                for (k, &w) in mine.iter().enumerate() {
                    cg_emulator::thread::grid_publish(k as u32, w);
                }
            }
        }
        // Thread 0's writes are ordered before its arrival by the barrier's
        // release; every block's before this block's reads by its acquire,
        // and the block barrier after it (which also carries the ticket).
        self.sync();
        #[cfg(target_arch = "nvptx64")]
        {
            // SAFETY: the ticket word, written by thread 0 before the barrier.
            Ticket(unsafe { region.ticket().load(0) })
        }
        #[cfg(not(target_arch = "nvptx64"))]
        Ticket(0)
    }

    /// Block `from`'s word `k` of the last [`exchange`](Self::exchange).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn word(&self, words: Ticket, from: usize, k: usize) -> u64
    where
        L: CanCollect,
    {
        #[cfg(target_arch = "nvptx64")]
        {
            let at = super::barrier::launch_memory::word(words.0 & 1, from as u32, k as u32, words.0 >> 1);
            // SAFETY: from < num_blocks <= capacity and k < SLOT_WORDS, in
            // the launch's scratch, written before the barrier the exchange passed.
            unsafe { crate::arch::ld_relaxed_gpu_b64((self.launch as *const u64).add(at)) }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let _ = words;
            cg_emulator::thread::grid_gathered(from as u32, k as u32)
        }
    }

    /// Every block's words `0..end` combined in a fixed order, value by
    /// value, returned to every thread of the block: thread `t` folds words
    /// `t, t + threads, ...`, then the block combines the threads' folds.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn combine_words<T: GridValue, Op: const ReduceOp<T>, const K: usize>(
        &self,
        block: &ThreadBlock,
        words: Ticket,
        end: usize,
        op: Op,
        region: Region,
    ) -> [T; K]
    where
        L: CanCollect,
    {
        let (t, threads) = (block.thread_rank() as usize, block.num_threads() as usize);
        let mut acc = [Op::identity(); K];
        let mut i = t;
        while i < end {
            for (k, a) in acc.iter_mut().enumerate() {
                *a = Op::combine(*a, T::from_bits64(self.word(words, i, k)));
            }
            i += threads;
        }
        all_of_block(block, acc, op, region)
    }

    /// [`reduce_array`](Self::reduce_array) without its name.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn reduce_in_order<T: GridValue, Op: const ReduceOp<T>, const K: usize>(&self, v: [T; K], op: Op) -> [T; K]
    where
        L: CanCollect,
    {
        let block = this_thread_block();
        let region = self.region();
        let ticket = self.ticket(&block);
        let totals = block_totals(&block, v, op, region);
        let words = self.exchange(&block, ticket, totals.map(Word::to_bits64), region);
        self.combine_words(&block, words, self.num_blocks(), op, region)
    }

    /// The exclusive scan without its name: the block's own exclusive scan,
    /// then the words of the blocks before it.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn exclusive_in_order<T: GridValue, Op: const ReduceOp<T>>(&self, v: T, op: Op) -> T
    where
        L: CanCollect,
    {
        let block = this_thread_block();
        let region = self.region();
        let (in_block, words) = self.scan_and_exchange(&block, v, op, region);
        let [before] = self.combine_words(&block, words, self.block_rank(), op, region);
        Op::combine(before, in_block)
    }

    /// What both in-order collectives start with: the block's exclusive scan
    /// of `v`, and the block's total sent through the exchange. Returns the
    /// thread's place in its block and the exchange's words.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn scan_and_exchange<T: GridValue, Op: const ReduceOp<T>>(&self, block: &ThreadBlock, v: T, op: Op, region: Region) -> (T, Ticket)
    where
        L: CanCollect,
    {
        let ticket = self.ticket(block);
        let warp = tiled_partition::<WARP>(block);
        // SAFETY: every thread of the block makes this call (the collectives'
        // rule); the region's first MAX_WARPS values hold one per warp, and
        // only these collectives use them, each ending with a block barrier.
        let (in_block, total) = unsafe { block_exclusive_scan(block, &warp, v, op, region.warps()) };
        (in_block, self.exchange(block, ticket, [total.to_bits64()], region))
    }

    /// Counts before this thread in grid rank order and in the whole grid,
    /// in one pass: each word carries a block's count, and the block's fold
    /// adds `count << 32 | count` for the blocks before it and `count` for the
    /// rest, so one 64-bit sum holds both (each below 2^32: no carry).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn count_in_order(&self, mine: u32) -> (u32, u32)
    where
        L: CanCollect,
    {
        let block = this_thread_block();
        let region = self.region();
        let (in_block, words) = self.scan_and_exchange(&block, mine, Plus, region);
        let (t, threads, me) = (block.thread_rank() as usize, block.num_threads() as usize, self.block_rank());
        let mut acc = 0u64;
        let mut i = t;
        while i < self.num_blocks() {
            let count = self.word(words, i, 0) & 0xffff_ffff;
            acc = acc.wrapping_add(if i < me { count << 32 | count } else { count });
            i += threads;
        }
        let [both] = all_of_block(&block, [acc], Plus, region);
        ((both >> 32) as u32 + in_block, both as u32)
    }
}

/// The block's totals of each of `v`'s values, in thread 0 (the other
/// threads' are not them): each warp's shuffles, then the first warp over
/// the warps' totals.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
fn block_totals<T: GridValue, Op: const ReduceOp<T>, const K: usize>(block: &ThreadBlock, v: [T; K], op: Op, region: Region) -> [T; K] {
    let warp = tiled_partition::<WARP>(block);
    let mine = v.map(|x| warp.reduce(x, op));
    let slots = region.warps::<T>();
    let w = warp.meta_group_rank() as usize;
    if warp.thread_rank() == 0 {
        for (k, &m) in mine.iter().enumerate() {
            // SAFETY: warp w's slot k; read only after the barrier below.
            unsafe { slots.store(w * MAX_GRID_VALUES + k, m) };
        }
    }
    block.sync();
    let mut totals = [Op::identity(); K];
    if w == 0 {
        totals = first_warp_totals(&warp, slots, op);
    }
    // The slots are written again only after the grid barrier, whose block
    // barrier comes after this warp's reads.
    totals
}

/// The first warp's combination of the warps' values in `slots`, value by
/// value, to each of its lanes.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
fn first_warp_totals<T: GridValue, Op: const ReduceOp<T>, const K: usize>(warp: &ThreadBlockTile<WARP>, slots: DynamicShared<T>, op: Op) -> [T; K] {
    let lane = warp.thread_rank();
    core::array::from_fn(|k| {
        // SAFETY: lane < warps of the block, each slot written before the caller's barrier.
        let x = if lane < warp.meta_group_size() { unsafe { slots.load(lane as usize * MAX_GRID_VALUES + k) } } else { Op::identity() };
        warp.reduce(x, op)
    })
}

/// Each of `acc`'s values combined over the block, to every thread: each
/// warp's shuffles, the warps' totals through shared memory, each warp
/// combining them all.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
fn all_of_block<T: GridValue, Op: const ReduceOp<T>, const K: usize>(block: &ThreadBlock, acc: [T; K], op: Op, region: Region) -> [T; K] {
    let warp = tiled_partition::<WARP>(block);
    let mine = acc.map(|x| warp.reduce(x, op));
    let slots = region.warps::<T>();
    if warp.thread_rank() == 0 {
        let w = warp.meta_group_rank() as usize;
        for (k, &m) in mine.iter().enumerate() {
            // SAFETY: warp w's slot k; this call's slots were last read
            // before the grid barrier (and its block barriers) it follows.
            unsafe { slots.store(w * MAX_GRID_VALUES + k, m) };
        }
    }
    block.sync();
    let totals = first_warp_totals(&warp, slots, op);
    // The next call may write the slots only after every warp has read them.
    block.sync();
    totals
}

/// `items` combined left to right.
#[inline(always)]
fn fold<T: GridValue, Op: const ReduceOp<T>, const K: usize>(items: [T; K]) -> T {
    let mut acc = Op::identity();
    for x in items {
        acc = Op::combine(acc, x);
    }
    acc
}

/// The emulator's name of a collective call, with its type arguments.
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
fn collective(kind: &'static str, types: &[&'static str]) -> &'static str {
    cg_emulator::thread::collective_name(kind, types)
}

/// `K`, as a type argument of a collective's name (`4`): one string per
/// distinct `K`, kept for the process.
#[cfg(not(target_arch = "nvptx64"))]
fn items_name<const K: usize>() -> &'static str {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static NAMES: Mutex<Option<HashMap<usize, &'static str>>> = Mutex::new(None);
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    names.get_or_insert_with(HashMap::new).entry(K).or_insert_with(|| Box::leak(K.to_string().into_boxed_str()))
}
