//! A kernel whose TILE default is not a tile size: the error is at the
//! default the learner wrote, and names the sizes.
use gpu::cg::{this_thread_block, tiled_partition};
use gpu::kernel;
use gpu::kernels::one_f32_per_tile;
use gpu::mem::Out;

/// # Safety
/// `out` holds one float per tile.
#[kernel(shared_memory = one_f32_per_tile)]
pub unsafe fn tile_of_24<const TILE: u32 = 24>(out: Out<f32>) {
    let block = this_thread_block();
    let tile = tiled_partition::<TILE>(&block);
    if tile.thread_rank() == 0 {
        unsafe { out.write(tile.meta_group_rank() as usize, 1.0) };
    }
}

fn main() {}
