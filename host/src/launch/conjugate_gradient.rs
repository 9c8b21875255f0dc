//! Safe launches of the conjugate-gradient kernels
//! (`gpu::kernels::conjugate_gradient`): a matrix reaches the GPU only as a
//! [`DeviceSystem`], made from a [`Csr`] whose every offset and column was
//! checked, so no launch can read outside its buffers.

use crate::device::{Buffer, Gpu, ViewMut};
use crate::error::{Error, Result};
use crate::kernels::{PersistentParams, StateParams, StepParams, VectorParams};
use cg_launcher::launch::{CooperativeLaunch, Kernel, ensure_len};

/// A square sparse matrix in compressed sparse rows, checked: row offsets
/// that start at 0, never decrease and end at the number of values, and
/// every column below the row count.
#[derive(Clone, Debug)]
pub struct Csr {
    n: usize,
    offsets: Vec<u32>,
    columns: Vec<u32>,
    values: Vec<f32>,
}

impl Csr {
    /// The matrix of `n` rows whose row `i` holds `values[offsets[i]..offsets[i + 1]]`
    /// at `columns[...]`, or why it is not one.
    pub fn new(n: usize, offsets: Vec<u32>, columns: Vec<u32>, values: Vec<f32>) -> Result<Csr> {
        let bad = |why: String| Err(Error::BadMatrix { why });
        if offsets.len() != n + 1 || columns.len() != values.len() {
            return bad(format!("{} offsets and {} columns for {} values and {n} rows", offsets.len(), columns.len(), values.len()));
        }
        if offsets[0] != 0 || offsets[n] as usize != values.len() || offsets.windows(2).any(|w| w[1] < w[0]) {
            return bad("the row offsets do not run from 0 up to the number of values".into());
        }
        if let Some(c) = columns.iter().find(|&&c| c as usize >= n) {
            return bad(format!("column {c} in a matrix of {n} columns"));
        }
        Ok(Csr { n, offsets, columns, values })
    }

    pub fn n(&self) -> usize {
        self.n
    }

    /// Row `i`'s (column, value) pairs.
    pub fn row(&self, i: usize) -> impl Iterator<Item = (usize, f32)> + '_ {
        let (start, end) = (self.offsets[i] as usize, self.offsets[i + 1] as usize);
        self.columns[start..end].iter().zip(&self.values[start..end]).map(|(&c, &v)| (c as usize, v))
    }

    /// Values stored.
    pub fn row_count_values(&self) -> usize {
        self.values.len()
    }

    /// Bytes the matrix takes on the device.
    pub fn device_bytes(&self) -> u64 {
        4 * (self.offsets.len() + self.columns.len() + self.values.len()) as u64
    }
}

/// A checked matrix on the device: the offsets then the columns in one
/// buffer, the values in another.
pub struct DeviceSystem {
    n: usize,
    matrix: Buffer<u32>,
    values: Buffer<f32>,
}

impl DeviceSystem {
    pub fn upload(gpu: &Gpu, csr: &Csr) -> Result<DeviceSystem> {
        let matrix: Vec<u32> = csr.offsets.iter().chain(&csr.columns).copied().collect();
        Ok(DeviceSystem { n: csr.n, matrix: gpu.upload(&matrix)?, values: gpu.upload(&csr.values)? })
    }

    pub fn n(&self) -> usize {
        self.n
    }
}

/// The step kernels use four vectors of `n` (x, r, p, Ap), the persistent
/// ones five (and Ar); `partials` is past the scalars.
fn vectors_and_state(kernel: &'static str, n: usize, vector_count: usize, vectors: &ViewMut<'_, f32>, state: &ViewMut<'_, f64>, partials: usize) -> Result<()> {
    let what = if vector_count == 5 { "vectors (x, r, p, Ap, Ar)" } else { "vectors (x, r, p, Ap)" };
    ensure_len(kernel, what, vector_count * n, vectors.len())?;
    Ok(ensure_len(kernel, "state", crate::kernels().solver_state.partials + partials, state.len())?)
}

/// `conjugate_gradient_update_p` and `conjugate_gradient_axpy`.
pub trait VectorStep {
    /// The step over `n` rows of the vectors.
    fn vector_step(&self, blocks: u32, threads_per_block: u32, vectors: ViewMut<'_, f32>, state: ViewMut<'_, f64>, n: usize) -> Result<()>;
}

