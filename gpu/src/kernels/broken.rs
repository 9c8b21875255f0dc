//! Kernels broken on purpose: one whose grid barrier can never complete, for
//! the tests of what the host does with a kernel that never finishes
//! (`tests/stuck.rs`) and of the diagnosing barrier (`tests/barrier_timeout.rs`);
//! one that reaches `grid.sync()` around the compile-time guard; and one made
//! to break each of compute-sanitizer's tools (`scripts/sanitize.sh`).

use crate::cg::{self, Plus, this_grid, this_thread_block, tiled_partition};
use crate::kernel;
use crate::lesson::sum::{block_sum, one_f32_per_tile};
use crate::mem::{In, Out, dynamic_shared};

/// Every block but the last waits at `grid.sync()`; the last one returns.
///
/// # Safety
/// `out` holds one `u32` per block.
#[kernel(cooperative)]
pub unsafe fn grid_sync_missing_block(out: Out<u32>) {
    let grid = this_grid();
    if grid.block_rank() == grid.num_blocks() - 1 {
        return;
    }
    grid.sync();
    if this_thread_block().thread_rank() == 0 {
        // SAFETY: one u32 per block.
        unsafe { out.write(grid.block_rank(), 1) };
    }
}

/// A grid barrier reached around the compile-time guard: declared without
/// `cooperative`, it takes the grid that can synchronize by the hidden path
/// `#[kernel(cooperative)]` uses. The two checks behind the guard catch it:
/// the host's loader (its PTX calls `grid.sync()`) and the emulator.
///
/// # Safety
/// `out` holds one `u32` per block.
#[kernel]
pub unsafe fn undeclared_grid_sync(out: Out<u32>) {
    // SAFETY: none: the constructor's contract is broken on purpose.
    let grid = unsafe { crate::cg::cooperative_kernel::this_grid() };
    grid.sync();
    if this_thread_block().thread_rank() == 0 {
        // SAFETY: one u32 per block.
        unsafe { out.write(grid.block_rank(), 1) };
    }
}

/// The same, through a helper that returns a value and is not inlined:
/// PTX writes such a function `.func (.param .b32 func_retval0) NAME(`,
/// which the loader's search once missed.
///
/// # Safety
/// `out` holds one `u32` per block.
#[kernel]
pub unsafe fn undeclared_grid_sync_in_a_helper(out: Out<u32>) {
    let rank = synchronizing_helper();
    if this_thread_block().thread_rank() == 0 {
        // SAFETY: one u32 per block.
        unsafe { out.write(rank as usize, 1) };
    }
}

/// Syncs the grid it takes by the hidden path, and returns this block's rank.
#[inline(never)]
fn synchronizing_helper() -> u32 {
    // SAFETY: none: the constructor's contract is broken on purpose.
    let grid = unsafe { crate::cg::cooperative_kernel::this_grid() };
    grid.sync();
    grid.block_rank() as u32
}

// Kernels made to break each of compute-sanitizer's tools, so that
// `scripts/sanitize.sh` shows each tool failing where it should. Each is the
// lesson's first stage (`reduce_blocks_to_partials`) with one mistake; the host
// launches them from `host/tests/sanitizer_targets.rs`.

/// For memcheck: day 8's bounds bug, the loop running to n rounded up to whole
/// blocks, declared as if it read nothing past n; launched on a buffer of
/// exactly n floats, so its extra reads fall outside the allocation.
///
/// # Safety
/// None: it reads past `input`, on purpose.
#[kernel(shared_memory = one_f32_per_tile)]
pub unsafe fn sanitizer_reads_past_n<const TILE: u32 = 32>(input: In<f32>, partials: Out<f32>, n: usize) {
    let grid = this_grid();
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);
    let mut v = 0.0f32;
    let mut i = grid.thread_rank();
    while i < n.next_multiple_of(block.num_threads() as usize) {
        // SAFETY: none for i >= n: the mistake memcheck is shown to catch.
        v += unsafe { input.read(i) };
        i += grid.num_threads();
    }
    let total = block_sum(&block, &tile, v);
    if block.thread_rank() == 0 {
        // SAFETY: partials holds one float per block.
        unsafe { partials.write(block.group_index().x as usize, total) };
    }
}

/// For racecheck: the first stage with `block_sum`'s first `block.sync()`
/// left out, so tile 0 reads the other tiles' totals before they are written.
///
/// # Safety
/// `input` holds `n` floats, `partials` one per block.
#[kernel(shared_memory = one_f32_per_tile)]
pub unsafe fn sanitizer_block_sum_race<const TILE: u32 = 32>(input: In<f32>, partials: Out<f32>, n: usize) {
    let grid = this_grid();
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);
    let mut v = 0.0f32;
    let mut i = grid.thread_rank();
    while i < n {
        // SAFETY: i < n, and the input holds n floats.
        v += unsafe { input.read(i) };
        i += grid.num_threads();
    }
    let tile_totals = dynamic_shared::<f32>();
    let tile_total = cg::reduce(&tile, v, Plus);
    if tile.thread_rank() == 0 {
        // SAFETY: one f32 per tile.
        unsafe { tile_totals.write(tile.meta_group_rank() as usize, tile_total) };
    }
    // The mistake: no block.sync() here.
    let mut total = 0.0f32;
    if tile.meta_group_rank() == 0 {
        let mut mine = 0.0f32;
        let mut t = tile.thread_rank();
        while t < tile.meta_group_size() {
            // SAFETY: t names a tile; whether it has written its total is the race.
            mine += unsafe { tile_totals.read(t as usize) };
            t += TILE;
        }
        total = cg::reduce(&tile, mine, Plus);
    }
    block.sync();
    if block.thread_rank() == 0 {
        // SAFETY: partials holds one float per block.
        unsafe { partials.write(block.group_index().x as usize, total) };
    }
}

/// For synccheck: the aligned block barrier (`__syncthreads()`), which
/// each warp must reach as one, reached by lane 0 of each warp alone. The
/// same mistake with the non-aligned `block.sync()` is defined on sm_70 and
/// newer, and synccheck rightly reports nothing for it (H200, 2026-12-03).
///
/// # Safety
/// `input` holds `n` floats, `partials` one per block.
#[kernel(shared_memory = one_f32_per_tile)]
pub unsafe fn sanitizer_divergent_aligned_block_sync<const TILE: u32 = 32>(input: In<f32>, partials: Out<f32>, n: usize) {
    let grid = this_grid();
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);
    let i = grid.thread_rank();
    // SAFETY: i < n is checked.
    let v = if i < n { unsafe { input.read(i) } } else { 0.0 };
    let tile_totals = dynamic_shared::<f32>();
    let tile_total = cg::reduce(&tile, v, Plus);
    if tile.thread_rank() == 0 {
        // SAFETY: one f32 per tile.
        unsafe { tile_totals.write(tile.meta_group_rank() as usize, tile_total) };
        // The mistake: an aligned block barrier inside a branch that the
        // other 31 lanes of the warp skip.
        // SAFETY: none; this is the mistake synccheck is shown to catch.
        unsafe { block.sync_aligned() };
    }
    // SAFETY: as above.
    unsafe { block.sync_aligned() };
    if block.thread_rank() == 0 {
        // SAFETY: partials holds one float per block; tile 0 wrote its total.
        unsafe { partials.write(block.group_index().x as usize, tile_totals.read(0)) };
    }
}
