//! PTX instructions the kernels need, one small function each (the PTX build).
//!
//! The model is `core::arch::nvptx`. Reading a special register is safe; an
//! instruction whose misuse is undefined (a barrier or a warp collective
//! that not every named thread reaches, a load from an address the caller
//! does not vouch for) is an `unsafe fn` whose `# Safety` says what the
//! caller must guarantee. The cooperative-groups layer in [`crate::cg`] is
//! the safe surface built on these.
//!
//! Two kinds of instruction, reached two ways:
//! - **Collectives** (block and cluster barriers, warp sync, shuffles, votes,
//!   `match.sync`, `activemask`, `redux.sync`) go through LLVM's NVVM intrinsics
//!   ([`nvvm`] below), which LLVM marks `convergent`: it never copies one
//!   into the two sides of a branch or moves it across one, so one source
//!   call is one instruction in the PTX, and the threads that meet at it
//!   meet at the same instruction. An `asm!` block is opaque to LLVM, which
//!   copied a `block.sync()` placed between two `if t == 0` into both paths
//!   (two `barrier.sync`), and an aligned `bar.sync` copied that way is
//!   undefined behaviour (`host/tests/ptx.rs` counts them).
//! - **Everything else** stays inline assembly, where moving or copying it
//!   changes nothing another thread sees: loads and stores with an ordering,
//!   atomics, fences, special registers, `nanosleep`. Triton draws the same
//!   line.

use core::arch::asm;
use core::arch::nvptx;

/// `%tid`: this thread's index in its block.
#[inline(always)]
pub fn thread_idx() -> [u32; 3] {
    // SAFETY: reading a special register has no preconditions.
    unsafe { [nvptx::_thread_idx_x(), nvptx::_thread_idx_y(), nvptx::_thread_idx_z()].map(|v| v as u32) }
}

/// `%ntid`: the block's dimensions.
#[inline(always)]
pub fn block_dim() -> [u32; 3] {
    // SAFETY: reading a special register has no preconditions.
    unsafe { [nvptx::_block_dim_x(), nvptx::_block_dim_y(), nvptx::_block_dim_z()].map(|v| v as u32) }
}

/// `%ctaid`: this block's index in the grid.
#[inline(always)]
pub fn block_idx() -> [u32; 3] {
    // SAFETY: reading a special register has no preconditions.
    unsafe { [nvptx::_block_idx_x(), nvptx::_block_idx_y(), nvptx::_block_idx_z()].map(|v| v as u32) }
}

/// `%nctaid`: the grid's dimensions in blocks.
#[inline(always)]
pub fn grid_dim() -> [u32; 3] {
    // SAFETY: reading a special register has no preconditions.
    unsafe { [nvptx::_grid_dim_x(), nvptx::_grid_dim_y(), nvptx::_grid_dim_z()].map(|v| v as u32) }
}

/// `%laneid`: this thread's lane in its warp, 0..32.
#[inline(always)]
pub fn lane_id() -> u32 {
    let r: u32;
    // SAFETY: reading a special register has no preconditions.
    unsafe { asm!("mov.u32 {r}, %laneid;", r = out(reg32) r, options(pure, nomem, nostack)) };
    r
}

/// `%smid`: the SM this thread runs on (it may change between instructions
/// only under preemption, which a kernel's trace does not meet).
#[inline(always)]
pub fn smid() -> u32 {
    let r: u32;
    // SAFETY: reading a special register has no preconditions.
    unsafe { asm!("mov.u32 {r}, %smid;", r = out(reg32) r, options(nomem, nostack)) };
    r
}

/// `%globaltimer`: nanoseconds, from a clock shared by the whole GPU.
#[inline(always)]
pub fn global_timer() -> u64 {
    let r: u64;
    // SAFETY: reading a special register has no preconditions.
    unsafe { asm!("mov.u64 {r}, %globaltimer;", r = out(reg64) r, options(nomem, nostack)) };
    r
}

