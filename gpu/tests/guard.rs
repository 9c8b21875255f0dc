//! The compile-time guard on `grid.sync()`: in a kernel declared without
//! `#[kernel(cooperative)]`, every way of reaching it is a compile error in
//! that kernel's file which names the attribute (`tests/guard/*.stderr` hold
//! the messages); the same code in a cooperative kernel compiles.

#[test]
fn grid_sync_outside_a_cooperative_kernel_does_not_compile_and_names_the_attribute() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/guard/grid_sync_*.rs");
    t.pass("tests/guard/cooperative_kernels_compile.rs");
}

/// The same guard on the grid collectives, each of which contains a grid
/// barrier: in a kernel declared without `cooperative`, a compile error that
/// names the attribute.
#[test]
fn a_grid_collective_outside_a_cooperative_kernel_does_not_compile_and_names_the_attribute() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/guard/grid_collective_undeclared.rs");
}

/// The same guard on `this_cluster()`: outside a `#[kernel(cluster)]` kernel
/// it has no methods, and the error names the attribute.
#[test]
fn this_cluster_outside_a_cluster_kernel_does_not_compile_and_names_the_attribute() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/guard/cluster_undeclared.rs");
    t.pass("tests/guard/cluster_kernels_compile.rs");
}

/// A `TILE` default that is not 1, 2, 4, 8, 16 or 32: the error's first
/// place is the kernel's own signature, where the learner wrote the size.
#[test]
fn a_tile_size_that_is_not_a_power_of_two_up_to_32_is_an_error_at_the_kernels_signature() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/guard/tile_size_24.rs");
}

/// A kernel of 17 parameters, one more than the host's definitions and
/// argument lists take: the error is at the 17th, and says what to do.
#[test]
fn a_seventeenth_kernel_parameter_is_an_error_at_it_that_says_the_limit() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/guard/seventeen_params.rs");
}

/// A parameter that is neither a buffer nor a number (a `bool`): the error
/// is at its type and lists the types a kernel parameter may have.
#[test]
fn a_parameter_that_is_neither_a_buffer_nor_a_number_is_an_error_that_lists_the_types() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/guard/param_not_a_number.rs");
}
