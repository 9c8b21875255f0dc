// Shared memory of `bool`: no GPU load of one is defined here, so it must
// not compile, and the error must say which element types there are.
use cg_kernel::kernel;
use cg_kernel::mem::Out;
use cg_kernel::shared_array;

/// # Safety
/// `out` holds one element.
#[kernel]
pub unsafe fn flags(out: Out<u8>) {
    let seen = shared_array!(bool, 4);
    let _ = (seen, out);
}

fn main() {}
