//! The grid collectives' test kernels (`GridGroup::reduce`, the scans,
//! `select`, `histogram_even`): each thread writes what every call returned
//! to it, so a test checks every thread's result against the CPU's, on the
//! emulator and on a GPU (`host/tests/grid_collectives.rs`); the mistakes the
//! emulator names; and the loops that time a call against `grid.sync()`.

use crate::cg::{BitAnd, BitOr, BitXor, Greater, GridGroup, GridValue, Less, Plus, ReduceOp, this_grid};
use crate::kernel;
use crate::mem::{In, Out};

/// Values each thread writes per operator: the reduce, the inclusive scan,
/// the exclusive scan.
pub const GRID_VALUES_PER_OP: usize = 3;

/// Items per thread in the `_items` forms the kernels call.
pub const GRID_ITEMS: usize = 3;

/// Values each thread writes after its operators: `reduce_items`, then
/// `inclusive_scan_items` and `exclusive_scan_items` of its
/// [`GRID_ITEMS`] items (`Plus`).
pub const GRID_ITEM_VALUES: usize = 1 + 2 * GRID_ITEMS;

/// Each thread's results of one operator, at `at` of `out`: a helper that
/// calls the grid collectives takes the kernel's grid as `&GridGroup`.
///
/// # Safety
/// Every thread of the grid calls it with the same operator (a grid
/// collective's rule); `out` holds `at + GRID_VALUES_PER_OP` values.
#[inline(always)]
unsafe fn one_op<T: GridValue, Op: const ReduceOp<T>>(grid: &GridGroup, v: T, op: Op, out: Out<T>, at: usize) {
    let r = grid.reduce(v, op);
    let i = grid.inclusive_scan(v, op);
    let e = grid.exclusive_scan(v, op);
    // SAFETY: the caller's contract.
    unsafe {
        out.write(at, r);
        out.write(at + 1, i);
        out.write(at + 2, e);
    }
}

/// The items forms (`Plus`) of each thread's [`GRID_ITEMS`] items, at `at` of `out`.
///
/// # Safety
/// As [`one_op`], with `out` holding `at + GRID_ITEM_VALUES` values.
#[inline(always)]
unsafe fn items_forms<T: GridValue>(grid: &GridGroup, items: [T; GRID_ITEMS], out: Out<T>, at: usize)
where
    Plus: const ReduceOp<T>,
{
    let r = grid.reduce_items(items, Plus);
    let inclusive = grid.inclusive_scan_items(items, Plus);
    let exclusive = grid.exclusive_scan_items(items, Plus);
    // SAFETY: the caller's contract.
    unsafe {
        out.write(at, r);
        for (j, (i, e)) in inclusive.into_iter().zip(exclusive).enumerate() {
            out.write(at + 1 + j, i);
            out.write(at + 1 + GRID_ITEMS + j, e);
        }
    }
}

/// Every operator on an integer type, then the items forms: the results
/// each thread of the grid gets, in the order [`GRID_VALUES_PER_OP`] and
/// [`GRID_ITEM_VALUES`] say.
macro_rules! grid_collectives_of {
    ($name:ident, $t:ty, [$($op:expr),*]) => {
        /// Each grid collective once per operator, and the items forms, over
        /// one value (and [`GRID_ITEMS`] items) per thread; every thread
        /// writes every result it got.
        ///
        /// # Safety
        /// `x` holds one value per thread of the grid, then [`GRID_ITEMS`]
        /// per thread; `out` the results of every thread.
        #[kernel(cooperative)]
        pub unsafe fn $name(x: In<$t>, out: Out<$t>) {
            let grid = this_grid();
            let (rank, threads) = (grid.thread_rank(), grid.num_threads());
            // SAFETY: one value per thread, then the items.
            let v = unsafe { x.read(rank) };
            // SAFETY: as above.
            let items: [$t; GRID_ITEMS] = core::array::from_fn(|j| unsafe { x.read(threads + rank * GRID_ITEMS + j) });
            let ops = [$(stringify!($op)),*].len();
            let mut at = rank * (ops * GRID_VALUES_PER_OP + GRID_ITEM_VALUES);
            $(
                // SAFETY: this thread's own results; every thread makes the same calls.
                unsafe { one_op(&grid, v, $op, out, at) };
                at += GRID_VALUES_PER_OP;
            )*
            // SAFETY: as above.
            unsafe { items_forms(&grid, items, out, at) };
        }
    };
}

grid_collectives_of!(grid_collectives_u32, u32, [Plus, Less, Greater, BitAnd, BitOr, BitXor]);
grid_collectives_of!(grid_collectives_i64, i64, [Plus, Less, Greater, BitXor]);
grid_collectives_of!(grid_collectives_f32, f32, [Plus, Less, Greater]);
grid_collectives_of!(grid_collectives_f64, f64, [Plus, Greater]);

