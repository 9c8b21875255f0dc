//! The element and sample types, the operators, and which kernel each
//! combination launches.

use cg_algorithms_kernels::{histogram as h, reduce as r, run_length as rl, scan as s, select as sel};
use cg_kernel::kernels::{GridSync, KernelDef, NoGridSync, Param};
use cg_kernel::mem::{In, Out};
use cg_launcher::device::{Buffer, Pod};
use cg_launcher::launch::Arg;

/// An operator of a reduction or a scan (C++'s `cuda::std::plus`,
/// `cuda::minimum`, `cuda::maximum`, as CUB's `Sum`, `Min` and `Max` take them).
///
/// Integer sums wrap. A float sum is combined in the kernels' order (each
/// thread's elements, then a tree across the block, then the blocks' or
/// tiles' totals), not left to right: the same on every run, within the
/// rounding of that order of the exact sum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Sum.
    Sum,
    /// Minimum. On `f32` a NaN never wins (it counts as absent, as CUDA's
    /// `fminf` has it), so a scan's element before any other value is the
    /// identity (infinity).
    Min,
    /// Maximum, NaN as for `Min` (a scan's element before any other value is
    /// negative infinity).
    Max,
}

// A reduce and a (one-tile or persistent) scan kernel's definitions, as the
// operators' kernels have them.
pub(crate) use cg_algorithms_kernels::operator::{ReduceDef, ScanDef};
/// A select-if kernel's definition.
pub(crate) type SelectIfDef<T> = KernelDef<(In<T>, Out<T>, Out<u32>, Out<u64>, Out<u32>, u32, u32, T, usize), NoGridSync>;
/// A select-flagged kernel's definition.
pub(crate) type SelectFlaggedDef<T> = KernelDef<(In<T>, In<u8>, Out<T>, Out<u32>, Out<u64>, Out<u32>, u32, usize), NoGridSync>;
/// A run-heads kernel's definition.
pub(crate) type RunHeadsDef<T> = KernelDef<(In<T>, Out<u32>, Out<u32>, Out<u64>, Out<u32>, u32, usize), NoGridSync>;
/// A run-lengths kernel's definition.
pub(crate) type RunLengthsDef<T> = KernelDef<(In<T>, In<u32>, In<u32>, Out<T>, Out<u32>, usize), NoGridSync>;
/// A histogram kernel's definition.
pub(crate) type HistogramDef<S> = KernelDef<(In<S>, Out<u32>, u32, Level<S>, Level<S>, usize), GridSync>;
/// A histogram's level type: `i64` for integer samples, `f32` for `f32`.
pub type Level<S> = <S as cg_algorithms_kernels::histogram::Sample>::Level;

/// The reductions' storage of one element type: a partial result per block, and the result.
pub(crate) struct Partials<T: Pod> {
    pub(crate) partials: Buffer<T>,
    pub(crate) out: Buffer<T>,
}

/// [`Partials`] for each element type.
#[derive(Default)]
pub(crate) struct PerType {
    f32: Option<Partials<f32>>,
    i32: Option<Partials<i32>>,
    u32: Option<Partials<u32>>,
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for i32 {}
    impl Sealed for u32 {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
}

/// An element of a reduction, a scan or a selection: `f32`, `i32` or `u32`.
/// Sealed: each has its kernels.
pub trait Element: Pod + PartialOrd + Param + Arg<Self> + sealed::Sealed + std::fmt::Debug + 'static {
    /// What `op` gives for no elements (0, the type's greatest, its least; ±∞ for `f32`).
    fn identity(op: Op) -> Self;
    #[doc(hidden)]
    fn reduce_def(op: Op) -> &'static ReduceDef<Self>;
    #[doc(hidden)]
    fn scan_def(op: Op, inclusive: bool, persistent: bool) -> &'static ScanDef<Self>;
    #[doc(hidden)]
    fn select_if_def(persistent: bool) -> &'static SelectIfDef<Self>;
    #[doc(hidden)]
    fn select_flagged_def(persistent: bool) -> &'static SelectFlaggedDef<Self>;
    #[doc(hidden)]
    #[allow(private_interfaces)]
    fn partials(per_type: &mut PerType) -> &mut Option<Partials<Self>>;
    #[doc(hidden)]
    #[allow(private_interfaces)]
    fn run_length_defs() -> (&'static RunHeadsDef<Self>, &'static RunLengthsDef<Self>);
}

