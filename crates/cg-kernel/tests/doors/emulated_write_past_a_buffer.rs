//! `global_write` took an index it never checked, and the emulator wrote
//! `address + index * size` on the host: anywhere in the process.
use cg_kernel::kernel;
use cg_kernel::mem::Out;

/// # Safety
/// `y` holds one element.
#[kernel]
pub unsafe fn scribble(y: Out<u32>) {
    cg_kernel::emu::thread::global_write(0, "y", 1 << 40, 0);
}

fn main() {}
