//! Opening a GPU and reading what the lesson needs to know about it.

use crate::error::{Error, Result};
use crate::sizing::SmResources;
use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{CudaContext, CudaModule, CudaStream};
use serde::Serialize;
use std::sync::{Arc, OnceLock};

/// What the lesson prints about the device.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceInfo {
    pub ordinal: usize,
    pub name: String,
    pub compute_capability: (i32, i32),
    pub sms: u32,
    /// `cudaDevAttrCooperativeLaunch`.
    pub cooperative_launch: bool,
    pub max_threads_per_block: u32,
    pub sm: SmResources,
    pub driver_version: String,
}

/// An open device: its context, the stream everything runs on, and its facts.
pub struct Gpu {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) module: OnceLock<Arc<CudaModule>>,
    pub info: DeviceInfo,
}

impl Gpu {
    /// Opens device `ordinal`, refusing one that cannot run a cooperative launch.
    pub fn open(ordinal: usize) -> Result<Gpu> {
        if !crate::launch::raw::driver_present() {
            return Err(Error::NoDriver);
        }
        let count = CudaContext::device_count().map_err(Error::driver("cuDeviceGetCount"))?.max(0) as usize;
        if ordinal >= count {
            return Err(Error::NoDevice { requested: ordinal, count });
        }
        let ctx = CudaContext::new(ordinal).map_err(Error::driver("cuDevicePrimaryCtxRetain"))?;
        let attr = |a: Attr| ctx.attribute(a).map(|v| v.max(0) as u32).map_err(Error::driver("cuDeviceGetAttribute"));
        let name = ctx.name().map_err(Error::driver("cuDeviceGetName"))?;
        let compute_capability = ctx.compute_capability().map_err(Error::driver("cuDeviceGetAttribute"))?;
        if compute_capability.0 < 6 {
            let (major, minor) = compute_capability;
            return Err(Error::ComputeCapabilityTooLow { name, major, minor });
        }
        let cooperative_launch = attr(Attr::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)? == 1;
        if !cooperative_launch {
            return Err(Error::NoCooperativeLaunch { name });
        }
        let info = DeviceInfo {
            ordinal,
            name,
            compute_capability,
            sms: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            cooperative_launch,
            max_threads_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            sm: SmResources {
                max_threads: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
                max_blocks: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)?,
                registers: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)?,
                shared_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)?,
                reserved_shared_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK)?,
            },
            driver_version: crate::launch::raw::driver_version()?,
        };
        let stream = ctx.default_stream();
        Ok(Gpu { ctx, stream, module: OnceLock::new(), info })
    }

    /// Free device memory in bytes.
    pub fn free_memory(&self) -> Result<u64> {
        let (free, _total) = self.ctx.mem_get_info().map_err(Error::driver("cuMemGetInfo"))?;
        Ok(free as u64)
    }

    /// Fails with a named error unless `bytes` more device memory is free.
    pub fn ensure_free(&self, bytes: u64) -> Result<()> {
        let free = self.free_memory()?;
        if bytes > free {
            return Err(Error::OutOfDeviceMemory { needed: bytes, free });
        }
        Ok(())
    }
}
