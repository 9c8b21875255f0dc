//! Opening a device (a CUDA GPU, or the emulated one) and reading what the
//! lesson needs to know about it.

use crate::error::{Error, Result};
use crate::sizing::SmResources;
use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{CudaContext, CudaModule, CudaStream};
use serde::Serialize;
use std::cell::Cell;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// How long the host waits for the device before calling a kernel stuck.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

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
    pub l2_bytes: u32,
    pub sm: SmResources,
    pub driver_version: String,
    /// The device is the CPU emulator, not a GPU.
    pub emulated: bool,
}

/// A CUDA device: its context, the stream everything runs on, the module.
pub(crate) struct Cuda {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub module: OnceLock<Arc<CudaModule>>,
    #[cfg(feature = "barrier-timeout")]
    pub barrier_report: OnceLock<crate::launch::raw::HostMapped>,
}

pub(crate) enum Backend {
    Cuda(Cuda),
    Emulated(gpu::emu::Device),
}

/// An open device and its facts.
pub struct Gpu {
    pub(crate) backend: Backend,
    /// The kernel launched last, for naming it in errors.
    pub(crate) last_kernel: Cell<&'static str>,
    /// The longest the host waits for the device.
    pub(crate) timeout: Cell<Duration>,
    pub info: DeviceInfo,
}

