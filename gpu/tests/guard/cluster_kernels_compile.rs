//! The same uses in kernels declared `#[kernel(cluster)]` compile, with and
//! without `cooperative`, so the failures beside this file are about the
//! declaration alone.
use gpu::cg::{self, ClusterGroup, this_cluster, this_grid};
use gpu::kernel;
use gpu::mem::dynamic_shared;

fn takes_the_cluster(cluster: &ClusterGroup) -> u32 {
    cluster.sync();
    cluster.num_blocks()
}

/// # Safety
/// None needed.
#[kernel(cluster)]
pub unsafe fn cluster_only() {
    this_cluster().sync();
    let rank = cg::this_cluster().block_rank();
    let _ = this_cluster().map_shared_rank(dynamic_shared::<f32>(), rank);
    // SAFETY: waited on next.
    let token = unsafe { this_cluster().barrier_arrive() };
    this_cluster().barrier_wait(token);
    gpu::cg::this_cluster().sync();
    ::gpu::cg::this_cluster().sync();
    let _ = takes_the_cluster(&this_cluster());
}

/// # Safety
/// None needed.
#[kernel(cooperative, cluster)]
pub unsafe fn cooperative_cluster() {
    this_cluster().sync();
    this_grid().sync();
    cg::this_grid().sync();
    gpu::cg::this_grid().sync();
    let _ = this_grid().num_clusters();
}

fn main() {
    let _ = (CLUSTER_ONLY, COOPERATIVE_CLUSTER);
}