/// One `Element` impl, from its identities and its kernels' definitions.
macro_rules! element {
    ($t:ident, least $min:expr, greatest $max:expr,
     reduce [$rs:ident, $rmin:ident, $rmax:ident],
     inclusive [$is:ident, $imin:ident, $imax:ident],
     exclusive [$es:ident, $emin:ident, $emax:ident],
     persistent inclusive [$pis:ident, $pimin:ident, $pimax:ident],
     persistent exclusive [$pes:ident, $pemin:ident, $pemax:ident],
     select [$sif:ident, $sfl:ident, $psif:ident, $psfl:ident],
     run_length [$rh:ident, $rl:ident]) => {
        impl Element for $t {
            fn identity(op: Op) -> $t {
                match op {
                    Op::Sum => 0 as $t,
                    Op::Min => $max,
                    Op::Max => $min,
                }
            }
            fn reduce_def(op: Op) -> &'static ReduceDef<$t> {
                match op {
                    Op::Sum => &r::$rs,
                    Op::Min => &r::$rmin,
                    Op::Max => &r::$rmax,
                }
            }
            fn scan_def(op: Op, inclusive: bool, persistent: bool) -> &'static ScanDef<$t> {
                match (persistent, inclusive, op) {
                    (false, true, Op::Sum) => &s::$is,
                    (false, true, Op::Min) => &s::$imin,
                    (false, true, Op::Max) => &s::$imax,
                    (false, false, Op::Sum) => &s::$es,
                    (false, false, Op::Min) => &s::$emin,
                    (false, false, Op::Max) => &s::$emax,
                    (true, true, Op::Sum) => &s::$pis,
                    (true, true, Op::Min) => &s::$pimin,
                    (true, true, Op::Max) => &s::$pimax,
                    (true, false, Op::Sum) => &s::$pes,
                    (true, false, Op::Min) => &s::$pemin,
                    (true, false, Op::Max) => &s::$pemax,
                }
            }
            fn select_if_def(persistent: bool) -> &'static SelectIfDef<$t> {
                if persistent { &sel::$psif } else { &sel::$sif }
            }
            fn select_flagged_def(persistent: bool) -> &'static SelectFlaggedDef<$t> {
                if persistent { &sel::$psfl } else { &sel::$sfl }
            }
            #[allow(private_interfaces)]
            fn partials(per_type: &mut PerType) -> &mut Option<Partials<$t>> {
                &mut per_type.$t
            }
            #[allow(private_interfaces)]
            fn run_length_defs() -> (&'static RunHeadsDef<$t>, &'static RunLengthsDef<$t>) {
                (&rl::$rh, &rl::$rl)
            }
        }
    };
}

element!(f32, least f32::NEG_INFINITY, greatest f32::INFINITY,
    reduce [REDUCE_SUM_F32, REDUCE_MIN_F32, REDUCE_MAX_F32],
    inclusive [INCLUSIVE_SUM_F32, INCLUSIVE_MIN_F32, INCLUSIVE_MAX_F32],
    exclusive [EXCLUSIVE_SUM_F32, EXCLUSIVE_MIN_F32, EXCLUSIVE_MAX_F32],
    persistent inclusive [PERSISTENT_INCLUSIVE_SUM_F32, PERSISTENT_INCLUSIVE_MIN_F32, PERSISTENT_INCLUSIVE_MAX_F32],
    persistent exclusive [PERSISTENT_EXCLUSIVE_SUM_F32, PERSISTENT_EXCLUSIVE_MIN_F32, PERSISTENT_EXCLUSIVE_MAX_F32],
    select [SELECT_IF_F32, SELECT_FLAGGED_F32, PERSISTENT_SELECT_IF_F32, PERSISTENT_SELECT_FLAGGED_F32],
    run_length [RUN_HEADS_F32, RUN_LENGTHS_F32]);
