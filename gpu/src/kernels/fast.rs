//! The fast cooperative sum. The lesson's kernels stay as the lesson wrote
//! them; this one changes only how the first stage reads memory.

/// 16-byte loads each thread keeps in flight per loop trip.
pub const UNROLL: usize = 4;

/// The split of `n` floats starting at `address` into a scalar head up to
/// the first 16-byte boundary, whole 16-byte vectors, and a scalar tail.
#[inline(always)]
pub const fn split(address: usize, n: usize) -> (usize, usize, usize) {
    let to_boundary = ((16 - address % 16) % 16) / 4;
    let head = if to_boundary < n { to_boundary } else { n };
    let vectors = (n - head) / 4;
    (head, vectors, n - head - 4 * vectors)
}

pub use entry::reduce_cooperative_fast;

mod entry {
    use super::super::sum::{block_sum, load, sum_of_partials};
    use super::{UNROLL, split};
    use crate::arch;
    use crate::cg::{this_grid, this_thread_block, tiled_partition};

    kernel! {
        /// `reduce_cooperative_grid` with a first stage built for bandwidth.
        ///
        /// # Safety
        /// As `reduce_cooperative_grid`.
        pub unsafe fn reduce_cooperative_fast(input: *const f32, partials: *mut f32, total: *mut f32, n: usize) {
            let grid = this_grid();
            let block = this_thread_block();
            let tile = tiled_partition::<32>(&block);
            let rank = grid.thread_rank();
            let step = grid.num_threads();

            let (head, vectors, tail) = split(input as usize, n);
            let (mut a0, mut a1, mut a2, mut a3) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
            if rank < head {
                // SAFETY: rank < head <= n.
                a0 += unsafe { load(input, rank) };
            }
            // SAFETY: head <= n, and input + head is 16-byte aligned.
            let body = unsafe { input.add(head) };
            let mut i = rank;
            // UNROLL independent 16-byte loads per trip, each into its own accumulator.
            let quad = |k: usize| {
                // SAFETY: callers pass k < vectors, so the 4 floats are in bounds.
                let [x, y, z, w] = unsafe { arch::ldg_f32x4(body.add(4 * k)) };
                (x + y) + (z + w)
            };
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
                a1 += unsafe { load(input, head + 4 * vectors + rank) };
            }
            let v = (a0 + a1) + (a2 + a3);

            let block_total = block_sum(&block, &tile, v);
            if block.thread_rank() == 0 {
                // SAFETY: one partial per block.
                unsafe { *partials.add(grid.block_rank()) = block_total };
            }
            grid.sync();
            if grid.block_rank() == 0 {
                // SAFETY: one partial per block, each written before the sync.
                let sum = unsafe { sum_of_partials(&block, &tile, partials, grid.num_blocks()) };
                if block.thread_rank() == 0 {
                    // SAFETY: `total` holds one float.
                    unsafe { *total = sum };
                }
            }
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
