//! Typed device memory: a [`Buffer`] of `T` and read-only [`View`]s of it,
//! on either backend, with every copy bounds-checked against the allocation.

use super::{Gpu, Memory};
use crate::error::{Error, Result};
use std::marker::PhantomData;
use std::ops::{Bound, Range, RangeBounds};

/// A value that can live in device memory as plain bytes (4-byte `f32` and `u32`).
pub trait Pod: bytemuck::Pod + cg_kernel::mem::Word {}
impl Pod for f32 {}
impl Pod for u32 {}
impl Pod for f64 {}

/// A buffer of `T` in device memory.
pub struct Buffer<T> {
    pub(crate) mem: Memory,
    len: usize,
    _t: PhantomData<T>,
}

/// Memory every device of this process reaches at one address, and the
/// host too: host-mapped on a GPU (`cuMemHostAlloc`; no peer access
/// needed), host memory on the emulator. What GPUs exchange through the
/// barrier across them. Launches take it through [`Shared::handle`].
pub struct Shared<T> {
    _owner: super::SharedOwner,
    address: u64,
    host: *mut T,
    len: usize,
}

// SAFETY: the owner is Send + Sync; the host pointer is only read and
// written with volatile accesses of plain values.
unsafe impl<T: Pod> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T: Pod> Sync for Shared<T> {}

impl<T: Pod> Shared<T> {
    /// A [`Buffer`] naming this memory, for launches on any device of the
    /// process (it owns nothing: `self` must outlive its launches).
    pub fn handle(&self) -> Buffer<T> {
        Buffer { mem: Memory::new(self.address, self.len * size_of::<T>(), super::Owner::Borrowed), len: self.len, _t: PhantomData }
    }

    /// The elements as they are now (read while no kernel writes them, or
    /// after one has trapped).
    pub fn read(&self) -> Vec<T> {
        // SAFETY: `len` elements of live memory; volatile, since devices write them.
        (0..self.len).map(|i| unsafe { self.host.add(i).read_volatile() }).collect()
    }

    /// Sets every element to `value` (while no kernel uses it).
    pub fn fill(&self, value: T) {
        for i in 0..self.len {
            // SAFETY: as in `read`.
            unsafe { self.host.add(i).write_volatile(value) };
        }
    }

    /// Its length, in elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Shared<u32> {
    /// Writes `v` at element `i` with release semantics: a kernel that reads
    /// it with `ld.acquire.sys` sees it and everything the host wrote before
    /// (the host taking part in a barrier across GPUs).
    pub fn store_release(&self, i: usize, v: u32) {
        assert!(i < self.len, "element {i} of {}", self.len);
        // SAFETY: element i of live memory, aligned for u32; devices access it atomically too.
        unsafe { std::sync::atomic::AtomicU32::from_ptr(self.host.add(i)) }.store(v, std::sync::atomic::Ordering::Release);
    }
}

impl Gpu {
    /// `len` zeroed elements of memory every device of the process reaches (see [`Shared`]).
    pub fn shared<T: Pod>(&self, len: usize) -> Result<Shared<T>> {
        let bytes = len.checked_mul(size_of::<T>()).ok_or(Error::InputTooLarge { n: len })?;
        let (owner, address, host) = self.backend().alloc_shared(bytes)?;
        Ok(Shared { _owner: owner, address, host: host as *mut T, len })
    }
}

/// A read-only range of a [`Buffer`].
pub struct View<'a, T> {
    pub(crate) mem: &'a Memory,
    pub(crate) offset: usize,
    len: usize,
    _t: PhantomData<T>,
}

/// A range of a [`Buffer`] a kernel may write (borrowed exclusively, so no
/// [`View`] of the same buffer can be passed beside it).
pub struct ViewMut<'a, T> {
    pub(crate) mem: &'a Memory,
    pub(crate) offset: usize,
    len: usize,
    _t: PhantomData<&'a mut T>,
}

/// `range` as start..end within `len`; out of range is a bug in the caller.
fn bounds(range: impl RangeBounds<usize>, len: usize) -> Range<usize> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s + 1,
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e + 1,
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    assert!(start <= end && end <= len, "{start}..{end} of a buffer of {len}");
    start..end
}

impl<T: Pod> Buffer<T> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Elements `range` of the buffer.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> View<'_, T> {
        let r = bounds(range, self.len);
        View { mem: &self.mem, offset: r.start, len: r.end - r.start, _t: PhantomData }
    }

    /// Elements `range` of the buffer, for a kernel to write.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> ViewMut<'_, T> {
        let r = bounds(range, self.len);
        ViewMut { mem: &self.mem, offset: r.start, len: r.end - r.start, _t: PhantomData }
    }
}

