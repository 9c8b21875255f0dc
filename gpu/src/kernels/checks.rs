//! Kernels that record what the hardware does, for comparing the emulator
//! with a GPU (`host/tests/gpu.rs` runs them there; `gpu/tests/emulator.rs` here).

use crate::cg::{this_grid, this_thread_block, tiled_partition};
use crate::kernel;
use crate::mem::Out;

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
