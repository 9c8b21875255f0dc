//! The kernels this library launches, found by name among those linked into
//! the program (`cg_kernel::kernels::registered`), each with the parameters
//! and contract the library launches it with. The library never names the
//! kernels' crate, so that a kernel edit does not recompile it; the program
//! links that crate and the one that holds its PTX (`use gpu as _;` and
//! `use gpu_ptx as _;`), and the linker gathers both.
//!
//! A kernel only a test launches needs no line here: it is found by name
//! (`cg_kernel::kernels::kernel`). The first call checks every line below
//! against its `#[kernel]`, so a wrong type is one named error, at once.

use cg_kernel::kernels::{Cluster, GridSync, KernelDef, NoGridSync, NotLinked, Ptx, constant, kernel, ptx_of};
use cg_kernel::mem::{In, Out};
use std::sync::OnceLock;

/// The parameters of the single-launch sums: `(input, partials, out, n)`.
pub type SumParams = (In<f32>, Out<f32>, Out<f32>, usize);
/// The parameters of the last-block sum: `(input, partials, ticket, out, n)`.
pub type LastBlockParams = (In<f32>, Out<f32>, Out<u32>, Out<f32>, usize);
/// The parameters of the sum across GPUs: `(input, partials, totals, out, barrier, rank, gpus, n)`.
pub type MultiParams = (In<f32>, Out<f32>, Out<f32>, Out<f32>, Out<u32>, u32, u32, usize);
/// The conjugate-gradient steps over the vectors: vectors, state, n.
pub type VectorParams = (Out<f32>, Out<f64>, usize);
/// The conjugate-gradient SpMV and the persistent solve: matrix, values, vectors, state, n.
pub type StepParams = (In<u32>, In<f32>, Out<f32>, Out<f64>, usize);
/// The persistent conjugate-gradient solve (the SpMV's parameters).
pub type PersistentParams = StepParams;
/// The on-chip conjugate-gradient solve: matrix, values, vectors, exchange,
/// state, n, slice, band, side, nnz (`gpu::kernels::on_chip`).
pub type OnChipParams = (In<u32>, In<f32>, Out<f32>, Out<f32>, Out<f64>, usize, u32, u32, u32, u32);
/// The conjugate-gradient steps of one block over the partials: state, partials.
pub type StateParams = (Out<f64>, usize);
/// Where each scalar of the conjugate-gradient kernels' `state` buffer is,
/// as `gpu::kernels::conjugate_gradient` lays it out (shared by name).
#[derive(Clone, Copy, Debug)]
pub struct SolverState {
    pub r1: usize,
    pub iterations: usize,
    pub done: usize,
    pub tolerance_squared: usize,
    pub max_iterations: usize,
    /// Where the fused kernels record a breakdown of their recurrence.
    pub breakdown: usize,
    /// The first partial; the scalars are `state[..partials]`.
    pub partials: usize,
    /// The on-chip kernels' layout (`gpu::kernels::on_chip`).
    pub on_chip: OnChipLayout,
}

/// Where the on-chip conjugate-gradient kernels keep what they share
/// (`gpu::kernels::on_chip`, shared by name).
#[derive(Clone, Copy, Debug)]
pub struct OnChipLayout {
    /// Values each block adds up per iteration.
    pub sums: usize,
    /// `state[restarts]`: restarts of the recurrence by the drift guard.
    pub restarts: usize,
    /// `state[true_residual]`: ‖b − A x‖² at the last check, on the GPU.
    pub true_residual: usize,
    /// `state[checks]`: true residuals computed.
    pub checks: usize,
    /// The first of two sets of `sums` partials per block.
    pub sums_at: usize,
    /// Iterations between two checks of the true residual.
    pub check_every: u32,
    /// Vectors of N in the exchange buffer.
    pub exchange_vectors: usize,
    /// Vectors of a slice each block holds in shared memory.
    pub slice_vectors: u32,
}
/// One stage of the two-launch sum: input, output, n.
pub type StageParams = (In<f32>, Out<f32>, usize);
/// One output buffer of `u32`.
pub type OneOut = (Out<u32>,);
/// The barrier across GPUs alone: flags, rank, GPUs.
pub type BarrierParams = (Out<u32>, u32, u32);

