//! Atomics on a kernel's memory: which element types ([`Atomic`],
//! [`AtomicInteger`]), their scope and order, and the operations of [`Out`]
//! and [`DynamicShared`] (`crate::mem` re-exports them).

use super::{DynamicShared, Out, Word};
#[cfg(not(target_arch = "nvptx64"))]
use cg_emulator::thread as emu;

/// Which threads an atomic is atomic with, and whose accesses its ordering
/// reaches: C++'s `cuda::thread_scope` (PTX `.scope`).
///
/// Two atomics on one element are atomic with each other only if each one's
/// scope holds the other's thread: threads of two blocks updating one word
/// with [`Scope::Block`] race (the emulator names it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The threads of this block: `cuda::thread_scope_block`, PTX `.cta`
    /// (`atomicAdd_block`). Cheaper in shared memory, which only the block sees.
    Block,
    /// Every thread of this GPU: `cuda::thread_scope_device`, PTX `.gpu`.
    /// What `atomicAdd` is.
    Device,
    /// Every thread of the system, other GPUs and the host too:
    /// `cuda::thread_scope_system`, PTX `.sys` (`atomicAdd_system`), for
    /// memory they share (`Shared` in `cg-launcher`).
    System,
}

/// What an atomic orders around it: C++'s `cuda::memory_order` (PTX
/// `.sem`; all need sm_70, this crate's floor). C++'s `memory_order_seq_cst`
/// has no `atom` of its own (nvcc adds a `fence.sc` before one), and is not offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryOrder {
    /// The atomic alone: nothing before or after it is ordered by it
    /// (`memory_order_relaxed`, `.relaxed`). What `atomicAdd` is.
    Relaxed,
    /// This thread's later accesses stay after it: what a thread that reads
    /// a value another released sees (`memory_order_acquire`, `.acquire`).
    Acquire,
    /// This thread's earlier accesses stay before it
    /// (`memory_order_release`, `.release`).
    Release,
    /// Both (`memory_order_acq_rel`, `.acq_rel`).
    AcqRel,
}

/// An element type kernels update atomically: `u32`, `i32`, `u64`, `i64`,
/// `f32`, `f64`, those PTX's `atom` adds, exchanges and compares-and-swaps.
/// Sealed. (`u8` to `i16` have no atomics in PTX but a 2-byte `cas`.)
pub trait Atomic: Word + ops::AtomicOps {}
/// An integer element kernels also take the minimum, maximum, and, or and
/// xor of atomically: `u32`, `i32`, `u64`, `i64`. (PTX has no scalar
/// `atom.min.f32`: C++'s `atomicMin` has no `float` either.) Sealed.
pub trait AtomicInteger: Atomic + ops::AtomicIntegerOps {}

impl Atomic for u32 {}
impl Atomic for i32 {}
impl Atomic for u64 {}
impl Atomic for i64 {}
impl Atomic for f32 {}
impl Atomic for f64 {}
impl AtomicInteger for u32 {}
impl AtomicInteger for i32 {}
impl AtomicInteger for u64 {}
impl AtomicInteger for i64 {}

/// The instructions behind [`Atomic`] and [`AtomicInteger`] (the GPU build)
/// and the arithmetic the emulator does in their place.
pub(crate) mod ops {
    #[cfg(target_arch = "nvptx64")]
    use super::{MemoryOrder, Scope};
    #[cfg(target_arch = "nvptx64")]
    use crate::arch::{self, Space};

