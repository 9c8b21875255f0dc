//! One emulated launch: a worker thread per core, each running whole blocks
//! (all of a block's threads on one worker), the grid barrier between blocks,
//! and global memory as the blocks see it.
//!
//! Global memory follows a rule a GPU allows and makes the emulator
//! deterministic: a block sees its own writes at once and other blocks'
//! writes only after the next `grid.sync()` (or in a later launch). So what
//! a block computes depends on its inputs, never on how the workers happened
//! to interleave, and the same flags give the same bits with any number of
//! cores. Two blocks touching the same word between grid barriers, one of
//! them writing, is reported as a race, as soon as every block has reached
//! the barrier or finished; among several faults, the lowest block's is
//! reported, so that the report does not depend on timing either.
//!
//! Atomics are the exception a GPU makes too: they act on the launch's
//! memory at once (`crate::atomic`), so blocks see each other's atomics
//! without a grid barrier, in the order the workers happened to run them.
//! A word is an element: two blocks writing neighbouring bytes do not race.

use crate::clock;
use crate::cluster::{Cluster, Seat, Standing};
use crate::fault::{Fault, Site, Stall, count, ranges};
use crate::info::{ArgShadow, LaunchInfo, quiet_kernel_panics};
use crate::phase::Phase;
use crate::scheduler::{BlockRun, Outcome};
use crate::site::{blocks_of_clusters, branch_among};
use crate::spec::{Arg, ClusterShape, Device, Launch, LaunchStats, MAX_CLUSTER, MAX_PORTABLE_CLUSTER, MAX_THREADS_PER_BLOCK, Options};
use crate::stack::Slots;
use crate::timeline::{self, Course, Residency, Stop};
use crate::watch::{Budget, Counts, GRACE, Progress, Verdict, Watchdog};
use cg_barrier::launch_memory::SLOT_WORDS;
use cg_barrier::watched::{self, COUNTERS};
use cg_barrier::{arrival, is_watched, released};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

/// The grid barrier and what the blocks have reported.
#[derive(Default)]
struct GridState {
    /// Blocks handed to workers so far.
    next: u32,
    /// Blocks a worker is running now, and which.
    running: u32,
    running_blocks: std::collections::BTreeSet<u32>,
    max_running: u32,
    /// The grid barrier's word, run with `grid.sync()`'s own arithmetic
    /// (`cg::barrier`): zero at launch, as the driver hands it over; each
    /// parked block adds its arrival, and the barrier completes when the top
    /// bit flips. `barrier_start` is the word when the current barrier began.
    word: u32,
    barrier_start: u32,
    /// The watched barrier's counters and flags, for a grid that
    /// `is_watched`, run with its own steps (`cg::barrier::watched`): each
    /// parked block arrives, and block 0's watch releases the barrier once
    /// nothing else can move. A parked block's `arrived_at` is then the epoch
    /// it joined.
    watched: Option<watched::Memory>,
    /// Blocks parked at the current grid barrier.
    arrived: u32,
    /// Where they wait.
    site: Option<String>,
    /// Where a block last reached the grid barrier, and a cluster barrier (for the watchdog's reports).
    grid_site: Option<Site>,
    /// The first block at the current grid barrier, and the call it made
    /// there: a grid collective every block must make alike.
    first_at_grid: Option<(u32, Site)>,
    cluster_site: Option<Site>,
    done: Vec<u32>,
    faults: BTreeMap<u32, Fault>,
    /// Global memory in this phase, as the blocks that have reported used it.
    phase: Phase,
    /// Resident places taken by the blocks holding them (what `%smid` reads).
    places: BTreeMap<u32, u32>,
    /// Places no block holds now, below `next_place`.
    free_places: std::collections::BTreeSet<u32>,
    next_place: u32,
    /// Each started block's course, in its own memory accesses (for traces).
    courses: BTreeMap<u32, Course>,
    /// A cluster launch's clusters, by index, from when their first block starts.
    clusters: BTreeMap<u32, Cluster>,
    /// Blocks parked at their cluster's barrier, and where.
    cluster_waiting: BTreeMap<u32, String>,
    /// Every place a block has reached a cluster barrier at, and the blocks
    /// that did: a `cluster.sync()` in a branch is one only some reach.
    cluster_reached: BTreeMap<String, std::collections::BTreeSet<u32>>,
    /// Blocks whose barrier has completed and which no worker has resumed yet.
    releasable: u32,
    /// Mistakes found when a cluster's phase ended, by the block that made them.
    cluster_faults: BTreeMap<u32, Fault>,
    finished: Option<Result<(), Fault>>,
}

