//! What every block of a launch shares (the launch, its options, what the
//! watchdog counts and whether it has stopped the launch), and how a panic in
//! an emulated thread becomes a fault rather than a crash. Below the blocks,
//! which read both.

use crate::spec::Launch;
use crate::watch::{Budget, Progress};
use std::cell::RefCell;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// What every block of a launch shares: read-only, but for what the
/// watchdog counts and its stop.
pub(crate) struct LaunchInfo<'a> {
    pub launch: &'a Launch<'a>,
    pub seed: Option<u64>,
    /// Ordinary launches get a grid workspace too (see `Options`).
    pub workspace_always: bool,
    /// Blocks the device holds at once.
    pub fit: u32,
    /// A pause at every checkpoint (`Options::throttle`).
    pub throttle: Option<std::time::Duration>,
    /// Blocks ended and barriers completed, for the watchdog (`crate::watch`).
    pub progress: Progress,
    /// The timeout in steps, and the thread that watches: woken when a block runs past it.
    pub budget: Budget,
    pub launcher: std::thread::Thread,
    /// Set by the watchdog: every block stops at its next memory access or switch.
    pub abort: AtomicBool,
    /// The arguments in uninitialized memory: their addresses, and the
    /// shadow of which bytes were written (`crate::memory`).
    pub shadows: Vec<ArgShadow>,
    /// The grid collectives' words (cg-kernel's `GridGroup::reduce` and the
    /// rest): `SLOT_WORDS` per block, in two slots by the parity of the grid
    /// barriers a block has reached, as the GPU's launch memory holds them
    /// (`cg_barrier::launch_memory`). Ordered by the grid barrier between
    /// the write and the reads.
    pub gathered: [Box<[AtomicU64]>; 2],
}

/// An argument in memory allocated uninitialized: the bytes it spans, and
/// its allocation's first address and shadow.
pub(crate) struct ArgShadow {
    pub start: usize,
    pub end: usize,
    pub allocation: usize,
    pub shadow: std::sync::Arc<super::memory::Shadow>,
}

impl LaunchInfo<'_> {
    /// The shadow of the uninitialized memory `address .. address + bytes`
    /// lies in, with the byte offset of `address` in it; `None` for memory
    /// allocated zeroed.
    #[inline]
    pub fn shadow(&self, address: usize, bytes: usize) -> Option<(&super::memory::Shadow, usize)> {
        if self.shadows.is_empty() {
            return None;
        }
        self.shadows.iter().find(|s| s.start <= address && address + bytes <= s.end).map(|s| (&*s.shadow, address - s.allocation))
    }
}

impl LaunchInfo<'_> {
    /// Whether the watchdog has stopped the launch.
    #[inline]
    pub fn aborted(&self) -> bool {
        self.abort.load(Ordering::Relaxed)
    }
}

thread_local! {
    /// Set while a worker resumes an emulated GPU thread.
    static IN_KERNEL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The message of the panic that ended the last one, if it panicked.
    static PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `f` (a resume of a GPU thread); a panic inside becomes `Err` with its message.
pub(crate) fn catching_panics<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    IN_KERNEL.with(|k| k.set(true));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    IN_KERNEL.with(|k| k.set(false));
    r.map_err(|_| PANIC.with(|p| p.borrow_mut().take()).unwrap_or_else(|| "a panic without a message".into()))
}

/// Keeps the panic hook from printing panics of emulated kernels, whose
/// message goes into the fault instead.
pub(crate) fn quiet_kernel_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_KERNEL.with(|k| k.get()) {
                let msg = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".into());
                let at = info.location().map(|l| format!(" at {}:{}:{}", l.file(), l.line(), l.column())).unwrap_or_default();
                PANIC.with(|p| *p.borrow_mut() = Some(format!("{msg}{at}")));
            } else {
                previous(info);
            }
        }));
    });
}
