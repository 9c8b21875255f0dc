//! Launching the lesson's kernels: the launcher's API (`cg_launcher::launch`,
//! re-exported here), and the lesson's safe calls on it, each checking its
//! buffers against its kernel's contract before the one `unsafe` launch.
//!
//! A kernel that calls `grid.sync()` has no ordinary launch: this does not
//! compile (`reduce` is the ordinary launch of the two-stage kernels' shape).
//! ```compile_fail,E0599
//! # use host::launch::*;
//! # fn f(gpu: &host::device::Gpu, input: &host::device::View<f32>, mut out: host::device::ViewMut<f32>) -> host::error::Result<()> {
//! let kernel = gpu.cooperative_kernel(&gpu::kernels::REDUCE_COOPERATIVE_GRID)?;
//! kernel.reduce(1056, 256, input, out)?;
//! # Ok(()) }
//! ```
//!
//! Nor can it be loaded as an ordinary kernel (the error names
//! `gpu.cooperative_kernel(...)`, [`LoadsAsKernel`]):
//! ```compile_fail,E0277
//! # fn f(gpu: &host::device::Gpu) -> host::error::Result<()> {
//! let kernel = gpu.kernel(&gpu::kernels::REDUCE_COOPERATIVE_GRID)?;
//! # Ok(()) }
//! ```
//!
//! The same calls on a kernel without a grid barrier compile, which is what
//! makes the two failures above about the contract:
//! ```no_run
//! # use host::launch::*;
//! # fn f(gpu: &host::device::Gpu, input: &host::device::View<f32>, out: host::device::ViewMut<f32>) -> host::error::Result<()> {
//! let kernel = gpu.kernel(&gpu::kernels::REDUCE_BLOCKS_TO_PARTIALS)?;
//! kernel.reduce(1056, 256, input, out)?;
//! # Ok(()) }
//! ```
//!
//! The calls that compile for the cooperative kernel, each on its own (how
//! many blocks to launch is the exercise's question, not answered here).
//! What the device holds of this kernel at this block size:
//! ```no_run
//! # fn f(gpu: &host::device::Gpu) -> host::error::Result<()> {
//! let kernel = gpu.cooperative_kernel(&gpu::kernels::REDUCE_COOPERATIVE_GRID)?;
//! let limits = kernel.limits(256)?;
//! println!("{} blocks/SM x {} SMs", limits.blocks_per_sm, limits.sms);
//! # Ok(()) }
//! ```
//! A launch of a grid you chose, refused by name if it cannot be resident:
//! ```no_run
//! # use host::launch::*;
//! # fn f(gpu: &host::device::Gpu, input: &host::launch::DeviceInput, blocks: u32) -> host::error::Result<()> {
//! # let kernel = gpu.cooperative_kernel(&gpu::kernels::REDUCE_COOPERATIVE_GRID)?;
//! let launch = kernel.configure(blocks, 256)?;
//! let (mut partials, mut out) = (gpu.zeros(launch.blocks() as usize)?, gpu.zeros(1)?);
//! launch.sum(input, partials.slice_mut(..), out.slice_mut(..))?;
//! # Ok(()) }
//! ```

mod calls;
pub mod conjugate_gradient;
mod input;

pub use calls::*;
pub use cg_launcher::launch::*;
pub use conjugate_gradient::{OverPartials, Solve, SpmvDot, VectorStep};
pub use input::{DeviceInput, GUARD, Input, Window, device_bytes};

/// The lesson's launch traits, for `use crate::launch::prelude::*`.
pub mod prelude {
    pub use super::calls::{
        Barriers, BarriersBy, ClusterPartials, FillLesson, LastBlockSum, LaunchEmpty, LaunchEmptyCooperative, Meet, PerBlock, ProbeCooperative, Probes, Reduce,
        Stress, Sum, SumAcross,
    };
    pub use super::conjugate_gradient::{OverPartials, Solve, SpmvDot, VectorStep};
}
