//! What a launch is: the emulated device, the launch's shape and arguments,
//! how to run it, and what it reports (the emulator's ground, with the faults).

use std::time::Duration;

/// An emulated device: SMs and what each SM holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Device {
    /// Streaming multiprocessors.
    pub sms: u32,
    /// Threads one SM holds at once.
    pub threads_per_sm: u32,
    /// Blocks one SM holds at once.
    pub blocks_per_sm: u32,
    /// Shared memory one SM holds, in bytes.
    pub shared_bytes_per_sm: u32,
    /// The most shared memory one block may have, in bytes, once the kernel
    /// opts in above 48 KiB (`cudaFuncAttributeMaxDynamicSharedMemorySize`,
    /// which the launcher sets): 64 KiB on a T4, 227 KiB on an H200.
    pub max_shared_per_block: u32,
    /// The most threads one block may have: at most
    /// [`MAX_THREADS_PER_BLOCK`], or a launch is refused.
    pub max_threads_per_block: u32,
    /// 32-bit registers per SM, handed to warps 256 at a time.
    pub registers_per_sm: u32,
    /// Thread-block clusters (compute capability 9.0+): how many fit at
    /// once, as measured; `None` where the device has none.
    pub clusters: Option<&'static ClusterCeilings>,
}

/// Clusters a device holds at once, by blocks per SM and cluster size:
/// `cudaOccupancyMaxActiveClusters` as measured on a GPU, carried as a
/// table because no grouping of SMs into GPCs tried reproduced it
/// (`records/2026-12-01-h200-cluster-probe/README.md`).
#[derive(Debug, PartialEq, Eq)]
pub struct ClusterCeilings {
    /// Rows `(blocks per SM, clusters of 1, 2, ..., 16 that fit)`, blocks per SM ascending.
    pub rows: &'static [(u32, [u32; 16])],
    /// The most blocks per SM a cluster launch counts (more gave the same answer).
    pub max_blocks_per_sm: u32,
    /// The SMs of the GPU it was measured on.
    pub sms: u32,
}

impl ClusterCeilings {
    /// Clusters of `size` blocks that fit at once where an SM holds
    /// `blocks_per_sm` blocks: a measured row, or, between rows, the row
    /// below scaled (an approximation the README names).
    pub fn clusters(&self, blocks_per_sm: u32, size: u32) -> u32 {
        let b = blocks_per_sm.min(self.max_blocks_per_sm);
        if b == 0 || size == 0 || size > MAX_CLUSTER {
            return 0;
        }
        let Some(&(measured, row)) = self.rows.iter().rev().find(|(m, _)| *m <= b) else { return 0 };
        // In 64 bits, and a row measured at 0 blocks per SM holds nothing.
        (row[size as usize - 1] as u64 * b as u64).checked_div(measured as u64).map_or(0, |c| c.min(u32::MAX as u64) as u32)
    }
}

/// `cudaOccupancyMaxActiveClusters` on an NVIDIA H200 (132 SMs, driver
/// 580.159.04), 2026-12-01: `records/2026-12-01-h200-cluster-probe/2026-12-01-h200-probe.txt`.
pub const H200_CLUSTERS: ClusterCeilings = ClusterCeilings {
    rows: &[
        (1, [132, 66, 39, 30, 22, 17, 15, 15, 9, 7, 7, 7, 7, 7, 7, 7]),
        (2, [264, 132, 79, 62, 47, 39, 32, 30, 23, 21, 16, 16, 14, 14, 14, 14]),
        (4, [528, 264, 163, 124, 94, 79, 69, 62, 51, 44, 37, 37, 30, 30, 28, 28]),
        (8, [1056, 528, 327, 248, 193, 163, 139, 124, 102, 88, 81, 74, 67, 65, 58, 58]),
    ],
    max_blocks_per_sm: 8,
    sms: 132,
};

