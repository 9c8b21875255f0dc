//! The second `cluster.sync()` deleted from the two-launch cluster sum: the
//! blocks other than rank 0 exit while rank 0 may still read their shared
//! memory. The emulator names it (`clusters.rs`); on an H200 (driver
//! 580.159.04, 2026-12-01) the launch fails with `CUDA_ERROR_LAUNCH_FAILED`.
//! A binary of its own: the failure ends the context for the whole process.

use gpu as _;
use gpu_ptx as _;
use host::clusters::{ClusterSums, LESSON_CLUSTER};
use host::device::Gpu;
use host::launch::DeviceInput;
use host::launch::prelude::*;
use host::reference;

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_block_exiting_while_rank_0_reads_its_shared_memory_fails_the_launch_by_name() {
    let gpu = Gpu::open(0).expect("a GPU");
    if !gpu.info.clusters {
        return;
    }
    let staged = gpu.cluster_kernel(&host::kernels().mutant_cluster_exits_early).unwrap();
    let n = 4_194_915;
    let xs = reference::fill(n).unwrap();
    let input = DeviceInput::upload(&gpu, &xs).unwrap();
    let blocks = ClusterSums::load(&gpu, 256).unwrap().grid(n, LESSON_CLUSTER).unwrap();
    let mut partials = gpu.zeros::<f32>((blocks / LESSON_CLUSTER.blocks) as usize).unwrap();
    // The stage alone, waited for: its failure is reported against it, not
    // against whatever launch comes next.
    let outcome = staged.configure(blocks, 256, LESSON_CLUSTER).unwrap().partials(&input, partials.slice_mut(..)).and_then(|()| Ok(gpu.finish()?));
    match &outcome {
        Ok(()) => println!("on {}: ran to completion", gpu.info.name),
        Err(e) => println!("on {}: {e}", gpu.info.name),
    }
    let e = outcome.expect_err("the launch fails, rather than reading a block that has exited");
    assert_eq!(e.driver_name().as_deref(), Some("CUDA_ERROR_LAUNCH_FAILED"), "{e}");
    assert!(e.to_string().contains("mutant_cluster_exits_early"), "names the kernel: {e}");
}
