//! A reduce and the scans with an operator of your own: CUB's
//! `DeviceReduce::Reduce` and `DeviceScan::InclusiveScan` and
//! `ExclusiveScan` with a user's functor.
//!
//! The kernels here are compiled into this crate's PTX, which cannot hold
//! an operator it has never seen. So [`operator_kernels!`](crate::operator_kernels) stamps the three
//! kernels of one operator and element type into your own kernel crate
//! (the one whose `build.rs` calls `cg_builder`), from the same bodies as
//! the built-in operators', and names them as one [`OperatorKernels`]: the
//! only way to make one, so that `cg-algorithms`' calls that take it
//! (`Algorithms::reduce_with`, `inclusive_scan_with`, `exclusive_scan_with`)
//! cannot be handed a kernel of another shape.
//!
//! The operator is a [`ReduceOp`]: associative and commutative (CUB's
//! reduce asks the same; its scans take a non-commutative operator, which
//! these do not, because the look-back combines the tiles before it in
//! reverse order), with an identity.
//!
//! ```no_run
//! #![feature(const_trait_impl)]
//! // In your kernel crate (cg-kernel and cg-algorithms-kernels among its
//! // dependencies, cg-builder in its build.rs):
//! use cg_kernel::cg::ReduceOp;
//!
//! /// The larger by absolute value, the greater on a tie (so that it commutes).
//! #[derive(Clone, Copy)]
//! pub struct AbsMax;
//! impl const ReduceOp<f32> for AbsMax {
//!     fn combine(a: f32, b: f32) -> f32 {
//!         if b.abs() > a.abs() || (b.abs() == a.abs() && b > a) { b } else { a }
//!     }
//!     fn identity() -> f32 { 0.0 }
//! }
//!
//! cg_algorithms_kernels::operator_kernels! {
//!     /// `AbsMax` over `f32`.
//!     pub static ABS_MAX: f32, AbsMax = [abs_max_reduce, abs_max_inclusive, abs_max_exclusive];
//! }
//! # fn main() {
//! // On the host: `Algorithms::reduce_with(&x, &ABS_MAX)` in cg-algorithms.
//! assert_eq!(ABS_MAX.identity(), 0.0);
//! # }
//! ```
//!
//! The three names are the kernels' PTX entries: unique in your crate.

#[cfg(not(target_arch = "nvptx64"))]
use cg_kernel::kernels::{GridSync, KernelDef, NoGridSync};
#[cfg(not(target_arch = "nvptx64"))]
use cg_kernel::mem::{In, Out};

#[doc(no_inline)]
pub use cg_kernel::cg::ReduceOp;

/// A reduce kernel's definition: `(x, out, partials, n)`, cooperative.
#[cfg(not(target_arch = "nvptx64"))]
pub type ReduceDef<T> = KernelDef<(In<T>, Out<T>, Out<T>, usize), GridSync>;
/// A one-tile scan kernel's definition: `(x, y, status, ticket, epoch, n)`.
#[cfg(not(target_arch = "nvptx64"))]
pub type ScanDef<T> = KernelDef<(In<T>, Out<T>, Out<u64>, Out<u32>, u32, usize), NoGridSync>;

/// The kernels of one operator over `T`, stamped by [`operator_kernels!`](crate::operator_kernels):
/// what `cg-algorithms`' `*_with` calls launch.
#[cfg(not(target_arch = "nvptx64"))]
pub struct OperatorKernels<T: 'static> {
    reduce: &'static ReduceDef<T>,
    inclusive: &'static ScanDef<T>,
    exclusive: &'static ScanDef<T>,
    identity: fn() -> T,
}

