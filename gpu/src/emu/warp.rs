//! An emulated warp: the lanes' states, and the rendezvous that shuffles,
//! votes and `activemask` need.

use super::thread::{ThreadCtx, unwind_aborted};
use std::sync::{Condvar, Mutex, MutexGuard};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Status {
    /// Not part of the block (a partial last warp).
    Absent,
    Running,
    /// Waiting in a barrier or a collective.
    Blocked,
    /// Waiting in `activemask` at this call site.
    At(usize),
    Exited,
}

/// One collective call over the lanes of `mask`.
struct Round {
    mask: u32,
    values: [u32; 32],
    arrived: u32,
    complete: bool,
    unread: u32,
}

/// An `activemask` result waiting to be picked up by its lanes.
struct Group {
    site: usize,
    mask: u32,
    unclaimed: u32,
}

struct State {
    status: [Status; 32],
    rounds: Vec<Round>,
    groups: Vec<Group>,
    /// Lanes waiting in `active_mask`: only they care about status changes.
    at_mask: u32,
}

pub(crate) struct Warp {
    state: Mutex<State>,
    cv: Condvar,
}

impl Warp {
    pub fn new(lanes: u32) -> Warp {
        let mut status = [Status::Absent; 32];
        for s in status.iter_mut().take(lanes as usize) {
            *s = Status::Running;
        }
        Warp { state: Mutex::new(State { status, rounds: Vec::new(), groups: Vec::new(), at_mask: 0 }), cv: Condvar::new() }
    }

    pub fn set(&self, lane: u32, status: Status) {
        let mut st = self.state.lock().unwrap();
        Self::set_in(&self.cv, &mut st, lane, status);
    }

    /// Changes a lane's status, waking the lanes that wait on statuses.
    fn set_in(cv: &Condvar, st: &mut State, lane: u32, status: Status) {
        st.status[lane as usize] = status;
        if st.at_mask != 0 {
            cv.notify_all();
        }
    }

    /// Sleeps until notified, unwinding instead if the launch was aborted.
    fn wait<'a>(&'a self, t: &ThreadCtx, st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        if t.abort.load(std::sync::atomic::Ordering::Acquire) {
            drop(st);
            unwind_aborted()
        }
        self.cv.wait(st).unwrap()
    }

    /// Wakes every waiter (the launch was aborted).
    pub fn wake_all(&self) {
        let _st = self.state.lock().unwrap();
        self.cv.notify_all();
    }

    /// Every lane of `mask` deposits a value; each gets all of them back.
    pub fn exchange(&self, t: &ThreadCtx, mask: u32, value: u32) -> [u32; 32] {
        let bit = 1u32 << t.lane;
        let mut st = self.state.lock().unwrap();
        Self::set_in(&self.cv, &mut st, t.lane, Status::Blocked);
        loop {
            if let Some(r) = st.rounds.iter_mut().find(|r| r.mask == mask && !r.complete && r.arrived & bit == 0) {
                r.values[t.lane as usize] = value;
                r.arrived |= bit;
                if r.arrived == mask {
                    r.complete = true;
                    r.unread = mask;
                    self.cv.notify_all();
                }
                break;
            }
            if st.rounds.iter().any(|r| r.mask == mask) {
                st = self.wait(t, st);
            } else {
                st.rounds.push(Round { mask, values: [0; 32], arrived: 0, complete: false, unread: 0 });
            }
        }
        loop {
            let i = st.rounds.iter().position(|r| r.mask == mask && r.complete && r.unread & bit != 0);
            if let Some(i) = i {
                let values = st.rounds[i].values;
                st.rounds[i].unread &= !bit;
                if st.rounds[i].unread == 0 {
                    // Lanes may be waiting to start the next round on this mask.
                    st.rounds.remove(i);
                    self.cv.notify_all();
                }
                Self::set_in(&self.cv, &mut st, t.lane, Status::Running);
                return values;
            }
            st = self.wait(t, st);
        }
    }

    /// The lanes that reach call site `site` together: once no lane of the
    /// warp is still running, every lane waiting at `site` forms the group.
    pub fn active_mask(&self, t: &ThreadCtx, site: usize) -> u32 {
        let bit = 1u32 << t.lane;
        let mut st = self.state.lock().unwrap();
        st.at_mask |= bit;
        Self::set_in(&self.cv, &mut st, t.lane, Status::At(site));
        loop {
            if let Some(i) = st.groups.iter().position(|g| g.site == site && g.unclaimed & bit != 0) {
                let mask = st.groups[i].mask;
                st.groups[i].unclaimed &= !bit;
                if st.groups[i].unclaimed == 0 {
                    st.groups.remove(i);
                }
                st.at_mask &= !bit;
                return mask;
            }
            if !st.status.contains(&Status::Running) {
                let mask = (0..32).filter(|&l| st.status[l] == Status::At(site)).fold(0u32, |m, l| m | 1 << l);
                for l in 0..32 {
                    if mask & (1 << l) != 0 {
                        st.status[l] = Status::Running;
                    }
                }
                st.groups.push(Group { site, mask, unclaimed: mask });
                self.cv.notify_all();
                continue;
            }
            st = self.wait(t, st);
        }
    }
}
