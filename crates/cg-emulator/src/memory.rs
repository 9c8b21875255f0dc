//! The emulated device's memory: host memory, 256-byte aligned like
//! `cudaMalloc`'s, which the host fills and reads between launches and
//! kernels address through their `In` and `Out` parameters during one.
//!
//! Memory allocated uninitialized ([`Memory::uninit`], `cudaMalloc` without
//! a memset) holds poison, and a shadow of one bit per byte says which bytes
//! something has written since: the host (a copy in, a fill) or a kernel
//! (its writes, as the grid publishes them). A kernel's read of a byte never
//! written is a fault that names the read, the emulator's twin of
//! `compute-sanitizer --tool initcheck`. The shadows are found by address
//! ([`shadows_in`]), so a launch needs nothing but its arguments' addresses.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::cell::UnsafeCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// One allocation of emulated device memory.
pub struct Memory {
    ptr: *mut UnsafeCell<u8>,
    bytes: usize,
    /// Which bytes were written, for memory allocated uninitialized.
    shadow: Option<Arc<Shadow>>,
}

/// The byte every byte of an uninitialized allocation holds until written:
/// `0xff` makes an `f32` or `f64` a NaN and an integer its maximum, never a
/// plausible number.
pub const POISON: u8 = 0xff;

/// One bit per byte of an allocation: set once the byte is written.
pub(crate) struct Shadow {
    bits: Box<[AtomicU64]>,
}

impl Shadow {
    fn new(bytes: usize) -> Shadow {
        Shadow { bits: (0..bytes.div_ceil(64)).map(|_| AtomicU64::new(0)).collect() }
    }

    /// The words of `start .. start + len`, each with the mask of its bits
    /// in the range: a whole word's 64 bytes at once, where an upload of
    /// 67,108,864 floats had taken one atomic per byte.
    fn words(start: usize, len: usize) -> impl Iterator<Item = (usize, u64)> {
        let end = start + len;
        let mut b = start;
        std::iter::from_fn(move || {
            (b < end).then(|| {
                let (word, lo) = (b / 64, b % 64);
                let hi = (end - word * 64).min(64);
                b = word * 64 + hi;
                (word, if hi - lo == 64 { u64::MAX } else { ((1u64 << (hi - lo)) - 1) << lo })
            })
        })
    }

    /// Marks bytes `start .. start + len` written.
    pub(crate) fn set(&self, start: usize, len: usize) {
        for (word, mask) in Self::words(start, len) {
            self.bits[word].fetch_or(mask, Ordering::Relaxed);
        }
    }

    /// Whether every byte of `start .. start + len` was written.
    pub(crate) fn all_set(&self, start: usize, len: usize) -> bool {
        Self::words(start, len).all(|(word, mask)| self.bits[word].load(Ordering::Relaxed) & mask == mask)
    }

    /// Copies the marks of `len` bytes of `src` from `from` to `to` here.
    fn copy(&self, to: usize, src: &Shadow, from: usize, len: usize) {
        for k in 0..len {
            if src.all_set(from + k, 1) {
                self.set(to + k, 1);
            }
        }
    }
}

/// The live uninitialized allocations, by first address: their ends and shadows.
static SHADOWS: Mutex<BTreeMap<usize, (usize, Weak<Shadow>)>> = Mutex::new(BTreeMap::new());

/// The shadow of the uninitialized allocation holding `address .. address + bytes`, and
/// that allocation's first address; `None` for memory allocated zeroed.
pub(crate) fn shadows_in(address: usize, bytes: usize) -> Option<(usize, Arc<Shadow>)> {
    let shadows = SHADOWS.lock().unwrap_or_else(|e| e.into_inner());
    let (&start, (end, shadow)) = shadows.range(..=address).next_back()?;
    (address.checked_add(bytes)? <= *end).then(|| shadow.upgrade().map(|s| (start, s)))?
}

// SAFETY: memory owned by this value, which holds only its address and
// length: threads sharing a `&Memory` read those two, never the bytes,
// which safe code reaches only through `&mut self`. During a launch its
// workers reach the bytes through the addresses an `unsafe`
// `Device::launch` was given, and every such access is atomic or made
// while no block runs (a block's plain writes are kept aside and published
// at its barriers; see `Out::read`); that launch's caller keeps every other
// access off the memory until it returns.
unsafe impl Send for Memory {}
// SAFETY: as above.
unsafe impl Sync for Memory {}

const ALIGN: usize = 256;

