//! A `fn` declared inside a cooperative kernel that calls `this_grid()`:
//! the kernel's grid exists only in the kernel's own body, so the macro
//! names the helper and says what to do instead.
use gpu::kernel;

/// # Safety
/// None needed.
#[kernel(cooperative)]
pub unsafe fn nested() {
    fn helper() {
        this_grid().sync();
    }
    helper();
}

fn main() {}
