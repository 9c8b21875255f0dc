//! The kernels as the `gpu` crate hands them to the host: one typed
//! definition per kernel, and the PTX built from them.

use super::{Cluster, GridSync, KernelDef, NoGridSync};
use crate::mem::{In, Out};

/// The parameters of a sum in one launch: input, partials, total, n.
pub type SumParams = (In<f32>, Out<f32>, Out<f32>, usize);
/// The parameters of one stage of the two-launch sum: input, output, n.
pub type StageParams = (In<f32>, Out<f32>, usize);
/// One output buffer of `u32`.
pub type OneOut = (Out<u32>,);
/// `reduce_last_block`: input, partials, ticket, total, n.
pub type LastBlockParams = (In<f32>, Out<f32>, Out<u32>, Out<f32>, usize);
/// The sum across GPUs: input, partials, total, every GPU's total, the barrier's flags, rank, GPUs, n.
pub type MultiGpuParams = (In<f32>, Out<f32>, Out<f32>, Out<f32>, Out<u32>, u32, u32, usize);
/// The barrier across GPUs alone: flags, rank, GPUs.
pub type BarrierParams = (Out<u32>, u32, u32);

/// The PTX modules built from the kernels, and what `ptxas` said of them.
#[derive(Clone, Copy, Debug)]
pub struct Ptx {
    /// The module the lesson runs (sm_70 and newer).
    pub plain: &'static str,
    /// The same kernels recording where and when each block ran (`gpu::trace`).
    pub traced: &'static str,
    /// Every kernel built for sm_90, the `#[kernel(cluster)]` ones included
    /// (their instructions need compute capability 9.0): loaded on 9.0+ only.
    pub sm90: &'static str,
    /// `ptxas -v -arch=sm_75` on `plain`, or why there is none: each
    /// kernel's registers, for the emulated T4's occupancy.
    pub ptxas_sm75: Result<&'static str, &'static str>,
}

impl Ptx {
    /// The registers per thread `ptxas -v -arch=sm_75` reports for entry
    /// `kernel`; `None` where ptxas was not found at build time or names no
    /// such entry.
    pub fn registers_sm75(&self, kernel: &str) -> Option<u32> {
        registers_in(self.ptxas_sm75.ok()?, kernel)
    }
}

/// `Used N registers` of entry `kernel` in `ptxas -v` output.
fn registers_in(ptxas: &str, kernel: &str) -> Option<u32> {
    let header = format!("Compiling entry function '{kernel}'");
    let mut lines = ptxas.lines().skip_while(|l| !l.contains(&header)).skip(1);
    lines.find_map(|l| {
        let (_, rest) = l.split_once("Used ")?;
        rest.split_once(" registers")?.0.trim().parse().ok()
    })
}

/// Every kernel the host launches, each as `#[kernel]` defined it, and the
/// PTX (`gpu::KERNELS` is the one instance).
///
/// The host library does not depend on the kernels' crate: it names this
/// table through a symbol that crate exports (`GPU_LESSON_KERNELS`, below),
/// which the linker resolves when it links the program, so that a kernel
/// edit recompiles only that crate and relinks the program.
pub struct Kernels {
    pub ptx: Ptx,
    /// Threads `coalesced_demo` is launched with.
    pub coalesced_demo_threads: u32,
    /// Results each lane of `shuffle_out_of_range` writes.
    pub shuffle_probes: usize,
    /// Floats each thread of the fast sums adds per loop trip.
    pub fast_floats_per_trip: u32,
    pub reduce_blocks_to_partials: KernelDef<StageParams, NoGridSync>,
    pub reduce_partials_to_total: KernelDef<StageParams, NoGridSync>,
    pub reduce_cooperative_grid: KernelDef<SumParams, GridSync>,
    pub probe_cooperative: KernelDef<OneOut, NoGridSync>,
    pub coalesced_demo: KernelDef<OneOut, NoGridSync>,
    pub exercise_sum: KernelDef<SumParams, GridSync>,
    pub exercise_sum_bounds_bug: KernelDef<SumParams, GridSync>,
    pub exercise_sum_partials_if: KernelDef<SumParams, GridSync>,
    pub reduce_cooperative_fast: KernelDef<SumParams, GridSync>,
    pub reduce_last_block: KernelDef<LastBlockParams, NoGridSync>,
    pub reduce_single_block: KernelDef<StageParams, NoGridSync>,
    pub mutant_without_grid_sync: KernelDef<SumParams, GridSync>,
    pub mutant_dropping_last_block: KernelDef<SumParams, GridSync>,
    pub mutant_multi_gpu_without_barrier: KernelDef<MultiGpuParams, GridSync>,
    pub mutant_every_block_writes_total: KernelDef<SumParams, GridSync>,
    pub mutant_tile_sync_for_block_sync: KernelDef<SumParams, GridSync>,
    pub shuffle_out_of_range: KernelDef<OneOut, NoGridSync>,
    pub empty: KernelDef<(), NoGridSync>,
    pub empty_cooperative: KernelDef<(), GridSync>,
    pub grid_sync_loop: KernelDef<(u32,), GridSync>,
    pub grid_sync_stress: KernelDef<(Out<u32>, Out<u32>, u32, u32), GridSync>,
    pub hold_for: KernelDef<(usize,), NoGridSync>,
    pub grid_sync_missing_block: KernelDef<OneOut, GridSync>,
    pub undeclared_grid_sync: KernelDef<OneOut, NoGridSync>,
    pub sanitizer_reads_past_n: KernelDef<StageParams, NoGridSync>,
    pub sanitizer_block_sum_race: KernelDef<StageParams, NoGridSync>,
    pub sanitizer_divergent_block_sync: KernelDef<StageParams, NoGridSync>,
    pub reduce_multi_gpu: KernelDef<MultiGpuParams, GridSync>,
    pub fill_lesson_input: KernelDef<(Out<f32>, usize, usize), NoGridSync>,
    pub multi_grid_barrier: KernelDef<BarrierParams, GridSync>,
    pub multi_grid_barrier_unbounded: KernelDef<BarrierParams, GridSync>,
    pub reduce_cluster_grid: KernelDef<SumParams, Cluster<GridSync>>,
    pub reduce_clusters_to_partials: KernelDef<StageParams, Cluster<NoGridSync>>,
    pub cluster_sync_loop: KernelDef<(u32,), Cluster<NoGridSync>>,
    pub mutant_cluster_without_first_sync: KernelDef<SumParams, Cluster<GridSync>>,
    pub mutant_cluster_wrong_rank: KernelDef<SumParams, Cluster<GridSync>>,
    pub mutant_cluster_exits_early: KernelDef<StageParams, Cluster<NoGridSync>>,
}