impl Device {
    /// The lesson's Tesla T4: 40 SMs of 1024 threads, 16 blocks and 64 KiB of
    /// shared memory; 4 blocks of 256 threads per SM, so 160 in a cooperative grid.
    pub const T4: Device = Device {
        sms: 40,
        threads_per_sm: 1024,
        blocks_per_sm: 16,
        shared_bytes_per_sm: 64 * 1024,
        max_shared_per_block: 64 * 1024,
        max_threads_per_block: 1024,
        registers_per_sm: 65536,
        clusters: None,
    };

    /// An NVIDIA H200's shape: 132 SMs of 2048 threads, 32 blocks and 228 KiB
    /// of shared memory; 1056 cooperative blocks of 256 threads; clusters as
    /// measured on one ([`H200_CLUSTERS`]).
    pub const H200: Device = Device {
        sms: 132,
        threads_per_sm: 2048,
        blocks_per_sm: 32,
        shared_bytes_per_sm: 228 * 1024,
        max_shared_per_block: 227 * 1024,
        max_threads_per_block: 1024,
        registers_per_sm: 65536,
        clusters: Some(&H200_CLUSTERS),
    };

    /// Blocks of `threads` threads and `shared_bytes` of dynamic shared memory
    /// one SM holds at once (the occupancy API's answer).
    pub fn blocks_per_sm(&self, threads: u32, shared_bytes: u32) -> u32 {
        self.blocks_per_sm_using(threads, shared_bytes, None)
    }

    /// As [`Device::blocks_per_sm`], for a kernel whose threads use
    /// `registers_per_thread` registers each, where that is known.
    pub fn blocks_per_sm_using(&self, threads: u32, shared_bytes: u32, registers_per_thread: Option<u32>) -> u32 {
        if shared_bytes > self.max_shared_per_block {
            return 0;
        }
        // In 64 bits: no block size or register count overflows the products.
        let warps = (threads as u64).div_ceil(32).max(1);
        let by_threads = self.threads_per_sm as u64 / (warps * 32);
        let by_shared = (self.shared_bytes_per_sm as u64).checked_div(shared_bytes as u64).unwrap_or(u64::MAX);
        let by_registers = registers_per_thread.map_or(u64::MAX, |r| {
            let per_warp = (r as u64 * 32).div_ceil(256) * 256;
            (self.registers_per_sm as u64).checked_div(per_warp.saturating_mul(warps)).unwrap_or(u64::MAX)
        });
        by_threads.min(self.blocks_per_sm as u64).min(by_shared).min(by_registers) as u32
    }

    /// Clusters of `size` blocks resident at once where an SM holds
    /// `blocks_per_sm` blocks: the measured table, scaled by this device's
    /// SMs where they differ from the measured GPU's (`--sms`; an
    /// approximation), and never more blocks than the block ceiling. `None`
    /// where the device has no clusters.
    pub fn cluster_ceiling(&self, blocks_per_sm: u32, size: u32) -> Option<u32> {
        let table = self.clusters?;
        let measured = table.clusters(blocks_per_sm, size) as u64 * self.sms as u64 / table.sms.max(1) as u64;
        let by_blocks = (blocks_per_sm as u64 * self.sms as u64).checked_div(size as u64).unwrap_or(0);
        Some(measured.min(by_blocks) as u32)
    }

    /// The most blocks a cooperative launch may use (at most `u32::MAX`).
    pub fn cooperative_capacity(&self, threads: u32, shared_bytes: u32) -> u32 {
        self.blocks_per_sm(threads, shared_bytes).saturating_mul(self.sms)
    }
}

/// A cluster launch's cluster: its blocks (along x), and whether the kernel
/// allows a non-portable size (more than 8; `CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClusterShape {
    /// Blocks per cluster, along x.
    pub blocks: u32,
    /// Whether the kernel allows a non-portable cluster size (more than 8 blocks).
    pub non_portable: bool,
}

/// The most threads in a block on every CUDA GPU (cg-kernel's
/// `cg::MAX_THREADS_PER_BLOCK`, which its block collectives rely on): a
/// [`Device`] that allows more is refused at its first launch.
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;