/// LLVM's NVVM intrinsics for the collectives, as stdarch declares them:
/// each is `convergent` in LLVM, which is what keeps it where the source put it.
mod nvvm {
    #[allow(improper_ctypes)]
    unsafe extern "unadjusted" {
        #[link_name = "llvm.nvvm.barrier.cta.sync.all"]
        pub fn barrier_cta_sync_all(id: u32);
        #[link_name = "llvm.nvvm.barrier.cta.sync.aligned.all"]
        pub fn barrier_cta_sync_aligned_all(id: u32);
        #[link_name = "llvm.nvvm.bar.warp.sync"]
        pub fn bar_warp_sync(mask: u32);
        #[link_name = "llvm.nvvm.activemask"]
        pub fn activemask() -> u32;
        #[link_name = "llvm.nvvm.shfl.sync.down.i32"]
        pub fn shfl_sync_down_i32(mask: u32, v: u32, delta: u32, c: u32) -> u32;
        #[link_name = "llvm.nvvm.shfl.sync.up.i32"]
        pub fn shfl_sync_up_i32(mask: u32, v: u32, delta: u32, c: u32) -> u32;
        #[link_name = "llvm.nvvm.shfl.sync.bfly.i32"]
        pub fn shfl_sync_bfly_i32(mask: u32, v: u32, lane_mask: u32, c: u32) -> u32;
        #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
        pub fn shfl_sync_idx_i32(mask: u32, v: u32, src: u32, c: u32) -> u32;
        #[link_name = "llvm.nvvm.vote.ballot.sync"]
        pub fn vote_ballot_sync(mask: u32, pred: bool) -> u32;
        #[link_name = "llvm.nvvm.match.any.sync.i32"]
        pub fn match_any_sync_i32(mask: u32, v: u32) -> u32;
        #[link_name = "llvm.nvvm.match.any.sync.i64"]
        pub fn match_any_sync_i64(mask: u32, v: u64) -> u32;
        // `{i32, i1}`: the lanes, and whether they all matched.
        #[link_name = "llvm.nvvm.match.all.sync.i32p"]
        pub fn match_all_sync_i32p(mask: u32, v: u32) -> (u32, bool);
        #[link_name = "llvm.nvvm.match.all.sync.i64p"]
        pub fn match_all_sync_i64p(mask: u32, v: u64) -> (u32, bool);
        #[cfg(target_feature = "sm_80")]
        #[link_name = "llvm.nvvm.redux.sync.add"]
        pub fn redux_sync_add(v: u32, mask: u32) -> u32;
        #[cfg(target_feature = "sm_80")]
        #[link_name = "llvm.nvvm.redux.sync.umin"]
        pub fn redux_sync_umin(v: u32, mask: u32) -> u32;
        #[cfg(target_feature = "sm_80")]
        #[link_name = "llvm.nvvm.redux.sync.umax"]
        pub fn redux_sync_umax(v: u32, mask: u32) -> u32;
        #[cfg(target_feature = "sm_80")]
        #[link_name = "llvm.nvvm.redux.sync.min"]
        pub fn redux_sync_min(v: i32, mask: u32) -> i32;
        #[cfg(target_feature = "sm_80")]
        #[link_name = "llvm.nvvm.redux.sync.max"]
        pub fn redux_sync_max(v: i32, mask: u32) -> i32;
        #[cfg(target_feature = "sm_80")]
        #[link_name = "llvm.nvvm.redux.sync.and"]
        pub fn redux_sync_and(v: u32, mask: u32) -> u32;
        #[cfg(target_feature = "sm_80")]
        #[link_name = "llvm.nvvm.redux.sync.or"]
        pub fn redux_sync_or(v: u32, mask: u32) -> u32;
        #[cfg(target_feature = "sm_80")]
        #[link_name = "llvm.nvvm.redux.sync.xor"]
        pub fn redux_sync_xor(v: u32, mask: u32) -> u32;
        #[link_name = "llvm.nvvm.barrier.cluster.arrive"]
        pub fn barrier_cluster_arrive();
        #[link_name = "llvm.nvvm.barrier.cluster.wait"]
        pub fn barrier_cluster_wait();
    }
}

/// `barrier.sync 0`: every thread of the block waits here, and the block's
/// memory writes before it are visible to the block after it (C++'s
/// `cg::thread_block::sync()`, which is `__barrier_sync(0)`).
///
/// Not `bar.sync 0`, which nvcc emits for `__syncthreads()`: that is
/// `barrier.sync.aligned 0`, whose behaviour PTX leaves undefined unless
/// every thread of a warp executes the same barrier instruction. This form
/// (PTX ISA 6.0, sm_70+) counts arrivals per thread.
///
/// # Safety
/// Every thread of the block that has not exited reaches a `barrier.sync 0`;
/// otherwise the block hangs, or the barrier pairs up unrelated calls.
#[inline(always)]
pub unsafe fn sync_threads() {
    // SAFETY: the caller's contract.
    unsafe { nvvm::barrier_cta_sync_all(0) }
}

