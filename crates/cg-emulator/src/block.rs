//! One emulated block: its threads and warps, its barrier, and the faults
//! and races it has met. The methods every part of the block uses are here;
//! its warp collectives (`collectives.rs`), memory accesses (`access.rs`) and
//! deadlock reports (`report.rs`) are the floors above, and the scheduler
//! that runs its threads as coroutines (`scheduler.rs`) above them.
//!
//! Everything here belongs to one worker thread, so plain `Cell`s and
//! `RefCell`s suffice; a GPU thread reaches its block through the worker's
//! [`CURRENT`] pointer and borrows only for the length of one call.

use crate::cluster::Seat;
use crate::fault::{Fault, Site, ThreadId, ranges};
use crate::info::LaunchInfo;
use crate::shared::{Global, SharedMemory};
use crate::warp::{Thread, Wait, Warp};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};
use std::panic::Location;

/// The emulated block a GPU thread is running in, and its thread.
pub(crate) struct Block {
    pub id: u32,
    /// The resident place it holds while it runs (what `%smid` reads).
    pub(crate) place: u32,
    pub threads: Vec<Thread>,
    pub(crate) info: *const LaunchInfo<'static>,
    pub current: Cell<u32>,
    pub(crate) queue: RefCell<VecDeque<u32>>,
    pub(crate) live: Cell<u32>,
    pub(crate) barrier: RefCell<Vec<u32>>,
    /// Block barriers completed (`grid.sync()` counts as one).
    pub(crate) epoch: Cell<u32>,
    /// Accesses made since the block started or last completed a barrier,
    /// polls left out: the work the watchdog's budget bounds (`crate::watch`).
    pub(crate) work: Cell<u64>,
    /// Accesses made since the block started, polls left out, barriers or
    /// not: what the watchdog's backstop bounds (`crate::watch::BACKSTOP`).
    pub(crate) lifetime: Cell<u64>,
    /// Block barriers completed, and where the last was (for the watchdog's reports).
    pub(crate) barriers: Cell<u64>,
    pub(crate) last_barrier: Cell<Option<Site>>,
    pub warps: Vec<RefCell<Warp>>,
    pub(crate) shared: SharedMemory,
    pub global: RefCell<Global>,
    pub fault: RefCell<Option<Fault>>,
    /// The first data race found: reported once the block has run on a
    /// little (`clock::ACCESSES_AFTER_RACE`), in case it is the symptom of a barrier that
    /// not every thread reaches, which is then reported instead.
    pub(crate) race: RefCell<Option<Fault>>,
    pub(crate) rng: Cell<u64>,
    /// Its place in its cluster, in a cluster launch.
    pub(crate) seat: Option<Seat>,
    /// The smallest tile size `tiled_partition` cut it into so far (0: none),
    /// to name a tile size that disagrees with the shared memory's sizing.
    pub(crate) smallest_tile: Cell<u32>,
}

thread_local! {
    /// The block this worker is running, while it runs one.
    pub(crate) static CURRENT: Cell<*const Block> = const { Cell::new(std::ptr::null()) };
    /// Whether that block's launch has an argument in uninitialized memory,
    /// whose reads are checked: one flag read per access where it has none.
    pub(crate) static CHECKS_INIT: Cell<bool> = const { Cell::new(false) };
}

impl Block {
    pub(crate) fn new(id: u32, place: u32, info: &LaunchInfo, seat: Option<Seat>) -> Block {
        let threads = info.launch.threads;
        let shared_bytes = info.launch.shared_bytes as usize;
        Block {
            id,
            place,
            threads: (0..threads).map(|_| Thread::new()).collect(),
            // SAFETY (of every later dereference): the launch outlives its blocks.
            info: std::ptr::from_ref(info).cast(),
            current: Cell::new(0),
            queue: RefCell::new((0..threads).collect()),
            live: Cell::new(threads),
            barrier: RefCell::new(Vec::new()),
            epoch: Cell::new(0),
            work: Cell::new(0),
            lifetime: Cell::new(0),
            barriers: Cell::new(0),
            last_barrier: Cell::new(None),
            warps: (0..threads.div_ceil(32)).map(|_| RefCell::new(Warp::default())).collect(),
            shared: SharedMemory::new(shared_bytes),
            global: RefCell::new(Global::default()),
            fault: RefCell::new(None),
            race: RefCell::new(None),
            rng: Cell::new(info.seed.map_or(0, |s| splitmix(s ^ (id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)))),
            seat,
            smallest_tile: Cell::new(0),
        }
    }

    pub fn place(&self) -> u32 {
        self.place
    }

