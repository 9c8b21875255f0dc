//! A kernel on a CUDA device: its functions (the plain entry and the
//! watched one), found once per device, its occupancy and opt-in to more
//! than 48 KiB of shared memory kept with them, and its launches.

use super::*;

impl Cuda {
    /// A kernel of the program's own modules: its functions looked up once
    /// per device and kept, and its PTX read once per module (see [`PtxIndex`]).
    pub(super) fn load_ours(&self, spec: &KernelSpec) -> Result<Box<dyn Function + '_>> {
        if !spec.in_ptx {
            return Err(Error::NotInPtx { kernel: spec.name, tile: spec.tile });
        }
        let key = (spec.krate, spec.cluster, spec.name);
        if let Some((module, function, watched, opted_in)) = self.functions.borrow().get(&key) {
            let (module, function, watched, opted_in) = (module.clone(), function.clone(), watched.clone(), opted_in.clone());
            return Ok(Box::new(CudaKernel { cuda: self, name: spec.name, module, function, watched, cache: Some(key), opted_in }));
        }
        let ptx = crate::ptx_of(spec.krate)?;
        let index = self
            .indexes
            .borrow_mut()
            .entry((spec.krate, spec.cluster))
            .or_insert_with(|| std::rc::Rc::new(PtxIndex::new(if spec.cluster { ptx.sm90 } else { ptx.plain })))
            .clone();
        if !spec.grid_sync && index.calls_grid_sync(spec.name) {
            return Err(Error::UndeclaredGridSync { kernel: spec.name });
        }
        let module = if spec.cluster { self.sm90_module(spec.krate, spec.name)? } else { self.module(spec.krate)? };
        let function = module.load_function(spec.name).map_err(Error::driver("cuModuleGetFunction"))?;
        // A cooperative kernel of this project's modules has a second entry
        // whose grid.sync() is the watched barrier, launched for large grids.
        let watched = match spec.grid_sync {
            true => Some(module.load_function(&format!("{}{WATCHED_ENTRY_SUFFIX}", spec.name)).map_err(Error::driver("cuModuleGetFunction"))?),
            false => None,
        };
        let opted_in = std::rc::Rc::new(Cell::new(0));
        self.functions.borrow_mut().insert(key, (module.clone(), function.clone(), watched.clone(), opted_in.clone()));
        Ok(Box::new(CudaKernel { cuda: self, name: spec.name, module, function, watched, cache: Some(key), opted_in }))
    }
}

/// A kernel of the program's own modules, as the caches know it: its
/// kernel crate, whether it is in the sm_90 module, and its name.
pub(super) type FunctionKey = (&'static str, bool, &'static str);

/// A kernel loaded from a CUDA module.
pub(super) struct CudaKernel<'g> {
    pub(super) cuda: &'g Cuda,
    pub(super) name: &'static str,
    /// The module that holds it (a traced launch points its `CG_TRACE`).
    pub(super) module: Arc<CudaModule>,
    pub(super) function: CudaFunction,
    /// The `name__watched` entry of a cooperative kernel of this project's
    /// modules, launched cooperatively above `WATCHED_ABOVE_BLOCKS` blocks.
    pub(super) watched: Option<CudaFunction>,
    /// Where its occupancy answers are kept: the program's own kernels only
    /// (a module from a file may be unloaded and another loaded in its place).
    pub(super) cache: Option<FunctionKey>,
    /// The dynamic shared memory its entries were opted in to, if above 48
    /// KiB: one cell per function, kept with it in `Cuda::functions`.
    pub(super) opted_in: std::rc::Rc<Cell<u32>>,
}

/// Dynamic shared memory a kernel may have without opting in.
const SHARED_WITHOUT_OPT_IN: u32 = 48 * 1024;

impl CudaKernel<'_> {
    /// Opts both entries in to `shared_bytes` of dynamic shared memory
    /// (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`) where that is
    /// above 48 KiB: without it the occupancy API counts no block, and the
    /// launch is refused. A size past the device's opt-in maximum is left
    /// to the occupancy answer (no block fits), which the launcher names.
    fn opt_in(&self, shared_bytes: u32) -> Result<()> {
        if shared_bytes <= SHARED_WITHOUT_OPT_IN.max(self.opted_in.get()) || shared_bytes > self.cuda.max_shared_per_block {
            return Ok(());
        }
        for f in std::iter::once(&self.function).chain(&self.watched) {
            f.set_attribute(FnAttr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared_bytes as i32).map_err(Error::driver("cuFuncSetAttribute"))?;
        }
        self.opted_in.set(shared_bytes);
        Ok(())
    }

    /// The entry a launch of `shape` runs (`gpu::cg::barrier::is_watched`),
    /// and whether it is the watched one.
    fn entry(&self, shape: Shape, cooperative: bool) -> (&CudaFunction, bool) {
        match &self.watched {
            Some(w) if cooperative && is_watched(shape.blocks) => (w, true),
            _ => (&self.function, false),
        }
    }
}