impl Kernels {
    /// The PTX entry names of every kernel in the plain module.
    pub fn names(&self) -> [&'static str; 31] {
        [
            self.reduce_blocks_to_partials.name(),
            self.reduce_partials_to_total.name(),
            self.reduce_cooperative_grid.name(),
            self.probe_cooperative.name(),
            self.coalesced_demo.name(),
            self.exercise_sum.name(),
            self.exercise_sum_bounds_bug.name(),
            self.exercise_sum_partials_if.name(),
            self.reduce_cooperative_fast.name(),
            self.reduce_last_block.name(),
            self.reduce_single_block.name(),
            self.mutant_without_grid_sync.name(),
            self.mutant_dropping_last_block.name(),
            self.mutant_multi_gpu_without_barrier.name(),
            self.mutant_every_block_writes_total.name(),
            self.mutant_tile_sync_for_block_sync.name(),
            self.shuffle_out_of_range.name(),
            self.empty.name(),
            self.empty_cooperative.name(),
            self.grid_sync_loop.name(),
            self.grid_sync_stress.name(),
            self.hold_for.name(),
            self.grid_sync_missing_block.name(),
            self.undeclared_grid_sync.name(),
            self.sanitizer_reads_past_n.name(),
            self.sanitizer_block_sum_race.name(),
            self.sanitizer_divergent_block_sync.name(),
            self.reduce_multi_gpu.name(),
            self.fill_lesson_input.name(),
            self.multi_grid_barrier.name(),
            self.multi_grid_barrier_unbounded.name(),
        ]
    }

    /// The PTX entry names of the `#[kernel(cluster)]` kernels, only in the sm_90 module.
    pub fn cluster_names(&self) -> [&'static str; 6] {
        [
            self.reduce_cluster_grid.name(),
            self.reduce_clusters_to_partials.name(),
            self.cluster_sync_loop.name(),
            self.mutant_cluster_without_first_sync.name(),
            self.mutant_cluster_wrong_rank.name(),
            self.mutant_cluster_exits_early.name(),
        ]
    }
}

unsafe extern "Rust" {
    /// The `gpu` crate's `KERNELS`, exported under this name: a program or
    /// test built on the host library links it with `use gpu as _;`.
    #[link_name = "gpu_lesson_kernels"]
    static GPU_LESSON_KERNELS: Kernels;
}

/// The kernels of the `gpu` crate linked into this program: how the host
/// library reaches them without depending on that crate, so that a kernel
/// edit recompiles only the kernels and the program. A program that does not
/// link the `gpu` crate fails to link, naming `gpu_lesson_kernels`.
pub fn linked() -> &'static Kernels {
    // SAFETY: the `gpu` crate defines the symbol as a `Kernels`, immutable.
    unsafe { &GPU_LESSON_KERNELS }
}

#[cfg(test)]
mod tests {
    use super::registers_in;

    #[test]
    fn registers_are_read_per_entry_from_ptxas_output() {
        let out = "ptxas info    : Compiling entry function 'a' for 'sm_75'\nptxas info    : Function properties for a\n    0 bytes stack frame\nptxas info    : Used 8 registers, used 1 barriers, 360 bytes cmem[0]\nptxas info    : Compiling entry function 'b' for 'sm_75'\nptxas info    : Used 30 registers, 372 bytes cmem[0]\n";
        assert_eq!((registers_in(out, "a"), registers_in(out, "b"), registers_in(out, "c")), (Some(8), Some(30), None));
    }
}
