//! The grid that can sync, taken by the path `#[kernel(cooperative)]` uses,
//! from safe code: the constructor is `unsafe`, whose contract is that only
//! the macro calls it.
fn helper() {
    gpu::cg::cooperative_kernel::this_grid().sync();
}

fn main() {
    helper();
}