impl<T: Pod> ViewMut<'_, T> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the view holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address of its first element.
    pub(crate) fn address(&self) -> u64 {
        self.mem.at(self.offset * size_of::<T>(), self.len * size_of::<T>())
    }

    /// Where its buffer was made.
    pub(crate) fn origin(&self) -> super::Origin {
        self.mem.origin
    }
}

impl<T: Pod> View<'_, T> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the view holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Elements `range` of the view.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> View<'_, T> {
        let r = bounds(range, self.len);
        View { mem: self.mem, offset: self.offset + r.start, len: r.end - r.start, _t: PhantomData }
    }

    /// The device address of its first element.
    pub(crate) fn address(&self) -> u64 {
        self.mem.at(self.offset * size_of::<T>(), self.len * size_of::<T>())
    }

    /// Where its buffer was made.
    pub(crate) fn origin(&self) -> super::Origin {
        self.mem.origin
    }
}

impl Gpu {
    /// Memory a backend allocated, marked as this device's, made in the branch running now.
    fn allocated(&self, mut mem: Memory) -> Memory {
        mem.origin = self.origin();
        mem
    }

    /// A zeroed device buffer of `len` elements.
    pub fn zeros<T: Pod>(&self, len: usize) -> Result<Buffer<T>> {
        let bytes = len.checked_mul(size_of::<T>()).ok_or(Error::InputTooLarge { n: len })?;
        Ok(Buffer { mem: self.allocated(self.backend().alloc(bytes)?), len, _t: PhantomData })
    }

    /// A device buffer never written: what it holds is undefined on a GPU
    /// (zeros on the emulator). Only for showing that `compute-sanitizer
    /// --tool initcheck` catches a read of memory nothing wrote.
    pub fn uninit<T: Pod>(&self, len: usize) -> Result<Buffer<T>> {
        let bytes = len.checked_mul(size_of::<T>()).ok_or(Error::InputTooLarge { n: len })?;
        Ok(Buffer { mem: self.allocated(self.backend().alloc_uninit(bytes)?), len, _t: PhantomData })
    }

    /// A device buffer holding `values`.
    pub fn upload<T: Pod>(&self, values: &[T]) -> Result<Buffer<T>> {
        let buffer = self.zeros::<T>(values.len())?;
        self.backend().write(&buffer.mem, 0, bytemuck::cast_slice(values))?;
        Ok(buffer)
    }

    /// Copies `values` into `buffer` from element `at`.
    pub fn write<T: Pod>(&self, buffer: &mut Buffer<T>, at: usize, values: &[T]) -> Result<()> {
        self.check_origin(buffer.mem.origin)?;
        self.backend().write(&buffer.mem, at * size_of::<T>(), bytemuck::cast_slice(values))
    }

    /// Copies a device buffer to the host, once the work before it is done.
    pub fn read<T: Pod>(&self, buffer: &Buffer<T>) -> Result<Vec<T>> {
        self.read_view(&buffer.slice(..))
    }

    /// Copies a range of a device buffer to the host, once the work before it is done.
    pub fn read_view<T: Pod>(&self, view: &View<'_, T>) -> Result<Vec<T>> {
        self.check_origin(view.mem.origin)?;
        let mut out = vec![T::zeroed(); view.len];
        self.backend().read(view.mem, view.offset * size_of::<T>(), bytemuck::cast_slice_mut(&mut out))?;
        Ok(out)
    }

    /// Sets every element of `buffer` to `value`, in stream order (to poison
    /// an output before a run).
    pub fn fill<T: Pod>(&self, buffer: &mut Buffer<T>, value: T) -> Result<()> {
        self.check_origin(buffer.mem.origin)?;
        let word: u32 = bytemuck::cast(value);
        self.backend().fill32(&buffer.mem, 0, word, buffer.len)
    }

    /// Copies `src` into the start of `dst` on the device (`cuMemcpyDtoDAsync`).
    pub fn copy<T: Pod>(&self, src: &View<'_, T>, dst: &mut Buffer<T>) -> Result<()> {
        self.check_origin(src.mem.origin)?;
        self.check_origin(dst.mem.origin)?;
        self.backend().copy(src.mem, src.offset * size_of::<T>(), &dst.mem, 0, src.len * size_of::<T>())
    }
}
