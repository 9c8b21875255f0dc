//! A kernel that never finishes, in the plain build (whose `grid.sync()`
//! waits forever): the host's time limit names it, nothing new is queued
//! behind it, and tearing the device down does not wait for it. Its own test
//! binary, because the stuck kernel holds the GPU until the process exits.
#![cfg(not(feature = "barrier-timeout"))]

// The kernels the host library reaches through `host::kernels()`.
use gpu as _;
use gpu_ptx as _;

use cg_launcher::error::Error as L;
use host::device::Gpu;
use host::error::Error;
use host::launch::prelude::*;
use std::time::{Duration, Instant};

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_kernel_that_never_finishes_is_a_timeout_then_new_work_is_refused_and_teardown_does_not_wait() {
    let gpu = Gpu::open(0).unwrap();
    let kernel = gpu.cooperative_kernel(&gpu::kernels::GRID_SYNC_MISSING_BLOCK).unwrap();
    let blocks = kernel.limits(256).unwrap().capacity();
    let launch = kernel.configure(blocks, 256).unwrap();
    let mut out = gpu.zeros::<u32>(blocks as usize).unwrap();
    gpu.set_timeout(Duration::from_millis(500));
    launch.per_block(out.slice_mut(..)).unwrap();
    let err = gpu.finish().expect_err("the last block never reaches the barrier");
    println!("{err}");
    assert!(matches!(err, cg_launcher::error::Error::Timeout { kernel: "grid_sync_missing_block", .. }), "{err}");

    let refused = Instant::now();
    let err = gpu.read(&out).expect_err("a copy would wait behind the stuck kernel");
    println!("{err}");
    assert!(matches!(err, cg_launcher::error::Error::DeviceStuck { kernel: "grid_sync_missing_block" }), "{err}");
    let err = launch.per_block(out.slice_mut(..)).expect_err("a launch would queue behind it");
    assert!(matches!(err, Error::Launch(L::DeviceStuck { .. })), "{err}");
    assert!(refused.elapsed() < Duration::from_millis(100), "refused at once, not after a wait");

    let teardown = Instant::now();
    drop(out);
    drop(kernel);
    drop(gpu);
    println!("teardown took {:.3} s", teardown.elapsed().as_secs_f64());
    assert!(teardown.elapsed() < Duration::from_secs(2), "teardown does not wait for the stuck kernel");
}
