//! A rank past the cluster traps on a GPU, and the launch fails by name. A
//! binary of its own: a trap ends the context for the whole process.

use gpu as _;
use gpu_ptx as _;
use host::clusters::{ClusterPath, ClusterSums, LESSON_CLUSTER};
use host::device::Gpu;
use host::launch::DeviceInput;
use host::reference;

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_rank_past_the_cluster_traps_and_the_launch_fails_by_name() {
    let gpu = Gpu::open(0).expect("a GPU");
    if !gpu.info.clusters {
        return;
    }
    let k = host::kernels();
    let sums = ClusterSums::load_with(&gpu, 256, k.mutant_cluster_wrong_rank, k.reduce_clusters_to_partials).unwrap();
    let xs = reference::fill(100_000).unwrap();
    let input = DeviceInput::upload(&gpu, &xs).unwrap();
    let mut s = sums.scratch(64, 1).unwrap();
    let e = sums.run(ClusterPath::OneLaunch, 64, LESSON_CLUSTER, &input, &mut s, 0).and_then(|()| Ok(gpu.finish()?)).unwrap_err();
    println!("wrong rank on {}: {e}", gpu.info.name);
    let name = e.driver_name().unwrap_or_default();
    assert!(name == "CUDA_ERROR_LAUNCH_FAILED" || name == "CUDA_ERROR_ILLEGAL_INSTRUCTION", "{e}");
    assert!(e.to_string().contains("mutant_cluster_wrong_rank"), "names the kernel: {e}");
}
