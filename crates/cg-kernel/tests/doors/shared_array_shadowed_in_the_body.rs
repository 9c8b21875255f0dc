// A `shared_array!` whose length names a constant the kernel's body
// shadows: #[kernel] sizes the arrays outside the body (K = 1) while the
// body would index 64; it must not compile.
use cg_kernel::cg::this_thread_block;
use cg_kernel::kernel;
use cg_kernel::mem::Out;
use cg_kernel::shared_array;

const K: usize = 1;

/// # Safety
/// `out` holds one element per thread.
#[kernel]
pub unsafe fn shadowed(out: Out<u32>) {
    const K: usize = 64;
    let t = this_thread_block().thread_rank() as usize;
    let a = shared_array!(u32, K);
    // SAFETY: t < 64 = K, as the body sees it.
    unsafe {
        a.write(t, t as u32);
        out.write(t, a.read(t));
    }
}

fn main() {
    let _ = K;
}
