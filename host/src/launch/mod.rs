//! Loading and launching kernels through their definitions.
//!
//! A definition's launch contract picks the host type:
//! - [`Kernel`] (`NoGridSync`): ordinary launches, any grid;
//! - [`CooperativeKernel`] (`GridSync`, the kernel calls `grid.sync()`): no
//!   ordinary launch at all, and a cooperative launch only of a grid that
//!   [`CooperativeKernel::configure`] has checked against that kernel's own
//!   occupancy, so a grid barrier that cannot complete is never launched.
//!
//! A kernel that calls `grid.sync()` has no ordinary launch: this does not
//! compile (`reduce` is the ordinary launch of the two-stage kernels' shape).
//! ```compile_fail,E0599
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
//! # fn f(gpu: &host::device::Gpu, input: &host::launch::DeviceInput, blocks: u32) -> host::error::Result<()> {
//! # let kernel = gpu.cooperative_kernel(&gpu::kernels::REDUCE_COOPERATIVE_GRID)?;
//! let launch = kernel.configure(blocks, 256)?;
//! let (mut partials, mut out) = (gpu.zeros(launch.blocks() as usize)?, gpu.zeros(1)?);
//! launch.sum(input, partials.slice_mut(..), out.slice_mut(..))?;
//! # Ok(()) }
//! ```

mod args;
mod calls;
pub mod conjugate_gradient;
mod cluster;
mod input;

pub(crate) use args::Args;
pub use calls::{CoalescedRecord, GraphProbe, LastBlockParams, Meeting, MultiParams, Probe, SumParams};
pub use cluster::{ClusterKernel, ClusterLaunch, ClusterLimits};
pub use gpu_core::emu::ClusterShape;
pub use input::{DeviceInput, GUARD, Input, Window, device_bytes};

use crate::device::{Function, Gpu, KernelSpec, Module};
use crate::driver::Shape;
use crate::error::{Error, Result};
use crate::sizing::{BlockResources, Limits, check_threads_per_block};
use gpu_core::kernels::{GridSync, KernelDef, NoGridSync, Params};
use std::cell::Cell;
use std::sync::Arc;

/// A kernel ready to launch on one device.
struct Loaded<'g, P: Params, C> {
    gpu: &'g Gpu,
    def: KernelDef<P, C>,
    function: Box<dyn Function + 'g>,
    /// The last [`Loaded::limits`] answer, so a launch in a timed loop asks the driver nothing.
    limits: Cell<Option<Limits>>,
}

impl<'g, P: Params, C> Loaded<'g, P, C> {
    fn load(gpu: &'g Gpu, def: &KernelDef<P, C>, grid_sync: bool, module: Option<&'g Module>) -> Result<Self>
    where
        C: gpu_core::kernels::Contract,
    {
        let entry = def.entry();
        let spec = KernelSpec {
            name: def.name(),
            params: def.param_names(),
            grid_sync,
            cluster: def.cluster(),
            in_ptx: def.in_ptx(),
            // No tile to blame for a kernel that has no GPU entry at any tile.
            tile: if def.is_emulator_only() { None } else { def.tile() },
            // SAFETY (of the call): the emulator passes one argument per
            // parameter, each of its kind, built from a checked launch.
            emulated: Arc::new(move |args: &[gpu_core::emu::Arg]| unsafe { P::call(entry, args) }),
        };
        let function = gpu.load(&spec, module)?;
        Ok(Loaded { gpu, def: *def, function, limits: Cell::new(None) })
    }

