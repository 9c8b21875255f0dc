//! A grid across GPUs: one cooperative launch on each, meeting at one
//! barrier. The successor of `cg::this_multi_grid()`, which needed
//! `cudaLaunchCooperativeKernelMultiDevice` (deprecated in CUDA 11.3, gone
//! from CUDA 13's runtime headers); NVIDIA's own `conjugateGradientMultiDeviceCG`
//! sample now does what this does (its `PeerGroup`): `grid.sync()`, then one
//! thread per GPU meets the other GPUs through flags in memory every GPU can
//! reach (pinned, mapped host memory: no peer access needed) with
//! system-scope acquire and release, then `grid.sync()` again.
//!
//! The barrier's memory ([`barrier_words`] `u32`, zeroed by the host before
//! the first launch): word [`REPORT`] is claimed by the first GPU that gives
//! up waiting, which writes its rank at [`REPORTER`]; word `FLAGS + r` is the
//! number of barriers GPU `r` has reached. A GPU waits for every flag to reach
//! its own; the wait is bounded ([`TIMEOUT_NS`]), so a GPU whose grid never
//! arrives is named instead of hanging the others.

use super::grid::GridGroup;
use crate::arch;
use crate::mem::Out;
use core::cell::Cell;

/// Word of the barrier the first GPU to give up claims.
pub const REPORT: usize = 0;
/// Word it writes its rank to.
pub const REPORTER: usize = 1;
/// First of the per-GPU flags.
pub const FLAGS: usize = 2;
/// What the claimed report word holds.
pub const REPORT_MAGIC: u32 = 0x6d67_5ace;
/// How long a GPU waits at the barrier for the others before giving up.
pub const TIMEOUT_NS: u64 = 5_000_000_000;

/// `u32` words of barrier memory for `gpus` GPUs.
pub const fn barrier_words(gpus: u32) -> usize {
    FLAGS + gpus as usize
}

/// The grids of `num_grids` GPUs, this one `grid_rank` among them (CUDA 11's
/// `cg::multi_grid_group`).
pub struct MultiGridGroup<'g> {
    grid: &'g GridGroup,
    barrier: Out<u32>,
    rank: u32,
    gpus: u32,
    /// This thread's [`next_generation`](MultiGridGroup::next_generation),
    /// once read (0 before): each read of the flag is a round trip across
    /// the bus to host memory.
    next: Cell<u32>,
}

/// This grid as one of `gpus` meeting at `barrier` (`cg::this_multi_grid()`,
/// which took these from the multi-device launch). Every GPU's kernel must be
/// a cooperative launch, all running at once: the host launches one per GPU.
#[inline(always)]
pub fn this_multi_grid(grid: &GridGroup, barrier: Out<u32>, rank: u32, gpus: u32) -> MultiGridGroup<'_> {
    MultiGridGroup { grid, barrier, rank, gpus, next: Cell::new(0) }
}

impl MultiGridGroup<'_> {
    /// This GPU's rank among the grids (`grid_rank()`).
    #[inline(always)]
    pub fn grid_rank(&self) -> u32 {
        self.rank
    }

    /// The number of grids (`num_grids()`).
    #[inline(always)]
    pub fn num_grids(&self) -> u32 {
        self.gpus
    }

    /// The number of the next barrier on this GPU (1 before the first
    /// `sync()`): which half of a double-buffered exchange to write into
    /// before it, and, less one, which half the barrier just passed filled.
    /// Read from the barrier's memory once per thread; the thread that meets
    /// the other GPUs counts it on from there.
    ///
    /// # Safety
    /// The barrier memory holds [`barrier_words`] words.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn next_generation(&self) -> u32 {
        if self.next.get() == 0 {
            // SAFETY: the caller's contract; only this GPU writes its own flag.
            self.next.set(unsafe { self.barrier.load_acquire_system(FLAGS + self.rank as usize) } + 1);
        }
        self.next.get()
    }

    /// Waits for every thread of every grid: `grid.sync()`, one thread of
    /// block 0 meets the other GPUs, `grid.sync()`. Every write before it, on
    /// any of the GPUs, to memory they share is visible to every thread after
    /// it. If another GPU has not arrived within [`TIMEOUT_NS`], this GPU
    /// records that it gave up and traps (the host names who never arrived).
    ///
    /// # Safety
    /// The barrier memory holds [`barrier_words`] words that every GPU of the
    /// group reaches (host-mapped), and every GPU's grid calls `sync()`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn sync(&self) {
        // SAFETY: the caller's contract.
        unsafe { self.sync_waiting::<true>() }
    }

    /// [`sync`](Self::sync) without the bound on the wait: what the bound
    /// costs is the difference (`cg-lesson multi-gpu` times both). A GPU that
    /// never arrives hangs the others, so the host launches this only after
    /// the bounded barrier has met on every GPU.
    ///
    /// # Safety
    /// As [`sync`](Self::sync), and every GPU's grid is known to arrive.
    #[doc(hidden)]
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn sync_unbounded(&self) {
        // SAFETY: the caller's contract.
        unsafe { self.sync_waiting::<false>() }
    }

    /// # Safety
    /// As [`sync`](Self::sync).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn sync_waiting<const BOUNDED: bool>(&self) {
        self.grid.sync();
        if self.grid.block_rank() == 0 && super::this_thread_block().thread_rank() == 0 {
            // SAFETY: the caller's contract.
            unsafe { self.meet::<BOUNDED>() };
        }
        self.grid.sync();
    }

    /// Block 0's thread 0 raises this GPU's flag and waits for every other.
    ///
    /// # Safety
    /// As [`sync`](Self::sync).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn meet<const BOUNDED: bool>(&self) {
        // SAFETY: the caller's contract (for every access below).
        let generation = unsafe { self.next_generation() };
        // Releases everything this block wrote, and, through the grid.sync()
        // before, everything the grid wrote.
        unsafe { self.barrier.store_release_system(FLAGS + self.rank as usize, generation) };
        let start = if BOUNDED { arch::global_timer() } else { 0 };
        for other in (0..self.gpus).filter(|&r| r != self.rank) {
            while unsafe { self.barrier.load_acquire_system(FLAGS + other as usize) } < generation {
                if BOUNDED && arch::global_timer().wrapping_sub(start) > TIMEOUT_NS {
                    unsafe { self.give_up() };
                }
                arch::nanosleep(32);
            }
        }
        self.next.set(generation + 1);
    }

    /// Records that this GPU gave up waiting, then traps.
    ///
    /// # Safety
    /// As [`sync`](Self::sync).
    #[cold]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn give_up(&self) -> ! {
        // SAFETY: the caller's contract.
        unsafe {
            if self.barrier.compare_swap_system(REPORT, 0, REPORT_MAGIC) == 0 {
                self.barrier.store_release_system(REPORTER, self.rank);
            }
        }
        #[cfg(target_arch = "nvptx64")]
        arch::trap();
        #[cfg(not(target_arch = "nvptx64"))]
        cg_emulator::thread::multi_grid_timeout(self.rank, TIMEOUT_NS)
    }
}
