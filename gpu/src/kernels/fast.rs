//! The fast cooperative sum. The lesson's kernels stay as the lesson wrote
//! them; this one changes only how the first stage reads memory.

use super::sum::{block_sum, one_f32_per_tile};
use crate::cg::{this_grid, this_thread_block, tiled_partition};
use crate::kernel;
use crate::mem::{In, Out};

/// 16-byte loads each thread keeps in flight per loop trip.
pub const UNROLL: usize = 4;

/// Floats one thread of [`reduce_cooperative_fast`] reads per loop trip; a
/// grid needs no more than `ceil(n / (threads * FAST_FLOATS_PER_TRIP))` blocks.
pub const FAST_FLOATS_PER_TRIP: u32 = 4 * UNROLL as u32;

/// The split of `n` floats starting at `address` into a scalar head up to
/// the first 16-byte boundary, whole 16-byte vectors, and a scalar tail.
#[inline(always)]
pub const fn split(address: usize, n: usize) -> (usize, usize, usize) {
    let to_boundary = ((16 - address % 16) % 16) / 4;
    let head = if to_boundary < n { to_boundary } else { n };
    let vectors = (n - head) / 4;
    (head, vectors, n - head - 4 * vectors)
}

/// `reduce_cooperative_grid` with a first stage built for bandwidth: 16-byte
/// loads, [`UNROLL`] of them in flight per thread, each into its own accumulator.
///
/// # Safety
/// As `reduce_cooperative_grid`.
#[kernel(cooperative, shared_memory = one_f32_per_tile)]
pub unsafe fn reduce_cooperative_fast<const TILE: u32 = 32>(input: In<f32>, partials: Out<f32>, out: Out<f32>, n: usize) {
    let grid = this_grid();
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);
    let rank = grid.thread_rank();
    let step = grid.num_threads();

    let (head, vectors, tail) = split(input.address(), n);
    let (mut a0, mut a1, mut a2, mut a3) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
    if rank < head {
        // SAFETY: rank < head <= n.
        a0 += unsafe { input.read(rank) };
    }
    let quad = |k: usize| {
        // SAFETY: callers pass k < vectors, so the four floats at head + 4k are
        // in bounds, and input + head is 16-byte aligned.
        let [x, y, z, w] = unsafe { input.read4(head + 4 * k) };
        (x + y) + (z + w)
    };
    let mut i = rank;
    while i + (UNROLL - 1) * step < vectors {
        let (q0, q1, q2, q3) = (quad(i), quad(i + step), quad(i + 2 * step), quad(i + 3 * step));
        a0 += q0;
        a1 += q1;
        a2 += q2;
        a3 += q3;
        i += UNROLL * step;
    }
    while i < vectors {
        a0 += quad(i);
        i += step;
    }
    if rank < tail {
        // SAFETY: head + 4 * vectors + rank < n.
        a1 += unsafe { input.read(head + 4 * vectors + rank) };
    }
    let v = (a0 + a1) + (a2 + a3);

    let mut total = block_sum(&block, &tile, v);
    if block.thread_rank() == 0 {
        // SAFETY: one partial per block.
        unsafe { partials.write(block.group_index().x as usize, total) };
    }
    grid.sync();
    if block.group_index().x == 0 {
        let m = grid.num_blocks();
        let mut w = 0.0f32;
        let mut i = block.thread_rank() as usize;
        while i < m {
            // SAFETY: i < m, and every block wrote its partial before grid.sync().
            w += unsafe { partials.read(i) };
            i += block.num_threads() as usize;
        }
        total = block_sum(&block, &tile, w);
        if block.thread_rank() == 0 {
            // SAFETY: out holds one float.
            unsafe { out.write(0, total) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_covers_every_float_once_with_an_aligned_body() {
        for address in (0..64).step_by(4) {
            for n in 0..40 {
                let (head, vectors, tail) = split(address, n);
                assert_eq!(head + 4 * vectors + tail, n);
                assert!(tail < 4 && head < 4);
                if vectors > 0 {
                    assert_eq!((address + 4 * head) % 16, 0);
                }
            }
        }
        assert_eq!(split(256, 1024), (0, 256, 0));
        assert_eq!(split(260, 10), (3, 1, 3));
    }
}
