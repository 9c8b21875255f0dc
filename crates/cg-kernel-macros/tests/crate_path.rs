//! `#[kernel(crate = path)]`: this test crate depends on cg-kernel as
//! `renamed` (`renamed = { package = "cg-kernel", ... }` in the
//! dev-dependencies), so `::cg_kernel` names nothing here, and each kernel
//! below compiles only if every path the attribute emits, the linker's
//! registry entry included, goes through the path it was given: the crate's
//! own name, the string form, and a library's re-export of it.

use cg_emulator::{Arg, Device, Launch, Options};
use renamed::cg::{Plus, reduce, this_thread_block, tiled_partition};
use renamed::kernel;
use renamed::kernels::{Cluster, GridSync, KernelDef, NoGridSync, Params};
use renamed::mem::{In, Out};

/// Every thread's rank into `ranks`, a grid barrier, then thread 0 adds
/// them all up into `total[0]`. `renamed::cg::this_grid()` is the grid that
/// may `sync()` only if the attribute knows `renamed` spells cg-kernel.
///
/// # Safety
/// `ranks` holds one slot per thread of the grid, `total` one.
#[kernel(cooperative, crate = renamed)]
pub unsafe fn ranks_then_total(ranks: Out<u32>, total: Out<u32>) {
    let grid = renamed::cg::this_grid();
    let me = grid.thread_rank();
    // SAFETY: one slot per thread of the grid.
    unsafe { ranks.write(me, me as u32) };
    grid.sync();
    if me == 0 {
        let mut sum = 0;
        for i in 0..grid.num_threads() {
            // SAFETY: i < the grid's threads, each written before grid.sync().
            sum += unsafe { ranks.read(i) };
        }
        // SAFETY: total holds one slot.
        unsafe { total.write(0, sum) };
    }
}

const fn one_u32_per_tile(threads_per_block: u32, tile: u32) -> u32 {
    threads_per_block.div_ceil(tile) * 4
}

/// Each tile's sum of `x`, one per tile: the string form, and the options
/// that name more of the crate (a tile, shared memory, launch bounds).
///
/// # Safety
/// `x` holds `n` numbers; `sums` one per tile of the grid.
#[kernel(shared_memory = one_u32_per_tile, launch_bounds(256), crate = "::renamed")]
pub unsafe fn tile_sums<const TILE: u32 = 16>(x: In<u32>, sums: Out<u32>, n: usize) {
    let grid = renamed::cg::this_grid();
    let tile = tiled_partition::<TILE>(&this_thread_block());
    let i = grid.thread_rank();
    // SAFETY: i < n.
    let v = if i < n { unsafe { x.read(i) } } else { 0 };
    let total = reduce(&tile, v, Plus);
    if tile.thread_rank() == 0 {
        // SAFETY: one slot per tile of the grid.
        unsafe { sums.write(i / TILE as usize, total) };
    }
}

/// A cluster kernel: `renamed::cg::this_cluster()` has methods only if the
/// attribute recognizes the spelling.
///
/// # Safety
/// `out` holds one slot per block.
#[kernel(cluster, crate = renamed)]
pub unsafe fn cluster_ranks(out: Out<u32>) {
    let cluster = renamed::cg::this_cluster();
    cluster.sync();
    if this_thread_block().thread_rank() == 0 {
        // SAFETY: one slot per block.
        unsafe { out.write(renamed::cg::this_grid().block_rank(), cluster.block_rank()) };
    }
}

/// A library that re-exports cg-kernel for its users' kernels: they name it
/// by the library's path.
mod my_lib {
    pub use renamed as cg_kernel;
}

/// A cooperative kernel that names cg-kernel through a re-export, and calls
/// `this_grid()` by that path.
///
/// # Safety
/// `out` holds one slot per block.
#[kernel(cooperative, crate = crate::my_lib::cg_kernel)]
pub unsafe fn through_a_reexport(out: Out<u32>) {
    let grid = crate::my_lib::cg_kernel::cg::this_grid();
    grid.sync();
    if grid.thread_rank() == 0 {
        // SAFETY: one slot per block.
        unsafe { out.write(0, grid.num_blocks() as u32) };
    }
}

#[test]
fn kernels_that_name_cg_kernel_by_another_path_define_and_register_themselves() {
    let _: KernelDef<(Out<u32>, Out<u32>), GridSync> = RANKS_THEN_TOTAL;
    let _: KernelDef<(In<u32>, Out<u32>, usize), NoGridSync> = TILE_SUMS;
    let _: KernelDef<(Out<u32>,), Cluster<NoGridSync>> = CLUSTER_RANKS;
    assert_eq!(RANKS_THEN_TOTAL.name(), "ranks_then_total");
    assert!(RANKS_THEN_TOTAL.grid_sync());
    assert_eq!(TILE_SUMS.param_names(), ["x", "sums", "n"]);
    assert_eq!(TILE_SUMS.tile(), Some(16));
    assert_eq!(TILE_SUMS.shared_bytes(256), 64, "16 tiles of 16, 4 bytes each");
    assert_eq!(TILE_SUMS.launch_bounds(), Some((256, 0)));
    assert!(CLUSTER_RANKS.cluster());
    assert!(THROUGH_A_REEXPORT.grid_sync());
    // The linker's registry: the entries went through `renamed`'s linkme.
    let found = renamed::kernels::kernel::<(Out<u32>, Out<u32>), GridSync>("ranks_then_total").unwrap();
    assert_eq!(found.name(), "ranks_then_total");
    let names: Vec<&str> = renamed::kernels::registered().iter().map(|r| r.name()).collect();
    for name in ["ranks_then_total", "tile_sums", "cluster_ranks", "through_a_reexport"] {
        assert!(names.contains(&name), "{name} is not in the registry: {names:?}");
    }
}

#[test]
fn a_cooperative_kernel_that_names_cg_kernel_by_another_path_runs_its_grid_barrier() {
    const DEV: Device = Device {
        sms: 2,
        threads_per_sm: 256,
        blocks_per_sm: 4,
        shared_bytes_per_sm: 48 * 1024,
        max_shared_per_block: 48 * 1024,
        max_threads_per_block: 1024,
        registers_per_sm: 65536,
        clusters: None,
    };
    let (grid, threads) = (8u32, 64u32);
    let mut ranks = vec![u32::MAX; (grid * threads) as usize];
    let mut total = [u32::MAX];
    let args = [
        Arg::Out { name: "ranks", address: ranks.as_mut_ptr() as usize, len: ranks.len(), elem: 4, slot: 0 },
        Arg::Out { name: "total", address: total.as_mut_ptr() as usize, len: 1, elem: 4, slot: 1 },
    ];
    let entry = RANKS_THEN_TOTAL.entry();
    // SAFETY: one argument per parameter, of its kind, over live vectors of the sizes the kernel needs.
    let f = move |a: &[Arg]| unsafe { <(Out<u32>, Out<u32>)>::call(entry, a) };
    let launch = Launch {
        kernel: RANKS_THEN_TOTAL.name(),
        grid,
        threads,
        shared_bytes: 0,
        shared_tail: 0,
        registers_per_thread: None,
        cooperative: true,
        grid_sync: RANKS_THEN_TOTAL.grid_sync(),
        cluster: None,
        cluster_kernel: false,
        args: &args,
        entry: &f,
        trace: None,
    };
    // SAFETY: both buffers are live, aligned, apart and untouched during the
    // launch, and as long as the kernel writes at this grid.
    unsafe { DEV.launch(&launch, &Options::default()) }.unwrap();
    let n = grid * threads;
    assert_eq!(total[0], n * (n - 1) / 2);
}
