//! How a kernel is described to the host: its launch contract, and (host
//! builds only) its definition, [`KernelDef`], which `#[kernel]` emits beside
//! each kernel.

/// Launch contract: the kernel calls `grid.sync()`, so it must be launched
/// cooperatively with a grid that fits on the device at once.
pub struct GridSync;
/// Launch contract: no grid barrier; any launch is safe.
pub struct NoGridSync;

/// Launch contract: the kernel uses `this_cluster()` (`#[kernel(cluster)]`),
/// so it must be launched with a cluster dimension, from the sm_90 module;
/// `C` ([`GridSync`] or [`NoGridSync`]) says whether it also calls `grid.sync()`.
pub struct Cluster<C>(core::marker::PhantomData<C>);

/// What [`Contract`] is limited to: the contracts this crate defines, so that
/// no other crate can declare one that tells the launcher something else.
mod sealed {
    pub trait Sealed {}
    impl Sealed for super::GridSync {}
    impl Sealed for super::NoGridSync {}
    impl<C: Sealed> Sealed for super::Cluster<C> {}
}

/// A launch contract: [`GridSync`], [`NoGridSync`], or either in a [`Cluster`]
/// (sealed: the launcher trusts what it says).
pub trait Contract: sealed::Sealed {
    /// Whether the kernel is declared `#[kernel(cooperative)]`: it may call `grid.sync()`.
    const GRID_SYNC: bool;
    /// Whether the kernel is declared `#[kernel(cluster)]`: it may call `this_cluster()`.
    const CLUSTER: bool = false;
}
impl Contract for GridSync {
    const GRID_SYNC: bool = true;
}
impl Contract for NoGridSync {
    const GRID_SYNC: bool = false;
}
impl<C: Contract> Contract for Cluster<C> {
    const GRID_SYNC: bool = C::GRID_SYNC;
    const CLUSTER: bool = true;
}

#[cfg(not(target_arch = "nvptx64"))]
mod def;
#[cfg(not(target_arch = "nvptx64"))]
pub use def::{DynamicSizing, KernelDef, MAX_PARAMS, Param, Params, TileInfo, no_overread};
#[cfg(not(target_arch = "nvptx64"))]
mod registry;
#[cfg(not(target_arch = "nvptx64"))]
pub use registry::*;
