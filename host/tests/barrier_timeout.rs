//! The diagnosing grid barrier (build feature `barrier-timeout`): a kernel
//! whose last block skips `grid.sync()` becomes a named error, not a hang.
//! Its own test binary, because the trap leaves the process's context unusable.
#![cfg(feature = "barrier-timeout")]

// The kernels the host library reaches through `host::kernels()`.
use gpu as _;
use gpu_ptx as _;

mod barrier_timeout_case;

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_grid_barrier_one_block_skips_is_a_host_timeout_then_a_barrier_report_never_a_hang() {
    // Blocks of 1,024: a grid small enough for the single word on any GPU.
    let blocks = barrier_timeout_case::one_block_skips_the_barrier(1024);
    assert!(!cg_kernel::cg::barrier::is_watched(blocks), "{blocks} blocks of 1024 take the single-word barrier");
}
