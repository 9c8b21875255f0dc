//! The level between block and grid: a thread-block cluster (`cg::cluster_group`,
//! compute capability 9.0 and later).
//!
//! A cluster is up to 8 blocks (16 where the kernel allows a non-portable
//! size) that the GPU runs at once on one GPC. They share a hardware barrier,
//! [`ClusterGroup::sync`], and each other's shared memory,
//! [`ClusterGroup::map_shared_rank`]. Only a kernel declared
//! `#[kernel(cluster)]` has them: the host then launches it only with a
//! cluster dimension, from the sm_90 module, on a GPU that has clusters.

use super::block::{Dim3, this_thread_block};
use crate::arch;
use crate::mem::{DynamicShared, Word};
use core::marker::PhantomData;

/// The blocks of this thread's cluster (`cg::cluster_group`).
///
/// `L` says whether the kernel is declared `#[kernel(cluster)]`:
/// [`Clustered`] (the default) has every method; [`Unclustered`], what
/// [`this_cluster`] returns outside such a kernel, has none, so a cluster
/// barrier in a kernel the host may launch without clusters does not compile.
///
/// A helper that uses the cluster takes `&ClusterGroup` (the declared one),
/// so only a `#[kernel(cluster)]` kernel can call it:
/// ```no_run
/// use cg_kernel::cg::{ClusterGroup, ThreadBlock};
/// use cg_kernel::mem::DynamicShared;
///
/// /// Rank 0's sum of word `slot` of every block's shared memory.
/// fn gather(cluster: &ClusterGroup, block: &ThreadBlock, totals: DynamicShared<f32>, slot: usize) -> f32 {
///     cluster.sync(); // every block's total is written and visible
///     let mut sum = 0.0;
///     if cluster.block_rank() == 0 && block.thread_rank() == 0 {
///         for r in 0..cluster.num_blocks() {
///             // SAFETY: every block wrote `slot` before the barrier, and waits at the next one.
///             sum += unsafe { cluster.map_shared_rank(totals, r).read(slot) };
///         }
///     }
///     cluster.sync(); // no block leaves while rank 0 reads its memory
///     sum
/// }
/// ```
/// `this_cluster()` outside such a kernel has no methods:
/// ```compile_fail,E0277
/// fn not_declared_cluster() {
///     cg_kernel::cg::this_cluster().sync();
/// }
/// ```
pub struct ClusterGroup<L = Clustered> {
    _launch: PhantomData<L>,
}

/// A cluster whose kernel is declared `#[kernel(cluster)]`: launched with a cluster dimension.
pub struct Clustered;
/// A cluster named outside a `#[kernel(cluster)]` kernel: nothing to call on it.
pub struct Unclustered;

/// The kernels whose cluster may be used: only [`Clustered`].
#[diagnostic::on_unimplemented(
    message = "this_cluster() needs a kernel declared `#[kernel(cluster)]`",
    label = "this cluster comes from `this_cluster()` outside a `#[kernel(cluster)]` kernel",
    note = "a cluster exists only when the host launches the kernel with a cluster dimension (compute capability 9.0+), which \
            `#[kernel(cluster)]` makes the only way to launch it",
    note = "declare the kernel `#[kernel(cluster)]` (with `cooperative` too if it calls grid.sync()) and call `this_cluster()` in its body"
)]
pub trait InCluster {}
impl InCluster for Clustered {}

/// This thread's cluster (`cg::this_cluster()`). In the body of a kernel
/// declared `#[kernel(cluster)]` this name is [`ClusterGroup<Clustered>`];
/// elsewhere it is [`ClusterGroup<Unclustered>`], which has no methods.
#[inline(always)]
pub fn this_cluster() -> ClusterGroup<Unclustered> {
    ClusterGroup { _launch: PhantomData }
}

/// What `#[kernel(cluster)]` puts in scope in its kernel's body, in place of
/// [`this_cluster`] and `cg::this_cluster`.
#[doc(hidden)]
pub mod cluster_kernel {
    use super::*;