/// `bar.sync 0` (`barrier.sync.aligned 0`): what nvcc emits for
/// `__syncthreads()`. The hardware counts a warp's arrival once, for all
/// its threads, which is why it is cheaper than [`sync_threads`].
///
/// # Safety
/// As [`sync_threads`], and each warp reaches it as one
/// (`cg::ThreadBlock::sync_aligned` says when that holds).
#[inline(always)]
pub unsafe fn sync_threads_aligned() {
    // SAFETY: the caller's contract.
    unsafe { nvvm::barrier_cta_sync_aligned_all(0) }
}

/// `bar.warp.sync mask`: the lanes in `mask` wait for each other, and their
/// memory writes before it are visible to each other after it (`__syncwarp(mask)`).
///
/// # Safety
/// The calling lane is in `mask`, and every lane in `mask` executes a
/// `bar.warp.sync` with the same mask.
#[inline(always)]
pub unsafe fn sync_warp(mask: u32) {
    // SAFETY: the caller's contract.
    unsafe { nvvm::bar_warp_sync(mask) }
}

/// `activemask.b32`: the lanes executing this instruction together (`__activemask()`).
#[inline(always)]
pub fn active_mask() -> u32 {
    // SAFETY: no preconditions.
    unsafe { nvvm::activemask() }
}