    fn limits(&self, threads_per_block: u32) -> Result<Limits> {
        if let Some(l) = self.limits.get().filter(|l| l.block.threads_per_block == threads_per_block) {
            return Ok(l);
        }
        check_threads_per_block(threads_per_block, self.gpu.info.max_threads_per_block).map_err(|why| Error::BadThreadsPerBlock { threads_per_block, why })?;
        if let Some((max_threads, _)) = self.def.launch_bounds().filter(|&(max, _)| threads_per_block > max) {
            return Err(Error::OverLaunchBounds { kernel: self.def.name(), threads_per_block, max_threads });
        }
        let limits = self.occupancy(threads_per_block)?;
        if limits.blocks_per_sm == 0 {
            return Err(Error::BlockDoesNotFit { kernel: self.def.name(), limits: Box::new(limits) });
        }
        self.limits.set(Some(limits));
        Ok(limits)
    }

    /// The occupancy API's answer at any block size the device takes, whole
    /// warps or not (CUDA accepts 48 threads; this project's kernels launch
    /// only whole warps, which [`Loaded::limits`] checks), 0 blocks included.
    fn occupancy(&self, threads_per_block: u32) -> Result<Limits> {
        if threads_per_block == 0 || threads_per_block > self.gpu.info.max_threads_per_block {
            let why = crate::sizing::BadBlock::OverDeviceMax(self.gpu.info.max_threads_per_block);
            return Err(Error::BadThreadsPerBlock { threads_per_block, why });
        }
        let shared = self.def.shared_bytes(threads_per_block);
        let o = self.function.occupancy(threads_per_block, shared)?;
        Ok(Limits {
            blocks_per_sm: o.blocks_per_sm,
            sms: self.gpu.info.sms,
            block: BlockResources { threads_per_block, registers_per_thread: o.registers_per_thread, shared_bytes: o.static_shared_bytes + shared },
            sm: self.gpu.info.sm,
        })
    }

    /// Launches the kernel, noting the launch for the Gpu's record ([`Gpu::recording_launches`]).
    ///
    /// # Safety
    /// As `Function::launch`.
    unsafe fn launch(&self, shape: Shape, cooperative: bool, args: &[crate::device::ArgValue]) -> Result<()> {
        self.gpu.check_args(args)?;
        self.gpu.note_launch(crate::device::Launched {
            kernel: self.def.name(),
            blocks: shape.blocks,
            threads_per_block: shape.threads_per_block,
            cooperative,
        });
        // SAFETY: the caller's contract.
        unsafe { self.function.launch(shape, cooperative, args) }
    }

    fn shape(&self, blocks: u32, threads_per_block: u32) -> Result<Shape> {
        self.limits(threads_per_block)?;
        if blocks == 0 {
            return Err(Error::EmptyGrid { kernel: self.def.name() });
        }
        if blocks as u64 * threads_per_block as u64 >= 1 << 32 {
            return Err(Error::GridTooManyThreads { kernel: self.def.name(), blocks, threads_per_block });
        }
        Ok(Shape::new(blocks, threads_per_block, self.def.shared_bytes(threads_per_block)))
    }
}

/// A kernel with no grid barrier (`NoGridSync`): launched the ordinary way.
pub struct Kernel<'g, P: Params> {
    loaded: Loaded<'g, P, NoGridSync>,
}

/// A kernel that calls `grid.sync()` (`GridSync`). It has no ordinary launch;
/// its only launch is [`CooperativeLaunch`], made by [`configure`](Self::configure).
pub struct CooperativeKernel<'g, P: Params> {
    loaded: Loaded<'g, P, GridSync>,
}

/// A cooperative launch of one kernel whose grid fits on the device at once.
pub struct CooperativeLaunch<'k, 'g, P: Params> {
    kernel: &'k CooperativeKernel<'g, P>,
    shape: Shape,
}

/// The contract [`Gpu::kernel`] loads: no grid barrier (`NoGridSync`). Any
/// other is a compile error that names the loader to use.
#[diagnostic::on_unimplemented(
    message = "`gpu.kernel()` loads kernels with no grid.sync(); this one's contract is `{Self}`",
    label = "a kernel declared #[kernel(cooperative)] (GridSync) loads with `gpu.cooperative_kernel(...)`, one declared #[kernel(cluster)] with `gpu.cluster_kernel(...)`",
    note = "C++ launches a kernel that calls grid.sync() with cudaLaunchCooperativeKernel; here its definition's type admits no other launch"
)]
pub trait LoadsAsKernel: gpu_core::kernels::Contract + Sized {
    /// The definition, as the ordinary kernel's.
    #[doc(hidden)]
    fn as_ordinary<P: Params>(def: &KernelDef<P, Self>) -> &KernelDef<P, NoGridSync>;
}

