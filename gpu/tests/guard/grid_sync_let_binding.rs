//! `grid.sync()` through a `let` binding, in a kernel declared without `cooperative`.
use gpu::cg::this_grid;
use gpu::kernel;
use gpu::mem::Out;

/// # Safety
/// `out` holds one float per block.
#[kernel]
pub unsafe fn first_stage(out: Out<f32>) {
    let grid = this_grid();
    grid.sync();
    unsafe { out.write(grid.block_rank(), 1.0) };
}

fn main() {}
