#[cfg(all(target_arch = "nvptx64", feature = "barrier-timeout"))]
use super::barrier::{REPORT_MAGIC, TIMEOUT_NS};
#[cfg(target_arch = "nvptx64")]
use super::barrier::{arrival, arrivals, released};
use super::block::this_thread_block;
use super::ranks::{self, MAX_GRID_DIM_YZ};
use crate::arch;
use core::marker::PhantomData;

/// Every thread of the launch (`cg::grid_group`).
///
/// Its [`sync`](Self::sync) is a barrier across all blocks, which can only
/// complete when all of them are resident at once: that is what a cooperative
/// launch arranges. `L` says whether this kernel is known to have been
/// launched that way:
/// - [`Cooperative`] (the default, so `&GridGroup` in a helper's signature
///   means this one): `this_grid()` called in a kernel declared
///   `#[kernel(cooperative)]`, which the host can launch only cooperatively,
///   and only with a grid that fits. Only this grid has `sync()`.
/// - [`Ordinary`]: `this_grid()` anywhere else. Everything but `sync()`:
///   calling it there is a compile error that names `#[kernel(cooperative)]`.
///
/// Counts and ranks over the whole grid are `usize` (C++: `unsigned long
/// long`): they index memory, and a grid-stride index built from them passes
/// 2^32 on a large input. They are computed in 32 bits and widened, which
/// keeps the kernels' registers down ([`ranks`] says why); on a grid of 2^32
/// threads or more, which a host other than ours could launch, `this_grid()`
/// traps instead, so no rank ever wraps. (This project's host refuses such a
/// grid by name, before launching.)
/// Those of a block or a tile are `u32` (C++: `unsigned int`); widen one with
/// `as usize` where it indexes memory, the place C++ converts without saying.
///
/// A helper that synchronizes takes `&GridGroup` (the cooperative one), so
/// only a `#[kernel(cooperative)]` kernel can call it:
/// ```no_run
/// use cg_kernel::cg::GridGroup;
/// use cg_kernel::mem::Out;
///
/// fn publish(grid: &GridGroup, partials: Out<f32>, mine: f32) {
///     // SAFETY: `partials` holds one float per thread of the grid.
///     unsafe { partials.write(grid.thread_rank(), mine) };
///     grid.sync(); // every block's write is visible to every block after this
/// }
/// ```
/// `this_grid()` outside such a kernel has no `sync()`:
/// ```compile_fail,E0277
/// fn not_declared_cooperative() {
///     cg_kernel::cg::this_grid().sync();
/// }
/// ```
pub struct GridGroup<L = Cooperative> {
    pub(super) workspace: *mut u32,
    /// Whether this is the kernel's watched entry (`cg::barrier::watched`),
    /// which the host launches for grids above `WATCHED_ABOVE_BLOCKS`: a
    /// constant of each entry, so each compiles one barrier.
    #[cfg_attr(not(target_arch = "nvptx64"), allow(dead_code))]
    pub(super) watched: bool,
    /// This launch's own memory, the last parameter of both GPU entries
    /// (`cg::barrier::launch_memory`, ABI in `docs/abi.md`): the watched
    /// barrier's lines (the watched entry's barrier; the plain entry's is the
    /// driver's per-launch workspace), then the grid collectives' scratch.
    /// Null on the emulator, which keeps both itself, and where a grid was
    /// made without it (a collective then traps).
    #[cfg_attr(not(target_arch = "nvptx64"), allow(dead_code))]
    pub(super) launch: *mut u32,
    _launch: PhantomData<L>,
}

/// A grid whose kernel is declared `#[kernel(cooperative)]`: launched
/// cooperatively, every block resident, so [`GridGroup::sync`] can complete.
pub struct Cooperative;

/// A grid whose kernel is not declared `#[kernel(cooperative)]`: it may be
/// launched the ordinary way, so it has no [`GridGroup::sync`].
pub struct Ordinary;

/// [`Cooperative`] or [`Ordinary`].
pub trait LaunchKind: sealed::Sealed {}
impl LaunchKind for Cooperative {}
impl LaunchKind for Ordinary {}
mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Cooperative {}
    impl Sealed for super::Ordinary {}
}