impl LoadsAsKernel for NoGridSync {
    fn as_ordinary<P: Params>(def: &KernelDef<P, Self>) -> &KernelDef<P, NoGridSync> {
        def
    }
}

/// The contract [`Gpu::cooperative_kernel`] loads: a kernel declared
/// `#[kernel(cooperative)]` (`GridSync`). Any other is a compile error that
/// names the loader to use.
#[diagnostic::on_unimplemented(
    message = "`gpu.cooperative_kernel()` loads kernels declared #[kernel(cooperative)]; this one's contract is `{Self}`",
    label = "a kernel with no grid.sync() (NoGridSync) loads with `gpu.kernel(...)`, one declared #[kernel(cluster)] with `gpu.cluster_kernel(...)`"
)]
pub trait LoadsAsCooperative: gpu_core::kernels::Contract + Sized {
    /// The definition, as the cooperative kernel's.
    #[doc(hidden)]
    fn as_cooperative<P: Params>(def: &KernelDef<P, Self>) -> &KernelDef<P, GridSync>;
}

impl LoadsAsCooperative for GridSync {
    fn as_cooperative<P: Params>(def: &KernelDef<P, Self>) -> &KernelDef<P, GridSync> {
        def
    }
}

impl Gpu {
    /// Loads a kernel that has no grid barrier.
    pub fn kernel<P: Params, C: LoadsAsKernel>(&self, def: &KernelDef<P, C>) -> Result<Kernel<'_, P>> {
        Ok(Kernel { loaded: Loaded::load(self, C::as_ordinary(def), false, None)? })
    }

    /// Loads a kernel that calls `grid.sync()`.
    pub fn cooperative_kernel<P: Params, C: LoadsAsCooperative>(&self, def: &KernelDef<P, C>) -> Result<CooperativeKernel<'_, P>> {
        Ok(CooperativeKernel { loaded: Loaded::load(self, C::as_cooperative(def), true, None)? })
    }

    /// Loads a kernel with no grid barrier from another module; `def` states
    /// its contract (see `KernelDef::renamed`).
    pub fn kernel_in<'g, P: Params, C: LoadsAsKernel>(&'g self, module: &'g Module, def: &KernelDef<P, C>) -> Result<Kernel<'g, P>> {
        Ok(Kernel { loaded: Loaded::load(self, C::as_ordinary(def), false, Some(module))? })
    }

    /// Loads a grid-synchronizing kernel from another module.
    pub fn cooperative_kernel_in<'g, P: Params, C: LoadsAsCooperative>(
        &'g self,
        module: &'g Module,
        def: &KernelDef<P, C>,
    ) -> Result<CooperativeKernel<'g, P>> {
        Ok(CooperativeKernel { loaded: Loaded::load(self, C::as_cooperative(def), true, Some(module))? })
    }
}

impl<P: Params> Kernel<'_, P> {
    /// The kernel's definition.
    pub fn def(&self) -> &KernelDef<P, NoGridSync> {
        &self.loaded.def
    }

    /// Occupancy and resources for blocks of `threads_per_block`.
    pub fn limits(&self, threads_per_block: u32) -> Result<Limits> {
        self.loaded.limits(threads_per_block)
    }

    /// As [`CooperativeKernel::occupancy`].
    pub fn occupancy(&self, threads_per_block: u32) -> Result<Limits> {
        self.loaded.occupancy(threads_per_block)
    }
}

impl<'g, P: Params> CooperativeKernel<'g, P> {
    /// The kernel's definition.
    pub fn def(&self) -> &KernelDef<P, GridSync> {
        &self.loaded.def
    }

