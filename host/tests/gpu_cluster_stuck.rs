//! A learner's divergent block barrier in a cluster kernel (a `block.sync()`
//! only the first warp reaches): on a GPU the launch never finishes. The
//! host's time limit names the kernel, later work is refused at once, and
//! tearing the device down (the sm_90 module the cluster kernels live in
//! included) does not wait for it: before 2026-12-04 the program hung there,
//! silently, at exit. Its own test binary: the stuck kernel holds the GPU
//! until the process exits.
#![cfg(not(feature = "barrier-timeout"))]

use gpu as _;
use gpu_ptx as _;
use host::clusters::{ClusterSums, LESSON_CLUSTER};
use host::device::Gpu;
use host::launch::DeviceInput;
use host::launch::prelude::*;
use std::time::{Duration, Instant};

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_divergent_block_barrier_in_a_cluster_kernel_ends_by_name_within_the_timeout_and_teardown_does_not_wait() {
    let gpu = Gpu::open(0).expect("a GPU");
    if !gpu.info.clusters {
        println!("{}: no clusters, nothing to test", gpu.info.name);
        return;
    }
    let started = Instant::now();
    gpu.set_timeout(Duration::from_secs(2));
    let kernel = gpu.cluster_kernel(&host::kernels().mutant_cluster_divergent_block_sync).unwrap();
    let n = 1 << 20;
    let input = DeviceInput::upload(&gpu, &vec![1.0f32; n]).unwrap();
    let blocks = ClusterSums::load(&gpu, 256).unwrap().grid(n, LESSON_CLUSTER).unwrap();
    let mut partials = gpu.zeros::<f32>((blocks / LESSON_CLUSTER.blocks) as usize).unwrap();
    let launch = kernel.configure(blocks, 256, LESSON_CLUSTER).unwrap();
    let err = launch.partials(&input, partials.slice_mut(..)).and_then(|()| Ok(gpu.finish()?)).expect_err("the launch never finishes");
    println!("{err} ({:.1} s)", started.elapsed().as_secs_f64());
    assert!(err.to_string().contains("mutant_cluster_divergent_block_sync did not finish within 2 s"), "{err}");
    let err = gpu.read(&partials).expect_err("a copy would wait behind the stuck kernel");
    assert!(err.to_string().contains("still running mutant_cluster_divergent_block_sync"), "{err}");

    let teardown = Instant::now();
    drop(partials);
    drop(input);
    let _ = launch;
    drop(kernel);
    drop(gpu);
    println!("teardown took {:.3} s", teardown.elapsed().as_secs_f64());
    assert!(teardown.elapsed() < Duration::from_secs(2), "teardown does not wait for the stuck kernel");
    assert!(started.elapsed() < Duration::from_secs(10), "all of it within the timeout and a margin");
}
