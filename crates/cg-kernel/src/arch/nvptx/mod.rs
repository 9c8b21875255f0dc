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

mod atomics;
mod cluster;
mod memory;

pub use atomics::*;
pub use cluster::*;
pub use memory::*;

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

/// `trap`: aborts the kernel; the launch reports an error to the host.
#[inline(always)]
pub fn trap() -> ! {
    // SAFETY: `trap` has no preconditions.
    unsafe { nvptx::trap() }
}
