/// An operator for the collective algorithms ([`reduce`](super::reduce),
/// [`inclusive_scan`](super::inclusive_scan), [`exclusive_scan`](super::exclusive_scan)
/// and the block-wide [`block_reduce`](super::block_reduce) and scans), as
/// C++'s `cg::plus<T>`, `cg::less<T>`, `cg::greater<T>`, `cg::bit_and<T>`,
/// `cg::bit_or<T>` and `cg::bit_xor<T>` are for `<cooperative_groups/reduce.h>`
/// and `<cooperative_groups/scan.h>`.
///
/// The algorithms combine in an order of their own (a butterfly, a
/// Hillis-Steele scan, a block's tiles one after another): the operator must be
/// associative and commutative, as C++ asks, or the result depends on that
/// order. Floating-point addition is neither exactly, so a float result is
/// the same on every run (the order is fixed) but not the sum taken left to
/// right; each algorithm's documentation names its order.
///
/// | operator | C++ | types | identity |
/// |---|---|---|---|
/// | [`Plus`] | `cg::plus<T>` | all | `0` |
/// | [`Less`] (minimum) | `cg::less<T>` | all | `T::MAX`, `+∞` |
/// | [`Greater`] (maximum) | `cg::greater<T>` | all | `T::MIN`, `−∞` |
/// | [`BitAnd`] | `cg::bit_and<T>` | integers | all ones |
/// | [`BitOr`] | `cg::bit_or<T>` | integers | `0` |
/// | [`BitXor`] | `cg::bit_xor<T>` | integers | `0` |
///
/// The types are `u32`, `i32`, `u64`, `i64`, `f32` and `f64`; integer
/// addition wraps, as C++'s unsigned addition does.
///
/// **A `const trait`.** Its methods are `const fn`s, so an operator can
/// only compute: it cannot call a barrier, a shuffle, an atomic or any other
/// instruction, which would run inside the collectives' own barriers and
/// shuffles (a `combine` that called `block.sync()` would put a barrier in
/// divergent code). The collectives take `Op: const ReduceOp<T>`, and an
/// operator of one's own is `impl const ReduceOp<T> for MyOp`; a `combine`
/// that calls a GPU function is a compile error (E0015, "cannot call
/// non-const function"):
///
/// ```compile_fail,E0015
/// #![feature(const_trait_impl)]
/// use cg_kernel::cg::{ReduceOp, this_thread_block};
///
/// #[derive(Clone, Copy)]
/// struct SyncingSum;
///
/// impl const ReduceOp<u32> for SyncingSum {
///     fn combine(a: u32, b: u32) -> u32 {
///         this_thread_block().sync(); // a barrier inside the collective's own
///         a + b
///     }
///     fn identity() -> u32 {
///         0
///     }
/// }
/// ```
pub const trait ReduceOp<T: Copy>: Copy {
    /// Combines two values. The algorithms pass them in an order of their
    /// own (C++'s, where C++ has one): the operator must be commutative.
    fn combine(a: T, b: T) -> T;

    /// The value that changes nothing: `combine(identity(), x) == x`. An
    /// exclusive scan gives it to rank 0, which has nothing before it.
    fn identity() -> T;

    /// The exclusive scan's value from the inclusive one and this rank's own
    /// `v`, without a shuffle, where the operator can undo a combine exactly
    /// (integer `Plus`: `inclusive - v`, as C++ does; `BitXor`:
    /// `inclusive ^ v`); `None` means "shuffle the inclusive value up one rank".
    #[inline(always)]
    fn undo(_inclusive: T, _v: T) -> Option<T> {
        None
    }

    /// Which `redux.sync` computes this operator over a tile (sm_80+, 32-bit
    /// integers: the built-in operators on `u32` and `i32`); `None` means
    /// "use shuffles". A description, not the instruction: the tile's
    /// reduction issues it, so that an operator stays a `const fn`.
    #[doc(hidden)]
    #[inline(always)]
    fn redux() -> Option<Redux> {
        None
    }
}