    pub trait AtomicOps: Copy {
        /// `a + b` as the atomic adds: wrapping for integers; for `f32` with
        /// subnormal inputs and result flushed to zero where `ftz` (global
        /// memory's `atom.add.f32` does, shared memory's does not).
        fn add(a: Self, b: Self, ftz: bool) -> Self;
        /// `-v` (wrapping): what `atomic_sub` adds.
        fn neg(v: Self) -> Self;
        #[cfg(target_arch = "nvptx64")]
        unsafe fn atom_add(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self;
        #[cfg(target_arch = "nvptx64")]
        unsafe fn atom_exch(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self;
        #[cfg(target_arch = "nvptx64")]
        unsafe fn atom_cas(space: Space, p: *mut Self, compare: Self, v: Self, scope: Scope, order: MemoryOrder) -> Self;
    }

    pub trait AtomicIntegerOps:
        AtomicOps + Ord + core::ops::BitAnd<Output = Self> + core::ops::BitOr<Output = Self> + core::ops::BitXor<Output = Self>
    {
        #[cfg(target_arch = "nvptx64")]
        unsafe fn atom_min(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self;
        #[cfg(target_arch = "nvptx64")]
        unsafe fn atom_max(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self;
        #[cfg(target_arch = "nvptx64")]
        unsafe fn atom_and(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self;
        #[cfg(target_arch = "nvptx64")]
        unsafe fn atom_or(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self;
        #[cfg(target_arch = "nvptx64")]
        unsafe fn atom_xor(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self;
    }

    /// One PTX instruction for `$t`, reached through the bits type `$bits`
    /// where the instruction is typeless (`.b32`, `.b64`).
    #[cfg(target_arch = "nvptx64")]
    macro_rules! via {
        ($f:ident, $t:ty, $bits:ty, $space:ident, $p:ident, $scope:ident, $order:ident, $($v:ident),*) => {
            <$t>::from_ne_bytes(
                // SAFETY: the caller's contract; `$bits` has `$t`'s size and alignment.
                unsafe { arch::$f($space, $p as *mut $bits, $(<$bits>::from_ne_bytes($v.to_ne_bytes()),)* $scope, $order) }.to_ne_bytes(),
            )
        };
    }

    macro_rules! integer {
        ($t:ty, $bits:ty, $add:ident: $add_ty:ty, $exch:ident, $cas:ident, $min:ident, $max:ident, $and:ident, $or:ident, $xor:ident) => {
            impl AtomicOps for $t {
                #[inline(always)]
                fn add(a: Self, b: Self, _ftz: bool) -> Self {
                    a.wrapping_add(b)
                }
                #[inline(always)]
                fn neg(v: Self) -> Self {
                    v.wrapping_neg()
                }
                #[cfg(target_arch = "nvptx64")]
                #[inline(always)]
                unsafe fn atom_add(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self {
                    via!($add, $t, $add_ty, space, p, scope, order, v)
                }
                #[cfg(target_arch = "nvptx64")]
                #[inline(always)]
                unsafe fn atom_exch(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self {
                    via!($exch, $t, $bits, space, p, scope, order, v)
                }
                #[cfg(target_arch = "nvptx64")]
                #[inline(always)]
                unsafe fn atom_cas(space: Space, p: *mut Self, compare: Self, v: Self, scope: Scope, order: MemoryOrder) -> Self {
                    via!($cas, $t, $bits, space, p, scope, order, compare, v)
                }
            }
            impl AtomicIntegerOps for $t {
                #[cfg(target_arch = "nvptx64")]
                #[inline(always)]
                unsafe fn atom_min(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self {
                    via!($min, $t, $t, space, p, scope, order, v)
                }
                #[cfg(target_arch = "nvptx64")]
                #[inline(always)]
                unsafe fn atom_max(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self {
                    via!($max, $t, $t, space, p, scope, order, v)
                }
                #[cfg(target_arch = "nvptx64")]
                #[inline(always)]
                unsafe fn atom_and(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self {
                    via!($and, $t, $bits, space, p, scope, order, v)
                }
                #[cfg(target_arch = "nvptx64")]
                #[inline(always)]
                unsafe fn atom_or(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self {
                    via!($or, $t, $bits, space, p, scope, order, v)
                }
                #[cfg(target_arch = "nvptx64")]
                #[inline(always)]
                unsafe fn atom_xor(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self {
                    via!($xor, $t, $bits, space, p, scope, order, v)
                }
            }
        };
    }
    integer!(u32, u32, atom_add_u32: u32, atom_exch_b32, atom_cas_b32, atom_min_u32, atom_max_u32, atom_and_b32, atom_or_b32, atom_xor_b32);
    integer!(i32, u32, atom_add_s32: i32, atom_exch_b32, atom_cas_b32, atom_min_s32, atom_max_s32, atom_and_b32, atom_or_b32, atom_xor_b32);
    integer!(u64, u64, atom_add_u64: u64, atom_exch_b64, atom_cas_b64, atom_min_u64, atom_max_u64, atom_and_b64, atom_or_b64, atom_xor_b64);
    // Two's complement: `atom.add.u64` adds an `i64` too (PTX has no `.s64` add).
    integer!(i64, u64, atom_add_u64: u64, atom_exch_b64, atom_cas_b64, atom_min_s64, atom_max_s64, atom_and_b64, atom_or_b64, atom_xor_b64);

    /// A subnormal `f32` as zero of its sign.
    fn flush(x: f32) -> f32 {
        if x.is_subnormal() { 0.0f32.copysign(x) } else { x }
    }

    macro_rules! float {
        ($t:ty, $bits:ty, $add:ident, $exch:ident, $cas:ident, |$a:ident, $b:ident, $ftz:ident| $sum:expr) => {
            impl AtomicOps for $t {
                #[inline(always)]
                fn add($a: Self, $b: Self, $ftz: bool) -> Self {
                    $sum
                }
                #[inline(always)]
                fn neg(v: Self) -> Self {
                    -v
                }
                #[cfg(target_arch = "nvptx64")]
                #[inline(always)]
                unsafe fn atom_add(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self {
                    via!($add, $t, $t, space, p, scope, order, v)
                }
                #[cfg(target_arch = "nvptx64")]
                #[inline(always)]
                unsafe fn atom_exch(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self {
                    via!($exch, $t, $bits, space, p, scope, order, v)
                }
                #[cfg(target_arch = "nvptx64")]
                #[inline(always)]
                unsafe fn atom_cas(space: Space, p: *mut Self, compare: Self, v: Self, scope: Scope, order: MemoryOrder) -> Self {
                    via!($cas, $t, $bits, space, p, scope, order, compare, v)
                }
            }
        };
    }
    float!(f32, u32, atom_add_f32, atom_exch_b32, atom_cas_b32, |a, b, ftz| if ftz { flush(flush(a) + flush(b)) } else { a + b });
    float!(f64, u64, atom_add_f64, atom_exch_b64, atom_cas_b64, |a, b, _ftz| a + b);
}

/// One atomic operation as two methods: the CUDA function (relaxed, device
/// scope) and the `cuda::atomic_ref` form with a scope and an order. Each
/// container says where element `i` is (`atomic_address`), and how the
/// emulator runs it (`atomic_emulated`).
macro_rules! atomic_op {
    (
        $short:ident, $explicit:ident, $cuda:expr, $atomic_ref:expr,
        ($($arg:ident: $argty:ty),*) [$what:literal]
        |$p:ident, $scope:ident, $order:ident| $gpu:expr,
        |$old:ident, $global:ident| $emu:expr
    ) => {
        #[doc = concat!("`", $cuda, "`: ", $what, ", atomically; returns the element's old value.")]
        #[doc = ""]
        #[doc = concat!("Relaxed, at device scope, as `", $cuda, "` is: [`", stringify!($explicit), "`](Self::", stringify!($explicit), ") takes a scope and an order.")]
        #[doc = ""]
        #[doc = "# Safety"]
        #[doc = "As [`atomic_add`](Self::atomic_add)."]
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $short(self, i: usize, $($arg: $argty),*) -> T {
            let (scope, order) = (Scope::Device, MemoryOrder::Relaxed);
            #[cfg(target_arch = "nvptx64")]
            {
                // SAFETY: the caller's contract.
                let ($p, $scope, $order) = (unsafe { self.atomic_address(i) }, scope, order);
                // SAFETY: the caller's contract: in bounds, aligned, no plain access racing.
                unsafe { $gpu }
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                let _ = order;
                self.atomic_emulated(i, scope, concat!(stringify!($short), "()"), move |$old: T, $global: bool| $emu)
            }
        }

        #[doc = concat!("`cuda::atomic_ref<T, scope>(", $atomic_ref, ")`: [`", stringify!($short), "`](Self::", stringify!($short), ") with a scope and a memory order (PTX `atom.<order>.<scope>`).")]
        #[doc = ""]
        #[doc = "# Safety"]
        #[doc = "As [`atomic_add`](Self::atomic_add)."]
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $explicit(self, i: usize, $($arg: $argty,)* scope: Scope, order: MemoryOrder) -> T {
            #[cfg(target_arch = "nvptx64")]
            {
                // SAFETY: the caller's contract.
                let ($p, $scope, $order) = (unsafe { self.atomic_address(i) }, scope, order);
                // SAFETY: the caller's contract: in bounds, aligned, no plain access racing.
                unsafe { $gpu }
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                let _ = order;
                self.atomic_emulated(i, scope, concat!(stringify!($explicit), "()"), move |$old: T, $global: bool| $emu)
            }
        }
    };
}

/// Every atomic operation of `Atomic` types, for a container with
/// `atomic_address`, `atomic_emulated` and `SPACE`.
macro_rules! atomics {
    ($target:literal) => {
        atomic_op!(atomic_sub, atomic_sub_explicit, concat!("atomicSub(&", $target, ", v)"), concat!($target, ").fetch_sub(v, order"),
            (v: T) ["subtracts `v` from element `i` (wrapping for integers)"]
            |p, scope, order| T::atom_add(Self::SPACE, p, T::neg(v), scope, order),
            |old, global| T::add(old, T::neg(v), global));
        atomic_op!(atomic_exch, atomic_exch_explicit, concat!("atomicExch(&", $target, ", v)"), concat!($target, ").exchange(v, order"),
            (v: T) ["writes `v` to element `i`"]
            |p, scope, order| T::atom_exch(Self::SPACE, p, v, scope, order),
            |_old, _global| v);
        atomic_op!(atomic_cas, atomic_cas_explicit, concat!("atomicCAS(&", $target, ", compare, v)"),
            concat!($target, ").compare_exchange_strong(compare, v, order"),
            (compare: T, v: T) ["writes `v` to element `i` if it holds `compare`, bit for bit (so `-0.0` is not `0.0`, and a NaN matches its own bits)"]
            |p, scope, order| T::atom_cas(Self::SPACE, p, compare, v, scope, order),
            |old, _global| if old.to_bits64() == compare.to_bits64() { v } else { old });
    };
}

/// The integer atomics, as `atomics!`.
macro_rules! integer_atomics {
    ($target:literal) => {
        atomic_op!(atomic_min, atomic_min_explicit, concat!("atomicMin(&", $target, ", v)"), concat!($target, ").fetch_min(v, order"),
            (v: T) ["sets element `i` to the smaller of it and `v`"]
            |p, scope, order| T::atom_min(Self::SPACE, p, v, scope, order),
            |old, _global| core::cmp::min(old, v));
        atomic_op!(atomic_max, atomic_max_explicit, concat!("atomicMax(&", $target, ", v)"), concat!($target, ").fetch_max(v, order"),
            (v: T) ["sets element `i` to the larger of it and `v`"]
            |p, scope, order| T::atom_max(Self::SPACE, p, v, scope, order),
            |old, _global| core::cmp::max(old, v));
        atomic_op!(atomic_and, atomic_and_explicit, concat!("atomicAnd(&", $target, ", v)"), concat!($target, ").fetch_and(v, order"),
            (v: T) ["sets element `i` to its bitwise and with `v`"]
            |p, scope, order| T::atom_and(Self::SPACE, p, v, scope, order),
            |old, _global| old & v);
        atomic_op!(atomic_or, atomic_or_explicit, concat!("atomicOr(&", $target, ", v)"), concat!($target, ").fetch_or(v, order"),
            (v: T) ["sets element `i` to its bitwise or with `v`"]
            |p, scope, order| T::atom_or(Self::SPACE, p, v, scope, order),
            |old, _global| old | v);
        atomic_op!(atomic_xor, atomic_xor_explicit, concat!("atomicXor(&", $target, ", v)"), concat!($target, ").fetch_xor(v, order"),
            (v: T) ["sets element `i` to its bitwise exclusive or with `v`"]
            |p, scope, order| T::atom_xor(Self::SPACE, p, v, scope, order),
            |old, _global| old ^ v);
    };
}

/// The atomic loads and stores of a container with `atomic_address`,
/// `atomic_emulated` and `SPACE`: `cuda::atomic_ref<T, scope>`'s `load` and
/// `store`, PTX `ld.<sem>.<scope>` and `st.<sem>.<scope>`.
macro_rules! ordered_access {
    ($target:literal) => {
        #[doc = concat!("`cuda::atomic_ref<T, scope>(", $target, ").load(cuda::memory_order_relaxed)`: element `i`, read atomically (PTX `ld.relaxed.<scope>`).")]
        ///
        /// Not a data race with another thread's atomic on the element (a
        /// store, an add, a compare-and-swap), in this block or another, as
        /// a plain `read` would be; it orders nothing around it. A loop that
        /// waits for another thread to set a flag reads it with this (or
        /// [`atomic_load_acquire`](Self::atomic_load_acquire), to see what
        /// the writer wrote before the flag).
        ///
        /// # Safety
        /// As [`atomic_add`](Self::atomic_add).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn atomic_load(self, i: usize, scope: Scope) -> T {
            // SAFETY: the caller's contract.
            unsafe { self.ordered_load(i, scope, false, "atomic_load()") }
        }

        #[doc = concat!("`cuda::atomic_ref<T, scope>(", $target, ").load(cuda::memory_order_acquire)`: [`atomic_load`](Self::atomic_load), and this thread's later accesses stay after it: they see what the thread whose release it read wrote before that release (PTX `ld.acquire.<scope>`).")]
        ///
        /// # Safety
        /// As [`atomic_add`](Self::atomic_add).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn atomic_load_acquire(self, i: usize, scope: Scope) -> T {
            // SAFETY: the caller's contract.
            unsafe { self.ordered_load(i, scope, true, "atomic_load_acquire()") }
        }

        #[doc = concat!("`cuda::atomic_ref<T, scope>(", $target, ").store(v, cuda::memory_order_relaxed)`: writes `v` to element `i` atomically (PTX `st.relaxed.<scope>`); orders nothing around it.")]
        ///
        /// # Safety
        /// As [`atomic_add`](Self::atomic_add).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn atomic_store(self, i: usize, v: T, scope: Scope) {
            // SAFETY: the caller's contract.
            unsafe { self.ordered_store(i, v, scope, false, "atomic_store()") }
        }

        #[doc = concat!("`cuda::atomic_ref<T, scope>(", $target, ").store(v, cuda::memory_order_release)`: [`atomic_store`](Self::atomic_store), and this thread's earlier accesses stay before it, so a thread that reads `v` with [`atomic_load_acquire`](Self::atomic_load_acquire) sees them (PTX `st.release.<scope>`).")]
        ///
        /// # Safety
        /// As [`atomic_add`](Self::atomic_add).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn atomic_store_release(self, i: usize, v: T, scope: Scope) {
            // SAFETY: the caller's contract.
            unsafe { self.ordered_store(i, v, scope, true, "atomic_store_release()") }
        }

        /// An atomic load: `ld.<relaxed|acquire>.<scope>` on a GPU, the
        /// emulator's atomic that changes nothing on the CPU.
        ///
        /// # Safety
        /// As [`atomic_add`](Self::atomic_add).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        unsafe fn ordered_load(self, i: usize, scope: Scope, acquire: bool, call: &'static str) -> T {
            #[cfg(target_arch = "nvptx64")]
            {
                let _ = call;
                // SAFETY: the caller's contract: in bounds and aligned.
                let p = unsafe { self.atomic_address(i) };
                // SAFETY: as above; an `Atomic` type is 4 or 8 bytes.
                let bits = unsafe {
                    if size_of::<T>() == 4 {
                        crate::arch::ld_ordered_b32(Self::SPACE, p as *const u32, scope, acquire) as u64
                    } else {
                        crate::arch::ld_ordered_b64(Self::SPACE, p as *const u64, scope, acquire)
                    }
                };
                T::from_bits64(bits)
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                let _ = acquire;
                self.load_emulated(i, scope, call)
            }
        }

        /// An atomic store, as [`ordered_load`](Self::ordered_load).
        ///
        /// # Safety
        /// As [`atomic_add`](Self::atomic_add).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        unsafe fn ordered_store(self, i: usize, v: T, scope: Scope, release: bool, call: &'static str) {
            #[cfg(target_arch = "nvptx64")]
            {
                let _ = call;
                // SAFETY: the caller's contract: in bounds and aligned.
                let p = unsafe { self.atomic_address(i) };
                // SAFETY: as above; an `Atomic` type is 4 or 8 bytes.
                unsafe {
                    if size_of::<T>() == 4 {
                        crate::arch::st_ordered_b32(Self::SPACE, p as *mut u32, v.to_bits64() as u32, scope, release)
                    } else {
                        crate::arch::st_ordered_b64(Self::SPACE, p as *mut u64, v.to_bits64(), scope, release)
                    }
                }
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                let _ = release;
                self.atomic_emulated(i, scope, call, move |_, _| v);
            }
        }
    };
}

/// `atomic_add` and `atomic_add_explicit`, with the contract every atomic
/// of the container refers to (`$safety`).
macro_rules! atomic_add {
    ($target:literal, $cuda_target:literal, $(#[$safety:meta])*) => {
        #[doc = concat!("`atomicAdd(&", $target, ", v)`: adds `v` to element `i` atomically (wrapping for integers) and returns its old value.")]
        ///
        /// Relaxed, at device scope, as `atomicAdd` is: it orders nothing
        /// around it, and every thread of the GPU sees one sum.
        /// [`atomic_add_explicit`](Self::atomic_add_explicit) takes a scope and
        /// an order. Atomics on one element among themselves never race, in
        /// any block; the result of a float sum depends on the order the
        /// additions happened in, on a GPU as on the emulator.
        ///
        $(#[$safety])*
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn atomic_add(self, i: usize, v: T) -> T {
            #[cfg(target_arch = "nvptx64")]
            {
                // SAFETY: the caller's contract: in bounds, aligned, no plain access racing.
                unsafe { T::atom_add(Self::SPACE, self.atomic_address(i), v, Scope::Device, MemoryOrder::Relaxed) }
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                self.atomic_emulated(i, Scope::Device, "atomic_add()", move |old, global| T::add(old, v, global))
            }
        }

        #[doc = concat!("`cuda::atomic_ref<T, scope>(", $cuda_target, ").fetch_add(v, order)`: [`atomic_add`](Self::atomic_add) with a scope and a memory order (PTX `atom.<order>.<scope>.add`).")]
        ///
        /// # Safety
        /// As [`atomic_add`](Self::atomic_add).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn atomic_add_explicit(self, i: usize, v: T, scope: Scope, order: MemoryOrder) -> T {
            #[cfg(target_arch = "nvptx64")]
            {
                // SAFETY: the caller's contract: in bounds, aligned, no plain access racing.
                unsafe { T::atom_add(Self::SPACE, self.atomic_address(i), v, scope, order) }
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                let _ = order;
                self.atomic_emulated(i, scope, "atomic_add_explicit()", move |old, global| T::add(old, v, global))
            }
        }
    };
}

/// Atomics on a kernel parameter's element: CUDA's `atomicAdd(&out[i], v)`
/// and the rest, on global memory (`atom.global`).
///
/// | C++ | Rust |
/// |---|---|
/// | `atomicAdd(&out[i], v)` | `out.atomic_add(i, v)` |
/// | `atomicAdd_block(&out[i], v)` | `out.atomic_add_explicit(i, v, Scope::Block, MemoryOrder::Relaxed)` |
/// | `cuda::atomic_ref<T, cuda::thread_scope_device>(out[i]).fetch_add(v, cuda::memory_order_acq_rel)` | `out.atomic_add_explicit(i, v, Scope::Device, MemoryOrder::AcqRel)` |
/// | `atomicSub`, `atomicExch`, `atomicCAS` | `atomic_sub`, `atomic_exch`, `atomic_cas` (and `_explicit`) |
/// | `atomicMin`, `atomicMax`, `atomicAnd`, `atomicOr`, `atomicXor` | `atomic_min`, ... (integers: [`AtomicInteger`]) |
impl<T: Atomic> Out<T> {
    #[cfg(target_arch = "nvptx64")]
    const SPACE: crate::arch::Space = crate::arch::Space::Global;

    /// Element `i`'s address.
    ///
    /// # Safety
    /// `i` is below the buffer's length.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    unsafe fn atomic_address(self, i: usize) -> *mut T {
        // SAFETY: the caller's contract.
        unsafe { self.0.add(i) }
    }

    /// The emulator's atomic: element `i` becomes `op(old, true)` (true:
    /// global memory), at once for every block; returns `old`.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    fn atomic_emulated(self, i: usize, scope: Scope, call: &'static str, op: impl Fn(T, bool) -> T) -> T {
        T::from_bits64(emu::global_atomic(self.atomic_element(i), scope == Scope::Block, call, &|old| op(T::from_bits64(old), true).to_bits64()))
    }

    /// The emulator's atomic load of element `i`.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    fn load_emulated(self, i: usize, scope: Scope, call: &'static str) -> T {
        T::from_bits64(emu::global_atomic_load(self.atomic_element(i), scope == Scope::Block, call))
    }

    /// Element `i` as the emulator's atomics address it, after its bounds check.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    fn atomic_element(self, i: usize) -> emu::Element {
        if i >= self.len {
            emu::out_of_bounds(self.name, i, self.len, emu::Access::Atomic);
        }
        emu::Element { slot: self.slot, name: self.name, index: i, address: self.ptr.wrapping_add(i) as usize, size: size_of::<T>() }
    }

    atomic_add!("out[i]", "out[i]",
        /// # Safety
        /// - `i` is below the length of the buffer the launch passed (the GPU
        ///   does not check; the emulator reports the access as a fault);
        /// - no other thread reads or writes element `i` but atomically,
        ///   unless a barrier orders the two (`block.sync()` in a block,
        ///   `grid.sync()` between blocks): a plain access racing an atomic is
        ///   a data race, as in C++, and the emulator names both lines;
        /// - with [`Scope::Block`], no thread of another block updates element
        ///   `i` atomically unless `grid.sync()` orders the two;
        /// - the element is aligned to its size, as every buffer the launcher
        ///   passes is.
    );
    atomics!("out[i]");
    ordered_access!("out[i]");
}

/// The integer atomics of a kernel parameter's element (`atomicMin` and the rest).
impl<T: AtomicInteger> Out<T> {
    integer_atomics!("out[i]");
}

/// Atomics on the block's shared memory (`atom.shared`): the histogram's
/// `atomicAdd(&bins[b], 1)` is `bins.atomic_add(b, 1)`. Every thread that
/// sees it is in this block, so [`Scope::Block`] is enough for any of them;
/// the short forms are device-scoped as in C++.
impl<T: Atomic> DynamicShared<T> {
    #[cfg(target_arch = "nvptx64")]
    const SPACE: crate::arch::Space = crate::arch::Space::Shared;

    /// Element `i`'s address.
    ///
    /// # Safety
    /// Element `i` lies in the launch's dynamic shared memory.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    unsafe fn atomic_address(self, i: usize) -> *mut T {
        // SAFETY: the caller's contract.
        unsafe { self.base.add(i) }
    }

    /// The emulator's atomic: element `i` becomes `op(old, false)` (false:
    /// shared memory, whose `f32` add keeps subnormals); returns `old`.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    fn atomic_emulated(self, i: usize, _scope: Scope, call: &'static str, op: impl Fn(T, bool) -> T) -> T {
        self.bound(i, emu::Access::Atomic);
        T::from_bits64(emu::shared_atomic(self.first.saturating_add(i), size_of::<T>(), call, &|old| op(T::from_bits64(old), false).to_bits64()))
    }

    /// The emulator's atomic load of element `i`.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    fn load_emulated(self, i: usize, _scope: Scope, call: &'static str) -> T {
        self.bound(i, emu::Access::Read);
        T::from_bits64(emu::shared_atomic_load(self.first.saturating_add(i), size_of::<T>(), call))
    }

    atomic_add!("name[i]", "name[i]",
        /// # Safety
        /// - element `i` ends within the launch's dynamic shared-memory bytes,
        ///   counted from where this array starts (the emulator reports an
        ///   access past them);
        /// - no other thread reads or writes element `i` but atomically,
        ///   unless a barrier orders the two (`block.sync()`): the emulator
        ///   names both lines of a plain access racing an atomic;
        /// - the element is aligned to its size: the dynamic shared memory
        ///   starts aligned for the largest type the kernel views it as.
    );
    atomics!("name[i]");
    ordered_access!("name[i]");
}

/// The integer atomics of a shared-memory element (`atomicMin` and the rest).
impl<T: AtomicInteger> DynamicShared<T> {
    integer_atomics!("name[i]");
}