struct Grid<'a> {
    info: LaunchInfo<'a>,
    state: Mutex<GridState>,
    cv: Condvar,
}

/// Runs `launch` to completion on `device`.
pub(crate) fn run(device: &Device, launch: &Launch, options: &Options) -> Result<LaunchStats, Fault> {
    let (grid, threads) = (launch.grid, launch.threads);
    if grid == 0 {
        return Err(Fault::InvalidValue("a grid of 0 blocks".into()));
    }
    if device.sms == 0 {
        // Not a wait for an SM that never comes.
        return Err(Fault::InvalidValue("a device of 0 SMs runs no block".into()));
    }
    if device.max_threads_per_block > MAX_THREADS_PER_BLOCK {
        // A device no GPU is: the block collectives keep one partial per
        // warp, of at most 32 warps. (A block larger than an SM is refused
        // below, as one that does not fit.)
        return Err(Fault::InvalidValue(format!(
            "an emulated device of {} threads per block: CUDA allows at most {} on every GPU, which the block collectives rely on",
            device.max_threads_per_block, MAX_THREADS_PER_BLOCK
        )));
    }
    if threads == 0 || threads > device.max_threads_per_block {
        return Err(Fault::InvalidValue(format!("{threads} threads per block; this device runs 1 to {}", device.max_threads_per_block)));
    }
    let per_sm = device.blocks_per_sm_using(threads, launch.shared_bytes, launch.registers_per_thread);
    if per_sm == 0 {
        return Err(Fault::InvalidValue(format!(
            "one block of {threads} threads and {} bytes of shared memory does not fit on an SM of {} threads and {} bytes",
            launch.shared_bytes, device.threads_per_sm, device.shared_bytes_per_sm
        )));
    }
    let fit = match launch.cluster {
        Some(shape) => cluster_fit(device, launch, shape, per_sm)?,
        None if launch.cluster_kernel => {
            return Err(Fault::InvalidValue(format!(
                "{} is declared #[kernel(cluster)] (it calls this_cluster()) but was launched without a cluster dimension",
                launch.kernel
            )));
        }
        None => per_sm.saturating_mul(device.sms),
    };
    if launch.cooperative && grid > fit {
        return Err(Fault::CooperativeLaunchTooLarge { requested: grid, max: fit });
    }
    quiet_kernel_panics();
    keep_worker_heaps();
    let g = Grid {
        info: LaunchInfo {
            launch,
            seed: options.seed,
            workspace_always: options.ordinary_launches_get_a_workspace,
            fit,
            throttle: options.throttle,
            progress: Progress::default(),
            budget: Budget::of(options.timeout),
            launcher: std::thread::current(),
            abort: AtomicBool::new(false),
            gathered: [(); 2].map(|_| (0..grid as usize * SLOT_WORDS as usize).map(|_| std::sync::atomic::AtomicU64::new(0)).collect()),
            shadows: launch
                .args
                .iter()
                .filter_map(|a| match *a {
                    Arg::In { address, len, elem, .. } | Arg::Out { address, len, elem, .. } => {
                        let (allocation, shadow) = super::memory::shadows_in(address, len * elem)?;
                        Some(ArgShadow { start: address, end: address + len * elem, allocation, shadow })
                    }
                    Arg::Value(_) => None,
                })
                .collect(),
        },
        state: Mutex::new(GridState::default()),
        cv: Condvar::new(),
    };
    let workers = options.workers.clamp(1, grid as usize);
    let at_work = AtomicUsize::new(workers);
    let launcher = std::thread::current();
    let stopped = std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                let _leaving = Leaving { at_work: &at_work, launcher: &launcher };
                worker(&g);
            });
        }
        watch(&g, options, &at_work)
    });
    let st = g.state.into_inner().expect("no worker panics holding the lock");
    if let Some(sink) = launch.trace {
        let laid_out = timeline::lay_out(&st.courses, Residency { fit, sms: device.sms, cluster: launch.cluster.map(|c| c.blocks) });
        sink.lock().unwrap_or_else(|e| e.into_inner()).extend(laid_out);
    }
    let result = match stopped {
        None => st.finished.expect("the launch finishes before its workers return"),
        Some((verdict, stall)) => stopped_result(verdict, stall, &st),
    };
    let most_atomics_on_one_word = st.phase.most_atomics_on_one_word();
    result.map(|()| LaunchStats { max_resident: st.max_running, workers, most_atomics_on_one_word })
}

