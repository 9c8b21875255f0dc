//! Kernels declared `#[kernel(cluster)]`: their only launch has a cluster
//! dimension, checked before it is made (compute capability 9.0+, a cluster
//! size the device takes, a grid of whole clusters, and for a kernel that also
//! calls `grid.sync()`, no more clusters than are resident at once).
//!
//! A cluster kernel is neither an ordinary nor a cooperative kernel: neither
//! loader takes it, and each names `gpu.cluster_kernel(...)`.
//! ```compile_fail,E0277
//! # use cg_kernel::{kernel, mem::Out};
//! # /// # Safety
//! # /// `out` holds one element per cluster.
//! # #[kernel(cluster)]
//! # pub unsafe fn in_clusters(out: Out<u32>) {}
//! # fn f(gpu: &cg_launcher::device::Gpu) -> cg_launcher::error::Result<()> {
//! let kernel = gpu.cooperative_kernel(&IN_CLUSTERS)?;
//! # Ok(()) }
//! ```
//! The way that compiles: size from the cluster ceiling, then launch.
//! ```no_run
//! # use cg_kernel::{kernel, mem::Out};
//! # /// # Safety
//! # /// `out` holds one element per cluster.
//! # #[kernel(cluster)]
//! # pub unsafe fn in_clusters(out: Out<u32>) {}
//! # fn f(gpu: &cg_launcher::device::Gpu) -> cg_launcher::error::Result<()> {
//! use cg_launcher::launch::ClusterShape;
//! let kernel = gpu.cluster_kernel(&IN_CLUSTERS)?;
//! let clusters_of_4 = ClusterShape { blocks: 4, non_portable: false };
//! let limits = kernel.cluster_limits(256, clusters_of_4)?;
//! let launch = kernel.configure(limits.capacity(), 256, clusters_of_4)?;
//! let mut out = gpu.zeros::<u32>(launch.clusters() as usize)?;
//! launch.ensure("out", launch.clusters() as usize, out.len())?;
//! // SAFETY: `out` holds one element per cluster (checked above).
//! unsafe { launch.launch((out.slice_mut(..),))? };
//! # Ok(()) }
//! ```

use super::{Args, Loaded, Shape};
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::sizing::Limits;
use cg_emulator::{ClusterShape, MAX_CLUSTER, MAX_PORTABLE_CLUSTER};
use cg_kernel::kernels::{Cluster, Contract, KernelDef, NoGridSync, Params};
use serde::Serialize;
use std::cell::Cell;

/// A kernel that uses `this_cluster()`; `G` says whether it also calls `grid.sync()`.
pub struct ClusterKernel<'g, P: Params, G> {
    loaded: Loaded<'g, P, Cluster<G>>,
    /// The last [`ClusterKernel::cluster_limits`] answer and what it was
    /// asked, so a launch in a timed loop asks the driver nothing (as
    /// `Loaded::limits` does for the block ceiling).
    last_limits: Cell<Option<(u32, ClusterShape, ClusterLimits)>>,
}

/// How many clusters of one size a kernel may have resident at once, beside its block ceiling.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ClusterLimits {
    /// Blocks per cluster.
    pub cluster: u32,
    /// `cuOccupancyMaxActiveClusters` with the cluster dimension set.
    pub clusters: u32,
    /// The kernel's block ceiling (occupancy x SMs), which ignores clusters.
    pub blocks: Limits,
}

impl ClusterLimits {
    /// Blocks in the most clusters that fit at once: the cooperative ceiling of a cluster launch.
    pub fn capacity(&self) -> u32 {
        self.clusters * self.cluster
    }
}

/// A checked cluster launch of one kernel.
pub struct ClusterLaunch<'k, 'g, P: Params, G> {
    kernel: &'k ClusterKernel<'g, P, G>,
    shape: Shape,
}

impl Gpu {
    /// Loads a kernel declared `#[kernel(cluster)]` (from the sm_90 module:
    /// refused, by name, below compute capability 9.0).
    pub fn cluster_kernel<P: Params, G: Contract>(&self, def: &KernelDef<P, Cluster<G>>) -> Result<ClusterKernel<'_, P, G>> {
        Ok(ClusterKernel { loaded: Loaded::load(self, def, G::GRID_SYNC, None)?, last_limits: Cell::new(None) })
    }

    /// Loads a cluster kernel from another module (nvcc's build of the C++
    /// twin); `def` states its contract (see `KernelDef::renamed`).
    pub fn cluster_kernel_in<'g, P: Params, G: Contract>(
        &'g self,
        module: &'g crate::device::Module,
        def: &KernelDef<P, Cluster<G>>,
    ) -> Result<ClusterKernel<'g, P, G>> {
        Ok(ClusterKernel { loaded: Loaded::load(self, def, G::GRID_SYNC, Some(module))?, last_limits: Cell::new(None) })
    }
}

impl<'g, P: Params, G: Contract> ClusterKernel<'g, P, G> {
    /// The kernel's definition.
    pub fn def(&self) -> &KernelDef<P, Cluster<G>> {
        &self.loaded.def
    }

    /// Its block ceiling for blocks of `threads_per_block` (no clusters).
    pub fn limits(&self, threads_per_block: u32) -> Result<Limits> {
        self.loaded.limits(threads_per_block)
    }

