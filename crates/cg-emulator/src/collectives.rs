//! A block's warp collectives: shuffles, votes, matches, `bar.warp.sync`
//! and `activemask`, each a round the warp's named lanes join.

use crate::block::Block;
use crate::fault::{Fault, Site, ThreadId, numbered};
use crate::warp::{Kind, Round, Wait, shfl_source};
use std::collections::BTreeMap;

impl Block {
    // ---- warp collectives ----

    /// One collective over the lanes of `mask` (this lane among them); returns this lane's result.
    pub fn collective(&self, kind: Kind, mask: u32, value: u64, b: u32, c: u32, site: Site) -> u32 {
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
                    "its mask {mask:#010x} names {} that the block does not have",
                    numbered("lane", (0..32).filter(|l| (mask & !present) & (1 << l) != 0))
                ),
            });
        }
        self.thread().site.set(Some(site));
        self.forget_spin();
        // Work over the block's life, for the backstop (crate::watch).
        self.lifetime.set(self.lifetime.get() + super::watch::COLLECTIVE_STEPS);
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
                // A round in which a lane is polling (its last atomic
                // repeated the one before: the vote of a warp that waits on
                // words, one a lane) is part of that wait: its arrivals count
                // as polls, for the watchdog's budget of polls.
                if (0..32).any(|l| round.mask & (1 << l) != 0 && self.threads[(32 * warp + l) as usize].poll.get().repeats > 0) {
                    super::clock::polls_made(u64::from(round.mask.count_ones()) * super::watch::COLLECTIVE_STEPS / super::watch::POLL_STEPS);
                }
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
    pub(crate) fn finish_round(&self, warp: u32, r: &Round) {
        let me = self.current.get();
        let mut results = [0u32; 32];
        for (lane, result) in results.iter_mut().enumerate() {
            if r.mask & (1 << lane) == 0 {
                continue;
            }
            *result = match r.kind {
                Kind::Sync => 0,
                Kind::Ballot => (0..32).filter(|&l| r.mask & (1 << l) != 0 && r.values[l] != 0).fold(0, |m, l| m | 1 << l),
                // The lanes of the mask whose value is this lane's (a
                // 32-bit match compares the low words, all it was given).
                Kind::MatchAny { .. } => (0..32).filter(|&l| r.mask & (1 << l) != 0 && r.values[l] == r.values[lane]).fold(0, |m, l| m | 1 << l),
                Kind::MatchAll { .. } => {
                    if (0..32).all(|l| r.mask & (1 << l) == 0 || r.values[l] == r.values[lane]) {
                        r.mask
                    } else {
                        0
                    }
                }
                Kind::Shfl(mode) => match shfl_source(lane as u32, mode, r.b[lane], r.c[lane]) {
                    Some(j) if r.mask & (1 << j) != 0 => r.values[j as usize] as u32,
                    Some(j) => {
                        let tid = 32 * warp + lane as u32;
                        let site = self.threads[tid as usize].site.get().expect("a lane in a round has a site");
                        self.set_fault(Fault::BadMask {
                            thread: ThreadId { block: self.id, thread: tid },
                            site,
                            why: format!("the shuffle reads lane {j}, which is not in its mask {:#010x} (undefined on a GPU)", r.mask),
                        });
                        r.values[lane] as u32
                    }
                    None => r.values[lane] as u32,
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
    pub(crate) fn exited(&self, tid: u32) {
        self.threads[tid as usize].wait.set(Wait::Exited);
        self.live.set(self.live.get() - 1);
        self.complete_barrier_if_full();
        self.resolve_active_masks(tid / 32);
    }

    /// Groups the lanes waiting in `activemask` once nothing else in their warp can run.
    pub(crate) fn resolve_active_masks(&self, warp: u32) {
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
}
