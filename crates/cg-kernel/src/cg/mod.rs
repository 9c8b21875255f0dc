//! Cooperative groups in Rust, named and shaped like `<cooperative_groups.h>`.
//!
//! | C++ (`namespace cg = cooperative_groups`) | Rust (`cg_kernel::cg`) |
//! |---|---|
//! | `cg::this_thread_block()` | [`this_thread_block()`] |
//! | `cg::tiled_partition<32>(block)` | [`tiled_partition::<32>(&block)`](tiled_partition) |
//! | `cg::coalesced_threads()` | [`coalesced_threads()`] |
//! | `cg::this_grid()` | [`this_grid()`]: `GridGroup<Ordinary>`, no `sync()`; in the body of a `#[kernel(cooperative)]` kernel the attribute swaps in the grid that has `sync()` |
//! | `cg::this_cluster()` (9.0+) | [`this_cluster()`]: only in the body of a `#[kernel(cluster)]` kernel, which the host launches only with a cluster dimension |
//! | `cluster.map_shared_rank(ptr, rank)` | [`cluster.map_shared_rank(shared, rank)`](ClusterGroup::map_shared_rank), then `.read(i)` / `.write(i, v)` |
//! | `cg::this_multi_grid()` (gone from CUDA 13) | [`this_multi_grid(&grid, barrier, rank, gpus)`](this_multi_grid) |
//! | `cg::reduce(tile, v, cg::plus<float>())` | [`reduce(&tile, v, Plus)`](reduce) (and [`Less`], [`Greater`], [`BitAnd`], [`BitOr`], [`BitXor`]) |
//! | `cg::inclusive_scan(tile, v, op)`, `cg::exclusive_scan(tile, v, op)` | [`inclusive_scan(&tile, v, op)`](inclusive_scan), [`exclusive_scan(&tile, v, op)`](exclusive_scan) |
//! | `tile.match_any(v)`, `tile.match_all(v, pred)` | [`tile.match_any(v)`](ThreadBlockTile::match_any), [`let (mask, pred) = tile.match_all(v)`](ThreadBlockTile::match_all) |
//! | `__popc(mask)`, `__ffs(mask)` | [`popc(mask)`](popc), [`ffs(mask)`](ffs) |
//! | CUB's `BlockReduce(temp).Reduce(v, op)` | [`block_reduce(&block, &tile, v, op, scratch)`](block_reduce) (`unsafe`: a block barrier and shared memory) |
//! | CUB's `BlockScan(temp).InclusiveScan(v, out, op, total)`, `ExclusiveScan` | [`block_inclusive_scan`], [`block_exclusive_scan`]: `(value, total)` |
//! | CUB's `TempStorage` | [`block_scratch_bytes::<T>`](block_scratch_bytes), for `#[kernel(shared_memory = ...)]` |
//!
//! What Rust does differently: the tile size is a const generic checked at
//! compile time; operators are zero-sized types; `grid.sync()` exists only on
//! the grid of a kernel declared `#[kernel(cooperative)]` ([`GridGroup`]), so a
//! grid barrier in a kernel the host may launch the ordinary way does not
//! compile; and an invalid grid group is refused at [`GridGroup::sync`] with a
//! trap rather than left undefined. Both C++ spellings of a group's size are
//! there: `num_threads()` and the older `size()`. Grid-wide numbers are
//! `usize`, block- and tile-wide ones `u32`, as in C++ ([`ThreadBlock`] says why).
//!
//! This layer is the safe surface over the instructions in `arch`. A
//! collective (a barrier, a shuffle, a vote) touches no memory, so calling one
//! is safe; calling it where not every member of the group arrives is a logic
//! error that hangs or pairs up unrelated calls on a GPU (the host's bounded
//! wait reports the hang), and that the emulator names, with the lanes and the
//! call each one waits at.
//!
//! On the GPU these compile to the PTX in `arch`; on the host they run on the
//! emulator (the cg-emulator crate, through its `thread` module). [`barrier`]
//! (the cg-barrier crate, re-exported), [`lanes`] and [`ranks`] hold their
//! arithmetic as plain functions, tested on their own.

