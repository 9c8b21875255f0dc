// MA1: a `shared_array!` in an item declared inside a kernel's body (an
// `impl`'s method, a nested `fn`). The item can be called from any kernel,
// one whose shared memory holds no such array, and there it would write
// past the allocation on a GPU: it must not compile.
use cg_kernel::kernel;
use cg_kernel::mem::{DynamicShared, Out};
use cg_kernel::shared_array;

pub trait Scratch {
    fn scratch() -> DynamicShared<u32>;
}

pub struct Big;

/// # Safety
/// `out` holds one element.
#[kernel(emulator)]
pub unsafe fn owner(out: Out<u32>) {
    impl Scratch for Big {
        fn scratch() -> DynamicShared<u32> {
            shared_array!(u32, 1024)
        }
    }
    fn helper() -> DynamicShared<u32> {
        shared_array!(u32, 16)
    }
    let _ = (Big::scratch(), helper());
    // SAFETY: one element.
    unsafe { out.write(0, 1) };
}

fn main() {}
