//! Thread-block clusters (sm_90+): the cluster's special registers, its
//! barrier, and loads and stores to another block's shared memory.

use super::nvvm;
use core::arch::asm;

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
