//! The memory a kernel touches: its pointer parameters ([`In`], [`Out`]) and
//! the block's dynamic shared memory ([`dynamic_shared`]), read, written and
//! updated atomically.
//!
//! On the GPU each is a bare pointer, so an access compiles to one load or
//! store and nothing checks the index, exactly as in C++: reading past the end
//! is undefined behaviour, which is why every access is an `unsafe` call whose
//! caller says why the index is in bounds. On the emulator ([`crate::emu`]) the
//! same calls check the index against the buffer the launch passed and report
//! an access outside it, a misaligned vector load, or a data race, as a named
//! fault instead of undefined behaviour.
//!
//! | C++ | Rust |
//! |---|---|
//! | `const float* __restrict__ in` | `input: In<f32>` |
//! | `v += in[i];` | `v += unsafe { input.read(i) };` |
//! | `float* partials` | `partials: Out<f32>` |
//! | `partials[b] = total;` | `unsafe { partials.write(b, total) };` |
//! | `extern __shared__ float totals[];` | `let totals = dynamic_shared::<f32>();` |
//! | `atomicAdd(&bins[b], 1)` | `unsafe { bins.atomic_add(b, 1) }` (and [`Out`]'s atomics; [`Scope`], [`MemoryOrder`]) |
//!
//! Elements are `u8`, `i8`, `u16`, `i16`, `u32`, `i32`, `u64`, `i64`, `f32`
//! or `f64` ([`Word`]); atomics take the 4- and 8-byte ones ([`Atomic`],
//! [`AtomicInteger`]).

#[cfg(not(target_arch = "nvptx64"))]
use crate::emu::thread as emu;

/// A value a kernel can load and store: `u8`, `i8`, `u16`, `i16`, `u32`,
/// `i32`, `u64`, `i64`, `f32`, `f64`. Sealed: its loads are 1-, 2-, 4- or
/// 8-byte instructions, which another type's size could not match.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an element a kernel loads and stores",
    label = "not one of u8, i8, u16, i16, u32, i32, u64, i64, f32, f64",
    note = "kernel memory (In, Out, shared memory) holds those ten types; a bool is a u8 of 0 or 1, and a struct is an array of each field"
)]
pub trait Word: Copy + sealed::Sealed {
    /// The value's bits, zero-extended to 64.
    fn to_bits64(self) -> u64;
    /// The value from [`to_bits64`](Self::to_bits64)'s bits (the low ones).
    fn from_bits64(bits: u64) -> Self;
    /// Loads through the read-only cache (`__ldg`).
    ///
    /// # Safety
    /// `p` is valid and aligned, and nothing writes it while the kernel runs.
    #[cfg(target_arch = "nvptx64")]
    unsafe fn ldg(p: *const Self) -> Self;
}

/// `Word` for types of `$bits`'s size, loaded by `$ldg`.
macro_rules! word {
    ($bits:ty, $ldg:ident: $($t:ty),*) => {$(
        impl Word for $t {
            #[inline(always)]
            fn to_bits64(self) -> u64 { <$bits>::from_ne_bytes(self.to_ne_bytes()) as u64 }
            #[inline(always)]
            fn from_bits64(bits: u64) -> Self { <$t>::from_ne_bytes((bits as $bits).to_ne_bytes()) }
            #[cfg(target_arch = "nvptx64")]
            #[inline(always)]
            unsafe fn ldg(p: *const Self) -> Self {
                // SAFETY: the caller's contract.
                Self::from_bits64(unsafe { crate::arch::$ldg(p as *const $bits) } as u64)
            }
        }
    )*};
}
word!(u8, ldg_b8: u8, i8);
word!(u16, ldg_b16: u16, i16);
word!(u32, ldg_b32: f32, u32, i32);
word!(u64, ldg_b64: f64, u64, i64);

/// What [`Word`], [`Atomic`] and `cg::ShuffleValue` are limited to.
pub(crate) mod sealed {
    pub trait Sealed {}
    macro_rules! sealed {
        ($($t:ty),*) => {$( impl Sealed for $t {} )*};
    }
    sealed!(u8, i8, u16, i16, f32, u32, i32, f64, u64, i64);
}

/// A kernel parameter the kernel only reads (`const T* __restrict__`).
#[cfg(target_arch = "nvptx64")]
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct In<T>(*const T);

/// A kernel parameter the kernel only reads (`const T* __restrict__`).
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy)]
pub struct In<T> {
    ptr: *const T,
    len: usize,
    name: &'static str,
}

/// A kernel parameter the kernel writes, and may read back (`T*`).
#[cfg(target_arch = "nvptx64")]
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct Out<T>(*mut T);

/// A kernel parameter the kernel writes, and may read back (`T*`).
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy)]
pub struct Out<T> {
    ptr: *mut T,
    len: usize,
    name: &'static str,
    slot: u32,
}

impl<T: Word> In<T> {
    /// `in[i]`: element `i`, through the read-only cache (what nvcc emits for a
    /// `const T* __restrict__` parameter).
    ///
    /// # Safety
    /// `i` is below the length of the buffer the launch passed. The GPU does not
    /// check; the emulator reports the read as a fault.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn read(self, i: usize) -> T {
        #[cfg(target_arch = "nvptx64")]
        {
            // SAFETY: the caller's contract; nothing writes an `In` buffer
            // during a launch. A buffer holds at most isize::MAX bytes (what
            // `add` requires), so i is below that over T's size: told to the
            // compiler, it lets `i += step` in a loop have a trip count.
            unsafe {
                crate::arch::assume(i <= isize::MAX as usize / size_of::<T>());
                T::ldg(self.0.add(i))
            }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            if i >= self.len {
                emu::out_of_bounds(self.name, i, self.len, emu::Access::Read);
            }
            emu::tick();
            emu::check_initialized(self.ptr.wrapping_add(i) as usize, size_of::<T>(), self.name, i, core::panic::Location::caller());
            // SAFETY: `i` is in bounds, and the host passes `In` buffers that
            // nothing writes while the launch runs.
            unsafe { self.ptr.add(i).read() }
        }
    }

    /// The buffer's address, for alignment arithmetic.
    #[inline(always)]
    pub fn address(self) -> usize {
        #[cfg(target_arch = "nvptx64")]
        {
            self.0 as usize
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            self.ptr as usize
        }
    }
}

