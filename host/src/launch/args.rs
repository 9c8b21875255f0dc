//! Host values for kernel parameters, typed by the `gpu` crate's parameter
//! markers: a `&View<f32>` (a read-only range) stands for `In<f32>`, only a
//! `&mut Buffer<f32>` for `Out<f32>`, and a `usize` for `usize`.

use super::buffer::{Buffer, Mem, View, ViewMem};
use crate::device::Gpu;
use cudarc::driver::{DevicePtr, DevicePtrMut, SyncOnDrop};
use gpu::kernels::{In, Out};
use std::ffi::c_void;

/// A host value that can be passed for the parameter marker `P`.
pub trait Arg<'a, P> {
    /// The parameter's bits (a device or host address, or an integer, widened
    /// to 64 bits; the driver reads the parameter's own size from the start of
    /// it, which on a little-endian host is the value) and, for CUDA memory,
    /// the guard that orders the access on the stream.
    fn raw(self, gpu: &'a Gpu) -> (u64, Option<SyncOnDrop<'a>>);
}

impl<'a, 'b: 'a, T> Arg<'a, In<T>> for &'a View<'b, T> {
    fn raw(self, gpu: &'a Gpu) -> (u64, Option<SyncOnDrop<'a>>) {
        match &self.mem {
            ViewMem::Cuda(v) => {
                let (ptr, guard) = v.device_ptr(gpu.stream());
                (ptr, Some(guard))
            }
            ViewMem::Host(h) => (h.as_ptr() as u64, None),
        }
    }
}

impl<'a, T> Arg<'a, Out<T>> for &'a mut Buffer<T> {
    fn raw(self, gpu: &'a Gpu) -> (u64, Option<SyncOnDrop<'a>>) {
        match &mut self.mem {
            Mem::Cuda(s) => {
                let (ptr, guard) = s.device_ptr_mut(gpu.stream());
                (ptr, Some(guard))
            }
            Mem::Host(h) => (h.as_mut_ptr() as u64, None),
        }
    }
}

impl<'a> Arg<'a, usize> for usize {
    fn raw(self, _: &'a Gpu) -> (u64, Option<SyncOnDrop<'a>>) {
        (self as u64, None)
    }
}

impl<'a> Arg<'a, u32> for u32 {
    fn raw(self, _: &'a Gpu) -> (u64, Option<SyncOnDrop<'a>>) {
        (self as u64, None)
    }
}

/// A whole argument list for a parameter tuple `P`.
pub trait Args<'a, P> {
    /// The parameters' bits in order, and the guards to drop after the launch.
    fn raw(self, gpu: &'a Gpu) -> (Vec<u64>, Vec<SyncOnDrop<'a>>);
}

macro_rules! args {
    ($($a:ident $p:ident),+) => {
        impl<'a, $($a: Arg<'a, $p>, $p),+> Args<'a, ($($p,)+)> for ($($a,)+) {
            #[allow(non_snake_case)]
            fn raw(self, gpu: &'a Gpu) -> (Vec<u64>, Vec<SyncOnDrop<'a>>) {
                let ($($a,)+) = self;
                let mut bits = Vec::new();
                let mut guards = Vec::new();
                $(
                    let (b, g) = $a.raw(gpu);
                    bits.push(b);
                    guards.extend(g);
                )+
                (bits, guards)
            }
        }
    };
}
args!(A0 P0);
args!(A0 P0, A1 P1);
args!(A0 P0, A1 P1, A2 P2);
args!(A0 P0, A1 P1, A2 P2, A3 P3);

/// Pointers to each parameter's bits, as `cuLaunchKernelEx` takes them.
pub fn param_pointers(bits: &mut [u64]) -> Vec<*mut c_void> {
    bits.iter_mut().map(|b| b as *mut u64 as *mut c_void).collect()
}
