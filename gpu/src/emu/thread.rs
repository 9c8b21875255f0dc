//! The emulated registers of the GPU thread an OS thread is running.

use super::block::Block;
use super::warp::Warp;
use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// One emulated GPU thread's view of its launch.
pub(crate) struct ThreadCtx {
    pub tid: [u32; 3],
    pub bid: [u32; 3],
    pub bdim: [u32; 3],
    pub gdim: [u32; 3],
    pub lane: u32,
    pub warp: Arc<Warp>,
    pub block: Arc<Block>,
    pub workspace: *mut u32,
    pub abort: Arc<AtomicBool>,
}

// SAFETY: the workspace pointer is a launch's atomic grid workspace, used only atomically.
unsafe impl Send for ThreadCtx {}

thread_local! {
    static CTX: RefCell<Option<ThreadCtx>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's context.
pub(crate) fn with<R>(f: impl FnOnce(&ThreadCtx) -> R) -> R {
    CTX.with(|c| f(c.borrow().as_ref().expect("a GPU function was called outside an emulated launch")))
}

pub(crate) fn enter(ctx: ThreadCtx) {
    CTX.with(|c| *c.borrow_mut() = Some(ctx));
}

pub(crate) fn leave() -> Option<ThreadCtx> {
    CTX.with(|c| c.borrow_mut().take())
}

/// What a trapping kernel thread unwinds with.
pub(crate) struct Trap;
/// What a thread unwinds with when another thread of the launch trapped.
pub(crate) struct Aborted;

pub(crate) fn trap() -> ! {
    std::panic::panic_any(Trap)
}

/// Unwinds if the launch was aborted. Every wait calls it while holding the
/// lock it waits on, and an abort takes each such lock before waking its
/// waiters, so no waiter misses the abort.
pub(crate) fn check_abort(ctx: &ThreadCtx) {
    if ctx.abort.load(Ordering::Acquire) {
        unwind_aborted()
    }
}

/// Ends this thread's part in an aborted launch.
pub(crate) fn unwind_aborted() -> ! {
    std::panic::panic_any(Aborted)
}

thread_local! {
    static SPINS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Lets other threads run, for a thread that spins on memory: a few yields,
/// then short sleeps, so that spinning waiters leave the cores to the threads
/// they wait for. [`arrive`] starts a new wait.
pub(crate) fn pause() {
    let spins = SPINS.with(|s| s.replace(s.get().saturating_add(1)));
    if spins < 8 {
        std::thread::yield_now();
    } else {
        std::thread::sleep(Duration::from_micros(100));
    }
    with(check_abort);
}

/// Marks the start of a new wait for [`pause`].
pub(crate) fn arrive() {
    SPINS.with(|s| s.set(0));
}

/// Nanoseconds since the first call, for `%globaltimer`.
pub(crate) fn nanos() -> u64 {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}
