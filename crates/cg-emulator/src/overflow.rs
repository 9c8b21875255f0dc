//! A GPU thread that overflows its emulated stack, named.
//!
//! Each emulated thread runs on a stack slot above a guard page
//! ([`super::stack::Slots`]). Unbounded recursion in a kernel runs into that
//! page, and the process would die of a bare `SIGSEGV`. On a GPU the same
//! kernel fails its launch with a named error (`cudaErrorLaunchFailure` or
//! a stack-size error), so here a `SIGSEGV` handler looks up the faulting
//! address: in a guard page of a slot, it writes which kernel, block and
//! thread overflowed before the process dies of the signal as before; any
//! other fault goes on to the handler that was there (Rust's own, which
//! names an overflow of an OS thread's stack).
//!
//! The handler may only do async-signal-safe work: it reads a fixed table
//! of atomics, formats into a stack buffer and calls `write(2)`.

use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering};

/// Slot regions the handler can name at once (one per worker of each
/// launch running); a region past these faults as a bare `SIGSEGV`.
const REGIONS: usize = 512;

/// One worker's stack slots, as the handler sees them.
struct Region {
    /// 0: free; 1: being filled in; else the region's first byte.
    start: AtomicUsize,
    end: AtomicUsize,
    stride: AtomicUsize,
    guard: AtomicUsize,
    /// The running kernel's name (a `&'static str`), and its block.
    kernel: AtomicPtr<u8>,
    kernel_len: AtomicUsize,
    block: AtomicU32,
}

#[allow(clippy::declare_interior_mutable_const, reason = "the initializer of each table entry")]
const FREE: Region = Region {
    start: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
    stride: AtomicUsize::new(0),
    guard: AtomicUsize::new(0),
    kernel: AtomicPtr::new(std::ptr::null_mut()),
    kernel_len: AtomicUsize::new(0),
    block: AtomicU32::new(0),
};

static TABLE: [Region; REGIONS] = [FREE; REGIONS];

/// A registered slot region; unregistered when dropped.
pub struct Registered(Option<usize>);

/// Registers `count` slots of `stride` bytes from `start`, each beginning
/// with a guard page of `guard` bytes, installing the handler on first use.
pub fn register(start: usize, stride: usize, count: usize, guard: usize) -> Registered {
    install();
    for (i, r) in TABLE.iter().enumerate() {
        if r.start.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).is_ok() {
            r.end.store(start + stride * count, Ordering::Relaxed);
            r.stride.store(stride, Ordering::Relaxed);
            r.guard.store(guard, Ordering::Relaxed);
            r.kernel_len.store(0, Ordering::Relaxed);
            r.start.store(start, Ordering::Release);
            return Registered(Some(i));
        }
    }
    Registered(None)
}

impl Registered {
    /// The worker now runs block `block` of `kernel`, for the message.
    pub fn running(&self, kernel: &'static str, block: u32) {
        if let Some(i) = self.0 {
            let r = &TABLE[i];
            r.kernel_len.store(0, Ordering::Relaxed);
            r.kernel.store(kernel.as_ptr() as *mut u8, Ordering::Relaxed);
            r.block.store(block, Ordering::Relaxed);
            r.kernel_len.store(kernel.len(), Ordering::Release);
        }
    }

    /// Takes the region out of the table.
    pub fn release(&mut self) {
        if let Some(i) = self.0.take() {
            TABLE[i].start.store(0, Ordering::Release);
        }
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.release();
    }
}

fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: zeroed `sigaction`s are valid, and sigaction reads `ours`
        // and writes `old`, both live; the handler is async-signal-safe.
        unsafe {
            let mut ours: libc::sigaction = std::mem::zeroed();
            ours.sa_sigaction = on_segv as *const () as usize;
            ours.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut ours.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGSEGV, std::ptr::null(), &mut old) == 0 {
                // Kept before ours is installed, so the handler always finds it.
                PREVIOUS.store(Box::into_raw(Box::new(old)), Ordering::Release);
                libc::sigaction(libc::SIGSEGV, &ours, std::ptr::null_mut());
            }
        }
    });
}

/// The `SIGSEGV` action installed before ours, to pass other faults on
/// to (a leaked box, set once).
static PREVIOUS: AtomicPtr<libc::sigaction> = AtomicPtr::new(std::ptr::null_mut());

