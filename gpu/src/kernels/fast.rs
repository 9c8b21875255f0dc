//! The fast sums. The lesson's kernels stay as the lesson wrote them; these
//! change how the first stage reads memory (16-byte loads, several in flight
//! per thread, separate accumulators) and how the stages are launched, so
//! that the launch kind and the grid can be chosen per n:
//! - [`reduce_single_block`]: one ordinary launch of one block, for inputs a
//!   block reads in a few trips (no grid barrier, no cooperative launch);
//! - [`reduce_cooperative_fast`]: one cooperative launch with `grid.sync()`;
//! - [`reduce_last_block`]: one ordinary launch in which the last block to
//!   finish adds the partials (a fence and an atomic ticket instead of a
//!   grid barrier).

use crate::cg::{ThreadBlock, ThreadBlockTile, this_grid, this_thread_block, thread_fence, tiled_partition};
use crate::kernel;
use crate::lesson::sum::{block_sum, one_f32_per_tile};
use crate::mem::{In, MemoryOrder, Out, Scope, dynamic_shared};

/// 16-byte loads each thread keeps in flight per loop trip (the loop body
/// below is written out for four).
pub const UNROLL: usize = 4;

/// Floats one thread reads per loop trip; a grid needs no more than
/// `ceil(n / (threads * FAST_FLOATS_PER_TRIP))` blocks.
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

/// 16-byte vectors a run of 32 consecutive threads reads per loop trip: one
/// per thread per load, [`UNROLL`] loads, `32 * 16` bytes apart.
const CHUNK: usize = 32 * UNROLL;
const _: () = assert!(UNROLL == 4, "thread_sum's loop body is written out for four loads");

/// This thread's share of `input[..n]` for thread `rank` of `step`: the head
/// and tail one float at a time, and the body in chunks of [`CHUNK`]
/// 16-byte vectors, one chunk per 32 consecutive threads per trip (CUB's
/// "warp-striped" arrangement): each of a warp's [`UNROLL`] loads covers 512
/// contiguous bytes, and a thread's loads sit at fixed offsets from one
/// address, so the loop keeps one pointer live instead of one per load.
/// All four loads of a trip are written before any addition: with each load
/// added as it came, ptxas issued two, waited, then the other two
/// (`records/NOTES.md`).
///
/// # Safety
/// `input` holds `n` floats.
#[inline(always)]
unsafe fn thread_sum(input: In<f32>, n: usize, rank: usize, step: usize) -> f32 {
    let (head, vectors, tail) = split(input.address(), n);
    let mut v = 0.0f32;
    if rank < head {
        // SAFETY: rank < head <= n.
        v += unsafe { input.read(rank) };
    }
    // SAFETY (of every call): callers pass k < vectors, so the four floats at
    // head + 4k are in bounds, and input + head is 16-byte aligned.
    let load = |k: usize| unsafe { input.read4(head + 4 * k) };
    let add = |[x, y, z, w]: [f32; 4]| (x + y) + (z + w);
    let quad = |k: usize| add(load(k));
    // Threads in whole runs of 32 take whole chunks; what is left of the body
    // after the last whole chunk goes one vector per thread.
    let (chunks, runs) = (vectors / CHUNK, step / 32);
    let mut c = rank / 32;
    if c < runs {
        let lane = rank % 32;
        while c < chunks {
            let k = c * CHUNK + lane;
            let (l0, l1, l2, l3) = (load(k), load(k + 32), load(k + 64), load(k + 96));
            v += (add(l0) + add(l1)) + (add(l2) + add(l3));
            c += runs;
        }
    }
    let mut i = chunks * CHUNK + rank;
    while i < vectors {
        v += quad(i);
        i += step;
    }
    if rank < tail {
        // SAFETY: head + 4 * vectors + rank < n.
        v += unsafe { input.read(head + 4 * vectors + rank) };
    }
    v
}

/// The block's sum of `partials[..m]`, read block-stride four at a time
/// (four loads in flight, so that a thousand partials cost two round trips
/// to the L2, not five), in thread 0: the second stage of both
/// single-launch fast sums.
///
/// # Safety
/// `partials` holds `m` floats, each written and visible to this block.
#[inline(always)]
unsafe fn sum_of_partials<const TILE: u32>(block: &ThreadBlock, tile: &ThreadBlockTile<TILE>, partials: Out<f32>, m: usize) -> f32 {
    let step = block.num_threads() as usize;
    // SAFETY (of every read below): i < m, and the caller's contract.
    let read = |i: usize| unsafe { partials.read(i) };
    let mut w = 0.0f32;
    let mut i = block.thread_rank() as usize;
    while i + 3 * step < m {
        let (a, b, c, d) = (read(i), read(i + step), read(i + 2 * step), read(i + 3 * step));
        w += (a + b) + (c + d);
        i += 4 * step;
    }
    while i < m {
        w += read(i);
        i += step;
    }
    block_sum(block, tile, w)
}

