//! `this_cluster()` in a kernel declared without `cluster`: every use is a
//! compile error naming `#[kernel(cluster)]`.
use gpu::cg::{self, this_cluster};
use gpu::kernel;
use gpu::mem::dynamic_shared;

/// # Safety
/// None needed.
#[kernel(cooperative)]
pub unsafe fn undeclared() {
    this_cluster().sync();
    let rank = cg::this_cluster().block_rank();
    let _ = this_cluster().map_shared_rank(dynamic_shared::<f32>(), rank);
}

fn main() {}