macro_rules! launched {
    ($( $name:ident: $params:ty, $contract:ty; )*) => {
        /// The kernels the library launches, and what it needs to know of them.
        pub struct Kernels {
            /// The PTX modules.
            pub ptx: &'static Ptx,
            /// Threads `coalesced_demo` is launched with.
            pub coalesced_demo_threads: u32,
            /// Results each lane of `shuffle_out_of_range` writes.
            pub shuffle_probes: usize,
            /// Floats each thread of the fast sums adds per loop trip.
            pub fast_floats_per_trip: u32,
            /// The conjugate-gradient kernels' `state` layout.
            pub solver_state: SolverState,
            $( #[allow(missing_docs)] pub $name: KernelDef<$params, $contract>, )*
        }

        impl Kernels {
            fn find() -> Result<Self, NotLinked> {
                let ptx = ptx_of("gpu")?;
                Ok(Kernels {
                    ptx,
                    coalesced_demo_threads: constant("COALESCED_DEMO_THREADS")? as u32,
                    shuffle_probes: constant("SHUFFLE_PROBES")? as usize,
                    fast_floats_per_trip: constant("FAST_FLOATS_PER_TRIP")? as u32,
                    solver_state: SolverState {
                        r1: constant("CONJUGATE_GRADIENT_R1")? as usize,
                        iterations: constant("CONJUGATE_GRADIENT_ITERATIONS")? as usize,
                        done: constant("CONJUGATE_GRADIENT_DONE")? as usize,
                        tolerance_squared: constant("CONJUGATE_GRADIENT_TOLERANCE_SQUARED")? as usize,
                        max_iterations: constant("CONJUGATE_GRADIENT_MAX_ITERATIONS")? as usize,
                        breakdown: constant("CONJUGATE_GRADIENT_BREAKDOWN")? as usize,
                        partials: constant("CONJUGATE_GRADIENT_PARTIALS")? as usize,
                        on_chip: OnChipLayout {
                            sums: constant("ON_CHIP_SUMS")? as usize,
                            restarts: constant("ON_CHIP_RESTARTS")? as usize,
                            true_residual: constant("ON_CHIP_TRUE_RESIDUAL")? as usize,
                            checks: constant("ON_CHIP_CHECKS")? as usize,
                            sums_at: constant("ON_CHIP_SUMS_AT")? as usize,
                            check_every: constant("ON_CHIP_CHECK_EVERY")? as u32,
                            exchange_vectors: constant("ON_CHIP_EXCHANGE_VECTORS")? as usize,
                            slice_vectors: constant("ON_CHIP_SLICE_VECTORS")? as u32,
                        },
                    },
                    $( $name: kernel(stringify!($name))?, )*
                })
            }
        }
    };
}

launched! {
    reduce_blocks_to_partials: StageParams, NoGridSync;
    reduce_partials_to_total: StageParams, NoGridSync;
    reduce_cooperative_grid: SumParams, GridSync;
    probe_cooperative: OneOut, NoGridSync;
    coalesced_demo: OneOut, NoGridSync;
    exercise_sum: SumParams, GridSync;
    exercise_sum_bounds_bug: SumParams, GridSync;
    exercise_sum_partials_if: SumParams, GridSync;
    exercise_sum_grid_reduce: SumParams, GridSync;
    reduce_cooperative_fast: SumParams, GridSync;
    reduce_last_block: LastBlockParams, NoGridSync;
    reduce_single_block: StageParams, NoGridSync;
    mutant_multi_gpu_without_barrier: MultiParams, GridSync;
    shuffle_out_of_range: OneOut, NoGridSync;
    empty: (), NoGridSync;
    empty_cooperative: (), GridSync;
    grid_sync_loop: (u32,), GridSync;
    grid_sync_stress: (Out<u32>, Out<u32>, u32, u32), GridSync;
    hold_for: (usize,), NoGridSync;
    grid_sync_missing_block: OneOut, GridSync;
    undeclared_grid_sync: OneOut, NoGridSync;
    undeclared_grid_sync_in_a_helper: OneOut, NoGridSync;
    reduce_multi_gpu: MultiParams, GridSync;
    fill_lesson_input: (Out<f32>, usize, usize), NoGridSync;
    multi_grid_barrier: BarrierParams, GridSync;
    multi_grid_barrier_unbounded: BarrierParams, GridSync;
    reduce_cluster_grid: SumParams, Cluster<GridSync>;
    reduce_clusters_to_partials: StageParams, Cluster<NoGridSync>;
    cluster_sync_loop: (u32,), Cluster<NoGridSync>;
    mutant_cluster_without_first_sync: SumParams, Cluster<GridSync>;
    mutant_cluster_wrong_rank: SumParams, Cluster<GridSync>;
    mutant_cluster_exits_early: StageParams, Cluster<NoGridSync>;
    mutant_cluster_divergent_block_sync: StageParams, Cluster<NoGridSync>;
    conjugate_gradient_update_p: VectorParams, NoGridSync;
    conjugate_gradient_spmv_dot: StepParams, NoGridSync;
    conjugate_gradient_alpha: StateParams, NoGridSync;
    conjugate_gradient_axpy: VectorParams, NoGridSync;
    conjugate_gradient_next: StateParams, NoGridSync;
    conjugate_gradient_persistent: PersistentParams, GridSync;
    mutant_conjugate_gradient_no_sync_before_dot: PersistentParams, GridSync;
    mutant_conjugate_gradient_sync_in_a_branch: PersistentParams, GridSync;
    conjugate_gradient_fused: PersistentParams, GridSync;
    conjugate_gradient_fused_resident: PersistentParams, GridSync;
    mutant_conjugate_gradient_fused_no_sync_before_spmv: PersistentParams, GridSync;
    conjugate_gradient_on_chip: OnChipParams, GridSync;
    conjugate_gradient_on_chip_matrix: OnChipParams, GridSync;
    conjugate_gradient_on_chip_stencil: OnChipParams, GridSync;
    mutant_conjugate_gradient_on_chip_no_sync: OnChipParams, GridSync;
    mutant_conjugate_gradient_on_chip_halo_after_sync: OnChipParams, GridSync;
}

/// The kernels found, or why not: found once, by [`check`] or [`linked`].
fn found() -> &'static Result<Kernels, NotLinked> {
    static KERNELS: OnceLock<Result<Kernels, NotLinked>> = OnceLock::new();
    KERNELS.get_or_init(Kernels::find)
}