/// A worker's leaving, even by a panic: one fewer at work, and the watchdog woken to see it.
struct Leaving<'a> {
    at_work: &'a AtomicUsize,
    launcher: &'a std::thread::Thread,
}

impl Drop for Leaving<'_> {
    fn drop(&mut self) {
        self.at_work.fetch_sub(1, Ordering::Release);
        self.launcher.unpark();
    }
}

/// Watches the launch from the thread that made it, until every worker has
/// returned: stops it when the watchdog's rule (`crate::watch`) says it is
/// stuck, and hands `Options::on_runaway` a launch whose blocks do not stop
/// within `GRACE`. Why it stopped the launch, and what it saw then, if it did.
fn watch(g: &Grid, options: &Options, at_work: &AtomicUsize) -> Option<(Verdict, Stall)> {
    let lock = || g.state.lock().unwrap_or_else(|e| e.into_inner());
    let mut dog = Watchdog::new(options.timeout, Instant::now());
    let mut stopped: Option<(Verdict, Stall, Instant)> = None;
    let mut told = false;
    while at_work.load(Ordering::Acquire) > 0 {
        std::thread::park_timeout(dog.tick());
        let now = Instant::now();
        match &stopped {
            None => {
                let progress = &g.info.progress;
                let Some(verdict) = dog.look(progress.read(), progress.over(), now) else { continue };
                let st = lock();
                if st.finished.is_none() {
                    stopped = Some((verdict, seen(g, &st, verdict), now));
                    g.info.abort.store(true, Ordering::Relaxed);
                    g.cv.notify_all();
                }
            }
            Some((verdict, stall, at)) if !told && now.duration_since(*at) >= GRACE => {
                told = true;
                if let Some(tell) = options.on_runaway {
                    let fault = {
                        let st = lock();
                        gathered(*verdict, stall.clone(), &st, st.running_blocks.iter().copied().collect())
                    };
                    tell(g.info.launch.kernel, &fault);
                }
            }
            Some(_) => {}
        }
    }
    stopped.map(|(verdict, stall, _)| (verdict, stall))
}

/// What the watchdog sees of the launch when it stops it.
fn seen(g: &Grid, st: &GridState, verdict: Verdict) -> Stall {
    let barriers = match verdict {
        Verdict::Looping { barriers, .. } => barriers,
        Verdict::Stuck { .. } => Counts::default(),
    };
    Stall {
        ended: (st.done.len() + st.faults.len()) as u32,
        at_grid: st.arrived,
        at_cluster: st.cluster_waiting.len() as u32,
        unstarted: g.info.launch.grid - st.next,
        block_barriers: barriers.block_barriers,
        cluster_barriers: barriers.cluster_barriers,
        grid_barriers: barriers.grid_barriers,
        grid_site: st.grid_site,
        cluster_site: st.cluster_site,
        polls_only: g.info.progress.polls_ran_out(),
        ..Stall::default()
    }
}