/// The hardware reductions of `redux.sync` (sm_80+), which
/// [`ReduceOp::redux`] names for the built-in operators on 32-bit integers.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Redux {
    /// `redux.sync.add`.
    Add,
    /// `redux.sync.min`.
    Min,
    /// `redux.sync.max`.
    Max,
    /// `redux.sync.and`.
    And,
    /// `redux.sync.or`.
    Or,
    /// `redux.sync.xor`.
    Xor,
}

/// Sum (`cg::plus<T>`); integers wrap.
#[derive(Clone, Copy, Debug)]
pub struct Plus;
/// Minimum (`cg::less<T>`: the value that compares less wins).
///
/// On `f32` and `f64` a NaN never wins: the other value does, and two NaNs
/// give NaN (IEEE 754's minNum, CUDA's `fminf`, PTX `min.f32`), so the
/// operator commutes, as a tree or a look-back that combines in another
/// order needs. C++'s `cg::less` keeps `a < b ? a : b`, whose answer with a
/// NaN depends on which side it is.
#[derive(Clone, Copy, Debug)]
pub struct Less;
/// Maximum (`cg::greater<T>`: the value that compares greater wins). On
/// floats a NaN never wins, as for [`Less`].
#[derive(Clone, Copy, Debug)]
pub struct Greater;
/// Bitwise and (`cg::bit_and<T>`), integers only.
#[derive(Clone, Copy, Debug)]
pub struct BitAnd;
/// Bitwise or (`cg::bit_or<T>`), integers only.
#[derive(Clone, Copy, Debug)]
pub struct BitOr;
/// Bitwise exclusive or (`cg::bit_xor<T>`), integers only.
#[derive(Clone, Copy, Debug)]
pub struct BitXor;

macro_rules! float_ops {
    ($($t:ty),*) => {$(
        impl const ReduceOp<$t> for Plus {
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t { a + b }
            #[inline(always)]
            fn identity() -> $t { 0.0 }
        }
        impl const ReduceOp<$t> for Less {
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t { a.min(b) }
            #[inline(always)]
            fn identity() -> $t { <$t>::INFINITY }
        }
        impl const ReduceOp<$t> for Greater {
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t { a.max(b) }
            #[inline(always)]
            fn identity() -> $t { <$t>::NEG_INFINITY }
        }
    )*};
}
float_ops!(f32, f64);

/// One operator on one integer type: `combine`, `identity`, and optionally
/// `undo` and the hardware reduction.
macro_rules! int_op {
    ($op:ty, $t:ty, |$a:ident, $b:ident| $combine:expr, $identity:expr $(, undo |$i:ident, $v:ident| $undo:expr)? $(, redux $redux:ident)?) => {
        impl const ReduceOp<$t> for $op {
            #[inline(always)]
            fn combine($a: $t, $b: $t) -> $t {
                $combine
            }
            #[inline(always)]
            fn identity() -> $t {
                $identity
            }
            $(
                #[inline(always)]
                fn undo($i: $t, $v: $t) -> Option<$t> {
                    Some($undo)
                }
            )?
            $(
                #[inline(always)]
                fn redux() -> Option<Redux> {
                    Some(Redux::$redux)
                }
            )?
        }
    };
}