/// The most blocks in a portable cluster, and in any.
pub const MAX_PORTABLE_CLUSTER: u32 = 8;
/// The most blocks in any cluster (with non-portable sizes allowed).
pub const MAX_CLUSTER: u32 = 16;

/// A kernel argument as the emulator passes it.
#[derive(Clone, Copy, Debug)]
pub enum Arg {
    /// A buffer the kernel only reads: `len` elements of `elem` bytes at `address`.
    In {
        /// The parameter's name.
        name: &'static str,
        /// The address of its first byte.
        address: usize,
        /// Its length, in elements.
        len: usize,
        /// Bytes per element.
        elem: usize,
    },
    /// A buffer the kernel writes; `slot` numbers the launch's `Out` arguments from 0.
    Out {
        /// The parameter's name.
        name: &'static str,
        /// The address of its first byte.
        address: usize,
        /// Its length, in elements.
        len: usize,
        /// Bytes per element.
        elem: usize,
        /// Which `Out` argument of the launch it is, from 0.
        slot: u32,
    },
    /// A number: its bits (a float's `to_bits()`), zero- or sign-extended
    /// to 64; the parameter takes as many of the low bits as it has.
    Value(u64),
}

/// One launch: the kernel, its shape, its arguments.
pub struct Launch<'a> {
    /// The kernel's name.
    pub kernel: &'static str,
    /// Blocks in the grid.
    pub grid: u32,
    /// Threads per block.
    pub threads: u32,
    /// Dynamic shared memory per block, in bytes.
    pub shared_bytes: u32,
    /// Of those, the bytes at the end that the kernel's `dynamic_shared()`
    /// does not address: its `shared_array!`s and, in a cooperative kernel,
    /// the grid collectives', with the padding before them (cg-kernel's
    /// `KernelDef::shared_bytes` less `dynamic_shared_bytes`); 0 where there
    /// are none. An access through `dynamic_shared()` past the rest is named
    /// as past the bytes the kernel's sizing function gave.
    pub shared_tail: u32,
    /// Registers each thread uses (ptxas's count), where known: they limit
    /// the blocks an SM holds as shared memory does.
    pub registers_per_thread: Option<u32>,
    /// As with `CU_LAUNCH_ATTRIBUTE_COOPERATIVE`.
    pub cooperative: bool,
    /// The kernel is declared `#[kernel(cooperative)]`: it may call `grid.sync()`.
    pub grid_sync: bool,
    /// As with `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`: blocks per cluster, along x.
    pub cluster: Option<ClusterShape>,
    /// The kernel is declared `#[kernel(cluster)]`: it uses `this_cluster()`.
    pub cluster_kernel: bool,
    /// One argument per parameter, in order.
    pub args: &'a [Arg],
    /// Runs the kernel for the calling emulated thread with these arguments.
    pub entry: &'a (dyn Fn(&[Arg]) + Sync),
    /// Where to record each block's course through the launch, if anywhere.
    pub trace: Option<&'a std::sync::Mutex<Vec<BlockTrace>>>,
}

/// One block's course through a launch, as a trace records it: where it ran
/// and when it started, reached its first `grid.sync()`, left it, and
/// ended. On a GPU: the SM (`%smid`) and nanoseconds of `%globaltimer`. On
/// the emulator: the emulated SM and a logical time, the memory accesses
/// each block made, with resident blocks advancing together (`crate::timeline`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockTrace {
    /// The block's index in the grid.
    pub block: u32,
    /// The SM it ran on (`%smid`); on the emulator, the emulated SM.
    pub place: u32,
    /// When it started.
    pub start: u64,
    /// When it reached its first `grid.sync()`.
    pub arrive: Option<u64>,
    /// When it left that barrier.
    pub leave: Option<u64>,
    /// When it reached its last cluster barrier, and left it (cluster launches).
    pub cluster_arrive: Option<u64>,
    /// When it left its last cluster barrier.
    pub cluster_leave: Option<u64>,
    /// When it ended.
    pub end: Option<u64>,
}

