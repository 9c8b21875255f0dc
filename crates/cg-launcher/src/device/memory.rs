//! Typed device memory: a [`Buffer`] of `T` and read-only [`View`]s of it,
//! on either backend, with every copy bounds-checked against the allocation.

use super::{Gpu, Memory, Origin, Span, Use};
use crate::error::{Error, Result};
use std::marker::PhantomData;
use std::ops::{Bound, Range, RangeBounds};
use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, AtomicU64, Ordering};

/// A value that can live in device memory as plain bytes, and that kernels
/// load and store (`cg_kernel::mem::Word`): every bit pattern is a value, so
/// reading any bytes back is defined.
pub trait Pod: bytemuck::Pod + cg_kernel::mem::Word {}
impl Pod for u8 {}
impl Pod for i8 {}
impl Pod for u16 {}
impl Pod for i16 {}
impl Pod for f32 {}
impl Pod for u32 {}
impl Pod for i32 {}
impl Pod for f64 {}
impl Pod for u64 {}
impl Pod for i64 {}

/// A buffer of `T` in device memory.
pub struct Buffer<T> {
    pub(crate) mem: Memory,
    len: usize,
    _t: PhantomData<T>,
}

/// Memory every device of this process reaches at one address, and the
/// host too: host-mapped on a GPU (`cuMemHostAlloc`; no peer access
/// needed), host memory on the emulator. What GPUs exchange through the
/// barrier across them. Launches take it as an `Out` parameter through
/// [`Shared::out`], which borrows it; the host reads and writes it with
/// atomic accesses, so it may do so while kernels use it.
pub struct Shared<T> {
    _owner: super::SharedOwner,
    address: u64,
    host: *mut T,
    len: usize,
}

// SAFETY: the owner frees the allocation once, when dropped; the host
// pointer is only read and written element by element, each access one
// atomic of `size_of::<T>()` bytes (`read`, `fill`, `store_release`, and
// the emulator's kernels, which access an `Out<T>` by its element's size),
// so threads sharing a `&Shared` never race, nor mix atomics of two sizes
// on one location.
unsafe impl<T: Pod> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T: Pod> Sync for Shared<T> {}

/// [`Shared`] memory as a kernel's `Out<T>` argument, on any device of the
/// process. It borrows the `Shared`, so the memory outlives the call that
/// queues the launch; every launch's `# Safety` (`Kernel::launch`'s) asks
/// its caller to keep it alive until the kernel has run, since dropping a
/// `Shared` frees its memory without waiting for kernels.
pub struct SharedOut<'a, T> {
    pub(crate) address: u64,
    len: usize,
    _shared: PhantomData<&'a Shared<T>>,
}

impl<T: Pod> SharedOut<'_, T> {
    /// Its length, in elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Element `i` of the `T`s at `p`, read with one atomic load of `T`'s size.
///
/// # Safety
/// Element `i` at `p` is live memory aligned for `T`, and every access to
/// it by any thread of this process is an atomic of `size_of::<T>()` bytes
/// (a device's accesses are outside Rust's memory model).
unsafe fn load_element<T: Pod>(p: *mut T, i: usize) -> T {
    // SAFETY (each arm): the caller's contract; `Pod` types are 1, 2, 4 or
    // 8 bytes, aligned to their size.
    unsafe {
        let q = p.add(i);
        match size_of::<T>() {
            1 => bytemuck::cast(AtomicU8::from_ptr(q.cast()).load(Ordering::Relaxed)),
            2 => bytemuck::cast(AtomicU16::from_ptr(q.cast()).load(Ordering::Relaxed)),
            4 => bytemuck::cast(AtomicU32::from_ptr(q.cast()).load(Ordering::Relaxed)),
            _ => bytemuck::cast(AtomicU64::from_ptr(q.cast()).load(Ordering::Relaxed)),
        }
    }
}

/// Element `i` of the `T`s at `p` set to `v`, with one atomic store of `T`'s size.
///
/// # Safety
/// As [`load_element`].
unsafe fn store_element<T: Pod>(p: *mut T, i: usize, v: T) {
    // SAFETY (each arm): as in `load_element`.
    unsafe {
        let q = p.add(i);
        match size_of::<T>() {
            1 => AtomicU8::from_ptr(q.cast()).store(bytemuck::cast(v), Ordering::Relaxed),
            2 => AtomicU16::from_ptr(q.cast()).store(bytemuck::cast(v), Ordering::Relaxed),
            4 => AtomicU32::from_ptr(q.cast()).store(bytemuck::cast(v), Ordering::Relaxed),
            _ => AtomicU64::from_ptr(q.cast()).store(bytemuck::cast(v), Ordering::Relaxed),
        }
    }
}