/// The fault of a stopped launch: what the watchdog saw, with the thread
/// each stopped block last ran, and the blocks that did not stop.
fn gathered(verdict: Verdict, mut stall: Stall, st: &GridState, unstoppable: Vec<u32>) -> Fault {
    for f in st.faults.values() {
        if let Fault::Timeout { stall: part, .. } = f {
            stall.running.extend(part.running.iter().copied());
        }
    }
    stall.unstoppable = unstoppable;
    match verdict {
        Verdict::Stuck { seconds } => Fault::Timeout { seconds, stall: Box::new(stall) },
        Verdict::Looping { seconds, .. } => Fault::BarrierLoop { seconds, stall: Box::new(stall) },
    }
}

/// How a launch the watchdog stopped ends: `Ok` if every block ended well
/// after all; else a fault of its own that a block met (the lowest block's),
/// which outranks the stop; else the stop, with what the watchdog saw.
fn stopped_result(verdict: Verdict, stall: Stall, st: &GridState) -> Result<(), Fault> {
    let own = |f: &Fault| !matches!(f, Fault::Timeout { .. });
    match &st.finished {
        Some(Ok(())) => return Ok(()),
        Some(Err(f)) if own(f) => return Err(f.clone()),
        _ => {}
    }
    match st.faults.values().find(|f| own(f)) {
        Some(f) => Err(f.clone()),
        None => Err(gathered(verdict, stall, st, Vec::new())),
    }
}

/// The blocks a cluster launch holds at once: whole clusters, as many as
/// the device's measured cluster ceiling; or why the cluster is refused.
fn cluster_fit(device: &Device, launch: &Launch, shape: ClusterShape, per_sm: u32) -> Result<u32, Fault> {
    if device.clusters.is_none() {
        return Err(Fault::InvalidClusterSize(
            "this emulated device (the lesson's T4, compute capability 7.5) has no thread-block clusters: they need 9.0 (emulate an H200: --gpu h200)".into(),
        ));
    };
    let k = shape.blocks;
    let most = if shape.non_portable { MAX_CLUSTER } else { MAX_PORTABLE_CLUSTER };
    if k == 0 || k > most {
        let why = if k > MAX_PORTABLE_CLUSTER && k <= MAX_CLUSTER { " (more than 8 needs the kernel's non-portable cluster size allowed)" } else { "" };
        return Err(Fault::InvalidClusterSize(format!("clusters of {k} blocks; this device takes 1 to {most}{why}")));
    }
    if !launch.grid.is_multiple_of(k) {
        return Err(Fault::InvalidClusterSize(format!("a grid of {} blocks is not a whole number of clusters of {k}", launch.grid)));
    }
    let clusters = device.cluster_ceiling(per_sm, k).unwrap_or(0);
    if clusters == 0 {
        return Err(Fault::InvalidClusterSize(format!("no cluster of {k} blocks of {} threads fits on this device", launch.threads)));
    }
    Ok(clusters * k)
}

/// Whether the next block may start: there is room for it (for the first
/// block of a cluster, room for the whole cluster, which the GPU starts at once).
fn room_to_start(g: &Grid, st: &GridState) -> bool {
    let launch = g.info.launch;
    let resident = st.next - st.done.len() as u32 - st.faults.len() as u32;
    let needed = match launch.cluster {
        Some(c) if st.next.is_multiple_of(c.blocks) => c.blocks,
        Some(_) => 0,
        None => 1,
    };
    st.next < launch.grid && resident + needed <= g.info.fit
}

/// A new block's seat in its cluster, creating the cluster's state with its first block.
fn seat(g: &Grid, st: &mut GridState, id: u32) -> Option<Seat> {
    let launch = g.info.launch;
    let size = launch.cluster?.blocks;
    let (cluster, rank) = (id / size, id % size);
    let words = (launch.shared_bytes as usize).div_ceil(4);
    let c = st.clusters.entry(cluster).or_insert_with(|| Cluster::new(size, words));
    c.standing[rank as usize] = Standing::Running;
    Some(Seat { cluster, rank, size, view: std::cell::RefCell::new(c.view.clone()), phase: std::cell::RefCell::new(Default::default()) })
}

