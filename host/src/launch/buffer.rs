//! Device memory on either backend: a CUDA allocation, or, on the emulated
//! device, host memory that the emulated kernels read and write.

use cudarc::driver::{CudaSlice, CudaView};
use std::ops::{Bound, Range, RangeBounds};

/// `range` as start..end within `len`.
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
    start..end
}

/// A buffer of `T` in device memory.
pub struct Buffer<T> {
    pub(crate) mem: Mem<T>,
}

pub(crate) enum Mem<T> {
    Cuda(CudaSlice<T>),
    Host(Box<[T]>),
}

/// A read-only range of a [`Buffer`].
pub struct View<'a, T> {
    pub(crate) mem: ViewMem<'a, T>,
}

pub(crate) enum ViewMem<'a, T> {
    Cuda(CudaView<'a, T>),
    Host(&'a [T]),
}

impl<T> Buffer<T> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        match &self.mem {
            Mem::Cuda(s) => s.len(),
            Mem::Host(h) => h.len(),
        }
    }

    /// Whether the buffer holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Elements `range` of the buffer.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> View<'_, T> {
        let range = bounds(range, self.len());
        View {
            mem: match &self.mem {
                Mem::Cuda(s) => ViewMem::Cuda(s.slice(range)),
                Mem::Host(h) => ViewMem::Host(&h[range]),
            },
        }
    }
}

impl<'a, T> View<'a, T> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        match &self.mem {
            ViewMem::Cuda(v) => v.len(),
            ViewMem::Host(h) => h.len(),
        }
    }

    /// Whether the view holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The same elements, borrowed again.
    pub fn reborrow(&self) -> View<'_, T> {
        View {
            mem: match &self.mem {
                ViewMem::Cuda(v) => ViewMem::Cuda(v.slice(..)),
                ViewMem::Host(h) => ViewMem::Host(h),
            },
        }
    }
}
