//! Doors a dependent crate must not find open: each case is safe code that
//! reached undefined behaviour, or a wrong answer, through this crate's
//! public API, and now does not compile (`tests/doors/*.stderr` hold the
//! errors). The emulator's own doors are cg-emulator's `tests/doors.rs`.

#[test]
fn the_instructions_and_unsound_uses_are_closed_to_safe_code() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/doors/instructions_are_private.rs");
    t.compile_fail("tests/doors/atomics_are_sealed_and_unsafe.rs");
    t.compile_fail("tests/doors/shared_array_outside_a_kernel.rs");
    t.compile_fail("tests/doors/shared_array_shadowed_in_the_body.rs");
    t.compile_fail("tests/doors/an_element_that_is_not_a_word.rs");
    t.compile_fail("tests/doors/an_operator_that_calls_a_barrier.rs");
    t.compile_fail("tests/doors/shared_array_in_a_nested_item.rs");
}