/// `reduce_cooperative_grid` with the fast first stage.
///
/// # Safety
/// As `reduce_cooperative_grid`.
#[kernel(cooperative, shared_memory = one_f32_per_tile)]
pub unsafe fn reduce_cooperative_fast<const TILE: u32 = 32>(input: In<f32>, partials: Out<f32>, out: Out<f32>, n: usize) {
    let grid = this_grid();
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);
    // SAFETY: the input holds n floats.
    let v = unsafe { thread_sum(input, n, grid.thread_rank(), grid.num_threads()) };
    let mut total = block_sum(&block, &tile, v);
    if block.thread_rank() == 0 {
        // SAFETY: one partial per block.
        unsafe { partials.write(block.group_index().x as usize, total) };
    }
    grid.sync();
    if block.group_index().x == 0 {
        // SAFETY: every block wrote its partial before grid.sync().
        total = unsafe { sum_of_partials(&block, &tile, partials, grid.num_blocks()) };
        if block.thread_rank() == 0 {
            // SAFETY: out holds one float.
            unsafe { out.write(0, total) };
        }
    }
}

/// One dynamic shared `f32` per tile, and one more word for the last-block flag.
pub const fn one_f32_per_tile_and_a_flag(threads_per_block: u32, tile: u32) -> u32 {
    one_f32_per_tile(threads_per_block, tile) + 4
}

/// The fast sum in one ordinary launch: each block writes its partial, and
/// the block that finds itself last (by an atomic ticket, after a fence)
/// adds them all, then resets the ticket for the next launch. No block ever
/// waits for another, so neither a cooperative launch nor a grid barrier is
/// needed. (The emulator reports the fence rather than modelling it.)
///
/// # Safety
/// `input` holds `n` floats, `partials` one per block, `ticket` one `u32`
/// that is 0 when the launch starts, `out` one float.
#[kernel(shared_memory = one_f32_per_tile_and_a_flag)]
pub unsafe fn reduce_last_block<const TILE: u32 = 32>(input: In<f32>, partials: Out<f32>, ticket: Out<u32>, out: Out<f32>, n: usize) {
    let grid = this_grid();
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);
    // SAFETY: the input holds n floats.
    let v = unsafe { thread_sum(input, n, grid.thread_rank(), grid.num_threads()) };
    let total = block_sum(&block, &tile, v);
    // The last word of the dynamic shared memory, past the tile totals.
    let last = dynamic_shared::<u32>();
    let flag = one_f32_per_tile(block.num_threads(), TILE) as usize / 4;
    if block.thread_rank() == 0 {
        // SAFETY: one partial per block; the flag word is inside the launch's shared memory.
        unsafe {
            partials.write(block.group_index().x as usize, total);
            thread_fence();
            let arrived = ticket.atomic_add_explicit(0, 1, Scope::Device, MemoryOrder::AcqRel);
            last.write(flag, (arrived as usize == grid.num_blocks() - 1) as u32);
        }
    }
    block.sync();
    // SAFETY: written by thread 0 before block.sync().
    if unsafe { last.read(flag) } == 1 {
        thread_fence();
        // SAFETY: every block wrote its partial before taking its ticket.
        let sum = unsafe { sum_of_partials(&block, &tile, partials, grid.num_blocks()) };
        if block.thread_rank() == 0 {
            // SAFETY: out holds one float, ticket one u32.
            unsafe {
                out.write(0, sum);
                ticket.write(0, 0);
            }
        }
    }
}

/// The whole sum in one block and one ordinary launch: for small inputs,
/// where a launch costs more than the reading.
///
/// # Safety
/// `input` holds `n` floats, `out` one; launched with one block.
#[kernel(shared_memory = one_f32_per_tile)]
pub unsafe fn reduce_single_block<const TILE: u32 = 32>(input: In<f32>, out: Out<f32>, n: usize) {
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);
    // SAFETY: the input holds n floats.
    let v = unsafe { thread_sum(input, n, block.thread_rank() as usize, block.num_threads() as usize) };
    let total = block_sum(&block, &tile, v);
    if block.thread_rank() == 0 {
        // SAFETY: out holds one float.
        unsafe { out.write(0, total) };
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
