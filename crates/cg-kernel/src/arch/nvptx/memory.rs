//! Loads, stores, fences and the grid barrier's atomics on 32-bit words,
//! each with its ordering and scope spelled out (`ld.acquire.gpu`,
//! `red.release.gpu`, ...), the read-only loads (`ld.global.nc`), and the
//! grid workspace the driver hands a cooperative launch.

use core::arch::asm;

/// `%envreg1:%envreg2`: the grid workspace the driver hands a cooperative launch,
/// or null when the launch was not cooperative (the `%envreg1` word is the high half).
#[inline(always)]
pub fn grid_workspace() -> *mut u32 {
    let hi: u32;
    let lo: u32;
    // SAFETY: reading special registers has no preconditions.
    unsafe {
        asm!("mov.u32 {hi}, %envreg1;", "mov.u32 {lo}, %envreg2;",
             hi = out(reg32) hi, lo = out(reg32) lo, options(pure, nomem, nostack))
    };
    (((hi as u64) << 32) | lo as u64) as *mut u32
}

/// A comment in the PTX of every kernel that calls `grid.sync()`, which the
/// host looks for before it lets anything launch that kernel the ordinary way.
#[inline(always)]
pub fn mark_grid_sync() {
    // SAFETY: a comment; no instruction.
    unsafe { asm!("// cg::grid_group::sync", options(nomem, nostack, preserves_flags)) };
}

/// `atom.add.acq_rel.gpu.u32`: adds `v` at `p` and returns the old value; a
/// release of this thread's earlier accesses and an acquire for its later
/// ones, at GPU scope (C++: `cuda::atomic_ref<unsigned, cuda::thread_scope_device>`
/// `fetch_add(v, cuda::memory_order_acq_rel)`; plain `atomicAdd` is relaxed).
///
/// # Safety
/// `p` is a valid, aligned global address.
#[inline(always)]
pub unsafe fn atom_add_acq_rel_gpu(p: *mut u32, v: u32) -> u32 {
    let old: u32;
    // SAFETY: the caller passes a valid global address.
    unsafe { asm!("atom.add.acq_rel.gpu.u32 {o}, [{p}], {v};", o = out(reg32) old, p = in(reg64) p, v = in(reg32) v, options(nostack)) };
    old
}

/// `fence.acq_rel.gpu`: a release and an acquire fence at GPU scope. It
/// orders this thread's earlier accesses before its later writes, and its
/// earlier reads before its later accesses; it does not order an earlier
/// write before a later read. `__threadfence()` is the stronger
/// `fence.sc.gpu`, which does.
#[inline(always)]
pub fn fence_acq_rel_gpu() {
    // SAFETY: a fence has no preconditions.
    unsafe { asm!("fence.acq_rel.gpu;", options(nostack)) };
}

/// `ld.acquire.gpu.u32`: reads `p`; writes released before the value it reads
/// are visible to this thread's later reads.
///
/// # Safety
/// `p` is a valid, aligned global address.
#[inline(always)]
pub unsafe fn ld_acquire_gpu(p: *const u32) -> u32 {
    let v: u32;
    // SAFETY: the caller passes a valid global address.
    unsafe { asm!("ld.acquire.gpu.u32 {v}, [{p}];", v = out(reg32) v, p = in(reg64) p, options(nostack)) };
    v
}

/// `red.release.gpu.global.add.u32`: adds `v` at `p`, nothing returned;
/// this thread's earlier accesses (and those it has observed) are ordered
/// before the add at GPU scope.
///
/// # Safety
/// `p` is a valid, aligned global address.
#[inline(always)]
pub unsafe fn red_add_release_gpu(p: *mut u32, v: u32) {
    // SAFETY: the caller passes a valid global address.
    unsafe { asm!("red.release.gpu.global.add.u32 [{p}], {v};", p = in(reg64) p, v = in(reg32) v, options(nostack)) };
}

/// `ld.relaxed.gpu.u32`: a read of `p` that sees other threads' writes at
/// GPU scope, without ordering anything around it.
///
/// # Safety
/// `p` is a valid, aligned global address.
#[inline(always)]
pub unsafe fn ld_relaxed_gpu(p: *const u32) -> u32 {
    let v: u32;
    // SAFETY: the caller passes a valid global address.
    unsafe { asm!("ld.relaxed.gpu.u32 {v}, [{p}];", v = out(reg32) v, p = in(reg64) p, options(nostack)) };
    v
}

