//! One collective each, written to its contract, in the shape that made
//! LLVM copy an opaque `asm!` collective into both paths of a branch: the
//! call between two `if t == 0`. `host/tests/ptx.rs` counts each one's
//! instruction in the PTX (one source call, one instruction);
//! `gpu/tests/emulator.rs` runs them, so each is also a kernel that works.
//!
//! Each writes `out[0] = 1` from thread 0 before the collective and
//! `out[1]` from thread 0 after it: [`PROBE_WORDS`] words.

use crate::cg::{Plus, reduce, this_cluster, this_grid, this_thread_block, tiled_partition};
use crate::kernel;
use crate::mem::Out;

/// Words each probe writes.
pub const PROBE_WORDS: usize = 2;

/// `block.sync()` between two branches on the thread's rank: after it,
/// thread 0 reads back what it wrote before, plus 1 (`out[1] = 2`).
///
/// # Safety
/// `out` holds [`PROBE_WORDS`] `u32`.
#[kernel]
pub unsafe fn probe_block_sync(out: Out<u32>) {
    let block = this_thread_block();
    let t = block.thread_rank();
    if t == 0 {
        // SAFETY: PROBE_WORDS words.
        unsafe { out.write(0, 1) };
    }
    block.sync();
    if t == 0 {
        // SAFETY: as above.
        unsafe { out.write(1, out.read(0) + 1) };
    }
}

/// `block.sync_aligned()` where `__syncthreads()` may stand: every thread of
/// every warp reaches it, after a branch that has closed (`out[1] = 2`).
///
/// # Safety
/// `out` holds [`PROBE_WORDS`] `u32`.
#[kernel]
pub unsafe fn probe_block_sync_aligned(out: Out<u32>) {
    let block = this_thread_block();
    let t = block.thread_rank();
    if t == 0 {
        // SAFETY: PROBE_WORDS words.
        unsafe { out.write(0, 1) };
    }
    // SAFETY: every thread reaches this line, each warp as one (the branch
    // above has closed).
    unsafe { block.sync_aligned() };
    if t == 0 {
        // SAFETY: as above.
        unsafe { out.write(1, out.read(0) + 1) };
    }
}

/// `tile.shfl_down()` between two branches: lane 0 gets lane 1's value, 1
/// (`out[1] = 1`).
///
/// # Safety
/// `out` holds [`PROBE_WORDS`] `u32`.
#[kernel]
pub unsafe fn probe_shfl_down(out: Out<u32>) {
    let block = this_thread_block();
    let tile = tiled_partition::<32>(&block);
    let t = block.thread_rank();
    let mut v = tile.thread_rank();
    if t == 0 {
        // SAFETY: PROBE_WORDS words.
        unsafe { out.write(0, 1) };
        v = 0;
    }
    let w = tile.shfl_down(v, 1);
    if t == 0 {
        // SAFETY: as above.
        unsafe { out.write(1, w) };
    }
}

/// `tile.ballot()` between two branches: the lanes whose rank is a
/// multiple of 3 (`out[1] = 0x4924_9249`).
///
/// # Safety
/// `out` holds [`PROBE_WORDS`] `u32`.
#[kernel]
pub unsafe fn probe_ballot(out: Out<u32>) {
    let block = this_thread_block();
    let tile = tiled_partition::<32>(&block);
    let t = block.thread_rank();
    if t == 0 {
        // SAFETY: PROBE_WORDS words.
        unsafe { out.write(0, 1) };
    }
    let lanes = tile.ballot(tile.thread_rank().is_multiple_of(3));
    if t == 0 {
        // SAFETY: as above.
        unsafe { out.write(1, lanes) };
    }
}

/// `tile.sync()` between two branches (`out[1] = 2`).
///
/// # Safety
/// `out` holds [`PROBE_WORDS`] `u32`.
#[kernel]
pub unsafe fn probe_tile_sync(out: Out<u32>) {
    let block = this_thread_block();
    let tile = tiled_partition::<32>(&block);
    let t = block.thread_rank();
    if t == 0 {
        // SAFETY: PROBE_WORDS words.
        unsafe { out.write(0, 1) };
    }
    tile.sync();
    if t == 0 {
        // SAFETY: as above.
        unsafe { out.write(1, out.read(0) + 1) };
    }
}

/// `cg::reduce()` over a tile, between two branches: on a 32-thread block,
/// 0 + 1 + ... + 31 (`out[1] = 496`).
///
/// # Safety
/// `out` holds [`PROBE_WORDS`] `u32`.
#[kernel]
pub unsafe fn probe_reduce(out: Out<u32>) {
    let block = this_thread_block();
    let tile = tiled_partition::<32>(&block);
    let t = block.thread_rank();
    let mut v = tile.thread_rank() as f32;
    if t == 0 {
        // SAFETY: PROBE_WORDS words.
        unsafe { out.write(0, 1) };
        v = 0.0;
    }
    let total = reduce(&tile, v, Plus);
    if t == 0 {
        // SAFETY: as above.
        unsafe { out.write(1, total as u32) };
    }
}

/// `block.sync()` in a loop whose body branches on the thread's rank
/// before and after it (`out[1] = 4`, after 3 trips).
///
/// # Safety
/// `out` holds [`PROBE_WORDS`] `u32`.
#[kernel]
pub unsafe fn probe_block_sync_in_a_loop(out: Out<u32>, trips: u32) {
    let block = this_thread_block();
    let t = block.thread_rank();
    if t == 0 {
        // SAFETY: PROBE_WORDS words.
        unsafe { out.write(0, 1) };
    }
    for _ in 0..trips {
        if t == 0 {
            // SAFETY: as above.
            unsafe { out.write(1, out.read(0) + 1) };
        }
        block.sync();
        if t == 0 {
            // SAFETY: as above.
            unsafe { out.write(0, out.read(1)) };
        }
    }
    if t == 0 {
        // SAFETY: as above.
        unsafe { out.write(1, out.read(0)) };
    }
}

/// `grid.sync()` between two branches: after it, thread 0 of the last block
/// reads what thread 0 of block 0 wrote (`out[1] = 2`).
///
/// # Safety
/// `out` holds [`PROBE_WORDS`] `u32`.
#[kernel(cooperative)]
pub unsafe fn probe_grid_sync(out: Out<u32>) {
    let grid = this_grid();
    let block = this_thread_block();
    let t = block.thread_rank();
    let first = grid.block_rank() == 0;
    if first && t == 0 {
        // SAFETY: PROBE_WORDS words.
        unsafe { out.write(0, 1) };
    }
    grid.sync();
    if grid.block_rank() + 1 == grid.num_blocks() && t == 0 {
        // SAFETY: as above.
        unsafe { out.write(1, out.read(0) + 1) };
    }
}

/// `cluster.sync()` between two branches (sm_90 module only; `out[1] = 2`).
///
/// # Safety
/// `out` holds [`PROBE_WORDS`] `u32`.
#[kernel(cluster)]
pub unsafe fn probe_cluster_sync(out: Out<u32>) {
    let cluster = this_cluster();
    let block = this_thread_block();
    let t = block.thread_rank();
    let first = cluster.block_rank() == 0;
    if first && t == 0 {
        // SAFETY: PROBE_WORDS words.
        unsafe { out.write(0, 1) };
    }
    cluster.sync();
    if first && t == 0 {
        // SAFETY: as above.
        unsafe { out.write(1, out.read(0) + 1) };
    }
}
