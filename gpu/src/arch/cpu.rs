//! The same functions as `nvptx.rs`, for kernels running on the emulator
//! ([`crate::emu`]): each GPU thread is an OS thread, and these read its
//! emulated registers or wait with the other lanes of its warp.
//!
//! What the CPU cannot follow: lanes are not in lock step between collective
//! calls (as under independent thread scheduling on sm_70+, so correct kernels
//! behave the same), and `active_mask` groups the lanes of a warp that reach
//! the same call site while no other lane of the warp is still running.
#![allow(clippy::missing_safety_doc)]

use crate::emu::thread;
use std::sync::atomic::{AtomicU32, Ordering};

pub fn thread_idx() -> [u32; 3] {
    thread::with(|t| t.tid)
}
pub fn block_dim() -> [u32; 3] {
    thread::with(|t| t.bdim)
}
pub fn block_idx() -> [u32; 3] {
    thread::with(|t| t.bid)
}
pub fn grid_dim() -> [u32; 3] {
    thread::with(|t| t.gdim)
}
pub fn lane_id() -> u32 {
    thread::with(|t| t.lane)
}
#[cfg_attr(not(feature = "barrier-timeout"), allow(dead_code))]
pub fn global_timer() -> u64 {
    thread::nanos()
}
pub fn sync_threads() {
    thread::with(|t| t.block.sync(t))
}
pub fn sync_warp(mask: u32) {
    thread::with(|t| t.warp.exchange(t, mask, 0));
}
#[track_caller]
pub fn active_mask() -> u32 {
    let site = core::panic::Location::caller();
    let site = (site.file().as_ptr() as usize) ^ ((site.line() as usize) << 20) ^ site.column() as usize;
    thread::with(|t| t.warp.active_mask(t, site))
}

/// The four `shfl.sync` modes.
#[derive(Clone, Copy)]
enum Mode {
    Up,
    Down,
    Bfly,
    Idx,
}

/// The source lane of a `shfl.sync` in `mode`, from PTX's rules for `b` and
/// `c`; `None` where PTX returns the thread's own value.
fn shfl_source(lane: u32, mode: Mode, b: u32, c: u32) -> Option<u32> {
    let seg = (c >> 8) & 0x1f;
    let clamp = c & 0x1f;
    let min_lane = lane & seg;
    let max_lane = min_lane | (clamp & !seg);
    let (j, ok) = match mode {
        Mode::Up => (lane.wrapping_sub(b), lane >= b && lane - b >= max_lane),
        Mode::Down => (lane + b, lane + b <= max_lane),
        Mode::Bfly => (lane ^ b, (lane ^ b) <= max_lane),
        Mode::Idx => (min_lane | (b & !seg), (min_lane | (b & !seg)) <= max_lane),
    };
    (ok && j < 32).then_some(j)
}

