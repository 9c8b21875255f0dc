//! The block reduction every sum kernel shares: the lesson's `blockSum`.

use crate::cg::{self, Plus, ThreadBlock, ThreadBlockTile};
use crate::mem::dynamic_shared;

/// Bytes of dynamic shared memory [`block_sum`] needs for a block of
/// `threads_per_block`: one `f32` per tile of `tile` threads. A kernel that
/// calls `block_sum` says so with `#[kernel(shared_memory = one_f32_per_tile)]`,
/// and the launch and the occupancy query both use this figure.
pub const fn one_f32_per_tile(threads_per_block: u32, tile: u32) -> u32 {
    threads_per_block.div_ceil(tile) * 4
}

/// The block's total of `v`, in thread 0 (the lesson's `blockSum(block, tile, v)`).
///
/// Each tile adds its threads' values with `cg::reduce`; thread 0 of each tile
/// stores the tile's total in dynamic shared memory ([`one_f32_per_tile`]);
/// then the first tile adds those totals up. Every thread of the block must call it.
// Inlined on the GPU, as nvcc inlines `blockSum`; one out-of-line copy per
// tile on the emulator, so that an edit here rebuilds that copy, not every
// kernel that calls it.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline(never))]
pub fn block_sum<const TILE: u32>(block: &ThreadBlock, tile: &ThreadBlockTile<TILE>, v: f32) -> f32 {
    let tile_totals = dynamic_shared::<f32>();
    let tile_total = cg::reduce(tile, v, Plus);
    if tile.thread_rank() == 0 {
        // SAFETY: the launch gives one f32 per tile, and each tile writes only its own.
        unsafe { tile_totals.write(tile.meta_group_rank() as usize, tile_total) };
    }
    block.sync();
    let mut total = 0.0f32;
    if tile.meta_group_rank() == 0 {
        let mut mine = 0.0f32;
        let mut i = tile.thread_rank();
        while i < tile.meta_group_size() {
            // SAFETY: i names a tile, and every tile wrote its total before block.sync().
            mine += unsafe { tile_totals.read(i as usize) };
            i += TILE;
        }
        total = cg::reduce(tile, mine, Plus);
    }
    // The next call may overwrite tile_totals only after everyone has read them.
    block.sync();
    total
}
