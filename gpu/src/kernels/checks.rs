//! Kernels that record what the hardware does, for comparing the emulator
//! with a GPU (`host/tests/gpu.rs` runs them there; `gpu/tests/emulator.rs` here).

use crate::cg::{this_grid, this_thread_block, tiled_partition};
use crate::kernel;
use crate::mem::{DynamicShared, Out, dynamic_shared};
use cg_kernel::shared_array;

/// An input whose float sum depends on the order of the additions (values
/// of both signs over 15 binary orders of magnitude), for checking that the
/// emulator adds in exactly the GPU's order: same input, grid and block size,
/// same bits.
#[cfg(not(target_arch = "nvptx64"))]
pub fn order_sensitive_input(n: usize) -> Vec<f32> {
    (0..n as u64)
        .map(|i| {
            let mut z = i.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            let unit = (z >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
            unit * (1u32 << ((z >> 8) % 15)) as f32
        })
        .collect()
}

/// The totals of [`order_sensitive_input`]`(100_003)` (whose float
/// sum depends on the order of the additions) with 8 blocks of 64 threads:
/// two launches, one cooperative launch, and the cooperative fast sum, as an
/// H200 computed them (`host/tests/gpu.rs` checks the H200 against these,
/// `gpu/tests/emulator.rs` the emulator). The lesson's two were recorded on
/// 2026-11-29 and again on 2026-11-30; the fast sum's changed on 2026-11-30
/// when its loop went to one accumulator, and again when it went
/// warp-striped (`records/NOTES.md`).
pub const ORDER_SENSITIVE_H200_BITS: [u32; 3] = [0x480a_2528, 0x480a_2528, 0x480a_2522];

/// Results each lane of [`shuffle_out_of_range`] writes.
pub const SHUFFLE_PROBES: usize = 6;

/// Shuffles whose source lane or offset is 32 or more, on one warp: each lane
/// writes, for its value `1000 + lane`, `tile.shfl(v, 37)`, `tile.shfl(v, 67)`,
/// `tile.shfl_down(v, 33)`, `tile.shfl_up(v, 34)`, `tile.shfl_xor(v, 35)`, and
/// on a tile of 8, `shfl(v, 11)`.
///
/// # Safety
/// `out` holds [`SHUFFLE_PROBES`] `u32` per thread of one 32-thread block.
#[kernel]
pub unsafe fn shuffle_out_of_range(out: Out<u32>) {
    let block = this_thread_block();
    let tile = tiled_partition::<32>(&block);
    let eight = tiled_partition::<8>(&block);
    let lane = tile.thread_rank();
    let v = 1000 + lane;
    let results = [tile.shfl(v, 37), tile.shfl(v, 67), tile.shfl_down(v, 33), tile.shfl_up(v, 34), tile.shfl_xor(v, 35), eight.shfl(v, 11)];
    for (k, r) in results.into_iter().enumerate() {
        // SAFETY: SHUFFLE_PROBES u32 per thread.
        unsafe { out.write(SHUFFLE_PROBES * lane as usize + k, r) };
    }
}

/// What [`shuffle_out_of_range`] writes by the PTX ISA's rule for
/// `shfl.sync`, which uses only the low five bits of the lane operand: 37 is
/// lane 5, 67 is lane 3, a shift of 33 is 1 and of 34 is 2, a mask of 35 is
/// 3; within a tile of 8, 11 is its rank 3. A shift past the tile's edge
/// leaves the lane its own value.
pub fn shuffle_out_of_range_expected() -> [u32; 32 * SHUFFLE_PROBES] {
    let v = |lane: u32| 1000 + lane;
    let mut out = [0; 32 * SHUFFLE_PROBES];
    for lane in 0..32u32 {
        let row = [v(5), v(3), if lane < 31 { v(lane + 1) } else { v(lane) }, if lane >= 2 { v(lane - 2) } else { v(lane) }, v(lane ^ 3), v(lane / 8 * 8 + 3)];
        out[SHUFFLE_PROBES * lane as usize..][..SHUFFLE_PROBES].copy_from_slice(&row);
    }
    out
}

/// A kernel named nowhere but here: the tests find it by name among the
/// kernels the linker gathered (`cg_kernel::kernels::registered`), which is
/// how adding a kernel is one edit. After a grid barrier, each block writes
/// `1000 +` the number of blocks it saw arrive.
///
/// # Safety
/// `out` holds one `u32` per block.
#[kernel(cooperative)]
pub unsafe fn registered_alone(out: Out<u32>) {
    let grid = this_grid();
    grid.sync();
    if this_thread_block().thread_rank() == 0 {
        // SAFETY: one u32 per block.
        unsafe { out.write(grid.block_rank(), 1000 + grid.num_blocks() as u32) };
    }
}

/// A kernel with launch bounds (C++'s `__launch_bounds__(128, 4)`): its
/// PTX entries say `.maxntid 128, 1, 1` and `.minnctapersm 4`, and the host
/// refuses a larger block by name. Each block writes its threads after a
/// grid barrier.
///
/// # Safety
/// `out` holds one `u32` per block.
#[kernel(cooperative, launch_bounds(128, 4))]
pub unsafe fn launch_bounded(out: Out<u32>) {
    let grid = this_grid();
    grid.sync();
    let block = this_thread_block();
    if block.thread_rank() == 0 {
        // SAFETY: one u32 per block.
        unsafe { out.write(grid.block_rank(), block.num_threads()) };
    }
}

/// Dynamic shared memory of [`static_shared_arrays`]: one `u32` per thread.
pub const fn one_u32_per_thread(threads_per_block: u32) -> u32 {
    threads_per_block * 4
}

/// What thread `t` of [`static_shared_arrays`] writes into the dynamic part,
/// from a helper that knows only that part.
///
/// # Safety
/// `part` holds one `u32` per thread of the block.
#[inline(always)]
unsafe fn fill_dynamic_part(part: DynamicShared<u32>, t: usize) {
    // SAFETY: the caller's contract.
    unsafe { part.write(t, 1_000 + t as u32) };
}

/// Three static shared arrays (`shared_array!`, C++'s `__shared__ T a[N]`)
/// after a dynamic part that a helper fills: every thread writes its slot
/// of the dynamic part and of the first two arrays, thread 0 the third's
/// three bytes; after the barrier each reads its neighbour `o = (t + 1) % n`'s,
/// so an overlap of any two shows as a wrong value:
/// `out = 1000 + o + 2 o + o / 4 + 10 (o % 3 + 1)`
/// ([`static_shared_arrays_expected`]).
///
/// # Safety
/// `out` holds one element per thread of the grid; blocks of at most 256 threads.
#[kernel(shared_memory = one_u32_per_thread)]
pub unsafe fn static_shared_arrays(out: Out<f64>) {
    let block = this_thread_block();
    let (t, n) = (block.thread_rank() as usize, block.num_threads() as usize);
    let doubled = shared_array!(u32, 256);
    let quarters = shared_array!(f64, 256);
    let tens = shared_array!(u8, 3);
    // SAFETY: one u32 per thread in the dynamic part; t < 256 in each
    // array; thread 0 alone writes the bytes.
    unsafe {
        fill_dynamic_part(dynamic_shared::<u32>(), t);
        doubled.write(t, 2 * t as u32);
        quarters.write(t, t as f64 * 0.25);
        if t == 0 {
            tens.write(0, 10);
            tens.write(1, 20);
            tens.write(2, 30);
        }
    }
    block.sync();
    let o = (t + 1) % n;
    // SAFETY: after the barrier, each element written above.
    let v = unsafe { dynamic_shared::<u32>().read(o) as f64 + doubled.read(o) as f64 + quarters.read(o) + tens.read(o % 3) as f64 };
    // SAFETY: one element of out per thread.
    unsafe { out.write(this_grid().thread_rank() as usize, v) };
}

/// What [`static_shared_arrays`] writes with `blocks` blocks of `threads`.
#[cfg(not(target_arch = "nvptx64"))]
pub fn static_shared_arrays_expected(blocks: usize, threads: usize) -> Vec<f64> {
    (0..blocks * threads).map(|i| (i % threads + 1) % threads).map(|o| 1_000.0 + 3.0 * o as f64 + 0.25 * o as f64 + 10.0 * (o % 3 + 1) as f64).collect()
}
