//! Doors a dependent crate must not find open: each case is safe code that
//! reached undefined behaviour through this crate's public API before
//! 2026-12-04, and now does not compile (`tests/doors/*.stderr` hold the
//! errors). What is checked at run time instead is tested where it runs
//! (`host/tests/concurrent.rs`, `host/tests/robustness.rs`).

#[test]
fn the_raw_driver_layer_and_borrowed_handles_are_closed_to_safe_code() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/doors/driver_is_private.rs");
    t.compile_fail("tests/doors/shared_out_borrows_its_memory.rs");
    t.compile_fail("tests/doors/arg_value_borrows_its_view.rs");
    t.compile_fail("tests/doors/arg_is_sealed.rs");
    t.compile_fail("tests/doors/hidden_builders_are_unsafe.rs");
}

/// The launcher's deliberately broken variants (`Gpu::mutant_*`) exist only
/// under `--cfg cg_mutants`, which no dependent's feature can set: with the
/// feature `barrier-timeout` on, as any crate in a graph may turn it on,
/// they are not there.
#[test]
#[cfg(feature = "barrier-timeout")]
fn a_feature_a_dependent_can_turn_on_opens_no_mutant() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/doors/mutants_are_not_public.rs");
}