/// Records what a block of a cluster did before it stopped, and moves its
/// cluster on: completes the cluster barrier, or ends the last phase.
fn publish_to_cluster(g: &Grid, st: &mut GridState, run: &BlockRun, standing: Standing) {
    let Some(seat) = &run.block.seat else { return };
    let (words, phase) = run.cluster_publication();
    let c = st.clusters.get_mut(&seat.cluster).expect("a started block's cluster exists");
    c.publish(seat.rank, words, phase, standing);
    let block_of = |rank: u32| seat.block_of(rank);
    if c.barrier_complete() {
        let arrived = c.standing.iter().filter(|&&s| s == Standing::Arrived).count() as u32;
        match c.end_phase(block_of) {
            Ok(()) => {
                g.info.progress.cluster_barrier();
                c.generation += 1;
                c.standing.iter_mut().filter(|s| **s == Standing::Arrived).for_each(|s| *s = Standing::Running);
                for b in block_of(0)..block_of(seat.size) {
                    st.cluster_waiting.remove(&b);
                }
                st.releasable += arrived;
                g.cv.notify_all();
            }
            Err(f) => note_cluster_fault(st, f),
        }
    } else if c.all_exited()
        && let Err(f) = c.end_phase(block_of)
    {
        note_cluster_fault(st, f);
    }
}

fn note_cluster_fault(st: &mut GridState, f: Fault) {
    let block = match &f {
        Fault::ClusterBlockExited { thread, .. } => thread.block,
        Fault::ClusterRace { first, .. } => first.thread.block,
        _ => u32::MAX,
    };
    st.cluster_faults.entry(block).or_insert(f);
}

/// Asks glibc's malloc to keep what the workers' heaps grew to. Each block
/// parked at a grid barrier saves its threads' stacks in the worker's heap;
/// glibc gave those pages back at every free and faulted them in again at the
/// next block, which cost the exercise's ladder about a sixth of its time on
/// 2 cores (2026-12-04, `perf`: a third of the samples under `sysmalloc`).
fn keep_worker_heaps() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: mallopt only changes malloc's tuning; 64 MiB fits a c_int.
        unsafe {
            libc::mallopt(libc::M_TOP_PAD, 64 << 20);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
        }
    });
}

/// Whether a block parked at a grid or cluster barrier may go on: the barrier has completed.
fn released_from_barrier(st: &GridState, b: &BlockRun) -> bool {
    if b.polling {
        return false;
    }
    match b.cluster_generation {
        Some(generation) => b.block.seat.as_ref().is_some_and(|s| st.clusters[&s.cluster].generation > generation),
        None => match &st.watched {
            Some(m) => m.released(b.block.id, b.arrived_at),
            None => released(b.arrived_at, st.word),
        },
    }
}