    pub fn info(&self) -> &LaunchInfo<'_> {
        // SAFETY: see `new`.
        unsafe { &*self.info }
    }

    pub fn thread(&self) -> &Thread {
        &self.threads[self.current.get() as usize]
    }

    pub fn thread_id(&self) -> ThreadId {
        ThreadId { block: self.id, thread: self.current.get() }
    }

    pub(crate) fn warp_lanes(&self, warp: u32) -> std::ops::Range<u32> {
        32 * warp..(32 * warp + 32).min(self.threads.len() as u32)
    }

    /// A random number for a seeded interleaving.
    pub fn random(&self) -> u64 {
        let next = splitmix(self.rng.get());
        self.rng.set(next);
        next
    }

    pub(crate) fn make_runnable(&self, tid: u32) {
        self.threads[tid as usize].wait.set(Wait::Runnable);
        self.queue.borrow_mut().push_back(tid);
    }

    /// Records a fault for the block; the scheduler stops at the next switch.
    pub fn set_fault(&self, fault: Fault) {
        self.fault.borrow_mut().get_or_insert(fault);
    }

    /// Records a data race; the block runs on for `clock::ACCESSES_AFTER_RACE` accesses.
    /// A read of shared memory nothing wrote waits the same way, and a race
    /// found meanwhile replaces it: a read before another thread's write
    /// that no barrier orders is that race, and the race says more.
    pub(crate) fn race_found(&self, race: Fault) {
        let mut r = self.race.borrow_mut();
        let replaces = matches!(*r, Some(Fault::SharedUninitialized { .. })) && !matches!(race, Fault::SharedUninitialized { .. });
        if r.is_none() || replaces {
            *r = Some(race);
            super::clock::count_down_after_race();
        }
    }

    /// The race found, to report now (its count-down ran out).
    pub fn race(&self) -> Option<Fault> {
        self.race.borrow().clone()
    }

    /// What ends the block's run, given `fault`: a barrier met from
    /// different places (threads that skipped one race on what it should have
    /// ordered) or a deadlock outranks a data race found before it, and the
    /// race outranks whatever followed from it.
    pub(crate) fn ending(&self, fault: Fault) -> Fault {
        match (fault, self.race()) {
            (f @ (Fault::DivergentBarrier { .. } | Fault::Deadlock(_)), _) => f,
            (_, Some(race)) => race,
            (f, None) => f,
        }
    }

    /// Tells the watchdog of the accesses made since the last call (at a
    /// checkpoint, and when the block gives up its worker), and wakes it if
    /// a budget ran out (`crate::watch`).
    pub(crate) fn account(&self) {
        let (work, polls) = super::clock::take_stretch();
        self.work.set(self.work.get() + work);
        self.lifetime.set(self.lifetime.get() + work);
        let info = self.info();
        if info.progress.steps(work, polls, (self.work.get(), self.lifetime.get()), info.budget) {
            info.launcher.unpark();
        }
    }

    /// A barrier of the block's (its own, its cluster's or the grid's)
    /// completed with `arrivals` of its threads: its budget of work starts
    /// again, and each arrival counts as [`ARRIVAL_STEPS`](super::watch::ARRIVAL_STEPS)
    /// steps of its work over its life,
    /// so that a loop around a barrier that touches no memory still runs
    /// into the watchdog's backstop (`crate::watch::BACKSTOP`).
    pub(crate) fn barrier_completed(&self, arrivals: u64) {
        self.account();
        self.work.set(0);
        self.lifetime.set(self.lifetime.get() + arrivals * super::watch::ARRIVAL_STEPS);
        let info = self.info();
        if info.progress.steps(0, 0, (0, self.lifetime.get()), info.budget) {
            info.launcher.unpark();
        }
    }

    /// Suspends the current thread until the scheduler resumes it.
    pub fn suspend(&self) {
        let t = self.thread();
        t.mark.set(super::stack::mark());
        let yielder = t.yielder.get();
        // SAFETY: set by this coroutine's body when it started; the yielder
        // lives on this coroutine's stack, which is in place while it runs.
        unsafe { &*yielder }.suspend(());
    }

    /// Ends the current thread's part in the launch: it never runs again.
    pub fn fail(&self, fault: Fault) -> ! {
        self.set_fault(fault);
        loop {
            self.suspend();
        }
    }

    /// Where in the source the current thread is: the cooperative-groups call
    /// it is in (as the kernel made it), or else `location`.
    pub fn site(&self, location: &'static Location<'static>) -> Site {
        self.thread().call.get().unwrap_or(Site { location, call: "" })
    }

    pub(crate) fn forget_spin(&self) {
        self.thread().spin.set((u64::MAX, 0));
    }

    /// `lanes 16-31 exited; lane 5 waits at X`: `tids` grouped by what they do,
    /// numbered as threads of the block or, with `lanes`, as lanes of their warp.
    pub(crate) fn describe_groups(&self, tids: &[u32], lanes: bool) -> String {
        let mut groups: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        for &t in tids {
            let th = &self.threads[t as usize];
            let what = match th.wait.get() {
                Wait::Exited => "exited".to_string(),
                _ => th.site.get().map_or_else(|| "wait elsewhere".to_string(), |s| format!("wait at {s}")),
            };
            groups.entry(what).or_default().push(if lanes { t % 32 } else { t });
        }
        let noun = if lanes { "lane" } else { "thread" };
        let mut parts: Vec<(u32, String)> = groups
            .into_iter()
            .map(|(what, ts)| {
                let one = ts.len() == 1;
                let what = if one { what.replacen("wait ", "waits ", 1) } else { what };
                (ts[0], format!("{noun}{} {} {what}", if one { "" } else { "s" }, ranges(ts)))
            })
            .collect();
        parts.sort();
        parts.into_iter().map(|(_, s)| s).collect::<Vec<_>>().join("; ")
    }

    // ---- barriers ----

    /// `bar.sync 0` for the current thread.
    pub fn sync_threads(&self, site: Site) {
        let tid = self.current.get();
        self.thread().site.set(Some(site));
        self.barrier.borrow_mut().push(tid);
        if !self.complete_barrier_if_full() {
            self.thread().wait.set(Wait::BlockBarrier);
            self.suspend();
        }
        self.forget_spin();
    }

    /// Completes the block barrier when every live thread is at it.
    pub(crate) fn complete_barrier_if_full(&self) -> bool {
        let waiting = self.barrier.borrow().clone();
        if waiting.is_empty() || waiting.len() as u32 != self.live.get() {
            return false;
        }
        let sites: Vec<Site> = waiting.iter().filter_map(|&t| self.threads[t as usize].site.get()).collect();
        if sites.iter().any(|s| s.apart(&sites[0])) {
            self.set_fault(Fault::DivergentBarrier { block: self.id, what: self.describe_groups(&waiting, false) });
        } else if let Some(&site) = sites.first().filter(|s| s.is_grid_collective())
            && waiting.len() < self.threads.len()
        {
            // A grid collective's block barrier: every thread of the block
            // must be at it, and the missing ones have exited.
            let exited: Vec<u32> = (0..self.threads.len() as u32).filter(|t| !waiting.contains(t)).collect();
            self.set_fault(Fault::CollectiveSkipped { block: self.id, site, exited: crate::site::ranges(exited) });
        }
        self.barrier.borrow_mut().clear();
        self.epoch.set(self.epoch.get() + 1);
        self.barriers.set(self.barriers.get() + 1);
        self.barrier_completed(waiting.len() as u64);
        self.last_barrier.set(sites.first().copied());
        self.info().progress.block_barrier();
        let me = self.current.get();
        for t in waiting {
            if t != me || self.threads[me as usize].wait.get() != Wait::Running {
                self.make_runnable(t);
            }
        }
        true
    }

    /// `barrier.cluster.arrive` for the current thread.
    pub fn cluster_arrive(&self, site: Site) {
        let t = self.thread();
        if t.cluster_arrived.replace(true) {
            self.fail(Fault::ClusterBarrierMisuse {
                thread: self.thread_id(),
                site,
                why: "barrier_arrive() a second time before barrier_wait(): each arrival is waited on once",
            });
        }
    }

    /// `barrier.cluster.wait` for the current thread: waits until every
    /// block of the cluster that has not exited has arrived.
    pub fn cluster_wait(&self, site: Site) {
        let t = self.thread();
        if !t.cluster_arrived.replace(false) {
            self.fail(Fault::ClusterBarrierMisuse {
                thread: self.thread_id(),
                site,
                why: "barrier_wait() with no barrier_arrive() before it: arrive first (cluster.sync() does both)",
            });
        }
        t.site.set(Some(site));
        t.wait.set(Wait::Cluster);
        self.suspend();
        self.forget_spin();
    }

    /// `grid.sync()` for the current thread of a cooperative launch: waits until
    /// the whole grid has arrived.
    pub fn grid_sync(&self, site: Site) {
        self.thread().site.set(Some(site));
        self.thread().grid_syncs.set(self.thread().grid_syncs.get().wrapping_add(1));
        self.thread().wait.set(Wait::Grid);
        self.suspend();
        self.forget_spin();
    }
}

fn splitmix(state: u64) -> u64 {
    let mut z = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
