//! Clusters on the emulated H200, kernel by kernel: what distributed shared
//! memory shows and when, and each way of misusing the cluster barrier,
//! named rather than hung.

use gpu::cg::{this_cluster, this_grid, this_thread_block};
use gpu::emu::{Arg, ClusterShape, Device, Fault, Options};
use gpu::kernel;
use gpu::kernels::{Contract, KernelDef, Params};
use gpu::mem::{Out, dynamic_shared};

mod common;
use common::{Shape, launch_shaped, output};

const fn one_word(_threads_per_block: u32, _tile: u32) -> u32 {
    4
}

fn launch<P: Params, C: Contract>(def: &KernelDef<P, C>, grid: u32, cluster: Option<u32>, args: &[Arg]) -> Result<(), Fault> {
    let shape = Shape { grid, threads: 32, cooperative: def.grid_sync(), cluster: cluster.map(|blocks| ClusterShape { blocks, non_portable: false }) };
    launch_shaped(&Device::H200, def, shape, args, Options { timeout: std::time::Duration::from_secs(20), ..Options::default() }).map(|_| ())
}

/// Each block writes its rank + 1 into the next block's shared word, then
/// after `cluster.sync()` reads its own: what the previous block wrote.
///
/// # Safety
/// `out` holds one `u32` per block.
#[kernel(cluster, shared_memory = one_word)]
pub unsafe fn pass_to_the_next<const TILE: u32 = 32>(out: Out<u32>) {
    let cluster = this_cluster();
    let block = this_thread_block();
    let (rank, size) = (cluster.block_rank(), cluster.num_blocks());
    if block.thread_rank() == 0 {
        // SAFETY: one word each; only the previous block writes this block's word, before the barrier.
        unsafe { cluster.map_shared_rank(dynamic_shared::<u32>(), (rank + 1) % size).write(0, rank + 1) };
    }
    cluster.sync();
    if block.thread_rank() == 0 {
        // SAFETY: written before the barrier above; one slot per block.
        unsafe { out.write(this_grid().block_rank(), dynamic_shared::<u32>().read(0)) };
    }
    // No block exits while another may still write its memory: none does after the barrier.
    cluster.sync();
}

/// Every block writes rank 0's shared word: a race between blocks.
///
/// # Safety
/// None beyond a cluster launch.
#[kernel(cluster, shared_memory = one_word)]
pub unsafe fn everyone_writes_rank_0<const TILE: u32 = 32>() {
    let cluster = this_cluster();
    if this_thread_block().thread_rank() == 0 {
        // SAFETY: in bounds; the race is the mistake.
        unsafe { cluster.map_shared_rank(dynamic_shared::<u32>(), 0).write(0, cluster.block_rank()) };
    }
    cluster.sync();
}

/// The second `cluster.sync()` moved inside rank 0's branch, where the
/// other blocks never reach it: they wait at `grid.sync()` instead.
///
/// # Safety
/// None beyond a cooperative cluster launch.
#[kernel(cooperative, cluster)]
pub unsafe fn cluster_sync_only_in_rank_0() {
    let cluster = this_cluster();
    cluster.sync();
    if cluster.block_rank() == 0 {
        cluster.sync(); // only rank 0 reaches this one
    }
    this_grid().sync();
}

/// The first `cluster.sync()` moved inside rank 0's branch: the other ranks
/// meet it at the second, the barrier completes, and rank 0 then waits at
/// the second alone while the others wait at `grid.sync()`.
///
/// # Safety
/// None beyond a cooperative cluster launch.
#[kernel(cooperative, cluster)]
pub unsafe fn first_cluster_sync_only_in_rank_0() {
    let cluster = this_cluster();
    if cluster.block_rank() == 0 {
        cluster.sync(); // moved into the branch
    }
    cluster.sync();
    this_grid().sync();
}

/// The line of this file that holds `marker`, 1-based.
fn line_of(marker: &str) -> usize {
    include_str!("emulator_clusters.rs").lines().position(|l| l.contains(marker) && !l.contains("line_of")).expect("the marker is in this file") + 1
}