/// Every operator on an integer type; the 32-bit ones name their `redux.sync`.
macro_rules! int_ops {
    ($t:ty $(, redux $add:ident, $min:ident, $max:ident, $and:ident, $or:ident, $xor:ident)?) => {
        int_op!(Plus, $t, |a, b| a.wrapping_add(b), 0, undo |i, v| i.wrapping_sub(v) $(, redux $add)?);
        int_op!(Less, $t, |a, b| if b < a { b } else { a }, <$t>::MAX $(, redux $min)?);
        int_op!(Greater, $t, |a, b| if b > a { b } else { a }, <$t>::MIN $(, redux $max)?);
        int_op!(BitAnd, $t, |a, b| a & b, !0 $(, redux $and)?);
        int_op!(BitOr, $t, |a, b| a | b, 0 $(, redux $or)?);
        int_op!(BitXor, $t, |a, b| a ^ b, 0, undo |i, v| i ^ v $(, redux $xor)?);
    };
}
int_ops!(u32, redux Add, Min, Max, And, Or, Xor);
int_ops!(i32, redux Add, Min, Max, And, Or, Xor);
int_ops!(u64);
int_ops!(i64);

#[cfg(test)]
mod tests {
    use super::*;

    fn laws<T: Copy + PartialEq + core::fmt::Debug, Op: const ReduceOp<T>>(values: &[T]) {
        for &x in values {
            assert_eq!(Op::combine(Op::identity(), x), x, "identity on the left");
            assert_eq!(Op::combine(x, Op::identity()), x, "identity on the right");
            for &y in values {
                assert_eq!(Op::combine(x, y), Op::combine(y, x), "commutative");
                if let Some(back) = Op::undo(Op::combine(y, x), x) {
                    assert_eq!(back, y, "undo");
                }
                for &z in values {
                    assert_eq!(Op::combine(Op::combine(x, y), z), Op::combine(x, Op::combine(y, z)), "associative");
                }
            }
        }
    }

    macro_rules! int_laws {
        ($($t:ty),*) => {$({
            let v: [$t; 6] = [0, 1, <$t>::MAX, <$t>::MIN, 0x5a as $t, (<$t>::MAX / 3)];
            laws::<$t, Plus>(&v);
            laws::<$t, Less>(&v);
            laws::<$t, Greater>(&v);
            laws::<$t, BitAnd>(&v);
            laws::<$t, BitOr>(&v);
            laws::<$t, BitXor>(&v);
        })*};
    }

    #[test]
    fn every_integer_operator_has_its_identity_and_is_associative_and_commutative() {
        int_laws!(u32, i32, u64, i64);
    }

    #[test]
    fn float_min_and_max_have_infinite_identities_and_plus_zero() {
        let v = [1.5f32, -3.25, 0.0, 1e30, -1e-30, f32::INFINITY, f32::NEG_INFINITY];
        laws::<f32, Less>(&v);
        laws::<f32, Greater>(&v);
        let w = [1.5f64, -3.25, 1e300, -1e-300, f64::INFINITY];
        laws::<f64, Less>(&w);
        laws::<f64, Greater>(&w);
        // Sums are not associative; the identity holds.
        for x in [1.5f32, -3.25, 1e30] {
            assert_eq!(<Plus as ReduceOp<f32>>::combine(<Plus as ReduceOp<f32>>::identity(), x), x);
        }
        assert_eq!(<Plus as ReduceOp<f64>>::undo(3.0, 1.0), None, "a float sum is shuffled, not subtracted");
    }

    #[test]
    fn a_nan_never_wins_a_float_min_or_max_on_either_side() {
        for x in [1.5f32, -3.25, f32::INFINITY, f32::NEG_INFINITY] {
            assert_eq!(<Less as ReduceOp<f32>>::combine(f32::NAN, x), x);
            assert_eq!(<Less as ReduceOp<f32>>::combine(x, f32::NAN), x);
            assert_eq!(<Greater as ReduceOp<f32>>::combine(f32::NAN, x), x);
            assert_eq!(<Greater as ReduceOp<f32>>::combine(x, f32::NAN), x);
        }
        assert!(<Less as ReduceOp<f32>>::combine(f32::NAN, f32::NAN).is_nan());
        assert_eq!(<Less as ReduceOp<f64>>::combine(2.0, f64::NAN), 2.0);
        assert_eq!(<Greater as ReduceOp<f64>>::combine(f64::NAN, 2.0), 2.0);
    }
}