/// Which table entry and slot hold `address` in a guard page.
fn guard_hit(address: usize) -> Option<(&'static Region, usize)> {
    TABLE.iter().find_map(|r| {
        let start = r.start.load(Ordering::Acquire);
        if start <= 1 || address < start || address >= r.end.load(Ordering::Relaxed) {
            return None;
        }
        let stride = r.stride.load(Ordering::Relaxed);
        let offset = address - start;
        (offset % stride < r.guard.load(Ordering::Relaxed)).then_some((r, offset / stride))
    })
}

/// A message in a fixed buffer: `write(2)` needs no allocation.
struct Line {
    bytes: [u8; 512],
    len: usize,
}

impl Line {
    fn push(&mut self, s: &[u8]) {
        let n = s.len().min(self.bytes.len() - self.len);
        self.bytes[self.len..self.len + n].copy_from_slice(&s[..n]);
        self.len += n;
    }

    fn number(&mut self, mut v: usize) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.push(&digits[i..]);
    }
}

/// What the handler writes for thread `thread` of the region's block.
fn message(r: &Region, thread: usize) -> Line {
    let mut line = Line { bytes: [0; 512], len: 0 };
    line.push(b"\nerror: thread ");
    line.number(thread);
    line.push(b" of block ");
    line.number(r.block.load(Ordering::Relaxed) as usize);
    let len = r.kernel_len.load(Ordering::Acquire);
    if len > 0 {
        line.push(b" of kernel `");
        // SAFETY: the pointer and length of a `&'static str`, published
        // (Release) before the length was.
        line.push(unsafe { std::slice::from_raw_parts(r.kernel.load(Ordering::Relaxed), len) });
        line.push(b"`");
    }
    line.push(b" overflowed its emulated stack (");
    line.number((r.stride.load(Ordering::Relaxed) - r.guard.load(Ordering::Relaxed)) / 1024);
    line.push(b" KiB): unbounded or deep recursion? A GPU thread's stack is smaller still (cudaLimitStackSize, 1 KiB by default)\n");
    line
}

extern "C" fn on_segv(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for a SA_SIGINFO handler.
    let address = unsafe { (*info).si_addr() } as usize;
    if let Some((r, thread)) = guard_hit(address) {
        let line = message(r, thread);
        // SAFETY: write(2) and signal(2) are async-signal-safe; the buffer is live.
        unsafe {
            libc::write(2, line.bytes.as_ptr().cast(), line.len);
            // Returning re-runs the faulting access, which now kills the
            // process by the signal, as it would have without us.
            libc::signal(signal, libc::SIG_DFL);
        }
        return;
    }
    let previous = PREVIOUS.load(Ordering::Acquire);
    // SAFETY: set once, before this handler was installed, and never freed.
    let Some(old) = (unsafe { previous.as_ref() }) else {
        // SAFETY: as above.
        unsafe { libc::signal(signal, libc::SIG_DFL) };
        return;
    };
    match old.sa_sigaction {
        libc::SIG_DFL | libc::SIG_IGN => {
            // SAFETY: as above; an ignored SIGSEGV would re-fault for ever.
            unsafe { libc::signal(signal, libc::SIG_DFL) };
        }
        f if old.sa_flags & libc::SA_SIGINFO != 0 => {
            // SAFETY: a handler installed with SA_SIGINFO takes these three arguments.
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) = unsafe { std::mem::transmute(f) };
            f(signal, info, context)
        }
        f => {
            // SAFETY: a handler installed without SA_SIGINFO takes the signal alone.
            let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(f) };
            f(signal)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_kernel_block_and_thread() {
        let r = register(1 << 20, (256 << 10) + 4096, 4, 4096);
        r.running("sum_kernel", 7);
        let slot = (256 << 10) + 4096;
        let (region, thread) = guard_hit((1 << 20) + 2 * slot + 100).expect("a guard page");
        assert_eq!(thread, 2);
        assert!(guard_hit((1 << 20) + 2 * slot + 4096).is_none(), "above the guard page is the stack");
        let line = message(region, thread);
        let text = std::str::from_utf8(&line.bytes[..line.len]).unwrap();
        assert!(text.contains("error: thread 2 of block 7 of kernel `sum_kernel` overflowed its emulated stack (256 KiB)"), "{text}");
        drop(r);
        assert!(guard_hit((1 << 20) + 100).is_none(), "an unregistered region is not looked up");
    }
}