/// `barrier_wait()` with no `barrier_arrive()` before it, reached by leaving
/// the token from one arrival unused.
///
/// # Safety
/// None beyond a cluster launch.
#[kernel(cluster)]
pub unsafe fn arrives_twice() {
    let cluster = this_cluster();
    // SAFETY: none: the second arrival breaks `barrier_arrive`'s contract on
    // purpose, and the emulator names it.
    let first = unsafe { cluster.barrier_arrive() };
    let _second = unsafe { cluster.barrier_arrive() };
    cluster.barrier_wait(first);
}

#[test]
fn a_write_to_another_blocks_shared_memory_is_seen_by_that_block_after_the_cluster_barrier() {
    for cluster in [1, 2, 4, 8] {
        let mut out = vec![0u32; 16];
        launch(&PASS_TO_THE_NEXT, 16, Some(cluster), &[output("out", &mut out, 0)]).unwrap();
        let want: Vec<u32> = (0..16).map(|b| (b % cluster + cluster - 1) % cluster + 1).collect();
        assert_eq!(out, want, "clusters of {cluster}");
    }
}

#[test]
fn two_blocks_writing_one_blocks_word_is_a_race_named_with_both() {
    let e = launch(&EVERYONE_WRITES_RANK_0, 8, Some(4), &[]).unwrap_err();
    assert!(matches!(e, Fault::ClusterRace { .. }), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("block 0's shared memory word 0") && msg.contains("wrote it at") && msg.contains("no cluster.sync() between"), "{msg}");
}

#[test]
fn a_cluster_barrier_some_blocks_never_reach_is_a_named_deadlock_not_a_hang() {
    let e = launch(&CLUSTER_SYNC_ONLY_IN_RANK_0, 8, Some(4), &[]).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, Fault::Deadlock(_)), "{msg}");
    assert!(msg.contains("blocks 0, 4 wait at cluster.sync()") && msg.contains("wait at grid.sync()"), "{msg}");
    // The place is the one only rank 0 reached: the cluster.sync() in its branch.
    let moved = format!("blocks 0, 4 reached cluster.sync() at gpu/tests/emulator_clusters.rs:{}:", line_of("// only rank 0 reaches this one"));
    assert!(msg.contains(&moved) && msg.contains("blocks 1-3, 5-7 never did"), "{msg}");
}

#[test]
fn a_cluster_sync_moved_into_a_branch_is_named_at_its_line_and_long_block_lists_are_folded() {
    // 16 clusters of 4: rank 0 of each is 16 blocks, listed one by one before.
    let e = launch(&FIRST_CLUSTER_SYNC_ONLY_IN_RANK_0, 64, Some(4), &[]).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, Fault::Deadlock(_)), "{msg}");
    let moved = line_of("// moved into the branch");
    assert!(
        msg.contains(&format!(
            "16 blocks (rank 0 of every cluster of 4: 0, 4, ..., 60) reached cluster.sync() at gpu/tests/emulator_clusters.rs:{moved}:17 and 48 blocks (ranks 1-3 of every cluster of 4: 1-3, 5-7, ..., 61-63) never did, so that cluster.sync() is in a branch that some blocks of the cluster skip"
        )),
        "names the moved line: {msg}"
    );
    assert!(
        msg.starts_with("deadlock: in first_cluster_sync_only_in_rank_0, 16 blocks (rank 0 of every cluster of 4: 0, 4, ..., 60) wait at cluster.sync() at"),
        "folds the list: {msg}"
    );
    assert!(!msg.contains("8, 12"), "no block list in full: {msg}");
}

#[test]
fn arriving_twice_before_waiting_is_named() {
    let e = launch(&ARRIVES_TWICE, 4, Some(2), &[]).unwrap_err();
    assert!(e.to_string().contains("barrier_arrive() a second time before barrier_wait()"), "{e}");
}

#[test]
fn a_cluster_kernel_without_a_cluster_dimension_or_on_a_device_without_clusters_is_refused() {
    let e = launch(&EVERYONE_WRITES_RANK_0, 8, None, &[]).unwrap_err();
    assert!(e.to_string().contains("launched without a cluster dimension"), "{e}");
    let e = launch(&EVERYONE_WRITES_RANK_0, 8, Some(3), &[]).unwrap_err();
    assert_eq!(e.driver_name(), Some("CUDA_ERROR_INVALID_CLUSTER_SIZE"), "{e}");
}
