//! The branch-memory test broken on purpose, in the diagnosing build: with
//! memory work in a branch unordered against the branch and frees not held
//! to the join (`Gpu::mutant_unordered_branch_memory`, the host as it was
//! before 2026-12-03), the check of `tests/concurrent.rs` must find wrong
//! sums. It records how many; a run that finds none says so and fails, since
//! a check that has never failed is not yet a check.
// The launcher's mutants exist only under `--cfg cg_mutants` (scripts/test.sh).
#![cfg(all(cg_mutants, feature = "barrier-timeout"))]

// The kernels the host library reaches through `host::kernels()`.
use gpu as _;
use gpu_ptx as _;

use host::device::Gpu;

mod branch_memory_case;

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn without_the_ordering_buffers_made_in_branches_give_wrong_sums() {
    let gpu = Gpu::open(0).expect("a GPU");
    gpu.mutant_unordered_branch_memory();
    // Both programs of the check: the total written straight into a buffer
    // made before the branches (4 of 2,000 sums wrong on 2026-12-03, 0 of
    // 2,000 on 2026-12-04: too rare alone), and the total made, written and
    // copied out in the branch, issue 47's program, where an unordered copy
    // can overtake the kernel.
    let mut wrong = 0;
    for out_in_branch in [false, true] {
        let missed = branch_memory_case::sums_with_buffers_made_in_branches(&gpu, 1 << 22, 1000, out_in_branch).unwrap();
        println!(
            "unordered, out in branch {out_in_branch}: {} of 2000 sums wrong (expected {}); first: {:?}",
            missed.wrong.len(),
            missed.expected,
            missed.wrong.first()
        );
        wrong += missed.wrong.len();
    }
    assert!(wrong > 0, "the mutant gave no wrong sum in 2,000 rounds of either program: the check cannot tell");
}
