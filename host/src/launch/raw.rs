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

/// Turns off cudarc's per-buffer event tracking (an event record, and a
/// stream wait, per buffer per launch): this program runs everything on one
/// stream, which orders it already, and the tracking would sit between the
/// timing events and the kernels.
pub fn single_stream(ctx: &cudarc::driver::CudaContext) {
    // SAFETY: every buffer, copy and launch of this program uses the context's one default stream.
    unsafe { ctx.disable_event_tracking() }
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

/// Four `u32` of page-locked host memory that kernels can write
/// (`cuMemHostAlloc` with `CU_MEMHOSTALLOC_DEVICEMAP`): the host can still
/// read them after a kernel has trapped and the context is unusable.
#[cfg(feature = "barrier-timeout")]
pub struct HostMapped {
    host: *mut u32,
    device: u64,
}

#[cfg(feature = "barrier-timeout")]
impl HostMapped {
    pub fn new() -> Result<HostMapped> {
        let mut host: *mut c_void = std::ptr::null_mut();
        // SAFETY: allocates 16 bytes; the pointer is checked by the result.
        unsafe { sys::cuMemHostAlloc(&mut host, 16, sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE) }
            .result()
            .map_err(Error::driver("cuMemHostAlloc"))?;
        // SAFETY: `host` is a fresh 16-byte allocation.
        unsafe { std::ptr::write_bytes(host as *mut u8, 0, 16) };
        let mut device = 0;
        // SAFETY: `host` was allocated with DEVICEMAP above.
        unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, host, 0) }
            .result()
            .map_err(Error::driver("cuMemHostGetDevicePointer"))?;
        Ok(HostMapped { host: host as *mut u32, device })
    }

    /// The address kernels write to.
    pub fn device_address(&self) -> u64 {
        self.device
    }

    /// The four words as they are now.
    pub fn words(&self) -> [u32; 4] {
        // SAFETY: four u32 of live host memory; volatile, since the GPU writes them.
        std::array::from_fn(|i| unsafe { self.host.add(i).read_volatile() })
    }
}

#[cfg(feature = "barrier-timeout")]
impl Drop for HostMapped {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemHostAlloc in `new`, freed once.
        let _ = unsafe { sys::cuMemFreeHost(self.host as *mut c_void) };
    }
}