/// Names the cooperative-groups call in progress, for the emulator's reports
/// (compiles to nothing on the GPU).
macro_rules! emu_call {
    ($name:expr) => {
        #[cfg(not(target_arch = "nvptx64"))]
        let _call = cg_emulator::thread::Call::enter($name);
    };
}

pub use cg_barrier as barrier;
pub mod lanes;
pub mod ranks;

mod block;
mod block_collectives;
mod cluster;
mod coalesced;
mod grid;
mod grid_collectives;
pub mod multi_grid;
mod ops;
mod scan;
mod tile;

pub use block::{Dim3, MAX_THREADS_PER_BLOCK, ThreadBlock, this_thread_block};

/// A release and acquire fence for every thread of the GPU (`fence.acq_rel.gpu`):
/// this thread's accesses before it are ordered before its writes after
/// it, and its reads before it before its accesses after it. That is what
/// `__threadfence()` is used for between a write and the flag that publishes
/// it, or between reading the flag and reading what it published. It is
/// weaker than `__threadfence()` itself (`fence.sc.gpu`): it does not order a
/// write before a later read, which no kernel here needs. Not modelled by the
/// emulator.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn thread_fence() {
    crate::arch::fence_acq_rel_gpu()
}
/// The number of set bits of `v` (`__popc`): how many lanes a
/// [`ballot`](ThreadBlockTile::ballot) or a [`match_any`](ThreadBlockTile::match_any)
/// names. Not a collective: `u32::count_ones`, one `popc.b32`. For a `u64`
/// (`__popcll`), `count_ones` too.
///
/// ```
/// # use cg_kernel::cg::popc;
/// assert_eq!(popc(0x1111_1111), 8);
/// assert_eq!(popc(0), 0);
/// ```
#[inline(always)]
pub fn popc(v: u32) -> u32 {
    crate::arch::popc(v)
}

/// The position of the lowest set bit of `v`, counting from 1, or 0 if none
/// is (`__ffs`): the lowest rank a [`ballot`](ThreadBlockTile::ballot) or a
/// [`match_any`](ThreadBlockTile::match_any) names is `ffs(mask) - 1`. Not a
/// collective: `trailing_zeros() + 1`, which LLVM compiles to `brev.b32` and
/// `clz.b32`. For a `u64` (`__ffsll`), the same on `u64::trailing_zeros`.
///
/// ```
/// # use cg_kernel::cg::ffs;
/// assert_eq!(ffs(0b1000), 4);
/// assert_eq!(ffs(1 << 31), 32);
/// assert_eq!(ffs(0), 0);
/// ```
#[inline(always)]
pub const fn ffs(v: u32) -> u32 {
    if v == 0 { 0 } else { v.trailing_zeros() + 1 }
}

pub use block_collectives::{block_exclusive_scan, block_inclusive_scan, block_reduce, block_scratch_bytes};
pub use cluster::{ArrivalToken, ClusterGroup, ClusterShared, Clustered, InCluster, Unclustered, cluster_kernel, cooperative_cluster_kernel, this_cluster};
pub use coalesced::{CoalescedGroup, coalesced_threads};
pub use grid::{CanCollect, CanSync, Cooperative, GridGroup, LaunchKind, Ordinary, cooperative_kernel, this_grid};
pub use grid_collectives::{GRID_SHARED_BYTES, GridValue, MAX_GRID_VALUES, Sample, Selected, SelectedItems};
pub use multi_grid::{MultiGridGroup, this_multi_grid};
pub use ops::{BitAnd, BitOr, BitXor, Greater, Less, Plus, ReduceOp, Redux};
pub use scan::{exclusive_scan, inclusive_scan};
pub use tile::{ShuffleValue, ThreadBlockTile, ValidTileSize, reduce, tiled_partition};
#[doc(hidden)]
pub use tile::{TileSize, assert_tile_size};
