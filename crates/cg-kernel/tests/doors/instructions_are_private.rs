//! The instructions under `cg` and the emulator's coroutine stacks: each
//! trusts its caller (a stack restored into the wrong slot, a system-scope
//! load of any address).
fn main() {
    let _ = cg_kernel::arch::ld_acquire_sys;
    let _ = cg_kernel::emu::stack::SlotStack::restore;
}
