//! The diagnosing grid barrier at a grid large enough for the watched
//! barrier (blocks of 32, more than `WATCHED_ABOVE_BLOCKS` of them on an
//! H200): a block that skips `grid.sync()` is named there too.
#![cfg(feature = "barrier-timeout")]

// The kernels the host library reaches through `host::kernels()`.
use gpu as _;
use gpu_ptx as _;

mod barrier_timeout_case;

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_watched_grid_barrier_one_block_skips_is_a_host_timeout_then_a_barrier_report_never_a_hang() {
    let blocks = barrier_timeout_case::one_block_skips_the_barrier(32);
    if !cg_kernel::cg::barrier::is_watched(blocks) {
        println!("this GPU's full grid of 32 is {blocks} blocks, too few for the watched barrier: it ran the single word");
    }
}
