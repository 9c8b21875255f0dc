//! One emulated block: its threads, warps, barrier, shared memory and the
//! writes it has made to global memory, and the scheduler that runs its
//! threads as coroutines on one worker until every one of them has returned,
//! waits at `grid.sync()`, or waits for something that cannot happen.
//!
//! Everything here belongs to one worker thread, so plain `Cell`s and
//! `RefCell`s suffice; a GPU thread reaches its block through the worker's
//! [`CURRENT`] pointer and borrows only for the length of one call.

use super::fault::{Access, Fault, Site, ThreadId, ranges};
use super::launch::LaunchInfo;
use super::race::{Now, Shadow, Touched};
use super::stack::{Saved, SlotStack, Slots};
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::cell::{Cell, RefCell, UnsafeCell};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::panic::Location;

/// What a thread is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// In the run queue.
    Runnable,
    Running,
    /// At `block.sync()`.
    BlockBarrier,
    /// In a warp collective (shuffle, vote, `tile.sync()`).
    Collective,
    /// In `coalesced_threads()`, at the call site with this key.
    ActiveMask(usize),
    /// At `grid.sync()`.
    Grid,
    /// Reading one word over and over that nothing in its block writes.
    Spin,
    Exited,
}

/// One emulated GPU thread's state.
pub(crate) struct Thread {
    pub wait: Cell<Wait>,
    /// Where it waits, or the call it is in.
    pub site: Cell<Option<Site>>,
    /// The cooperative-groups call in progress, and where the kernel made it.
    pub call: Cell<Option<Site>>,
    /// A collective's result for this lane.
    pub mailbox: Cell<u32>,
    pub yielder: Cell<*const Yielder<(), ()>>,
    /// An address just below the frame that last suspended.
    pub mark: Cell<usize>,
    /// The word this thread keeps reading, and how many times in a row.
    pub spin: Cell<(u64, u32)>,
    /// What it spins on, for the report.
    pub spin_word: RefCell<String>,
}

impl Thread {
    fn new() -> Thread {
        Thread {
            wait: Cell::new(Wait::Runnable),
            site: Cell::new(None),
            call: Cell::new(None),
            mailbox: Cell::new(0),
            yielder: Cell::new(std::ptr::null()),
            mark: Cell::new(0),
            spin: Cell::new((u64::MAX, 0)),
            spin_word: RefCell::new(String::new()),
        }
    }
}

/// The kinds of warp collective; lanes meet only with lanes making the same kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Sync,
    Ballot,
    Shfl(Mode),
}

/// The four `shfl.sync` modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Up,
    Down,
    Bfly,
    Idx,
}

/// One collective call in progress over the lanes of `mask`.
struct Round {
    mask: u32,
    kind: Kind,
    arrived: u32,
    values: [u32; 32],
    b: [u32; 32],
    c: [u32; 32],
}

#[derive(Default)]
pub(crate) struct Warp {
    rounds: Vec<Round>,
    /// The masks of completed `bar.warp.sync`s, in order (for race detection).
    pub syncs: Vec<u32>,
}

/// The block's dynamic shared memory and its race shadow.
struct SharedMemory {
    words: UnsafeCell<Box<[u32]>>,
    bytes: usize,
    shadow: RefCell<Vec<Shadow>>,
}

/// The block's view of the launch's `Out` buffers: its own writes (seen by
/// its threads at once, by other blocks at the next grid barrier), the words
/// it read from before them, and each word's race shadow.
#[derive(Default)]
pub(crate) struct Global {
    /// The last bits written to each word, and where the block first wrote it.
    pub writes: BTreeMap<(u32, usize), (u64, Site)>,
    /// Words read before the block wrote them, and where it first read each.
    pub reads: BTreeMap<(u32, usize), Site>,
    shadow: HashMap<(u32, usize), Shadow>,
}

