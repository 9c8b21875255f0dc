//! A breadth-first search in one cooperative launch, level by level, as a
//! stranger to this project would write it on the kernel language's
//! irregular pieces: relaxed atomic loads to skip visited vertices without
//! a race, a compare-and-swap to claim one, a warp-aggregated atomic to
//! append it to the next frontier, and `grid.sync()` between levels.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel))]
#![deny(unsafe_op_in_unsafe_fn, missing_docs)]

use cg_kernel::cg::{coalesced_threads, this_grid};
use cg_kernel::kernel;
use cg_kernel::mem::{In, Out, Scope};

cg_kernel::ptx!();

/// A vertex not reached yet.
pub const UNREACHED: u32 = u32::MAX;

/// `dist[v]` = the number of edges on a shortest path from `source` to
/// `v` (or [`UNREACHED`]), for the graph whose vertex `v`'s neighbours are
/// `columns[offsets[v]..offsets[v + 1]]` (CSR).
///
/// Level `l`'s frontier is `frontier[(l % 2) * n..][..counts[l]]`. Each
/// thread takes frontier vertices grid-strided; for each neighbour `u` it
/// reads `dist[u]` with a relaxed atomic load and skips it if reached
/// (most edges, in a BFS); else it claims `u` with a compare-and-swap
/// from [`UNREACHED`] to `l + 1`, and the lanes that claimed one append
/// theirs to the next frontier with one atomic per warp
/// (`atomic_add_aggregated` on `counts[l + 1]`). `grid.sync()` ends the
/// level: the next frontier and its count are then visible to every block.
///
/// # Safety
/// `offsets` holds `n + 1` ascending offsets into `columns`, each of whose
/// entries is below `n`; `dist` holds `n` elements, all [`UNREACHED`];
/// `frontier` holds `2n`; `counts` holds `n + 1`, all 0; `source < n`.
#[kernel(cooperative)]
pub unsafe fn bfs(offsets: In<u32>, columns: In<u32>, dist: Out<u32>, frontier: Out<u32>, counts: Out<u32>, source: u32, n: usize) {
    let grid = this_grid();
    let (rank, stride) = (grid.thread_rank(), grid.num_threads());
    // SAFETY (every access): the kernel's contract bounds each index, named
    // at the access; dist and counts are touched only atomically, and a
    // frontier slot is written once, by the lane its claim gave it, and read
    // only after the grid.sync() that ends its level.
    if rank == 0 {
        unsafe {
            dist.atomic_store(source as usize, 0, Scope::Device);
            frontier.write(0, source);
            counts.atomic_store(0, 1, Scope::Device);
        }
    }
    grid.sync();
    let mut level = 0usize;
    loop {
        // Every thread reads the same count after the same barrier: the loop is the grid's.
        let size = unsafe { counts.atomic_load(level, Scope::Device) } as usize;
        if size == 0 || level + 1 > n {
            break;
        }
        let (here, next) = ((level % 2) * n, ((level + 1) % 2) * n);
        let mut i = rank;
        while i < size {
            // i < counts[level] <= n: a slot of this level's frontier.
            let v = unsafe { frontier.read(here + i) } as usize;
            // v < n, so v + 1 <= n: within offsets.
            let (first, end) = unsafe { (offsets.read(v) as usize, offsets.read(v + 1) as usize) };
            for e in first..end {
                // e < offsets[n] = columns' length; u < n.
                let u = unsafe { columns.read(e) } as usize;
                if unsafe { dist.atomic_load(u, Scope::Device) } == UNREACHED && unsafe { dist.atomic_cas(u, UNREACHED, level as u32 + 1) } == UNREACHED {
                    // Each vertex is claimed once, so the next frontier gets at most n.
                    let slot = unsafe { coalesced_threads().atomic_add_aggregated(counts, level + 1, 1) } as usize;
                    unsafe { frontier.write(next + slot, u as u32) };
                }
            }
            i += stride;
        }
        grid.sync();
        level += 1;
    }
}