/// Asks Linux to back a large buffer with 2 MiB pages where it can, before
/// its first write: the exercise's 67,108,864 floats took 65,536 page
/// faults of 4 KiB each in every buffer. Advice only; nothing changes where
/// it is refused.
fn huge_pages(ptr: *mut u8, bytes: usize) {
    const HUGE: usize = 2 << 20;
    let start = (ptr as usize).next_multiple_of(HUGE);
    let end = (ptr as usize + bytes) / HUGE * HUGE;
    #[cfg(target_os = "linux")]
    if end > start {
        // SAFETY: the range lies inside this allocation; madvise only advises.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
}

/// Allocations of this many bytes or more are mapped from the kernel, which
/// hands out zeroed pages as they are first touched (and 2 MiB ones, where
/// advised before that): the allocator's zeroed allocation at an alignment
/// of 256 writes every byte first, which faulted in the exercise's 268 MB
/// input page by page before its upload wrote it again.
const MAPPED: usize = 1 << 20;

impl Memory {
    /// `bytes` of zeroed memory, or `None` if the host cannot provide it.
    pub fn zeroed(bytes: usize) -> Option<Memory> {
        let ptr = if bytes >= MAPPED {
            // SAFETY: an anonymous private mapping, checked below; page-aligned,
            // hence aligned to ALIGN.
            let p = unsafe { libc::mmap(std::ptr::null_mut(), bytes, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0) };
            if p == libc::MAP_FAILED {
                return None;
            }
            p as *mut UnsafeCell<u8>
        } else {
            let layout = Layout::from_size_align(bytes.max(1), ALIGN).ok()?;
            // SAFETY: a non-zero size.
            (unsafe { alloc_zeroed(layout) }) as *mut UnsafeCell<u8>
        };
        if ptr.is_null() {
            return None;
        }
        huge_pages(ptr as *mut u8, bytes);
        Some(Memory { ptr, bytes, shadow: None })
    }

    /// `bytes` of memory nothing has written (`cudaMalloc` without a memset),
    /// or `None` if the host cannot provide it: every byte is poison (`0xff`), and
    /// a kernel's read of one before something wrote it is a fault.
    pub fn uninit(bytes: usize) -> Option<Memory> {
        let mut m = Memory::zeroed(bytes)?;
        if bytes > 0 {
            // SAFETY: `bytes` of this allocation, which no one else holds yet.
            unsafe { std::ptr::write_bytes(m.ptr as *mut u8, POISON, bytes) };
            let shadow = Arc::new(Shadow::new(bytes));
            SHADOWS.lock().unwrap_or_else(|e| e.into_inner()).insert(m.address(), (m.address() + bytes, Arc::downgrade(&shadow)));
            m.shadow = Some(shadow);
        }
        Some(m)
    }

    /// The address kernels see.
    pub fn address(&self) -> usize {
        self.ptr as usize
    }

    /// Its size in bytes.
    pub fn len(&self) -> usize {
        self.bytes
    }

    /// Whether it holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    fn range(&self, offset: usize, len: usize) -> *mut u8 {
        assert!(offset.checked_add(len).is_some_and(|end| end <= self.bytes), "{offset}+{len} outside an allocation of {} bytes", self.bytes);
        // SAFETY: in bounds (checked).
        unsafe { (self.ptr as *mut u8).add(offset) }
    }

    /// Copies `src` in at `offset`. Panics if it does not fit.
    pub fn write(&mut self, offset: usize, src: &[u8]) {
        let dst = self.range(offset, src.len());
        // SAFETY: in bounds; `&mut self` excludes every other access.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) };
        if let Some(shadow) = &self.shadow {
            shadow.set(offset, src.len());
        }
    }

    /// Copies out from `offset`. Panics if it reads past the end.
    pub fn read(&self, offset: usize, dst: &mut [u8]) {
        let src = self.range(offset, dst.len());
        // SAFETY: in bounds; writes need `&mut self`, so none runs meanwhile.
        unsafe { std::ptr::copy_nonoverlapping(src, dst.as_mut_ptr(), dst.len()) };
    }

    /// Copies `bytes` from `src` at `src_offset` to `dst_offset`. Panics if
    /// either range is out of bounds.
    pub fn copy_from(&mut self, dst_offset: usize, src: &Memory, src_offset: usize, bytes: usize) {
        let (s, d) = (src.range(src_offset, bytes), self.range(dst_offset, bytes));
        // SAFETY: both in bounds, and two allocations (`&mut self` and `&Memory` cannot alias).
        unsafe { std::ptr::copy_nonoverlapping(s, d, bytes) };
        // What was never written stays so: a device-to-device copy moves the poison too.
        match (&self.shadow, &src.shadow) {
            (Some(to), Some(from)) => to.copy(dst_offset, from, src_offset, bytes),
            (Some(to), None) => to.set(dst_offset, bytes),
            (None, _) => {}
        }
    }

    /// Sets `count` elements of `pattern.len()` bytes from `offset` to
    /// `pattern`. Panics if they do not fit. An empty pattern sets nothing,
    /// whatever `count` is.
    pub fn fill(&mut self, offset: usize, pattern: &[u8], count: usize) {
        let bytes = count.checked_mul(pattern.len()).expect("a fill whose bytes can be counted");
        let dst = self.range(offset, bytes);
        if bytes == 0 {
            // Not `count` turns of a loop that copies nothing.
            return;
        }
        for k in 0..count {
            // SAFETY: in bounds; `&mut self` excludes every other access.
            unsafe { std::ptr::copy_nonoverlapping(pattern.as_ptr(), dst.add(k * pattern.len()), pattern.len()) };
        }
        if let Some(shadow) = &self.shadow {
            shadow.set(offset, bytes);
        }
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        if self.shadow.take().is_some() {
            SHADOWS.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.address());
        }
        if self.bytes >= MAPPED {
            // SAFETY: mapped in `zeroed` with this length, unmapped once.
            unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.bytes) };
        } else {
            // SAFETY: allocated in `zeroed` with this layout.
            unsafe { dealloc(self.ptr as *mut u8, Layout::from_size_align(self.bytes.max(1), ALIGN).expect("the layout it was made with")) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_is_zeroed_aligned_and_copies_within_bounds() {
        let mut a = Memory::zeroed(64).unwrap();
        assert_eq!(a.address() % ALIGN, 0);
        let mut out = [1u8; 64];
        a.read(0, &mut out);
        assert!(out.iter().all(|&b| b == 0));
        a.write(8, &[1, 2, 3, 4]);
        a.fill(16, &0x7fc0_0000u32.to_ne_bytes(), 2);
        let mut b = Memory::zeroed(64).unwrap();
        b.copy_from(0, &a, 8, 16);
        let mut got = [0u8; 16];
        b.read(0, &mut got);
        assert_eq!(&got[..4], &[1, 2, 3, 4]);
        assert_eq!(u32::from_ne_bytes(got[8..12].try_into().unwrap()), 0x7fc0_0000);
        assert!(Memory::zeroed(0).is_some_and(|m| m.is_empty()));
        // An empty pattern, any count: at once, nothing set (it once looped
        // `count` times).
        a.fill(0, &[], usize::MAX);
        a.read(0, &mut out);
        assert_eq!(&out[8..12], &[1, 2, 3, 4]);
    }

    #[test]
    fn uninitialized_memory_is_poison_and_its_shadow_follows_every_write() {
        let mut m = Memory::uninit(16).unwrap();
        let mut out = [0u8; 16];
        m.read(0, &mut out);
        assert!(out.iter().all(|&b| b == POISON));
        let (start, shadow) = shadows_in(m.address() + 4, 4).unwrap();
        assert_eq!(start, m.address());
        assert!(!shadow.all_set(4, 4));
        m.write(4, &[1, 2, 3, 4]);
        assert!(shadow.all_set(4, 4) && !shadow.all_set(0, 8));
        m.fill(8, &[0; 4], 2);
        assert!(shadow.all_set(4, 12));
        let zeroed = Memory::zeroed(16).unwrap();
        assert!(shadows_in(zeroed.address(), 4).is_none(), "zeroed memory has no shadow");
        let mut copy = Memory::uninit(16).unwrap();
        copy.copy_from(0, &m, 0, 16);
        let (_, copied) = shadows_in(copy.address(), 16).unwrap();
        assert!(!copied.all_set(0, 4) && copied.all_set(4, 12), "a copy carries the poison along");
        let address = m.address();
        drop(m);
        assert!(shadows_in(address, 4).is_none_or(|(start, _)| start != address), "a freed allocation's shadow is gone");
    }

    #[test]
    fn a_large_allocation_is_mapped_zeroed_and_aligned() {
        let mut m = Memory::zeroed(MAPPED + 3).unwrap();
        assert_eq!(m.address() % ALIGN, 0);
        let mut out = [1u8; 16];
        m.read(MAPPED - 13, &mut out);
        assert!(out.iter().all(|&b| b == 0));
        m.write(MAPPED - 1, &[7, 8, 9, 10]);
        m.read(MAPPED - 1, &mut out[..4]);
        assert_eq!(&out[..4], &[7, 8, 9, 10]);
        let u = Memory::uninit(MAPPED).unwrap();
        let mut poison = [0u8; 4];
        u.read(MAPPED - 4, &mut poison);
        assert_eq!(poison, [POISON; 4]);
    }

    #[test]
    fn the_shadow_marks_exactly_the_bytes_written_across_words() {
        // Every range of up to 200 bytes from each of the first 70 bytes,
        // against a byte-at-a-time model.
        for start in 0..70 {
            for len in 0..200 {
                let shadow = Shadow::new(300);
                shadow.set(start, len);
                for b in 0..300 {
                    assert_eq!(shadow.all_set(b, 1), (start..start + len).contains(&b), "set({start}, {len}): byte {b}");
                }
                assert!(shadow.all_set(start, len));
                assert!(!shadow.all_set(start, len + 1), "set({start}, {len}): one byte past it");
            }
        }
    }

    #[test]
    #[should_panic(expected = "outside an allocation of 16 bytes")]
    fn a_copy_past_the_end_is_refused() {
        Memory::zeroed(16).unwrap().write(12, &[0; 8]);
    }
}