    /// `cg::this_cluster()` in a kernel declared `#[kernel(cluster)]`.
    ///
    /// # Safety
    /// Called only in the body of a `#[kernel(cluster)]` kernel (the macro
    /// writes the call), which the host launches only with a cluster dimension.
    #[inline(always)]
    pub unsafe fn this_cluster() -> ClusterGroup<Clustered> {
        ClusterGroup { _launch: PhantomData }
    }

    /// The `cg` module, with [`this_cluster`] in place of the plain one.
    pub mod cg {
        pub use super::this_cluster;
        pub use crate::cg::*;
    }
}

/// `#[kernel(cooperative, cluster)]`'s scope: both swaps.
#[doc(hidden)]
pub mod cooperative_cluster_kernel {
    pub use super::cluster_kernel::this_cluster;
    pub use crate::cg::cooperative_kernel::this_grid;

    /// The `cg` module, with both in place of the plain ones.
    pub mod cg {
        pub use super::{this_cluster, this_grid};
        pub use crate::cg::*;
    }

    /// The same scope in the kernel's plain GPU entry.
    pub mod launched {
        pub use crate::cg::cluster_kernel::this_cluster;
        pub use crate::cg::cooperative_kernel::launched::this_grid;

        /// The `cg` module, with both in place of the plain ones.
        pub mod cg {
            pub use super::{this_cluster, this_grid};
            pub use crate::cg::*;
        }
    }

    /// The same scope in the kernel's watched entry.
    pub mod watched {
        pub use crate::cg::cluster_kernel::this_cluster;
        pub use crate::cg::cooperative_kernel::watched::this_grid;

        /// The `cg` module, with both in place of the plain ones.
        pub mod cg {
            pub use super::{this_cluster, this_grid};
            pub use crate::cg::*;
        }
    }
}

/// This thread's arrival at the cluster barrier, to wait on
/// ([`ClusterGroup::barrier_wait`]); C++: `cluster_group::arrival_token`.
#[must_use = "a thread that arrives must wait before it arrives again: pass this to barrier_wait()"]
pub struct ArrivalToken(());

impl<L> ClusterGroup<L> {
    /// Waits for every thread of the cluster; their writes before it, to
    /// their own or another block's shared memory or to global memory, are
    /// visible to the cluster after it (`cluster.sync()`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn sync(&self)
    where
        L: InCluster,
    {
        emu_call!("cluster.sync()");
        // SAFETY: waited on at once.
        let token = unsafe { self.barrier_arrive() };
        self.barrier_wait(token);
    }

    /// The first half of [`sync`](Self::sync): this thread has arrived and
    /// releases its writes, and may work on before it waits (`cluster.barrier_arrive()`).
    ///
    /// Unsafe because PTX leaves a second arrival before the wait undefined,
    /// and no type can stop one: the token may be dropped or forgotten, and
    /// `this_cluster()` hands out any number of handles. [`sync`](Self::sync)
    /// is the safe whole. Arriving twice without safe code:
    /// ```compile_fail,E0133
    /// fn arrives(cluster: &cg_kernel::cg::ClusterGroup) {
    ///     let _token = cluster.barrier_arrive();
    /// }
    /// ```
    ///
    /// # Safety
    /// This thread passes the returned token to [`barrier_wait`](Self::barrier_wait)
    /// before it arrives at this cluster's barrier again in any way
    /// (`barrier_arrive`, [`sync`](Self::sync), a helper that calls either).
    /// The emulator names a second arrival (`cg-lesson --emulate`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn barrier_arrive(&self) -> ArrivalToken
    where
        L: InCluster,
    {
        emu_call!("cluster.barrier_arrive()");
        // SAFETY: every thread of a `#[kernel(cluster)]` kernel runs in a
        // cluster, and the caller waits on this arrival before the next.
        unsafe { arch::barrier_cluster_arrive_release() };
        ArrivalToken(())
    }

    /// The second half: waits until every thread of the cluster has arrived
    /// (`cluster.barrier_wait(std::move(token))`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn barrier_wait(&self, token: ArrivalToken)
    where
        L: InCluster,
    {
        emu_call!("cluster.barrier_wait()");
        let ArrivalToken(()) = token;
        // SAFETY: the token proves this thread arrived in this phase.
        unsafe { arch::barrier_cluster_wait_acquire() };
    }

