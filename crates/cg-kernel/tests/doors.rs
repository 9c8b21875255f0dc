//! Doors a dependent crate must not find open: each case is safe code that
//! reached undefined behaviour through this crate's public API before
//! 2026-12-04 (the emulator's internals), and now does not compile
//! (`tests/doors/*.stderr` hold the errors).

#[test]
fn the_emulators_internals_are_closed_to_safe_code() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/doors/emulated_write_past_a_buffer.rs");
    t.compile_fail("tests/doors/emulated_launch_of_any_address.rs");
    t.compile_fail("tests/doors/emulated_memory_written_through_a_shared_reference.rs");
    t.compile_fail("tests/doors/instructions_are_private.rs");
    t.compile_fail("tests/doors/atomics_are_sealed_and_unsafe.rs");
    t.compile_fail("tests/doors/shared_array_outside_a_kernel.rs");
    t.compile_fail("tests/doors/shared_array_shadowed_in_the_body.rs");
    t.compile_fail("tests/doors/an_element_that_is_not_a_word.rs");
}
