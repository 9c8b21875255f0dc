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
//! compile (`waits` is declared `#[kernel(cooperative)]`).
//! ```compile_fail,E0599
//! # use cg_kernel::{kernel, cg::this_grid, mem::Out};
//! # /// # Safety
//! # /// `out` holds one element per block.
//! # #[kernel(cooperative)]
//! # pub unsafe fn waits(out: Out<u32>) {
//! #     this_grid().sync();
//! # }
//! # /// # Safety
//! # /// `out` holds one element per block.
//! # #[kernel]
//! # pub unsafe fn waits_for_no_one(out: Out<u32>) {}
//! # fn f(gpu: &cg_launcher::device::Gpu, out: cg_launcher::device::ViewMut<u32>) -> cg_launcher::error::Result<()> {
//! let kernel = gpu.cooperative_kernel(&WAITS)?;
//! unsafe { kernel.launch(1056, 256, (out,))? };
//! # Ok(()) }
//! ```
//!
//! Nor can it be loaded as an ordinary kernel (the error names
//! `gpu.cooperative_kernel(...)`, [`LoadsAsKernel`]):
//! ```compile_fail,E0277
//! # use cg_kernel::{kernel, cg::this_grid, mem::Out};
//! # /// # Safety
//! # /// `out` holds one element per block.
//! # #[kernel(cooperative)]
//! # pub unsafe fn waits(out: Out<u32>) {
//! #     this_grid().sync();
//! # }
//! # /// # Safety
//! # /// `out` holds one element per block.
//! # #[kernel]
//! # pub unsafe fn waits_for_no_one(out: Out<u32>) {}
//! # fn f(gpu: &cg_launcher::device::Gpu) -> cg_launcher::error::Result<()> {
//! let kernel = gpu.kernel(&WAITS)?;
//! # Ok(()) }
//! ```
//!
//! The same calls on a kernel without a grid barrier compile, which is what
//! makes the two failures above about the contract:
//! ```no_run
//! # use cg_kernel::{kernel, cg::this_grid, mem::Out};
//! # /// # Safety
//! # /// `out` holds one element per block.
//! # #[kernel(cooperative)]
//! # pub unsafe fn waits(out: Out<u32>) {
//! #     this_grid().sync();
//! # }
//! # /// # Safety
//! # /// `out` holds one element per block.
//! # #[kernel]
//! # pub unsafe fn waits_for_no_one(out: Out<u32>) {}
//! # fn f(gpu: &cg_launcher::device::Gpu, out: cg_launcher::device::ViewMut<u32>) -> cg_launcher::error::Result<()> {
//! let kernel = gpu.kernel(&WAITS_FOR_NO_ONE)?;
//! // SAFETY: `out` holds one element per block.
//! unsafe { kernel.launch(1056, 256, (out,))? };
//! # Ok(()) }
//! ```
//!
//! The cooperative kernel's launch: what the device holds of it at a block
//! size, and a grid chosen within that, refused by name if it could not be
//! resident.
//! ```no_run
//! # use cg_kernel::{kernel, cg::this_grid, mem::Out};
//! # /// # Safety
//! # /// `out` holds one element per block.
//! # #[kernel(cooperative)]
//! # pub unsafe fn waits(out: Out<u32>) {
//! #     this_grid().sync();
//! # }
//! # /// # Safety
//! # /// `out` holds one element per block.
//! # #[kernel]
//! # pub unsafe fn waits_for_no_one(out: Out<u32>) {}
//! # fn f(gpu: &cg_launcher::device::Gpu, mut out: cg_launcher::device::Buffer<u32>) -> cg_launcher::error::Result<()> {
//! let kernel = gpu.cooperative_kernel(&WAITS)?;
//! let limits = kernel.limits(256)?;
//! println!("{} blocks/SM x {} SMs", limits.blocks_per_sm, limits.sms);
//! let launch = kernel.configure(limits.capacity(), 256)?;
//! cg_launcher::launch::ensure_len("waits", "out", launch.blocks() as usize, out.len())?;
//! // SAFETY: `out` holds one element per block (checked above).
//! unsafe { launch.launch((out.slice_mut(..),))? };
//! # Ok(()) }
//! ```

