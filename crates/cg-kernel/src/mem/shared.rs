//! The block's shared memory: [`DynamicShared`], [`dynamic_shared`] and the
//! static arrays of `shared_array!` (`crate::mem` re-exports them).

use super::Word;
#[cfg(not(target_arch = "nvptx64"))]
use cg_emulator::thread as emu;

/// The block's dynamic shared memory, as an array of `T` (`extern __shared__ T name[]`).
/// Its size is the launch's dynamic shared-memory byte count, which a kernel's
/// definition states (`#[kernel(shared_memory = ...)]`).
#[derive(Clone, Copy)]
pub struct DynamicShared<T> {
    #[cfg(target_arch = "nvptx64")]
    pub(super) base: *mut T,
    /// Where element 0 is, in elements of `T` from the start of the memory.
    #[cfg(not(target_arch = "nvptx64"))]
    pub(super) first: usize,
    /// The elements the emulator bounds an index by: a `shared_array!`'s
    /// `N`; `usize::MAX` for the dynamic memory, which the launch's bytes
    /// bound instead.
    #[cfg(not(target_arch = "nvptx64"))]
    pub(super) len: usize,
    #[cfg(not(target_arch = "nvptx64"))]
    _t: core::marker::PhantomData<*mut T>,
}

/// The block's dynamic shared memory (`extern __shared__ T name[]`).
#[inline(always)]
pub fn dynamic_shared<T: Word>() -> DynamicShared<T> {
    #[cfg(target_arch = "nvptx64")]
    {
        DynamicShared { base: crate::arch::dynamic_shared::<T>() }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        DynamicShared { first: 0, len: usize::MAX, _t: core::marker::PhantomData }
    }
}

/// A static shared array of `N` elements of `T`, declared in a kernel's own
/// body: C++'s `__shared__ T name[N];`. One array per call site and block,
/// the same in every iteration of a loop around it, as C++'s. A call site
/// is where the call is written: one inside a closure, or inside a local
/// `macro_rules!`, is one array however many times the closure runs or the
/// macro expands (where a C macro would declare one per expansion).
///
/// ```
/// use cg_kernel::cg::this_thread_block;
/// use cg_kernel::kernel;
/// use cg_kernel::mem::{In, Out};
/// use cg_kernel::shared_array;
///
/// /// Each block's count of the bytes below 64 among its threads' bytes.
/// ///
/// /// # Safety
/// /// `bytes` holds one byte per thread of the grid, `counts` one count per block.
/// #[kernel]
/// pub unsafe fn small_bytes(bytes: In<u8>, counts: Out<u32>) {
///     let block = this_thread_block();
///     let t = block.thread_rank() as usize;
///     let seen = shared_array!(u32, 1); // C++'s `__shared__ unsigned seen[1];`
///     if t == 0 {
///         // SAFETY: element 0 of the array, this thread's alone until the barrier.
///         unsafe { seen.write(0, 0) };
///     }
///     block.sync();
///     // SAFETY: one byte per thread; the array's word touched atomically.
///     unsafe {
///         let b = bytes.read(block.group_index().x as usize * block.num_threads() as usize + t);
///         if b < 64 {
///             seen.atomic_add(0, 1);
///         }
///     }
///     block.sync();
///     if t == 0 {
///         // SAFETY: after the barrier; one count per block.
///         unsafe { counts.write(block.group_index().x as usize, seen.read(0)) };
///     }
/// }
///
/// // Its 4 bytes are in the kernel's shared memory, with no function to write.
/// assert_eq!(SMALL_BYTES.shared_bytes(128), 4);
/// ```
///
/// `#[kernel]` finds each `shared_array!(T, N)` of the kernel's body (as a
/// bare name: `use cg_kernel::shared_array;`), adds its bytes to the
/// kernel's shared memory after the dynamic part its `shared_memory`
/// function sizes (rounded up to 16 bytes), and gives each call its own
/// offset there. So the launcher's occupancy, the launch and the emulator
/// count them with no function to write, and `dynamic_shared()` and
/// what a helper function carves from it never overlap them. `N` is a
/// constant expression, whose names mean the same inside the body as
/// outside it (a shadowed one is a compile error). Outside the kernel's own
/// body (a helper function, a path such as `cg_kernel::shared_array!`), and
/// inside an item declared in the body (a nested `fn`, an `impl`'s method,
/// a `trait` or a `mod`, which another kernel could call), it is a compile
/// error that says so. The emulator checks each access against
/// the array's own `N` (an index past it, into the next array, is a fault
/// that names the line). Why this
/// design and not a `static` in the shared address space: rustc's nvptx
/// target has no way to place a Rust `static` in `.shared`, and the
/// launcher must know the bytes before the launch, which a declaration the
/// kernel's attribute sees gives it.
#[macro_export]
macro_rules! shared_array {
    // What `#[kernel]` rewrites each call of its body into: the array at
    // `byte` of the block's shared memory, by the `unsafe` constructor
    // (whose contract the kernel's definition keeps), in the `unsafe` block
    // `#[kernel]` writes around it.
    (@static $t:ty, $byte:expr, $len:expr) => {
        $crate::mem::static_array::<$t>($byte, $len)
    };
    ($($t:tt)*) => {
        ::core::compile_error!(
            "`shared_array!(T, N)` is a static shared array of a #[kernel]'s own body, written as a bare name (`use cg_kernel::shared_array;`): #[kernel] counts it into the kernel's shared memory; in a helper function, take a `DynamicShared<T>` argument instead"
        )
    };
}

