//! Every element type a buffer and a scalar parameter may have (`u8` to
//! `f64`), each through global and shared memory: `host/tests/types_atomics.rs`
//! runs them on the emulator and on a GPU (built with the feature `probes`).

use crate::cg::{this_grid, this_thread_block};
use crate::kernel;
use crate::mem::{In, Out, dynamic_shared};

/// Shared memory of one `T` per thread of the block.
pub const fn one_per_thread<T>(threads_per_block: u32, _tile: u32) -> u32 {
    threads_per_block * size_of::<T>() as u32
}

macro_rules! per_type {
    ($($name:ident: $t:ty),*) => {$(
        /// `out[i] = x[i ^ 1]` for `i < n`, through shared memory, where
        /// neighbouring threads write neighbouring elements (of one word, for
        /// 1- and 2-byte types), and `x[i ^ 1]` past `n` reads as `k`; then
        /// `out[n] = k`, the scalar parameter.
        ///
        /// # Safety
        /// `x` holds `n` elements and `out` `n + 1`; blocks have an even
        /// number of threads.
        #[kernel(shared_memory = one_per_thread::<$t>)]
        pub unsafe fn $name<const TILE: u32 = 32>(x: In<$t>, out: Out<$t>, k: $t, n: usize) {
            let grid = this_grid();
            let block = this_thread_block();
            let (i, t) = (grid.thread_rank(), block.thread_rank() as usize);
            let neighbours = dynamic_shared::<$t>();
            // SAFETY: one element per thread of shared memory; i < n where x is read.
            unsafe { neighbours.write(t, if i < n { x.read(i) } else { k }) };
            block.sync();
            if i < n {
                // SAFETY: t ^ 1 is a thread of this block (its size is even),
                // which wrote its element before the barrier; i < n.
                unsafe { out.write(i, neighbours.read(t ^ 1)) };
            }
            if i == 0 {
                // SAFETY: out holds n + 1 elements.
                unsafe { out.write(n, k) };
            }
        }
    )*};
}
per_type!(
    types_u8: u8, types_i8: i8, types_u16: u16, types_i16: i16, types_u32: u32,
    types_i32: i32, types_u64: u64, types_i64: i64, types_f32: f32, types_f64: f64
);

/// Bytes for [`two_shared_arrays`]: three bytes and one per thread, then
/// one `f64` per thread from the next multiple of 8.
pub const fn flags_then_values(threads_per_block: u32) -> u32 {
    (threads_per_block + 3).div_ceil(8) * 8 + threads_per_block * 8
}

/// Two arrays in one block's dynamic shared memory (`after`): a byte flag
/// per thread from byte 3, then an `f64` per thread, 8-byte aligned; each
/// thread writes its own two and, after the barrier, `out[i]` is its
/// neighbour's value plus flag (`(t + 1) % n` in the block).
///
/// # Safety
/// Launched with `flags_then_values` bytes of shared memory; `out` holds
/// one element per thread of the grid.
#[kernel(shared_memory = flags_then_values)]
pub unsafe fn two_shared_arrays(out: Out<f64>) {
    let block = this_thread_block();
    let (t, n) = (block.thread_rank() as usize, block.num_threads() as usize);
    let flags = dynamic_shared::<u8>();
    let values = flags.after::<f64>(n + 3);
    // SAFETY: byte t + 3 and value t lie in the bytes flags_then_values counts.
    unsafe {
        flags.write(t + 3, (t % 200) as u8);
        values.write(t, t as f64 * 0.5);
    }
    block.sync();
    let other = (t + 1) % n;
    // SAFETY: as above, after the barrier; one element of out per thread.
    unsafe { out.write(this_grid().thread_rank(), values.read(other) + flags.read(other + 3) as f64) };
}