impl<T: Pod> Shared<T> {
    /// The memory as a kernel's `Out<T>` argument, for a launch on any
    /// device of the process.
    pub fn out(&self) -> SharedOut<'_, T> {
        SharedOut { address: self.address, len: self.len, _shared: PhantomData }
    }

    /// The elements as they are now (one atomic load per element, of its
    /// size: defined while kernels write them, never a torn element, though
    /// a kernel's writes may not be visible yet).
    pub fn read(&self) -> Vec<T> {
        // SAFETY: elements below len of live memory owned by `self`, aligned
        // (page-aligned host memory on a GPU, 256-byte-aligned on the
        // emulator); every access is an atomic of the element's size.
        (0..self.len).map(|i| unsafe { load_element(self.host, i) }).collect()
    }

    /// Sets every element to `value` (one atomic store per element, of its
    /// size; a kernel running now may see some elements set and others not
    /// yet, never part of one).
    pub fn fill(&self, value: T) {
        for i in 0..self.len {
            // SAFETY: as in `read`.
            unsafe { store_element(self.host, i, value) };
        }
        std::sync::atomic::fence(Ordering::Release);
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
    /// (the host taking part in a barrier across GPUs). Panics if `i` is past the end.
    pub fn store_release(&self, i: usize, v: u32) {
        assert!(i < self.len, "element {i} of {}", self.len);
        // SAFETY: element i of live memory, aligned for u32; devices access it atomically too.
        unsafe { AtomicU32::from_ptr(self.host.add(i)) }.store(v, Ordering::Release);
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
    pub(crate) mem: &'a mut Memory,
    pub(crate) offset: usize,
    len: usize,
    _t: PhantomData<&'a mut T>,
}

/// `range` as start..end within `len`; out of range is a bug in the caller,
/// as for a slice.
fn bounds(range: impl RangeBounds<usize>, len: usize) -> Range<usize> {
    let start = match range.start_bound() {
        Bound::Included(&s) => Some(s),
        Bound::Excluded(&s) => s.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1),
        Bound::Excluded(&e) => Some(e),
        Bound::Unbounded => Some(len),
    };
    match (start, end) {
        (Some(start), Some(end)) if start <= end && end <= len => start..end,
        _ => panic!("range {:?}..{:?} out of a buffer of {len}", range.start_bound(), range.end_bound()),
    }
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

    /// Elements `range` of the buffer. Panics if the range is out of bounds, as a slice does.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> View<'_, T> {
        let r = bounds(range, self.len);
        View { mem: &self.mem, offset: r.start, len: r.end - r.start, _t: PhantomData }
    }

    /// Elements `range` of the buffer, for a kernel to write. Panics if the
    /// range is out of bounds, as a slice does.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> ViewMut<'_, T> {
        let r = bounds(range, self.len);
        ViewMut { mem: &mut self.mem, offset: r.start, len: r.end - r.start, _t: PhantomData }
    }
}

/// Whether `len` elements of `T` from element `offset` are whole elements of
/// `U` from a multiple of `U`'s size: the view's bytes as `U`s, or the error.
fn recast<T: Pod, U: Pod>(offset: usize, len: usize) -> Result<(usize, usize)> {
    let (start, bytes) = (offset * size_of::<T>(), len * size_of::<T>());
    if start.is_multiple_of(size_of::<U>()) && bytes.is_multiple_of(size_of::<U>()) {
        Ok((start / size_of::<U>(), bytes / size_of::<U>()))
    } else {
        Err(Error::MisfitCast { from: std::any::type_name::<T>(), to: std::any::type_name::<U>(), to_size: size_of::<U>(), start_byte: start, bytes })
    }
}

impl<'a, T: Pod> ViewMut<'a, T> {
    /// The same bytes as elements of `U`, for a kernel to write (C++'s
    /// `reinterpret_cast<uint4*>(p)` on a buffer of bytes): a view of 16
    /// `u8`s is one of four `u32`s. The view must start on a multiple of
    /// `U`'s size and span a whole number of `U`s, or the cast fails by name
    /// ([`Error::MisfitCast`]); every bit pattern is a `Pod` value, so any
    /// bytes read back either way are defined. It takes the view (which
    /// borrows its buffer exclusively), so no view of the old type outlives it.
    pub fn cast<U: Pod>(self) -> Result<ViewMut<'a, U>> {
        let (offset, len) = recast::<T, U>(self.offset, self.len)?;
        Ok(ViewMut { mem: self.mem, offset, len, _t: PhantomData })
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

