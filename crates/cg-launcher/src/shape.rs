//! The shape of a launch, apart from the launching: the driver's calls, the
//! devices and the kernels' launches all read it, and none of them owns it.
//! Public as [`crate::launch::Shape`].

pub use cg_emulator::ClusterShape;

/// The launch shape, as `cudaLaunchConfig_t` holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Blocks in the grid.
    pub blocks: u32,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Dynamic shared memory per block, in bytes.
    pub shared_bytes: u32,
    /// Blocks per cluster (`CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`), for a
    /// cluster launch.
    pub cluster: Option<ClusterShape>,
}

impl Shape {
    /// A launch of `blocks` blocks of `threads_per_block`, with `shared_bytes` of dynamic shared memory, no clusters.
    pub fn new(blocks: u32, threads_per_block: u32, shared_bytes: u32) -> Shape {
        Shape { blocks, threads_per_block, shared_bytes, cluster: None }
    }
}
