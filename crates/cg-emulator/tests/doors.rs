//! Doors a dependent crate must not find open: each case is safe code that
//! reached undefined behaviour through the emulator's public API before
//! 2026-12-04 (its internals, then part of cg-kernel), and now does not
//! compile (`tests/doors/*.stderr` hold the errors). The hooks a kernel
//! calls (`cg_emulator::thread`) are public and check what they are given
//! instead: cg-kernel's `tests/thread_hooks.rs` runs them with arguments
//! past the launch's.

#[test]
fn the_emulators_internals_are_closed_to_safe_code() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/doors/emulated_launch_of_any_address.rs");
    t.compile_fail("tests/doors/emulated_memory_written_through_a_shared_reference.rs");
    t.compile_fail("tests/doors/stacks_are_private.rs");
}