/// Stream compaction in one launch: each thread keeps its `x` if it is
/// below `below`, and writes it at the place `select` gives; the same for
/// [`GRID_ITEMS`] items per thread with `select_items`. Every thread writes
/// the counts it was told to `counts[2 * rank ..]`, so a test sees that each
/// got them.
///
/// # Safety
/// `x` holds one value per thread, then [`GRID_ITEMS`] per thread; `kept`
/// and `kept_items` as many as `x`'s parts; `counts` two per thread.
#[kernel(cooperative)]
pub unsafe fn grid_select(x: In<u32>, below: u32, kept: Out<u32>, kept_items: Out<u32>, counts: Out<u32>) {
    let grid = this_grid();
    let (rank, threads) = (grid.thread_rank(), grid.num_threads());
    // SAFETY: one value per thread.
    let v = unsafe { x.read(rank) };
    let s = grid.select(v < below);
    if let Some(at) = s.index {
        // SAFETY: at < s.count <= threads.
        unsafe { kept.write(at, v) };
    }
    // SAFETY: the items, after the values.
    let items: [u32; GRID_ITEMS] = core::array::from_fn(|j| unsafe { x.read(threads + rank * GRID_ITEMS + j) });
    let si = grid.select_items(items.map(|v| v < below));
    for (at, item) in si.index.into_iter().zip(items) {
        if let Some(at) = at {
            // SAFETY: at < si.count <= threads * GRID_ITEMS.
            unsafe { kept_items.write(at, item) };
        }
    }
    // SAFETY: two counts per thread.
    unsafe {
        counts.write(2 * rank, s.count as u32);
        counts.write(2 * rank + 1, si.count as u32);
    }
}

/// An even-bin histogram of `f32` samples (two per thread, the second `None`
/// for odd ranks) into `bins`, then every thread reads bin `rank % bins`
/// back into `seen[rank]`: the counts are complete and visible to all.
///
/// # Safety
/// `x` holds two floats per thread; `bins` `num_bins` counts, the kernel's
/// alone; `seen` one per thread; `num_bins >= 1` and `lower < upper`.
#[kernel(cooperative)]
pub unsafe fn grid_histogram(x: In<f32>, bins: Out<u32>, num_bins: u32, lower: f32, upper: f32, seen: Out<u32>) {
    let grid = this_grid();
    let rank = grid.thread_rank();
    // SAFETY: two floats per thread.
    let samples = unsafe { [Some(x.read(2 * rank)), if rank % 2 == 0 { Some(x.read(2 * rank + 1)) } else { None }] };
    // SAFETY: the caller's `bins`, `num_bins` and range.
    unsafe { grid.histogram_even(samples, bins, num_bins, lower, upper) };
    // SAFETY: rank % num_bins < num_bins, complete after the call; one per thread.
    unsafe { seen.write(rank, bins.read(rank % num_bins as usize)) };
}

/// A mistake: only the even blocks call `grid.reduce`; the odd ones return.
///
/// # Safety
/// `out` holds one float per block.
#[kernel(cooperative, emulator)]
pub unsafe fn grid_reduce_in_some_blocks(out: Out<f32>) {
    let grid = this_grid();
    if grid.block_rank() % 2 == 0 {
        let total = grid.reduce(1.0f32, Plus);
        // SAFETY: one float per block.
        unsafe { out.write(grid.block_rank(), total) };
    }
}

/// A mistake: the even blocks reduce, the odd ones only `grid.sync()`.
///
/// # Safety
/// `out` holds one float per block.
#[kernel(cooperative, emulator)]
pub unsafe fn grid_reduce_against_grid_sync(out: Out<f32>) {
    let grid = this_grid();
    let total = if grid.block_rank() % 2 == 0 {
        grid.reduce(1.0f32, Plus)
    } else {
        grid.sync();
        0.0
    };
    // SAFETY: one float per block.
    unsafe { out.write(grid.block_rank(), total) };
}

/// A mistake: block 0 takes the sum, the others the maximum.
///
/// # Safety
/// `out` holds one float per block.
#[kernel(cooperative, emulator)]
pub unsafe fn grid_reduce_with_other_operators(out: Out<f32>) {
    let grid = this_grid();
    let total = if grid.block_rank() == 0 { grid.reduce(1.0f32, Plus) } else { grid.reduce(1.0f32, Greater) };
    // SAFETY: one float per block.
    unsafe { out.write(grid.block_rank(), total) };
}

