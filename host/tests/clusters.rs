//! Thread-block clusters on the emulated H200: the cluster sums pass every
//! check, each mistake the lesson names fails by name, and every launch rule
//! is a named error before launch. (`gpu.rs` runs the same on a GPU.)

use cg_emulator::{Device, Fault, Options};
use cg_launcher::error::Error as L;
use gpu as _;
use gpu_ptx as _;
use host::clusters::{ClusterPath, ClusterSums, LESSON_CLUSTER, probe_cooperative_clusters, shape};
use host::device::Gpu;
use host::error::Error;
use host::launch::prelude::*;
use host::launch::{ClusterShape, DeviceInput};
use host::reference::{self, Reference};

fn h200() -> Gpu {
    Gpu::emulated(Device::H200, Options::default())
}

/// The emulator's fault behind an error, if it is one.
fn fault(e: &Error) -> &Fault {
    match e {
        Error::Launch(L::Emulated { fault, .. }) => fault,
        other => panic!("not an emulator fault: {other}"),
    }
}

fn sum_on(gpu: &Gpu, sums: &ClusterSums, path: ClusterPath, n: usize, blocks: u32, cluster: ClusterShape) -> host::error::Result<host::clusters::ClusterRun> {
    let xs = reference::fill(n).unwrap();
    let r = Reference::new(&xs);
    let input = DeviceInput::upload(gpu, &xs).unwrap();
    let mut s = sums.scratch(blocks, 1).unwrap();
    sums.checked(path, blocks, cluster, &input, &r, &mut s)
}

#[test]
fn the_ceiling_table_is_the_h200s_measured_one_and_clusters_of_4_hold_992_of_1056_blocks() {
    let gpu = h200();
    let sums = ClusterSums::load(&gpu, 256).unwrap();
    assert_eq!(sums.block_limits().unwrap().capacity(), 1056);
    let rows: Vec<(u32, u32, u32)> = sums.ceilings().unwrap().iter().map(|r| (r.cluster, r.clusters, r.blocks)).collect();
    assert_eq!(rows, [(1, 1056, 1056), (2, 528, 1056), (4, 248, 992), (8, 124, 992), (16, 58, 928)]);
    let big = ClusterSums::load(&gpu, 1024).unwrap();
    let rows: Vec<(u32, u32)> = big.ceilings().unwrap().iter().map(|r| (r.cluster, r.clusters)).collect();
    assert_eq!(rows, [(1, 264), (2, 132), (4, 62), (8, 30), (16, 14)]);
}

#[test]
fn both_cluster_sums_pass_every_check_at_sizes_that_leave_blocks_and_clusters_short() {
    let gpu = h200();
    let sums = ClusterSums::load(&gpu, 256).unwrap();
    for (n, cluster) in [(100_003, 4), (1, 2), (65_536 + 17, 8), (40_000, 1), (300_000, 16)] {
        let c = shape(cluster);
        let blocks = sums.grid(n, c).unwrap();
        assert_eq!(blocks % cluster, 0);
        for path in [ClusterPath::OneLaunch, ClusterPath::TwoLaunches] {
            let run = sum_on(&gpu, &sums, path, n, blocks, c).unwrap();
            assert!(run.pass(), "{path:?} n = {n}, clusters of {cluster}: {} / {}", run.total.detail(), run.partials_detail());
        }
    }
}

#[test]
fn deleting_the_first_cluster_sync_is_a_race_on_a_blocks_shared_memory_named_with_both_lines() {
    let gpu = h200();
    let k = host::kernels();
    let sums = ClusterSums::load_with(&gpu, 256, k.mutant_cluster_without_first_sync, k.reduce_clusters_to_partials).unwrap();
    let e = sum_on(&gpu, &sums, ClusterPath::OneLaunch, 100_000, 16, LESSON_CLUSTER).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(fault(&e), Fault::ClusterRace { .. }), "{msg}");
    assert!(msg.contains("block 1's shared memory word") && msg.contains("no cluster.sync() between"), "{msg}");
    assert!(msg.contains("gpu/src/lesson/cluster.rs:"), "names the source lines: {msg}");
}