/// How the emulator runs a launch.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Run each block's threads in an order drawn from this seed, preempting
    /// them at random, instead of in thread order.
    pub seed: Option<u64>,
    /// How long a launch may go without progress: no block ending and no
    /// barrier (a block's, a cluster's, the grid's) completing. It is
    /// counted in the emulator's steps (memory accesses), as many as one
    /// worker of an idle machine makes in this time, so that a loaded
    /// machine gives the same verdict: a block may make that many between
    /// its barriers, and the launch that many in polls alone (atomics that
    /// keep returning the same value) with no other access between. A launch
    /// may run as long as it keeps making progress, however slow the
    /// machine; past the budget it stops with
    /// [`Fault::Timeout`](super::fault::Fault::Timeout), as it does when it
    /// makes no step at all for this wall time (a thread that computes
    /// without touching memory). A block whose barriers keep completing
    /// stops after ten budgets of work in all, counted the same way
    /// ([`Fault::BarrierLoop`](super::fault::Fault::BarrierLoop)).
    pub timeout: Duration,
    /// Worker threads (at most one per block).
    pub workers: usize,
    /// Hand an ordinary launch a grid workspace too, as the H200's driver
    /// (580.159.04) does once its context has made a cooperative launch: a
    /// `grid.sync()` under an ordinary launch then waits for blocks that may
    /// never start, as on that GPU, instead of failing at once.
    pub ordinary_launches_get_a_workspace: bool,
    /// Slows the emulator to stand for a loaded machine (tests): a worker
    /// pauses this long once every 4,096 memory accesses it runs (more
    /// often in a seeded run), where it checks whether to stop.
    pub throttle: Option<Duration>,
    /// Called with the kernel's name and the fault when a launch the
    /// watchdog stopped does not stop within 2 s: a thread runs without
    /// touching memory or waiting, which nothing can interrupt, and the
    /// launch cannot return while it runs. The host's `Gpu` prints the fault
    /// and ends the process here. Without one, or if it returns, the launch
    /// waits for the thread.
    pub on_runaway: Option<fn(&str, &super::fault::Fault)>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            seed: None,
            timeout: Duration::from_secs(60),
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            ordinary_launches_get_a_workspace: false,
            throttle: None,
            on_runaway: None,
        }
    }
}

/// What a finished launch did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchStats {
    /// The most blocks running at once.
    pub max_resident: u32,
    /// Worker threads.
    pub workers: usize,
    /// The most atomic updates (`atomic_add` and the rest, not atomic loads)
    /// that any one word of the launch's `Out` buffers received, from every
    /// block: a GPU applies atomics on one address one after another, so
    /// this is the longest chain of them the launch made.
    pub most_atomics_on_one_word: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each of these panicked before 2026-12-04 (an overflowing product or
    /// a division by zero): a device or table of any shape gets an answer.
    #[test]
    fn absurd_devices_and_tables_get_answers_not_panics() {
        let wide = Device { sms: u32::MAX, threads_per_sm: u32::MAX, blocks_per_sm: u32::MAX, shared_bytes_per_sm: u32::MAX, ..Device::H200 };
        assert_eq!(wide.cooperative_capacity(32, 0), u32::MAX);
        assert_eq!(Device::H200.blocks_per_sm_using(u32::MAX, 0, Some(u32::MAX)), 0);
        assert_eq!(Device::T4.cooperative_capacity(256, 0), 160);
        let zero_row = ClusterCeilings { rows: &[(0, [1; 16])], max_blocks_per_sm: 8, sms: 1 };
        assert_eq!(zero_row.clusters(4, 2), 0);
        let big = ClusterCeilings { rows: &[(1, [u32::MAX; 16])], max_blocks_per_sm: 8, sms: 1 };
        assert_eq!(big.clusters(8, 1), u32::MAX);
        assert_eq!(H200_CLUSTERS.clusters(8, 4), 248);
    }
}
