//! What a block reports when it cannot go on: who waits where, for what.

use crate::block::Block;
use crate::fault::{Doing, Fault, Running, Site, Stall, numbered};
use crate::warp::Wait;

impl Block {
    // ---- reports ----

    /// Of `tids`, those that exited before any barrier or collective (no
    /// place of theirs was ever recorded): a `return` near the top of the
    /// kernel, which takes them out of every collective after it. Empty if none.
    fn returned_early(&self, tids: &[u32], lanes: bool) -> String {
        let early: Vec<u32> =
            tids.iter().copied().filter(|&t| self.threads[t as usize].wait.get() == Wait::Exited && self.threads[t as usize].site.get().is_none()).collect();
        if early.is_empty() {
            return String::new();
        }
        let who = if lanes { numbered("lane", early.iter().map(|t| t % 32)) } else { numbered("thread", early.iter().copied()) };
        format!(
            " ({who} exited before any barrier or collective: a `return` above them, as in `if ... {{ return; }}`, takes them out of every one after it; let them run on with nothing to add instead)"
        )
    }

    /// Why a block whose run queue is empty cannot go on.
    pub(crate) fn deadlock(&self) -> Fault {
        let kernel = self.info().launch.kernel;
        let waiting = |w: Wait| -> Vec<u32> { (0..self.threads.len() as u32).filter(|&t| self.threads[t as usize].wait.get() == w).collect() };
        let site_of = |t: u32| self.threads[t as usize].site.get().map_or_else(|| "an unknown place".to_string(), |s| s.to_string());
        // A warp collective that not every lane it names reached.
        for (w, warp) in self.warps.iter().enumerate() {
            let warp = warp.borrow();
            if let Some(r) = warp.rounds.first() {
                let lanes = |m: u32| numbered("lane", (0..32).filter(|l| m & (1 << l) != 0));
                let first = 32 * w as u32 + r.arrived.trailing_zeros();
                let missing: Vec<u32> = (0..32).filter(|l| r.mask & !r.arrived & (1 << l) != 0).map(|l| 32 * w as u32 + l).collect();
                // Lanes that went on to a block barrier: in one file, a barrier
                // above the collective was reached by some lanes only (it is in
                // a branch), one below it by lanes that skipped the collective.
                let collective = self.threads[first as usize].site.get();
                let barrier = missing
                    .iter()
                    .find(|&&t| self.threads[t as usize].wait.get() == Wait::BlockBarrier)
                    .and_then(|&t| Some((t, self.threads[t as usize].site.get()?)));
                let rule = match (collective, barrier) {
                    (Some(c), Some((t, b))) if c.location.file() == b.location.file() && b.location.line() < c.location.line() => format!(
                        "every thread of the block must reach each block.sync(), and lane {} reached the {b} above the collective while the others went on, so that block.sync() is in a branch that some lanes skip: take it out of the branch",
                        t % 32
                    ),
                    (_, Some((t, b))) if collective.is_none_or(|c| c.location.file() != b.location.file()) => format!(
                        "every lane a collective names must reach it, and every thread of the block each block.sync(), so one of the two is in a branch that some of those lanes skip: the collective, or the {b} that lane {} reached first",
                        t % 32
                    ),
                    _ => "every lane a collective names must reach it, so keep it out of branches that some of those lanes skip".to_string(),
                };
                return Fault::Deadlock(format!(
                    "in {kernel}, {} of warp {w} in block {} called {} over {}, while {}: {rule}{}",
                    lanes(r.arrived),
                    self.id,
                    site_of(first),
                    lanes(r.mask),
                    self.describe_groups(&missing, true),
                    self.returned_early(&missing, true)
                ));
            }
        }
        let at_barrier = waiting(Wait::BlockBarrier);
        if !at_barrier.is_empty() {
            let others: Vec<u32> = (0..self.threads.len() as u32).filter(|t| !at_barrier.contains(t)).collect();
            return Fault::Deadlock(format!(
                "in {kernel}, {} of block {} {} at {} for the block's other threads, while {}: every thread of the block must reach a block barrier, so keep it out of branches that some threads skip{}",
                numbered("thread", at_barrier.iter().copied()),
                self.id,
                if at_barrier.len() == 1 { "waits" } else { "wait" },
                site_of(at_barrier[0]),
                self.describe_groups(&others, false),
                self.returned_early(&others, false)
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
                "in {kernel}, {} of block {} reached {} but its thread 0 had exited: thread 0 of each block is the one that arrives at the grid barrier",
                numbered("thread", at_grid.iter().copied()),
                self.id,
                site_of(at_grid[0])
            ));
        }
        let at_cluster = waiting(Wait::Cluster);
        if !at_cluster.is_empty() {
            let others: Vec<u32> = (0..self.threads.len() as u32).filter(|t| !at_cluster.contains(t)).collect();
            return Fault::Deadlock(format!(
                "in {kernel}, {} of block {} {} at {} for the cluster, while {}: every thread of a cluster arrives at each cluster barrier",
                numbered("thread", at_cluster.iter().copied()),
                self.id,
                if at_cluster.len() == 1 { "waits" } else { "wait" },
                site_of(at_cluster[0]),
                self.describe_groups(&others, false)
            ));
        }
        Fault::Deadlock(format!("in {kernel}, block {} cannot go on", self.id))
    }

    /// The block's part in a launch the watchdog stopped: the thread it last
    /// ran, at the memory access `at` if it stopped there; the launch gathers
    /// every block's part into one fault.
    pub(crate) fn stopped(&self, at: Option<Site>) -> Fault {
        let t = self.thread();
        let poll = t.poll.get();
        let doing = match at {
            Some(site) => match poll.word {
                Some((word, index)) if poll.repeats > 0 => Doing::Poll { site, word, index },
                _ => Doing::Access(site),
            },
            // A thread that has never run has no yielder yet.
            None if self.threads.iter().all(|t| t.yielder.get().is_null()) => Doing::Starting,
            None if t.wait.get() == Wait::Exited => Doing::Between(None),
            // Between polls: where it gave way (`note_poll`).
            None => match (poll.word, t.site.get()) {
                (Some((word, index)), Some(site)) if poll.repeats > 0 => Doing::Poll { site, word, index },
                _ => Doing::Between(t.site.get().or(t.call.get())),
            },
        };
        let running = Running { thread: self.thread_id(), doing, barriers: self.barriers.get(), last_barrier: self.last_barrier.get() };
        Fault::Timeout { seconds: 0.0, stall: Box::new(Stall { running: vec![running], ..Stall::default() }) }
    }
}
