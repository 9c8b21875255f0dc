//! Devices working as a group: the host's own barrier between the threads
//! that drive them ([`Rendezvous`]), and the sum of a buffer across them
//! ([`Communicator`]): NCCL's all-reduce on GPUs, a host-side stand-in on
//! the emulator.

use super::{Gpu, View, ViewMut};
use crate::error::{Error, Result};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// A barrier for the host threads of `ranks` devices (one thread each) that
/// never hangs: a thread that fails calls [`abandon`](Self::abandon), and
/// every wait then fails at once; a wait longer than the timeout fails
/// naming the ranks that never came.
pub struct Rendezvous {
    ranks: u32,
    timeout: Duration,
    state: Mutex<Meeting>,
    changed: Condvar,
}

struct Meeting {
    arrived: Vec<bool>,
    round: u64,
    abandoned_by: Option<u32>,
}

impl Rendezvous {
    /// A meeting point for `ranks` host threads; a wait gives up after `timeout`.
    pub fn new(ranks: u32, timeout: Duration) -> Rendezvous {
        let state = Meeting { arrived: vec![false; ranks as usize], round: 0, abandoned_by: None };
        Rendezvous { ranks, timeout, state: Mutex::new(state), changed: Condvar::new() }
    }

    /// How many ranks meet.
    pub fn ranks(&self) -> u32 {
        self.ranks
    }

    /// Waits until every rank has reached `step`.
    pub fn wait(&self, rank: u32, step: &'static str) -> Result<()> {
        let mut m = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(rank) = m.abandoned_by {
            return Err(Error::PeerStopped { rank });
        }
        m.arrived[rank as usize] = true;
        if m.arrived.iter().all(|&a| a) {
            m.arrived.fill(false);
            m.round += 1;
            self.changed.notify_all();
            return Ok(());
        }
        let (round, start) = (m.round, Instant::now());
        loop {
            let left = self.timeout.saturating_sub(start.elapsed());
            m = self.changed.wait_timeout(m, left).unwrap_or_else(|e| e.into_inner()).0;
            if m.round != round {
                return Ok(());
            }
            if let Some(rank) = m.abandoned_by {
                return Err(Error::PeerStopped { rank });
            }
            if start.elapsed() >= self.timeout {
                let missing = m.arrived.iter().enumerate().filter(|(_, a)| !**a).map(|(r, _)| r as u32).collect();
                m.abandoned_by = Some(rank);
                self.changed.notify_all();
                return Err(Error::RanksDidNotArrive { step, missing, seconds: self.timeout.as_secs_f64() });
            }
        }
    }

    /// Rank `rank` stops: every wait, now and later, fails.
    pub fn abandon(&self, rank: u32) {
        let mut m = self.state.lock().unwrap_or_else(|e| e.into_inner());
        m.abandoned_by.get_or_insert(rank);
        self.changed.notify_all();
    }
}

/// The emulator's stand-in for NCCL's all-reduce, on the host: each rank
/// puts its floats down, all meet, each adds every rank's in rank order.
pub struct StandIn {
    meet: Rendezvous,
    slots: Mutex<Vec<Vec<f32>>>,
}

impl StandIn {
    /// A stand-in communicator for `ranks` emulated GPUs; a wait gives up after `timeout`.
    pub fn new(ranks: u32, timeout: Duration) -> StandIn {
        StandIn { meet: Rendezvous::new(ranks, timeout), slots: Mutex::new(vec![Vec::new(); ranks as usize]) }
    }

    /// Rank `rank`'s floats summed with every other rank's, in rank order.
    pub(crate) fn all_reduce_sum(&self, rank: u32, values: Vec<f32>) -> Result<Vec<f32>> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())[rank as usize] = values;
        self.meet.wait(rank, "the all-reduce")?;
        let sum = {
            let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            let mut sum = vec![0.0f32; slots[rank as usize].len()];
            for s in slots.iter() {
                for (a, b) in sum.iter_mut().zip(s) {
                    *a += b;
                }
            }
            sum
        };
        // No rank writes its next floats before every rank has read these.
        self.meet.wait(rank, "the all-reduce")?;
        Ok(sum)
    }
}

