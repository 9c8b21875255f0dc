//! The memory a kernel touches: its pointer parameters ([`In`], [`Out`]) and
//! the block's dynamic shared memory ([`dynamic_shared`]).
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

#[cfg(not(target_arch = "nvptx64"))]
use crate::emu::thread as emu;

/// A value a kernel can load and store: 4 or 8 bytes (`f32`, `u32`, `i32`,
/// `f64`, `u64`, `i64`). Sealed: its loads are 4- or 8-byte instructions,
/// which another type's size could not match.
pub trait Word: Copy + sealed::Sealed {
    /// The value's bits, widened to 64.
    fn to_bits64(self) -> u64;
    /// The value from [`to_bits64`](Self::to_bits64)'s bits.
    fn from_bits64(bits: u64) -> Self;
    /// Loads through the read-only cache (`__ldg`).
    ///
    /// # Safety
    /// `p` is valid and aligned, and nothing writes it while the kernel runs.
    #[cfg(target_arch = "nvptx64")]
    unsafe fn ldg(p: *const Self) -> Self;
}

macro_rules! word32 {
    ($($t:ty),*) => {$(
        impl Word for $t {
            #[inline(always)]
            fn to_bits64(self) -> u64 { u32::from_ne_bytes(self.to_ne_bytes()) as u64 }
            #[inline(always)]
            fn from_bits64(bits: u64) -> Self { <$t>::from_ne_bytes((bits as u32).to_ne_bytes()) }
            #[cfg(target_arch = "nvptx64")]
            #[inline(always)]
            unsafe fn ldg(p: *const Self) -> Self {
                // SAFETY: the caller's contract.
                Self::from_bits64(unsafe { crate::arch::ldg_b32(p as *const u32) } as u64)
            }
        }
    )*};
}
macro_rules! word64 {
    ($($t:ty),*) => {$(
        impl Word for $t {
            #[inline(always)]
            fn to_bits64(self) -> u64 { u64::from_ne_bytes(self.to_ne_bytes()) }
            #[inline(always)]
            fn from_bits64(bits: u64) -> Self { <$t>::from_ne_bytes(bits.to_ne_bytes()) }
            #[cfg(target_arch = "nvptx64")]
            #[inline(always)]
            unsafe fn ldg(p: *const Self) -> Self {
                // SAFETY: the caller's contract.
                Self::from_bits64(unsafe { crate::arch::ldg_b64(p as *const u64) })
            }
        }
    )*};
}
word32!(f32, u32, i32);
word64!(f64, u64, i64);

/// What [`Word`] and `cg::ShuffleValue` are limited to.
pub(crate) mod sealed {
    pub trait Sealed {}
    macro_rules! sealed {
        ($($t:ty),*) => {$( impl Sealed for $t {} )*};
    }
    sealed!(f32, u32, i32, f64, u64, i64);
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
                // SAFETY: `i` is in bounds of the buffer the launch passed.
                T::to_bits64(unsafe { self.ptr.add(i).read() })
            };
            T::from_bits64(emu::global_read(self.slot, self.name, i, &published))
        }
    }
}

impl Out<u32> {
    /// `atomicAdd(&out[i], v)` with acquire-release ordering at GPU scope
    /// (`atom.add.acq_rel.gpu`; plain `atomicAdd` is relaxed): adds `v` to
    /// element `i` and returns the old value; this thread's accesses before
    /// it are visible GPU-wide to any thread that then reads the new value
    /// the same way. (Not modelled by the emulator, which reports it.)
    ///
    /// # Safety
    /// `i` is below the length of the buffer the launch passed.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn atomic_add(self, i: usize, v: u32) -> u32 {
        #[cfg(target_arch = "nvptx64")]
        {
            // SAFETY: the caller's contract.
            unsafe { crate::arch::atom_add_acq_rel_gpu(self.0.add(i), v) }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let _ = (i, v);
            emu::not_emulated("atomicAdd")
        }
    }

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
        DynamicShared { _t: core::marker::PhantomData }
    }
}

impl<T: Word> DynamicShared<T> {
    /// Its generic address, for mapping into another block of the cluster.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub(crate) fn base(self) -> *mut T {
        self.base
    }

    /// `name[i]`.
    ///
    /// # Safety
    /// `(i + 1) * size_of::<T>()` is at most the launch's dynamic shared-memory
    /// bytes, and a barrier orders this read after any other thread's write of
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
            T::from_bits64(emu::shared_read(i, core::mem::size_of::<T>()))
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
            emu::shared_write(i, core::mem::size_of::<T>(), v.to_bits64());
        }
    }
}
