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

/// One worker's stack slots: `count` stacks of [`STACK_BYTES`], each above a
/// guard page. Taken from the pool of regions earlier launches gave back
/// where one is large enough, and given back to it when dropped.
pub struct Slots {
    region: Option<Region>,
}

/// A mapping of slots, as the pool keeps it.
struct Region {
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
unsafe impl Send for Region {}

/// Regions finished launches gave back, for the next launch's workers.
/// Mapping a region and protecting each slot's guard page costs a system
/// call per thread of the block, and the first touch of each stack a page
/// fault: for a small launch, most of its cost on the host. The pool keeps
/// at most [`POOL_SLOTS`] slots in [`POOL_REGIONS`] regions (address space: the stacks are
/// mapped without reserve, and in a large region the pages a finished
/// launch touched are handed back to the kernel lazily, [`LAZILY_FREED`]).
static POOL: std::sync::Mutex<Vec<Region>> = std::sync::Mutex::new(Vec::new());

/// The most slots the pool keeps: 64 workers' worth of 1,024-thread blocks.
const POOL_SLOTS: usize = 64 * 1024;

/// Regions of more slots than this have the pages their stacks touched
/// freed lazily (`MADV_FREE`) as they go back to the pool; smaller ones keep
/// them, since walking a region's page tables costs a small launch as much
/// as the rest of it (at most [`POOL_REGIONS`] x 256 slots of a few pages).
const LAZILY_FREED: usize = 256;

/// The most regions it keeps: each holds one of the stack-overflow
/// handler's 512 entries (`crate::overflow`) while pooled.
const POOL_REGIONS: usize = 64;

impl Slots {
    /// `count` slots: the smallest pooled region that has as many, else a
    /// new mapping. Memory is committed only where a stack is used.
    pub fn new(count: usize) -> std::io::Result<Slots> {
        let pooled = take(&mut POOL.lock().unwrap_or_else(|e| e.into_inner()), count);
        let region = match pooled {
            Some(r) => r,
            None => Region::map(count)?,
        };
        Ok(Slots { region: Some(region) })
    }

    fn region(&self) -> &Region {
        self.region.as_ref().expect("a region until dropped")
    }

    /// The worker now runs block `block` of `kernel`: what a stack
    /// overflow in one of these slots is reported as.
    pub fn running(&self, kernel: &'static str, block: u32) {
        self.region().registered.running(kernel, block);
    }

    /// Slot `i` as a coroutine stack.
    pub fn stack(&self, i: usize) -> SlotStack {
        let r = self.region();
        assert!(i < r.count, "slot {i} of {}", r.count);
        // SAFETY: inside the mapping.
        let limit = unsafe { r.base.add(i * r.stride) } as usize;
        SlotStack { limit, top: limit + r.stride }
    }

    /// Whether `address` is a guard page of this region.
    #[cfg(test)]
    pub fn is_guard(&self, address: usize) -> bool {
        let r = self.region();
        let start = r.base as usize;
        address >= start && address < start + r.total && (address - start) % r.stride < r.guard
    }
}

impl Drop for Slots {
    /// Gives the region back to the pool, or unmaps it where the pool is
    /// full. Nothing runs on its stacks any more: a worker drops its slots
    /// when it leaves the launch, and a coroutine it abandoned (its block
    /// faulted) is never resumed, so its frames are plain bytes to reuse.
    fn drop(&mut self) {
        let Some(region) = self.region.take() else { return };
        if region.count > LAZILY_FREED {
            // SAFETY: the region's own mapping (MADV_FREE on its PROT_NONE
            // guard pages is harmless); the kernel may drop the contents of
            // its pages, which no one reads before writing: a stack is
            // written before it is read.
            unsafe { libc::madvise(region.base as *mut libc::c_void, region.total, libc::MADV_FREE) };
        }
        give_back(&mut POOL.lock().unwrap_or_else(|e| e.into_inner()), region);
    }
}

/// The smallest region of `pool` with `count` slots or more, taken out of it.
fn take(pool: &mut Vec<Region>, count: usize) -> Option<Region> {
    let best = pool.iter().enumerate().filter(|(_, r)| r.count >= count).min_by_key(|(_, r)| r.count).map(|(i, _)| i);
    best.map(|i| pool.swap_remove(i))
}

/// `region` kept in `pool` while it has room, else unmapped.
fn give_back(pool: &mut Vec<Region>, region: Region) {
    if pool.len() < POOL_REGIONS && pool.iter().map(|r| r.count).sum::<usize>() + region.count <= POOL_SLOTS {
        pool.push(region);
    }
}

impl Region {
    /// Maps `count` slots, each above a guard page.
    fn map(count: usize) -> std::io::Result<Region> {
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
        let region = Region { base: base as *mut u8, stride, count, guard, total, registered };
        for s in 0..count {
            // SAFETY: the first page of each slot lies inside the mapping.
            if unsafe { libc::mprotect(region.base.add(s * stride) as *mut libc::c_void, guard, libc::PROT_NONE) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(region)
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // Out of the handler's table before the addresses can be reused.
        self.registered.release();
        // SAFETY: the mapping made in `map`, unmapped once.
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
    fn a_pooled_region_serves_the_next_launch_that_fits_with_its_guards() {
        let mut pool = Vec::new();
        let (small, large) = (Region::map(4).unwrap(), Region::map(16).unwrap());
        let (small_base, large_base) = (small.base, large.base);
        give_back(&mut pool, large);
        give_back(&mut pool, small);
        // The smallest that fits: 3 threads take the region of 4, then 5 the one of 16.
        let a = take(&mut pool, 3).expect("a region of 4");
        assert_eq!(a.base, small_base);
        assert_eq!(take(&mut pool, 5).expect("the region of 16").base, large_base);
        assert!(take(&mut pool, 1).is_none(), "both taken");
        // Its guard pages are still guards.
        let slots = Slots { region: Some(a) };
        assert!(slots.is_guard(slots.stack(2).limit));
        // A full pool unmaps what comes back.
        let mut full: Vec<Region> = (0..POOL_REGIONS).map(|_| Region::map(1).unwrap()).collect();
        give_back(&mut full, Region::map(1).unwrap());
        assert_eq!(full.len(), POOL_REGIONS);
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