fn worker(g: &Grid) {
    let slots = match Slots::new(g.info.launch.threads as usize) {
        Ok(s) => s,
        Err(e) => {
            let mut st = g.state.lock().unwrap();
            st.finished.get_or_insert(Err(Fault::Resources(format!("stacks for {} threads: {e}", g.info.launch.threads))));
            g.cv.notify_all();
            return;
        }
    };
    let mut parked: Vec<BlockRun> = Vec::new();
    // Whether a block of this worker's stopped at the watchdog's word.
    let mut told = false;
    loop {
        let mut run = {
            let mut st = g.state.lock().unwrap();
            loop {
                if st.finished.is_some() || g.info.aborted() {
                    // Stopped between blocks: the first that gave way while
                    // polling stands for this worker in the report.
                    if let Some(b) = parked.iter().find(|b| b.polling).filter(|_| !told && g.info.aborted()) {
                        st.faults.entry(b.block.id).or_insert_with(|| b.block.stopped(None));
                    }
                    return;
                }
                let ready = |b: &BlockRun| released_from_barrier(&st, b);
                if let Some(i) = parked.iter().position(ready) {
                    let mut b = parked.swap_remove(i);
                    let (writes, view) = match &b.block.seat {
                        Some(seat) => {
                            let c = st.clusters.get_mut(&seat.cluster).expect("a started block's cluster exists");
                            (std::mem::take(&mut c.pending[seat.rank as usize]), Some(c.view.clone()))
                        }
                        None => (Vec::new(), None),
                    };
                    st.releasable -= 1;
                    b.release(&slots, writes, view);
                    break b;
                }
                // A block starts only where the device has room for it, as in an
                // ordinary launch larger than the device (a cooperative one fits).
                if room_to_start(g, &st) {
                    let id = st.next;
                    st.next += 1;
                    let place = match st.free_places.pop_first() {
                        Some(p) => p,
                        None => {
                            st.next_place += 1;
                            st.next_place - 1
                        }
                    };
                    st.places.insert(id, place);
                    st.courses.insert(id, Course::default());
                    let seat = seat(g, &mut st, id);
                    break BlockRun::new(id, place, &g.info, seat);
                }
                // A block that gave way while polling, the longest waiting first.
                if let Some(i) = parked.iter().position(|b| b.polling) {
                    let mut b = parked.remove(i);
                    b.resume(&slots);
                    break b;
                }
                st = g.cv.wait(st).unwrap();
            }
        };
        {
            let mut st = g.state.lock().unwrap();
            st.running += 1;
            st.max_running = st.max_running.max(st.running);
            st.running_blocks.insert(run.block.id);
        }
        slots.running(g.info.launch.kernel, run.block.id);
        // Whether this worker has another block to run, should this one poll.
        let elsewhere = || {
            let st = g.state.lock().unwrap_or_else(|e| e.into_inner());
            parked.iter().any(|b| b.polling || released_from_barrier(&st, b)) || room_to_start(g, &st)
        };
        let outcome = run.run(&slots, &elsewhere);
        let mut st = g.state.lock().unwrap();
        st.running -= 1;
        let id = run.block.id;
        st.running_blocks.remove(&id);
        if matches!(outcome, Outcome::Done | Outcome::Faulted(_)) {
            g.info.progress.block_ended();
        }
        let stretch = clock::take_steps();
        if let Some(c) = st.courses.get_mut(&id) {
            let stop = match outcome {
                Outcome::ParkedCluster => Some(Stop::Cluster),
                Outcome::Parked => Some(Stop::Grid),
                // The stretch goes on when the block runs again.
                Outcome::Polling => None,
                Outcome::Done | Outcome::Faulted(_) => Some(Stop::End),
            };
            let stretch = stretch + std::mem::take(&mut c.unfinished);
            match stop {
                Some(stop) => c.pieces.push((stretch, stop)),
                None => c.unfinished = stretch,
            }
            c.done = matches!(outcome, Outcome::Done);
        }
        if !matches!(outcome, Outcome::Parked | Outcome::ParkedCluster | Outcome::Polling)
            && let Some(place) = st.places.remove(&id)
        {
            st.free_places.insert(place);
        }
        match outcome {
            Outcome::Polling => {
                // It keeps its place on the device, and this worker runs it again.
                parked.push(run);
            }
            Outcome::Parked if collective_mismatch(&st, id, run.site).is_some() => {
                let (first, other) = collective_mismatch(&st, id, run.site).expect("just seen");
                st.faults.insert(id, Fault::CollectiveMismatch { kernel: g.info.launch.kernel, first, other });
                if let Some(place) = st.places.remove(&id) {
                    st.free_places.insert(place);
                }
                g.cv.notify_all();
            }
            Outcome::Parked => {
                if st.first_at_grid.is_none() {
                    st.first_at_grid = run.site.map(|s| (id, s));
                }
                st.phase.contribute(&run);
                st.arrived += 1;
                if st.site.is_none() {
                    st.site = run.site.map(|s| s.to_string());
                }
                st.grid_site = run.site.or(st.grid_site);
                let grid = g.info.launch.grid;
                if is_watched(grid) {
                    run.arrived_at = st.watched.get_or_insert_with(|| watched::Memory::new(COUNTERS)).arrive(id);
                } else {
                    run.arrived_at = st.word;
                    st.word = st.word.wrapping_add(arrival(id == 0, grid));
                }
                publish_to_cluster(g, &mut st, &run, Standing::AtGrid);
                parked.push(run);
            }
            Outcome::ParkedCluster => {
                let seat = run.block.seat.as_ref().expect("only a block of a cluster parks at a cluster barrier");
                run.cluster_generation = Some(st.clusters[&seat.cluster].generation);
                let site = run.site.map_or_else(|| "cluster.sync()".to_string(), |s| s.to_string());
                st.cluster_reached.entry(site.clone()).or_default().insert(id);
                st.cluster_waiting.insert(id, site);
                st.cluster_site = run.site.or(st.cluster_site);
                publish_to_cluster(g, &mut st, &run, Standing::Arrived);
                parked.push(run);
            }
            Outcome::Done => {
                st.phase.contribute(&run);
                publish_to_cluster(g, &mut st, &run, Standing::Exited);
                st.done.push(id);
                // Room on the device for a waiting block.
                g.cv.notify_all();
            }
            Outcome::Faulted(f) => {
                told |= matches!(f, Fault::Timeout { .. });
                st.faults.insert(id, f);
                if let Some(seat) = &run.block.seat
                    && let Some(c) = st.clusters.get_mut(&seat.cluster)
                {
                    c.standing[seat.rank as usize] = Standing::Exited;
                }
                g.cv.notify_all();
            }
        }
        settle(g, &mut st);
    }
}