/// The dynamic part of a kernel with `shared_array!`s and no
/// `shared_memory` function: none.
#[doc(hidden)]
pub const fn no_dynamic_shared(_threads_per_block: u32) -> u32 {
    0
}

/// Where a kernel's `shared_array!`s start: after `dynamic_bytes`, rounded
/// up to 16.
#[doc(hidden)]
pub const fn static_arrays_start(dynamic_bytes: u32) -> usize {
    (dynamic_bytes as usize).div_ceil(16) * 16
}

/// Where a kernel's fixed shared regions begin: its `shared_array!`s, then,
/// in a cooperative kernel, the grid collectives' bytes
/// (`cg::GRID_SHARED_BYTES`), `tail` bytes in all, at the end of the
/// launch's shared memory (`%dynamic_smem_size`). Read from the launch, not
/// computed from the kernel's sizing function, so that the offsets cannot
/// disagree with the allocation whatever that function does; the host's
/// allocation (`KernelDef::shared_bytes`) is the dynamic part rounded up to
/// 16 bytes, then the tail.
///
/// A launch with less than `tail` bytes, or one whose tail would not start
/// on a 16-byte boundary (a host other than this project's), traps on a GPU
/// and faults on the emulator, before any region is touched.
#[doc(hidden)]
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn shared_tail_start(tail: usize) -> usize {
    let size = crate::arch::dynamic_smem_size() as usize;
    if size < tail || !(size - tail).is_multiple_of(16) {
        #[cfg(target_arch = "nvptx64")]
        crate::arch::trap();
        #[cfg(not(target_arch = "nvptx64"))]
        panic!(
            "the launch gave {size} bytes of shared memory, but the kernel's shared_array!s and grid collectives need their {tail} bytes at its end, after a dynamic part rounded up to 16 bytes: launch it with its definition's shared_bytes()"
        );
    }
    size - tail
}

/// The offsets of arrays of `(bytes, align)` one after another, each at its
/// alignment, from a 16-byte-aligned start; and their end.
#[doc(hidden)]
pub const fn static_arrays_layout<const K: usize>(arrays: [(usize, usize); K]) -> ([usize; K], usize) {
    let mut offsets = [0; K];
    let mut end = 0usize;
    let mut k = 0;
    while k < K {
        let (bytes, align) = arrays[k];
        let start = end.div_ceil(align) * align;
        offsets[k] = start;
        end = start + bytes;
        k += 1;
    }
    (offsets, end)
}

/// A `shared_array!` of `len` elements at `byte` of the block's shared
/// memory: what `#[kernel]` rewrites each call into. The emulator bounds its
/// indices by `len`. A function bounded by [`Word`], so that an element of
/// another type gets `Word`'s own error.
///
/// # Safety
/// `byte` is a multiple of `T`'s size, and the kernel's shared memory holds
/// the array's `len` elements from there (its definition counted them).
#[doc(hidden)]
#[inline(always)]
#[cfg_attr(target_arch = "nvptx64", allow(unused_variables))]
pub unsafe fn static_array<T: Word>(byte: usize, len: usize) -> DynamicShared<T> {
    #[cfg(target_arch = "nvptx64")]
    {
        // Pointer arithmetic from the shared base, so the compiler still
        // sees shared memory (as in `after`).
        DynamicShared { base: crate::arch::dynamic_shared::<u8>().wrapping_add(byte) as *mut T }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        DynamicShared { first: byte / core::mem::size_of::<T>(), len, _t: core::marker::PhantomData }
    }
}

impl<T: Word> DynamicShared<T> {
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub(crate) fn base(self) -> *mut T {
        self.base
    }

    /// Where its element 0 is, in elements from the memory's start.
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    pub(crate) fn first(self) -> usize {
        self.first
    }

