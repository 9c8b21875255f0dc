//! An emulated warp: the lanes' states, and the rendezvous that shuffles,
//! votes and `activemask` need.

use super::thread::{POLL, ThreadCtx, check_abort};
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
        Warp { state: Mutex::new(State { status, rounds: Vec::new(), groups: Vec::new() }), cv: Condvar::new() }
    }

    pub fn set(&self, lane: u32, status: Status) {
        self.state.lock().unwrap().status[lane as usize] = status;
        self.cv.notify_all();
    }

    /// Sleeps until notified or the poll interval passes, then checks for abort.
    fn wait<'a>(&'a self, t: &ThreadCtx, st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        let st = self.cv.wait_timeout(st, POLL).unwrap().0;
        drop(st);
        check_abort(t);
        self.state.lock().unwrap()
    }

    /// Every lane of `mask` deposits a value; each gets all of them back.
    pub fn exchange(&self, t: &ThreadCtx, mask: u32, value: u32) -> [u32; 32] {
        let bit = 1u32 << t.lane;
        let mut st = self.state.lock().unwrap();
        st.status[t.lane as usize] = Status::Blocked;
        self.cv.notify_all();
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
                    st.rounds.remove(i);
                }
                st.status[t.lane as usize] = Status::Running;
                self.cv.notify_all();
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
        st.status[t.lane as usize] = Status::At(site);
        self.cv.notify_all();
        loop {
            if let Some(i) = st.groups.iter().position(|g| g.site == site && g.unclaimed & bit != 0) {
                let mask = st.groups[i].mask;
                st.groups[i].unclaimed &= !bit;
                if st.groups[i].unclaimed == 0 {
                    st.groups.remove(i);
                }
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
