//! Stacks for emulated GPU threads.
//!
//! Every GPU thread is a stackful coroutine, and every thread of a resident
//! block must keep its stack while the block waits at `grid.sync()`: 40,960
//! threads for the lesson's T4, 270,336 for an H200. One mapping with a guard
//! page per stack costs two kernel memory areas per thread, and Linux allows
//! 65,530, so that cannot scale. Instead each worker owns one [`Slots`]
//! region: a slot (with its own guard page) per thread of the block it is
//! running, thread `t` always in slot `t`. A block runs on one worker from
//! start to finish; when it parks at a grid barrier, the used part of each of
//! its threads' stacks is copied out ([`Saved`]) and copied back into the same
//! slot, at the same addresses, before it runs again.

use corosensei::stack::{Stack, StackPointer};
use std::num::NonZeroUsize;

/// Usable bytes of one emulated thread's stack.
pub const STACK_BYTES: usize = 256 * 1024;

/// Bytes below a thread's last recorded stack mark that a suspension may
/// still use (the call into the switch and the registers it pushes).
pub const BELOW_MARK: usize = 1536;

fn page() -> usize {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as usize }
}

/// One worker's stack slots: `count` stacks of [`STACK_BYTES`], each above a guard page.
pub struct Slots {
    base: *mut u8,
    stride: usize,
    count: usize,
    #[cfg_attr(not(test), allow(dead_code, reason = "read by the tests of the guard pages"))]
    guard: usize,
    total: usize,
    /// The region, as the stack-overflow handler looks it up.
    registered: super::overflow::Registered,
}

// SAFETY: the region is plain memory; which thread uses it is the worker's business.
unsafe impl Send for Slots {}

impl Slots {
    /// Maps `count` slots. Memory is committed only where a stack is used.
    pub fn new(count: usize) -> std::io::Result<Slots> {
        let guard = page();
        let stride = STACK_BYTES + guard;
        let total = stride * count;
        // SAFETY: an anonymous private mapping; checked below.
        let base = unsafe {
            libc::mmap(std::ptr::null_mut(), total, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE, -1, 0)
        };
        if base == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let registered = super::overflow::register(base as usize, stride, count, guard);
        let slots = Slots { base: base as *mut u8, stride, count, guard, total, registered };
        for s in 0..count {
            // SAFETY: the first page of each slot lies inside the mapping.
            if unsafe { libc::mprotect(slots.base.add(s * stride) as *mut libc::c_void, guard, libc::PROT_NONE) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(slots)
    }

    /// The worker now runs block `block` of `kernel`: what a stack
    /// overflow in one of these slots is reported as.
    pub fn running(&self, kernel: &'static str, block: u32) {
        self.registered.running(kernel, block);
    }

    /// Slot `i` as a coroutine stack.
    pub fn stack(&self, i: usize) -> SlotStack {
        assert!(i < self.count, "slot {i} of {}", self.count);
        // SAFETY: inside the mapping.
        let limit = unsafe { self.base.add(i * self.stride) } as usize;
        SlotStack { limit, top: limit + self.stride }
    }

    /// Whether `address` is a guard page of this region.
    #[cfg(test)]
    pub fn is_guard(&self, address: usize) -> bool {
        let start = self.base as usize;
        address >= start && address < start + self.total && (address - start) % self.stride < self.guard
    }
}

impl Drop for Slots {
    fn drop(&mut self) {
        // Out of the handler's table before the addresses can be reused.
        self.registered.release();
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.total) };
    }
}

/// One slot as a stack for `corosensei`.
#[derive(Clone, Copy)]
pub struct SlotStack {
    limit: usize,
    top: usize,
}

// SAFETY: `base` and `limit` bound a mapping of STACK_BYTES (well over
// MIN_STACK_SIZE) above a PROT_NONE guard page, and both are page-aligned,
// hence aligned to STACK_ALIGNMENT. The same slot serves several coroutines
// over time, but only one of them runs, or has its contents in place, at a
// time: see `Saved`.
unsafe impl Stack for SlotStack {
    fn base(&self) -> StackPointer {
        NonZeroUsize::new(self.top).expect("mapped memory is not at address 0")
    }
    fn limit(&self) -> StackPointer {
        NonZeroUsize::new(self.limit).expect("mapped memory is not at address 0")
    }
}

impl SlotStack {
    /// The used part of the stack, from `mark` (minus [`BELOW_MARK`]) to the top, copied out.
    pub fn save(&self, mark: usize) -> Saved {
        let from = mark.saturating_sub(BELOW_MARK).max(self.limit + page());
        assert!(from < self.top, "a stack mark outside its slot");
        // SAFETY: [from, top) is inside this slot's mapped, writable part, and
        // no coroutine runs on this slot while it is copied.
        let bytes = unsafe { std::slice::from_raw_parts(from as *const u8, self.top - from) }.to_vec().into_boxed_slice();
        Saved { from, bytes }
    }

    /// Puts `saved` back where it was copied from. Panics if `saved` was
    /// copied from another slot.
    ///
    /// # Safety
    /// No coroutine runs on this slot now, and every frame in the restored
    /// range belongs to the one suspended coroutine `saved` was copied from
    /// (the scheduler restores a thread's stack just before it resumes it).
    pub unsafe fn restore(&self, saved: &Saved) {
        assert!(saved.from >= self.limit && saved.from + saved.bytes.len() == self.top, "a saved stack restored into another slot");
        // SAFETY: the same range of the same slot (checked); the caller's contract.
        unsafe { std::ptr::copy_nonoverlapping(saved.bytes.as_ptr(), saved.from as *mut u8, saved.bytes.len()) };
    }
}

/// A suspended thread's stack contents while its slot serves another block.
pub struct Saved {
    from: usize,
    bytes: Box<[u8]>,
}

impl Saved {
    /// Bytes held.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.bytes.len()
    }
}

/// An address just below the caller's frame, to pass to [`SlotStack::save`].
#[inline(never)]
pub fn mark() -> usize {
    let here = 0u8;
    std::hint::black_box(&here) as *const u8 as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_separate_stacks_with_guards_between() {
        let slots = Slots::new(4).unwrap();
        let (a, b) = (slots.stack(0), slots.stack(1));
        assert_eq!(a.top, b.limit);
        assert!(slots.is_guard(b.limit));
        assert!(!slots.is_guard(b.limit + page()));
        assert!(a.top - a.limit >= STACK_BYTES);
    }

    #[test]
    fn a_saved_stack_comes_back_byte_for_byte() {
        let slots = Slots::new(1).unwrap();
        let s = slots.stack(0);
        let at = s.top - 100;
        // SAFETY: inside the slot's writable part.
        unsafe { std::ptr::write_bytes(at as *mut u8, 0xab, 100) };
        let saved = s.save(at);
        // SAFETY: as above.
        unsafe { std::ptr::write_bytes((s.top - 4096) as *mut u8, 0, 4096) };
        // SAFETY: nothing runs on the slot; the bytes are the ones saved from it.
        unsafe { s.restore(&saved) };
        // SAFETY: as above.
        assert!(unsafe { std::slice::from_raw_parts(at as *const u8, 100) }.iter().all(|&b| b == 0xab));
        assert_eq!(saved.len(), 100 + BELOW_MARK);
    }
}
