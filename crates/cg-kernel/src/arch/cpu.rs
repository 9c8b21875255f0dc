//! The same functions as `nvptx.rs`, for kernels running on the emulator
//! (the cg-emulator crate): each reads the emulated thread's registers or takes part
//! in its block's barriers and its warp's collectives. Same names, same
//! signatures, same safety contracts, so `cg` compiles against either.
#![allow(clippy::missing_safety_doc)]

use cg_emulator::thread;

pub fn thread_idx() -> [u32; 3] {
    thread::thread_idx()
}
pub fn block_dim() -> [u32; 3] {
    thread::block_dim()
}
pub fn block_idx() -> [u32; 3] {
    thread::block_idx()
}
pub fn grid_dim() -> [u32; 3] {
    thread::grid_dim()
}
pub fn lane_id() -> u32 {
    thread::lane_id()
}
/// Nanoseconds since the emulator first read its clock; each read counts as
/// a memory access, so a kernel waiting on it still meets the timeout.
pub fn global_timer() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    thread::tick();
    START.get_or_init(std::time::Instant::now).elapsed().as_nanos() as u64
}
#[track_caller]
pub unsafe fn sync_threads() {
    thread::sync_threads()
}
/// The emulator has one block barrier: it names threads that arrive from
/// different calls, and cannot see a warp that arrives split.
#[track_caller]
pub unsafe fn sync_threads_aligned() {
    thread::sync_threads()
}
#[track_caller]
pub unsafe fn sync_warp(mask: u32) {
    thread::sync_warp(mask)
}
#[track_caller]
pub fn active_mask() -> u32 {
    thread::active_mask()
}
#[track_caller]
pub unsafe fn shfl_down(mask: u32, v: u32, delta: u32, c: u32) -> u32 {
    thread::shuffle(thread::Mode::Down, mask, v, delta, c)
}
#[track_caller]
pub unsafe fn shfl_up(mask: u32, v: u32, delta: u32, c: u32) -> u32 {
    thread::shuffle(thread::Mode::Up, mask, v, delta, c)
}
#[track_caller]
pub unsafe fn shfl_xor(mask: u32, v: u32, lane_mask: u32, c: u32) -> u32 {
    thread::shuffle(thread::Mode::Bfly, mask, v, lane_mask, c)
}
#[track_caller]
pub unsafe fn shfl_idx(mask: u32, v: u32, src: u32, c: u32) -> u32 {
    thread::shuffle(thread::Mode::Idx, mask, v, src, c)
}
#[track_caller]
pub unsafe fn ballot(mask: u32, pred: bool) -> u32 {
    thread::ballot(mask, pred)
}
#[track_caller]
pub unsafe fn match_any_b32(mask: u32, v: u32) -> u32 {
    thread::match_any(mask, v as u64, false)
}
#[track_caller]
pub unsafe fn match_any_b64(mask: u32, v: u64) -> u32 {
    thread::match_any(mask, v, true)
}
#[track_caller]
pub unsafe fn match_all_b32(mask: u32, v: u32) -> (u32, bool) {
    let lanes = thread::match_all(mask, v as u64, false);
    (lanes, lanes != 0)
}
#[track_caller]
pub unsafe fn match_all_b64(mask: u32, v: u64) -> (u32, bool) {
    let lanes = thread::match_all(mask, v, true);
    (lanes, lanes != 0)
}
/// Nothing to tell a compiler on the emulator (see the GPU build's).
pub unsafe fn assume(_fact: bool) {}
#[allow(dead_code, reason = "the twin of nvptx::smid, which only the traced GPU build calls")]
/// The resident place of this thread's block: the emulator's SM.
pub fn smid() -> u32 {
    thread::place()
}
pub fn popc(v: u32) -> u32 {
    v.count_ones()
}
/// System-scope acquire load of host memory another emulated device writes.
#[track_caller]
pub unsafe fn ld_acquire_sys(p: *const u32) -> u32 {
    thread::tick();
    // SAFETY: the caller's contract: a valid, aligned address.
    unsafe { std::sync::atomic::AtomicU32::from_ptr(p as *mut u32) }.load(std::sync::atomic::Ordering::Acquire)
}
/// System-scope release store to host memory another emulated device reads.
#[track_caller]
pub unsafe fn st_release_sys(p: *mut u32, v: u32) {
    thread::tick();
    // SAFETY: the caller's contract: a valid, aligned address.
    unsafe { std::sync::atomic::AtomicU32::from_ptr(p) }.store(v, std::sync::atomic::Ordering::Release)
}
/// Lets other workers run while this thread polls memory another emulated
/// device writes.
pub fn nanosleep(ns: u32) {
    std::thread::sleep(std::time::Duration::from_nanos(ns as u64 * 100));
}
/// Compare-and-swap at system scope (the report of a barrier across devices).
pub unsafe fn atom_cas_sys(p: *mut u32, expected: u32, new: u32) -> u32 {
    // SAFETY: the caller's contract: a valid, aligned address.
    let a = unsafe { std::sync::atomic::AtomicU32::from_ptr(p) };
    a.compare_exchange(expected, new, std::sync::atomic::Ordering::AcqRel, std::sync::atomic::Ordering::Acquire).unwrap_or_else(|v| v)
}

/// `%dynamic_smem_size`.
pub fn dynamic_smem_size() -> u32 {
    thread::dynamic_smem_size()
}
/// The emulator's stand-in for the driver's workspace: a non-null pointer
/// (never dereferenced) for a cooperative launch, null otherwise.
pub fn grid_workspace() -> *mut u32 {
    if thread::cooperative() { std::ptr::NonNull::dangling().as_ptr() } else { std::ptr::null_mut() }
}
#[track_caller]
pub fn fence_acq_rel_gpu() {
    thread::not_emulated("thread_fence() (fence.acq_rel.gpu)")
}
pub fn cluster_ctaid() -> [u32; 3] {
    [thread::cluster_ctarank(), 0, 0]
}
pub fn cluster_nctaid() -> [u32; 3] {
    [thread::cluster_nctarank(), 1, 1]
}
pub fn cluster_id() -> [u32; 3] {
    thread::cluster_id()
}
pub fn ncluster_id() -> [u32; 3] {
    thread::ncluster_id()
}
pub fn cluster_ctarank() -> u32 {
    thread::cluster_ctarank()
}
pub fn cluster_nctarank() -> u32 {
    thread::cluster_nctarank()
}
#[track_caller]
pub unsafe fn barrier_cluster_arrive_release() {
    thread::cluster_arrive()
}
#[track_caller]
pub unsafe fn barrier_cluster_wait_acquire() {
    thread::cluster_wait()
}