/// `st.relaxed.gpu.u32`: a write of `p` other threads see at GPU scope,
/// without ordering anything around it.
///
/// # Safety
/// `p` is a valid, aligned global address.
#[inline(always)]
pub unsafe fn st_relaxed_gpu(p: *mut u32, v: u32) {
    // SAFETY: the caller passes a valid global address.
    unsafe { asm!("st.relaxed.gpu.u32 [{p}], {v};", p = in(reg64) p, v = in(reg32) v, options(nostack)) };
}

/// `ld.relaxed.gpu.u64`: a read of the 8-byte word at `p` that sees other
/// threads' writes at GPU scope, without ordering anything around it.
///
/// # Safety
/// `p` is a valid, 8-byte-aligned global address.
#[inline(always)]
pub unsafe fn ld_relaxed_gpu_b64(p: *const u64) -> u64 {
    let v: u64;
    // SAFETY: the caller passes a valid global address.
    unsafe { asm!("ld.relaxed.gpu.u64 {v}, [{p}];", v = out(reg64) v, p = in(reg64) p, options(nostack)) };
    v
}

/// `st.relaxed.gpu.u64`: a write of the 8-byte word at `p` other threads
/// see at GPU scope, without ordering anything around it.
///
/// # Safety
/// `p` is a valid, 8-byte-aligned global address.
#[inline(always)]
pub unsafe fn st_relaxed_gpu_b64(p: *mut u64, v: u64) {
    // SAFETY: the caller passes a valid global address.
    unsafe { asm!("st.relaxed.gpu.u64 [{p}], {v};", p = in(reg64) p, v = in(reg64) v, options(nostack)) };
}

/// `%dynamic_smem_size`: the bytes of dynamic shared memory this launch
/// gave each block (PTX ISA 4.1).
#[inline(always)]
pub fn dynamic_smem_size() -> u32 {
    let v: u32;
    // SAFETY: reading a special register has no preconditions.
    unsafe { asm!("mov.u32 {v}, %dynamic_smem_size;", v = out(reg32) v, options(pure, nomem, nostack)) };
    v
}

/// `st.release.gpu.u32`: writes `v` at `p`; this thread's earlier accesses
/// (and those it has observed) are ordered before it at GPU scope.
///
/// # Safety
/// `p` is a valid, aligned global address.
#[inline(always)]
pub unsafe fn st_release_gpu(p: *mut u32, v: u32) {
    // SAFETY: the caller passes a valid global address.
    unsafe { asm!("st.release.gpu.u32 [{p}], {v};", p = in(reg64) p, v = in(reg32) v, options(nostack)) };
}

/// `atom.cas.relaxed.sys.b32`: writes `new` at `p` if it holds `expected`;
/// returns the old value. System scope, so host-mapped memory works.
///
/// # Safety
/// `p` is a valid, aligned address.
#[inline(always)]
pub unsafe fn atom_cas_sys(p: *mut u32, expected: u32, new: u32) -> u32 {
    let old: u32;
    // SAFETY: the caller passes a valid address.
    unsafe {
        asm!("atom.cas.relaxed.sys.b32 {o}, [{p}], {e}, {n};", o = out(reg32) old, p = in(reg64) p, e = in(reg32) expected, n = in(reg32) new, options(nostack))
    };
    old
}

/// `ld.acquire.sys.u32`: reads `p`; writes released at system scope (by
/// another GPU or the host) before the value it reads are visible to this
/// thread's later reads.
///
/// # Safety
/// `p` is a valid, aligned address (host-mapped memory works).
#[inline(always)]
pub unsafe fn ld_acquire_sys(p: *const u32) -> u32 {
    let v: u32;
    // SAFETY: the caller passes a valid address.
    unsafe { asm!("ld.acquire.sys.u32 {v}, [{p}];", v = out(reg32) v, p = in(reg64) p, options(nostack)) };
    v
}

/// `st.release.sys.u32`: writes `v` at `p`; this thread's earlier writes
/// (and those it has observed) become visible system-wide before it does.
///
/// # Safety
/// `p` is a valid, aligned address (host-mapped memory works).
#[inline(always)]
pub unsafe fn st_release_sys(p: *mut u32, v: u32) {
    // SAFETY: the caller passes a valid address.
    unsafe { asm!("st.release.sys.u32 [{p}], {v};", p = in(reg64) p, v = in(reg32) v, options(nostack)) };
}