/// Whether every kernel above is linked as it is launched: the program asks
/// first, so that a `#[kernel]` edited to disagree with the launch here (the
/// lesson's ordinary kernel declared `cooperative`, as the compiler's advice
/// on a `grid.sync()` in it says) is a named error, not a panic.
pub fn check() -> Result<(), NotLinked> {
    found().as_ref().map(|_| ()).map_err(Clone::clone)
}

/// The kernels linked into this program. A program that links no kernels,
/// or whose `#[kernel]` disagrees with a line above, stops here with that
/// named; the program has [`check`]ed first, so only a test reaches this.
pub fn linked() -> &'static Kernels {
    found().as_ref().unwrap_or_else(|e| panic!("{}", explain(e)))
}

/// The kernels of the lesson that this program launches cooperatively, and
/// where each is written: where a grid barrier may go.
const COOPERATIVE_LESSON_KERNELS: &str = "reduce_cooperative_grid (gpu/src/lesson/lesson.rs) and exercise_sum (gpu/src/lesson/exercise.rs)";

/// `NotLinked` in the learner's words: for a kernel declared otherwise than
/// this program launches it, which launch the program makes, and what to
/// change in the kernel (the launch is the lesson's, and fixed).
pub fn explain(e: &NotLinked) -> String {
    let NotLinked::Type { kernel, declared, asked } = e else { return e.to_string() };
    let (declared, asked) = (Declared::of(declared), Declared::of(asked));
    if declared.params != asked.params {
        return format!(
            "kernel `{kernel}` is declared with parameters {}, but this program launches it with {}: the launch is the lesson's (host/src/kernels.rs), so give the kernel back its parameters",
            declared.params, asked.params
        );
    }
    let kind = |d: &Declared| match (d.cooperative, d.cluster) {
        (false, false) => "with neither `cooperative` nor `cluster` in its #[kernel]",
        (true, false) => "`cooperative` in its #[kernel]",
        (false, true) => "`cluster` in its #[kernel]",
        (true, true) => "`cooperative, cluster` in its #[kernel]",
    };
    let launch = match (asked.cooperative, asked.cluster) {
        (false, false) => "the ordinary way",
        (true, false) => "cooperatively",
        (false, true) => "in clusters",
        (true, true) => "cooperatively, in clusters",
    };
    let mut fixes = Vec::new();
    for (word, has, needs) in [("cooperative", declared.cooperative, asked.cooperative), ("cluster", declared.cluster, asked.cluster)] {
        match (has, needs) {
            (true, false) => fixes.push(format!("take `{word}` out of its #[kernel]")),
            (false, true) => fixes.push(format!("put `{word}` back in its #[kernel], as the launch needs")),
            _ => {}
        }
    }
    let mut o = format!("kernel `{kernel}` is declared {}, but this program launches it {launch}", kind(&declared));
    if declared.cooperative && !asked.cooperative {
        o += &format!(
            ", where its blocks need not all be resident at once, so no grid.sync() in it could complete: {} and the grid.sync() out of its body (is_valid() reads 0 in this launch); a grid barrier belongs in a kernel this program launches cooperatively, {COOPERATIVE_LESSON_KERNELS}",
            fixes.join(", ")
        );
    } else {
        o += &format!(": {}", fixes.join(", and "));
    }
    o
}

