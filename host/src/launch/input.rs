//! Inputs on the device, each followed by a guard of NaN.

use super::prelude::*;
use crate::device::{Buffer, Gpu, View};
use crate::error::{Error, Result};
use crate::reference;
use cg_launcher::error::Error as L;

/// Floats of NaN after every input: enough for the largest block.
pub const GUARD: usize = 1024;

/// Device bytes an input of `n` floats takes, guard included; an `n` whose
/// bytes overflow is a named error, never a wrapped number.
pub fn device_bytes(n: usize) -> Result<u64> {
    let floats = n.checked_add(GUARD).ok_or(Error::Launch(L::InputTooLarge { n }))?;
    reference::float_bytes(floats).map_err(|_| Error::Launch(L::InputTooLarge { n }))
}

/// An input the sum kernels can read: `n` floats on the device, and how many
/// more after them may be read.
pub trait Input {
    /// The input's floats.
    fn view(&self) -> View<'_, f32>;
    /// Floats readable past the input.
    fn guard(&self) -> usize;
}

/// An input of `len` floats on the device, followed by a poisoned guard.
///
/// The guard holds NaN, so a kernel that reads past the input produces NaN
/// rather than a plausible wrong number, and its reads stay inside the
/// allocation. Kernels are told the length, never the guard. (On the
/// emulator a read past the input is a named fault before it gets that far.)
pub struct DeviceInput {
    buffer: Buffer<f32>,
    len: usize,
}

/// One copy inside a [`DeviceInput`] that holds several back to back.
pub struct Window<'a> {
    view: View<'a, f32>,
    guard: usize,
}

impl Input for Window<'_> {
    fn view(&self) -> View<'_, f32> {
        self.view.slice(..)
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
        let len = values.len().checked_mul(copies).ok_or(Error::Launch(L::InputTooLarge { n: values.len() }))?;
        gpu.ensure_free(device_bytes(len)?)?;
        let mut buffer = gpu.zeros::<f32>(len + GUARD)?;
        for c in 0..copies {
            gpu.write(&mut buffer, c * values.len(), values)?;
        }
        gpu.write(&mut buffer, len, &[f32::NAN; GUARD])?;
        Ok(DeviceInput { buffer, len })
    }

    /// The input cut into windows of `n` floats.
    pub fn windows(&self, n: usize) -> Vec<Window<'_>> {
        let count = self.len.checked_div(n).unwrap_or(1);
        (0..count).map(|i| Window { view: self.buffer.slice(i * n..(i + 1) * n), guard: self.buffer.len() - (i + 1) * n }).collect()
    }

    /// Elements `first .. first + len` of the lesson's input, made on the
    /// device (`fill_lesson_input`: no host copy of the floats), then the
    /// guard; the buffer is poisoned with NaN first, so that an element the
    /// fill missed shows in any sum.
    pub fn lesson_range(gpu: &Gpu, first: usize, len: usize) -> Result<DeviceInput> {
        gpu.ensure_free(device_bytes(len)?)?;
        let mut buffer = gpu.zeros::<f32>(len + GUARD)?;
        gpu.fill(&mut buffer, f32::NAN)?;
        if len > 0 {
            gpu.kernel(&crate::kernels().fill_lesson_input)?.fill_lesson(buffer.slice_mut(..len), first)?;
        }
        Ok(DeviceInput { buffer, len })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_bytes_count_the_guard_and_never_wrap() {
        assert_eq!(device_bytes(0).unwrap(), 4096);
        assert_eq!(device_bytes(4_194_915).unwrap(), (4_194_915 + 1024) * 4);
        for n in [usize::MAX, usize::MAX - 1023, usize::MAX - 1024, 4_611_686_018_427_387_904, 4_611_686_018_427_387_903] {
            assert!(matches!(device_bytes(n), Err(Error::Launch(L::InputTooLarge { .. }))), "{n}");
        }
    }
}