/// `nanosleep.u32`: lets the warp sleep about `ns` nanoseconds (sm_70+), so
/// that a thread polling memory another device writes does not flood it.
#[inline(always)]
pub fn nanosleep(ns: u32) {
    // SAFETY: no preconditions.
    unsafe { asm!("nanosleep.u32 {n};", n = in(reg32) ns, options(nomem, nostack)) };
}

/// `st.volatile.u32`: a store the compiler keeps as written.
///
/// # Safety
/// `p` is a valid, aligned address.
#[inline(always)]
pub unsafe fn st_volatile(p: *mut u32, v: u32) {
    // SAFETY: the caller passes a valid address.
    unsafe { asm!("st.volatile.u32 [{p}], {v};", p = in(reg64) p, v = in(reg32) v, options(nostack)) };
}

/// `fence.sc.sys`: this thread's earlier writes are visible system-wide (to the
/// host too) before any later one.
#[inline(always)]
pub fn fence_sys() {
    // SAFETY: a fence has no preconditions.
    unsafe { asm!("fence.sc.sys;", options(nostack)) };
}

/// `ld.global.nc.b32`: a 4-byte read through the read-only data cache (`__ldg`).
///
/// # Safety
/// `p` is a valid, aligned global address nothing writes while the kernel runs.
#[inline(always)]
pub unsafe fn ldg_b32(p: *const u32) -> u32 {
    let v: u32;
    // SAFETY: the caller guarantees a valid, read-only address.
    unsafe { asm!("ld.global.nc.b32 {v}, [{p}];", v = out(reg32) v, p = in(reg64) p, options(pure, readonly, nostack)) };
    v
}

/// `ld.global.nc.b64`: an 8-byte read through the read-only data cache (`__ldg`).
///
/// # Safety
/// As [`ldg_b32`], 8-byte aligned.
#[inline(always)]
pub unsafe fn ldg_b64(p: *const u64) -> u64 {
    let v: u64;
    // SAFETY: the caller guarantees a valid, read-only address.
    unsafe { asm!("ld.global.nc.b64 {v}, [{p}];", v = out(reg64) v, p = in(reg64) p, options(pure, readonly, nostack)) };
    v
}

/// `ld.global.nc.v2.b32`: two 4-byte words in one 8-byte read through the
/// read-only cache.
///
/// # Safety
/// `p` is valid, 8-byte aligned, and nothing writes it while the kernel runs.
#[inline(always)]
pub unsafe fn ldg_b32x2(p: *const u32) -> [u32; 2] {
    let (a, b): (u32, u32);
    // SAFETY: the caller guarantees a valid, aligned, read-only address.
    unsafe { asm!("ld.global.nc.v2.b32 {{{a}, {b}}}, [{p}];", a = out(reg32) a, b = out(reg32) b, p = in(reg64) p, options(pure, readonly, nostack)) };
    [a, b]
}

/// `ld.global.nc.v4.b32`: four 4-byte words in one 16-byte read through
/// the read-only cache.
///
/// # Safety
/// `p` is valid, 16-byte aligned, and nothing writes it while the kernel runs.
#[inline(always)]
pub unsafe fn ldg_b32x4(p: *const u32) -> [u32; 4] {
    let (a, b, c, d): (u32, u32, u32, u32);
    // SAFETY: the caller guarantees a valid, aligned, read-only address.
    unsafe {
        asm!("ld.global.nc.v4.b32 {{{a}, {b}, {c}, {d}}}, [{p}];",
             a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d, p = in(reg64) p,
             options(pure, readonly, nostack))
    };
    [a, b, c, d]
}

/// `ld.global.nc.v4.f32`: four floats in one 16-byte read through the
/// read-only cache.
///
/// # Safety
/// `p` is valid, 16-byte aligned, and nothing writes it while the kernel runs.
#[inline(always)]
pub unsafe fn ldg_f32x4(p: *const f32) -> [f32; 4] {
    let (a, b, c, d): (f32, f32, f32, f32);
    // SAFETY: the caller guarantees a valid, aligned, read-only address.
    unsafe {
        asm!("ld.global.nc.v4.f32 {{{a}, {b}, {c}, {d}}}, [{p}];",
             a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d, p = in(reg64) p,
             options(pure, readonly, nostack))
    };
    [a, b, c, d]
}