/// A vector's bits as 4-byte words and as its `K` elements (which may be
/// fewer bytes: the words past them are not read). A union, not
/// `transmute_copy`, so that the compiler keeps the elements in registers.
#[cfg(target_arch = "nvptx64")]
#[repr(C)]
union Vector<T: Copy, const K: usize> {
    words: [u32; 4],
    values: [T; K],
}

/// Fails to compile unless `K` elements of `T` make one vector access of
/// 4, 8 or 16 bytes (`read_vector`, `write_vector`); returns the bytes.
const fn vector_bytes<T, const K: usize>() -> usize {
    let bytes = K * size_of::<T>();
    assert!(bytes == 4 || bytes == 8 || bytes == 16, "a vector access is 4, 8 or 16 bytes: K * size_of::<T>()");
    bytes
}

impl<T: Word> In<T> {
    /// `in[i..i + K]` in one vector load of `K * size_of::<T>()` bytes, 4, 8
    /// or 16 (CUDA's `*(const uint4*)&in[i]`, `uint2` or `uint`; CUB's
    /// vectorized `LoadDirectBlockedVectorized`): sixteen `u8`s, eight
    /// `u16`s, four `f32`s or two `u64`s at once. A `K` that makes another
    /// size does not compile.
    ///
    /// # Safety
    /// `i + K` is at most the buffer's length and `&in[i]` is aligned to the
    /// vector's size. The emulator reports either failing as a fault.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn read_vector<const K: usize>(self, i: usize) -> [T; K] {
        let bytes = const { vector_bytes::<T, K>() };
        #[cfg(target_arch = "nvptx64")]
        {
            // SAFETY: the caller's contract (in bounds, aligned to `bytes`);
            // the words read are K * size_of::<T>() bytes, the array's size,
            // and every bit pattern is a `Word`'s.
            unsafe {
                let p = self.0.add(i) as *const u32;
                match bytes {
                    16 => Vector { words: crate::arch::ldg_b32x4(p) }.values,
                    8 => {
                        let [a, b] = crate::arch::ldg_b32x2(p);
                        Vector { words: [a, b, 0, 0] }.values
                    }
                    _ => Vector { words: [crate::arch::ldg_b32(p), 0, 0, 0] }.values,
                }
            }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            if i.checked_add(K).is_none_or(|end| end > self.len) {
                emu::out_of_bounds(self.name, i.saturating_add(K - 1), self.len, emu::Access::Read);
            }
            let p = self.ptr.wrapping_add(i);
            if !(p as usize).is_multiple_of(bytes) {
                emu::misaligned(self.name, i, bytes);
            }
            emu::tick();
            emu::check_initialized(p as usize, bytes, self.name, i, core::panic::Location::caller());
            // SAFETY: in bounds (above); nothing writes an `In` buffer during a launch.
            core::array::from_fn(|k| unsafe { p.add(k).read() })
        }
    }
}

impl<T: Word> Out<T> {
    /// `out[i..i + K] = v` in one vector store of `K * size_of::<T>()`
    /// bytes, 4, 8 or 16 (CUDA's `*(uint4*)&out[i] = v`), as
    /// [`In::read_vector`] loads.
    ///
    /// # Safety
    /// `i + K` is at most the buffer's length, `&out[i]` is aligned to the
    /// vector's size, and no other thread touches those elements unless a
    /// barrier orders the two. The emulator reports each failing as a fault.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn write_vector<const K: usize>(self, i: usize, v: [T; K]) {
        let bytes = const { vector_bytes::<T, K>() };
        #[cfg(target_arch = "nvptx64")]
        {
            #[repr(C, align(16))]
            struct V16([u32; 4]);
            #[repr(C, align(8))]
            struct V8([u32; 2]);
            // SAFETY: the caller's contract (in bounds, aligned to `bytes`);
            // the array is `bytes` long, so the words copied are its own.
            unsafe {
                let p = self.0.add(i);
                match bytes {
                    16 => (p as *mut V16).write(V16(core::mem::transmute_copy(&v))),
                    8 => (p as *mut V8).write(V8(core::mem::transmute_copy(&v))),
                    _ => (p as *mut u32).write(core::mem::transmute_copy(&v)),
                }
            }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            if i.checked_add(K).is_none_or(|end| end > self.len) {
                emu::out_of_bounds(self.name, i.saturating_add(K - 1), self.len, emu::Access::Write);
            }
            if !(self.ptr.wrapping_add(i) as usize).is_multiple_of(bytes) {
                emu::misaligned(self.name, i, bytes);
            }
            for (k, v) in v.into_iter().enumerate() {
                emu::global_write(self.slot, self.name, i + k, v.to_bits64());
            }
        }
    }
}

impl In<f32> {
    /// `in[i..i + 4]` in one 16-byte load (`*(const float4*)&in[i]`).
    ///
    /// # Safety
    /// `i + 4` is at most the buffer's length and `&in[i]` is 16-byte aligned.
    /// The emulator reports either failing as a fault.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn read4(self, i: usize) -> [f32; 4] {
        #[cfg(target_arch = "nvptx64")]
        {
            // SAFETY: the caller's contract.
            unsafe { crate::arch::ldg_f32x4(self.0.add(i)) }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            if i.checked_add(4).is_none_or(|end| end > self.len) {
                emu::out_of_bounds(self.name, i.saturating_add(3), self.len, emu::Access::Read);
            }
            let p = self.ptr.wrapping_add(i);
            if !(p as usize).is_multiple_of(16) {
                emu::misaligned(self.name, i, 16);
            }
            emu::tick();
            emu::check_initialized(p as usize, 16, self.name, i, core::panic::Location::caller());
            // SAFETY: in bounds (above); nothing writes an `In` buffer during a launch.
            unsafe { [p.read(), p.add(1).read(), p.add(2).read(), p.add(3).read()] }
        }
    }
}