    /// The occupancy API's answer at any block size the device takes, whole
    /// warps or not (for the occupancy table; launches use [`limits`](Self::limits)).
    pub fn occupancy(&self, threads_per_block: u32) -> Result<Limits> {
        self.loaded.occupancy(threads_per_block)
    }

    /// This kernel's cooperative limit for blocks of `threads_per_block`: the
    /// occupancy API asked about this kernel, this block size and its dynamic
    /// shared memory.
    pub fn limits(&self, threads_per_block: u32) -> Result<Limits> {
        self.loaded.limits(threads_per_block)
    }

    /// A cooperative launch of `blocks` blocks of `threads_per_block`, refused
    /// unless every block can be resident at once.
    pub fn configure(&self, blocks: u32, threads_per_block: u32) -> Result<CooperativeLaunch<'_, 'g, P>> {
        let limits = self.limits(threads_per_block)?;
        if blocks > limits.capacity() {
            return Err(Error::CooperativeGridTooLarge { kernel: self.loaded.def.name(), requested: blocks, limits: Box::new(limits) });
        }
        Ok(CooperativeLaunch { kernel: self, shape: self.loaded.shape(blocks, threads_per_block)? })
    }
}

impl<P: Params> CooperativeLaunch<'_, '_, P> {
    /// Blocks in the grid.
    pub fn blocks(&self) -> u32 {
        self.shape.blocks
    }

    /// Threads per block.
    pub fn threads_per_block(&self) -> u32 {
        self.shape.threads_per_block
    }
}

/// A kernel from another compiler's module whose parameters are not this
/// project's types (cuda-oxide passes each slice as a pointer and a length),
/// launched with raw argument values. Its contract is the caller's to state:
/// launching it is `unsafe`. A cooperative launch of it is still refused
/// when its grid does not fit.
pub(crate) struct RawKernel<'g> {
    gpu: &'g Gpu,
    name: &'static str,
    function: Box<dyn Function + 'g>,
}

impl Gpu {
    /// Loads kernel `name` from `module` without a definition (see [`RawKernel`]).
    pub(crate) fn raw_kernel_in<'g>(&'g self, module: &'g Module, name: &'static str) -> Result<RawKernel<'g>> {
        let spec = KernelSpec {
            name,
            params: &[],
            grid_sync: true,
            cluster: false,
            in_ptx: false,
            tile: None,
            emulated: Arc::new(|_: &[gpu_core::emu::Arg]| unreachable!("a module from a file is refused on the emulator")),
        };
        Ok(RawKernel { gpu: self, name, function: self.load(&spec, Some(module))? })
    }
}

impl RawKernel<'_> {
    /// Blocks of `threads_per_block` one launch may hold at once, with `shared_bytes` of dynamic shared memory.
    pub(crate) fn capacity(&self, threads_per_block: u32, shared_bytes: u32) -> Result<u32> {
        Ok(self.function.occupancy(threads_per_block, shared_bytes)?.blocks_per_sm * self.gpu.info.sms)
    }

    /// Launches it; a cooperative launch larger than [`capacity`](Self::capacity) is refused.
    ///
    /// # Safety
    /// `args` are the kernel's parameters, and the memory they address
    /// satisfies its contract for `shape`; a kernel that synchronizes its
    /// grid is launched only cooperatively.
    pub(crate) unsafe fn launch(&self, shape: Shape, cooperative: bool, args: &[crate::device::ArgValue]) -> Result<()> {
        let capacity = self.capacity(shape.threads_per_block, shape.shared_bytes)?;
        if cooperative && shape.blocks > capacity {
            return Err(Error::ForeignGridTooLarge { kernel: self.name, requested: shape.blocks, capacity });
        }
        self.gpu.check_args(args)?;
        // SAFETY: the caller's contract.
        unsafe { self.function.launch(shape, cooperative, args) }
    }
}
