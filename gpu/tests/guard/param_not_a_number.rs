//! A kernel parameter that is neither a buffer nor a number: a `bool` (C++
//! passes one; a Rust kernel takes a `u32` 0 or 1). The error is at its
//! type, once, and lists the types a parameter may have.

use gpu::kernel;
use gpu::mem::Out;

/// # Safety
/// `out` holds one element.
#[kernel]
pub unsafe fn flagged(out: Out<u32>, flag: bool) {
    if flag {
        // SAFETY: out holds one element.
        unsafe { out.write(0, 1) };
    }
}

fn main() {}
