//! The lesson's sum over every GPU of a host, with the grid reaching across
//! them: one cooperative launch per GPU, each summing its shard of the input
//! as the lesson's kernel does, then a barrier across GPUs, then GPU 0's
//! block 0 adds every GPU's total (`cg::this_multi_grid`).

use crate::cg::{this_grid, this_multi_grid, this_thread_block, tiled_partition};
use crate::kernel;
use crate::lesson::sum::{block_sum, one_f32_per_tile};
use crate::mem::{In, Out};

/// `reduce_cooperative_grid` on this GPU's shard, then across GPUs: each
/// GPU's block 0 writes its total to `totals` (memory every GPU reaches,
/// two halves used in turn so that a GPU running ahead to its next sum
/// cannot overwrite a total GPU 0 has not read), the GPUs meet, and GPU 0's
/// first thread adds the totals in rank order into `out[0]`.
///
/// # Safety
/// `input` holds `n` floats (this GPU's shard), `partials` one per block,
/// `totals` `2 * gpus`, `out` one; `barrier` holds
/// `cg::multi_grid::barrier_words(gpus)` words; `totals` and `barrier` are
/// shared by all `gpus` GPUs, each running this kernel with its own `rank`.
#[allow(clippy::too_many_arguments, reason = "a kernel's parameters are what its launch passes; a struct would hide them from the PTX signature")]
#[kernel(cooperative, shared_memory = one_f32_per_tile)]
pub unsafe fn reduce_multi_gpu<const TILE: u32 = 32>(
    input: In<f32>,
    partials: Out<f32>,
    totals: Out<f32>,
    out: Out<f32>,
    barrier: Out<u32>,
    rank: u32,
    gpus: u32,
    n: usize,
) {
    let grid = this_grid();
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);

    let step = grid.num_threads();
    let mut v = 0.0f32;
    let mut i = grid.thread_rank();
    while i < n {
        // SAFETY: i < n, and the input holds n floats.
        v += unsafe { input.read(i) };
        i += step;
    }
    let mut total = block_sum(&block, &tile, v);
    if block.thread_rank() == 0 {
        // SAFETY: partials holds one float per block.
        unsafe { partials.write(block.group_index().x as usize, total) };
    }
    grid.sync();

    let multi = this_multi_grid(&grid, barrier, rank, gpus);
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
            // SAFETY: the barrier words are the kernel's contract; totals holds 2 * gpus.
            let half = unsafe { multi.next_generation() } % 2;
            unsafe { totals.write((half * gpus + rank) as usize, total) };
        }
    }

    // Every GPU's total is visible to every GPU below.
    // SAFETY: the kernel's contract.
    unsafe { multi.sync() };

    if rank == 0 && block.group_index().x == 0 && block.thread_rank() == 0 {
        // SAFETY: as above; the barrier just completed has this generation.
        let half = (unsafe { multi.next_generation() } - 1) % 2;
        // GPU 0's own total is at hand (each read of the others' crosses PCIe).
        let mut sum = total;
        for r in 1..gpus {
            // SAFETY: totals holds 2 * gpus, and every GPU wrote its own before the barrier.
            sum += unsafe { totals.read((half * gpus + r) as usize) };
        }
        // SAFETY: out holds one float.
        unsafe { out.write(0, sum) };
    }
}

/// The lesson's input, element `first + i` at `out[i]` for `i < n`:
/// `0.5 + ((k * 2654435761) mod 2^64 mod 1024) / 1024` for element `k`, the
/// host's `reference::fill` made on the device, so that a shard of 2^32
/// floats is not written by the host and copied over.
///
/// # Safety
/// `out` holds `n` floats.
#[kernel]
pub unsafe fn fill_lesson_input(out: Out<f32>, first: usize, n: usize) {
    let grid = this_grid();
    let mut i = grid.thread_rank();
    while i < n {
        let k = (first + i) as u64;
        // SAFETY: i < n, and out holds n floats.
        unsafe { out.write(i, 0.5 + (k.wrapping_mul(2_654_435_761) % 1024) as f32 / 1024.0) };
        i += grid.num_threads();
    }
}

/// Only the barrier across GPUs, for timing it: every GPU's grid meets once.
///
/// # Safety
/// As `reduce_multi_gpu`'s `barrier`.
#[kernel(cooperative)]
pub unsafe fn multi_grid_barrier(barrier: Out<u32>, rank: u32, gpus: u32) {
    let grid = this_grid();
    // SAFETY: the kernel's contract.
    unsafe { this_multi_grid(&grid, barrier, rank, gpus).sync() };
}

/// [`multi_grid_barrier`] without the bound on its wait, for timing what the
/// bound costs.
///
/// # Safety
/// As [`multi_grid_barrier`], and every GPU is known to arrive (the host
/// launches it only after the bounded barrier met).
#[kernel(cooperative)]
pub unsafe fn multi_grid_barrier_unbounded(barrier: Out<u32>, rank: u32, gpus: u32) {
    let grid = this_grid();
    // SAFETY: the kernel's contract.
    unsafe { this_multi_grid(&grid, barrier, rank, gpus).sync_unbounded() };
}
