//! The branch-memory test broken on purpose, in the diagnosing build: with
//! memory work in a branch unordered against the branch and frees not held
//! to the join (`Gpu::mutant_unordered_branch_memory`, the host as it was
//! before 2026-12-03), the check of `tests/concurrent.rs` must find wrong
//! sums. It records how many; a run that finds none says so and fails, since
//! a check that has never failed is not yet a check.
#![cfg(feature = "barrier-timeout")]

// The kernels the host library reaches through `host::kernels()`.
use gpu as _;

use host::device::Gpu;

mod branch_memory_case;

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn without_the_ordering_buffers_made_in_branches_give_wrong_sums() {
    let gpu = Gpu::open(0).expect("a GPU");
    gpu.mutant_unordered_branch_memory();
    let missed = branch_memory_case::sums_with_buffers_made_in_branches(&gpu, 1 << 22, 1000, false).unwrap();
    println!("unordered: {} of 2000 sums wrong (expected {}); first: {:?}", missed.wrong.len(), missed.expected, missed.wrong.first());
    assert!(!missed.wrong.is_empty(), "the mutant gave no wrong sum in 1,000 rounds: the check cannot tell");
}