fn shfl(mode: Mode, mask: u32, v: u32, b: u32, c: u32) -> u32 {
    thread::with(|t| {
        let values = t.warp.exchange(t, mask, v);
        match shfl_source(t.lane, mode, b, c) {
            Some(j) if mask & (1 << j) != 0 => values[j as usize],
            _ => v,
        }
    })
}
pub fn shfl_down(mask: u32, v: u32, delta: u32, c: u32) -> u32 {
    shfl(Mode::Down, mask, v, delta, c)
}
pub fn shfl_up(mask: u32, v: u32, delta: u32, c: u32) -> u32 {
    shfl(Mode::Up, mask, v, delta, c)
}
pub fn shfl_xor(mask: u32, v: u32, lane_mask: u32, c: u32) -> u32 {
    shfl(Mode::Bfly, mask, v, lane_mask, c)
}
pub fn shfl_idx(mask: u32, v: u32, src: u32, c: u32) -> u32 {
    shfl(Mode::Idx, mask, v, src, c)
}
pub fn ballot(mask: u32, pred: bool) -> u32 {
    thread::with(|t| {
        let values = t.warp.exchange(t, mask, pred as u32);
        (0..32).filter(|&l| mask & (1 << l) != 0 && values[l] != 0).fold(0, |acc, l| acc | 1 << l)
    })
}
pub fn popc(v: u32) -> u32 {
    v.count_ones()
}
pub fn grid_workspace() -> *mut u32 {
    thread::with(|t| t.workspace)
}
pub unsafe fn atom_add_release_gpu(p: *mut u32, v: u32) -> u32 {
    thread::arrive();
    // SAFETY: the caller passes a valid, aligned address shared only atomically.
    unsafe { AtomicU32::from_ptr(p) }.fetch_add(v, Ordering::AcqRel)
}
pub unsafe fn ld_acquire_gpu(p: *const u32) -> u32 {
    // A spinning caller gives its core to the threads it waits for.
    thread::pause();
    // SAFETY: as above.
    unsafe { AtomicU32::from_ptr(p as *mut u32) }.load(Ordering::Acquire)
}
#[cfg_attr(not(feature = "barrier-timeout"), allow(dead_code))]
pub unsafe fn atom_cas_sys(p: *mut u32, expected: u32, new: u32) -> u32 {
    // SAFETY: as above.
    match unsafe { AtomicU32::from_ptr(p) }.compare_exchange(expected, new, Ordering::AcqRel, Ordering::Acquire) {
        Ok(old) | Err(old) => old,
    }
}
#[cfg_attr(not(feature = "barrier-timeout"), allow(dead_code))]
pub unsafe fn st_volatile(p: *mut u32, v: u32) {
    // SAFETY: the caller passes a valid address.
    unsafe { p.write_volatile(v) }
}
#[cfg_attr(not(feature = "barrier-timeout"), allow(dead_code))]
pub fn fence_sys() {
    std::sync::atomic::fence(Ordering::SeqCst)
}
pub unsafe fn ldg_f32(p: *const f32) -> f32 {
    // SAFETY: the caller guarantees a valid, read-only address.
    unsafe { p.read() }
}
pub unsafe fn ldg_f32x4(p: *const f32) -> [f32; 4] {
    // SAFETY: as above, four floats.
    unsafe { [p.read(), p.add(1).read(), p.add(2).read(), p.add(3).read()] }
}
pub fn dynamic_shared<T>() -> *mut T {
    thread::with(|t| t.block.shared() as *mut T)
}
pub fn trap() -> ! {
    thread::trap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cg::lanes::shfl_c;

    #[test]
    fn shuffle_sources_follow_the_ptx_rules() {
        // Whole warp: down and xor stay inside 0..32, idx picks the lane.
        assert_eq!(shfl_source(3, Mode::Down, 16, shfl_c(32, false)), Some(19));
        assert_eq!(shfl_source(20, Mode::Down, 16, shfl_c(32, false)), None);
        assert_eq!(shfl_source(5, Mode::Bfly, 1, shfl_c(32, false)), Some(4));
        assert_eq!(shfl_source(7, Mode::Idx, 0, shfl_c(32, false)), Some(0));
        assert_eq!(shfl_source(2, Mode::Up, 1, shfl_c(32, true)), Some(1));
        assert_eq!(shfl_source(0, Mode::Up, 1, shfl_c(32, true)), None);
        // Tiles of 8: lane 13 is rank 5 of the tile at lanes 8..16.
        assert_eq!(shfl_source(13, Mode::Down, 2, shfl_c(8, false)), Some(15));
        assert_eq!(shfl_source(13, Mode::Down, 3, shfl_c(8, false)), None);
        assert_eq!(shfl_source(13, Mode::Idx, 1, shfl_c(8, false)), Some(9));
        assert_eq!(shfl_source(13, Mode::Bfly, 4, shfl_c(8, false)), Some(9));
        assert_eq!(shfl_source(9, Mode::Up, 2, shfl_c(8, true)), None);
        assert_eq!(shfl_source(11, Mode::Up, 2, shfl_c(8, true)), Some(9));
    }
}