/// The source lane of a `shfl.sync` (PTX ISA, `shfl.sync`): `b` and the clamp
/// use their low five bits; `None` where PTX returns the lane's own value.
pub(crate) fn shfl_source(lane: u32, mode: Mode, b: u32, c: u32) -> Option<u32> {
    let (lane, b) = (lane as i32, (b & 0x1f) as i32);
    let seg = ((c >> 8) & 0x1f) as i32;
    let clamp = (c & 0x1f) as i32;
    let min_lane = lane & seg;
    let max_lane = min_lane | (clamp & !seg);
    let (j, ok) = match mode {
        Mode::Up => (lane - b, lane - b >= max_lane),
        Mode::Down => (lane + b, lane + b <= max_lane),
        Mode::Bfly => (lane ^ b, (lane ^ b) <= max_lane),
        Mode::Idx => (min_lane | (b & !seg), (min_lane | (b & !seg)) <= max_lane),
    };
    ok.then_some(j as u32)
}

/// The emulated block a GPU thread is running in, and its thread.
pub(crate) struct Block {
    pub id: u32,
    /// The resident place it holds while it runs (what `%smid` reads).
    place: u32,
    pub threads: Vec<Thread>,
    info: *const LaunchInfo<'static>,
    pub current: Cell<u32>,
    queue: RefCell<VecDeque<u32>>,
    live: Cell<u32>,
    barrier: RefCell<Vec<u32>>,
    /// Block barriers completed (`grid.sync()` counts as one).
    epoch: Cell<u32>,
    pub warps: Vec<RefCell<Warp>>,
    shared: SharedMemory,
    pub global: RefCell<Global>,
    pub fault: RefCell<Option<Fault>>,
    /// The first data race found: reported once the block has run on a
    /// little ([`AFTER_RACE`]), in case it is the symptom of a barrier that
    /// not every thread reaches, which is then reported instead.
    race: RefCell<Option<Fault>>,
    rng: Cell<u64>,
}

thread_local! {
    /// The block this worker is running, while it runs one.
    pub(crate) static CURRENT: Cell<*const Block> = const { Cell::new(std::ptr::null()) };
}

/// Suspensions of one thread before the scheduler looks for other work (seeded runs).
pub(crate) const QUANTUM: u32 = 4096;

/// Memory accesses the block may make after a data race before the race is
/// reported: enough for threads that skipped a barrier to reach the next one.
pub(crate) const AFTER_RACE: u32 = 4096;

/// Consecutive reads of one word, with no write or collective between, that count as a spin.
const SPIN_READS: u32 = 1 << 20;