element!(i32, least i32::MIN, greatest i32::MAX,
    reduce [REDUCE_SUM_I32, REDUCE_MIN_I32, REDUCE_MAX_I32],
    inclusive [INCLUSIVE_SUM_I32, INCLUSIVE_MIN_I32, INCLUSIVE_MAX_I32],
    exclusive [EXCLUSIVE_SUM_I32, EXCLUSIVE_MIN_I32, EXCLUSIVE_MAX_I32],
    persistent inclusive [PERSISTENT_INCLUSIVE_SUM_I32, PERSISTENT_INCLUSIVE_MIN_I32, PERSISTENT_INCLUSIVE_MAX_I32],
    persistent exclusive [PERSISTENT_EXCLUSIVE_SUM_I32, PERSISTENT_EXCLUSIVE_MIN_I32, PERSISTENT_EXCLUSIVE_MAX_I32],
    select [SELECT_IF_I32, SELECT_FLAGGED_I32, PERSISTENT_SELECT_IF_I32, PERSISTENT_SELECT_FLAGGED_I32],
    run_length [RUN_HEADS_I32, RUN_LENGTHS_I32]);
element!(u32, least u32::MIN, greatest u32::MAX,
    reduce [REDUCE_SUM_U32, REDUCE_MIN_U32, REDUCE_MAX_U32],
    inclusive [INCLUSIVE_SUM_U32, INCLUSIVE_MIN_U32, INCLUSIVE_MAX_U32],
    exclusive [EXCLUSIVE_SUM_U32, EXCLUSIVE_MIN_U32, EXCLUSIVE_MAX_U32],
    persistent inclusive [PERSISTENT_INCLUSIVE_SUM_U32, PERSISTENT_INCLUSIVE_MIN_U32, PERSISTENT_INCLUSIVE_MAX_U32],
    persistent exclusive [PERSISTENT_EXCLUSIVE_SUM_U32, PERSISTENT_EXCLUSIVE_MIN_U32, PERSISTENT_EXCLUSIVE_MAX_U32],
    select [SELECT_IF_U32, SELECT_FLAGGED_U32, PERSISTENT_SELECT_IF_U32, PERSISTENT_SELECT_FLAGGED_U32],
    run_length [RUN_HEADS_U32, RUN_LENGTHS_U32]);

/// A sample of a histogram: `u8`, `u16`, `i32` or `f32`. Sealed: each has its kernel.
pub trait Sample:
    Pod
    + PartialOrd
    + Param
    + Arg<Self>
    + sealed::Sealed
    + cg_algorithms_kernels::histogram::Sample<Level: Param + Arg<Level<Self>> + std::fmt::Debug>
    + std::fmt::Debug
    + 'static
{
    #[doc(hidden)]
    fn histogram_def() -> &'static HistogramDef<Self>;
    /// Whether the kernel's arithmetic holds `[lower, upper)` (`lower <
    /// upper`): integers always (in `i64`), `f32` where `upper - lower` is
    /// finite and the scale `bins / (upper - lower)` a normal number.
    #[doc(hidden)]
    fn range_fits(_lower: Level<Self>, _upper: Level<Self>, _bins: u32) -> bool {
        true
    }
}

impl Sample for u8 {
    fn histogram_def() -> &'static HistogramDef<u8> {
        &h::HISTOGRAM_EVEN_U8
    }
}
impl Sample for u16 {
    fn histogram_def() -> &'static HistogramDef<u16> {
        &h::HISTOGRAM_EVEN_U16
    }
}
impl Sample for i32 {
    fn histogram_def() -> &'static HistogramDef<i32> {
        &h::HISTOGRAM_EVEN_I32
    }
}
impl Sample for f32 {
    fn histogram_def() -> &'static HistogramDef<f32> {
        &h::HISTOGRAM_EVEN_F32
    }
    fn range_fits(lower: f32, upper: f32, bins: u32) -> bool {
        // A subnormal scale would be flushed to 0 where the GPU flushes them.
        (upper - lower).is_finite() && (bins as f32 / (upper - lower)).is_normal()
    }
}