    /// Clusters of `cluster` that fit at once, blocks of `threads_per_block`.
    pub fn cluster_limits(&self, threads_per_block: u32, cluster: ClusterShape) -> Result<ClusterLimits> {
        if let Some((t, c, limits)) = self.last_limits.get()
            && (t, c) == (threads_per_block, cluster)
        {
            return Ok(limits);
        }
        let blocks = self.limits(threads_per_block)?;
        self.check_size(cluster)?;
        let mut shape = self.loaded.shape(cluster.blocks, threads_per_block)?;
        shape.cluster = Some(cluster);
        let clusters = self.loaded.function.max_active_clusters(shape)?;
        if clusters == 0 {
            let why = format!("not one cluster of {} blocks of {threads_per_block} threads fits on this device", cluster.blocks);
            return Err(Error::BadCluster { kernel: self.loaded.def.name(), why });
        }
        let limits = ClusterLimits { cluster: cluster.blocks, clusters, blocks };
        self.last_limits.set(Some((threads_per_block, cluster, limits)));
        Ok(limits)
    }

    fn check_size(&self, cluster: ClusterShape) -> Result<()> {
        let most = if cluster.non_portable { MAX_CLUSTER } else { MAX_PORTABLE_CLUSTER };
        if cluster.blocks == 0 || cluster.blocks > most {
            let why = match cluster.blocks {
                0 => "a cluster of 0 blocks".to_string(),
                b if b <= MAX_CLUSTER => {
                    format!(
                        "clusters of {b} blocks: a portable cluster has at most {MAX_PORTABLE_CLUSTER}; ask for a non-portable size to have up to {MAX_CLUSTER}"
                    )
                }
                b => format!("clusters of {b} blocks: a cluster has at most {MAX_CLUSTER} (non-portable; {MAX_PORTABLE_CLUSTER} portable)"),
            };
            return Err(Error::BadCluster { kernel: self.loaded.def.name(), why });
        }
        Ok(())
    }

    /// A launch of `blocks` blocks of `threads_per_block` in clusters of
    /// `cluster`: refused unless the grid is whole clusters and, for a kernel
    /// that calls `grid.sync()`, every cluster can be resident at once.
    pub fn configure(&self, blocks: u32, threads_per_block: u32, cluster: ClusterShape) -> Result<ClusterLaunch<'_, 'g, P, G>> {
        let name = self.loaded.def.name();
        let limits = self.cluster_limits(threads_per_block, cluster)?;
        if blocks == 0 {
            return Err(Error::EmptyGrid { kernel: name });
        }
        if !blocks.is_multiple_of(cluster.blocks) {
            let why = format!("{blocks} blocks are not a whole number of clusters of {}", cluster.blocks);
            return Err(Error::BadCluster { kernel: name, why });
        }
        if G::GRID_SYNC && blocks > limits.capacity() {
            return Err(Error::ClusterGridTooLarge {
                kernel: name,
                requested: blocks,
                cluster: cluster.blocks,
                clusters: limits.clusters,
                block_ceiling: limits.blocks.capacity(),
            });
        }
        let mut shape = self.loaded.shape(blocks, threads_per_block)?;
        shape.cluster = Some(cluster);
        Ok(ClusterLaunch { kernel: self, shape })
    }
}

impl<P: Params, G: Contract> ClusterLaunch<'_, '_, P, G> {
    /// Blocks in the grid.
    pub fn blocks(&self) -> u32 {
        self.shape.blocks
    }

    /// Clusters in the grid.
    pub fn clusters(&self) -> u32 {
        self.shape.blocks / self.shape.cluster.map_or(1, |c| c.blocks)
    }

    /// Threads per block.
    pub fn threads_per_block(&self) -> u32 {
        self.shape.threads_per_block
    }

    /// Launches it with `args`: with its cluster dimension, and
    /// cooperatively exactly when the kernel calls `grid.sync()`.
    ///
    /// # Safety
    /// `args` satisfy the kernel's own safety contract for this launch's
    /// shape (see [`Kernel::launch`](super::Kernel::launch)).
    pub unsafe fn launch<A: Args<P>>(&self, args: A) -> Result<()> {
        // SAFETY: the caller's contract; cooperative exactly when the kernel calls grid.sync().
        unsafe { self.kernel.loaded.launch(self.shape, G::GRID_SYNC, args.values().as_ref()) }
    }

    /// Fails with [`Error::BufferTooShort`] unless `got >= needed`, naming this kernel.
    pub fn ensure(&self, buffer: &'static str, needed: usize, got: usize) -> Result<()> {
        super::ensure_len(self.kernel.loaded.def.name(), buffer, needed, got)
    }
}

impl<P: Params> ClusterKernel<'_, P, NoGridSync> {
    /// A cooperative launch of `blocks` blocks in clusters of `cluster`,
    /// with no check of the grid against the cluster ceiling: what the
    /// device itself says of the grid. The kernel has no grid barrier, so a
    /// grid that is launched completes.
    ///
    /// # Safety
    /// As [`ClusterLaunch::launch`].
    pub unsafe fn launch_cooperatively<A: Args<P>>(&self, blocks: u32, threads_per_block: u32, cluster: ClusterShape, args: A) -> Result<()> {
        self.check_size(cluster)?;
        let mut shape = self.loaded.shape(blocks, threads_per_block)?;
        shape.cluster = Some(cluster);
        // SAFETY: the caller's contract.
        unsafe { self.loaded.launch(shape, true, args.values().as_ref()) }
    }
}
