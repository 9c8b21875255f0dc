//! Safe launches of the conjugate-gradient kernels
//! (`gpu::kernels::conjugate_gradient`): a matrix reaches the GPU only as a
//! [`DeviceSystem`], made from a [`Csr`] whose every offset and column was
//! checked, so no launch can read outside its buffers.

use crate::device::{Buffer, Gpu, ViewMut};
use crate::error::{Error, Result};
use crate::kernels::{OnChipParams, PersistentParams, StateParams, StepParams, VectorParams};
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

    /// The bandwidth: the largest |row − column| of a stored value (1 for
    /// a tridiagonal matrix, m for the m x m Poisson grid's).
    pub fn band(&self) -> u32 {
        (0..self.n).flat_map(|i| self.row(i).map(move |(c, _)| c.abs_diff(i))).max().unwrap_or(0) as u32
    }

    /// Values stored in rows `lo..hi` (clamped to the matrix).
    pub fn values_in_rows(&self, lo: usize, hi: usize) -> u32 {
        let (lo, hi) = (lo.min(self.n), hi.min(self.n));
        self.offsets[hi] - self.offsets[lo]
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
    /// The matrix's bandwidth ([`Csr::band`]).
    band: u32,
    /// The row offsets, on the host too: what a slice of rows stores.
    offsets: Vec<u32>,
}

impl DeviceSystem {
    pub fn upload(gpu: &Gpu, csr: &Csr) -> Result<DeviceSystem> {
        let matrix: Vec<u32> = csr.offsets.iter().chain(&csr.columns).copied().collect();
        Ok(DeviceSystem { n: csr.n, matrix: gpu.upload(&matrix)?, values: gpu.upload(&csr.values)?, band: csr.band(), offsets: csr.offsets.clone() })
    }

    pub fn n(&self) -> usize {
        self.n
    }

    /// The matrix's bandwidth ([`Csr::band`]).
    pub fn band(&self) -> u32 {
        self.band
    }

    /// Bytes the matrix takes on the device (offsets, columns and values).
    pub fn device_bytes(&self) -> u64 {
        4 * (self.matrix.len() + self.values.len()) as u64
    }

    /// The most values any block's rows store, slices of `slice` rows.
    pub fn most_values_per_slice(&self, slice: usize) -> u32 {
        let slice = slice.max(1);
        (0..self.n.div_ceil(slice)).map(|b| self.offsets[((b + 1) * slice).min(self.n)] - self.offsets[b * slice]).max().unwrap_or(0)
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

/// Bytes of dynamic shared memory the on-chip kernels need past their
/// reduction's (`gpu::kernels::on_chip::on_chip_bytes`, the same sum: a
/// test holds the two together): the slice's vectors, 6 `band` rows of
/// halo, and with `nnz` values, the slice's CSR rows; 8 bytes of slack.
pub fn on_chip_bytes(slice: u32, band: u32, nnz: u32) -> u64 {
    let words = crate::kernels().solver_state.on_chip.slice_vectors as u64 * slice as u64 + 6 * band as u64;
    let matrix = if nnz == 0 { 0 } else { slice as u64 + 1 + 2 * nnz as u64 };
    4 * (words + matrix) + 8
}

/// Each block's share of an on-chip solve.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct OnChipShape {
    /// Rows each block owns.
    pub slice: u32,
    /// The 5-point stencil's grid side, or 0 (the CSR kernels).
    pub side: u32,
    /// Values copied into each block's shared memory (the kernel that
    /// holds its CSR rows there), or 0.
    pub nnz: u32,
}

/// The on-chip solve (`conjugate_gradient_on_chip`, `_matrix`, `_stencil`).
pub trait SolveOnChip {
    /// The whole solve, in this launch: `vectors` five vectors of N (b in
    /// the second, x written to the first), `exchange` the vectors that
    /// cross the chip, `state` the scalars and the partials.
    fn solve_on_chip(
        &self,
        system: &DeviceSystem,
        shape: OnChipShape,
        vectors: ViewMut<'_, f32>,
        exchange: ViewMut<'_, f32>,
        state: ViewMut<'_, f64>,
    ) -> Result<()>;
}

impl SolveOnChip for CooperativeLaunch<'_, '_, OnChipParams> {
    fn solve_on_chip(
        &self,
        system: &DeviceSystem,
        shape: OnChipShape,
        vectors: ViewMut<'_, f32>,
        exchange: ViewMut<'_, f32>,
        state: ViewMut<'_, f64>,
    ) -> Result<()> {
        let name = self.def().name();
        let layout = crate::kernels().solver_state.on_chip;
        let (n, blocks) = (system.n, self.blocks() as usize);
        let bad = |why: String| Err(Error::BadSystem { why: format!("{name}: {why}") });
        ensure_len(name, "vectors (x, b, and three more)", 5 * n, vectors.len())?;
        ensure_len(name, "exchange", layout.exchange_vectors * n, exchange.len())?;
        ensure_len(name, "state", layout.sums_at + 2 * layout.sums * blocks, state.len())?;
        if (shape.slice as u64) * (blocks as u64) < n as u64 {
            return bad(format!("{blocks} blocks of {} rows do not cover N = {n}", shape.slice));
        }
        if (layout.exchange_vectors as u64 * n as u64).max(system.matrix.len() as u64) > u32::MAX as u64 {
            return bad(format!("it indexes in 32 bits: N = {n} with {} matrix words is past that", system.matrix.len()));
        }
        let matrix_kernel = name == crate::kernels().conjugate_gradient_on_chip_matrix.name();
        if matrix_kernel && shape.nnz < system.most_values_per_slice(shape.slice as usize) {
            return bad(format!("{} values per block's rows in shared memory, fewer than a slice of {} rows stores", shape.nnz, shape.slice));
        }
        if shape.side != 0 && ((shape.side as u64).pow(2) != n as u64 || system.band < shape.side) {
            return bad(format!("the stencil's grid of side {} is not the matrix's (N = {n}, bandwidth {})", shape.side, system.band));
        }
        let nnz = if matrix_kernel { shape.nnz } else { 0 };
        let needed = on_chip_bytes(shape.slice, system.band, nnz);
        // What the kernel carves from `dynamic_shared()`: the launch's
        // shared memory less the fixed end every cooperative kernel has.
        let given = self.def().dynamic_shared_bytes(self.threads_per_block()) as u64;
        if given < needed {
            return bad(format!("{given} bytes of shared memory per block, fewer than the {needed} a slice of {} rows needs", shape.slice));
        }
        let (matrix, values) = (system.matrix.slice(..), system.values.slice(..));
        // SAFETY: a DeviceSystem is a checked CSR matrix of n rows whose
        // columns lie within its band; the buffers, the grid's cover of the
        // rows, the 32-bit indexing, the stencil's side, the values per slice
        // and the shared memory were checked above.
        Ok(unsafe { self.launch((&matrix, &values, vectors, exchange, state, n, shape.slice, system.band, shape.side, nnz)) }?)
    }
}