/// Whether block `id`, arriving at the grid barrier from `site`, made another
/// call than the first block there, where either is a grid collective
/// (`grid.reduce::<f32, Plus>()`: a `grid.` call other than `grid.sync()`):
/// the first block and its site, and this one's.
fn collective_mismatch(st: &GridState, id: u32, site: Option<Site>) -> Option<((u32, Site), (u32, Site))> {
    let (first, first_site) = st.first_at_grid?;
    let site = site?;
    (site.call != first_site.call && (site.is_grid_collective() || first_site.is_grid_collective())).then_some(((first, first_site), (id, site)))
}

/// Moves the launch on once every block has reported: completes the grid
/// barrier, or ends the launch with its result.
fn settle(g: &Grid, st: &mut GridState) {
    let grid = g.info.launch.grid;
    if g.info.launch.cluster.is_some() && settle_clusters(g, st) {
        g.cv.notify_all();
        return;
    }
    // Blocks wait at the grid barrier in every place the device has, and the
    // rest can never start: what an ordinary launch with a grid barrier does
    // on a GPU (see `Options::ordinary_launches_get_a_workspace`).
    if st.next < grid && st.running == 0 && st.arrived > 0 && st.arrived == st.next - st.done.len() as u32 - st.faults.len() as u32 && st.arrived == g.info.fit
    {
        st.finished = Some(Err(Fault::Deadlock(format!(
            "in {}, {} hold every place on the device and wait at {}, and the other {} can never start: a grid barrier needs every block resident at once, which only a cooperative launch of a grid that fits arranges",
            g.info.launch.kernel,
            count(st.arrived as usize, "block"),
            st.site.as_deref().unwrap_or("grid.sync()"),
            count((grid - st.next) as usize, "block")
        ))));
        g.cv.notify_all();
        return;
    }
    let settled = st.next == grid && st.running == 0 && st.arrived + st.done.len() as u32 + st.faults.len() as u32 == grid;
    if !settled {
        return;
    }
    let result = if let Some((_, f)) = st.faults.iter().next() {
        Err(f.clone())
    } else if let Some(f) = st.phase.race(g.info.launch) {
        Err(f)
    } else if st.arrived == 0 {
        st.phase.publish(&g.info);
        Ok(())
    } else if match st.watched.as_mut() {
        Some(m) => m.watch(grid),
        None => released(st.barrier_start, st.word),
    } {
        // The word flips, and block 0's watch releases, exactly when the last
        // of the grid's blocks has arrived.
        debug_assert_eq!(st.arrived, grid, "the barrier word flipped before every block arrived");
        // Every block is alive and ordered: each cluster's phase ends here too.
        let mut faults = Vec::new();
        for (&cluster, c) in st.clusters.iter_mut() {
            let size = c.standing.len() as u32;
            if let Err(f) = c.end_phase(|rank| cluster * size + rank) {
                faults.push(f);
            }
            c.standing.iter_mut().filter(|s| **s == Standing::AtGrid).for_each(|s| *s = Standing::Running);
        }
        if !faults.is_empty() {
            faults.into_iter().for_each(|f| note_cluster_fault(st, f));
            st.finished = Some(Err(st.cluster_faults.values().next().cloned().expect("a fault was noted")));
            g.cv.notify_all();
            return;
        }
        st.releasable += st.arrived;
        g.info.progress.grid_barrier();
        st.phase.publish(&g.info);
        st.barrier_start = st.word;
        st.arrived = 0;
        st.site = None;
        st.first_at_grid = None;
        g.cv.notify_all();
        return;
    } else {
        let mut exited = st.done.clone();
        exited.sort_unstable();
        let what = if st.first_at_grid.is_some_and(|(_, s)| s.is_grid_collective()) { "grid collective" } else { "grid.sync()" };
        Err(Fault::Deadlock(format!(
            "in {}, {} of {} reached {}; {} {} exited without it: every block of the grid must reach each {what}, so keep it out of branches that some blocks skip (`if block.group_index().x == 0` goes after the barrier, not around it)",
            g.info.launch.kernel,
            st.arrived,
            count(grid as usize, "block"),
            st.site.as_deref().unwrap_or("grid.sync()"),
            if exited.len() == 1 { "block" } else { "blocks" },
            ranges(exited)
        )))
    };
    st.finished = Some(result);
    g.cv.notify_all();
}

