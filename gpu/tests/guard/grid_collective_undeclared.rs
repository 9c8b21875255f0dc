//! A grid collective in a kernel declared without `cooperative`: each call
//! contains a grid barrier, so it is refused as `grid.sync()` is, naming
//! the attribute.
use gpu::cg::{Plus, this_grid};
use gpu::kernel;
use gpu::mem::Out;

/// # Safety
/// `out` holds one element per thread.
#[kernel]
pub unsafe fn not_declared(out: Out<f32>) {
    let grid = this_grid();
    let total = grid.reduce(1.0f32, Plus);
    // SAFETY: one element per thread.
    unsafe { out.write(grid.thread_rank(), total) };
}

fn main() {}