/// The launch kinds whose grids may synchronize: only [`Cooperative`].
#[diagnostic::on_unimplemented(
    message = "grid.sync() needs a kernel declared `#[kernel(cooperative)]`",
    label = "this grid comes from `this_grid()` outside a `#[kernel(cooperative)]` kernel",
    note = "a grid barrier completes only if every block is resident at once, which only a cooperative launch arranges; \
            `#[kernel(cooperative)]` makes the host launch the kernel only that way, sized to fit",
    note = "declare the kernel `#[kernel(cooperative)]` and call `this_grid()` in its body; a helper that synchronizes takes the grid as `&GridGroup`"
)]
pub trait CanSync: LaunchKind {}
impl CanSync for Cooperative {}

/// The launch kinds whose grids may call the grid collectives
/// (`grid.reduce`, the scans, `select`, `histogram_even`): only
/// [`Cooperative`], as for [`CanSync`], each call containing a grid barrier.
#[diagnostic::on_unimplemented(
    message = "the grid collectives (grid.reduce, the scans, grid.select, grid.histogram_even) need a kernel declared `#[kernel(cooperative)]`",
    label = "this grid comes from `this_grid()` outside a `#[kernel(cooperative)]` kernel",
    note = "each grid collective contains a grid barrier, which completes only if every block is resident at once: only a cooperative launch arranges that, and `#[kernel(cooperative)]` makes the host launch the kernel only that way",
    note = "declare the kernel `#[kernel(cooperative)]` and call `this_grid()` in its body; a helper that calls a collective takes the grid as `&GridGroup`"
)]
pub trait CanCollect: CanSync {}
impl CanCollect for Cooperative {}

/// The whole grid (`cg::this_grid()`). In the body of a kernel declared
/// `#[kernel(cooperative)]` this name is the grid that can synchronize
/// ([`GridGroup<Cooperative>`]); elsewhere it is [`GridGroup<Ordinary>`].
#[inline(always)]
pub fn this_grid() -> GridGroup<Ordinary> {
    GridGroup::new(false, core::ptr::null_mut())
}

/// What `#[kernel(cooperative)]` puts in scope in its kernel's body, in place
/// of [`this_grid`] and `cg::this_grid`. Not for use elsewhere: its
/// constructors are `unsafe`, and a kernel that reaches for one without the
/// attribute is refused by the loader and the emulator.
#[doc(hidden)]
pub mod cooperative_kernel {
    use super::*;

    /// `cg::this_grid()` in a kernel declared `#[kernel(cooperative)]`.
    ///
    /// # Safety
    /// Called only in the body of a `#[kernel(cooperative)]` kernel's plain
    /// entry (the macro writes the call): its `sync()` is a grid barrier that
    /// completes only in a cooperative launch, which only such a kernel gets.
    #[inline(always)]
    pub unsafe fn this_grid() -> GridGroup<Cooperative> {
        GridGroup::new(false, core::ptr::null_mut())
    }

    /// The `cg` module, with [`this_grid`] in place of the plain one.
    pub mod cg {
        pub use super::this_grid;
        pub use crate::cg::*;
    }

    /// The same scope in the kernel's plain GPU entry, whose last parameter
    /// is the launch's memory.
    pub mod launched {
        use super::*;

        /// `cg::this_grid()` in a cooperative kernel's plain GPU entry, with
        /// `launch`, that entry's hidden parameter: the launch's memory
        /// (`cg::barrier::launch_memory`), whose scratch the grid collectives use.
        ///
        /// # Safety
        /// As [`this_grid`](super::this_grid), in the plain GPU entry, with
        /// `launch` that entry's hidden parameter (`docs/abi.md`).
        #[inline(always)]
        pub unsafe fn this_grid(launch: *mut u32) -> GridGroup<Cooperative> {
            GridGroup::new(false, launch)
        }

        /// The `cg` module, with [`this_grid`] in place of the plain one.
        pub mod cg {
            pub use super::this_grid;
            pub use crate::cg::*;
        }
    }

    /// The same scope in the kernel's watched entry.
    pub mod watched {
        use super::*;

