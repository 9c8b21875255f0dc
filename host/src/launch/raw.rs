//! Raw driver calls cudarc's safe layer does not offer. Every `unsafe` block
//! of the host is in this module or in [`super::args`].

use crate::error::{Error, Result};
use cudarc::driver::sys;
use std::ffi::c_void;

/// Whether `libcuda` can be loaded (cudarc's `is_culib_present`).
pub fn driver_present() -> bool {
    // SAFETY: loading the library runs its initializers; that is what using the driver needs anyway.
    unsafe { sys::is_culib_present() }
}

/// The CUDA version the driver supports, as `CUDA major.minor` (`cuDriverGetVersion`).
pub fn driver_version() -> Result<String> {
    let mut v = 0i32;
    // SAFETY: cuDriverGetVersion writes one int.
    unsafe { sys::cuDriverGetVersion(&mut v) }.result().map_err(Error::driver("cuDriverGetVersion"))?;
    Ok(format!("CUDA {}.{}", v / 1000, (v % 1000) / 10))
}

/// One attribute of a loaded function (`cuFuncGetAttribute`).
pub fn function_attribute(f: sys::CUfunction, attr: sys::CUfunction_attribute) -> Result<u32> {
    let mut v = 0i32;
    // SAFETY: `f` is a live function handle (its module is held by the caller) and the call writes one int.
    unsafe { sys::cuFuncGetAttribute(&mut v, attr, f) }.result().map_err(Error::driver("cuFuncGetAttribute"))?;
    Ok(v.max(0) as u32)
}

/// The launch shape, as `cudaLaunchConfig_t` holds it.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub blocks: u32,
    pub threads: u32,
    pub shared_bytes: u32,
}

/// `cuLaunchKernelEx`, with `CU_LAUNCH_ATTRIBUTE_COOPERATIVE` when `cooperative`
/// (the driver-API twin of the lesson's `cudaLaunchKernelEx` with
/// `cudaLaunchAttributeCooperative`).
///
/// # Safety
/// `params` points at one value per kernel parameter, each of the parameter's
/// size, and the memory those values address satisfies the kernel's contract.
pub unsafe fn launch_kernel_ex(
    f: sys::CUfunction,
    stream: sys::CUstream,
    shape: Shape,
    cooperative: bool,
    params: &mut [*mut c_void],
) -> Result<(), cudarc::driver::DriverError> {
    // SAFETY: CUlaunchAttribute is a plain C struct and union; zero is a valid start.
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attr.value.cooperative = 1;
    let config = sys::CUlaunchConfig {
        gridDimX: shape.blocks,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: shape.threads,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: shape.shared_bytes,
        hStream: stream,
        attrs: &mut attr,
        numAttrs: cooperative as u32,
    };
    // SAFETY: the caller's contract covers `params`; `config` lives across the call.
    unsafe { sys::cuLaunchKernelEx(&config, f, params.as_mut_ptr(), std::ptr::null_mut()) }.result()
}
