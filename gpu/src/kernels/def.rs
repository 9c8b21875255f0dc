//! How a kernel is described to the host: its entry name, its parameters as
//! types, whether it calls `grid.sync()`, and its dynamic shared memory.
//!
//! The host launches only through these definitions, so a kernel's launch
//! contract is written once, here, next to the kernel.

use core::marker::PhantomData;

/// A kernel parameter that is a device pointer the kernel reads (`const T*`).
pub struct In<T>(PhantomData<T>);
/// A kernel parameter that is a device pointer the kernel writes (`T*`).
pub struct Out<T>(PhantomData<T>);

/// Launch contract: the kernel calls `grid.sync()`, so it must be launched
/// cooperatively with a grid that fits on the device at once.
pub struct GridSync;
/// Launch contract: no grid barrier; any launch is safe.
pub struct NoGridSync;

/// A kernel as the host sees it. `P` is the parameter list as a tuple of
/// [`In`], [`Out`] and plain values; `C` is [`GridSync`] or [`NoGridSync`].
pub struct KernelDef<P: Params, C> {
    /// The PTX entry name (`#[unsafe(no_mangle)]` makes it the function's name).
    pub name: &'static str,
    /// Dynamic shared memory in bytes for a block of the given thread count.
    /// The launch and the occupancy query both use it.
    pub shared_bytes: fn(block_threads: u32) -> u32,
    /// How many elements past the input's length the kernel may read, for a
    /// block of the given thread count (0 for a correct kernel).
    pub overread: fn(block_threads: u32) -> usize,
    /// The kernel function itself; its type is the one `P` implies, so a
    /// definition whose parameters differ from the kernel's does not compile.
    /// On the host, the emulator calls it.
    pub entry: P::Entry,
    _contract: PhantomData<fn(P, C)>,
}

impl<P: Params, C> KernelDef<P, C> {
    /// A definition; `shared_bytes` is the dynamic shared memory per block size.
    pub const fn new(name: &'static str, entry: P::Entry, shared_bytes: fn(u32) -> u32) -> Self {
        KernelDef { name, shared_bytes, overread: no_overread, entry, _contract: PhantomData }
    }

    /// The same definition, declaring reads up to `overread` elements past the input.
    pub const fn with_overread(self, overread: fn(u32) -> usize) -> Self {
        KernelDef { overread, ..self }
    }
}

/// No dynamic shared memory.
pub const fn no_shared_memory(_block_threads: u32) -> u32 {
    0
}

/// Reads nothing past the input.
pub const fn no_overread(_block_threads: u32) -> usize {
    0
}

/// Reads up to one block's worth, less one, past the input.
pub const fn up_to_one_block(block_threads: u32) -> usize {
    block_threads as usize - 1
}

/// One `f32` per warp: what [`block_sum`](super::sum) keeps its warp totals in.
pub const fn one_f32_per_warp(block_threads: u32) -> u32 {
    block_threads.div_ceil(32) * 4
}

/// The Rust type a parameter marker stands for in the kernel's signature.
pub trait Param {
    /// The raw type the kernel receives.
    type Raw;
    /// The value from the 64 bits a launch passes (an address or an integer).
    fn from_bits(bits: u64) -> Self::Raw;
}
impl<T> Param for In<T> {
    type Raw = *const T;
    fn from_bits(bits: u64) -> *const T {
        bits as usize as *const T
    }
}
impl<T> Param for Out<T> {
    type Raw = *mut T;
    fn from_bits(bits: u64) -> *mut T {
        bits as usize as *mut T
    }
}
impl Param for usize {
    type Raw = usize;
    fn from_bits(bits: u64) -> usize {
        bits as usize
    }
}
impl Param for u32 {
    type Raw = u32;
    fn from_bits(bits: u64) -> u32 {
        bits as u32
    }
}

/// A parameter list, and the entry signature it implies.
pub trait Params {
    /// `unsafe extern "gpu-kernel" fn(...)` with the raw parameter types in the
    /// PTX build; `unsafe fn(...)` on the host, where the emulator calls it.
    type Entry: Copy + Send + Sync;

    /// Calls `entry` with the parameters decoded from `bits` (how the emulator
    /// runs a kernel the host launched with raw parameter values).
    ///
    /// # Safety
    /// `bits` holds one value per parameter satisfying the kernel's contract.
    #[cfg(not(target_arch = "nvptx64"))]
    unsafe fn call(entry: Self::Entry, bits: &[u64]);
}

macro_rules! params {
    ($($p:ident $i:tt),+) => {
        impl<$($p: Param),+> Params for ($($p,)+) {
            #[cfg(target_arch = "nvptx64")]
            type Entry = unsafe extern "gpu-kernel" fn($($p::Raw),+);
            #[cfg(not(target_arch = "nvptx64"))]
            type Entry = unsafe fn($($p::Raw),+);

            #[cfg(not(target_arch = "nvptx64"))]
            unsafe fn call(entry: Self::Entry, bits: &[u64]) {
                // SAFETY: the caller's contract.
                unsafe { entry($($p::from_bits(bits[$i])),+) }
            }
        }
    };
}
params!(A 0);
params!(A 0, B 1);
params!(A 0, B 1, C 2);
params!(A 0, B 1, C 2, D 3);
params!(A 0, B 1, C 2, D 3, E 4);

/// Declares a kernel: an unmangled `extern "gpu-kernel"` function in the PTX
/// build (one `.entry` per kernel), and an ordinary `unsafe fn` of the same
/// source on the host, where the emulator runs it.
macro_rules! kernel {
    ($(#[$attr:meta])* pub unsafe fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        $(#[$attr])*
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub unsafe extern "gpu-kernel" fn $name($($arg: $ty),*) $body

        $(#[$attr])*
        #[cfg(not(target_arch = "nvptx64"))]
        pub unsafe fn $name($($arg: $ty),*) $body
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_sum_keeps_one_float_per_warp() {
        assert_eq!(one_f32_per_warp(32), 4);
        assert_eq!(one_f32_per_warp(256), 32);
        assert_eq!(one_f32_per_warp(1024), 128);
        assert_eq!(one_f32_per_warp(48), 8);
        assert_eq!(no_shared_memory(256), 0);
    }
}