impl Block {
    fn new(id: u32, place: u32, info: &LaunchInfo) -> Block {
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
            warps: (0..threads.div_ceil(32)).map(|_| RefCell::new(Warp::default())).collect(),
            shared: SharedMemory {
                words: UnsafeCell::new(vec![0u32; shared_bytes.div_ceil(4)].into_boxed_slice()),
                bytes: shared_bytes,
                shadow: RefCell::new(vec![Shadow::default(); shared_bytes.div_ceil(4)]),
            },
            global: RefCell::new(Global::default()),
            fault: RefCell::new(None),
            race: RefCell::new(None),
            rng: Cell::new(info.seed.map_or(0, |s| splitmix(s ^ (id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)))),
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

    fn warp_lanes(&self, warp: u32) -> std::ops::Range<u32> {
        32 * warp..(32 * warp + 32).min(self.threads.len() as u32)
    }

    /// A random number for a seeded interleaving.
    pub fn random(&self) -> u64 {
        let next = splitmix(self.rng.get());
        self.rng.set(next);
        next
    }

    fn make_runnable(&self, tid: u32) {
        self.threads[tid as usize].wait.set(Wait::Runnable);
        self.queue.borrow_mut().push_back(tid);
    }

    /// Records a fault for the block; the scheduler stops at the next switch.
    pub fn set_fault(&self, fault: Fault) {
        self.fault.borrow_mut().get_or_insert(fault);
    }

    /// Records a data race; the block runs on for [`AFTER_RACE`] accesses.
    fn race_found(&self, race: Fault) {
        let mut r = self.race.borrow_mut();
        if r.is_none() {
            *r = Some(race);
            super::thread::count_down_after_race(AFTER_RACE);
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
    fn ending(&self, fault: Fault) -> Fault {
        match (fault, self.race()) {
            (f @ (Fault::DivergentBarrier { .. } | Fault::Deadlock(_)), _) => f,
            (_, Some(race)) => race,
            (f, None) => f,
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
    fn complete_barrier_if_full(&self) -> bool {
        let waiting = self.barrier.borrow().clone();
        if waiting.is_empty() || waiting.len() as u32 != self.live.get() {
            return false;
        }
        let sites: Vec<Site> = waiting.iter().filter_map(|&t| self.threads[t as usize].site.get()).collect();
        if sites.iter().any(|s| s.location != sites[0].location) {
            self.set_fault(Fault::DivergentBarrier { block: self.id, what: self.describe_groups(&waiting, false) });
        }
        self.barrier.borrow_mut().clear();
        self.epoch.set(self.epoch.get() + 1);
        let me = self.current.get();
        for t in waiting {
            if t != me || self.threads[me as usize].wait.get() != Wait::Running {
                self.make_runnable(t);
            }
        }
        true
    }

    /// `grid.sync()` for the current thread of a cooperative launch: waits until
    /// the whole grid has arrived.
    pub fn grid_sync(&self, site: Site) {
        self.thread().site.set(Some(site));
        self.thread().wait.set(Wait::Grid);
        self.suspend();
        self.forget_spin();
    }

    // ---- warp collectives ----

    /// One collective over the lanes of `mask` (this lane among them); returns this lane's result.
    pub fn collective(&self, kind: Kind, mask: u32, value: u32, b: u32, c: u32, site: Site) -> u32 {
        let tid = self.current.get();
        let (warp, lane) = (tid / 32, tid % 32);
        let bit = 1u32 << lane;
        if mask & bit == 0 {
            self.fail(Fault::BadMask { thread: self.thread_id(), site, why: format!("its mask {mask:#010x} does not include its own lane {lane}") });
        }
        let present: u32 = self.warp_lanes(warp).fold(0, |m, t| m | 1 << (t % 32));
        if mask & !present != 0 {
            self.fail(Fault::BadMask {
                thread: self.thread_id(),
                site,
                why: format!(
                    "its mask {mask:#010x} names lanes {} that the block does not have",
                    ranges((0..32).filter(|l| (mask & !present) & (1 << l) != 0))
                ),
            });
        }
        self.thread().site.set(Some(site));
        self.forget_spin();
        let done = {
            let mut w = self.warps[warp as usize].borrow_mut();
            let i = match w.rounds.iter().position(|r| r.mask == mask && r.kind == kind && r.arrived & bit == 0) {
                Some(i) => i,
                None => {
                    w.rounds.push(Round { mask, kind, arrived: 0, values: [0; 32], b: [0; 32], c: [0; 32] });
                    w.rounds.len() - 1
                }
            };
            let r = &mut w.rounds[i];
            r.arrived |= bit;
            r.values[lane as usize] = value;
            r.b[lane as usize] = b;
            r.c[lane as usize] = c;
            if r.arrived == mask { Some(w.rounds.remove(i)) } else { None }
        };
        match done {
            Some(round) => {
                self.finish_round(warp, &round);
                self.thread().mailbox.get()
            }
            None => {
                self.thread().wait.set(Wait::Collective);
                self.suspend();
                self.thread().mailbox.get()
            }
        }
    }

    /// Hands each lane of a completed round its result and wakes the others.
    fn finish_round(&self, warp: u32, r: &Round) {
        let me = self.current.get();
        let mut results = [0u32; 32];
        for (lane, result) in results.iter_mut().enumerate() {
            if r.mask & (1 << lane) == 0 {
                continue;
            }
            *result = match r.kind {
                Kind::Sync => 0,
                Kind::Ballot => (0..32).filter(|&l| r.mask & (1 << l) != 0 && r.values[l] != 0).fold(0, |m, l| m | 1 << l),
                Kind::Shfl(mode) => match shfl_source(lane as u32, mode, r.b[lane], r.c[lane]) {
                    Some(j) if r.mask & (1 << j) != 0 => r.values[j as usize],
                    Some(j) => {
                        let tid = 32 * warp + lane as u32;
                        let site = self.threads[tid as usize].site.get().expect("a lane in a round has a site");
                        self.set_fault(Fault::BadMask {
                            thread: ThreadId { block: self.id, thread: tid },
                            site,
                            why: format!("the shuffle reads lane {j}, which is not in its mask {:#010x} (undefined on a GPU)", r.mask),
                        });
                        r.values[lane]
                    }
                    None => r.values[lane],
                },
            };
        }
        if r.kind == Kind::Sync {
            self.warps[warp as usize].borrow_mut().syncs.push(r.mask);
        }
        for lane in 0..32u32 {
            if r.mask & (1 << lane) != 0 {
                let tid = 32 * warp + lane;
                self.threads[tid as usize].mailbox.set(results[lane as usize]);
                if tid != me {
                    self.make_runnable(tid);
                }
            }
        }
    }

    /// `activemask` for the current thread: the lanes of its warp that reach
    /// this call site while no lane of the warp can run anything else.
    pub fn active_mask(&self, site: Site) -> u32 {
        self.thread().site.set(Some(site));
        self.thread().wait.set(Wait::ActiveMask(site.location as *const _ as usize));
        self.suspend();
        self.thread().mailbox.get()
    }

    /// A thread has returned: barriers stop waiting for it.
    fn exited(&self, tid: u32) {
        self.threads[tid as usize].wait.set(Wait::Exited);
        self.live.set(self.live.get() - 1);
        self.complete_barrier_if_full();
        self.resolve_active_masks(tid / 32);
    }

    /// Groups the lanes waiting in `activemask` once nothing else in their warp can run.
    fn resolve_active_masks(&self, warp: u32) {
        let lanes = self.warp_lanes(warp);
        if lanes.clone().any(|t| matches!(self.threads[t as usize].wait.get(), Wait::Runnable | Wait::Running)) {
            return;
        }
        let mut groups: BTreeMap<usize, u32> = BTreeMap::new();
        for t in lanes.clone() {
            if let Wait::ActiveMask(key) = self.threads[t as usize].wait.get() {
                *groups.entry(key).or_default() |= 1 << (t % 32);
            }
        }
        for mask in groups.into_values() {
            for t in lanes.clone().filter(|t| mask & (1 << (t % 32)) != 0) {
                self.threads[t as usize].mailbox.set(mask);
                self.make_runnable(t);
            }
        }
    }

    // ---- memory ----

    fn now(&self, site: Site) -> Touched {
        let tid = self.current.get();
        Touched { thread: tid, epoch: self.epoch.get(), warp_syncs: self.warps[(tid / 32) as usize].borrow().syncs.len() as u32, site }
    }

    /// Checks an access against a word's shadow; the race, if any, to fail with
    /// once no borrow is held.
    fn check(&self, shadow: &mut Shadow, access: Access, site: Site, word: impl Fn() -> String) -> Option<Fault> {
        let syncs = |w: u32| self.warps[w as usize].borrow().syncs.clone();
        let now = Now { block: self.id, touched: self.now(site), warp_syncs: &syncs };
        match access {
            Access::Read => shadow.read(&now, word),
            Access::Write => shadow.write(&now, word),
        }
        .err()
    }

    /// Counts a read of `key`; a thread that reads one word [`SPIN_READS`]
    /// times in a row waits until something in its block writes it.
    fn note_read(&self, key: u64, word: impl Fn() -> String) {
        let t = self.thread();
        let (last, n) = t.spin.get();
        let n = if last == key { n + 1 } else { 1 };
        t.spin.set((key, n));
        if n >= SPIN_READS {
            *t.spin_word.borrow_mut() = word();
            t.wait.set(Wait::Spin);
            self.suspend();
            t.spin.set((key, 0));
        }
    }

    fn forget_spin(&self) {
        self.thread().spin.set((u64::MAX, 0));
    }

    fn wake_spinners(&self, key: u64) {
        for (t, th) in self.threads.iter().enumerate() {
            if th.wait.get() == Wait::Spin && th.spin.get().0 == key {
                self.make_runnable(t as u32);
            }
        }
    }

    fn shared_word_range(&self, index: usize, size: usize, access: Access, site: Site) -> std::ops::Range<usize> {
        let start = index.checked_mul(size);
        match start.and_then(|s| s.checked_add(size)) {
            Some(end) if end <= self.shared.bytes => start.unwrap() / 4..end.div_ceil(4),
            _ => self.fail(Fault::OutOfBounds {
                thread: self.thread_id(),
                site,
                buffer: "dynamic shared memory".to_string(),
                index,
                len: self.shared.bytes / size,
                access,
                note: Some(format!(
                    "{size}-byte elements; the launch gave {} bytes, as the kernel's #[kernel(shared_memory = ...)] function sized it",
                    self.shared.bytes
                )),
            }),
        }
    }

    /// The words of a shared-memory access, after checking its bounds and
    /// recording it in the race shadow (a race is reported here).
    fn shared_access(&self, index: usize, size: usize, access: Access, site: Site) -> std::ops::Range<usize> {
        let words = self.shared_word_range(index, size, access, site);
        let race = {
            let mut shadow = self.shared.shadow.borrow_mut();
            words.clone().find_map(|w| self.check(&mut shadow[w], access, site, || format!("dynamic shared memory word {w} (bytes {}..{})", 4 * w, 4 * w + 4)))
        };
        if let Some(f) = race {
            self.race_found(f);
        }
        words
    }

    /// The key a spinning thread waits on for shared word `word`.
    fn shared_key(word: usize) -> u64 {
        u64::MAX - word as u64
    }

    /// The key a spinning thread waits on for `Out` parameter `slot`'s element `index`.
    fn global_key(slot: u32, index: usize) -> u64 {
        ((slot as u64) << 48) | index as u64
    }

    pub fn shared_read(&self, index: usize, size: usize, site: Site) -> u64 {
        let words = self.shared_access(index, size, Access::Read, site);
        self.note_read(Self::shared_key(words.start), || format!("dynamic shared memory word {}", words.start));
        // SAFETY: only this block's threads touch its shared memory, one at a time.
        let mem = unsafe { &*self.shared.words.get() };
        if size == 8 { mem[words.start] as u64 | (mem[words.start + 1] as u64) << 32 } else { mem[words.start] as u64 }
    }

    pub fn shared_write(&self, index: usize, size: usize, bits: u64, site: Site) {
        let words = self.shared_access(index, size, Access::Write, site);
        self.forget_spin();
        // SAFETY: as in `shared_read`.
        let mem = unsafe { &mut *self.shared.words.get() };
        mem[words.start] = bits as u32;
        if size == 8 {
            mem[words.start + 1] = (bits >> 32) as u32;
        }
        self.wake_spinners(Self::shared_key(words.start));
    }

    pub fn global_read(&self, slot: u32, name: &str, index: usize, published: &dyn Fn() -> u64, site: Site) -> u64 {
        let key = (slot, index);
        let race = {
            let mut g = self.global.borrow_mut();
            self.check(g.shadow.entry(key).or_default(), Access::Read, site, || format!("{name}[{index}]"))
        };
        if let Some(f) = race {
            self.race_found(f);
        }
        self.note_read(Self::global_key(slot, index), || format!("{name}[{index}]"));
        let mut g = self.global.borrow_mut();
        match g.writes.get(&key) {
            Some(&(bits, _)) => bits,
            None => {
                g.reads.entry(key).or_insert(site);
                published()
            }
        }
    }

    pub fn global_write(&self, slot: u32, name: &str, index: usize, bits: u64, site: Site) {
        let key = (slot, index);
        let race = {
            let mut g = self.global.borrow_mut();
            let race = self.check(g.shadow.entry(key).or_default(), Access::Write, site, || format!("{name}[{index}]"));
            g.writes.entry(key).and_modify(|w| w.0 = bits).or_insert((bits, site));
            race
        };
        if let Some(f) = race {
            self.race_found(f);
        }
        self.forget_spin();
        self.wake_spinners(Self::global_key(slot, index));
    }

    // ---- reports ----

    /// `lanes 16-31 exited; lane 5 waits at X`: `tids` grouped by what they do,
    /// numbered as threads of the block or, with `lanes`, as lanes of their warp.
    fn describe_groups(&self, tids: &[u32], lanes: bool) -> String {
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

    /// Why a block whose run queue is empty cannot go on.
    fn deadlock(&self) -> Fault {
        let kernel = self.info().launch.kernel;
        let waiting = |w: Wait| -> Vec<u32> { (0..self.threads.len() as u32).filter(|&t| self.threads[t as usize].wait.get() == w).collect() };
        let site_of = |t: u32| self.threads[t as usize].site.get().map_or_else(|| "an unknown place".to_string(), |s| s.to_string());
        // A warp collective that not every lane it names reached.
        for (w, warp) in self.warps.iter().enumerate() {
            let warp = warp.borrow();
            if let Some(r) = warp.rounds.first() {
                let lanes = |m: u32| ranges((0..32).filter(|l| m & (1 << l) != 0));
                let first = 32 * w as u32 + r.arrived.trailing_zeros();
                let missing: Vec<u32> = (0..32).filter(|l| r.mask & !r.arrived & (1 << l) != 0).map(|l| 32 * w as u32 + l).collect();
                return Fault::Deadlock(format!(
                    "in {kernel}, lanes {} of warp {w} in block {} called {} over lanes {}, while {}",
                    lanes(r.arrived),
                    self.id,
                    site_of(first),
                    lanes(r.mask),
                    self.describe_groups(&missing, true)
                ));
            }
        }
        let at_barrier = waiting(Wait::BlockBarrier);
        if !at_barrier.is_empty() {
            let others: Vec<u32> = (0..self.threads.len() as u32).filter(|t| !at_barrier.contains(t)).collect();
            return Fault::Deadlock(format!(
                "in {kernel}, threads {} of block {} wait at {} for the block's other threads, while {}",
                ranges(at_barrier.iter().copied()),
                self.id,
                site_of(at_barrier[0]),
                self.describe_groups(&others, false)
            ));
        }
        if let Some(&t) = waiting(Wait::Spin).first() {
            return Fault::Deadlock(format!(
                "in {kernel}, thread {t} of block {} keeps reading {}, which nothing in its block writes (other blocks' writes are seen only after grid.sync())",
                self.id,
                self.threads[t as usize].spin_word.borrow()
            ));
        }
        let at_grid = waiting(Wait::Grid);
        if !at_grid.is_empty() && self.threads[0].wait.get() == Wait::Exited {
            return Fault::Deadlock(format!(
                "in {kernel}, threads {} of block {} reached {} but its thread 0 had exited: thread 0 of each block is the one that arrives at the grid barrier",
                ranges(at_grid.iter().copied()),
                self.id,
                site_of(at_grid[0])
            ));
        }
        Fault::Deadlock(format!("in {kernel}, block {} cannot go on", self.id))
    }
}

fn splitmix(state: u64) -> u64 {
    let mut z = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

type Co = Coroutine<(), (), (), SlotStack>;

/// How a block's run ended.
pub(crate) enum Outcome {
    /// Every live thread waits at `grid.sync()`.
    Parked,
    /// Every thread returned.
    Done,
    Faulted(Fault),
}

/// A block with its threads' coroutines and, while parked, their stacks.
pub(crate) struct BlockRun {
    pub block: Box<Block>,
    coroutines: Vec<Option<Co>>,
    saved: Vec<Option<Saved>>,
    /// The grid barrier generation it parked at.
    pub generation: u32,
    pub site: Option<Site>,
}

impl BlockRun {
    pub fn new(id: u32, place: u32, info: &LaunchInfo) -> BlockRun {
        let threads = info.launch.threads as usize;
        BlockRun {
            block: Box::new(Block::new(id, place, info)),
            coroutines: (0..threads).map(|_| None).collect(),
            saved: (0..threads).map(|_| None).collect(),
            generation: 0,
            site: None,
        }
    }

    /// Runs the block's threads until none can run; `slots` holds their stacks.
    pub fn run(&mut self, slots: &Slots) -> Outcome {
        let b = &*self.block;
        CURRENT.with(|c| c.set(b));
        super::thread::reset_budget();
        let outcome = self.schedule(slots);
        CURRENT.with(|c| c.set(std::ptr::null()));
        outcome
    }

    /// After the grid barrier: puts the stacks back and lets the threads go on.
    pub fn release(&mut self, slots: &Slots) {
        let b = &*self.block;
        b.epoch.set(b.epoch.get() + 1);
        // The grid has published this block's writes; the new phase starts clean.
        *b.global.borrow_mut() = Global::default();
        for t in 0..b.threads.len() {
            if let Some(saved) = self.saved[t].take() {
                slots.stack(t).restore(&saved);
            }
            if b.threads[t].wait.get() == Wait::Grid {
                b.make_runnable(t as u32);
            }
        }
    }

    fn schedule(&mut self, slots: &Slots) -> Outcome {
        let b = &*self.block;
        let info = b.info();
        loop {
            if let Some(f) = b.fault.borrow().clone() {
                return Outcome::Faulted(b.ending(f));
            }
            if info.aborted() {
                return Outcome::Faulted(Fault::Timeout { seconds: info.timeout_s });
            }
            let next = {
                let mut q = b.queue.borrow_mut();
                if info.seed.is_some() && q.len() > 1 {
                    let i = (b.random() % q.len() as u64) as usize;
                    q.swap_remove_back(i)
                } else {
                    q.pop_front()
                }
            };
            let Some(tid) = next else { break };
            b.current.set(tid);
            b.threads[tid as usize].wait.set(Wait::Running);
            let co = self.coroutines[tid as usize].get_or_insert_with(|| {
                Coroutine::with_stack(slots.stack(tid as usize), move |yielder: &Yielder<(), ()>, ()| {
                    let block = CURRENT.with(|c| c.get());
                    // SAFETY: the scheduler sets CURRENT to this block before resuming any of its threads.
                    let block = unsafe { &*block };
                    block.thread().yielder.set(yielder);
                    let info = block.info();
                    (info.launch.entry)(info.launch.args);
                })
            });
            let result = super::launch::catching_panics(|| co.resume(()));
            match result {
                Ok(CoroutineResult::Return(())) => self.block.exited(tid),
                Ok(CoroutineResult::Yield(())) => {
                    let b = &*self.block;
                    if b.threads[tid as usize].wait.get() == Wait::Running {
                        // Preempted (a seeded interleaving): back in the queue.
                        b.make_runnable(tid);
                    }
                    b.resolve_active_masks(tid / 32);
                }
                Err(message) => {
                    self.block.set_fault(Fault::Panic { thread: ThreadId { block: self.block.id, thread: tid }, message });
                }
            }
        }
        let b = &*self.block;
        if let Some(f) = b.fault.borrow().clone() {
            return Outcome::Faulted(b.ending(f));
        }
        let states: Vec<Wait> = b.threads.iter().map(|t| t.wait.get()).collect();
        let deadlocked = !states.iter().all(|&w| matches!(w, Wait::Exited | Wait::Grid));
        if let Some(race) = b.race().filter(|_| !deadlocked) {
            return Outcome::Faulted(race);
        }
        if states.iter().all(|&w| w == Wait::Exited) {
            return Outcome::Done;
        }
        if states.iter().all(|&w| matches!(w, Wait::Exited | Wait::Grid)) && states[0] == Wait::Grid {
            let sites: Vec<(u32, Site)> = (0..states.len() as u32)
                .filter(|&t| states[t as usize] == Wait::Grid)
                .filter_map(|t| b.threads[t as usize].site.get().map(|s| (t, s)))
                .collect();
            if sites.iter().any(|(_, s)| s.location != sites[0].1.location) {
                let tids: Vec<u32> = sites.iter().map(|(t, _)| *t).collect();
                return Outcome::Faulted(Fault::DivergentBarrier { block: b.id, what: b.describe_groups(&tids, false) });
            }
            for (t, state) in states.iter().enumerate() {
                if *state == Wait::Grid {
                    self.saved[t] = Some(slots.stack(t).save(b.threads[t].mark.get()));
                }
            }
            self.site = Some(sites[0].1);
            return Outcome::Parked;
        }
        Outcome::Faulted(b.deadlock())
    }
}

impl Drop for BlockRun {
    fn drop(&mut self) {
        // A coroutine still suspended (its block faulted, or the launch ended
        // without it) must not be unwound: its stack may no longer be in its
        // slot. It never runs again, so leaking it is sound.
        for co in self.coroutines.iter_mut().filter_map(Option::take) {
            if !co.done() {
                std::mem::forget(co);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cg::lanes::shfl_c;

    #[test]
    fn shuffle_sources_follow_the_ptx_rules() {
        // Whole warp: down and xor stay inside 0..32, idx picks the lane.
        assert_eq!(shfl_source(3, Mode::Down, 16, shfl_c(32, false)), Some(19));
        assert_eq!(shfl_source(20, Mode::Down, 16, shfl_c(32, false)), None);
        assert_eq!(shfl_source(5, Mode::Bfly, 1, shfl_c(32, false)), Some(4));
        assert_eq!(shfl_source(7, Mode::Idx, 0, shfl_c(32, false)), Some(0));
        assert_eq!(shfl_source(2, Mode::Up, 1, shfl_c(32, true)), Some(1));
        assert_eq!(shfl_source(0, Mode::Up, 1, shfl_c(32, true)), None);
        // Tiles of 8: lane 13 is rank 5 of the tile at lanes 8..16.
        assert_eq!(shfl_source(13, Mode::Down, 2, shfl_c(8, false)), Some(15));
        assert_eq!(shfl_source(13, Mode::Down, 3, shfl_c(8, false)), None);
        assert_eq!(shfl_source(13, Mode::Idx, 1, shfl_c(8, false)), Some(9));
        assert_eq!(shfl_source(13, Mode::Bfly, 4, shfl_c(8, false)), Some(9));
        assert_eq!(shfl_source(9, Mode::Up, 2, shfl_c(8, true)), None);
        assert_eq!(shfl_source(11, Mode::Up, 2, shfl_c(8, true)), Some(9));
    }

    #[test]
    fn out_of_range_shuffle_operands_use_their_low_five_bits() {
        // idx: source 37 is lane 5; in a tile of 8, 11 is rank 3 of the tile.
        assert_eq!(shfl_source(9, Mode::Idx, 37, shfl_c(32, false)), Some(5));
        assert_eq!(shfl_source(13, Mode::Idx, 11, shfl_c(8, false)), Some(11));
        // down by 33 is down by 1; xor with 35 is xor with 3.
        assert_eq!(shfl_source(4, Mode::Down, 33, shfl_c(32, false)), Some(5));
        assert_eq!(shfl_source(4, Mode::Bfly, 35, shfl_c(32, false)), Some(7));
        // up by 34 is up by 2.
        assert_eq!(shfl_source(4, Mode::Up, 34, shfl_c(32, true)), Some(2));
    }
}