impl Out<f32> {
    /// `out[i..i + 4] = v` in one 16-byte store (`*(float4*)&out[i] = v`).
    ///
    /// # Safety
    /// `i + 4` is at most the buffer's length, `&out[i]` is 16-byte aligned,
    /// and no other thread touches those elements unless a barrier orders
    /// the two. The emulator reports each failing as a fault.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn write4(self, i: usize, v: [f32; 4]) {
        #[cfg(target_arch = "nvptx64")]
        {
            #[repr(C, align(16))]
            struct F4([f32; 4]);
            // SAFETY: the caller's contract (in bounds, aligned).
            unsafe { (self.0.add(i) as *mut F4).write(F4(v)) };
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            if i.checked_add(4).is_none_or(|end| end > self.len) {
                emu::out_of_bounds(self.name, i.saturating_add(3), self.len, emu::Access::Write);
            }
            if !(self.ptr.wrapping_add(i) as usize).is_multiple_of(16) {
                emu::misaligned(self.name, i, 16);
            }
            for (k, v) in v.into_iter().enumerate() {
                emu::global_write(self.slot, self.name, i + k, v.to_bits64());
            }
        }
    }
}

impl<T: Word> Out<T> {
    /// `out[i] = v`.
    ///
    /// # Safety
    /// `i` is below the length of the buffer the launch passed, and no other
    /// thread touches element `i` unless a barrier orders the two. The GPU
    /// checks neither; the emulator reports each as a fault.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn write(self, i: usize, v: T) {
        #[cfg(target_arch = "nvptx64")]
        {
            // SAFETY: the caller's contract.
            unsafe { *self.0.add(i) = v };
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            if i >= self.len {
                emu::out_of_bounds(self.name, i, self.len, emu::Access::Write);
            }
            emu::global_write(self.slot, self.name, i, v.to_bits64());
        }
    }

    /// `out[i]`, as this thread may see it: its block's own writes, and every
    /// block's writes from before the last `grid.sync()`.
    ///
    /// # Safety
    /// As [`write`](Self::write).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn read(self, i: usize) -> T {
        #[cfg(target_arch = "nvptx64")]
        {
            // SAFETY: the caller's contract; on the bound, see `In::read`.
            unsafe {
                crate::arch::assume(i <= isize::MAX as usize / size_of::<T>());
                *self.0.add(i)
            }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            if i >= self.len {
                emu::out_of_bounds(self.name, i, self.len, emu::Access::Read);
            }
            let at = core::panic::Location::caller();
            let published = move || {
                emu::check_initialized(self.ptr.wrapping_add(i) as usize, size_of::<T>(), self.name, i, at);
                // SAFETY: `i` is in bounds of the buffer the launch passed, whose
                // elements are aligned; every access to it during the launch is
                // atomic or made while no block runs (another block's atomic may
                // be updating it now: a race the grid barrier reports).
                unsafe { emu::load_published(self.ptr.add(i) as usize, size_of::<T>()) }
            };
            T::from_bits64(emu::global_read(self.slot, self.name, i, &published))
        }
    }
}

impl Out<u32> {
    /// Element `i`'s address, checked against the buffer on the emulator.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn system_word(self, i: usize) -> *mut u32 {
        #[cfg(target_arch = "nvptx64")]
        {
            self.0.wrapping_add(i)
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            if i >= self.len {
                emu::out_of_bounds(self.name, i, self.len, emu::Access::Read);
            }
            self.ptr.wrapping_add(i)
        }
    }

    /// Element `i`, read with acquire semantics at system scope
    /// (`ld.acquire.sys`): what another GPU or the host released there is
    /// visible, and so is everything it wrote before. For memory that devices
    /// share (host-mapped); the emulator reads it as it is, not as its
    /// launch's blocks see it.
    ///
    /// # Safety
    /// `i` is below the length of the buffer the launch passed.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn load_acquire_system(self, i: usize) -> u32 {
        // SAFETY: the caller's contract.
        unsafe { crate::arch::ld_acquire_sys(self.system_word(i)) }
    }

    /// `out[i] = v` with release semantics at system scope (`st.release.sys`).
    ///
    /// # Safety
    /// As [`load_acquire_system`](Self::load_acquire_system).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn store_release_system(self, i: usize, v: u32) {
        // SAFETY: the caller's contract.
        unsafe { crate::arch::st_release_sys(self.system_word(i), v) }
    }

    /// Writes `new` to element `i` if it holds `expected`, at system scope
    /// (`atom.cas.sys`); returns what it held.
    ///
    /// # Safety
    /// As [`load_acquire_system`](Self::load_acquire_system).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn compare_swap_system(self, i: usize, expected: u32, new: u32) -> u32 {
        // SAFETY: the caller's contract.
        unsafe { crate::arch::atom_cas_sys(self.system_word(i), expected, new) }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl<T> In<T> {
    /// The parameter as the emulator passes it.
    ///
    /// # Safety
    /// `ptr` addresses `len` values that nothing writes while the launch runs.
    pub unsafe fn emulated(ptr: *const T, len: usize, name: &'static str) -> Self {
        In { ptr, len, name }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl<T> Out<T> {
    /// The parameter as the emulator passes it; `slot` numbers the launch's
    /// `Out` parameters, whose writes the emulator buffers per block.
    ///
    /// # Safety
    /// `ptr` addresses `len` values that only this launch touches.
    pub unsafe fn emulated(ptr: *mut T, len: usize, name: &'static str, slot: u32) -> Self {
        Out { ptr, len, name, slot }
    }
}

/// The block's dynamic shared memory, as an array of `T` (`extern __shared__ T name[]`).
/// Its size is the launch's dynamic shared-memory byte count, which a kernel's
/// definition states (`#[kernel(shared_memory = ...)]`).
#[derive(Clone, Copy)]
pub struct DynamicShared<T> {
    #[cfg(target_arch = "nvptx64")]
    base: *mut T,
    /// Where element 0 is, in elements of `T` from the start of the memory.
    #[cfg(not(target_arch = "nvptx64"))]
    first: usize,
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
        DynamicShared { first: 0, _t: core::marker::PhantomData }
    }
}

/// A static shared array of `N` elements of `T`, declared in a kernel's own
/// body: C++'s `__shared__ T name[N];`. One array per call site and block,
/// the same in every iteration of a loop around it, as C++'s.
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
/// body (a helper function, a path such as `cg_kernel::shared_array!`) it
/// is a compile error that says so. The emulator checks an access against
/// the kernel's whole shared memory, not against each array's `N`. Why this
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
    (@static $t:ty, $byte:expr) => {
        $crate::mem::static_array::<$t>($byte)
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

/// [`DynamicShared::static_array`] as a function: what `shared_array!`
/// calls, so that an element that is not a [`Word`] gets `Word`'s own error.
///
/// # Safety
/// As [`DynamicShared::static_array`]'s.
#[doc(hidden)]
#[inline(always)]
pub unsafe fn static_array<T: Word>(byte: usize) -> DynamicShared<T> {
    // SAFETY: the caller keeps `static_array`'s contract.
    unsafe { DynamicShared::static_array(byte) }
}

impl<T: Word> DynamicShared<T> {
    /// A `shared_array!` at `byte` of the block's shared memory: what
    /// `#[kernel]` rewrites each call into.
    ///
    /// # Safety
    /// `byte` is a multiple of `T`'s size, and the kernel's shared memory
    /// holds the array's elements from there (its definition counted them).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn static_array(byte: usize) -> Self {
        #[cfg(target_arch = "nvptx64")]
        {
            // Pointer arithmetic from the shared base, so the compiler still
            // sees shared memory (as in `after`).
            DynamicShared { base: crate::arch::dynamic_shared::<u8>().wrapping_add(byte) as *mut T }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            DynamicShared { first: byte / core::mem::size_of::<T>(), _t: core::marker::PhantomData }
        }
    }

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
            DynamicShared { first: end.div_ceil(u), _t: core::marker::PhantomData }
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
            emu::shared_write(self.first.saturating_add(i), core::mem::size_of::<T>(), v.to_bits64());
        }
    }
}

