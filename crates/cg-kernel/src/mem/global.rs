//! A kernel's pointer parameters, [`In`] and [`Out`]: their loads and
//! stores, one element or a vector at a time (`crate::mem` re-exports them).

use super::Word;
#[cfg(not(target_arch = "nvptx64"))]
use cg_emulator::thread as emu;

/// A kernel parameter the kernel only reads (`const T* __restrict__`).
#[cfg(target_arch = "nvptx64")]
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct In<T>(pub(super) *const T);

/// A kernel parameter the kernel only reads (`const T* __restrict__`).
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy)]
pub struct In<T> {
    pub(super) ptr: *const T,
    pub(super) len: usize,
    pub(super) name: &'static str,
}

/// A kernel parameter the kernel writes, and may read back (`T*`).
#[cfg(target_arch = "nvptx64")]
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct Out<T>(pub(super) *mut T);

/// A kernel parameter the kernel writes, and may read back (`T*`).
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy)]
pub struct Out<T> {
    pub(super) ptr: *mut T,
    pub(super) len: usize,
    pub(super) name: &'static str,
    pub(super) slot: u32,
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
