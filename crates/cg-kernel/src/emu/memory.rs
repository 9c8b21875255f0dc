//! The emulated device's memory: host memory, 256-byte aligned like
//! `cudaMalloc`'s, which the host fills and reads between launches and
//! kernels address through their `In` and `Out` parameters during one.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::cell::UnsafeCell;

/// One allocation of emulated device memory.
pub struct Memory {
    ptr: *mut UnsafeCell<u8>,
    bytes: usize,
}

// SAFETY: plain memory owned by this value: writes take `&mut self`, so
// threads sharing a `&Memory` only read it; a launch's workers reach it only
// through the addresses an `unsafe` `Device::launch` was given, whose caller
// keeps everything else off it meanwhile.
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

impl Memory {
    /// `bytes` of zeroed memory, or `None` if the host cannot provide it.
    pub fn zeroed(bytes: usize) -> Option<Memory> {
        let layout = Layout::from_size_align(bytes.max(1), ALIGN).ok()?;
        // SAFETY: a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) } as *mut UnsafeCell<u8>;
        if ptr.is_null() {
            return None;
        }
        huge_pages(ptr as *mut u8, bytes);
        Some(Memory { ptr, bytes })
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
    }

    /// Sets `count` elements of `pattern.len()` bytes from `offset` to
    /// `pattern`. Panics if they do not fit.
    pub fn fill(&mut self, offset: usize, pattern: &[u8], count: usize) {
        let bytes = count.checked_mul(pattern.len()).expect("a fill whose bytes can be counted");
        let dst = self.range(offset, bytes);
        for k in 0..count {
            // SAFETY: in bounds; `&mut self` excludes every other access.
            unsafe { std::ptr::copy_nonoverlapping(pattern.as_ptr(), dst.add(k * pattern.len()), pattern.len()) };
        }
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout.
        unsafe { dealloc(self.ptr as *mut u8, Layout::from_size_align(self.bytes.max(1), ALIGN).expect("the layout it was made with")) };
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
    }

    #[test]
    #[should_panic(expected = "outside an allocation of 16 bytes")]
    fn a_copy_past_the_end_is_refused() {
        Memory::zeroed(16).unwrap().write(12, &[0; 8]);
    }
}