impl Gpu {
    /// Opens CUDA device `ordinal`, refusing one that cannot run a cooperative launch.
    pub fn open(ordinal: usize) -> Result<Gpu> {
        if !crate::launch::raw::driver_present() {
            return Err(Error::NoDriver);
        }
        let count = CudaContext::device_count().map_err(Error::driver("cuDeviceGetCount"))?.max(0) as usize;
        check_ordinal(ordinal, count)?;
        let ctx = CudaContext::new(ordinal).map_err(Error::driver("cuDevicePrimaryCtxRetain"))?;
        let attr = |a: Attr| ctx.attribute(a).map(|v| v.max(0) as u32).map_err(Error::driver("cuDeviceGetAttribute"));
        let name = ctx.name().map_err(Error::driver("cuDeviceGetName"))?;
        let compute_capability = ctx.compute_capability().map_err(Error::driver("cuDeviceGetAttribute"))?;
        let cooperative_launch = attr(Attr::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)? == 1;
        check_cooperative(&name, compute_capability, cooperative_launch)?;
        let info = DeviceInfo {
            ordinal,
            name,
            compute_capability,
            sms: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            cooperative_launch,
            max_threads_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            l2_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?,
            sm: SmResources {
                max_threads: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
                max_blocks: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)?,
                registers: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)?,
                shared_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)?,
                reserved_shared_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK)?,
            },
            driver_version: crate::launch::raw::driver_version()?,
            emulated: false,
        };
        crate::launch::raw::single_stream(&ctx);
        let stream = ctx.default_stream();
        let cuda = Cuda {
            ctx,
            stream,
            module: OnceLock::new(),
            #[cfg(feature = "barrier-timeout")]
            barrier_report: OnceLock::new(),
        };
        Ok(Gpu::with(Backend::Cuda(cuda), info))
    }

    /// The emulated device (see `gpu::emu`): the same kernels, run on the CPU.
    pub fn emulated(device: gpu::emu::Device) -> Gpu {
        let info = DeviceInfo {
            ordinal: 0,
            name: format!(
                "emulated GPU on the CPU ({} SMs of {} threads, {} blocks, {} KiB shared memory)",
                device.sms,
                device.max_threads_per_sm,
                device.max_blocks_per_sm,
                device.shared_bytes_per_sm / 1024
            ),
            compute_capability: (0, 0),
            sms: device.sms,
            cooperative_launch: true,
            max_threads_per_block: device.max_threads_per_block,
            l2_bytes: 0,
            sm: SmResources {
                max_threads: device.max_threads_per_sm,
                max_blocks: device.max_blocks_per_sm,
                registers: u32::MAX,
                shared_bytes: device.shared_bytes_per_sm,
                reserved_shared_per_block: 0,
            },
            driver_version: "none (emulated)".into(),
            emulated: true,
        };
        Gpu::with(Backend::Emulated(device), info)
    }

    fn with(backend: Backend, info: DeviceInfo) -> Gpu {
        Gpu { backend, last_kernel: Cell::new("(no kernel yet)"), timeout: Cell::new(DEFAULT_TIMEOUT), info }
    }

    /// The CUDA stream; only called for CUDA memory, which only a CUDA device makes.
    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        match &self.backend {
            Backend::Cuda(c) => &c.stream,
            Backend::Emulated(_) => unreachable!("CUDA memory on the emulated device"),
        }
    }

    /// Sets how long the host waits for the device before calling a kernel stuck.
    pub fn set_timeout(&self, timeout: Duration) {
        self.timeout.set(timeout);
    }

    /// Free device memory in bytes.
    pub fn free_memory(&self) -> Result<u64> {
        match &self.backend {
            Backend::Cuda(c) => Ok(c.ctx.mem_get_info().map_err(Error::driver("cuMemGetInfo"))?.0 as u64),
            Backend::Emulated(_) => Ok(u64::MAX),
        }
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

/// A device index must be below the driver's device count.
pub fn check_ordinal(requested: usize, count: usize) -> Result<()> {
    if requested >= count {
        return Err(Error::NoDevice { requested, count });
    }
    Ok(())
}

/// Cooperative launch needs compute capability 6.0+ and the device's support.
pub fn check_cooperative(name: &str, (major, minor): (i32, i32), cooperative_launch: bool) -> Result<()> {
    if major < 6 {
        return Err(Error::ComputeCapabilityTooLow { name: name.to_string(), major, minor });
    }
    if !cooperative_launch {
        return Err(Error::NoCooperativeLaunch { name: name.to_string() });
    }
    Ok(())
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_index_past_the_count_is_refused_with_the_range() {
        assert!(check_ordinal(0, 1).is_ok());
        let err = check_ordinal(3, 1).unwrap_err().to_string();
        assert_eq!(err, "no CUDA device 3: the driver reports 1 device(s), so use --device 0..0");
        assert!(check_ordinal(0, 0).unwrap_err().to_string().contains("reports 0 device(s)"));
    }

    #[test]
    fn old_or_unsupported_devices_are_refused_by_name() {
        assert!(check_cooperative("NVIDIA H200", (9, 0), true).is_ok());
        let old = check_cooperative("Tesla K80", (3, 7), true).unwrap_err().to_string();
        assert!(old.contains("Tesla K80 is compute capability 3.7; cooperative launch needs 6.0"), "{old}");
        let no = check_cooperative("Tesla T4", (7, 5), false).unwrap_err().to_string();
        assert!(no.contains("does not support cooperative launch"), "{no}");
    }

    #[test]
    fn errors_a_user_can_cause_are_one_line() {
        let errors = [
            Error::NoDriver,
            Error::OutOfDeviceMemory { needed: 1 << 40, free: 1 << 30 },
            Error::OutOfHostMemory { needed: 1 << 40 },
            Error::BadBlockSize { block: 48, max: 1024 },
            Error::Timeout { kernel: "reduce_cooperative_grid", seconds: 60.0 },
            Error::GridBarrierTimedOut {
                kernel: "grid_sync_missing_block",
                report: gpu::cg::barrier::Report { block: 4, arrived: 1055, expected: 1056 },
            },
        ];
        for e in errors {
            let s = e.to_string();
            assert_eq!(s.lines().count(), 1, "{s}");
        }
        let oom = Error::OutOfDeviceMemory { needed: 3 << 30, free: 1 << 30 }.to_string();
        assert!(oom.contains("3072.0 MiB") && oom.contains("1024.0 MiB is free"), "{oom}");
        let barrier = Error::GridBarrierTimedOut {
            kernel: "k",
            report: gpu::cg::barrier::Report { block: 4, arrived: 37, expected: 1056 },
        };
        assert!(barrier.to_string().starts_with("grid barrier timed out in k: 37 of 1056 blocks arrived"));
    }
}