        /// `cg::this_grid()` in a cooperative kernel's watched entry, whose
        /// last parameter, `launch`, is this launch's memory: the barrier's
        /// lines first (`cg::barrier::launch_memory`). A host that passes
        /// null gets a trap here, not a barrier on address 0.
        ///
        /// # Safety
        /// As the plain entry's, in the watched entry, with `launch` that
        /// entry's hidden parameter (`docs/abi.md`).
        #[inline(always)]
        pub unsafe fn this_grid(launch: *mut u32) -> GridGroup<Cooperative> {
            #[cfg(target_arch = "nvptx64")]
            if launch.is_null() {
                arch::trap();
            }
            GridGroup::new(true, launch)
        }

        /// The `cg` module, with [`this_grid`] in place of the plain one.
        pub mod cg {
            pub use super::this_grid;
            pub use crate::cg::*;
        }
    }
}

impl<L: LaunchKind> GridGroup<L> {
    /// The grid of every `this_grid()`: only where its ranks are exact
    /// (`counted_in_32_bits` traps otherwise, once per kernel).
    #[inline(always)]
    fn new(watched: bool, launch: *mut u32) -> Self {
        counted_in_32_bits(grid_dim(), this_thread_block().num_threads());
        GridGroup { workspace: arch::grid_workspace(), watched, launch, _launch: PhantomData }
    }

    /// Whether this grid can synchronize (`grid.is_valid()`): the launch handed
    /// the kernel a barrier workspace.
    ///
    /// Measured on an H200 (driver 580.159.04, the same from C++): an ordinary
    /// launch reads `false` only until its context has made any cooperative
    /// launch, then `true`. So this is not proof that the launch was cooperative.
    #[inline(always)]
    pub fn is_valid(&self) -> bool {
        !self.workspace.is_null()
    }

    /// Waits for every thread of the grid; every write before it, by any
    /// thread, is visible to every thread after it (`grid.sync()`).
    ///
    /// Traps when [`is_valid`](Self::is_valid) is false, where C++ leaves the
    /// behaviour undefined.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn sync(&self)
    where
        L: CanSync,
    {
        #[cfg(target_arch = "nvptx64")]
        self.sync_on_gpu();
        #[cfg(not(target_arch = "nvptx64"))]
        {
            emu_call!("grid.sync()");
            cg_emulator::thread::grid_sync(self.is_valid());
        }
    }