macro_rules! shfl {
    ($(#[$doc:meta])* $name:ident, $intrinsic:ident, $b:ident) => {
        $(#[$doc])*
        ///
        /// `c` packs the segment mask and clamp ([`crate::cg::lanes::shfl_c`]).
        ///
        /// # Safety
        /// The calling lane is in `mask`, and every lane in `mask` executes the
        /// same shuffle with the same mask.
        #[inline(always)]
        pub unsafe fn $name(mask: u32, v: u32, $b: u32, c: u32) -> u32 {
            // SAFETY: the caller's contract.
            unsafe { nvvm::$intrinsic(mask, v, $b, c) }
        }
    };
}
shfl!(/// `shfl.sync.down.b32`: the value from lane `lane + delta` of the segment (`__shfl_down_sync`).
    shfl_down, shfl_sync_down_i32, delta);
shfl!(/// `shfl.sync.up.b32`: the value from lane `lane - delta` of the segment (`__shfl_up_sync`).
    shfl_up, shfl_sync_up_i32, delta);
shfl!(/// `shfl.sync.bfly.b32`: the value from lane `lane ^ lane_mask` (`__shfl_xor_sync`).
    shfl_xor, shfl_sync_bfly_i32, lane_mask);
shfl!(/// `shfl.sync.idx.b32`: the value from lane `src` of the segment, modulo its width (`__shfl_sync`).
    shfl_idx, shfl_sync_idx_i32, src);

/// `vote.sync.ballot.b32`: bit `l` set where lane `l` of `mask` has `pred` (`__ballot_sync`).
///
/// # Safety
/// The calling lane is in `mask`, and every lane in `mask` executes the same vote.
#[inline(always)]
pub unsafe fn ballot(mask: u32, pred: bool) -> u32 {
    // SAFETY: the caller's contract.
    unsafe { nvvm::vote_ballot_sync(mask, pred) }
}

/// `match.any.sync.b32`: the lanes of `mask` whose `v` equals this lane's
/// (`__match_any_sync`, sm_70+).
///
/// # Safety
/// The calling lane is in `mask`, and every lane in `mask` executes the same match.
#[inline(always)]
pub unsafe fn match_any_b32(mask: u32, v: u32) -> u32 {
    // SAFETY: the caller's contract.
    unsafe { nvvm::match_any_sync_i32(mask, v) }
}

/// `match.any.sync.b64`: as [`match_any_b32`], for a 64-bit value.
///
/// # Safety
/// As [`match_any_b32`].
#[inline(always)]
pub unsafe fn match_any_b64(mask: u32, v: u64) -> u32 {
    // SAFETY: the caller's contract.
    unsafe { nvvm::match_any_sync_i64(mask, v) }
}

/// `match.all.sync.b32`: `(mask, true)` if every lane of `mask` has the same
/// `v`, else `(0, false)` (`__match_all_sync`, sm_70+).
///
/// # Safety
/// As [`match_any_b32`].
#[inline(always)]
pub unsafe fn match_all_b32(mask: u32, v: u32) -> (u32, bool) {
    // SAFETY: the caller's contract.
    unsafe { nvvm::match_all_sync_i32p(mask, v) }
}

/// `match.all.sync.b64`: as [`match_all_b32`], for a 64-bit value.
///
/// # Safety
/// As [`match_any_b32`].
#[inline(always)]
pub unsafe fn match_all_b64(mask: u32, v: u64) -> (u32, bool) {
    // SAFETY: the caller's contract.
    unsafe { nvvm::match_all_sync_i64p(mask, v) }
}

/// `popc.b32`: the number of set bits (`__popc`).
#[inline(always)]
pub fn popc(v: u32) -> u32 {
    v.count_ones()
}

macro_rules! redux {
    ($(#[$doc:meta])* $name:ident, $ty:ty, $intrinsic:ident) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// The calling lane is in `mask`, and every lane in `mask` executes the same reduction.
        #[cfg(target_feature = "sm_80")]
        #[inline(always)]
        pub unsafe fn $name(mask: u32, v: $ty) -> $ty {
            // SAFETY: the caller's contract.
            unsafe { nvvm::$intrinsic(v as _, mask) as $ty }
        }
    };
}
redux!(/// `redux.sync.add` (sm_80+): the sum over the lanes of `mask` (`__reduce_add_sync`).
    redux_add_u32, u32, redux_sync_add);
redux!(/// `redux.sync.min.u32` (sm_80+) (`__reduce_min_sync`).
    redux_min_u32, u32, redux_sync_umin);
redux!(/// `redux.sync.max.u32` (sm_80+) (`__reduce_max_sync`).
    redux_max_u32, u32, redux_sync_umax);
redux!(/// `redux.sync.add` (sm_80+): two's-complement addition is the same for `i32` (`__reduce_add_sync`).
    redux_add_i32, i32, redux_sync_add);
redux!(/// `redux.sync.min.s32` (sm_80+) (`__reduce_min_sync`).
    redux_min_i32, i32, redux_sync_min);
redux!(/// `redux.sync.max.s32` (sm_80+) (`__reduce_max_sync`).
    redux_max_i32, i32, redux_sync_max);
redux!(/// `redux.sync.and.b32` (sm_80+) (`__reduce_and_sync`).
    redux_and_u32, u32, redux_sync_and);
redux!(/// `redux.sync.or.b32` (sm_80+) (`__reduce_or_sync`).
    redux_or_u32, u32, redux_sync_or);
redux!(/// `redux.sync.xor.b32` (sm_80+) (`__reduce_xor_sync`).
    redux_xor_u32, u32, redux_sync_xor);
redux!(/// `redux.sync.and.b32` (sm_80+): the bits of an `i32` (`__reduce_and_sync`).
    redux_and_i32, i32, redux_sync_and);
redux!(/// `redux.sync.or.b32` (sm_80+): the bits of an `i32` (`__reduce_or_sync`).
    redux_or_i32, i32, redux_sync_or);
redux!(/// `redux.sync.xor.b32` (sm_80+): the bits of an `i32` (`__reduce_xor_sync`).
    redux_xor_i32, i32, redux_sync_xor);

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

/// The block's dynamic shared memory (`extern __shared__ T smem[]`); its size is
/// the launch's dynamic shared-memory byte count.
#[inline(always)]
pub fn dynamic_shared<T>() -> *mut T {
    core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<T>()
}

/// Tells the compiler that `fact` holds, so it can use it (a loop stepping
/// by a block's size, say, then has a trip count and is unrolled); emits no
/// instruction (`__builtin_assume`).
///
/// # Safety
/// `fact` is true: the code after it is undefined otherwise.
#[inline(always)]
pub unsafe fn assume(fact: bool) {
    // SAFETY: the caller's contract.
    unsafe { core::hint::assert_unchecked(fact) }
}

/// Reads three special registers `%name.x`, `.y`, `.z` (sm_90+).
macro_rules! sreg3 {
    ($(#[$doc:meta])* $name:ident, $reg:literal) => {
        $(#[$doc])*
        #[inline(always)]
        pub fn $name() -> [u32; 3] {
            let (x, y, z): (u32, u32, u32);
            // SAFETY: reading special registers has no preconditions.
            unsafe {
                asm!(concat!("mov.u32 {x}, ", $reg, ".x;"), concat!("mov.u32 {y}, ", $reg, ".y;"), concat!("mov.u32 {z}, ", $reg, ".z;"),
                     x = out(reg32) x, y = out(reg32) y, z = out(reg32) z, options(pure, nomem, nostack))
            };
            [x, y, z]
        }
    };
}
sreg3!(/// `%cluster_ctaid` (sm_90+): this block's index in its cluster.
    cluster_ctaid, "%cluster_ctaid");
sreg3!(/// `%cluster_nctaid` (sm_90+): the cluster's dimensions in blocks.
    cluster_nctaid, "%cluster_nctaid");
sreg3!(/// `%clusterid` (sm_90+): this cluster's index in the grid.
    cluster_id, "%clusterid");
sreg3!(/// `%nclusterid` (sm_90+): the grid's dimensions in clusters.
    ncluster_id, "%nclusterid");

/// `%cluster_ctarank` (sm_90+): this block's rank in its cluster, x fastest.
#[inline(always)]
pub fn cluster_ctarank() -> u32 {
    let r: u32;
    // SAFETY: reading a special register has no preconditions.
    unsafe { asm!("mov.u32 {r}, %cluster_ctarank;", r = out(reg32) r, options(pure, nomem, nostack)) };
    r
}

/// `%cluster_nctarank` (sm_90+): the blocks in this cluster.
#[inline(always)]
pub fn cluster_nctarank() -> u32 {
    let r: u32;
    // SAFETY: reading a special register has no preconditions.
    unsafe { asm!("mov.u32 {r}, %cluster_nctarank;", r = out(reg32) r, options(pure, nomem, nostack)) };
    r
}

/// `barrier.cluster.arrive` (sm_90+): this thread arrives at the cluster's
/// barrier; its memory writes before it are released to the cluster
/// (`cluster.barrier_arrive()`). Release is the instruction's default; the
/// `.release` spelling needs PTX ISA 8.0, and this module is 7.8.
///
/// # Safety
/// Every thread of the cluster that has not exited arrives once per phase,
/// and the thread waits ([`barrier_cluster_wait_acquire`]) before it arrives again.
#[inline(always)]
pub unsafe fn barrier_cluster_arrive_release() {
    // SAFETY: the caller's contract.
    unsafe { nvvm::barrier_cluster_arrive() }
}

/// `barrier.cluster.wait` (sm_90+): waits until every thread of the cluster
/// that has not exited has arrived; what they released is visible after it
/// (`cluster.barrier_wait()`; acquire is the default, as release is above).
///
/// # Safety
/// This thread arrived in the current phase.
#[inline(always)]
pub unsafe fn barrier_cluster_wait_acquire() {
    // SAFETY: the caller's contract.
    unsafe { nvvm::barrier_cluster_wait() }
}

/// `cvta.to.shared` then `mapa.shared::cluster` (sm_90+): the address, in
/// the cluster's shared window, of the word at generic address `p` of this
/// block's shared memory, in the block of rank `rank` (`cluster.map_shared_rank`).
///
/// # Safety
/// `p` points into this block's shared memory and `rank` is below the
/// cluster's block count.
#[inline(always)]
pub unsafe fn map_shared_cluster(p: *const u32, rank: u32) -> u32 {
    let a: u32;
    // SAFETY: the caller's contract.
    unsafe {
        asm!("{{ .reg .u64 s; cvta.to.shared.u64 s, {p}; cvt.u32.u64 {a}, s; mapa.shared::cluster.u32 {a}, {a}, {r}; }}",
             a = out(reg32) a, p = in(reg64) p, r = in(reg32) rank, options(pure, nomem, nostack))
    };
    a
}

/// `ld.shared::cluster.b32` (sm_90+): a word of another block's shared memory.
///
/// # Safety
/// `a` came from [`map_shared_cluster`], that block has not exited, and a
/// cluster barrier orders this read after any write of the word.
#[inline(always)]
pub unsafe fn ld_shared_cluster_b32(a: u32) -> u32 {
    let v: u32;
    // SAFETY: the caller's contract.
    unsafe { asm!("ld.shared::cluster.b32 {v}, [{a}];", v = out(reg32) v, a = in(reg32) a, options(nostack, readonly)) };
    v
}

/// `st.shared::cluster.b32` (sm_90+): writes a word of another block's shared memory.
///
/// # Safety
/// As [`ld_shared_cluster_b32`], with every other access of the word.
#[inline(always)]
pub unsafe fn st_shared_cluster_b32(a: u32, v: u32) {
    // SAFETY: the caller's contract.
    unsafe { asm!("st.shared::cluster.b32 [{a}], {v};", a = in(reg32) a, v = in(reg32) v, options(nostack)) };
}

/// `trap`: aborts the kernel; the launch reports an error to the host.
#[inline(always)]
pub fn trap() -> ! {
    // SAFETY: `trap` has no preconditions.
    unsafe { nvptx::trap() }
}

// ---- Element types of 1 and 2 bytes, and atomics (`mem`'s `Word` and `Atomic`) ----

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
