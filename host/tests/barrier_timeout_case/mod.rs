//! The case both diagnosing-barrier test binaries run (`mod barrier_timeout_case;`),
//! one per binary, because the trap leaves the process's context unusable.

use cg_launcher::error::Error as L;
use host::device::Gpu;
use host::error::Error;
use host::launch::prelude::*;

/// Launches `grid_sync_missing_block` on the full grid of `threads_per_block`
/// (its last block skips `grid.sync()`), and checks the host's wait times out
/// first, naming the kernel, then the barrier's own bound traps with a report
/// of the blocks that arrived. Returns the grid's block count.
pub fn one_block_skips_the_barrier(threads_per_block: u32) -> u32 {
    let gpu = Gpu::open(0).unwrap();
    let kernel = gpu.cooperative_kernel(&gpu::kernels::GRID_SYNC_MISSING_BLOCK).unwrap();
    let blocks = kernel.limits(threads_per_block).unwrap().capacity();
    let launch = kernel.configure(blocks, threads_per_block).unwrap();
    let mut out = gpu.zeros::<u32>(blocks as usize).unwrap();
    let started = std::time::Instant::now();
    launch.per_block(out.slice_mut(..)).unwrap();
    // First the host's own bound: a wait shorter than the barrier's gives up
    // and names the kernel it was waiting for.
    gpu.set_timeout(std::time::Duration::from_millis(500));
    let err = Error::from(gpu.finish().expect_err("the kernel is still waiting at the barrier"));
    println!("{blocks} x {threads_per_block}, after {:.2} s: {err}", started.elapsed().as_secs_f64());
    assert!(matches!(err, Error::Launch(L::Timeout { kernel: "grid_sync_missing_block", .. })), "{err}");
    // Then the barrier's own bound.
    gpu.set_timeout(std::time::Duration::from_secs(30));
    let err = Error::from(gpu.finish().expect_err("the barrier cannot complete"));
    println!("{blocks} x {threads_per_block}, after {:.2} s: {err}", started.elapsed().as_secs_f64());
    match err {
        Error::Launch(L::GridBarrierTimedOut { kernel, report }) => {
            assert_eq!(kernel, "grid_sync_missing_block");
            assert_eq!(report.expected, blocks);
            assert_eq!(report.arrived, blocks - 1);
            assert!(report.block < blocks - 1, "a waiting block reports");
        }
        other => panic!("expected a grid barrier timeout, got {other}"),
    }
    blocks
}
