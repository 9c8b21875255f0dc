//! What went wrong in an emulated launch, named the way a learner can act on:
//! which thread, where in the source, what it did, and what was missing.
//! The words a report is made of are `site.rs`'s, and what a stopped launch
//! saw `stall.rs`'s; both are re-exported here.

pub use crate::site::{Access, PartialBarrier, Site, ThreadId, Touch};
pub(crate) use crate::site::{count, numbered, ranges};
pub use crate::stall::{Doing, Running, Stall};
use std::fmt;

/// Why an emulated launch failed.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Fault {
    /// The launch's shape is one the device cannot run (`CUDA_ERROR_INVALID_VALUE`).
    InvalidValue(String),
    /// `CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE`.
    CooperativeLaunchTooLarge {
        /// Blocks asked for.
        requested: u32,
        /// Blocks that fit at once.
        max: u32,
    },
    /// A kernel parameter or the dynamic shared memory was read or written outside its bounds.
    OutOfBounds {
        /// The thread that did it.
        thread: ThreadId,
        /// Where in the kernel's source.
        site: Site,
        /// The buffer's name.
        buffer: String,
        /// The element's index.
        index: usize,
        /// Its length, in elements.
        len: usize,
        /// A read or a write.
        access: Access,
        /// What the index suggests, where something does.
        note: Option<String>,
    },
    /// A read of memory that nothing wrote since it was allocated
    /// uninitialized (`cudaMalloc` without a memset): compute-sanitizer's
    /// initcheck names it on a GPU, where the read returns whatever the
    /// allocator left there.
    Uninitialized {
        /// The thread that did it.
        thread: ThreadId,
        /// Where in the kernel's source.
        site: Site,
        /// The buffer's name.
        buffer: &'static str,
        /// The element's index.
        index: usize,
    },
    /// A read (or an atomic, which reads first) of dynamic shared memory
    /// that no thread of the block had written: a block's shared memory
    /// starts with whatever an earlier block left there.
    SharedUninitialized {
        /// The thread that did it.
        thread: ThreadId,
        /// Where in the kernel's source.
        site: Site,
        /// The element's index.
        index: usize,
        /// Its size in bytes.
        size: usize,
        /// A read, or an atomic.
        access: Access,
    },
    /// A vector load from an address not aligned to its size.
    Misaligned {
        /// The thread that did it.
        thread: ThreadId,
        /// Where in the kernel's source.
        site: Site,
        /// The buffer's name.
        buffer: &'static str,
        /// The element's index.
        index: usize,
        /// The alignment the access needed, in bytes.
        alignment: usize,
    },
    /// Two threads of a block touched the same word, one of them writing, with no barrier between.
    Race {
        /// The word, as its buffer and index.
        word: String,
        /// The earlier access.
        first: Touch,
        /// The later access, with no barrier between it and the first.
        second: Touch,
        /// A warp barrier between the two that did not cover the second thread.
        partial: Option<PartialBarrier>,
    },
    /// Two blocks touched the same word of a buffer, one of them writing, with no `grid.sync()` between.
    BlockRace {
        /// The word, as its buffer and index.
        word: String,
        /// The block that wrote.
        writer: u32,
        /// Where it wrote.
        writer_site: Site,
        /// The other block.
        other: u32,
        /// Where the other block did it.
        other_site: Site,
        /// What the other block did.
        other_access: Access,
        /// The buffer and the grid's block count, where both writes came from
        /// one line into a buffer of one element per block.
        per_block: Option<(String, u32)>,
    },
    /// A block read or wrote a word of a buffer with a plain access, and
    /// another block updated it atomically, with no `grid.sync()` between.
    BlockAtomicRace {
        /// The word, as its buffer and index.
        word: String,
        /// The block that updated it atomically.
        atomic: u32,
        /// Where it did.
        atomic_site: Site,
        /// The block that read or wrote it.
        other: u32,
        /// Where it did.
        other_site: Site,
        /// A read or a write.
        other_access: Access,
    },
    /// Two blocks updated one word atomically with no `grid.sync()` between,
    /// one of them with block scope (`Scope::Block`, `atomicAdd_block`), which
    /// is atomic only among the threads of one block.
    AtomicScope {
        /// The word, as its buffer and index.
        word: String,
        /// The block whose atomic had block scope.
        narrow: u32,
        /// Where it made it.
        narrow_site: Site,
        /// The other block.
        other: u32,
        /// Where its atomic was.
        other_site: Site,
    },
    /// Two blocks of a cluster touched one word of a block's shared memory
    /// (one of them the owner, perhaps), one writing, with no cluster barrier between.
    ClusterRace {
        /// The word, as its buffer and index.
        word: String,
        /// The earlier access.
        first: Touch,
        /// The later access, with no barrier between it and the first.
        second: Touch,
    },
    /// A block read or wrote the shared memory of a block of its cluster that
    /// exited without a cluster barrier after the access.
    ClusterBlockExited {
        /// The thread that did it.
        thread: ThreadId,
        /// Where in the kernel's source.
        site: Site,
        /// The block whose shared memory it was.
        owner: u32,
        /// The owner's rank in the cluster.
        rank: u32,
        /// A read or a write.
        access: Access,
    },
    /// `map_shared_rank` with a rank past the cluster.
    ClusterRankOutOfRange {
        /// The thread that did it.
        thread: ThreadId,
        /// Where in the kernel's source.
        site: Site,
        /// The rank asked for.
        rank: u32,
        /// The cluster's size, in blocks.
        size: u32,
    },
    /// `barrier_wait()` with no `barrier_arrive()` before it in this phase,
    /// or a second `barrier_arrive()` before the wait.
    ClusterBarrierMisuse {
        /// The thread that did it.
        thread: ThreadId,
        /// Where in the kernel's source.
        site: Site,
        /// What was wrong.
        why: &'static str,
    },
    /// `CUDA_ERROR_INVALID_CLUSTER_SIZE`: a cluster the device or the grid cannot have.
    InvalidClusterSize(String),
    /// The threads of a block met at one `block.sync()` from different places in the source.
    DivergentBarrier {
        /// The block whose threads met apart.
        block: u32,
        /// Where the threads met, as sites.
        what: String,
    },
    /// Every thread that has not finished waits for something that cannot happen.
    Deadlock(String),
    /// A grid collective that some threads of a block made after others had
    /// exited without it.
    CollectiveSkipped {
        /// The block.
        block: u32,
        /// The collective, and where it was called.
        site: Site,
        /// The threads that exited, as ranges.
        exited: String,
    },
    /// Blocks met at one grid barrier from different grid collectives (or
    /// one from a collective and one from `grid.sync()`), or from one
    /// collective with different types, operators or sizes.
    CollectiveMismatch {
        /// The kernel.
        kernel: &'static str,
        /// The first block at the barrier, and where it called.
        first: (u32, Site),
        /// A block that called something else, and where.
        other: (u32, Site),
    },
    /// `grid.sync()` in a kernel that was not launched cooperatively.
    GridSyncNotCooperative {
        /// The thread that did it.
        thread: ThreadId,
        /// Where in the kernel's source.
        site: Site,
    },
    /// `grid.sync()` in a kernel not declared `#[kernel(cooperative)]` (reached
    /// around the compile-time guard).
    GridSyncUndeclared {
        /// The thread that did it.
        thread: ThreadId,
        /// Where in the kernel's source.
        site: Site,
        /// The kernel's name.
        kernel: &'static str,
    },
    /// A warp collective named lanes it cannot: the caller itself, or a shuffle source, outside its mask.
    BadMask {
        /// The thread that did it.
        thread: ThreadId,
        /// Where in the kernel's source.
        site: Site,
        /// What was wrong.
        why: String,
    },
    /// A barrier across GPUs where this GPU waited in vain for another.
    MultiGridTimeout {
        /// The thread that did it.
        thread: ThreadId,
        /// Where in the kernel's source.
        site: Site,
        /// The GPU that was waited for.
        rank: u32,
        /// How long it waited, in seconds.
        seconds: f64,
    },
    /// A kernel used an operation the emulator does not model.
    NotEmulated {
        /// The thread that did it.
        thread: ThreadId,
        /// Where in the kernel's source.
        site: Site,
        /// What was done.
        what: &'static str,
    },
    /// A thread panicked (an overflow, an index out of a Rust array's bounds...).
    Panic {
        /// The thread that did it.
        thread: ThreadId,
        /// The panic's message.
        message: String,
    },
    /// No block ended and no barrier completed for `seconds`, the launch's
    /// timeout (`Options::timeout`): what was running then.
    Timeout {
        /// How long nothing happened, in seconds.
        seconds: f64,
        /// What the emulator saw when it stopped the launch.
        stall: Box<Stall>,
    },
    /// Barriers kept completing, but a block did ten timeouts' budget of
    /// work (`seconds` of it on an idle machine, `crate::watch::BACKSTOP`)
    /// and none ended: the backstop against a loop around a barrier.
    BarrierLoop {
        /// Ten timeouts, the work a block may do over its life, in seconds of an idle worker's steps.
        seconds: f64,
        /// What the emulator saw when it stopped the launch.
        stall: Box<Stall>,
    },
    /// The emulator could not set up the launch (memory for stacks, say).
    Resources(String),
}

