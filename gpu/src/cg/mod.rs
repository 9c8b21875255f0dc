//! Cooperative groups in Rust, named and shaped like `<cooperative_groups.h>`.
//!
//! | C++ (`namespace cg = cooperative_groups`) | Rust (`gpu::cg`) |
//! |---|---|
//! | `cg::this_thread_block()` | [`this_thread_block()`] |
//! | `cg::tiled_partition<32>(block)` | [`tiled_partition::<32>(&block)`](tiled_partition) |
//! | `cg::coalesced_threads()` | [`coalesced_threads()`] |
//! | `cg::this_grid()` | [`this_grid()`] |
//! | `cg::reduce(tile, v, cg::plus<float>())` | [`reduce(&tile, v, Plus)`](reduce) |
//!
//! What Rust does differently: the tile size is a const generic checked at
//! compile time; operators are zero-sized types; and an invalid grid group is
//! refused at [`GridGroup::sync`] with a trap rather than left undefined.
//!
//! The group types exist only in the PTX build; [`barrier`] and [`lanes`] hold
//! their arithmetic as plain functions that build, and are tested, on the host too.

pub mod barrier;
pub mod lanes;

#[cfg(target_arch = "nvptx64")]
mod block;
#[cfg(target_arch = "nvptx64")]
mod coalesced;
#[cfg(target_arch = "nvptx64")]
mod grid;
#[cfg(target_arch = "nvptx64")]
mod ops;
#[cfg(target_arch = "nvptx64")]
mod tile;

#[cfg(target_arch = "nvptx64")]
pub use block::{Dim3, ThreadBlock, this_thread_block};
#[cfg(target_arch = "nvptx64")]
pub use coalesced::{CoalescedGroup, coalesced_threads};
#[cfg(target_arch = "nvptx64")]
pub use grid::{GridGroup, this_grid};
#[cfg(target_arch = "nvptx64")]
pub use ops::{Greater, Less, Plus, ReduceOp};
#[cfg(target_arch = "nvptx64")]
pub use tile::{ShuffleValue, ThreadBlockTile, reduce, tiled_partition};