    /// This block's rank in the cluster, x fastest (`cluster.block_rank()`).
    #[inline(always)]
    pub fn block_rank(&self) -> u32
    where
        L: InCluster,
    {
        arch::cluster_ctarank()
    }

    /// Blocks in the cluster (`cluster.num_blocks()`).
    #[inline(always)]
    pub fn num_blocks(&self) -> u32
    where
        L: InCluster,
    {
        arch::cluster_nctarank()
    }

    /// This block's index in the cluster (`cluster.block_index()`).
    #[inline(always)]
    pub fn block_index(&self) -> Dim3
    where
        L: InCluster,
    {
        arch::cluster_ctaid().into()
    }

    /// The cluster's dimensions in blocks (`cluster.dim_blocks()`).
    #[inline(always)]
    pub fn dim_blocks(&self) -> Dim3
    where
        L: InCluster,
    {
        arch::cluster_nctaid().into()
    }

    /// This thread's rank in the cluster (`cluster.thread_rank()`).
    #[inline(always)]
    pub fn thread_rank(&self) -> u32
    where
        L: InCluster,
    {
        let block = this_thread_block();
        self.block_rank() * block.num_threads() + block.thread_rank()
    }

    /// Threads in the cluster (`cluster.num_threads()`).
    #[inline(always)]
    pub fn num_threads(&self) -> u32
    where
        L: InCluster,
    {
        self.num_blocks() * this_thread_block().num_threads()
    }

    /// The same shared memory in the cluster's block of rank `rank`
    /// (`cluster.map_shared_rank(ptr, rank)`): distributed shared memory.
    /// A rank past the cluster traps on the GPU (C++ leaves it undefined)
    /// and is a named fault on the emulator.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn map_shared_rank<T: Word>(&self, shared: DynamicShared<T>, rank: u32) -> ClusterShared<T>
    where
        L: InCluster,
    {
        const { assert!(size_of::<T>() == 4, "distributed shared memory is read and written in 4-byte words here") };
        #[cfg(target_arch = "nvptx64")]
        {
            if rank >= self.num_blocks() {
                arch::trap();
            }
            ClusterShared { base: shared.base() as *const u32, rank, _t: PhantomData }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            cg_emulator::thread::check_cluster_rank(rank);
            ClusterShared { first: shared.first(), rank, _t: PhantomData }
        }
    }
}

/// Another block's dynamic shared memory, as [`ClusterGroup::map_shared_rank`] maps it.
#[derive(Clone, Copy)]
pub struct ClusterShared<T> {
    #[cfg(target_arch = "nvptx64")]
    base: *const u32,
    /// The array's element 0, in elements from the memory's start.
    #[cfg(not(target_arch = "nvptx64"))]
    first: usize,
    rank: u32,
    _t: PhantomData<*mut T>,
}

impl<T: Word> ClusterShared<T> {
    /// The block this view reads and writes: its rank in the cluster.
    #[inline(always)]
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// Element `i` of that block's shared memory.
    ///
    /// # Safety
    /// `i` is inside its dynamic shared memory; a cluster barrier orders this
    /// read after that block's writes of the element, and that block does not
    /// exit before this read (a `cluster.sync()` after it). The emulator
    /// reports each failing as a fault.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn read(self, i: usize) -> T {
        #[cfg(target_arch = "nvptx64")]
        {
            // SAFETY: the caller's contract; `map_shared_rank` checked the rank.
            unsafe { T::from_bits64(arch::ld_shared_cluster_b32(arch::map_shared_cluster(self.base.add(i), self.rank)) as u64) }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            T::from_bits64(cg_emulator::thread::cluster_shared_read(self.rank, self.first.saturating_add(i), size_of::<T>()))
        }
    }

    /// Writes element `i` of that block's shared memory.
    ///
    /// # Safety
    /// As [`read`](Self::read), with every other access of the element.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn write(self, i: usize, v: T) {
        #[cfg(target_arch = "nvptx64")]
        {
            // SAFETY: the caller's contract.
            unsafe { arch::st_shared_cluster_b32(arch::map_shared_cluster(self.base.add(i), self.rank), v.to_bits64() as u32) }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            cg_emulator::thread::cluster_shared_write(self.rank, self.first.saturating_add(i), size_of::<T>(), v.to_bits64())
        }
    }
}
