//! How a kernel is described to the host: its launch contract, and (host
//! builds only) its definition, [`KernelDef`], which `#[kernel]` emits beside
//! each kernel.

/// Launch contract: the kernel calls `grid.sync()`, so it must be launched
/// cooperatively with a grid that fits on the device at once.
pub struct GridSync;
/// Launch contract: no grid barrier; any launch is safe.
pub struct NoGridSync;

/// A launch contract: [`GridSync`] or [`NoGridSync`].
pub trait Contract {
    /// Whether the kernel is declared `#[kernel(cooperative)]`: it may call `grid.sync()`.
    const GRID_SYNC: bool;
}
impl Contract for GridSync {
    const GRID_SYNC: bool = true;
}
impl Contract for NoGridSync {
    const GRID_SYNC: bool = false;
}

#[cfg(not(target_arch = "nvptx64"))]
mod def;
#[cfg(not(target_arch = "nvptx64"))]
pub use def::{KernelDef, Param, Params, TileInfo, no_overread};
#[cfg(not(target_arch = "nvptx64"))]
mod registry;
#[cfg(not(target_arch = "nvptx64"))]
pub use registry::*;
