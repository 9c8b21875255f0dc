//! A breadth-first search two ways, on the same graph:
//! - [`bfs`]: one cooperative launch for the whole search, each level's
//!   frontier compacted inside the kernel by the grid's own
//!   `select_items` (a stable stream compaction whose count reaches every
//!   thread), a `grid.sync()` between levels;
//! - [`bfs_level`]: one ordinary launch per level, which only flags the
//!   vertices it reaches; the host then compacts the flags into the next
//!   frontier with cg-algorithms' `select_flagged` (CUB's
//!   `DeviceSelect::Flagged`) and reads the count back to decide whether to
//!   go on, as a launch-per-level BFS on CUB does.
//!
//! Both claim a vertex with a compare-and-swap on its distance, after a
//! relaxed atomic load that skips the vertices already reached (most
//! edges, in a BFS).
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel))]
#![deny(unsafe_op_in_unsafe_fn, missing_docs)]

use cg_kernel::cg::this_grid;
use cg_kernel::kernel;
use cg_kernel::mem::{In, Out, Scope};

cg_kernel::ptx!();

/// A vertex not reached yet.
pub const UNREACHED: u32 = u32::MAX;

/// Neighbours each thread looks at per call of `select_items`: a vertex's
/// edges are taken this many at a time.
pub const EDGES_PER_SELECT: usize = 8;

/// `dist[v]` = the number of edges on a shortest path from `source` to
/// `v` (or [`UNREACHED`]), for the graph whose vertex `v`'s neighbours are
/// `columns[offsets[v]..offsets[v + 1]]` (CSR), in one launch.
///
/// Level `l`'s frontier is `frontier[(l % 2) * n..][..size]`, and every
/// thread knows `size`. In rounds of one frontier vertex per thread, each
/// thread takes its vertex's edges [`EDGES_PER_SELECT`] at a time: for each
/// neighbour `u` it reads `dist[u]` with a relaxed atomic load and, if `u`
/// is unreached, claims it with a compare-and-swap from [`UNREACHED`] to
/// `l + 1`; then `grid.select_items` packs the claimed neighbours of the
/// whole grid, in order, after those of the rounds before, and tells every
/// thread how many there are. `grid.sync()` ends the level: the next
/// frontier is then visible to every block.
///
/// # Safety
/// `offsets` holds `n + 1` ascending offsets into `columns`, none more
/// than `max_degree` apart, each of whose entries is below `n`; `dist`
/// holds `n` elements, all [`UNREACHED`]; `frontier` holds `2n`; `source < n`.
#[kernel(cooperative)]
pub unsafe fn bfs(offsets: In<u32>, columns: In<u32>, dist: Out<u32>, frontier: Out<u32>, source: u32, max_degree: u32, n: usize) {
    let grid = this_grid();
    let (rank, threads) = (grid.thread_rank(), grid.num_threads());
    // SAFETY (every access): the kernel's contract bounds each index, named
    // at the access; dist is touched only atomically, and a frontier slot
    // is written once, at the place select_items gave it, and read only
    // after the grid.sync() that ends its level.
    if rank == 0 {
        unsafe {
            dist.atomic_store(source as usize, 0, Scope::Device);
            frontier.write(0, source);
        }
    }
    grid.sync();
    let chunks = (max_degree as usize).div_ceil(EDGES_PER_SELECT);
    let (mut size, mut level) = (1usize, 0usize);
    // Every thread has the same `size` (select's count): the loops are the grid's.
    while size > 0 && level < n {
        let (here, next) = ((level % 2) * n, ((level + 1) % 2) * n);
        let mut produced = 0usize;
        let mut start = 0usize;
        while start < size {
            let i = start + rank;
            // i < size <= n: a slot of this level's frontier; v < n, so v + 1 <= n.
            let (first, end) = if i < size {
                let v = unsafe { frontier.read(here + i) } as usize;
                unsafe { (offsets.read(v) as usize, offsets.read(v + 1) as usize) }
            } else {
                (0, 0)
            };
            for chunk in 0..chunks {
                let mut claimed = [UNREACHED; EDGES_PER_SELECT];
                for (j, c) in claimed.iter_mut().enumerate() {
                    let e = first + chunk * EDGES_PER_SELECT + j;
                    if e < end {
                        // e < offsets[n] = columns' length; u < n.
                        let u = unsafe { columns.read(e) };
                        if unsafe { dist.atomic_load(u as usize, Scope::Device) } == UNREACHED
                            && unsafe { dist.atomic_cas(u as usize, UNREACHED, level as u32 + 1) } == UNREACHED
                        {
                            *c = u;
                        }
                    }
                }
                let s = grid.select_items(claimed.map(|u| u != UNREACHED));
                for (j, at) in s.index.into_iter().enumerate() {
                    if let Some(at) = at {
                        // Each vertex is claimed once: the next frontier holds at most n.
                        unsafe { frontier.write(next + produced + at, claimed[j]) };
                    }
                }
                produced += s.count;
            }
            start += threads;
        }
        grid.sync();
        size = produced;
        level += 1;
    }
}

/// One level of a launch-per-level BFS: each thread takes frontier
/// vertices `frontier[..size]` grid-strided, claims each unreached
/// neighbour `u` as [`bfs`] does (distance `level + 1`), and sets
/// `flags[u]` to 1. The host compacts the flags into the next frontier.
///
/// # Safety
/// As [`bfs`]'s `offsets`, `columns` and `dist`; `frontier` holds `size`
/// vertices, each below `n`; `flags` holds `n` bytes.
#[kernel]
pub unsafe fn bfs_level(offsets: In<u32>, columns: In<u32>, dist: Out<u32>, frontier: In<u32>, flags: Out<u8>, size: u32, level: u32) {
    let grid = this_grid();
    let (mut i, stride) = (grid.thread_rank(), grid.num_threads());
    // SAFETY (every access): as in `bfs`; a flag is written by the thread
    // that claimed its vertex, once.
    while i < size as usize {
        let v = unsafe { frontier.read(i) } as usize;
        let (first, end) = unsafe { (offsets.read(v) as usize, offsets.read(v + 1) as usize) };
        for e in first..end {
            let u = unsafe { columns.read(e) } as usize;
            if unsafe { dist.atomic_load(u, Scope::Device) } == UNREACHED && unsafe { dist.atomic_cas(u, UNREACHED, level + 1) } == UNREACHED {
                unsafe { flags.write(u, 1) };
            }
        }
        i += stride;
    }
}
