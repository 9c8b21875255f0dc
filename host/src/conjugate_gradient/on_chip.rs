//! The on-chip path (`gpu::kernels::on_chip`): whether the problem fits in
//! the chip's shared memory, the grid and the block it is launched with,
//! and the launch.

use crate::device::{Buffer, Gpu};
use crate::error::Result;
use crate::kernels::OnChipParams;
use crate::launch::CooperativeKernel;
use crate::launch::conjugate_gradient::{DeviceSystem, OnChipShape, SolveOnChip, on_chip_bytes};
use cg_kernel::kernels::{GridSync, KernelDef};
use serde::Serialize;

/// Where the on-chip kernel reads the matrix from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// Each block's CSR rows copied into its shared memory at the start
    /// (`conjugate_gradient_on_chip_matrix`): nothing but the halo and the
    /// partials crosses the chip.
    SharedMemory,
    /// CSR in device memory, read every iteration (`conjugate_gradient_on_chip`),
    /// where the rows do not fit beside the vectors.
    DeviceMemory,
    /// No matrix: the 5-point stencil, computed (`conjugate_gradient_on_chip_stencil`).
    Stencil,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::SharedMemory => "CSR in shared memory",
            Source::DeviceMemory => "CSR in device memory",
            Source::Stencil => "matrix-free stencil",
        }
    }

    fn kernel(self) -> KernelDef<OnChipParams, GridSync> {
        let k = crate::kernels();
        match self {
            Source::SharedMemory => k.conjugate_gradient_on_chip_matrix,
            Source::DeviceMemory => k.conjugate_gradient_on_chip,
            Source::Stencil => k.conjugate_gradient_on_chip_stencil,
        }
    }
}

/// How an on-chip solve is launched.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Plan {
    pub source: Source,
    pub blocks: u32,
    pub threads_per_block: u32,
    pub shape: OnChipShape,
    /// The matrix's bandwidth: the halo is 2 bands deep each side.
    pub band: u32,
    /// Dynamic shared memory per block, bytes.
    pub shared_bytes: u32,
    /// The driver's answer, where known.
    pub registers_per_thread: Option<u32>,
}

impl Plan {
    /// Bytes that cross the chip per iteration: the matrix twice where it is
    /// read from device memory (A r and A p), r written at the 2 bands of
    /// rows each side of every slice and read at the farther band, and the
    /// partials (written, then read by every block). Until 2026-12-06 07:00
    /// UTC it counted r and p at 2 bands each side, written and read (the
    /// first pass's exchange): the second pass's records print that count,
    /// an upper bound.
    pub fn bytes_off_chip_per_iteration(&self, system: &DeviceSystem) -> f64 {
        let matrix = if self.source == Source::DeviceMemory { 2.0 * system.device_bytes() as f64 } else { 0.0 };
        let halo = self.blocks as f64 * (4.0 + 2.0) * self.band as f64 * 4.0;
        let sums = crate::kernels().solver_state.on_chip.sums as f64;
        let partials = self.blocks as f64 * sums * 8.0 * (1.0 + self.blocks as f64);
        matrix + halo + partials
    }
}

/// A loaded on-chip kernel with the buffers only it uses.
pub struct OnChip<'g> {
    kernel: CooperativeKernel<'g, OnChipParams>,
    pub plan: Plan,
    exchange: Buffer<f32>,
    state: Buffer<f64>,
}

/// Plans and loads the on-chip kernel for `system` that reads the matrix
/// from `source` (the stencil's with the Poisson grid's `side`): one block
/// per SM (fewer where N is smaller than 32 rows a block), each owning N /
/// blocks rows, and a block of up to 512 threads (about one per row of the
/// slice; the kernel's launch bounds hold it to 128 registers), fewer where
/// the registers do not allow it. `Ok(Err(why))` where the slice does not
/// fit in one block's shared memory, with the numbers.
pub fn load<'g>(gpu: &'g Gpu, system: &DeviceSystem, source: Source, side: Option<u32>) -> Result<std::result::Result<OnChip<'g>, String>> {
    load_kernel(gpu, system, source, source.kernel(), if source == Source::Stencil { side } else { None })
}

