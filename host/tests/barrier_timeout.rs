//! The diagnosing grid barrier (build feature `barrier-timeout`): a kernel
//! whose last block skips `grid.sync()` becomes a named error, not a hang.
//! Its own test binary, because the trap leaves the process's context unusable.
#![cfg(feature = "barrier-timeout")]

// The kernels the host library reaches through `host::kernels()`.
use gpu as _;

use host::device::Gpu;
use host::error::Error;

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_grid_barrier_one_block_skips_is_a_host_timeout_then_a_barrier_report_never_a_hang() {
    let gpu = Gpu::open(0).unwrap();
    let kernel = gpu.cooperative_kernel(&gpu::kernels::GRID_SYNC_MISSING_BLOCK).unwrap();
    let blocks = kernel.limits(256).unwrap().capacity();
    let launch = kernel.configure(blocks, 256).unwrap();
    let mut out = gpu.zeros::<u32>(blocks as usize).unwrap();
    let started = std::time::Instant::now();
    launch.per_block(out.slice_mut(..)).unwrap();
    // First the host's own bound: a wait shorter than the barrier's gives up
    // and names the kernel it was waiting for.
    gpu.set_timeout(std::time::Duration::from_millis(500));
    let err = gpu.finish().expect_err("the kernel is still waiting at the barrier");
    println!("after {:.2} s: {err}", started.elapsed().as_secs_f64());
    assert!(matches!(err, Error::Timeout { kernel: "grid_sync_missing_block", .. }), "{err}");
    // Then the barrier's own bound.
    gpu.set_timeout(std::time::Duration::from_secs(30));
    let err = gpu.finish().expect_err("the barrier cannot complete");
    println!("after {:.2} s: {err}", started.elapsed().as_secs_f64());
    match err {
        Error::GridBarrierTimedOut { kernel, report } => {
            assert_eq!(kernel, "grid_sync_missing_block");
            assert_eq!(report.expected, blocks);
            assert_eq!(report.arrived, blocks - 1);
            assert!(report.block < blocks - 1, "a waiting block reports");
        }
        other => panic!("expected a grid barrier timeout, got {other}"),
    }
}
