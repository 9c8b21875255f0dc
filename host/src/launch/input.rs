use crate::device::Gpu;
use crate::error::{Error, Result};
use cudarc::driver::CudaSlice;

/// An input of `len` floats on the device, followed by a poisoned guard.
///
/// The guard holds NaN, so a kernel that reads past the input produces NaN
/// rather than a plausible wrong number, and its reads stay inside the
/// allocation. Kernels are told the length, never the guard.
pub struct DeviceInput {
    pub(crate) buffer: CudaSlice<f32>,
    len: usize,
}

/// Floats of NaN after every input: enough for the largest block.
pub const GUARD: usize = 1024;

/// Device bytes an input of `n` floats takes, guard included.
pub fn device_bytes(n: u64) -> u64 {
    (n + GUARD as u64) * 4
}

impl DeviceInput {
    /// Copies `values` to the device and poisons the guard after them.
    pub fn upload(gpu: &Gpu, values: &[f32]) -> Result<DeviceInput> {
        let total = values.len() + GUARD;
        gpu.ensure_free(device_bytes(values.len() as u64))?;
        // A copy from pageable memory waits for the stream: bound that wait first.
        gpu.finish()?;
        let mut buffer = gpu.stream.alloc_zeros::<f32>(total).map_err(Error::driver("cuMemAlloc"))?;
        gpu.stream.memcpy_htod(values, &mut buffer.slice_mut(..values.len())).map_err(Error::driver("cuMemcpyHtoD"))?;
        gpu.stream
            .memcpy_htod(&[f32::NAN; GUARD], &mut buffer.slice_mut(values.len()..))
            .map_err(Error::driver("cuMemcpyHtoD"))?;
        Ok(DeviceInput { buffer, len: values.len() })
    }

    /// The input, without its guard.
    pub fn view(&self) -> cudarc::driver::CudaView<'_, f32> {
        self.buffer.slice(..self.len)
    }

    /// The number of input floats.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the input is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Floats readable past the input.
    pub fn guard(&self) -> usize {
        self.buffer.len() - self.len
    }
}
