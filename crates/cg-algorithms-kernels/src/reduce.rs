//! Reductions in one cooperative launch with one `grid.sync()`, CUB's
//! `DeviceReduce::Sum`, `Min` and `Max`: the grid is the GPU's resident
//! capacity (or fewer blocks for a short input), each thread combines its
//! grid-strided 16-byte vectors, each block its threads' values
//! (`block_reduce`), and after the barrier block 0 combines the blocks'.

use crate::Value;
use cg_kernel::cg::{Greater, GridGroup, Less, Plus, ReduceOp, block_reduce, block_scratch_bytes, this_grid, this_thread_block, tiled_partition};
use cg_kernel::kernel;
use cg_kernel::mem::{In, Out, dynamic_shared};

/// Dynamic shared memory of the reduce kernels: the block reduction's
/// scratch, one 4-byte word per warp.
pub const fn reduce_shared_bytes(threads_per_block: u32) -> u32 {
    block_scratch_bytes::<u32>(threads_per_block, 32)
}

/// Vectors each thread loads before combining them, for loads in flight.
const UNROLL: usize = 4;

/// The body of every reduce kernel, and of [`operator_kernels!`](crate::operator_kernels)'s.
///
/// # Safety
/// As each reduce kernel's: `x` holds `n` elements from a 16-byte-aligned
/// start, `out` one and `partials` one per block of the grid; the launch
/// is cooperative, with [`reduce_shared_bytes`] of shared memory; `grid` is
/// the kernel's own `this_grid()`.
#[doc(hidden)]
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn reduce_grid<T: Value, Op: const ReduceOp<T>>(grid: &GridGroup, x: In<T>, out: Out<T>, partials: Out<T>, n: usize, op: Op) {
    let block = this_thread_block();
    let tile = tiled_partition::<32>(&block);
    let scratch = dynamic_shared::<T>();
    let t = block.thread_rank() as usize;
    let threads = block.num_threads() as usize;
    let b = grid.block_rank();
    let (rank, stride) = (grid.thread_rank(), grid.num_threads());

    // Vector v is x[4v..4v + 4]; thread `rank` takes v = rank, rank + stride, ...
    let vectors = n / 4;
    let mut acc = [Op::identity(); 4];
    let mut v = rank;
    while v + (UNROLL - 1) * stride < vectors {
        let mut four = [[Op::identity(); 4]; UNROLL];
        for (u, four) in four.iter_mut().enumerate() {
            // SAFETY: vector v + u * stride < n / 4 is in bounds, and 16-byte
            // aligned from the buffer's aligned start (the kernel's contract).
            *four = unsafe { x.read_vector::<4>(4 * (v + u * stride)) };
        }
        // Index loops: an array's by-value iterator stays in local memory on nvptx.
        for four in &four {
            for l in 0..4 {
                acc[l] = Op::combine(acc[l], four[l]);
            }
        }
        v += UNROLL * stride;
    }
    while v < vectors {
        // SAFETY: as above.
        let four: [T; 4] = unsafe { x.read_vector::<4>(4 * v) };
        for l in 0..4 {
            acc[l] = Op::combine(acc[l], four[l]);
        }
        v += stride;
    }
    if rank < n - 4 * vectors {
        // SAFETY: one of the last n % 4 elements.
        acc[0] = Op::combine(acc[0], unsafe { x.read(4 * vectors + rank) });
    }
    let mine = Op::combine(Op::combine(acc[0], acc[1]), Op::combine(acc[2], acc[3]));
    // SAFETY (each block reduction): every thread of the block calls it, the
    // second in a branch the whole block takes or skips; the scratch is its alone.
    let total = unsafe { block_reduce(&block, &tile, mine, op, scratch) };
    if t == 0 {
        // SAFETY: one partial per block (the contract), written by its thread 0 alone.
        unsafe { partials.write(b, total) };
    }
    grid.sync();
    if b == 0 {
        let mut all = Op::identity();
        let mut k = t;
        while k < grid.num_blocks() {
            // SAFETY: written before grid.sync().
            all = Op::combine(all, unsafe { partials.read(k) });
            k += threads;
        }
        // SAFETY: as above.
        let total = unsafe { block_reduce(&block, &tile, all, op, scratch) };
        if t == 0 {
            // SAFETY: out holds one element, written by this thread alone.
            unsafe { out.write(0, total) };
        }
    }
}

/// One reduce kernel per element type and operator.
macro_rules! reductions {
    ($($name:ident: $t:ty, $op:ident, $what:literal;)*) => {$(
        #[doc = concat!("`out[0]` = the ", $what, " of `x` (`", stringify!($t), "`), in one cooperative launch with one `grid.sync()`.")]
        ///
        /// # Safety
        /// `x` holds `n` elements from a 16-byte-aligned start, `out` one
        /// and `partials` one per block of the grid; launched with
        /// [`reduce_shared_bytes`] of shared memory.
        #[kernel(cooperative, shared_memory = reduce_shared_bytes)]
        pub unsafe fn $name(x: In<$t>, out: Out<$t>, partials: Out<$t>, n: usize) {
            // SAFETY: the kernel's contract.
            unsafe { reduce_grid::<$t, $op>(&this_grid(), x, out, partials, n, $op) }
        }
    )*};
}

// The GPU entries only where this crate is built for its own PTX (the
// feature `gpu-entries`, on by default), not inside a crate that stamps its
// own operator's kernels (`operator_kernels!`).
#[cfg(any(not(target_arch = "nvptx64"), feature = "gpu-entries"))]
reductions! {
    reduce_sum_f32: f32, Plus, "sum";
    reduce_sum_i32: i32, Plus, "sum (wrapping)";
    reduce_sum_u32: u32, Plus, "sum (wrapping)";
    reduce_min_f32: f32, Less, "minimum";
    reduce_min_i32: i32, Less, "minimum";
    reduce_min_u32: u32, Less, "minimum";
    reduce_max_f32: f32, Greater, "maximum";
    reduce_max_i32: i32, Greater, "maximum";
    reduce_max_u32: u32, Greater, "maximum";
}