mod args;
mod cluster;

pub use crate::shape::{ClusterShape, Shape};
pub use args::{Arg, Args};
pub use cluster::{ClusterKernel, ClusterLaunch, ClusterLimits};

/// Fails with [`Error::BufferTooShort`] unless `got >= needed`: how a safe
/// wrapper around an `unsafe` launch checks a buffer against its kernel's
/// contract before launching. `kernel` names what the caller called: the
/// kernel, or the safe wrapper's own name where the caller never sees the
/// kernel.
pub fn ensure_len(kernel: &'static str, buffer: &'static str, needed: usize, got: usize) -> Result<()> {
    if got < needed {
        return Err(Error::BufferTooShort { kernel, buffer, needed, got });
    }
    Ok(())
}

use crate::device::{ArgRepr, ArgValue, Function, Gpu, KernelSpec, Module};
use crate::error::{Error, Result};
use crate::sizing::{BlockResources, Limits, check_threads_per_block};
use cg_kernel::kernels::{GridSync, KernelDef, NoGridSync, Params};
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
        C: cg_kernel::kernels::Contract,
    {
        if cg_kernel::kernels::shares_its_name(def.crate_name(), def.name()) {
            return Err(Error::NotLinked(format!(
                "two #[kernel]s of crate {} are named `{}`: one PTX module cannot hold both entries (its GPU build fails); rename one",
                def.crate_name(),
                def.name()
            )));
        }
        let entry = def.entry();
        let spec = KernelSpec {
            name: def.name(),
            krate: def.crate_name(),
            params: def.param_names(),
            grid_sync,
            cluster: def.cluster(),
            in_ptx: def.in_ptx(),
            // No tile to blame for a kernel that has no GPU entry at any tile.
            tile: if def.is_emulator_only() { None } else { def.tile() },
            dynamic_shared: {
                let sizing = def.dynamic_sizing();
                Arc::new(move |threads| sizing.bytes(threads))
            },
            // SAFETY (of the call): the emulator passes one argument per
            // parameter, each of its kind, built from a checked launch.
            emulated: Arc::new(move |args: &[cg_emulator::Arg]| unsafe { P::call(entry, args) }),
        };
        let function = gpu.load(&spec, module)?;
        Ok(Loaded { gpu, def: *def, function, limits: Cell::new(None) })
    }

    fn limits(&self, threads_per_block: u32) -> Result<Limits> {
        if let Some(l) = self.limits.get().filter(|l| l.block.threads_per_block == threads_per_block) {
            return Ok(l);
        }
        check_threads_per_block(threads_per_block, self.gpu.info.max_threads_per_block).map_err(|why| Error::BadThreadsPerBlock { threads_per_block, why })?;
        if let Some(required) = self.def.block_size().filter(|&n| n != threads_per_block) {
            return Err(Error::NotTheBlockSize { kernel: self.def.name(), threads_per_block, required });
        }
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
            block: BlockResources {
                threads_per_block,
                registers_per_thread: o.registers_per_thread,
                shared_bytes: o.static_shared_bytes.saturating_add(shared),
            },
            sm: self.gpu.info.sm,
        })
    }

    /// Launches the kernel, noting the launch for the Gpu's record ([`Gpu::recording_launches`]).
    ///
    /// # Safety
    /// As `Function::launch`.
    unsafe fn launch(&self, shape: Shape, cooperative: bool, args: &[ArgValue<'_>]) -> Result<()> {
        let args: Vec<ArgRepr> = args.iter().map(|a| a.repr).collect();
        self.gpu.check_args(self.def.name(), self.def.param_names(), &args)?;
        self.gpu.note_launch(crate::device::Launched {
            kernel: self.def.name(),
            blocks: shape.blocks,
            threads_per_block: shape.threads_per_block,
            cooperative,
            most_atomics_on_one_word: None,
        });
        // SAFETY: the caller's contract.
        unsafe { self.function.launch(shape, cooperative, &args) }?;
        self.gpu.note_atomics(self.function.most_atomics_on_one_word());
        Ok(())
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

/// What [`LoadsAsKernel`] and [`LoadsAsCooperative`] are limited to: the
/// contracts that load as each, and no other crate's.
mod sealed {
    pub trait Sealed {}
    impl Sealed for cg_kernel::kernels::NoGridSync {}
    impl Sealed for cg_kernel::kernels::GridSync {}
}

/// The contract [`Gpu::kernel`] loads: no grid barrier (`NoGridSync`). Any
/// other is a compile error that names the loader to use.
#[diagnostic::on_unimplemented(
    message = "`gpu.kernel()` loads kernels with no grid.sync(); this one's contract is `{Self}`",
    label = "a kernel declared #[kernel(cooperative)] (GridSync) loads with `gpu.cooperative_kernel(...)`, one declared #[kernel(cluster)] with `gpu.cluster_kernel(...)`",
    note = "C++ launches a kernel that calls grid.sync() with cudaLaunchCooperativeKernel; here its definition's type admits no other launch"
)]
pub trait LoadsAsKernel: cg_kernel::kernels::Contract + Sized + sealed::Sealed {
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
pub trait LoadsAsCooperative: cg_kernel::kernels::Contract + Sized + sealed::Sealed {
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

impl<P: Params> Kernel<'_, P> {
    /// Launches `blocks` blocks of `threads_per_block` threads with `args`.
    ///
    /// # Safety
    /// `args` satisfy the kernel's own safety contract at this shape (its
    /// buffers are as long as it reads and writes, say): the kernel is an
    /// `unsafe fn`, and launching it is calling it. Wrap it in a safe
    /// function that checks them ([`ensure_len`]). The memory the arguments
    /// name outlives the kernel's run: a [`Buffer`](crate::device::Buffer)'s
    /// does by itself (it is freed in the device's order, after the work
    /// queued before), but a [`Shared`](crate::device::Shared) passed with
    /// `Shared::out` must not be dropped until the kernel has finished
    /// (`gpu.finish()`): dropping it frees its host-mapped memory at once.
    /// On the emulator, too, the
    /// kernel lends no reference to its own locals to another OS thread
    /// (a `std::thread::scope` in a kernel's host build, say): the emulator
    /// moves a parked GPU thread's stack out of its memory and abandons a
    /// faulted one's (see `cg_emulator::Device::launch`).
    pub unsafe fn launch<A: Args<P>>(&self, blocks: u32, threads_per_block: u32, args: A) -> Result<()> {
        let shape = self.loaded.shape(blocks, threads_per_block)?;
        // SAFETY: the caller's contract.
        unsafe { self.loaded.launch(shape, false, args.values().as_ref()) }
    }

