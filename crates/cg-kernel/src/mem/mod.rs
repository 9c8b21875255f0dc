//! The memory a kernel touches: its pointer parameters ([`In`], [`Out`]) and
//! the block's dynamic shared memory ([`dynamic_shared`]), read, written and
//! updated atomically.
//!
//! On the GPU each is a bare pointer, so an access compiles to one load or
//! store and nothing checks the index, exactly as in C++: reading past the end
//! is undefined behaviour, which is why every access is an `unsafe` call whose
//! caller says why the index is in bounds. On the emulator (the cg-emulator crate) the
//! same calls check the index against the buffer the launch passed and report
//! an access outside it, a misaligned vector load, or a data race, as a named
//! fault instead of undefined behaviour.
//!
//! | C++ | Rust |
//! |---|---|
//! | `const float* __restrict__ in` | `input: In<f32>` |
//! | `v += in[i];` | `v += unsafe { input.read(i) };` |
//! | `float* partials` | `partials: Out<f32>` |
//! | `partials[b] = total;` | `unsafe { partials.write(b, total) };` |
//! | `extern __shared__ float totals[];` | `let totals = dynamic_shared::<f32>();` |
//! | `atomicAdd(&bins[b], 1)` | `unsafe { bins.atomic_add(b, 1) }` (and [`Out`]'s atomics; [`Scope`], [`MemoryOrder`]) |
//!
//! Elements are `u8`, `i8`, `u16`, `i16`, `u32`, `i32`, `u64`, `i64`, `f32`
//! or `f64` ([`Word`]); atomics take the 4- and 8-byte ones ([`Atomic`],
//! [`AtomicInteger`]).

mod atomic;
mod global;
mod shared;

pub use atomic::{Atomic, AtomicInteger, MemoryOrder, Scope};
pub use global::{In, Out};
pub use shared::{DynamicShared, dynamic_shared};
#[doc(hidden)]
pub use shared::{no_dynamic_shared, shared_tail_start, static_array, static_arrays_layout, static_arrays_start};

/// A value a kernel can load and store: `u8`, `i8`, `u16`, `i16`, `u32`,
/// `i32`, `u64`, `i64`, `f32`, `f64`. Sealed: its loads are 1-, 2-, 4- or
/// 8-byte instructions, which another type's size could not match.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an element a kernel loads and stores",
    label = "not one of u8, i8, u16, i16, u32, i32, u64, i64, f32, f64",
    note = "kernel memory (In, Out, shared memory) holds those ten types; a bool is a u8 of 0 or 1, and a struct is an array of each field"
)]
pub trait Word: Copy + sealed::Sealed {
    /// The value's bits, zero-extended to 64.
    fn to_bits64(self) -> u64;
    /// The value from [`to_bits64`](Self::to_bits64)'s bits (the low ones).
    fn from_bits64(bits: u64) -> Self;
    /// Loads through the read-only cache (`__ldg`).
    ///
    /// # Safety
    /// `p` is valid and aligned, and nothing writes it while the kernel runs.
    #[cfg(target_arch = "nvptx64")]
    unsafe fn ldg(p: *const Self) -> Self;
}

/// `Word` for types of `$bits`'s size, loaded by `$ldg`.
macro_rules! word {
    ($bits:ty, $ldg:ident: $($t:ty),*) => {$(
        impl Word for $t {
            #[inline(always)]
            fn to_bits64(self) -> u64 { <$bits>::from_ne_bytes(self.to_ne_bytes()) as u64 }
            #[inline(always)]
            fn from_bits64(bits: u64) -> Self { <$t>::from_ne_bytes((bits as $bits).to_ne_bytes()) }
            #[cfg(target_arch = "nvptx64")]
            #[inline(always)]
            unsafe fn ldg(p: *const Self) -> Self {
                // SAFETY: the caller's contract.
                Self::from_bits64(unsafe { crate::arch::$ldg(p as *const $bits) } as u64)
            }
        }
    )*};
}
word!(u8, ldg_b8: u8, i8);
word!(u16, ldg_b16: u16, i16);
word!(u32, ldg_b32: f32, u32, i32);
word!(u64, ldg_b64: f64, u64, i64);

/// What [`Word`], [`Atomic`] and `cg::ShuffleValue` are limited to.
pub(crate) mod sealed {
    pub trait Sealed {}
    macro_rules! sealed {
        ($($t:ty),*) => {$( impl Sealed for $t {} )*};
    }
    sealed!(u8, i8, u16, i16, f32, u32, i32, f64, u64, i64);
}
