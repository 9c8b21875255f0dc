//! The collective algorithms and the match collectives, on every tile size,
//! every operator and each element type, for the host's tests to check
//! against a CPU model (`host/tests/collectives_case/`): on the emulator
//! (`host/tests/collectives.rs`) and on a GPU (`host/tests/gpu_collectives.rs`).
//!
//! Per element type, two kernels:
//! - `tile_collectives_T`: each thread, for tiles of 1, 2, 4, 8, 16 and 32 in
//!   turn and each operator, writes `cg::reduce`, `cg::inclusive_scan` and
//!   `cg::exclusive_scan` of its input to `values`, then per tile size
//!   `match_any`, `match_all`'s mask and its predicate to `masks`;
//! - `block_collectives_T` (and `block_collectives_T_tiles_of_1`): each
//!   thread, for each operator, writes `block_reduce`, `block_inclusive_scan`
//!   (value, total) and `block_exclusive_scan` (value, total), on tiles of
//!   `TILE`: on the emulator any tile size (`with_tile`); in the GPU's module
//!   tiles of 32, where a warp holds every tile's total, and of 1, where a
//!   warp combines them 32 at a time. Every tile size in the PTX cost the
//!   test build 40 s on 2 cores; the tile kernels run every size on the GPU.
//!
//! The integers take every operator ([`INTEGER_OPS`]), the floats `Plus`,
//! `Less` and `Greater` ([`FLOAT_OPS`]), in that order.

use crate::cg::{
    BitAnd, BitOr, BitXor, Greater, Less, Plus, ReduceOp, ShuffleValue, ThreadBlock, ThreadBlockTile, block_exclusive_scan, block_inclusive_scan, block_reduce,
    block_scratch_bytes, exclusive_scan, inclusive_scan, reduce, this_thread_block, tiled_partition,
};
use crate::kernel;
use crate::mem::{In, Out, Word, dynamic_shared};

/// The tile sizes a tile kernel runs, in order.
pub const COLLECTIVE_TILES: [u32; 6] = [1, 2, 4, 8, 16, 32];
/// Values a tile kernel writes per thread, tile size and operator: reduce, inclusive, exclusive.
pub const TILE_VALUES_PER_OP: usize = 3;
/// Masks a tile kernel writes per thread and tile size: `match_any`, `match_all`'s mask, its predicate.
pub const TILE_MASKS: usize = 3;
/// Values a block kernel writes per thread and operator: the reduction, the
/// inclusive scan and its total, the exclusive scan and its total.
pub const BLOCK_VALUES_PER_OP: usize = 5;
/// The operators the integer kernels run, in order.
pub const INTEGER_OPS: [&str; 6] = ["Plus", "Less", "Greater", "BitAnd", "BitOr", "BitXor"];
/// The operators the float kernels run, in order.
pub const FLOAT_OPS: [&str; 3] = ["Plus", "Less", "Greater"];

/// One operator's results for this thread: on a tile, then on the block.
#[inline(always)]
fn on_tile<const N: u32, T: ShuffleValue, Op: const ReduceOp<T>>(tile: &ThreadBlockTile<N>, v: T, op: Op, put: &mut impl FnMut(T)) {
    put(reduce(tile, v, op));
    put(inclusive_scan(tile, v, op));
    put(exclusive_scan(tile, v, op));
}

/// # Safety
/// As `block_reduce`: every thread of the block calls it, and the launch's
/// dynamic shared memory holds one `T` per tile, which nothing else uses.
#[inline(always)]
unsafe fn on_block<const N: u32, T: ShuffleValue + Word, Op: const ReduceOp<T>>(
    block: &ThreadBlock,
    tile: &ThreadBlockTile<N>,
    v: T,
    op: Op,
    put: &mut impl FnMut(T),
) {
    // SAFETY (the three calls): the caller's contract.
    put(unsafe { block_reduce(block, tile, v, op, dynamic_shared()) });
    let (inclusive, total) = unsafe { block_inclusive_scan(block, tile, v, op, dynamic_shared()) };
    put(inclusive);
    put(total);
    let (exclusive, total) = unsafe { block_exclusive_scan(block, tile, v, op, dynamic_shared()) };
    put(exclusive);
    put(total);
}

/// The operators a type's kernels run.
trait Operators<T: ShuffleValue + Word> {
    fn tile<const N: u32>(tile: &ThreadBlockTile<N>, v: T, put: &mut impl FnMut(T));
    /// # Safety
    /// As [`on_block`].
    unsafe fn block<const N: u32>(block: &ThreadBlock, tile: &ThreadBlockTile<N>, v: T, put: &mut impl FnMut(T));
}