    /// The same launch, made cooperatively: the driver refuses a grid larger
    /// than can be resident. The kernel has no grid barrier, so any grid
    /// that is launched completes (what the lesson's `is_valid()` probe shows).
    ///
    /// # Safety
    /// As [`launch`](Self::launch).
    pub unsafe fn launch_cooperatively<A: Args<P>>(&self, blocks: u32, threads_per_block: u32, args: A) -> Result<()> {
        let shape = self.loaded.shape(blocks, threads_per_block)?;
        // SAFETY: the caller's contract.
        unsafe { self.loaded.launch(shape, true, args.values().as_ref()) }
    }

    /// Refuses by name a shape no launch of this kernel may have (a block
    /// size the device or the kernel's launch bounds refuse, no blocks, a
    /// grid of 2^32 threads or more): what [`launch`](Self::launch) checks
    /// first, for a safe wrapper to check before its buffers.
    pub fn check_shape(&self, blocks: u32, threads_per_block: u32) -> Result<()> {
        self.loaded.shape(blocks, threads_per_block).map(|_| ())
    }

    /// The device it was loaded on.
    pub fn gpu(&self) -> &Gpu {
        self.loaded.gpu
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
    /// Launches it with `args`: cooperatively, on the grid [`configure`](CooperativeKernel::configure) checked.
    ///
    /// # Safety
    /// `args` satisfy the kernel's own safety contract for this launch's
    /// shape (see [`Kernel::launch`]).
    pub unsafe fn launch<A: Args<P>>(&self, args: A) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe { self.kernel.loaded.launch(self.shape, true, args.values().as_ref()) }
    }