/// In a cluster launch, once nothing can move: ends the launch with the
/// first mistake its clusters' phases showed, or names the cluster barrier
/// that can never complete. Whether it ended the launch.
fn settle_clusters(g: &Grid, st: &mut GridState) -> bool {
    let holding = st.next - st.done.len() as u32 - st.faults.len() as u32;
    let parked = st.arrived + st.cluster_waiting.len() as u32;
    let still = st.running == 0 && st.releasable == 0 && parked == holding && !room_to_start(g, st);
    if !still {
        return false;
    }
    let first_block_fault = st.faults.iter().next().map(|(&b, f)| (b, f.clone()));
    let first_cluster_fault = st.cluster_faults.iter().next().map(|(&b, f)| (b, f.clone()));
    let fault = match (first_block_fault, first_cluster_fault) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a.1 } else { b.1 }),
        (a, b) => a.or(b).map(|x| x.1),
    };
    if let Some(f) = fault {
        st.finished = Some(Err(f));
        return true;
    }
    if st.cluster_waiting.is_empty() {
        return false;
    }
    let (&first, site) = st.cluster_waiting.iter().next().expect("not empty");
    let cluster = g.info.launch.cluster.map_or(1, |c| c.blocks);
    let waiting = blocks_of_clusters(st.cluster_waiting.keys().copied(), cluster);
    let at_grid = if st.arrived > 0 {
        format!(", while {} wait at {}", count(st.arrived as usize, "block"), st.site.as_deref().unwrap_or("grid.sync()"))
    } else {
        String::new()
    };
    st.finished = Some(Err(Fault::Deadlock(format!(
        "in {}, {waiting} wait at {site} (block {first} first){at_grid}: a cluster barrier completes only when every block of the cluster that has not exited reaches it{}",
        g.info.launch.kernel,
        branch_among(&st.cluster_reached, cluster)
    ))));
    true
}
