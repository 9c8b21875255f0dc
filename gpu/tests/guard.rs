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

/// The same guard on `this_cluster()`: outside a `#[kernel(cluster)]` kernel
/// it has no methods, and the error names the attribute.
#[test]
fn this_cluster_outside_a_cluster_kernel_does_not_compile_and_names_the_attribute() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/guard/cluster_undeclared.rs");
    t.pass("tests/guard/cluster_kernels_compile.rs");
}