/// A mistake: block 0 selects from 2 items per thread, the others from 3.
///
/// # Safety
/// `out` holds one count per block.
#[kernel(cooperative, emulator)]
pub unsafe fn grid_select_items_of_other_sizes(out: Out<u32>) {
    let grid = this_grid();
    let count = if grid.block_rank() == 0 { grid.select_items([true; 2]).count } else { grid.select_items([true; 3]).count };
    // SAFETY: one count per block.
    unsafe { out.write(grid.block_rank(), count as u32) };
}

/// A mistake: half the threads of each block call `grid.reduce`.
///
/// # Safety
/// `out` holds one float per thread.
#[kernel(cooperative, emulator)]
pub unsafe fn grid_reduce_in_half_a_block(out: Out<f32>) {
    let grid = this_grid();
    let rank = grid.thread_rank();
    let total = if rank % 64 < 32 { grid.reduce(1.0f32, Plus) } else { 0.0 };
    // SAFETY: one float per thread.
    unsafe { out.write(rank, total) };
}

/// The grid's sum of one `u32` per thread and each thread's exclusive scan:
/// two calls, for the largest grids (the cooperative ceiling).
///
/// # Safety
/// `x` holds one value per thread of the grid; `out` two.
#[kernel(cooperative)]
pub unsafe fn grid_sum_and_offsets(x: In<u32>, out: Out<u32>) {
    let grid = this_grid();
    let rank = grid.thread_rank();
    // SAFETY: one value per thread.
    let v = unsafe { x.read(rank) };
    let total = grid.reduce(v, Plus);
    let before = grid.exclusive_scan(v, Plus);
    // SAFETY: two values per thread.
    unsafe {
        out.write(2 * rank, total);
        out.write(2 * rank + 1, before);
    }
}

/// Values each thread gives [`grid_reduce_array`].
pub const GRID_ARRAY: usize = 5;

/// Five sums over the grid in one call (an iterative solver's dot
/// products): each thread's [`GRID_ARRAY`] values of `x`, and every thread
/// writes the five sums it got.
///
/// # Safety
/// `x` and `out` hold [`GRID_ARRAY`] values per thread of the grid.
#[kernel(cooperative)]
pub unsafe fn grid_reduce_array(x: In<f64>, out: Out<f64>) {
    let grid = this_grid();
    let rank = grid.thread_rank();
    // SAFETY: GRID_ARRAY values per thread.
    let v: [f64; GRID_ARRAY] = core::array::from_fn(|k| unsafe { x.read(rank * GRID_ARRAY + k) });
    let sums = grid.reduce_array(v, Plus);
    for (k, s) in sums.into_iter().enumerate() {
        // SAFETY: as above.
        unsafe { out.write(rank * GRID_ARRAY + k, s) };
    }
}

/// Two operators of one name, in two modules.
mod first {
    /// Wrapping addition.
    #[derive(Clone, Copy)]
    pub struct Op;
    impl const crate::cg::ReduceOp<u32> for Op {
        fn combine(a: u32, b: u32) -> u32 {
            a.wrapping_add(b)
        }
        fn identity() -> u32 {
            0
        }
    }
}
mod second {
    /// Bitwise or.
    #[derive(Clone, Copy)]
    pub struct Op;
    impl const crate::cg::ReduceOp<u32> for Op {
        fn combine(a: u32, b: u32) -> u32 {
            a | b
        }
        fn identity() -> u32 {
            0
        }
    }
}

/// A mistake: block 0 reduces with one `Op`, the others with another `Op`
/// of the same name, from another module.
///
/// # Safety
/// `out` holds one element per block.
#[kernel(cooperative, emulator)]
pub unsafe fn grid_reduce_with_two_ops_of_one_name(out: Out<u32>) {
    let grid = this_grid();
    let total = if grid.block_rank() == 0 { grid.reduce(5u32, first::Op) } else { grid.reduce(5u32, second::Op) };
    // SAFETY: one element per block.
    unsafe { out.write(grid.block_rank(), total) };
}

/// Not a mistake: every thread makes one `grid.reduce` of the same
/// operator, written in two branches (odd blocks take the one, even the
/// other).
///
/// # Safety
/// `out` holds one element per thread.
#[kernel(cooperative, emulator)]
pub unsafe fn grid_reduce_from_two_branches(out: Out<u32>) {
    let grid = this_grid();
    let rank = grid.thread_rank();
    // The same call in both arms is the point of this kernel.
    #[allow(clippy::if_same_then_else)]
    let total = if grid.block_rank() % 2 == 1 { grid.reduce(1u32, Plus) } else { grid.reduce(1u32, Plus) };
    // SAFETY: one element per thread.
    unsafe { out.write(rank, total) };
}