impl VectorStep for Kernel<'_, VectorParams> {
    fn vector_step(&self, blocks: u32, threads_per_block: u32, vectors: ViewMut<'_, f32>, state: ViewMut<'_, f64>, n: usize) -> Result<()> {
        self.check_shape(blocks, threads_per_block)?;
        vectors_and_state(self.def().name(), n, 4, &vectors, &state, blocks as usize)?;
        // SAFETY: the kernel touches rows below n of four vectors, the scalars
        // and one partial per block, checked above.
        Ok(unsafe { self.launch(blocks, threads_per_block, (vectors, state, n)) }?)
    }
}

/// `conjugate_gradient_spmv_dot`.
pub trait SpmvDot {
    /// `conjugate_gradient_spmv_dot`: A p, and a partial p·Ap per block.
    fn spmv_dot(&self, blocks: u32, threads_per_block: u32, system: &DeviceSystem, vectors: ViewMut<'_, f32>, state: ViewMut<'_, f64>) -> Result<()>;
}

impl SpmvDot for Kernel<'_, StepParams> {
    fn spmv_dot(&self, blocks: u32, threads_per_block: u32, system: &DeviceSystem, vectors: ViewMut<'_, f32>, state: ViewMut<'_, f64>) -> Result<()> {
        self.check_shape(blocks, threads_per_block)?;
        vectors_and_state(self.def().name(), system.n, 4, &vectors, &state, blocks as usize)?;
        let (matrix, values) = (system.matrix.slice(..), system.values.slice(..));
        // SAFETY: a DeviceSystem is a checked CSR matrix of n rows, and the
        // vectors and partials were checked above.
        Ok(unsafe { self.launch(blocks, threads_per_block, (&matrix, &values, vectors, state, system.n)) }?)
    }
}

/// `conjugate_gradient_alpha` and `conjugate_gradient_next`.
pub trait OverPartials {
    /// One block adding the `partials` of the step before.
    fn over_partials(&self, threads_per_block: u32, state: ViewMut<'_, f64>, partials: usize) -> Result<()>;
}

impl OverPartials for Kernel<'_, StateParams> {
    fn over_partials(&self, threads_per_block: u32, state: ViewMut<'_, f64>, partials: usize) -> Result<()> {
        self.check_shape(1, threads_per_block)?;
        ensure_len(self.def().name(), "state", crate::kernels().solver_state.partials + partials, state.len())?;
        // SAFETY: the kernel reads the scalars and `partials` partials, checked above.
        Ok(unsafe { self.launch(1, threads_per_block, (state, partials)) }?)
    }
}

/// The whole solve in one cooperative launch.
pub trait Solve {
    /// `conjugate_gradient_persistent` or `conjugate_gradient_fused`: the
    /// whole solve, in this launch. `vectors` holds five vectors of N (x, r,
    /// p, Ap, and Ar, which only the fused kernels use), whichever it is.
    fn solve(&self, system: &DeviceSystem, vectors: ViewMut<'_, f32>, state: ViewMut<'_, f64>) -> Result<()>;
}

impl Solve for CooperativeLaunch<'_, '_, PersistentParams> {
    fn solve(&self, system: &DeviceSystem, vectors: ViewMut<'_, f32>, state: ViewMut<'_, f64>) -> Result<()> {
        let name = self.def().name();
        vectors_and_state(name, system.n, 5, &vectors, &state, 2 * self.blocks() as usize)?;
        // The fused kernels index in 32 bits.
        if (5 * system.n as u64).max(system.matrix.len() as u64) > u32::MAX as u64 {
            return Err(Error::BadSystem {
                why: format!("{name} indexes its vectors and matrix in 32 bits: N = {} with {} matrix words is past that", system.n, system.matrix.len()),
            });
        }
        let (matrix, values) = (system.matrix.slice(..), system.values.slice(..));
        // SAFETY: as `spmv_dot`, with five vectors and two partials per
        // block, checked above, and 5 N and the matrix's length within u32.
        Ok(unsafe { self.launch((&matrix, &values, vectors, state, system.n)) }?)
    }
}