#[test]
fn a_rank_past_the_cluster_is_named_with_the_thread_and_line() {
    let gpu = h200();
    let k = host::kernels();
    let sums = ClusterSums::load_with(&gpu, 256, k.mutant_cluster_wrong_rank, k.reduce_clusters_to_partials).unwrap();
    let e = sum_on(&gpu, &sums, ClusterPath::OneLaunch, 100_000, 16, LESSON_CLUSTER).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(fault(&e), Fault::ClusterRankOutOfRange { rank: 4, size: 4, .. }), "{msg}");
    assert!(msg.contains("thread 3 of block 0") && msg.contains("cluster.rs:"), "{msg}");
    assert_eq!(e.driver_name().as_deref(), Some("CUDA_ERROR_LAUNCH_FAILED"));
}

#[test]
fn a_block_that_exits_while_rank_0_reads_its_shared_memory_is_named() {
    let gpu = h200();
    let k = host::kernels();
    let sums = ClusterSums::load_with(&gpu, 256, k.reduce_cluster_grid, k.mutant_cluster_exits_early).unwrap();
    let e = sum_on(&gpu, &sums, ClusterPath::TwoLaunches, 100_000, 16, LESSON_CLUSTER).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(fault(&e), Fault::ClusterBlockExited { owner: 1, rank: 1, .. }), "{msg}");
    assert!(msg.contains("exited without a cluster.sync() after it"), "{msg}");
}

#[test]
fn in_the_cooperative_sum_grid_sync_keeps_the_blocks_alive_so_the_second_cluster_sync_is_not_flagged() {
    // The emulator agrees with the hardware: with grid.sync() after it, no
    // block can exit before rank 0's reads, so only the two-launch kernel
    // needs its second cluster.sync() (the test above).
    let gpu = h200();
    let sums = ClusterSums::load(&gpu, 256).unwrap();
    let run = sum_on(&gpu, &sums, ClusterPath::OneLaunch, 50_000, 32, shape(8)).unwrap();
    assert!(run.pass());
}

#[test]
fn sizing_from_the_block_ceiling_is_refused_before_launch_and_by_the_device() {
    let gpu = h200();
    let sums = ClusterSums::load(&gpu, 256).unwrap();
    let xs = reference::fill(10_000).unwrap();
    let input = DeviceInput::upload(&gpu, &xs).unwrap();
    let mut s = sums.scratch(1056, 1).unwrap();
    let e = sums.run(ClusterPath::OneLaunch, 1056, LESSON_CLUSTER, &input, &mut s, 0).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, Error::Launch(L::ClusterGridTooLarge { requested: 1056, cluster: 4, clusters: 248, block_ceiling: 1056, .. })), "{msg}");
    assert!(msg.contains("at most 248 clusters of 4 (992 blocks)"), "{msg}");
    // The device's own answer, with no check in front of it.
    let e = probe_cooperative_clusters(&gpu, 1056, 256, LESSON_CLUSTER).unwrap_err();
    assert_eq!(e.driver_name().as_deref(), Some("CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"), "{e}");
    probe_cooperative_clusters(&gpu, 992, 256, LESSON_CLUSTER).unwrap();
}

#[test]
fn every_launch_rule_is_a_named_error_before_launch() {
    let gpu = h200();
    let sums = ClusterSums::load(&gpu, 256).unwrap();
    let xs = reference::fill(10_000).unwrap();
    let input = DeviceInput::upload(&gpu, &xs).unwrap();
    let mut s = sums.scratch(64, 1).unwrap();
    let mut refused = |blocks, cluster| sums.run(ClusterPath::OneLaunch, blocks, cluster, &input, &mut s, 0).unwrap_err().to_string();
    let sixteen_portable = refused(32, ClusterShape { blocks: 16, non_portable: false });
    assert!(sixteen_portable.contains("a portable cluster has at most 8; ask for a non-portable size"), "{sixteen_portable}");
    assert!(refused(30, shape(4)).contains("30 blocks are not a whole number of clusters of 4"));
    assert!(refused(32, shape(17)).contains("a cluster has at most 16"));
    assert!(refused(0, shape(4)).contains("0 blocks"));
    // The emulator's own refusals behind them, for a launch that got past the host.
    assert!(probe_cooperative_clusters(&gpu, 30, 256, shape(4)).unwrap_err().to_string().contains("CUDA_ERROR_INVALID_CLUSTER_SIZE"));
}

