//! Element types of 1 and 2 bytes, and the atomics (`mem`'s `Word` and
//! `Atomic`): every `atom` by space, ordering and scope.

use core::arch::asm;

/// `ld.global.nc.u8`: a 1-byte read through the read-only data cache
/// (`__ldg` of a `unsigned char`), zero-extended into a 32-bit register.
///
/// # Safety
/// As [`ldg_b32`], for one byte.
#[inline(always)]
pub unsafe fn ldg_b8(p: *const u8) -> u8 {
    let v: u32;
    // SAFETY: the caller guarantees a valid, read-only address.
    unsafe { asm!("ld.global.nc.u8 {v}, [{p}];", v = out(reg32) v, p = in(reg64) p, options(pure, readonly, nostack)) };
    v as u8
}

/// `ld.global.nc.u16`: a 2-byte read through the read-only data cache
/// (`__ldg` of a `unsigned short`), zero-extended into a 32-bit register.
///
/// # Safety
/// As [`ldg_b32`], 2-byte aligned.
#[inline(always)]
pub unsafe fn ldg_b16(p: *const u16) -> u16 {
    let v: u32;
    // SAFETY: the caller guarantees a valid, read-only address.
    unsafe { asm!("ld.global.nc.u16 {v}, [{p}];", v = out(reg32) v, p = in(reg64) p, options(pure, readonly, nostack)) };
    v as u16
}

use crate::mem::{MemoryOrder, Scope};

/// Where an atomic's address points: a kernel parameter's memory (`.global`)
/// or the block's shared memory (`.shared`). The address is generic either
/// way (what a Rust pointer holds); the instruction converts it first
/// (`cvta.to.global` / `cvta.to.shared`, which ptxas folds away).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Space {
    /// Global memory: `atom.global`.
    Global,
    /// This block's shared memory: `atom.shared`.
    Shared,
}

/// One `atom` in the state space `$space`, with the ordering and scope given
/// as PTX words: `atom.<sem>.<scope>.<space>.<op> <args>;`.
macro_rules! atom_in {
    ($space:literal, $sem:literal, $scope:literal, $op:literal, $args:literal, $($operands:tt)*) => {
        asm!(
            concat!("{{ .reg .u64 ad; cvta.to.", $space, ".u64 ad, {p}; atom.", $sem, ".", $scope, ".", $space, ".", $op, " ", $args, "; }}"),
            $($operands)*
        )
    };
}

/// `atom_in!` for a scope and an order known only as values: one arm per
/// pair, of which a call with constants keeps one.
macro_rules! atom_scoped {
    ($space:literal, $scope:expr, $order:expr, $op:literal, $args:literal, $($operands:tt)*) => {
        match ($scope, $order) {
            (Scope::Block, MemoryOrder::Relaxed) => atom_in!($space, "relaxed", "cta", $op, $args, $($operands)*),
            (Scope::Block, MemoryOrder::Acquire) => atom_in!($space, "acquire", "cta", $op, $args, $($operands)*),
            (Scope::Block, MemoryOrder::Release) => atom_in!($space, "release", "cta", $op, $args, $($operands)*),
            (Scope::Block, MemoryOrder::AcqRel) => atom_in!($space, "acq_rel", "cta", $op, $args, $($operands)*),
            (Scope::Device, MemoryOrder::Relaxed) => atom_in!($space, "relaxed", "gpu", $op, $args, $($operands)*),
            (Scope::Device, MemoryOrder::Acquire) => atom_in!($space, "acquire", "gpu", $op, $args, $($operands)*),
            (Scope::Device, MemoryOrder::Release) => atom_in!($space, "release", "gpu", $op, $args, $($operands)*),
            (Scope::Device, MemoryOrder::AcqRel) => atom_in!($space, "acq_rel", "gpu", $op, $args, $($operands)*),
            (Scope::System, MemoryOrder::Relaxed) => atom_in!($space, "relaxed", "sys", $op, $args, $($operands)*),
            (Scope::System, MemoryOrder::Acquire) => atom_in!($space, "acquire", "sys", $op, $args, $($operands)*),
            (Scope::System, MemoryOrder::Release) => atom_in!($space, "release", "sys", $op, $args, $($operands)*),
            (Scope::System, MemoryOrder::AcqRel) => atom_in!($space, "acq_rel", "sys", $op, $args, $($operands)*),
        }
    };
}

/// `atom_scoped!` in either state space.
macro_rules! atom_any {
    ($space:expr, $scope:expr, $order:expr, $op:literal, $args:literal, $($operands:tt)*) => {
        match $space {
            Space::Global => atom_scoped!("global", $scope, $order, $op, $args, $($operands)*),
            Space::Shared => atom_scoped!("shared", $scope, $order, $op, $args, $($operands)*),
        }
    };
}

