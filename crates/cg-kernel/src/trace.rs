//! What `cg-lesson trace` draws: each block's SM and the times it started,
//! reached its first `grid.sync()`, left it, and ended (`%smid`,
//! `%globaltimer`), recorded by thread 0 of the block.
//!
//! Only the traced build records (feature `trace`: `cg-builder` builds it
//! as a second PTX module), so the kernels the lesson and the bench time are
//! unchanged; in every other build these calls compile to nothing. The host
//! points `CG_TRACE` (a global of the traced PTX module) at
//! [`WORDS_PER_BLOCK`] zeroed `u64` per block before each traced launch. The
//! emulator records the same events itself (`cg_emulator::BlockTrace`).

/// `u64` per block: SM + 1 (0: never started), start, arrival, departure, end.
pub const WORDS_PER_BLOCK: usize = 5;

/// The most blocks a launch of the traced build may have when the host
/// gives it one buffer for all its launches (to time the recording).
pub const MAX_TIMED_BLOCKS: usize = 1 << 16;

/// Where a traced kernel records, or null.
#[cfg(all(target_arch = "nvptx64", feature = "trace"))]
#[unsafe(no_mangle)]
pub static mut CG_TRACE: *mut u64 = core::ptr::null_mut();

/// Writes `value` to word `word` of this block's record, from thread 0 (a
/// kernel with several `grid.sync()`s keeps its last one's times).
#[cfg(all(target_arch = "nvptx64", feature = "trace"))]
#[inline(always)]
fn record(word: usize, value: impl FnOnce() -> u64) {
    let block = crate::cg::this_thread_block();
    if block.thread_rank() != 0 {
        return;
    }
    // SAFETY: the host writes the pointer before the launch, never during.
    let base = unsafe { core::ptr::addr_of!(CG_TRACE).read_volatile() };
    if base.is_null() {
        return;
    }
    let grid = crate::cg::this_grid();
    // SAFETY: the host gives WORDS_PER_BLOCK words to every block of the launch.
    unsafe { base.add(grid.block_rank() * WORDS_PER_BLOCK + word).write_volatile(value()) };
}

/// The block's first instruction (called by every `#[kernel]` entry).
#[inline(always)]
pub fn block_starts() {
    #[cfg(all(target_arch = "nvptx64", feature = "trace"))]
    {
        record(0, || crate::arch::smid() as u64 + 1);
        record(1, crate::arch::global_timer);
    }
}

/// Thread 0 reaches `grid.sync()` (after the block's own barrier).
#[inline(always)]
pub fn block_arrives() {
    #[cfg(all(target_arch = "nvptx64", feature = "trace"))]
    record(2, crate::arch::global_timer);
}

/// Thread 0 sees the grid barrier complete.
#[inline(always)]
pub fn block_leaves() {
    #[cfg(all(target_arch = "nvptx64", feature = "trace"))]
    record(3, crate::arch::global_timer);
}

/// Thread 0 returns from the kernel.
#[inline(always)]
pub fn block_ends() {
    #[cfg(all(target_arch = "nvptx64", feature = "trace"))]
    record(4, crate::arch::global_timer);
}