    /// Where its buffer was made, and the bytes of the allocation it spans.
    pub(crate) fn origin(&self) -> (Origin, Span) {
        (self.mem.origin, byte_range::<T>(self.offset, self.len))
    }
}

impl<'a, T: Pod> View<'a, T> {
    /// The same bytes as elements of `U`, for a kernel to read (C++'s
    /// `reinterpret_cast<const uint4*>(p)`): a view of a buffer of `u8`
    /// samples as `u32` words, with no copy. It must start on a multiple of
    /// `U`'s size and span a whole number of `U`s, or the cast fails by name
    /// ([`Error::MisfitCast`]); every bit pattern is a `Pod` value.
    pub fn cast<U: Pod>(&self) -> Result<View<'a, U>> {
        let (offset, len) = recast::<T, U>(self.offset, self.len)?;
        Ok(View { mem: self.mem, offset, len, _t: PhantomData })
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

    /// Elements `range` of the view. Panics if the range is out of bounds, as a slice does.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> View<'_, T> {
        let r = bounds(range, self.len);
        View { mem: self.mem, offset: self.offset + r.start, len: r.end - r.start, _t: PhantomData }
    }

    /// The device address of its first element.
    pub(crate) fn address(&self) -> u64 {
        self.mem.at(self.offset * size_of::<T>(), self.len * size_of::<T>())
    }

    /// Where its buffer was made, and the bytes of the allocation it spans.
    pub(crate) fn origin(&self) -> (Origin, Span) {
        (self.mem.origin, byte_range::<T>(self.offset, self.len))
    }
}

/// The bytes of `len` elements of `T` from element `offset`.
fn byte_range<T>(offset: usize, len: usize) -> Span {
    (offset * size_of::<T>(), (offset + len) * size_of::<T>())
}

impl Gpu {
    /// Memory a backend allocated, marked as this device's, made in the branch running now.
    fn allocated(&self, mut mem: Memory) -> Memory {
        mem.origin = self.origin(mem.address);
        mem
    }

    /// A zeroed device buffer of `len` elements.
    pub fn zeros<T: Pod>(&self, len: usize) -> Result<Buffer<T>> {
        let bytes = len.checked_mul(size_of::<T>()).ok_or(Error::InputTooLarge { n: len })?;
        Ok(Buffer { mem: self.allocated(self.backend().alloc(bytes)?), len, _t: PhantomData })
    }

    /// A device buffer of `len` elements not cleared first (`cudaMalloc`
    /// without the `cudaMemset`): on a GPU each element holds whatever bytes
    /// the allocator left there, some value of `T` that no one chose; on the
    /// emulator every element is poison, and a kernel that reads one before
    /// anything wrote it stops with a fault that names the read and the
    /// buffer (as `compute-sanitizer --tool initcheck` does on a GPU).
    /// Write it before reading it, or use [`zeros`](Self::zeros).
    pub fn uninit<T: Pod>(&self, len: usize) -> Result<Buffer<T>> {
        let bytes = len.checked_mul(size_of::<T>()).ok_or(Error::InputTooLarge { n: len })?;
        Ok(Buffer { mem: self.allocated(self.backend().alloc_uninit(bytes)?), len, _t: PhantomData })
    }

    /// A device buffer holding `values`.
    pub fn upload<T: Pod>(&self, values: &[T]) -> Result<Buffer<T>> {
        let mut buffer = self.uninit::<T>(values.len())?;
        self.backend().write(&mut buffer.mem, 0, bytemuck::cast_slice(values))?;
        Ok(buffer)
    }

    /// Copies `values` into `buffer` from element `at`. Fails by name if they
    /// do not fit ([`Error::BufferTooShort`]).
    pub fn write<T: Pod>(&self, buffer: &mut Buffer<T>, at: usize, values: &[T]) -> Result<()> {
        if at.checked_add(values.len()).is_none_or(|end| end > buffer.len) {
            return Err(Error::OutOfRange { what: "gpu.write", start: at, count: values.len(), len: buffer.len });
        }
        self.check_use(buffer.mem.origin, byte_range::<T>(at, values.len()), Use::Write, &|| "gpu.write".into())?;
        self.backend().write(&mut buffer.mem, at * size_of::<T>(), bytemuck::cast_slice(values))
    }