/// Which threads an atomic is atomic with, and whose accesses its ordering
/// reaches: C++'s `cuda::thread_scope` (PTX `.scope`).
///
/// Two atomics on one element are atomic with each other only if each one's
/// scope holds the other's thread: threads of two blocks updating one word
/// with [`Scope::Block`] race (the emulator names it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The threads of this block: `cuda::thread_scope_block`, PTX `.cta`
    /// (`atomicAdd_block`). Cheaper in shared memory, which only the block sees.
    Block,
    /// Every thread of this GPU: `cuda::thread_scope_device`, PTX `.gpu`.
    /// What `atomicAdd` is.
    Device,
    /// Every thread of the system, other GPUs and the host too:
    /// `cuda::thread_scope_system`, PTX `.sys` (`atomicAdd_system`), for
    /// memory they share (`Shared` in `cg-launcher`).
    System,
}

/// What an atomic orders around it: C++'s `cuda::memory_order` (PTX
/// `.sem`; all need sm_70, this crate's floor). C++'s `memory_order_seq_cst`
/// has no `atom` of its own (nvcc adds a `fence.sc` before one), and is not offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryOrder {
    /// The atomic alone: nothing before or after it is ordered by it
    /// (`memory_order_relaxed`, `.relaxed`). What `atomicAdd` is.
    Relaxed,
    /// This thread's later accesses stay after it: what a thread that reads
    /// a value another released sees (`memory_order_acquire`, `.acquire`).
    Acquire,
    /// This thread's earlier accesses stay before it
    /// (`memory_order_release`, `.release`).
    Release,
    /// Both (`memory_order_acq_rel`, `.acq_rel`).
    AcqRel,
}

/// An element type kernels update atomically: `u32`, `i32`, `u64`, `i64`,
/// `f32`, `f64`, those PTX's `atom` adds, exchanges and compares-and-swaps.
/// Sealed. (`u8` to `i16` have no atomics in PTX but a 2-byte `cas`.)
pub trait Atomic: Word + ops::AtomicOps {}
/// An integer element kernels also take the minimum, maximum, and, or and
/// xor of atomically: `u32`, `i32`, `u64`, `i64`. (PTX has no scalar
/// `atom.min.f32`: C++'s `atomicMin` has no `float` either.) Sealed.
pub trait AtomicInteger: Atomic + ops::AtomicIntegerOps {}

impl Atomic for u32 {}
impl Atomic for i32 {}
impl Atomic for u64 {}
impl Atomic for i64 {}
impl Atomic for f32 {}
impl Atomic for f64 {}
impl AtomicInteger for u32 {}
impl AtomicInteger for i32 {}
impl AtomicInteger for u64 {}
impl AtomicInteger for i64 {}

/// The instructions behind [`Atomic`] and [`AtomicInteger`] (the GPU build)
/// and the arithmetic the emulator does in their place.
pub(crate) mod ops {
    #[cfg(target_arch = "nvptx64")]
    use super::{MemoryOrder, Scope};
    #[cfg(target_arch = "nvptx64")]
    use crate::arch::{self, Space};