#[cfg(not(target_arch = "nvptx64"))]
impl<T: 'static> OperatorKernels<T> {
    /// The kernels [`operator_kernels!`](crate::operator_kernels) stamped.
    ///
    /// # Safety
    /// For one operator `Op: const ReduceOp<T>` whose identity `identity` gives:
    /// `reduce` is the definition of a `#[kernel(cooperative, shared_memory
    /// = reduce_shared_bytes)]` whose body is `reduce_grid::<T, Op>` on its
    /// own `this_grid()` and its four parameters; `inclusive` and
    /// `exclusive` of `#[kernel(shared_memory = lookback_shared_bytes)]`s
    /// whose bodies are `scan_tile::<T, Op, true>` and `scan_tile::<T, Op,
    /// false>` on their six parameters. `cg-algorithms` launches them as
    /// those bodies' contracts ask, and nothing else.
    #[doc(hidden)]
    pub const unsafe fn new(reduce: &'static ReduceDef<T>, inclusive: &'static ScanDef<T>, exclusive: &'static ScanDef<T>, identity: fn() -> T) -> Self {
        OperatorKernels { reduce, inclusive, exclusive, identity }
    }

    /// The reduce kernel: one cooperative launch, one `grid.sync()`.
    pub fn reduce(&self) -> &'static ReduceDef<T> {
        self.reduce
    }

    /// The inclusive or the exclusive scan kernel: one launch, decoupled look-back.
    pub fn scan(&self, inclusive: bool) -> &'static ScanDef<T> {
        if inclusive { self.inclusive } else { self.exclusive }
    }

    /// The operator's identity: what it gives for no elements.
    pub fn identity(&self) -> T {
        (self.identity)()
    }
}

/// Stamps the reduce and scan kernels of one operator over one element
/// type (`f32`, `i32` or `u32`) into the kernel crate that calls it, and
/// names them as one [`OperatorKernels`] static (on the host side).
///
/// `pub static NAME: T, Op = [reduce, inclusive, exclusive];` where `Op`
/// is a unit struct implementing [`ReduceOp<T>`], and the three names are
/// the kernels' own (their PTX entries, unique in the crate). The kernels
/// go in a module named `NAME`, beside the static. The calling crate
/// depends on `cg-kernel` (as every kernel crate does).
#[macro_export]
macro_rules! operator_kernels {
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty, $op:path = [$reduce:ident, $inclusive:ident, $exclusive:ident] $(;)?) => {
        #[doc = concat!("The kernels of [`", stringify!($name), "`](static@", stringify!($name), "), stamped by `cg_algorithms_kernels::operator_kernels!`.")]
        #[allow(non_snake_case, missing_docs)]
        $vis mod $name {
            #[allow(unused_imports)]
            use super::*;
            use ::cg_kernel::cg::this_grid;
            use ::cg_kernel::mem::{In, Out};

            /// The reduce kernel.
            ///
            /// # Safety
            /// As `cg_algorithms_kernels::reduce::reduce_grid`'s.
            #[::cg_kernel::kernel(cooperative, shared_memory = $crate::reduce::reduce_shared_bytes, def = REDUCE)]
            pub unsafe fn $reduce(x: In<$t>, out: Out<$t>, partials: Out<$t>, n: usize) {
                // SAFETY: the kernel's contract.
                unsafe { $crate::reduce::reduce_grid::<$t, $op>(&this_grid(), x, out, partials, n, $op) }
            }

            /// The inclusive scan kernel.
            ///
            /// # Safety
            /// As `cg_algorithms_kernels::scan::scan_tile`'s.
            #[::cg_kernel::kernel(shared_memory = $crate::scan::lookback_shared_bytes, def = INCLUSIVE)]
            pub unsafe fn $inclusive(x: In<$t>, y: Out<$t>, status: Out<u64>, ticket: Out<u32>, epoch: u32, n: usize) {
                // SAFETY: the kernel's contract.
                unsafe { $crate::scan::scan_tile::<$t, $op, true>(x, y, status, ticket, epoch, n, $op) }
            }

            /// The exclusive scan kernel.
            ///
            /// # Safety
            /// As `cg_algorithms_kernels::scan::scan_tile`'s.
            #[::cg_kernel::kernel(shared_memory = $crate::scan::lookback_shared_bytes, def = EXCLUSIVE)]
            pub unsafe fn $exclusive(x: In<$t>, y: Out<$t>, status: Out<u64>, ticket: Out<u32>, epoch: u32, n: usize) {
                // SAFETY: the kernel's contract.
                unsafe { $crate::scan::scan_tile::<$t, $op, false>(x, y, status, ticket, epoch, n, $op) }
            }
        }

        $(#[$attr])*
        #[cfg(not(target_arch = "nvptx64"))]
        $vis static $name: $crate::operator::OperatorKernels<$t> =
            // SAFETY: the three kernels stamped above, for this operator and
            // type, with the shared memory and bodies `new` asks for.
            unsafe { $crate::operator::OperatorKernels::new(&$name::REDUCE, &$name::INCLUSIVE, &$name::EXCLUSIVE, <$op as $crate::operator::ReduceOp<$t>>::identity) };
    };
}
