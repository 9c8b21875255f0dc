//! One collective each, written to its contract, in the shape that made
//! LLVM copy an opaque `asm!` collective into both paths of a branch: the
//! call between two `if t == 0`. `host/tests/ptx.rs` counts each one's
//! instruction in the PTX (one source call, one instruction);
//! `gpu/tests/emulator.rs` runs them, so each is also a kernel that works.
//!
//! Each writes `out[0] = 1` from thread 0 before the collective and
//! `out[1]` from thread 0 after it: [`PROBE_WORDS`] words.

use crate::cg::{
    Plus, block_exclusive_scan, block_reduce, block_scratch_bytes, exclusive_scan, inclusive_scan, reduce, this_cluster, this_grid, this_thread_block,
    tiled_partition,
};
use crate::kernel;
use crate::mem::{Out, dynamic_shared};

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

/// `tile.match_any()` between two branches: lane 0's group of the lanes
/// whose rank has its remainder by 4 (`out[1] = 0x1111_1111`).
///
/// # Safety
/// `out` holds [`PROBE_WORDS`] `u32`.
#[kernel]
pub unsafe fn probe_match_any(out: Out<u32>) {
    let block = this_thread_block();
    let tile = tiled_partition::<32>(&block);
    let t = block.thread_rank();
    if t == 0 {
        // SAFETY: PROBE_WORDS words.
        unsafe { out.write(0, 1) };
    }
    let peers = tile.match_any(tile.thread_rank() % 4);
    if t == 0 {
        // SAFETY: as above.
        unsafe { out.write(1, peers) };
    }
}

/// `tile.match_any()` of a 64-bit value between two branches: the keys
/// differ only in their high word, which a 32-bit match would not see
/// (`out[1] = 0x5555_5555`).
///
/// # Safety
/// `out` holds [`PROBE_WORDS`] `u32`.
#[kernel]
pub unsafe fn probe_match_any_64(out: Out<u32>) {
    let block = this_thread_block();
    let tile = tiled_partition::<32>(&block);
    let t = block.thread_rank();
    if t == 0 {
        // SAFETY: PROBE_WORDS words.
        unsafe { out.write(0, 1) };
    }
    let peers = tile.match_any(((tile.thread_rank() % 2) as u64) << 32 | 7);
    if t == 0 {
        // SAFETY: as above.
        unsafe { out.write(1, peers) };
    }
}

/// `tile.match_all()` between two branches: every lane has 7, so the tile's
/// mask, and the predicate in bit 0 of `out[0]` (`out[1] = 0xffff_ffff`, `out[0] = 1`).
///
/// # Safety
/// `out` holds [`PROBE_WORDS`] `u32`.
#[kernel]
pub unsafe fn probe_match_all(out: Out<u32>) {
    let block = this_thread_block();
    let tile = tiled_partition::<32>(&block);
    let t = block.thread_rank();
    if t == 0 {
        // SAFETY: PROBE_WORDS words.
        unsafe { out.write(0, 0) };
    }
    let (lanes, all) = tile.match_all(7u32);
    if t == 0 {
        // SAFETY: as above.
        unsafe { out.write(0, all as u32) };
        // SAFETY: as above.
        unsafe { out.write(1, lanes) };
    }
}

/// `cg::inclusive_scan()` of `f32` between two branches: lane 31 gets
/// 0 + 1 + ... + 31 (`out[1] = 496`).
///
/// # Safety
/// `out` holds [`PROBE_WORDS`] `u32`.
#[kernel]
pub unsafe fn probe_inclusive_scan(out: Out<u32>) {
    let block = this_thread_block();
    let tile = tiled_partition::<32>(&block);
    let t = block.thread_rank();
    if t == 0 {
        // SAFETY: PROBE_WORDS words.
        unsafe { out.write(0, 1) };
    }
    let s = inclusive_scan(&tile, tile.thread_rank() as f32, Plus);
    if t == 31 {
        // SAFETY: as above.
        unsafe { out.write(1, s as u32) };
    }
}

/// `cg::exclusive_scan()` of `f32` between two branches: lane 31 gets
/// 0 + 1 + ... + 30 (`out[1] = 465`).
///
/// # Safety
/// `out` holds [`PROBE_WORDS`] `u32`.
#[kernel]
pub unsafe fn probe_exclusive_scan(out: Out<u32>) {
    let block = this_thread_block();
    let tile = tiled_partition::<32>(&block);
    let t = block.thread_rank();
    if t == 0 {
        // SAFETY: PROBE_WORDS words.
        unsafe { out.write(0, 1) };
    }
    let s = exclusive_scan(&tile, tile.thread_rank() as f32, Plus);
    if t == 31 {
        // SAFETY: as above.
        unsafe { out.write(1, s as u32) };
    }
}

/// `cg::exclusive_scan()` of `u32` between two branches, which subtracts
/// instead of shuffling once more (`out[1] = 465`).
///
/// # Safety
/// `out` holds [`PROBE_WORDS`] `u32`.
#[kernel]
pub unsafe fn probe_exclusive_scan_u32(out: Out<u32>) {
    let block = this_thread_block();
    let tile = tiled_partition::<32>(&block);
    let t = block.thread_rank();
    if t == 0 {
        // SAFETY: PROBE_WORDS words.
        unsafe { out.write(0, 1) };
    }
    let s = exclusive_scan(&tile, tile.thread_rank(), Plus);
    if t == 31 {
        // SAFETY: as above.
        unsafe { out.write(1, s) };
    }
}

/// `cg::block_reduce()` of `f32` between two branches: on a block of 64,
/// 0 + 1 + ... + 63 (`out[1] = 2016`).
///
/// # Safety
/// `out` holds [`PROBE_WORDS`] `u32`.
#[kernel(shared_memory = block_scratch_bytes::<f32>)]
pub unsafe fn probe_block_reduce<const TILE: u32 = 32>(out: Out<u32>) {
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);
    let t = block.thread_rank();
    if t == 0 {
        // SAFETY: PROBE_WORDS words.
        unsafe { out.write(0, 1) };
    }
    // SAFETY: every thread reaches it; the launch sizes the scratch, which nothing else uses.
    let total = unsafe { block_reduce(&block, &tile, t as f32, Plus, dynamic_shared()) };
    if t == 0 {
        // SAFETY: as above.
        unsafe { out.write(1, total as u32) };
    }
}

/// `cg::block_exclusive_scan()` of `f32` between two branches: on a block
/// of 64, thread 63 gets 0 + 1 + ... + 62 (`out[1] = 1953`).
///
/// # Safety
/// `out` holds [`PROBE_WORDS`] `u32`.
#[kernel(shared_memory = block_scratch_bytes::<f32>)]
pub unsafe fn probe_block_exclusive_scan<const TILE: u32 = 32>(out: Out<u32>) {
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);
    let t = block.thread_rank();
    if t == 0 {
        // SAFETY: PROBE_WORDS words.
        unsafe { out.write(0, 1) };
    }
    // SAFETY: every thread reaches it; the launch sizes the scratch, which nothing else uses.
    let (below, _) = unsafe { block_exclusive_scan(&block, &tile, t as f32, Plus, dynamic_shared()) };
    if t == 63 {
        // SAFETY: as above.
        unsafe { out.write(1, below as u32) };
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
