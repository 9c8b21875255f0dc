use crate::device::Gpu;
use crate::error::{Error, Result};
use super::buffer::{Buffer, View};

/// An input of `len` floats on the device, followed by a poisoned guard.
///
/// The guard holds NaN, so a kernel that reads past the input produces NaN
/// rather than a plausible wrong number, and its reads stay inside the
/// allocation. Kernels are told the length, never the guard.
pub struct DeviceInput {
    pub(crate) buffer: Buffer<f32>,
    len: usize,
}

/// Floats of NaN after every input: enough for the largest block.
pub const GUARD: usize = 1024;

/// Device bytes an input of `n` floats takes, guard included.
pub fn device_bytes(n: u64) -> u64 {
    (n + GUARD as u64) * 4
}

/// An input the sum kernels can read: `n` floats on the device, and how many
/// more after them may be read.
pub trait Input {
    /// The input's floats.
    fn view(&self) -> View<'_, f32>;
    /// Floats readable past the input.
    fn guard(&self) -> usize;
}

/// One copy inside a [`DeviceInput`] that holds several back to back.
pub struct Window<'a> {
    view: View<'a, f32>,
    guard: usize,
}

impl Input for Window<'_> {
    fn view(&self) -> View<'_, f32> {
        self.view.reborrow()
    }
    fn guard(&self) -> usize {
        self.guard
    }
}

impl Input for DeviceInput {
    fn view(&self) -> View<'_, f32> {
        self.buffer.slice(..self.len)
    }
    fn guard(&self) -> usize {
        self.buffer.len() - self.len
    }
}

impl DeviceInput {
    /// `copies` copies of `values` back to back in one allocation, for
    /// benchmarks that rotate among inputs: see [`windows`](Self::windows).
    pub fn upload_copies(gpu: &Gpu, values: &[f32], copies: usize) -> Result<DeviceInput> {
        let len = values.len().saturating_mul(copies);
        gpu.ensure_free(device_bytes(len as u64))?;
        let mut padded = Vec::new();
        padded.try_reserve_exact(len.saturating_add(GUARD)).map_err(|_| Error::OutOfHostMemory { needed: device_bytes(len as u64) })?;
        for _ in 0..copies {
            padded.extend_from_slice(values);
        }
        padded.extend_from_slice(&[f32::NAN; GUARD]);
        Ok(DeviceInput { buffer: gpu.upload(&padded)?, len })
    }

    /// The input cut into windows of `n` floats.
    pub fn windows(&self, n: usize) -> Vec<Window<'_>> {
        let count = if n == 0 { 1 } else { self.len / n };
        (0..count).map(|i| Window { view: self.buffer.slice(i * n..(i + 1) * n), guard: self.buffer.len() - (i + 1) * n }).collect()
    }

    /// Copies `values` to the device and poisons the guard after them.
    pub fn upload(gpu: &Gpu, values: &[f32]) -> Result<DeviceInput> {
        Self::upload_copies(gpu, values, 1)
    }

    /// The number of input floats.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the input is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
