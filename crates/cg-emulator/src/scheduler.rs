//! The scheduler: runs a block's threads as coroutines on one worker until
//! every one has returned, waits at `grid.sync()`, waits for something
//! that cannot happen, or polls memory that only another block can change
//! while the worker has another block to run.

use crate::block::{Block, CHECKS_INIT, CURRENT};
use crate::fault::{Fault, Site, ThreadId};
use crate::info::LaunchInfo;
use crate::shared::Global;
use crate::stack::{Saved, SlotStack, Slots};
use crate::warp::Wait;
use corosensei::{Coroutine, CoroutineResult, Yielder};

type Co = Coroutine<(), (), (), SlotStack>;

/// How a block's run ended.
pub(crate) enum Outcome {
    /// Every live thread waits at `grid.sync()`.
    Parked,
    /// Every live thread waits at the cluster barrier.
    ParkedCluster,
    /// Every live thread polls a word that another block may change, or
    /// waits for one that does, and the worker has other blocks to run:
    /// the block gives way, its stacks saved, and runs again later.
    Polling,
    /// Every thread returned.
    Done,
    Faulted(Fault),
}

/// A block with its threads' coroutines and, while parked, their stacks.
pub(crate) struct BlockRun {
    pub block: Box<Block>,
    coroutines: Vec<Option<Co>>,
    saved: Vec<Option<Saved>>,
    /// The grid barrier's word as it read before this block's arrival
    /// (`cg::barrier`: the block is released when the word's top bit flips).
    pub arrived_at: u32,
    pub site: Option<Site>,
    /// Parked at the cluster barrier: the cluster's generation when it arrived.
    pub cluster_generation: Option<u32>,
    /// It gave its worker way while polling (`Outcome::Polling`).
    pub polling: bool,
}

impl BlockRun {
    pub fn new(id: u32, place: u32, info: &LaunchInfo, seat: Option<super::cluster::Seat>) -> BlockRun {
        let threads = info.launch.threads as usize;
        BlockRun {
            block: Box::new(Block::new(id, place, info, seat)),
            coroutines: (0..threads).map(|_| None).collect(),
            saved: (0..threads).map(|_| None).collect(),
            arrived_at: 0,
            site: None,
            cluster_generation: None,
            polling: false,
        }
    }

    /// Runs the block's threads until none can run; `slots` holds their
    /// stacks. `elsewhere` says whether the worker has another block to run.
    pub fn run(&mut self, slots: &Slots, elsewhere: &dyn Fn() -> bool) -> Outcome {
        let b = &*self.block;
        CURRENT.with(|c| c.set(b));
        CHECKS_INIT.with(|c| c.set(!b.info().shadows.is_empty()));
        super::clock::reset_budget();
        let outcome = self.schedule(slots, elsewhere);
        self.block.account();
        CURRENT.with(|c| c.set(std::ptr::null()));
        CHECKS_INIT.with(|c| c.set(false));
        outcome
    }

    /// After the grid barrier or its cluster's: applies the cluster's writes
    /// to its shared memory, takes the cluster's new view, puts the stacks
    /// back and lets the threads go on.
    pub fn release(&mut self, slots: &Slots, writes: Vec<(usize, u32)>, view: Option<std::sync::Arc<super::cluster::View>>) {
        let b = &*self.block;
        b.epoch.set(b.epoch.get() + 1);
        // A barrier completed: the block's budget of work starts again (`crate::watch`).
        b.barrier_completed(b.live.get() as u64);
        if self.cluster_generation.take().is_none() {
            // The grid has published this block's writes; the new phase starts clean.
            *b.global.borrow_mut() = Global::default();
        }
        // SAFETY: the block's threads are all parked; nothing else touches its memory.
        let mem = unsafe { &mut *b.shared.words.get() };
        for (word, bits) in writes {
            mem[word] = bits;
            b.shared.mark_written(4 * word, 4);
        }
        if let (Some(seat), Some(view)) = (&b.seat, view) {
            *seat.view.borrow_mut() = view;
        }
        for t in 0..b.threads.len() {
            if let Some(saved) = self.saved[t].take() {
                // SAFETY: this worker runs no coroutine now, and `saved` is
                // thread t's stack, saved from slot t when its block parked.
                unsafe { slots.stack(t).restore(&saved) };
            }
            if matches!(b.threads[t].wait.get(), Wait::Grid | Wait::Cluster) {
                b.make_runnable(t as u32);
            }
        }
    }

    /// After `Outcome::Polling`: puts the stacks back and lets the polling threads poll again.
    pub fn resume(&mut self, slots: &Slots) {
        self.polling = false;
        let b = &*self.block;
        for t in 0..b.threads.len() {
            if let Some(saved) = self.saved[t].take() {
                // SAFETY: as in `release`.
                unsafe { slots.stack(t).restore(&saved) };
            }
            if b.threads[t].wait.get() == Wait::Poll {
                b.make_runnable(t as u32);
            }
        }
    }

    /// The block's shared memory, and its cluster accesses since it last went on.
    pub fn cluster_publication(&self) -> (Vec<u32>, super::cluster::Phase) {
        let b = &*self.block;
        // SAFETY: as in `release`.
        let words = unsafe { &*b.shared.words.get() }.to_vec();
        let phase = b.seat.as_ref().map(|s| std::mem::take(&mut *s.phase.borrow_mut())).unwrap_or_default();
        (words, phase)
    }

    fn schedule(&mut self, slots: &Slots, elsewhere: &dyn Fn() -> bool) -> Outcome {
        let b = &*self.block;
        let info = b.info();
        loop {
            if b.queue.borrow().is_empty() && b.fault.borrow().is_none() && b.threads.iter().any(|t| t.wait.get() == Wait::Poll) {
                // Every thread that can run polls: give the worker way to
                // another block, which may be the one that changes the
                // word; else poll again.
                if elsewhere() {
                    for (t, th) in b.threads.iter().enumerate() {
                        if th.wait.get() != Wait::Exited {
                            self.saved[t] = Some(slots.stack(t).save(th.mark.get()));
                        }
                    }
                    self.polling = true;
                    return Outcome::Polling;
                }
                (0..b.threads.len() as u32).filter(|&t| b.threads[t as usize].wait.get() == Wait::Poll).for_each(|t| b.make_runnable(t));
            }
            if let Some(f) = b.fault.borrow().clone() {
                return Outcome::Faulted(b.ending(f));
            }
            if info.aborted() {
                return Outcome::Faulted(b.stopped(None));
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
            let result = super::info::catching_panics(|| co.resume(()));
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
        if states.iter().all(|&w| matches!(w, Wait::Exited | Wait::Cluster)) && states.contains(&Wait::Cluster) {
            for (t, state) in states.iter().enumerate() {
                if *state == Wait::Cluster {
                    self.saved[t] = Some(slots.stack(t).save(b.threads[t].mark.get()));
                }
            }
            self.site = (0..states.len()).find(|&t| states[t] == Wait::Cluster).and_then(|t| b.threads[t].site.get());
            return Outcome::ParkedCluster;
        }
        if states.iter().all(|&w| matches!(w, Wait::Exited | Wait::Grid)) && states[0] == Wait::Grid {
            let sites: Vec<(u32, Site)> = (0..states.len() as u32)
                .filter(|&t| states[t as usize] == Wait::Grid)
                .filter_map(|t| b.threads[t as usize].site.get().map(|s| (t, s)))
                .collect();
            if sites.iter().any(|(_, s)| s.apart(&sites[0].1)) {
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
