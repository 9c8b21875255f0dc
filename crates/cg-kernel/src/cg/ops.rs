#[cfg(target_feature = "sm_80")]
use crate::arch;

/// A reduction operator for [`reduce`](super::reduce) (`cg::plus<T>`,
/// `cg::less<T>`, `cg::greater<T>`).
pub trait ReduceOp<T>: Copy {
    /// Combines two values.
    fn combine(a: T, b: T) -> T;

    /// The tile-wide result from the hardware's `redux.sync`, where the target
    /// has it for `T` (sm_80+ and 32-bit integers); `None` means "use shuffles".
    ///
    /// # Safety
    /// As `redux.sync`: the calling lane is in `mask` and every lane of `mask` calls it.
    #[inline(always)]
    unsafe fn hardware(_mask: u32, _v: T) -> Option<T> {
        None
    }
}

/// Sum (`cg::plus<T>`).
#[derive(Clone, Copy, Debug)]
pub struct Plus;
/// Minimum (`cg::less<T>`: the value that compares less wins).
#[derive(Clone, Copy, Debug)]
pub struct Less;
/// Maximum (`cg::greater<T>`: the value that compares greater wins).
#[derive(Clone, Copy, Debug)]
pub struct Greater;

macro_rules! float_ops {
    ($($t:ty),*) => {$(
        impl ReduceOp<$t> for Plus {
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t { a + b }
        }
        impl ReduceOp<$t> for Less {
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t { if b < a { b } else { a } }
        }
        impl ReduceOp<$t> for Greater {
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t { if b > a { b } else { a } }
        }
    )*};
}
float_ops!(f32, f64);

macro_rules! int_ops {
    ($t:ty, $add:ident, $min:ident, $max:ident) => {
        impl ReduceOp<$t> for Plus {
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t {
                a.wrapping_add(b)
            }
            #[cfg(target_feature = "sm_80")]
            #[inline(always)]
            unsafe fn hardware(mask: u32, v: $t) -> Option<$t> {
                // SAFETY: the caller's contract.
                Some(unsafe { arch::$add(mask, v) })
            }
        }
        impl ReduceOp<$t> for Less {
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t {
                a.min(b)
            }
            #[cfg(target_feature = "sm_80")]
            #[inline(always)]
            unsafe fn hardware(mask: u32, v: $t) -> Option<$t> {
                // SAFETY: the caller's contract.
                Some(unsafe { arch::$min(mask, v) })
            }
        }
        impl ReduceOp<$t> for Greater {
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t {
                a.max(b)
            }
            #[cfg(target_feature = "sm_80")]
            #[inline(always)]
            unsafe fn hardware(mask: u32, v: $t) -> Option<$t> {
                // SAFETY: the caller's contract.
                Some(unsafe { arch::$max(mask, v) })
            }
        }
    };
}
int_ops!(u32, redux_add_u32, redux_min_u32, redux_max_u32);
int_ops!(i32, redux_add_i32, redux_min_i32, redux_max_i32);