    /// Copies a device buffer to the host, once the work before it is done.
    pub fn read<T: Pod>(&self, buffer: &Buffer<T>) -> Result<Vec<T>> {
        self.read_view(&buffer.slice(..))
    }

    /// Copies a range of a device buffer to the host, once the work before it is done.
    pub fn read_view<T: Pod>(&self, view: &View<'_, T>) -> Result<Vec<T>> {
        let (origin, bytes) = view.origin();
        self.check_use(origin, bytes, Use::Read, &|| "gpu.read".into())?;
        let mut out = vec![T::zeroed(); view.len];
        self.backend().read(view.mem, view.offset * size_of::<T>(), bytemuck::cast_slice_mut(&mut out))?;
        Ok(out)
    }

    /// Sets every element of `buffer` to `value`, in stream order (to poison
    /// an output before a run): one memset of the element's width.
    pub fn fill<T: Pod>(&self, buffer: &mut Buffer<T>, value: T) -> Result<()> {
        self.check_use(buffer.mem.origin, byte_range::<T>(0, buffer.len), Use::Write, &|| "gpu.fill".into())?;
        self.backend().fill(&mut buffer.mem, 0, bytemuck::bytes_of(&value), buffer.len)
    }

    /// Copies `src` into the start of `dst` on the device (`cuMemcpyDtoDAsync`).
    /// Fails by name if `dst` is shorter than `src`.
    pub fn copy<T: Pod>(&self, src: &View<'_, T>, dst: &mut Buffer<T>) -> Result<()> {
        if src.len > dst.len {
            return Err(Error::OutOfRange { what: "gpu.copy", start: 0, count: src.len, len: dst.len });
        }
        let (origin, bytes) = src.origin();
        self.check_use(origin, bytes, Use::Read, &|| "gpu.copy's source".into())?;
        self.check_use(dst.mem.origin, byte_range::<T>(0, src.len), Use::Write, &|| "gpu.copy's destination".into())?;
        self.backend().copy(src.mem, src.offset * size_of::<T>(), &mut dst.mem, 0, src.len * size_of::<T>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `Shared<T>` of `len` elements on emulator memory, without a device
    /// (so that Miri, which runs no emulated launch, can run it).
    fn shared<T: Pod>(len: usize) -> Shared<T> {
        let mem = cg_emulator::Memory::zeroed(len * size_of::<T>()).expect("host memory");
        let address = mem.address();
        Shared { _owner: super::super::SharedOwner::Emulated(mem), address: address as u64, host: address as *mut T, len }
    }

    /// Two threads sharing a `&Shared<T>`, one filling and one reading (and,
    /// for `u32`, storing with release), as safe code may. Run under Miri
    /// (`cargo miri test -p cg-launcher --lib shared_`, in scripts/test.sh),
    /// which reports a data race or atomics of two sizes on one location:
    /// it did when `fill` stored a byte at a time. Natively it checks that
    /// no element is ever torn.
    fn fill_and_read_from_two_threads<T: Pod + PartialEq + std::fmt::Debug + Send + Sync>(a: T, b: T) {
        let s = &shared::<T>(4);
        std::thread::scope(|scope| {
            scope.spawn(move || {
                for _ in 0..3 {
                    s.fill(a);
                    s.fill(b);
                }
            });
            for _ in 0..3 {
                for v in s.read() {
                    assert!(v == a || v == b || v == T::zeroed(), "a torn element: {v:?}");
                }
            }
        });
        assert_eq!(s.read(), vec![b; 4]);
    }

    #[test]
    fn shared_host_accesses_from_two_threads_never_race() {
        fill_and_read_from_two_threads::<u8>(0x5a, 0xa5);
        fill_and_read_from_two_threads::<u16>(0x5a5a, 0xa5a5);
        fill_and_read_from_two_threads::<f32>(1.5, -2.25);
        fill_and_read_from_two_threads::<u64>(0x5a5a_5a5a_5a5a_5a5a, 0xa5a5_a5a5_a5a5_a5a5);
        let s = shared::<u32>(2);
        std::thread::scope(|scope| {
            scope.spawn(|| s.store_release(1, 7));
            scope.spawn(|| s.fill(3));
            let _ = s.read();
        });
        assert!(s.read()[1] == 7 || s.read()[1] == 3);
    }
}
