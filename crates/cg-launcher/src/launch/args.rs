//! Host values for kernel parameters, typed by the kernel's parameter types:
//! a [`View`] stands for an `In<T>`, a [`ViewMut`] (only) for an `Out<T>`,
//! and a number for a number.

use crate::device::{ArgValue, Pod, SharedOut, View, ViewMut};
use cg_kernel::mem::{In, Out};

/// What keeps [`Arg`] and [`Args`] this crate's to implement: a launch
/// trusts an argument's value to be what the parameter's type says (a view
/// of `T` for an `Out<T>`, a number of the parameter's own size), and a
/// dependent's own implementation could pass anything (a `u8` view for an
/// `Out<u32>`: a kernel writing past it). Not nameable outside the crate.
mod sealed {
    /// Implemented for exactly the pairs [`Arg`](super::Arg) is.
    pub trait Sealed<P> {}
    /// Implemented for exactly the tuples [`Args`](super::Args) is.
    pub trait SealedArgs<P> {}
}

/// A host value that can be passed for the kernel parameter type `P`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed for a kernel parameter of type `{P}`",
    label = "passed for a `{P}`",
    note = "pass `&buffer.slice(..)` for an `In<T>`, `buffer.slice_mut(..)` for an `Out<T>`, and a number of the parameter's own type for a number (`2.5f32` for an `f32`, `n` for a `usize`)"
)]
pub trait Arg<P>: sealed::Sealed<P> {
    /// The value the launch passes.
    #[doc(hidden)]
    fn value(&self) -> ArgValue<'_>;
}

impl<T: Pod> sealed::Sealed<In<T>> for &View<'_, T> {}
impl<T: Pod> Arg<In<T>> for &View<'_, T> {
    fn value(&self) -> ArgValue<'_> {
        ArgValue::input(*self)
    }
}

impl<T: Pod> sealed::Sealed<Out<T>> for ViewMut<'_, T> {}
impl<T: Pod> Arg<Out<T>> for ViewMut<'_, T> {
    fn value(&self) -> ArgValue<'_> {
        ArgValue::output(self)
    }
}

impl<T: Pod> sealed::Sealed<Out<T>> for SharedOut<'_, T> {}
impl<T: Pod> Arg<Out<T>> for SharedOut<'_, T> {
    fn value(&self) -> ArgValue<'_> {
        ArgValue::shared(self)
    }
}

/// A number passed for a number parameter of its own type: its bits
/// (`cg_kernel::mem::Word::to_bits64`; a float's `to_bits()`), which the
/// kernel reads at the parameter's own size (`.param .f32` for an `f32`).
macro_rules! number {
    ($($t:ty),*) => {$(
        impl sealed::Sealed<$t> for $t {}
        impl Arg<$t> for $t {
            fn value(&self) -> ArgValue<'_> {
                ArgValue::typed(cg_kernel::mem::Word::to_bits64(*self), |bits| <$t as cg_kernel::mem::Word>::from_bits64(bits).to_string())
            }
        }
    )*};
}
number!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

impl sealed::Sealed<usize> for usize {}
impl Arg<usize> for usize {
    fn value(&self) -> ArgValue<'_> {
        ArgValue::number(*self as u64)
    }
}

/// A whole argument list for a parameter tuple `P`, as a fixed-size array:
/// implemented for `()` and tuples of up to
/// [`MAX_PARAMS`](cg_kernel::kernels::MAX_PARAMS) arguments, as many as a
/// kernel may take.
pub trait Args<P>: sealed::SealedArgs<P> {
    /// One value per parameter.
    #[doc(hidden)]
    type Values<'a>: AsRef<[ArgValue<'a>]>
    where
        Self: 'a;
    /// The values the launch passes, in order.
    #[doc(hidden)]
    fn values(&self) -> Self::Values<'_>;
}

macro_rules! args {
    ($n:literal; $($a:ident $p:ident $i:tt),+) => {
        impl<$($a: Arg<$p>, $p),+> sealed::SealedArgs<($($p,)+)> for ($($a,)+) {}
        impl<$($a: Arg<$p>, $p),+> Args<($($p,)+)> for ($($a,)+) {
            type Values<'a> = [ArgValue<'a>; $n] where Self: 'a;
            fn values(&self) -> [ArgValue<'_>; $n] {
                [$(self.$i.value()),+]
            }
        }
    };
}
impl sealed::SealedArgs<()> for () {}
impl Args<()> for () {
    type Values<'a> = [ArgValue<'a>; 0];
    fn values(&self) -> [ArgValue<'_>; 0] {
        []
    }
}
args!(1; A0 P0 0);
args!(2; A0 P0 0, A1 P1 1);
args!(3; A0 P0 0, A1 P1 1, A2 P2 2);
args!(4; A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3);
args!(5; A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4);
args!(6; A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5);
args!(7; A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5, A6 P6 6);
args!(8; A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5, A6 P6 6, A7 P7 7);
args!(9; A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5, A6 P6 6, A7 P7 7, A8 P8 8);
args!(10; A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5, A6 P6 6, A7 P7 7, A8 P8 8, A9 P9 9);
args!(11; A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5, A6 P6 6, A7 P7 7, A8 P8 8, A9 P9 9, A10 P10 10);
args!(12; A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5, A6 P6 6, A7 P7 7, A8 P8 8, A9 P9 9, A10 P10 10, A11 P11 11);
args!(13; A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5, A6 P6 6, A7 P7 7, A8 P8 8, A9 P9 9, A10 P10 10, A11 P11 11, A12 P12 12);
args!(14; A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5, A6 P6 6, A7 P7 7, A8 P8 8, A9 P9 9, A10 P10 10, A11 P11 11, A12 P12 12, A13 P13 13);
args!(15; A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5, A6 P6 6, A7 P7 7, A8 P8 8, A9 P9 9, A10 P10 10, A11 P11 11, A12 P12 12, A13 P13 13, A14 P14 14);
args!(16; A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5, A6 P6 6, A7 P7 7, A8 P8 8, A9 P9 9, A10 P10 10, A11 P11 11, A12 P12 12, A13 P13 13, A14 P14 14, A15 P15 15);