macro_rules! atom {
    ($(#[$doc:meta])* $name:ident, $t:ty, $reg:ident, $op:literal) => {
        $(#[$doc])*
        ///
        /// `order` and `scope` are the instruction's `.sem` and `.scope`
        /// (sm_70+); a call with constants compiles to the one instruction.
        ///
        /// # Safety
        /// `p` is a valid address in `space`, aligned to its size, and no
        /// other thread accesses it but atomically, unless ordered with this
        /// access by a barrier.
        #[inline(always)]
        pub unsafe fn $name(space: Space, p: *mut $t, v: $t, scope: Scope, order: MemoryOrder) -> $t {
            let old: $t;
            // SAFETY: the caller's contract.
            unsafe { atom_any!(space, scope, order, $op, "{o}, [ad], {v}", o = out($reg) old, p = in(reg64) p, v = in($reg) v, options(nostack)) };
            old
        }
    };
}

atom!(/// `atom.add.u32`: adds `v` at `p`, returns the old value (`atomicAdd`).
    atom_add_u32, u32, reg32, "add.u32");
atom!(/// `atom.add.s32` (`atomicAdd` of an `int`).
    atom_add_s32, i32, reg32, "add.s32");
atom!(/// `atom.add.u64`: two's complement, so `i64` too (`atomicAdd` of an `unsigned long long`).
    atom_add_u64, u64, reg64, "add.u64");
atom!(/// `atom.add.f32`, rounding to nearest even; in global memory it flushes
    /// subnormal inputs and results to zero, in shared memory it does not (`atomicAdd` of a `float`).
    atom_add_f32, f32, reg32, "add.f32");
atom!(/// `atom.add.f64`, rounding to nearest even (sm_60+; `atomicAdd` of a `double`).
    atom_add_f64, f64, reg64, "add.f64");
atom!(/// `atom.exch.b32`: writes `v` at `p`, returns the old value (`atomicExch`).
    atom_exch_b32, u32, reg32, "exch.b32");
atom!(/// `atom.exch.b64` (`atomicExch` of 8 bytes).
    atom_exch_b64, u64, reg64, "exch.b64");
atom!(/// `atom.min.u32` (`atomicMin` of an `unsigned`).
    atom_min_u32, u32, reg32, "min.u32");
atom!(/// `atom.min.s32` (`atomicMin` of an `int`).
    atom_min_s32, i32, reg32, "min.s32");
atom!(/// `atom.min.u64` (`atomicMin` of an `unsigned long long`).
    atom_min_u64, u64, reg64, "min.u64");
atom!(/// `atom.min.s64` (`atomicMin` of a `long long`).
    atom_min_s64, i64, reg64, "min.s64");
atom!(/// `atom.max.u32` (`atomicMax` of an `unsigned`).
    atom_max_u32, u32, reg32, "max.u32");
atom!(/// `atom.max.s32` (`atomicMax` of an `int`).
    atom_max_s32, i32, reg32, "max.s32");
atom!(/// `atom.max.u64` (`atomicMax` of an `unsigned long long`).
    atom_max_u64, u64, reg64, "max.u64");
atom!(/// `atom.max.s64` (`atomicMax` of a `long long`).
    atom_max_s64, i64, reg64, "max.s64");
atom!(/// `atom.and.b32` (`atomicAnd`).
    atom_and_b32, u32, reg32, "and.b32");
atom!(/// `atom.and.b64` (`atomicAnd` of 8 bytes).
    atom_and_b64, u64, reg64, "and.b64");
atom!(/// `atom.or.b32` (`atomicOr`).
    atom_or_b32, u32, reg32, "or.b32");
atom!(/// `atom.or.b64` (`atomicOr` of 8 bytes).
    atom_or_b64, u64, reg64, "or.b64");
atom!(/// `atom.xor.b32` (`atomicXor`).
    atom_xor_b32, u32, reg32, "xor.b32");
atom!(/// `atom.xor.b64` (`atomicXor` of 8 bytes).
    atom_xor_b64, u64, reg64, "xor.b64");

macro_rules! atom_cas {
    ($(#[$doc:meta])* $name:ident, $t:ty, $reg:ident, $op:literal) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// As [`atom_add_u32`].
        #[inline(always)]
        pub unsafe fn $name(space: Space, p: *mut $t, compare: $t, v: $t, scope: Scope, order: MemoryOrder) -> $t {
            let old: $t;
            // SAFETY: the caller's contract.
            unsafe {
                atom_any!(space, scope, order, $op, "{o}, [ad], {c}, {v}", o = out($reg) old, p = in(reg64) p, c = in($reg) compare, v = in($reg) v, options(nostack))
            };
            old
        }
    };
}
atom_cas!(/// `atom.cas.b32`: writes `v` at `p` if it holds `compare` (bit for bit); returns the old value (`atomicCAS`).
    atom_cas_b32, u32, reg32, "cas.b32");
atom_cas!(/// `atom.cas.b64` (`atomicCAS` of 8 bytes).
    atom_cas_b64, u64, reg64, "cas.b64");

/// One `ld` or `st` with a memory order and a scope, in the state space
/// `$space`: `<ld|st>.<sem>.<scope>.<space>.<type> <args>;`.
macro_rules! ordered_in {
    ($instr:literal, $space:literal, $sem:literal, $scope:literal, $ty:literal, $args:literal, $($operands:tt)*) => {
        asm!(
            concat!("{{ .reg .u64 ad; cvta.to.", $space, ".u64 ad, {p}; ", $instr, ".", $sem, ".", $scope, ".", $space, ".", $ty, " ", $args, "; }}"),
            $($operands)*
        )
    };
}

/// `ordered_in!` for a space and a scope known only as values, and an
/// order given as a PTX word: one arm per pair, of which a call with
/// constants keeps one.
macro_rules! ordered_any {
    ($instr:literal, $space:expr, $scope:expr, $sem:literal, $ty:literal, $args:literal, $($operands:tt)*) => {
        match ($space, $scope) {
            (Space::Global, Scope::Block) => ordered_in!($instr, "global", $sem, "cta", $ty, $args, $($operands)*),
            (Space::Global, Scope::Device) => ordered_in!($instr, "global", $sem, "gpu", $ty, $args, $($operands)*),
            (Space::Global, Scope::System) => ordered_in!($instr, "global", $sem, "sys", $ty, $args, $($operands)*),
            (Space::Shared, Scope::Block) => ordered_in!($instr, "shared", $sem, "cta", $ty, $args, $($operands)*),
            (Space::Shared, Scope::Device) => ordered_in!($instr, "shared", $sem, "gpu", $ty, $args, $($operands)*),
            (Space::Shared, Scope::System) => ordered_in!($instr, "shared", $sem, "sys", $ty, $args, $($operands)*),
        }
    };
}

macro_rules! ordered_load_store {
    ($load:ident, $store:ident, $t:ty, $reg:ident, $ty:literal) => {
        #[doc = concat!("`ld.relaxed.<scope>` or `ld.acquire.<scope>` of ", $ty, ": an atomic read of `p` (`cuda::atomic_ref<T, scope>::load`). With `acquire`, this thread's later accesses stay after it, and see what the writer released before the value read.")]
        ///
        /// # Safety
        /// `p` is a valid address in `space`, aligned to its size, and no
        /// other thread writes it but atomically, unless ordered with this
        /// access by a barrier.
        #[inline(always)]
        pub unsafe fn $load(space: Space, p: *const $t, scope: Scope, acquire: bool) -> $t {
            let v: $t;
            // SAFETY: the caller's contract.
            unsafe {
                if acquire {
                    ordered_any!("ld", space, scope, "acquire", $ty, "{v}, [ad]", v = out($reg) v, p = in(reg64) p, options(nostack))
                } else {
                    ordered_any!("ld", space, scope, "relaxed", $ty, "{v}, [ad]", v = out($reg) v, p = in(reg64) p, options(nostack))
                }
            };
            v
        }

        #[doc = concat!("`st.relaxed.<scope>` or `st.release.<scope>` of ", $ty, ": an atomic write of `v` at `p` (`cuda::atomic_ref<T, scope>::store`). With `release`, this thread's earlier accesses (and what it has observed) are ordered before it.")]
        ///
        /// # Safety
        #[doc = concat!("As [`", stringify!($load), "`].")]
        #[inline(always)]
        pub unsafe fn $store(space: Space, p: *mut $t, v: $t, scope: Scope, release: bool) {
            // SAFETY: the caller's contract.
            unsafe {
                if release {
                    ordered_any!("st", space, scope, "release", $ty, "[ad], {v}", p = in(reg64) p, v = in($reg) v, options(nostack))
                } else {
                    ordered_any!("st", space, scope, "relaxed", $ty, "[ad], {v}", p = in(reg64) p, v = in($reg) v, options(nostack))
                }
            };
        }
    };
}
ordered_load_store!(ld_ordered_b32, st_ordered_b32, u32, reg32, "b32");
ordered_load_store!(ld_ordered_b64, st_ordered_b64, u64, reg64, "b64");
