//! The grid shadowed, renamed and moved before `sync()`, in a kernel declared
//! without `cooperative`.
use gpu::cg::this_grid;
use gpu::kernel;

/// # Safety
/// None needed.
#[kernel]
pub unsafe fn renamed() {
    let grid = this_grid();
    let grid = grid;
    let g = grid;
    let groups = (0u32, g);
    groups.1.sync();
}

fn main() {}