    /// The grid barrier: the driver's single word ([`Self::sync_on_word`])
    /// in a kernel's plain entry, the watched barrier ([`Self::sync_watched`])
    /// in its watched entry (`cg::barrier::WATCHED_ABOVE_BLOCKS` says which
    /// the host launches). `watched` is each entry's constant, so neither
    /// entry carries the other's code.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    fn sync_on_gpu(&self) {
        arch::mark_grid_sync();
        if !self.is_valid() {
            arch::trap();
        }
        let block = this_thread_block();
        // The block's writes happen before thread 0's release below.
        block.sync();
        if self.watched {
            self.sync_watched(self.num_blocks() as u32);
        } else if block.thread_rank() == 0 {
            self.sync_on_word(self.num_blocks() as u32);
        }
        // Thread 0's acquire (its add's, or its last poll's) happens before the
        // rest of the block continues.
        block.sync();
    }

    /// The driver's grid barrier (its ABI, as `cooperative_groups/details/sync.h`
    /// documents it), for thread 0 between two block barriers: one arrival
    /// per block on the workspace's barrier word, a spin until the word's top
    /// bit flips.
    ///
    /// Two things differ from `sync.h`: the arrival is an acquire-release add,
    /// so the first poll cannot race the add to the same word (one that did
    /// cost 0.9 µs per barrier on an H200 once the blocks arrive together,
    /// `records/NOTES.md`, 2026-12-01); and the block that arrives last
    /// sees from the add's result that the barrier is complete, and does not
    /// poll.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    fn sync_on_word(&self, n: u32) {
        // SAFETY: a valid workspace is `{ size: u32, barrier: u32 }` in global memory.
        let barrier = unsafe { self.workspace.add(1) };
        crate::trace::block_arrives();
        let share = arrival(self.block_rank() == 0, n);
        // SAFETY: as above.
        let arrived_at = unsafe { arch::atom_add_acq_rel_gpu(barrier, share) };
        if !released(arrived_at, arrived_at.wrapping_add(share)) {
            // SAFETY (of both reads): as above.
            self.spin_until(|| released(arrived_at, unsafe { arch::ld_acquire_gpu(barrier) }), || arrivals(unsafe { arch::ld_acquire_gpu(barrier) }, n));
        }
        crate::trace::block_leaves();
    }

    /// The watched barrier (`cg::barrier::watched`, where the protocol and
    /// its memory-model argument are), between two block barriers: thread 0
    /// of each block arrives on its group's counter and waits for its group's
    /// flag; block 0's threads watch the counters and release the flags.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    fn sync_watched(&self, n: u32) {
        use super::barrier::watched::{COUNTERS, group, group_size, next_epoch, released};
        let block = this_thread_block();
        let (b, t, threads) = (self.block_rank() as u32, block.thread_rank(), block.num_threads());
        let lines = self.launch;
        // SAFETY (of every access below): counter f is line f and flag f line
        // COUNTERS + f of `lines`, f < COUNTERS: the launch's barrier memory,
        // `watched::BYTES` of global memory no other launch in flight
        // uses (the entry's contract, `docs/abi.md`).
        let counter = |f: u32| unsafe { lines.add(f as usize * LINE_WORDS) };
        let flag = |f: u32| unsafe { lines.add((COUNTERS + f) as usize * LINE_WORDS) };
        let arrived = || (0..COUNTERS).map(|f| unsafe { arch::ld_relaxed_gpu(counter(f)) }).sum::<u32>();
        let g = group(b, COUNTERS);
        let mut joined = 0;
        if t == 0 {
            crate::trace::block_arrives();
            joined = unsafe { arch::ld_relaxed_gpu(flag(g)) };
            unsafe { arch::red_add_release_gpu(counter(g), 1) };
        }
        if b == 0 {
            let mut f = t;
            while f < COUNTERS {
                let size = group_size(f, n, COUNTERS);
                self.spin_until(|| unsafe { arch::ld_acquire_gpu(counter(f)) } == size, arrived);
                f += threads;
            }
            // Every watcher thread's acquisitions before every flag's release.
            block.sync();
            let mut f = t;
            while f < COUNTERS {
                // Every flag holds the epoch flag 0 held when block 0 arrived.
                let e = unsafe { arch::ld_relaxed_gpu(flag(f)) };
                unsafe {
                    arch::st_relaxed_gpu(counter(f), 0);
                    arch::st_release_gpu(flag(f), next_epoch(e));
                }
                f += threads;
            }
        } else if t == 0 {
            self.spin_until(|| released(joined, unsafe { arch::ld_acquire_gpu(flag(g)) }), arrived);
        }
        if t == 0 {
            crate::trace::block_leaves();
        }
    }

    /// Spins until `done()`.
    #[cfg(all(target_arch = "nvptx64", not(feature = "barrier-timeout")))]
    #[inline(always)]
    fn spin_until(&self, mut done: impl FnMut() -> bool, _arrived: impl Fn() -> u32) {
        while !done() {}
    }

    /// Spins until `done()` or [`TIMEOUT_NS`] passes; then records which
    /// block gave up and how many had `arrived()`, and traps.
    #[cfg(all(target_arch = "nvptx64", feature = "barrier-timeout"))]
    #[inline(always)]
    fn spin_until(&self, mut done: impl FnMut() -> bool, arrived: impl Fn() -> u32) {
        let start = arch::global_timer();
        while !done() {
            if arch::global_timer().wrapping_sub(start) > TIMEOUT_NS {
                give_up(self.block_rank() as u32, arrived(), self.num_blocks() as u32);
            }
        }
    }

    /// This thread's rank in the grid (`grid.thread_rank()`).
    #[inline(always)]
    pub fn thread_rank(&self) -> usize {
        let block = this_thread_block();
        let (index, dims, threads, rank) = (arch::block_idx(), grid_dim(), block.num_threads(), block.thread_rank());
        // Exact: `this_grid()` checked that the grid has fewer than 2^32 threads.
        ranks::narrow_thread_rank(index, dims, threads, rank) as usize
    }

    /// The number of threads in the grid (`grid.size()`, the older C++ name of
    /// [`num_threads`](Self::num_threads)).
    #[inline(always)]
    pub fn size(&self) -> usize {
        self.num_threads()
    }

    /// The number of threads in the grid (`grid.num_threads()`).
    #[inline(always)]
    pub fn num_threads(&self) -> usize {
        let threads = this_thread_block().num_threads();
        let [x, y, z] = grid_dim();
        // Exact, as in `thread_rank`.
        (x * y * z * threads) as usize
    }

    /// The number of blocks in the grid (`grid.num_blocks()`).
    #[inline(always)]
    pub fn num_blocks(&self) -> usize {
        ranks::block_count(grid_dim()) as usize
    }

    /// This thread's cluster's rank in the grid, x fastest
    /// (`grid.cluster_rank()`, 9.0+); the block's rank where the launch has no clusters.
    #[inline(always)]
    pub fn cluster_rank(&self) -> usize {
        ranks::block_rank(arch::cluster_id(), arch::ncluster_id()) as usize
    }

    /// Clusters in the grid (`grid.num_clusters()`, 9.0+).
    #[inline(always)]
    pub fn num_clusters(&self) -> usize {
        ranks::block_count(arch::ncluster_id()) as usize
    }

    /// This block's rank in the grid, x fastest (`grid.block_rank()`).
    #[inline(always)]
    pub fn block_rank(&self) -> usize {
        ranks::block_rank(arch::block_idx(), grid_dim()) as usize
    }
}