    /// A second array, of `U`, in the same dynamic shared memory: it starts
    /// after `count` elements of this one, at the first byte aligned for a
    /// `U` after them. C++ carves its one `extern __shared__` array the same
    /// way by hand (`float *b = (float *)&a[count];`, the alignment its
    /// writer's to get right). The kernel's `shared_memory` function counts
    /// the bytes of every array; an access past them is what it would be in
    /// the first array (the emulator names it).
    ///
    /// ```
    /// use cg_kernel::cg::this_thread_block;
    /// use cg_kernel::kernel;
    /// use cg_kernel::mem::{Out, dynamic_shared};
    ///
    /// /// A count and a sum per thread: the bytes of both arrays.
    /// pub const fn counts_then_sums(threads: u32) -> u32 {
    ///     (threads * 4).next_multiple_of(8) + threads * 8
    /// }
    ///
    /// /// # Safety
    /// /// `out` holds one element per thread of the block; one block.
    /// #[kernel(shared_memory = counts_then_sums)]
    /// pub unsafe fn two_arrays(out: Out<f64>) {
    ///     let block = this_thread_block();
    ///     let (t, threads) = (block.thread_rank() as usize, block.num_threads() as usize);
    ///     let counts = dynamic_shared::<u32>(); // blockDim.x counts
    ///     let sums = counts.after::<f64>(threads); // then blockDim.x sums, 8-byte aligned
    ///     // SAFETY: each thread's own element of each array, inside counts_then_sums.
    ///     unsafe {
    ///         counts.write(t, t as u32);
    ///         sums.write(t, 0.5 * t as f64);
    ///         out.write(t, counts.read(t) as f64 + sums.read(t));
    ///     }
    /// }
    /// # assert_eq!(TWO_ARRAYS.shared_bytes(3), 16 + 24);
    /// ```
    #[inline(always)]
    pub fn after<U: Word>(self, count: usize) -> DynamicShared<U> {
        // Every Word is aligned to its size, a power of two.
        let u = core::mem::size_of::<U>();
        #[cfg(target_arch = "nvptx64")]
        {
            // Pointer arithmetic, not an integer's: the compiler then still
            // sees shared memory, and loads and stores it as `ld.shared`.
            let end = self.base.wrapping_add(count) as *mut u8;
            DynamicShared { base: end.wrapping_add((end as usize).wrapping_neg() & (u - 1)) as *mut U }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let end = self.first.saturating_add(count).saturating_mul(core::mem::size_of::<T>());
            DynamicShared { first: end.div_ceil(u), len: usize::MAX, _t: core::marker::PhantomData }
        }
    }

    /// On the emulator, faults an index past a `shared_array!`'s `N` (an
    /// access that the kernel's shared memory holds but the array does not:
    /// another array's element, or the dynamic part's).
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    #[track_caller]
    pub(super) fn bound(self, i: usize, access: emu::Access) {
        if self.len == usize::MAX {
            // The dynamic part, which the launch's fixed end does not belong to.
            emu::dynamic_shared_bound(self.first.saturating_add(i), core::mem::size_of::<T>(), access);
        } else if i >= self.len {
            emu::out_of_bounds("a shared_array!", i, self.len, access);
        }
    }

    /// `name[i]` as a volatile load (`ld.volatile.shared`: relaxed, so a
    /// load that races a store reads one value or the other, never
    /// undefined behaviour). For memory that only this crate's collectives
    /// touch, whose order their own barriers keep when every thread makes
    /// the call, and which a call some threads skip must not turn into
    /// undefined behaviour.
    ///
    /// # Safety
    /// Element `i` is within the launch's shared memory, counted from where
    /// this array starts, and aligned.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub(crate) unsafe fn load(self, i: usize) -> T {
        #[cfg(target_arch = "nvptx64")]
        {
            // SAFETY: the caller's contract.
            unsafe { core::ptr::read_volatile(self.base.add(i)) }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            self.bound(i, emu::Access::Read);
            T::from_bits64(emu::shared_read(self.first.saturating_add(i), core::mem::size_of::<T>()))
        }
    }

    /// `name[i] = v` as a volatile store ([`load`](Self::load)'s twin).
    ///
    /// # Safety
    /// As [`load`](Self::load).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub(crate) unsafe fn store(self, i: usize, v: T) {
        #[cfg(target_arch = "nvptx64")]
        {
            // SAFETY: the caller's contract.
            unsafe { core::ptr::write_volatile(self.base.add(i), v) };
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            self.bound(i, emu::Access::Write);
            emu::shared_write(self.first.saturating_add(i), core::mem::size_of::<T>(), v.to_bits64());
        }
    }

    /// `name[i]`.
    ///
    /// # Safety
    /// Element `i` ends within the launch's dynamic shared-memory bytes,
    /// counted from where this array starts (byte 0, or where
    /// [`after`](Self::after) put it), and a barrier orders this read after any other thread's write of
    /// element `i`. The emulator reports either failing as a fault.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn read(self, i: usize) -> T {
        #[cfg(target_arch = "nvptx64")]
        {
            // SAFETY: the caller's contract.
            unsafe { *self.base.add(i) }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            self.bound(i, emu::Access::Read);
            T::from_bits64(emu::shared_read(self.first.saturating_add(i), core::mem::size_of::<T>()))
        }
    }

    /// `name[i] = v`.
    ///
    /// # Safety
    /// As [`read`](Self::read), with every other thread's access of element `i`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn write(self, i: usize, v: T) {
        #[cfg(target_arch = "nvptx64")]
        {
            // SAFETY: the caller's contract.
            unsafe { *self.base.add(i) = v };
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            self.bound(i, emu::Access::Write);
            emu::shared_write(self.first.saturating_add(i), core::mem::size_of::<T>(), v.to_bits64());
        }
    }
}