    pub trait AtomicOps: Copy {
        /// `a + b` as the atomic adds: wrapping for integers; for `f32` with
        /// subnormal inputs and result flushed to zero where `ftz` (global
        /// memory's `atom.add.f32` does, shared memory's does not).
        fn add(a: Self, b: Self, ftz: bool) -> Self;
        /// `-v` (wrapping): what `atomic_sub` adds.
        fn neg(v: Self) -> Self;
        #[cfg(target_arch = "nvptx64")]
        unsafe fn atom_add(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self;
        #[cfg(target_arch = "nvptx64")]
        unsafe fn atom_exch(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self;
        #[cfg(target_arch = "nvptx64")]
        unsafe fn atom_cas(space: Space, p: *mut Self, compare: Self, v: Self, scope: Scope, order: MemoryOrder) -> Self;
    }

    pub trait AtomicIntegerOps:
        AtomicOps + Ord + core::ops::BitAnd<Output = Self> + core::ops::BitOr<Output = Self> + core::ops::BitXor<Output = Self>
    {
        #[cfg(target_arch = "nvptx64")]
        unsafe fn atom_min(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self;
        #[cfg(target_arch = "nvptx64")]
        unsafe fn atom_max(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self;
        #[cfg(target_arch = "nvptx64")]
        unsafe fn atom_and(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self;
        #[cfg(target_arch = "nvptx64")]
        unsafe fn atom_or(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self;
        #[cfg(target_arch = "nvptx64")]
        unsafe fn atom_xor(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self;
    }

    /// One PTX instruction for `$t`, reached through the bits type `$bits`
    /// where the instruction is typeless (`.b32`, `.b64`).
    #[cfg(target_arch = "nvptx64")]
    macro_rules! via {
        ($f:ident, $t:ty, $bits:ty, $space:ident, $p:ident, $scope:ident, $order:ident, $($v:ident),*) => {
            <$t>::from_ne_bytes(
                // SAFETY: the caller's contract; `$bits` has `$t`'s size and alignment.
                unsafe { arch::$f($space, $p as *mut $bits, $(<$bits>::from_ne_bytes($v.to_ne_bytes()),)* $scope, $order) }.to_ne_bytes(),
            )
        };
    }

    macro_rules! integer {
        ($t:ty, $bits:ty, $add:ident: $add_ty:ty, $exch:ident, $cas:ident, $min:ident, $max:ident, $and:ident, $or:ident, $xor:ident) => {
            impl AtomicOps for $t {
                #[inline(always)]
                fn add(a: Self, b: Self, _ftz: bool) -> Self {
                    a.wrapping_add(b)
                }
                #[inline(always)]
                fn neg(v: Self) -> Self {
                    v.wrapping_neg()
                }
                #[cfg(target_arch = "nvptx64")]
                #[inline(always)]
                unsafe fn atom_add(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self {
                    via!($add, $t, $add_ty, space, p, scope, order, v)
                }
                #[cfg(target_arch = "nvptx64")]
                #[inline(always)]
                unsafe fn atom_exch(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self {
                    via!($exch, $t, $bits, space, p, scope, order, v)
                }
                #[cfg(target_arch = "nvptx64")]
                #[inline(always)]
                unsafe fn atom_cas(space: Space, p: *mut Self, compare: Self, v: Self, scope: Scope, order: MemoryOrder) -> Self {
                    via!($cas, $t, $bits, space, p, scope, order, compare, v)
                }
            }
            impl AtomicIntegerOps for $t {
                #[cfg(target_arch = "nvptx64")]
                #[inline(always)]
                unsafe fn atom_min(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self {
                    via!($min, $t, $t, space, p, scope, order, v)
                }
                #[cfg(target_arch = "nvptx64")]
                #[inline(always)]
                unsafe fn atom_max(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self {
                    via!($max, $t, $t, space, p, scope, order, v)
                }
                #[cfg(target_arch = "nvptx64")]
                #[inline(always)]
                unsafe fn atom_and(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self {
                    via!($and, $t, $bits, space, p, scope, order, v)
                }
                #[cfg(target_arch = "nvptx64")]
                #[inline(always)]
                unsafe fn atom_or(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self {
                    via!($or, $t, $bits, space, p, scope, order, v)
                }
                #[cfg(target_arch = "nvptx64")]
                #[inline(always)]
                unsafe fn atom_xor(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self {
                    via!($xor, $t, $bits, space, p, scope, order, v)
                }
            }
        };
    }
    integer!(u32, u32, atom_add_u32: u32, atom_exch_b32, atom_cas_b32, atom_min_u32, atom_max_u32, atom_and_b32, atom_or_b32, atom_xor_b32);
    integer!(i32, u32, atom_add_s32: i32, atom_exch_b32, atom_cas_b32, atom_min_s32, atom_max_s32, atom_and_b32, atom_or_b32, atom_xor_b32);
    integer!(u64, u64, atom_add_u64: u64, atom_exch_b64, atom_cas_b64, atom_min_u64, atom_max_u64, atom_and_b64, atom_or_b64, atom_xor_b64);
    // Two's complement: `atom.add.u64` adds an `i64` too (PTX has no `.s64` add).
    integer!(i64, u64, atom_add_u64: u64, atom_exch_b64, atom_cas_b64, atom_min_s64, atom_max_s64, atom_and_b64, atom_or_b64, atom_xor_b64);

    /// A subnormal `f32` as zero of its sign.
    fn flush(x: f32) -> f32 {
        if x.is_subnormal() { 0.0f32.copysign(x) } else { x }
    }

    macro_rules! float {
        ($t:ty, $bits:ty, $add:ident, $exch:ident, $cas:ident, |$a:ident, $b:ident, $ftz:ident| $sum:expr) => {
            impl AtomicOps for $t {
                #[inline(always)]
                fn add($a: Self, $b: Self, $ftz: bool) -> Self {
                    $sum
                }
                #[inline(always)]
                fn neg(v: Self) -> Self {
                    -v
                }
                #[cfg(target_arch = "nvptx64")]
                #[inline(always)]
                unsafe fn atom_add(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self {
                    via!($add, $t, $t, space, p, scope, order, v)
                }
                #[cfg(target_arch = "nvptx64")]
                #[inline(always)]
                unsafe fn atom_exch(space: Space, p: *mut Self, v: Self, scope: Scope, order: MemoryOrder) -> Self {
                    via!($exch, $t, $bits, space, p, scope, order, v)
                }
                #[cfg(target_arch = "nvptx64")]
                #[inline(always)]
                unsafe fn atom_cas(space: Space, p: *mut Self, compare: Self, v: Self, scope: Scope, order: MemoryOrder) -> Self {
                    via!($cas, $t, $bits, space, p, scope, order, compare, v)
                }
            }
        };
    }
    float!(f32, u32, atom_add_f32, atom_exch_b32, atom_cas_b32, |a, b, ftz| if ftz { flush(flush(a) + flush(b)) } else { a + b });
    float!(f64, u64, atom_add_f64, atom_exch_b64, atom_cas_b64, |a, b, _ftz| a + b);
}

/// One atomic operation as two methods: the CUDA function (relaxed, device
/// scope) and the `cuda::atomic_ref` form with a scope and an order. Each
/// container says where element `i` is (`atomic_address`), and how the
/// emulator runs it (`atomic_emulated`).
macro_rules! atomic_op {
    (
        $short:ident, $explicit:ident, $cuda:expr, $atomic_ref:expr,
        ($($arg:ident: $argty:ty),*) [$what:literal]
        |$p:ident, $scope:ident, $order:ident| $gpu:expr,
        |$old:ident, $global:ident| $emu:expr
    ) => {
        #[doc = concat!("`", $cuda, "`: ", $what, ", atomically; returns the element's old value.")]
        #[doc = ""]
        #[doc = concat!("Relaxed, at device scope, as `", $cuda, "` is: [`", stringify!($explicit), "`](Self::", stringify!($explicit), ") takes a scope and an order.")]
        #[doc = ""]
        #[doc = "# Safety"]
        #[doc = "As [`atomic_add`](Self::atomic_add)."]
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $short(self, i: usize, $($arg: $argty),*) -> T {
            let (scope, order) = (Scope::Device, MemoryOrder::Relaxed);
            #[cfg(target_arch = "nvptx64")]
            {
                // SAFETY: the caller's contract.
                let ($p, $scope, $order) = (unsafe { self.atomic_address(i) }, scope, order);
                // SAFETY: the caller's contract: in bounds, aligned, no plain access racing.
                unsafe { $gpu }
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                let _ = order;
                self.atomic_emulated(i, scope, concat!(stringify!($short), "()"), move |$old: T, $global: bool| $emu)
            }
        }

        #[doc = concat!("`cuda::atomic_ref<T, scope>(", $atomic_ref, ")`: [`", stringify!($short), "`](Self::", stringify!($short), ") with a scope and a memory order (PTX `atom.<order>.<scope>`).")]
        #[doc = ""]
        #[doc = "# Safety"]
        #[doc = "As [`atomic_add`](Self::atomic_add)."]
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $explicit(self, i: usize, $($arg: $argty,)* scope: Scope, order: MemoryOrder) -> T {
            #[cfg(target_arch = "nvptx64")]
            {
                // SAFETY: the caller's contract.
                let ($p, $scope, $order) = (unsafe { self.atomic_address(i) }, scope, order);
                // SAFETY: the caller's contract: in bounds, aligned, no plain access racing.
                unsafe { $gpu }
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                let _ = order;
                self.atomic_emulated(i, scope, concat!(stringify!($explicit), "()"), move |$old: T, $global: bool| $emu)
            }
        }
    };
}

/// Every atomic operation of `Atomic` types, for a container with
/// `atomic_address`, `atomic_emulated` and `SPACE`.
macro_rules! atomics {
    ($target:literal) => {
        atomic_op!(atomic_sub, atomic_sub_explicit, concat!("atomicSub(&", $target, ", v)"), concat!($target, ").fetch_sub(v, order"),
            (v: T) ["subtracts `v` from element `i` (wrapping for integers)"]
            |p, scope, order| T::atom_add(Self::SPACE, p, T::neg(v), scope, order),
            |old, global| T::add(old, T::neg(v), global));
        atomic_op!(atomic_exch, atomic_exch_explicit, concat!("atomicExch(&", $target, ", v)"), concat!($target, ").exchange(v, order"),
            (v: T) ["writes `v` to element `i`"]
            |p, scope, order| T::atom_exch(Self::SPACE, p, v, scope, order),
            |_old, _global| v);
        atomic_op!(atomic_cas, atomic_cas_explicit, concat!("atomicCAS(&", $target, ", compare, v)"),
            concat!($target, ").compare_exchange_strong(compare, v, order"),
            (compare: T, v: T) ["writes `v` to element `i` if it holds `compare`, bit for bit (so `-0.0` is not `0.0`, and a NaN matches its own bits)"]
            |p, scope, order| T::atom_cas(Self::SPACE, p, compare, v, scope, order),
            |old, _global| if old.to_bits64() == compare.to_bits64() { v } else { old });
    };
}

/// The integer atomics, as `atomics!`.
macro_rules! integer_atomics {
    ($target:literal) => {
        atomic_op!(atomic_min, atomic_min_explicit, concat!("atomicMin(&", $target, ", v)"), concat!($target, ").fetch_min(v, order"),
            (v: T) ["sets element `i` to the smaller of it and `v`"]
            |p, scope, order| T::atom_min(Self::SPACE, p, v, scope, order),
            |old, _global| core::cmp::min(old, v));
        atomic_op!(atomic_max, atomic_max_explicit, concat!("atomicMax(&", $target, ", v)"), concat!($target, ").fetch_max(v, order"),
            (v: T) ["sets element `i` to the larger of it and `v`"]
            |p, scope, order| T::atom_max(Self::SPACE, p, v, scope, order),
            |old, _global| core::cmp::max(old, v));
        atomic_op!(atomic_and, atomic_and_explicit, concat!("atomicAnd(&", $target, ", v)"), concat!($target, ").fetch_and(v, order"),
            (v: T) ["sets element `i` to its bitwise and with `v`"]
            |p, scope, order| T::atom_and(Self::SPACE, p, v, scope, order),
            |old, _global| old & v);
        atomic_op!(atomic_or, atomic_or_explicit, concat!("atomicOr(&", $target, ", v)"), concat!($target, ").fetch_or(v, order"),
            (v: T) ["sets element `i` to its bitwise or with `v`"]
            |p, scope, order| T::atom_or(Self::SPACE, p, v, scope, order),
            |old, _global| old | v);
        atomic_op!(atomic_xor, atomic_xor_explicit, concat!("atomicXor(&", $target, ", v)"), concat!($target, ").fetch_xor(v, order"),
            (v: T) ["sets element `i` to its bitwise exclusive or with `v`"]
            |p, scope, order| T::atom_xor(Self::SPACE, p, v, scope, order),
            |old, _global| old ^ v);
    };
}

/// The atomic loads and stores of a container with `atomic_address`,
/// `atomic_emulated` and `SPACE`: `cuda::atomic_ref<T, scope>`'s `load` and
/// `store`, PTX `ld.<sem>.<scope>` and `st.<sem>.<scope>`.
macro_rules! ordered_access {
    ($target:literal) => {
        #[doc = concat!("`cuda::atomic_ref<T, scope>(", $target, ").load(cuda::memory_order_relaxed)`: element `i`, read atomically (PTX `ld.relaxed.<scope>`).")]
        ///
        /// Not a data race with another thread's atomic on the element (a
        /// store, an add, a compare-and-swap), in this block or another, as
        /// a plain `read` would be; it orders nothing around it. A loop that
        /// waits for another thread to set a flag reads it with this (or
        /// [`atomic_load_acquire`](Self::atomic_load_acquire), to see what
        /// the writer wrote before the flag).
        ///
        /// # Safety
        /// As [`atomic_add`](Self::atomic_add).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn atomic_load(self, i: usize, scope: Scope) -> T {
            // SAFETY: the caller's contract.
            unsafe { self.ordered_load(i, scope, false, "atomic_load()") }
        }

        #[doc = concat!("`cuda::atomic_ref<T, scope>(", $target, ").load(cuda::memory_order_acquire)`: [`atomic_load`](Self::atomic_load), and this thread's later accesses stay after it: they see what the thread whose release it read wrote before that release (PTX `ld.acquire.<scope>`).")]
        ///
        /// # Safety
        /// As [`atomic_add`](Self::atomic_add).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn atomic_load_acquire(self, i: usize, scope: Scope) -> T {
            // SAFETY: the caller's contract.
            unsafe { self.ordered_load(i, scope, true, "atomic_load_acquire()") }
        }

        #[doc = concat!("`cuda::atomic_ref<T, scope>(", $target, ").store(v, cuda::memory_order_relaxed)`: writes `v` to element `i` atomically (PTX `st.relaxed.<scope>`); orders nothing around it.")]
        ///
        /// # Safety
        /// As [`atomic_add`](Self::atomic_add).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn atomic_store(self, i: usize, v: T, scope: Scope) {
            // SAFETY: the caller's contract.
            unsafe { self.ordered_store(i, v, scope, false, "atomic_store()") }
        }

        #[doc = concat!("`cuda::atomic_ref<T, scope>(", $target, ").store(v, cuda::memory_order_release)`: [`atomic_store`](Self::atomic_store), and this thread's earlier accesses stay before it, so a thread that reads `v` with [`atomic_load_acquire`](Self::atomic_load_acquire) sees them (PTX `st.release.<scope>`).")]
        ///
        /// # Safety
        /// As [`atomic_add`](Self::atomic_add).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn atomic_store_release(self, i: usize, v: T, scope: Scope) {
            // SAFETY: the caller's contract.
            unsafe { self.ordered_store(i, v, scope, true, "atomic_store_release()") }
        }

        /// An atomic load: `ld.<relaxed|acquire>.<scope>` on a GPU, the
        /// emulator's atomic that changes nothing on the CPU.
        ///
        /// # Safety
        /// As [`atomic_add`](Self::atomic_add).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        unsafe fn ordered_load(self, i: usize, scope: Scope, acquire: bool, call: &'static str) -> T {
            #[cfg(target_arch = "nvptx64")]
            {
                let _ = call;
                // SAFETY: the caller's contract: in bounds and aligned.
                let p = unsafe { self.atomic_address(i) };
                // SAFETY: as above; an `Atomic` type is 4 or 8 bytes.
                let bits = unsafe {
                    if size_of::<T>() == 4 {
                        crate::arch::ld_ordered_b32(Self::SPACE, p as *const u32, scope, acquire) as u64
                    } else {
                        crate::arch::ld_ordered_b64(Self::SPACE, p as *const u64, scope, acquire)
                    }
                };
                T::from_bits64(bits)
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                let _ = acquire;
                self.load_emulated(i, scope, call)
            }
        }

        /// An atomic store, as [`ordered_load`](Self::ordered_load).
        ///
        /// # Safety
        /// As [`atomic_add`](Self::atomic_add).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        unsafe fn ordered_store(self, i: usize, v: T, scope: Scope, release: bool, call: &'static str) {
            #[cfg(target_arch = "nvptx64")]
            {
                let _ = call;
                // SAFETY: the caller's contract: in bounds and aligned.
                let p = unsafe { self.atomic_address(i) };
                // SAFETY: as above; an `Atomic` type is 4 or 8 bytes.
                unsafe {
                    if size_of::<T>() == 4 {
                        crate::arch::st_ordered_b32(Self::SPACE, p as *mut u32, v.to_bits64() as u32, scope, release)
                    } else {
                        crate::arch::st_ordered_b64(Self::SPACE, p as *mut u64, v.to_bits64(), scope, release)
                    }
                }
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                let _ = release;
                self.atomic_emulated(i, scope, call, move |_, _| v);
            }
        }
    };
}

/// `atomic_add` and `atomic_add_explicit`, with the contract every atomic
/// of the container refers to (`$safety`).
macro_rules! atomic_add {
    ($target:literal, $cuda_target:literal, $(#[$safety:meta])*) => {
        #[doc = concat!("`atomicAdd(&", $target, ", v)`: adds `v` to element `i` atomically (wrapping for integers) and returns its old value.")]
        ///
        /// Relaxed, at device scope, as `atomicAdd` is: it orders nothing
        /// around it, and every thread of the GPU sees one sum.
        /// [`atomic_add_explicit`](Self::atomic_add_explicit) takes a scope and
        /// an order. Atomics on one element among themselves never race, in
        /// any block; the result of a float sum depends on the order the
        /// additions happened in, on a GPU as on the emulator.
        ///
        $(#[$safety])*
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn atomic_add(self, i: usize, v: T) -> T {
            #[cfg(target_arch = "nvptx64")]
            {
                // SAFETY: the caller's contract: in bounds, aligned, no plain access racing.
                unsafe { T::atom_add(Self::SPACE, self.atomic_address(i), v, Scope::Device, MemoryOrder::Relaxed) }
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                self.atomic_emulated(i, Scope::Device, "atomic_add()", move |old, global| T::add(old, v, global))
            }
        }

        #[doc = concat!("`cuda::atomic_ref<T, scope>(", $cuda_target, ").fetch_add(v, order)`: [`atomic_add`](Self::atomic_add) with a scope and a memory order (PTX `atom.<order>.<scope>.add`).")]
        ///
        /// # Safety
        /// As [`atomic_add`](Self::atomic_add).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn atomic_add_explicit(self, i: usize, v: T, scope: Scope, order: MemoryOrder) -> T {
            #[cfg(target_arch = "nvptx64")]
            {
                // SAFETY: the caller's contract: in bounds, aligned, no plain access racing.
                unsafe { T::atom_add(Self::SPACE, self.atomic_address(i), v, scope, order) }
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                let _ = order;
                self.atomic_emulated(i, scope, "atomic_add_explicit()", move |old, global| T::add(old, v, global))
            }
        }
    };
}

/// Atomics on a kernel parameter's element: CUDA's `atomicAdd(&out[i], v)`
/// and the rest, on global memory (`atom.global`).
///
/// | C++ | Rust |
/// |---|---|
/// | `atomicAdd(&out[i], v)` | `out.atomic_add(i, v)` |
/// | `atomicAdd_block(&out[i], v)` | `out.atomic_add_explicit(i, v, Scope::Block, MemoryOrder::Relaxed)` |
/// | `cuda::atomic_ref<T, cuda::thread_scope_device>(out[i]).fetch_add(v, cuda::memory_order_acq_rel)` | `out.atomic_add_explicit(i, v, Scope::Device, MemoryOrder::AcqRel)` |
/// | `atomicSub`, `atomicExch`, `atomicCAS` | `atomic_sub`, `atomic_exch`, `atomic_cas` (and `_explicit`) |
/// | `atomicMin`, `atomicMax`, `atomicAnd`, `atomicOr`, `atomicXor` | `atomic_min`, ... (integers: [`AtomicInteger`]) |
impl<T: Atomic> Out<T> {
    #[cfg(target_arch = "nvptx64")]
    const SPACE: crate::arch::Space = crate::arch::Space::Global;

    /// Element `i`'s address.
    ///
    /// # Safety
    /// `i` is below the buffer's length.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    unsafe fn atomic_address(self, i: usize) -> *mut T {
        // SAFETY: the caller's contract.
        unsafe { self.0.add(i) }
    }

    /// The emulator's atomic: element `i` becomes `op(old, true)` (true:
    /// global memory), at once for every block; returns `old`.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    fn atomic_emulated(self, i: usize, scope: Scope, call: &'static str, op: impl Fn(T, bool) -> T) -> T {
        T::from_bits64(emu::global_atomic(self.atomic_element(i), scope == Scope::Block, call, &|old| op(T::from_bits64(old), true).to_bits64()))
    }

    /// The emulator's atomic load of element `i`.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    fn load_emulated(self, i: usize, scope: Scope, call: &'static str) -> T {
        T::from_bits64(emu::global_atomic_load(self.atomic_element(i), scope == Scope::Block, call))
    }

    /// Element `i` as the emulator's atomics address it, after its bounds check.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    fn atomic_element(self, i: usize) -> emu::Element {
        if i >= self.len {
            emu::out_of_bounds(self.name, i, self.len, emu::Access::Atomic);
        }
        emu::Element { slot: self.slot, name: self.name, index: i, address: self.ptr.wrapping_add(i) as usize, size: size_of::<T>() }
    }

    atomic_add!("out[i]", "out[i]",
        /// # Safety
        /// - `i` is below the length of the buffer the launch passed (the GPU
        ///   does not check; the emulator reports the access as a fault);
        /// - no other thread reads or writes element `i` but atomically,
        ///   unless a barrier orders the two (`block.sync()` in a block,
        ///   `grid.sync()` between blocks): a plain access racing an atomic is
        ///   a data race, as in C++, and the emulator names both lines;
        /// - with [`Scope::Block`], no thread of another block updates element
        ///   `i` atomically unless `grid.sync()` orders the two;
        /// - the element is aligned to its size, as every buffer the launcher
        ///   passes is.
    );
    atomics!("out[i]");
    ordered_access!("out[i]");
}

/// The integer atomics of a kernel parameter's element (`atomicMin` and the rest).
impl<T: AtomicInteger> Out<T> {
    integer_atomics!("out[i]");
}

/// Atomics on the block's shared memory (`atom.shared`): the histogram's
/// `atomicAdd(&bins[b], 1)` is `bins.atomic_add(b, 1)`. Every thread that
/// sees it is in this block, so [`Scope::Block`] is enough for any of them;
/// the short forms are device-scoped as in C++.
impl<T: Atomic> DynamicShared<T> {
    #[cfg(target_arch = "nvptx64")]
    const SPACE: crate::arch::Space = crate::arch::Space::Shared;

    /// Element `i`'s address.
    ///
    /// # Safety
    /// Element `i` lies in the launch's dynamic shared memory.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    unsafe fn atomic_address(self, i: usize) -> *mut T {
        // SAFETY: the caller's contract.
        unsafe { self.base.add(i) }
    }

    /// The emulator's atomic: element `i` becomes `op(old, false)` (false:
    /// shared memory, whose `f32` add keeps subnormals); returns `old`.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    fn atomic_emulated(self, i: usize, _scope: Scope, call: &'static str, op: impl Fn(T, bool) -> T) -> T {
        T::from_bits64(emu::shared_atomic(self.first.saturating_add(i), size_of::<T>(), call, &|old| op(T::from_bits64(old), false).to_bits64()))
    }

    /// The emulator's atomic load of element `i`.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    fn load_emulated(self, i: usize, _scope: Scope, call: &'static str) -> T {
        T::from_bits64(emu::shared_atomic_load(self.first.saturating_add(i), size_of::<T>(), call))
    }

    atomic_add!("name[i]", "name[i]",
        /// # Safety
        /// - element `i` ends within the launch's dynamic shared-memory bytes,
        ///   counted from where this array starts (the emulator reports an
        ///   access past them);
        /// - no other thread reads or writes element `i` but atomically,
        ///   unless a barrier orders the two (`block.sync()`): the emulator
        ///   names both lines of a plain access racing an atomic;
        /// - the element is aligned to its size: the dynamic shared memory
        ///   starts aligned for the largest type the kernel views it as.
    );
    atomics!("name[i]");
    ordered_access!("name[i]");
}

/// The integer atomics of a shared-memory element (`atomicMin` and the rest).
impl<T: AtomicInteger> DynamicShared<T> {
    integer_atomics!("name[i]");
}