/// [`INTEGER_OPS`].
struct IntegerOps;
/// [`FLOAT_OPS`].
struct FloatOps;

impl<T: ShuffleValue + Word> Operators<T> for IntegerOps
where
    Plus: const ReduceOp<T>,
    Less: const ReduceOp<T>,
    Greater: const ReduceOp<T>,
    BitAnd: const ReduceOp<T>,
    BitOr: const ReduceOp<T>,
    BitXor: const ReduceOp<T>,
{
    #[inline(always)]
    fn tile<const N: u32>(tile: &ThreadBlockTile<N>, v: T, put: &mut impl FnMut(T)) {
        on_tile(tile, v, Plus, put);
        on_tile(tile, v, Less, put);
        on_tile(tile, v, Greater, put);
        on_tile(tile, v, BitAnd, put);
        on_tile(tile, v, BitOr, put);
        on_tile(tile, v, BitXor, put);
    }
    #[inline(always)]
    unsafe fn block<const N: u32>(block: &ThreadBlock, tile: &ThreadBlockTile<N>, v: T, put: &mut impl FnMut(T)) {
        // SAFETY (each): the caller's contract, call after call.
        unsafe {
            on_block(block, tile, v, Plus, put);
            on_block(block, tile, v, Less, put);
            on_block(block, tile, v, Greater, put);
            on_block(block, tile, v, BitAnd, put);
            on_block(block, tile, v, BitOr, put);
            on_block(block, tile, v, BitXor, put);
        }
    }
}

impl<T: ShuffleValue + Word> Operators<T> for FloatOps
where
    Plus: const ReduceOp<T>,
    Less: const ReduceOp<T>,
    Greater: const ReduceOp<T>,
{
    #[inline(always)]
    fn tile<const N: u32>(tile: &ThreadBlockTile<N>, v: T, put: &mut impl FnMut(T)) {
        on_tile(tile, v, Plus, put);
        on_tile(tile, v, Less, put);
        on_tile(tile, v, Greater, put);
    }
    #[inline(always)]
    unsafe fn block<const N: u32>(block: &ThreadBlock, tile: &ThreadBlockTile<N>, v: T, put: &mut impl FnMut(T)) {
        // SAFETY (each): the caller's contract, call after call.
        unsafe {
            on_block(block, tile, v, Plus, put);
            on_block(block, tile, v, Less, put);
            on_block(block, tile, v, Greater, put);
        }
    }
}

/// This thread's rank in the grid.
#[inline(always)]
fn global_rank(block: &ThreadBlock) -> usize {
    block.group_index().x as usize * block.num_threads() as usize + block.thread_rank() as usize
}

/// One tile size's results for this thread, written from `values[*k]` and `masks[*m]` on.
///
/// # Safety
/// `values` and `masks` hold room for them.
#[inline(always)]
unsafe fn tile_results<const N: u32, T: ShuffleValue + Word, O: Operators<T>>(
    block: &ThreadBlock,
    v: T,
    values: Out<T>,
    masks: Out<u32>,
    k: &mut usize,
    m: &mut usize,
) {
    let tile = tiled_partition::<N>(block);
    O::tile(&tile, v, &mut |x| {
        // SAFETY: the caller's contract.
        unsafe { values.write(*k, x) };
        *k += 1;
    });
    let peers = tile.match_any(v);
    let (all, same) = tile.match_all(v);
    for x in [peers, all, same as u32] {
        // SAFETY: the caller's contract.
        unsafe { masks.write(*m, x) };
        *m += 1;
    }
}

/// The tile kernel's body (see the module's documentation).
///
/// # Safety
/// `input` holds one value per thread of the grid; `values` `6 * ops * 3`
/// per thread, `masks` `6 * 3`.
#[inline(always)]
unsafe fn tile_kernel<T: ShuffleValue + Word, O: Operators<T>>(input: In<T>, values: Out<T>, masks: Out<u32>, ops: usize) {
    let block = this_thread_block();
    let i = global_rank(&block);
    // SAFETY: one value per thread.
    let v = unsafe { input.read(i) };
    let mut k = i * COLLECTIVE_TILES.len() * ops * TILE_VALUES_PER_OP;
    let mut m = i * COLLECTIVE_TILES.len() * TILE_MASKS;
    // SAFETY (each): the caller's sizes.
    unsafe {
        tile_results::<1, T, O>(&block, v, values, masks, &mut k, &mut m);
        tile_results::<2, T, O>(&block, v, values, masks, &mut k, &mut m);
        tile_results::<4, T, O>(&block, v, values, masks, &mut k, &mut m);
        tile_results::<8, T, O>(&block, v, values, masks, &mut k, &mut m);
        tile_results::<16, T, O>(&block, v, values, masks, &mut k, &mut m);
        tile_results::<32, T, O>(&block, v, values, masks, &mut k, &mut m);
    }
}