impl Drop for CudaKernel<'_> {
    /// A stuck kernel's module stays loaded (see `Drop for Cuda`); a module
    /// from a file is unloaded when its last function goes.
    fn drop(&mut self) {
        if self.cuda.stuck.get().is_some() {
            std::mem::forget(self.function.clone());
            std::mem::forget(self.watched.clone());
        }
    }
}

/// The most parameters an entry takes: `#[kernel]`'s limit of 16, and a
/// cooperative kernel's hidden launch-memory parameter.
const MAX_PARAMS: usize = cg_kernel::kernels::MAX_PARAMS + 1;

impl Function for CudaKernel<'_> {
    fn occupancy(&self, threads_per_block: u32, shared_bytes: u32) -> Result<Occupancy> {
        let key = self.cache.map(|k| (k, threads_per_block, shared_bytes));
        if let Some(o) = key.and_then(|k| self.cuda.occupancies.borrow().get(&k).copied()) {
            return Ok(o);
        }
        self.opt_in(shared_bytes)?;
        let blocks = |f: &CudaFunction| {
            f.occupancy_max_active_blocks_per_multiprocessor(threads_per_block, shared_bytes as usize, None)
                .map_err(Error::driver("cuOccupancyMaxActiveBlocksPerMultiprocessor"))
        };
        // Either entry may be launched: a grid fits only if it fits both.
        let blocks_per_sm = match &self.watched {
            Some(w) => blocks(&self.function)?.min(blocks(w)?),
            None => blocks(&self.function)?,
        };
        let attr = |a| self.function.get_attribute(a).map(|v| v.max(0) as u32).map_err(Error::driver("cuFuncGetAttribute"));
        let o = Occupancy {
            blocks_per_sm,
            registers_per_thread: Some(attr(FnAttr::CU_FUNC_ATTRIBUTE_NUM_REGS)?),
            static_shared_bytes: attr(FnAttr::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
        };
        if let Some(k) = key {
            self.cuda.occupancies.borrow_mut().insert(k, o);
        }
        Ok(o)
    }

    fn max_active_clusters(&self, shape: Shape) -> Result<u32> {
        // SAFETY: the function is live in this context.
        unsafe { driver::max_active_clusters(self.function.cu_function(), shape) }.map_err(Error::driver("cuOccupancyMaxActiveClusters"))
    }

    unsafe fn launch_entry(&self, shape: Shape, cooperative: bool, watched: Option<bool>, args: &[ArgRepr]) -> Result<()> {
        self.opt_in(shape.shared_bytes)?;
        if args.len() >= MAX_PARAMS {
            return Err(Error::TooManyParameters { kernel: self.name, count: args.len(), max: MAX_PARAMS - 1 });
        }
        self.cuda.usable()?;
        self.cuda.last_kernel.set(self.name);
        let (entry, _) = match (watched, &self.watched) {
            (None, _) => self.entry(shape, cooperative),
            (Some(true), Some(w)) => (w, true),
            (Some(false), _) => (&self.function, false),
            (Some(true), None) => return Err(Error::NoWatchedEntry { kernel: self.name }),
        };
        // Each parameter's bits in a u64: the driver reads the parameter's own
        // size from its start, which on a little-endian host is the value.
        let mut bits = [0u64; MAX_PARAMS];
        for (b, a) in bits.iter_mut().zip(args) {
            *b = match *a {
                ArgRepr::In { address, .. } | ArgRepr::Out { address, .. } => address,
                ArgRepr::Value(v, _) => v,
            };
        }
        let mut count = args.len();
        if self.watched.is_some() {
            // Both entries of a cooperative kernel of this project's modules
            // take this launch's memory last: the watched barrier's lines and
            // the grid collectives' scratch.
            bits[count] = self.cuda.launch_memory()?;
            count += 1;
        }
        let mut params = [std::ptr::null_mut::<c_void>(); MAX_PARAMS];
        for (p, b) in params.iter_mut().zip(bits.iter_mut()) {
            *p = b as *mut u64 as *mut c_void;
        }
        let words = match self.cuda.traced {
            Some(super::super::Tracing::Read) if self.cuda.capturing.get().is_none() => Some(self.cuda.start_trace(&self.module, shape.blocks)?),
            Some(_) => {
                self.cuda.unread_trace(&self.module, shape.blocks)?;
                None
            }
            None => None,
        };
        // SAFETY: one value per parameter (the caller's contract, and the
        // watched entry's barrier memory), each in a u64 that lives across the
        // call; the function and stream are live.
        unsafe { driver::launch_kernel_ex(entry.cu_function(), self.cuda.launch_stream(), shape, cooperative, &mut params[..count]) }
            .map_err(Error::driver(if cooperative { "cooperative cuLaunchKernelEx" } else { "cuLaunchKernelEx" }))?;
        if let Some(words) = words {
            self.cuda.end_trace(self.name, shape, cooperative, &words)?;
        }
        Ok(())
    }
}

/// A kernel as loaded: its module (kept alive while the function is), its
/// entry and its watched entry where the build has one, and the dynamic
/// shared memory both are opted in to (shared by every handle to them, so
/// that the attribute is set once per function, not once per handle).
pub(super) type Loaded = (Arc<CudaModule>, CudaFunction, Option<CudaFunction>, std::rc::Rc<Cell<u32>>);