/// What every rank's communicator is made from: an NCCL unique id on GPUs,
/// a shared stand-in on the emulator.
#[derive(Clone)]
pub enum CommId {
    /// An NCCL unique id, for CUDA GPUs.
    Nccl(crate::nccl::UniqueId),
    /// A stand-in shared by the emulated ranks.
    StandIn(Arc<StandIn>),
}

impl CommId {
    /// A new id for `ranks` ranks: NCCL's (this process then answers the
    /// other ranks' joining), or on the emulator a stand-in for this process.
    pub fn new(emulated: bool, ranks: u32, timeout: Duration) -> Result<CommId> {
        if emulated {
            return Ok(CommId::StandIn(Arc::new(StandIn::new(ranks, timeout))));
        }
        crate::nccl::library()?;
        Ok(CommId::Nccl(crate::nccl::UniqueId::new()?))
    }
}

/// One rank's membership of a group that sums buffers across its devices.
pub struct Communicator {
    made_by: super::DeviceKey,
    pub(crate) inner: Comm,
    rank: u32,
}

/// A communicator, by backend.
pub(crate) enum Comm {
    Nccl(crate::nccl::Comm),
    StandIn(Arc<StandIn>),
}

impl Communicator {
    /// This GPU's rank.
    pub fn rank(&self) -> u32 {
        self.rank
    }
}

impl Gpu {
    /// Joins rank `rank` of `ranks` (`ncclCommInitRank`; on the emulator the
    /// stand-in): returns once every rank has joined.
    pub fn communicator(&self, id: &CommId, rank: u32, ranks: u32) -> Result<Communicator> {
        Ok(Communicator { made_by: self.key, inner: self.backend().communicator(id, rank, ranks)?, rank })
    }

    /// Queues the sum across every rank of `src` into `dst` (`ncclAllReduce`,
    /// `ncclSum`); every rank must call it.
    pub fn all_reduce_sum(&self, comm: &Communicator, src: &View<'_, f32>, dst: ViewMut<'_, f32>) -> Result<()> {
        assert_eq!(src.len(), dst.len(), "an all-reduce writes as many floats as it reads");
        self.owns(comm.made_by, "a communicator")?;
        self.check_origin(src.mem.origin)?;
        self.check_origin(dst.mem.origin)?;
        self.backend().all_reduce_sum(comm, src.mem, src.offset * 4, dst.mem, dst.offset * 4, src.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rendezvous_meets_abandons_and_names_who_never_came() {
        let r = Rendezvous::new(3, Duration::from_millis(200));
        std::thread::scope(|s| {
            for rank in 0..3 {
                let r = &r;
                s.spawn(move || r.wait(rank, "a").unwrap());
            }
        });
        let r = Rendezvous::new(3, Duration::from_millis(100));
        let (first, second) = std::thread::scope(|s| {
            let zero = s.spawn(|| r.wait(0, "b"));
            let two = r.wait(2, "b");
            (zero.join().unwrap(), two)
        });
        // Whichever waiter times out first names the missing GPU; the other
        // may instead hear that it stopped (on a loaded machine, either).
        let texts = [first.unwrap_err().to_string(), second.unwrap_err().to_string()];
        assert!(texts.iter().any(|t| t.contains("GPU 1 did not reach b within 0.1 s")), "{texts:?}");
        let r = Rendezvous::new(2, Duration::from_secs(60));
        r.abandon(1);
        assert!(matches!(r.wait(0, "c"), Err(Error::PeerStopped { rank: 1 })));
    }

    #[test]
    fn the_stand_in_adds_every_ranks_floats_in_rank_order() {
        let s = StandIn::new(3, Duration::from_secs(10));
        let sums = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..3)
                .map(|r| {
                    let s = &s;
                    scope.spawn(move || s.all_reduce_sum(r, vec![r as f32 + 1.0, 10.0]))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap().unwrap()).collect::<Vec<_>>()
        });
        assert!(sums.iter().all(|v| v == &[6.0, 30.0]), "{sums:?}");
    }
}