/// [`load`] with kernel `def` for `source` (a named mistake, in the tests).
pub fn load_kernel<'g>(
    gpu: &'g Gpu,
    system: &DeviceSystem,
    source: Source,
    def: KernelDef<OnChipParams, GridSync>,
    side: Option<u32>,
) -> Result<std::result::Result<OnChip<'g>, String>> {
    let n = system.n();
    let blocks = (gpu.info.sms as usize).min(n.div_ceil(32)).max(1) as u32;
    let slice = n.div_ceil(blocks as usize) as u32;
    let band = system.band();
    let nnz = if source == Source::SharedMemory { system.most_values_per_slice(slice as usize) } else { 0 };
    let extra = on_chip_bytes(slice, band, nnz);
    // At most the kernel's launch bounds (512: ptxas then holds it to 128 registers).
    let most_threads = def.launch_bounds().map_or(1024, |(t, _)| t);
    let mut threads = slice.next_power_of_two().clamp(32, most_threads);
    let mut why = String::new();
    while threads >= 32 {
        // The whole allocation: the slice, the halo and the matrix, then the
        // fixed end every cooperative kernel has (the grid reduce's).
        let needed = u32::try_from(extra).ok().and_then(|e| def.with_extra_shared(e)).map_or(u64::MAX, |d| d.shared_bytes(threads) as u64);
        let most = match gpu.cooperative_kernel(&def)?.limits(threads) {
            Ok(limits) => limits.sm.max_shared_per_block as u64,
            // This block size needs more registers than an SM has: try a smaller one.
            Err(cg_launcher::error::Error::BlockDoesNotFit { limits, .. }) => {
                why = format!("a block of {threads} threads does not fit: {}", limits.explain());
                threads /= 2;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        if needed > most {
            return Ok(Err(format!(
                "N = {n} in {blocks} blocks is {slice} rows a block: {} KiB of shared memory per block ({} vectors of the slice, a halo of {} rows, {}), more than the {} KiB a block may have",
                needed.div_ceil(1024),
                crate::kernels().solver_state.on_chip.slice_vectors,
                6 * band,
                if nnz > 0 { format!("its {nnz} matrix values") } else { "no matrix".to_string() },
                most / 1024
            )));
        }
        let def = def.with_extra_shared(extra as u32).expect("below the device's shared memory, so within u32");
        let kernel = gpu.cooperative_kernel(&def)?;
        let limits = match kernel.limits(threads) {
            Ok(limits) => limits,
            Err(cg_launcher::error::Error::BlockDoesNotFit { limits, .. }) => *limits,
            Err(e) => return Err(e.into()),
        };
        if limits.capacity() >= blocks {
            let plan = Plan {
                source,
                blocks,
                threads_per_block: threads,
                shape: OnChipShape { slice, side: side.unwrap_or(0), nnz },
                band,
                shared_bytes: def.shared_bytes(threads),
                registers_per_thread: limits.block.registers_per_thread,
            };
            let layout = crate::kernels().solver_state.on_chip;
            let exchange = gpu.zeros(layout.exchange_vectors * n)?;
            let state = gpu.zeros(layout.sums_at + 2 * layout.sums * blocks as usize)?;
            return Ok(Ok(OnChip { kernel, plan, exchange, state }));
        }
        why = format!(
            "{blocks} blocks of {threads} threads with {} bytes of shared memory each do not fit at once: {}",
            def.shared_bytes(threads),
            limits.explain()
        );
        threads /= 2;
    }
    Ok(Err(why))
}

/// What an on-chip solve reports besides x.
#[derive(Clone, Copy, Debug)]
pub struct Scalars {
    pub iterations: u32,
    pub r1: f64,
    pub breakdown: f64,
    pub restarts: u32,
    /// ‖b − A x‖ at the last check, on the GPU (None before the first check).
    pub true_residual: Option<f64>,
}

impl OnChip<'_> {
    /// The whole solve, one launch: x to `vectors`' first N.
    pub fn solve(&mut self, gpu: &Gpu, system: &DeviceSystem, vectors: &mut Buffer<f32>, tolerance: f64, max_iterations: u32) -> Result<Scalars> {
        let at = crate::kernels().solver_state;
        let mut state = vec![0.0f64; at.on_chip.sums_at];
        state[at.tolerance_squared] = tolerance * tolerance;
        state[at.max_iterations] = max_iterations as f64;
        gpu.write(&mut self.state, 0, &state)?;
        let launch = self.kernel.configure(self.plan.blocks, self.plan.threads_per_block)?;
        launch.solve_on_chip(system, self.plan.shape, vectors.slice_mut(..), self.exchange.slice_mut(..), self.state.slice_mut(..))?;
        let s = gpu.read_view(&self.state.slice(..at.on_chip.sums_at))?;
        Ok(Scalars {
            iterations: s[at.iterations] as u32,
            r1: s[at.r1],
            breakdown: s[at.breakdown],
            restarts: s[at.on_chip.restarts] as u32,
            true_residual: (s[at.on_chip.checks] > 0.0).then(|| s[at.on_chip.true_residual].max(0.0).sqrt()),
        })
    }
}