    /// The same launch by the entry whose `grid.sync()` is the watched
    /// barrier (`watched`) or by the plain one, whatever the grid's size (a
    /// launch otherwise picks by size): to time either barrier. GPU only.
    ///
    /// # Safety
    /// As [`launch`](Self::launch).
    pub unsafe fn launch_by_entry<A: Args<P>>(&self, watched: bool, args: A) -> Result<()> {
        let args: Vec<ArgRepr> = args.values().as_ref().iter().map(|a| a.repr).collect();
        self.kernel.loaded.gpu.check_args(self.kernel.loaded.def.name(), self.kernel.loaded.def.param_names(), &args)?;
        // SAFETY: the caller's contract; either entry takes the same parameters.
        unsafe { self.kernel.loaded.function.launch_entry(self.shape, true, Some(watched), &args) }
    }

    /// The kernel's definition.
    pub fn def(&self) -> &KernelDef<P, GridSync> {
        &self.kernel.loaded.def
    }

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
pub struct RawKernel<'g> {
    gpu: &'g Gpu,
    name: &'static str,
    function: Box<dyn Function + 'g>,
}

impl Gpu {
    /// Loads kernel `name` from `module` without a definition (see [`RawKernel`]).
    pub fn raw_kernel_in<'g>(&'g self, module: &'g Module, name: &'static str) -> Result<RawKernel<'g>> {
        let spec = KernelSpec {
            name,
            krate: "",
            params: &[],
            grid_sync: true,
            cluster: false,
            in_ptx: false,
            tile: None,
            dynamic_shared: Arc::new(|_| u32::MAX),
            emulated: Arc::new(|_: &[cg_emulator::Arg]| unreachable!("a module from a file is refused on the emulator")),
        };
        Ok(RawKernel { gpu: self, name, function: self.load(&spec, Some(module))? })
    }
}

impl RawKernel<'_> {
    /// Blocks of `threads_per_block` one launch may hold at once, with `shared_bytes` of dynamic shared memory.
    pub fn capacity(&self, threads_per_block: u32, shared_bytes: u32) -> Result<u32> {
        Ok(self.function.occupancy(threads_per_block, shared_bytes)?.blocks_per_sm * self.gpu.info.sms)
    }

    /// Launches it; a cooperative launch larger than [`capacity`](Self::capacity) is refused.
    ///
    /// # Safety
    /// `args` are the kernel's parameters, and the memory they address
    /// satisfies its contract for `shape` and outlives the kernel's run (as
    /// for [`Kernel::launch`]); a kernel that synchronizes its
    /// grid is launched only cooperatively; on the emulator, the kernel
    /// lends no reference to its locals to another OS thread (as for
    /// [`Kernel::launch`]).
    pub unsafe fn launch(&self, shape: Shape, cooperative: bool, args: &[ArgValue<'_>]) -> Result<()> {
        let capacity = self.capacity(shape.threads_per_block, shape.shared_bytes)?;
        if cooperative && shape.blocks > capacity {
            return Err(Error::ForeignGridTooLarge { kernel: self.name, requested: shape.blocks, capacity });
        }
        let args: Vec<ArgRepr> = args.iter().map(|a| a.repr).collect();
        self.gpu.check_args(self.name, &[], &args)?;
        // SAFETY: the caller's contract.
        unsafe { self.function.launch(shape, cooperative, &args) }
    }
}