#[test]
fn the_emulated_t4_has_no_clusters_and_says_how_to_emulate_an_h200() {
    let gpu = Gpu::emulated(Device::T4, Options::default());
    assert!(!gpu.info.clusters);
    let line = host::clusters::unavailable(&gpu).unwrap();
    // In the runner's spelling: `cargo run --release -p host -- --emulate
    // --gpu h200` from a test binary, `cargo emulate --gpu h200` from the
    // emulator's build.
    let h200 = format!("`{}`", host::invocation::command("--gpu h200", true));
    assert!(line.contains("compute capability 9.0") && line.contains(&h200) && h200.contains("--gpu h200"), "{line}");
    let e = ClusterSums::load(&gpu, 256).and_then(|s| s.limits(LESSON_CLUSTER)).expect_err("refused");
    assert!(e.to_string().contains("no thread-block clusters"), "{e}");
}

#[test]
fn cluster_sync_loops_on_the_emulator_and_each_cluster_barrier_waits_for_its_cluster() {
    let gpu = h200();
    let k = gpu.cluster_kernel(&host::kernels().cluster_sync_loop).unwrap();
    k.configure(64, 64, shape(8)).unwrap().barriers(20).unwrap();
    // An ordinary cluster launch past what fits runs in waves of whole clusters.
    k.configure(1200, 256, shape(4)).unwrap().barriers(3).unwrap();
}

/// A device whose clusters hold every block the block ceiling allows.
static FULL: cg_emulator::ClusterCeilings =
    cg_emulator::ClusterCeilings { rows: &[(8, [1056, 528, 352, 264, 211, 176, 150, 132, 117, 105, 96, 88, 81, 75, 70, 66])], max_blocks_per_sm: 8, sms: 132 };

#[test]
fn where_clusters_hold_every_block_the_lesson_refuses_one_cluster_too_many_instead_of_the_block_ceiling() {
    let full = Device { clusters: Some(&FULL), ..Device::H200 };
    for (device, too_many, fits, wording) in [(Device::H200, 1056, 992, "the block ceiling (1056)"), (full, 1060, 1056, "one cluster of 4 more")] {
        let gpu = Gpu::emulated(device, Options::default());
        let xs = reference::fill(10_000).unwrap();
        let input = DeviceInput::upload(&gpu, &xs).unwrap();
        let r = Reference::new(&xs);
        let section = host::clusters::section(&gpu, 256, &input, &r, host::timing::Repeats { warmups: 0, runs: 0 }).unwrap();
        assert_eq!(section.probes.iter().map(|p| (p.blocks, p.error.is_some())).collect::<Vec<_>>(), [(too_many, true), (fits, false)]);
        assert!(section.refusal.is_some());
        let report = host::lesson::run(&gpu, host::lesson::LessonConfig { n: 10_000, threads_per_block: 256, runs: 0, warmups: 0 }, &mut |_, _| {}).unwrap();
        let check = report.checks.iter().find(|c| c.name.contains("cooperative launch of") && c.name.contains("is refused")).expect("the refusal's check");
        assert!(check.name.contains(wording) && check.pass(), "{check:?}");
        assert!(report.verdict().is_ok());
    }
}

#[test]
fn an_ordinary_cluster_launch_far_larger_than_the_device_runs_in_waves_of_whole_clusters() {
    let gpu = h200();
    let k = host::kernels();
    let staged = gpu.cluster_kernel(&k.reduce_clusters_to_partials).unwrap();
    let n = 4096 * 256 + 5;
    let xs = reference::fill(n).unwrap();
    let input = DeviceInput::upload(&gpu, &xs).unwrap();
    let mut partials = gpu.zeros::<f32>(1024).unwrap();
    // 4,096 blocks: more than four times what fits at once (992 in clusters of 4).
    staged.configure(4096, 256, LESSON_CLUSTER).unwrap().partials(&input, partials.slice_mut(..)).unwrap();
    let got = gpu.read(&partials).unwrap();
    let r = Reference::new(&xs);
    let per_block = r.per_block(4096, 256);
    for (c, &p) in got.iter().enumerate() {
        let want: f64 = per_block[4 * c..4 * c + 4].iter().map(|b| b.0).sum();
        assert!((p as f64 - want).abs() <= 1e-3 * want.abs().max(1.0), "cluster {c}: {p} vs {want}");
    }
}
