//! `this_grid().sync()` with no binding, and through the `cg::` path, in a
//! kernel declared without `cooperative`.
use gpu::cg::{self, this_grid};
use gpu::kernel;

/// # Safety
/// None needed.
#[kernel]
pub unsafe fn direct() {
    this_grid().sync();
    cg::this_grid().sync();
    gpu::cg::this_grid().sync();
}

fn main() {}
