//! The instructions under `cg` trust their caller (a system-scope load of
//! any address).
fn main() {
    let _ = cg_kernel::arch::ld_acquire_sys;
}
