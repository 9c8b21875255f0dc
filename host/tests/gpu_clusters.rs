//! Thread-block clusters on a GPU of compute capability 9.0 or later (on an
//! older GPU, each test checks the named refusal instead). Marked `#[ignore]`
//! as the other GPU tests are; `scripts/gpu-check.sh` runs them. The two
//! mistakes that end the context (a rank past the cluster, a block exiting
//! while another reads its shared memory) have binaries of their own:
//! `gpu_cluster_trap.rs` and `gpu_cluster_exit.rs`.

use cg_emulator::{Device, Options};
use gpu as _;
use gpu_ptx as _;
use host::clusters::{ClusterPath, ClusterSums, LESSON_CLUSTER, cluster_sync_cost, probe_cooperative_clusters, shape};
use host::device::Gpu;
use host::launch::{ClusterShape, DeviceInput};
use host::reference::{self, Reference};

fn gpu() -> Gpu {
    Gpu::open(0).expect("a GPU that supports cooperative launch")
}

/// The GPU, if it has clusters; else checks that asking for them is refused by name, and `None`.
fn with_clusters() -> Option<Gpu> {
    let gpu = gpu();
    if gpu.info.clusters {
        return Some(gpu);
    }
    let e = ClusterSums::load(&gpu, 256).err().expect("a cluster kernel is refused below 9.0");
    assert!(e.to_string().contains("need compute capability 9.0"), "{e}");
    None
}

fn checked(
    gpu: &Gpu,
    sums: &ClusterSums,
    path: ClusterPath,
    xs: &[f32],
    blocks: u32,
    cluster: ClusterShape,
) -> host::error::Result<host::clusters::ClusterRun> {
    let r = Reference::new(xs);
    let input = DeviceInput::upload(gpu, xs).unwrap();
    let mut s = sums.scratch(blocks, 1).unwrap();
    sums.checked(path, blocks, cluster, &input, &r, &mut s)
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_driver_counts_the_cluster_ceilings_the_emulated_h200_carries() {
    let Some(gpu) = with_clusters() else { return };
    let emulated = Gpu::emulated(Device::H200, Options::default());
    for threads in [256, 1024] {
        let rows = |g: &Gpu| -> Vec<(u32, u32, u32)> {
            ClusterSums::load(g, threads).unwrap().ceilings().unwrap().iter().map(|r| (r.cluster, r.clusters, r.blocks)).collect()
        };
        let (here, there) = (rows(&gpu), rows(&emulated));
        println!("{} at {threads} threads: {here:?}", gpu.info.name);
        if gpu.info.name.contains("H200") {
            assert_eq!(here, there, "the emulated H200's table is this GPU's");
        }
        assert!(here.iter().all(|&(k, c, b)| c > 0 && b == c * k));
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn both_cluster_sums_pass_every_check_at_several_sizes_and_cluster_sizes() {
    let Some(gpu) = with_clusters() else { return };
    let sums = ClusterSums::load(&gpu, 256).unwrap();
    for (n, k) in [(4_194_915, 4), (1, 2), (100_003, 8), (65_536 + 17, 1), (1 << 24, 16), (3_000_001, 4)] {
        let xs = reference::fill(n).unwrap();
        let blocks = sums.grid(n, shape(k)).unwrap();
        for path in [ClusterPath::OneLaunch, ClusterPath::TwoLaunches] {
            let run = checked(&gpu, &sums, path, &xs, blocks, shape(k)).unwrap();
            println!("{path:?} n = {n}, {blocks} blocks in clusters of {k}: {} / {}", run.total.detail(), run.partials_detail());
            assert!(run.pass());
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn sizing_from_the_block_ceiling_is_refused_before_launch_and_by_the_driver() {
    let Some(gpu) = with_clusters() else { return };
    let sums = ClusterSums::load(&gpu, 256).unwrap();
    let ceiling = sums.block_limits().unwrap().capacity();
    let fits = sums.limits(LESSON_CLUSTER).unwrap().capacity();
    println!("block ceiling {ceiling}, clusters of 4: {fits}");
    assert!(fits < ceiling, "on an H200 clusters of 4 hold fewer blocks than the block ceiling");
    let xs = reference::fill(10_000).unwrap();
    let input = DeviceInput::upload(&gpu, &xs).unwrap();
    let mut s = sums.scratch(ceiling, 1).unwrap();
    let e = sums.run(ClusterPath::OneLaunch, ceiling, LESSON_CLUSTER, &input, &mut s, 0).unwrap_err();
    assert!(e.to_string().contains(&format!("fewer than the {ceiling} blocks the block ceiling allows")), "{e}");
    let driver = probe_cooperative_clusters(&gpu, ceiling, 256, LESSON_CLUSTER).unwrap_err();
    println!("the driver, for {ceiling} blocks in clusters of 4: {driver}");
    assert_eq!(driver.driver_name().as_deref(), Some("CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"));
    probe_cooperative_clusters(&gpu, fits, 256, LESSON_CLUSTER).unwrap();
    // 16 needs the non-portable size; the host refuses it portable, by name.
    let portable = sums.limits(ClusterShape { blocks: 16, non_portable: false }).unwrap_err();
    assert!(portable.to_string().contains("a portable cluster has at most 8"), "{portable}");
    assert!(sums.limits(shape(16)).unwrap().clusters > 0);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn without_the_first_cluster_sync_rank_0_reads_totals_not_yet_written_and_the_partials_check_names_them() {
    let Some(gpu) = with_clusters() else { return };
    let k = host::kernels();
    let sums = ClusterSums::load_with(&gpu, 256, k.mutant_cluster_without_first_sync, k.reduce_clusters_to_partials).unwrap();
    let n = 4_194_915;
    let xs = reference::fill(n).unwrap();
    let blocks = sums.grid(n, LESSON_CLUSTER).unwrap();
    // Each try after a run on NaN, so that a total read before its block wrote it is NaN, not last run's.
    let nan = vec![f32::NAN; n];
    let (mut failed, tries) = (0, 20);
    for _ in 0..tries {
        let _ = checked(&gpu, &sums, ClusterPath::OneLaunch, &nan, blocks, LESSON_CLUSTER);
        let run = checked(&gpu, &sums, ClusterPath::OneLaunch, &xs, blocks, LESSON_CLUSTER).unwrap();
        if !run.pass() {
            failed += 1;
            println!("{}", run.partials_detail());
        }
    }
    println!("without the first cluster.sync(): {failed} of {tries} runs failed their checks");
    assert!(failed > 0, "the race never showed in {tries} runs");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn one_cluster_barrier_costs_a_positive_time() {
    let Some(gpu) = with_clusters() else { return };
    for k in [2, 4, 8] {
        let us = cluster_sync_cost(&gpu, 64 * k, 256, shape(k)).unwrap();
        println!("cluster.sync(), clusters of {k}, {} blocks: {us:.3} µs", 64 * k);
        assert!(us.is_finite() && us > 0.0 && us < 100.0);
    }
}
