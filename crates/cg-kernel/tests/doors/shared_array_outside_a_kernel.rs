// A `shared_array!` in a helper function: no #[kernel] counts its bytes
// into a launch, so it must not compile (in a kernel's body it does).
use cg_kernel::mem::DynamicShared;
use cg_kernel::shared_array;

fn helper() -> DynamicShared<u32> {
    shared_array!(u32, 256)
}

fn main() {
    let _ = helper;
}