/// Words in one 128-byte line.
#[cfg(target_arch = "nvptx64")]
const LINE_WORDS: usize = super::barrier::watched::LINE_BYTES as usize / 4;

/// Where a diagnosing `grid.sync()` writes its report: four `u32` of
/// host-mapped memory that the host sets before launching, or null.
#[cfg(all(target_arch = "nvptx64", feature = "barrier-timeout"))]
#[unsafe(no_mangle)]
pub static mut GRID_BARRIER_REPORT: *mut u32 = core::ptr::null_mut();

#[cfg(all(target_arch = "nvptx64", feature = "barrier-timeout"))]
#[cold]
fn give_up(block: u32, arrived: u32, expected: u32) -> ! {
    // SAFETY: the host writes this pointer before launching, never during.
    let report = unsafe { core::ptr::addr_of!(GRID_BARRIER_REPORT).read_volatile() };
    // The first block to give up claims the report; the others only trap.
    // SAFETY: a non-null report is four u32 of host-mapped memory.
    if !report.is_null() && unsafe { arch::atom_cas_sys(report, 0, REPORT_MAGIC) } == 0 {
        // SAFETY: as above.
        unsafe {
            arch::st_volatile(report.add(1), block);
            arch::st_volatile(report.add(2), arrived);
            arch::st_volatile(report.add(3), expected);
        }
        arch::fence_sys();
    }
    arch::trap()
}

/// The grid's thread count, or a trap for a grid of 2^32 threads or more,
/// whose 32-bit ranks would wrap. `GridGroup::new`, behind every
/// `this_grid()`, asks once, so that a `GridGroup` exists only where its
/// ranks are exact (asking at every rank instead cost the kernels registers).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
fn counted_in_32_bits(dims: [u32; 3], threads: u32) -> u32 {
    match ranks::narrow_thread_count(dims, threads) {
        Some(n) => n,
        #[cfg(target_arch = "nvptx64")]
        None => arch::trap(),
        #[cfg(not(target_arch = "nvptx64"))]
        None => panic!("a grid of 2^32 threads or more: this project's grid ranks are 32-bit"),
    }
}

/// `%nctaid`, with CUDA's limits on it told to the compiler.
#[inline(always)]
fn grid_dim() -> [u32; 3] {
    let [x, y, z] = arch::grid_dim();
    // SAFETY: the driver refuses a launch with more than 2^31 - 1 blocks along
    // x or 65,535 along y or z, and with none along any.
    unsafe { arch::assume(x >= 1 && x <= i32::MAX as u32 && (1..=MAX_GRID_DIM_YZ).contains(&y) && (1..=MAX_GRID_DIM_YZ).contains(&z)) };
    [x, y, z]
}