/// The block kernel's body (see the module's documentation).
///
/// # Safety
/// `input` holds one value per thread of the grid, `values` `ops * 5` per
/// thread; the launch gives `block_scratch_bytes::<T>(threads, N)` of shared memory.
#[inline(always)]
unsafe fn block_kernel<const N: u32, T: ShuffleValue + Word, O: Operators<T>>(input: In<T>, values: Out<T>, ops: usize) {
    let block = this_thread_block();
    let tile = tiled_partition::<N>(&block);
    let i = global_rank(&block);
    // SAFETY: one value per thread.
    let v = unsafe { input.read(i) };
    let mut k = i * ops * BLOCK_VALUES_PER_OP;
    let mut put = |x: T| {
        // SAFETY: ops * 5 per thread.
        unsafe { values.write(k, x) };
        k += 1;
    };
    // SAFETY: every thread makes these calls, the scratch as the caller says.
    unsafe { O::block(&block, &tile, v, &mut put) };
}

macro_rules! collective_kernels {
    ($($t:ty: $tile:ident, $block:ident, $small:ident, $ops:ty, $count:expr;)*) => {$(
        #[doc = concat!("Every tile collective on `", stringify!($t), "` (see the module's documentation).")]
        ///
        /// # Safety
        /// `input` holds one value per thread of the grid, `values`
        /// `6 * ops * 3` per thread (`ops` the operators of the type),
        /// `masks` `6 * 3` per thread.
        #[kernel]
        pub unsafe fn $tile(input: In<$t>, values: Out<$t>, masks: Out<u32>) {
            // SAFETY: the kernel's contract.
            unsafe { tile_kernel::<$t, $ops>(input, values, masks, $count) }
        }

        #[doc = concat!("Every block collective on `", stringify!($t), "`, on tiles of `TILE` (the GPU's module has tiles of 32).")]
        ///
        /// # Safety
        /// `input` holds one value per thread of the grid, `values` `ops * 5`
        /// per thread (`ops` the operators of the type).
        #[kernel(shared_memory = block_scratch_bytes::<$t>)]
        pub unsafe fn $block<const TILE: u32 = 32>(input: In<$t>, values: Out<$t>) {
            // SAFETY: the kernel's contract; the launch gives block_scratch_bytes::<T>.
            unsafe { block_kernel::<TILE, $t, $ops>(input, values, $count) }
        }

        #[doc = concat!("[`", stringify!($block), "`] with tiles of 1 in the GPU's module: the most tiles a block has, whose totals a warp combines 32 at a time.")]
        ///
        /// # Safety
        #[doc = concat!("As [`", stringify!($block), "`].")]
        #[kernel(shared_memory = block_scratch_bytes::<$t>)]
        pub unsafe fn $small<const TILE: u32 = 1>(input: In<$t>, values: Out<$t>) {
            // SAFETY: the kernel's contract; the launch gives block_scratch_bytes::<T>.
            unsafe { block_kernel::<TILE, $t, $ops>(input, values, $count) }
        }
    )*};
}

collective_kernels! {
    u32: tile_collectives_u32, block_collectives_u32, block_collectives_u32_tiles_of_1, IntegerOps, INTEGER_OPS.len();
    i32: tile_collectives_i32, block_collectives_i32, block_collectives_i32_tiles_of_1, IntegerOps, INTEGER_OPS.len();
    u64: tile_collectives_u64, block_collectives_u64, block_collectives_u64_tiles_of_1, IntegerOps, INTEGER_OPS.len();
    i64: tile_collectives_i64, block_collectives_i64, block_collectives_i64_tiles_of_1, IntegerOps, INTEGER_OPS.len();
    f32: tile_collectives_f32, block_collectives_f32, block_collectives_f32_tiles_of_1, FloatOps, FLOAT_OPS.len();
    f64: tile_collectives_f64, block_collectives_f64, block_collectives_f64_tiles_of_1, FloatOps, FLOAT_OPS.len();
}