impl Fault {
    /// The CUDA driver's error for the same failure on a GPU, where a GPU reports one
    /// (a race or a deadlock gives no error there: a wrong answer or a hang).
    pub fn driver_name(&self) -> Option<&'static str> {
        match self {
            Fault::InvalidValue(_) => Some("CUDA_ERROR_INVALID_VALUE"),
            Fault::CooperativeLaunchTooLarge { .. } => Some("CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"),
            Fault::InvalidClusterSize(_) => Some("CUDA_ERROR_INVALID_CLUSTER_SIZE"),
            Fault::ClusterRankOutOfRange { .. } => Some("CUDA_ERROR_LAUNCH_FAILED"),
            Fault::OutOfBounds { .. } => Some("CUDA_ERROR_ILLEGAL_ADDRESS"),
            Fault::Misaligned { .. } => Some("CUDA_ERROR_MISALIGNED_ADDRESS"),
            Fault::Panic { .. } | Fault::GridSyncNotCooperative { .. } | Fault::GridSyncUndeclared { .. } => Some("CUDA_ERROR_LAUNCH_FAILED"),
            _ => None,
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::InvalidValue(why) => write!(f, "CUDA_ERROR_INVALID_VALUE: {why}"),
            Fault::CooperativeLaunchTooLarge { requested, max } => {
                write!(f, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: {requested} blocks requested, {max} fit")
            }
            Fault::OutOfBounds { thread, site, buffer, index, len, access, note } => {
                let verb = access.past();
                write!(f, "{thread} {verb} {buffer}[{index}], past its {}, at {site}", count(*len, "element"))?;
                match note {
                    Some(note) => write!(f, " ({note})"),
                    None => Ok(()),
                }
            }
            Fault::Uninitialized { thread, site, buffer, index } => write!(
                f,
                "{thread} read {buffer}[{index}] at {site}, which nothing has written since it was allocated uninitialized (gpu.uninit, cudaMalloc without a memset): on a GPU it holds whatever the allocator left there, and compute-sanitizer's initcheck names the read; write every element before reading it, or allocate it zeroed (gpu.zeros)"
            ),
            Fault::SharedUninitialized { thread, site, index, size, access } => {
                let (verb, fix) = match access {
                    Access::Atomic => (
                        "atomically updated",
                        "an accumulator needs its start written first: one thread sets it (to 0 for a sum), then block.sync(), then the atomics",
                    ),
                    _ => ("read", "write it before reading it, with a barrier between where another thread writes it"),
                };
                write!(
                    f,
                    "{thread} {verb} dynamic shared memory[{index}] ({size}-byte elements) at {site}, which no thread of block {} had written: a block's shared memory starts with whatever an earlier block left there (on a GPU, a value that may change from run to run; the emulator's starts at 0, which would hide the mistake); {fix}",
                    thread.block
                )
            }
            Fault::Misaligned { thread, site, buffer, index, alignment } => {
                write!(f, "{thread} made a {alignment}-byte load at {buffer}[{index}], whose address is not a multiple of {alignment}, at {site}")
            }
            Fault::Race { word, first, second, partial: None }
                if first.access == Access::Write && second.access == Access::Write && first.site == second.site =>
            {
                // Two lanes of one warp: the word may be the block's or a tile's own (a tile's total).
                let one = match first.thread.thread / 32 == second.thread.thread / 32 {
                    true => {
                        "have one thread write it: `if tile.thread_rank() == 0` where each tile writes a word of its own (a tile's total; `if block.thread_rank() == 0` would leave the other tiles' words unwritten), `if block.thread_rank() == 0` where the block writes one word"
                    }
                    false => "have one thread write it (`if block.thread_rank() == 0`)",
                };
                write!(
                    f,
                    "data race on {word}: {first}, and {second}: every thread that runs this line writes the same word, so the last to write wins (a barrier between them would only decide which); {one}"
                )
            }
            Fault::Race { word, first, second, partial: None } => write!(f, "data race on {word}: {first}, and {second}, with no barrier between"),
            Fault::Race { word, first, second, partial: Some(p) } => {
                write!(f, "data race on {word}: {first}, and {second}; {}", p.reaching(second.thread.thread))
            }
            Fault::BlockRace { word, writer, writer_site, other, other_site, per_block: Some((buffer, blocks)), .. } => write!(
                f,
                "data race on {word}: block {writer} wrote it at {writer_site} and block {other} wrote it too at {other_site}: {buffer} holds one element per block of this grid of {blocks}, and every block wrote the same one; index it by the block (`block.group_index().x`), not by a thread's rank within its block"
            ),
            Fault::BlockRace { word, writer, writer_site, other, other_site, other_access, per_block: None } => match other_access {
                Access::Read => write!(
                    f,
                    "data race on {word}: block {writer} wrote it at {writer_site} and block {other} read it at {other_site} with no grid.sync() between (blocks see each other's writes only after one)"
                ),
                Access::Write | Access::Atomic => write!(
                    f,
                    "data race on {word}: block {writer} wrote it at {writer_site} and block {other} wrote it too at {other_site}: more than one block writes this one word, so the last to write wins (a barrier between them would only decide which); have one block write it"
                ),
            },
            Fault::BlockAtomicRace { word, atomic, atomic_site, other, other_site, other_access } => write!(
                f,
                "data race on {word}: block {atomic} atomically updated it at {atomic_site} and block {other} {} it at {other_site} with no grid.sync() between: an atomic is atomic only with other atomics, so a plain access of a word other blocks update atomically races with them; update it atomically too, or move the plain access past a grid.sync() (or into the next launch)",
                other_access.past()
            ),
            Fault::AtomicScope { word, narrow, narrow_site, other, other_site } => write!(
                f,
                "data race on {word}: block {narrow} atomically updated it with block scope at {narrow_site} and block {other} atomically updated it too at {other_site}, with no grid.sync() between: a block-scoped atomic (Scope::Block, atomicAdd_block) is atomic only among the threads of its own block; use Scope::Device (what atomic_add is) for a word that several blocks update"
            ),
            Fault::ClusterRace { word, first, second } => write!(
                f,
                "data race on {word}: {first}, and {second}, with no cluster.sync() between (blocks see each other's shared memory as it stood at the cluster's last barrier)"
            ),
            Fault::ClusterBlockExited { thread, site, owner, rank, access } => write!(
                f,
                "{thread} {} block {owner}'s shared memory (cluster rank {rank}) at {site}, and block {owner} exited without a cluster.sync() after it: a block's shared memory is gone once it exits, so every block must reach a cluster.sync() after the cluster's last access to its memory (the second cluster.sync())",
                access.past()
            ),
            Fault::ClusterRankOutOfRange { thread, site, rank, size } => write!(
                f,
                "{thread} mapped the shared memory of cluster rank {rank} at {site}, but the cluster has {} (ranks 0-{}); on a GPU this traps",
                count(*size as usize, "block"),
                size.saturating_sub(1)
            ),
            Fault::ClusterBarrierMisuse { thread, site, why } => write!(f, "{thread} at {site}: {why}"),
            Fault::InvalidClusterSize(why) => write!(f, "CUDA_ERROR_INVALID_CLUSTER_SIZE: {why}"),
            Fault::DivergentBarrier { block, what } => write!(f, "block {block} met at one block.sync() from different places: {what}"),
            Fault::Deadlock(what) => write!(f, "deadlock: {what}"),
            Fault::CollectiveSkipped { block, site, exited } => write!(
                f,
                "block {block}: threads {exited} exited without calling {site}, which the rest of the block called: every thread of every block must make each grid collective call, so keep it out of branches that some threads skip (on a GPU the block would combine values its missing threads never gave)"
            ),
            Fault::CollectiveMismatch { kernel, first, other } => write!(
                f,
                "in {kernel}, block {} called {} and block {} called {}, which met at one grid barrier: every block must make the same grid collectives, with the same types, operator and sizes, in the same order (on a GPU the blocks would combine the words of different calls, or wait at barriers that never complete)",
                first.0, first.1, other.0, other.1
            ),
            Fault::GridSyncNotCooperative { thread, site } => {
                write!(
                    f,
                    "{thread} called {site}, but the launch was not cooperative, so the grid cannot synchronize (is_valid() is false): launch a kernel declared #[kernel(cooperative)] through the host's CooperativeKernel, which launches it only that way"
                )
            }
            Fault::GridSyncUndeclared { thread, site, kernel } => write!(
                f,
                "{thread} called {site}, but {kernel} is not declared #[kernel(cooperative)], so the host may launch it the ordinary way, where the barrier cannot complete: declare it #[kernel(cooperative)]"
            ),
            Fault::BadMask { thread, site, why } => write!(f, "{thread} at {site}: {why}"),
            Fault::MultiGridTimeout { thread, site, rank, seconds } => write!(
                f,
                "GPU {rank} waited {seconds} s at the barrier across GPUs ({thread}, at {site}) for a GPU that never arrived: every GPU's grid must be launched and running at once"
            ),
            Fault::NotEmulated { thread, site, what } => {
                write!(f, "{thread} used {what} at {site}, which the emulator does not model (blocks talking through atomics): run this kernel on a GPU")
            }
            Fault::Panic { thread, message } => write!(f, "{thread} panicked: {message}"),
            Fault::Timeout { seconds, stall } => {
                write!(
                    f,
                    "no block ended and no barrier completed within the {seconds} s timeout (counted in the emulator's steps of work, not by the clock)"
                )?;
                if stall.running.is_empty() && stall.unstoppable.is_empty() {
                    return write!(f, ", and no block was running{}", stall.tally(" ("));
                }
                if stall.polls_only {
                    return write!(
                        f,
                        ", while {}{}: blocks waiting for a word that no block changes (a flag never set, or set by a block that cannot start until the waiting ones end: a block may wait only for blocks resident with it, as every block of a cooperative launch is)",
                        stall.threads(),
                        stall.tally(" (")
                    );
                }
                write!(
                    f,
                    ", while {}{}: an endless loop (an index that never reaches its bound, or steps by 0?), or far more work between barriers than the lesson's kernels do (a loop that steps by 1 where it should stride?)",
                    stall.threads(),
                    stall.tally(" (")
                )
            }
            Fault::BarrierLoop { seconds, stall } => {
                let mut barriers = Vec::new();
                let mut around = None;
                if stall.grid_barriers > 0 {
                    barriers.push(count(stall.grid_barriers as usize, "grid barrier"));
                    around = Some(stall.grid_site.map_or_else(|| "grid.sync()".to_string(), |s| s.to_string()));
                }
                if stall.cluster_barriers > 0 {
                    barriers.push(count(stall.cluster_barriers as usize, "cluster barrier"));
                    around = around.or_else(|| Some(stall.cluster_site.map_or_else(|| "cluster.sync()".to_string(), |s| s.to_string())));
                }
                // The running blocks that have completed block barriers: those that may loop around one.
                let looping: Vec<&Running> = stall.running.iter().filter(|r| r.barriers > 0).collect();
                if stall.block_barriers > 0 {
                    barriers.push(count(stall.block_barriers as usize, "block barrier"));
                    if !looping.is_empty() {
                        let last = looping.iter().find_map(|r| r.last_barrier);
                        around = around.or_else(|| Some(last.map_or_else(|| "block.sync()".to_string(), |s| s.to_string())));
                    }
                }
                let blocks = match looping.len() {
                    0 => String::new(),
                    1 => format!(" in block {}", looping[0].thread.block),
                    _ => format!(" in blocks {}", ranges(looping.iter().map(|r| r.thread.block))),
                };
                // Barriers completed before the last block ended count in the block's work, not here.
                let what = if barriers.is_empty() { "barriers".to_string() } else { barriers.join(" and ") };
                write!(f, "{what} completed in {seconds} s of work{blocks}, and no block ended")?;
                // What the barriers do not show: threads stopped at a memory access, and blocks that did not stop.
                let elsewhere = Stall {
                    running: stall.running.iter().filter(|r| matches!(r.doing, Doing::Access(_))).copied().collect(),
                    unstoppable: stall.unstoppable.clone(),
                    ..Stall::default()
                };
                if !elsewhere.running.is_empty() || !elsewhere.unstoppable.is_empty() {
                    write!(f, ", while {}", elsewhere.threads())?;
                }
                write!(f, "{}: ", stall.tally(" ("))?;
                // An endless loop around a barrier only where a running block, or the grid or a
                // cluster, keeps completing one; more work between barriers only where threads
                // were at work between them.
                let much = "far more work between barriers than the lesson's kernels do (a loop that steps by 1 where it should stride?)";
                match (around, elsewhere.running.is_empty()) {
                    (Some(around), true) => write!(f, "an endless loop around {around}?"),
                    (Some(around), false) => write!(f, "an endless loop around {around}, or {much}"),
                    (None, _) => write!(f, "{much}"),
                }
            }
            Fault::Resources(why) => write!(f, "the emulator could not start the launch: {why}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::panic::Location;

    static AT: Site = Site { location: Location::caller(), call: "" };

    fn site(call: &'static str) -> Site {
        Site { call, ..AT }
    }

    #[test]
    fn a_stop_hints_at_an_endless_loop_only_where_the_threads_it_saw_fit_one() {
        let at_work = |block, barriers| Running {
            thread: ThreadId { block, thread: 5 },
            doing: Doing::Access(site("")),
            barriers,
            last_barrier: (barriers > 0).then(|| site("block.sync()")),
        };
        let here = format!("{}:{}:{}", AT.location.file(), AT.location.line(), AT.location.column());
        // Block barriers completed, but by blocks that moved on to grid.sync(); the running ones have none.
        let slow =
            Stall { running: vec![at_work(38, 0)], at_grid: 38, unstarted: 120, block_barriers: 76, grid_site: Some(site("grid.sync()")), ..Stall::default() };
        assert_eq!(
            Fault::BarrierLoop { seconds: 600.0, stall: Box::new(slow) }.to_string(),
            format!(
                "76 block barriers completed in 600 s of work, and no block ended, while thread 5 of block 38 (warp 0, lane 5) ran on at {here} (38 blocks waited at grid.sync() at {here}, 120 blocks had not started): far more work between barriers than the lesson's kernels do (a loop that steps by 1 where it should stride?)"
            )
        );
        // A running block completing them, stopped at one.
        let looping = Running { doing: Doing::Between(Some(site("block.sync()"))), ..at_work(0, 9000) };
        let stall = Stall { running: vec![looping], block_barriers: 8000, ..Stall::default() };
        assert_eq!(
            Fault::BarrierLoop { seconds: 20.0, stall: Box::new(stall) }.to_string(),
            format!("8000 block barriers completed in 20 s of work in block 0, and no block ended: an endless loop around block.sync() at {here}?")
        );
        // Nothing running at all: no guess.
        let waiting = Stall { at_grid: 3, ended: 1, ..Stall::default() };
        assert_eq!(
            Fault::Timeout { seconds: 60.0, stall: Box::new(waiting) }.to_string(),
            "no block ended and no barrier completed within the 60 s timeout (counted in the emulator's steps of work, not by the clock), and no block was running (1 block had ended, 3 blocks waited at grid.sync())"
        );
    }
}