/// What a kernel's definition type (`KernelDef<(params), contract>`, as
/// `type_name` spells it) says: its parameters, and how it may be launched.
#[derive(Debug, PartialEq, Eq)]
struct Declared {
    params: String,
    cooperative: bool,
    cluster: bool,
}

impl Declared {
    fn of(type_name: &str) -> Declared {
        // Paths left out: `cg_kernel::mem::In<f32>` reads `In<f32>`.
        let mut short = String::new();
        let mut word = String::new();
        for c in type_name.chars().chain(std::iter::once(' ')) {
            if c.is_alphanumeric() || c == '_' || c == ':' {
                word.push(c);
                continue;
            }
            short += word.rsplit("::").next().unwrap_or_default();
            word.clear();
            short.push(c);
        }
        let short = short.trim_end();
        let inner = short.strip_prefix("KernelDef<").and_then(|s| s.strip_suffix('>')).unwrap_or(short);
        // The contract is the last argument: after the last comma outside brackets.
        let mut depth = 0;
        let mut split = None;
        for (k, c) in inner.char_indices() {
            match c {
                '<' | '(' => depth += 1,
                '>' | ')' => depth -= 1,
                ',' if depth == 0 => split = Some(k),
                _ => {}
            }
        }
        let (params, contract) = split.map_or((inner, ""), |k| (&inner[..k], inner[k + 1..].trim()));
        Declared {
            params: params.trim().to_string(),
            cooperative: contract.trim_end_matches('>').ends_with("GridSync") && !contract.trim_end_matches('>').ends_with("NoGridSync"),
            cluster: contract.starts_with("Cluster<"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_the_library_launches_is_linked_with_its_types() {
        let k = Kernels::find().unwrap();
        assert_eq!(k.exercise_sum.name(), "exercise_sum");
        assert!(!k.ptx.plain.is_empty() || cfg!(feature = "emulator-only"));
    }

    #[test]
    fn a_kernel_asked_for_with_other_types_or_name_is_a_named_error() {
        let wrong = kernel::<StageParams, GridSync>("exercise_sum").map(|_| ()).unwrap_err();
        assert!(wrong.to_string().contains("kernel `exercise_sum` is declared as"), "{wrong}");
        assert_eq!(kernel::<(), NoGridSync>("no_such_kernel").map(|_| ()).unwrap_err(), NotLinked::Kernel("no_such_kernel".into()));
    }

    #[test]
    fn a_kernel_declared_otherwise_than_launched_is_explained_in_the_lessons_words() {
        // The lesson's ordinary kernel, declared cooperative (the compiler's
        // advice on a grid.sync() in it): the launch is ordinary, and fixed.
        let e = kernel::<SumParams, NoGridSync>("exercise_sum").map(|_| ()).unwrap_err();
        let e = match e {
            NotLinked::Type { declared, asked, .. } => explain(&NotLinked::Type { kernel: "reduce_blocks_to_partials".into(), declared, asked }),
            other => panic!("{other}"),
        };
        assert!(
            e.starts_with("kernel `reduce_blocks_to_partials` is declared `cooperative` in its #[kernel], but this program launches it the ordinary way"),
            "{e}"
        );
        assert!(e.contains("take `cooperative` out of its #[kernel] and the grid.sync() out of its body"), "{e}");
        assert!(e.contains("exercise_sum (gpu/src/lesson/exercise.rs)") && !e.contains("KernelDef") && !e.contains('\n'), "{e}");
        // The other way: a cooperative launch of a kernel declared ordinary.
        let e = explain(&kernel::<OneOut, GridSync>("probe_cooperative").map(|_| ()).unwrap_err());
        assert!(e.contains("declared with neither `cooperative` nor `cluster` in its #[kernel], but this program launches it cooperatively: put `cooperative` back in its #[kernel], as the launch needs"), "{e}");
        // Clusters, and parameters.
        let e = explain(&kernel::<StageParams, NoGridSync>("reduce_clusters_to_partials").map(|_| ()).unwrap_err());
        assert!(e.contains("declared `cluster` in its #[kernel], but this program launches it the ordinary way: take `cluster` out of its #[kernel]"), "{e}");
        let e = explain(&kernel::<OneOut, NoGridSync>("reduce_blocks_to_partials").map(|_| ()).unwrap_err());
        assert!(e.contains("declared with parameters (In<f32>, Out<f32>, usize), but this program launches it with (Out<u32>,)"), "{e}");
    }

    #[test]
    fn the_ptx_shows_which_kernels_call_grid_sync() {
        for name in ["reduce_cooperative_grid", "exercise_sum", "reduce_cooperative_fast"] {
            assert!(cg_launcher::device::ptx_calls_grid_sync(crate::kernels().ptx.plain, name), "{name}");
        }
        for name in ["probe_cooperative", "reduce_blocks_to_partials", "coalesced_demo", "mutant_without_grid_sync"] {
            assert!(!cg_launcher::device::ptx_calls_grid_sync(crate::kernels().ptx.plain, name), "{name}");
        }
        // Declared without `cooperative`, it reaches grid.sync() around the
        // compile-time guard: the PTX shows it, so the loader refuses it.
        assert!(cg_launcher::device::ptx_calls_grid_sync(crate::kernels().ptx.plain, crate::kernels().undeclared_grid_sync.name()));
        // The same through a helper that returns a value, a `.func` with a result.
        let helper = crate::kernels().undeclared_grid_sync_in_a_helper.name();
        assert!(crate::kernels().ptx.plain.contains("func_retval0) "), "some function returns a value");
        assert!(cg_launcher::device::ptx_calls_grid_sync(crate::kernels().ptx.plain, helper), "{helper}");
    }
}
