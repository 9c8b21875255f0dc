//! Devices working as a group: the sum of a buffer across them
//! ([`Communicator`]): NCCL's all-reduce on GPUs (feature `nccl`), a
//! host-side stand-in on the emulator.

use super::{Gpu, Use, View, ViewMut};
use crate::error::{Error, Result};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Where the stand-in's ranks meet, twice per all-reduce: a barrier of host
/// threads that gives up after a timeout, naming the ranks that never came.
///
/// A wait that gives up breaks the meeting for good: the rank that gave up
/// was marked as arrived, and the late one's arrival would complete a
/// round with floats of another round, so every later wait fails, naming
/// the first failure (as an NCCL communicator after an error).
struct Meeting {
    ranks: u32,
    timeout: Duration,
    state: Mutex<MeetingState>,
    changed: Condvar,
}

/// Who has arrived in this round, how many rounds have completed, and why
/// the meeting broke, if it did.
struct MeetingState {
    arrived: Vec<bool>,
    round: u64,
    broken: Option<String>,
}

/// The error of a wait at a meeting that broke earlier.
fn broken(why: &str) -> Error {
    Error::Nccl {
        call: "the emulated all-reduce",
        error: format!(
            "an earlier all-reduce of this group failed ({why}), so its ranks no longer agree on which round is which: make a new CommId and communicators"
        ),
    }
}

impl Meeting {
    fn wait(&self, rank: u32) -> Result<()> {
        let mut m = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(why) = &m.broken {
            return Err(broken(why));
        }
        m.arrived[rank as usize] = true;
        if m.arrived.iter().all(|&a| a) {
            m.arrived.fill(false);
            m.round += 1;
            self.changed.notify_all();
            return Ok(());
        }
        let (round, start) = (m.round, Instant::now());
        while m.round == round {
            if let Some(why) = &m.broken {
                return Err(broken(why));
            }
            let left = self.timeout.saturating_sub(start.elapsed());
            if left.is_zero() {
                let missing: Vec<String> = m.arrived.iter().enumerate().filter(|(_, a)| !**a).map(|(r, _)| r.to_string()).collect();
                let why = format!("rank(s) {} of {} did not arrive within {} s", missing.join(", "), self.ranks, self.timeout.as_secs_f64());
                m.broken = Some(why.clone());
                self.changed.notify_all();
                return Err(Error::Nccl { call: "the emulated all-reduce", error: why });
            }
            m = self.changed.wait_timeout(m, left).unwrap_or_else(|e| e.into_inner()).0;
        }
        Ok(())
    }
}

/// The most ranks the emulator's stand-in takes: each rank is an emulated
/// GPU driven by a host thread of the caller's, so more would be a mistake
/// (a rank count read from the wrong place, say) and not a test.
pub const MAX_STAND_IN_RANKS: u32 = 1024;

/// The emulator's stand-in for NCCL's all-reduce, on the host: each rank
/// puts its floats down, all meet, each adds every rank's in rank order.
pub struct StandIn {
    meet: Meeting,
    slots: Mutex<Vec<Vec<f32>>>,
    /// Which ranks a communicator holds: a rank joins once.
    joined: Mutex<Vec<bool>>,
}

impl StandIn {
    /// A stand-in communicator for `ranks` emulated GPUs (at most
    /// [`MAX_STAND_IN_RANKS`]); a wait gives up after `timeout`.
    pub(crate) fn new(ranks: u32, timeout: Duration) -> StandIn {
        let state = MeetingState { arrived: vec![false; ranks as usize], round: 0, broken: None };
        let meet = Meeting { ranks, timeout, state: Mutex::new(state), changed: Condvar::new() };
        StandIn { meet, slots: Mutex::new(vec![Vec::new(); ranks as usize]), joined: Mutex::new(vec![false; ranks as usize]) }
    }

    /// Rank `rank` of a group of `ranks` joins, if the stand-in was made
    /// for that many and no other communicator holds the rank.
    pub(crate) fn join(&self, rank: u32, ranks: u32) -> Result<()> {
        if ranks != self.meet.ranks {
            let why = if self.meet.ranks == 1 { "its id was made for 1 rank" } else { "its id was made for another number of ranks" };
            return Err(Error::BadRank { rank, ranks, why });
        }
        let mut joined = self.joined.lock().unwrap_or_else(|e| e.into_inner());
        match joined.get_mut(rank as usize) {
            Some(held) if *held => Err(Error::BadRank { rank, ranks, why: "another communicator holds that rank: each rank joins once" }),
            Some(held) => {
                *held = true;
                Ok(())
            }
            None => Err(Error::BadRank { rank, ranks, why: "ranks are 0 to ranks - 1" }),
        }
    }

    /// Rank `rank`'s communicator is gone: the rank may join again.
    fn leave(&self, rank: u32) {
        if let Some(held) = self.joined.lock().unwrap_or_else(|e| e.into_inner()).get_mut(rank as usize) {
            *held = false;
        }
    }

    /// Rank `rank`'s floats summed with every other rank's, in rank order.
    pub(crate) fn all_reduce_sum(&self, rank: u32, values: Vec<f32>) -> Result<Vec<f32>> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())[rank as usize] = values;
        self.meet.wait(rank)?;
        let sum = {
            let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            if slots.iter().any(|s| s.len() != slots[rank as usize].len()) {
                let lens: Vec<String> = slots.iter().enumerate().map(|(r, s)| format!("rank {r}: {}", s.len())).collect();
                drop(slots);
                // Every rank reads the lengths before any puts down its next floats.
                self.meet.wait(rank)?;
                return Err(Error::Nccl {
                    call: "the emulated all-reduce",
                    error: format!("the ranks summed buffers of different lengths ({}): every rank sums as many floats", lens.join(", ")),
                });
            }
            let mut sum = vec![0.0f32; slots[rank as usize].len()];
            for s in slots.iter() {
                for (a, b) in sum.iter_mut().zip(s) {
                    *a += b;
                }
            }
            sum
        };
        // No rank writes its next floats before every rank has read these.
        self.meet.wait(rank)?;
        Ok(sum)
    }
}

/// What every rank's communicator is made from: an NCCL unique id on GPUs,
/// a shared stand-in on the emulator.
#[derive(Clone)]
#[non_exhaustive]
pub enum CommId {
    /// An NCCL unique id, for CUDA GPUs.
    #[cfg(feature = "nccl")]
    Nccl(crate::nccl::UniqueId),
    /// A stand-in shared by the emulated ranks.
    StandIn(Arc<StandIn>),
}

impl CommId {
    /// A new id for `ranks` ranks: NCCL's (this process then answers the
    /// other ranks' joining), or on the emulator a stand-in for this process.
    pub fn new(emulated: bool, ranks: u32, timeout: Duration) -> Result<CommId> {
        if emulated {
            if ranks == 0 || ranks > MAX_STAND_IN_RANKS {
                let why = "the emulator's stand-in takes 1 to MAX_STAND_IN_RANKS (1024) ranks";
                return Err(Error::BadGroupSize { ranks, why });
            }
            return Ok(CommId::StandIn(Arc::new(StandIn::new(ranks, timeout))));
        }
        #[cfg(feature = "nccl")]
        {
            crate::nccl::library()?;
            Ok(CommId::Nccl(crate::nccl::UniqueId::new()?))
        }
        #[cfg(not(feature = "nccl"))]
        Err(Error::NoNccl { why: "cg-launcher was built without its feature `nccl`: enable it to sum across GPUs with NCCL".to_string() })
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
    #[cfg(feature = "nccl")]
    Nccl(crate::nccl::Comm),
    StandIn(Arc<StandIn>),
}

impl Drop for Communicator {
    fn drop(&mut self) {
        #[cfg_attr(not(feature = "nccl"), allow(irrefutable_let_patterns))]
        if let Comm::StandIn(s) = &self.inner {
            s.leave(self.rank);
        }
    }
}

impl Communicator {
    /// This GPU's rank.
    pub fn rank(&self) -> u32 {
        self.rank
    }
}

impl Gpu {
    /// Joins rank `rank` of `ranks` (`ncclCommInitRank`; on the emulator the
    /// stand-in): returns once every rank has joined. Refuses, by name, a
    /// rank outside `0..ranks`, and on the emulator a rank joined twice or a
    /// `ranks` other than the id's.
    pub fn communicator(&self, id: &CommId, rank: u32, ranks: u32) -> Result<Communicator> {
        if rank >= ranks {
            let why = if ranks == 0 { "a group has at least one rank" } else { "ranks are 0 to ranks - 1" };
            return Err(Error::BadRank { rank, ranks, why });
        }
        Ok(Communicator { made_by: self.key, inner: self.backend().communicator(id, rank, ranks)?, rank })
    }

    /// Queues the sum across every rank of `src` into `dst` (`ncclAllReduce`,
    /// `ncclSum`); every rank must call it.
    /// Fails by name if `dst` is not as long as `src`.
    pub fn all_reduce_sum(&self, comm: &Communicator, src: &View<'_, f32>, dst: ViewMut<'_, f32>) -> Result<()> {
        if src.len() != dst.len() {
            return Err(Error::LengthsDiffer { what: "gpu.all_reduce_sum", first: ("src", src.len()), second: ("dst", dst.len()) });
        }
        self.owns(comm.made_by, "a communicator")?;
        let (origin, bytes) = src.origin();
        self.check_use(origin, bytes, Use::Read, &|| "gpu.all_reduce_sum's source".into())?;
        let (origin, bytes) = dst.origin();
        self.check_use(origin, bytes, Use::Write, &|| "gpu.all_reduce_sum's destination".into())?;
        let (offset, len) = (dst.offset, src.len());
        self.backend().all_reduce_sum(comm, src.mem, src.offset * 4, dst.mem, offset * 4, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn gpu() -> Gpu {
        Gpu::emulated(cg_emulator::Device::T4, cg_emulator::Options::default())
    }

    /// Before this check, rank 5 of 2 indexed past the stand-in's slots (a
    /// panic in the library) and a rank joined twice met itself.
    #[test]
    fn a_rank_outside_the_group_or_joined_twice_is_refused_by_name_and_a_dropped_rank_may_join_again() {
        let gpu = gpu();
        let id = CommId::new(true, 2, Duration::from_secs(5)).unwrap();
        let e = gpu.communicator(&id, 5, 2).err().expect("rank 5 of 2");
        assert!(matches!(e, Error::BadRank { rank: 5, ranks: 2, .. }), "{e}");
        assert_eq!(e.to_string(), "rank 5 of a group of 2: ranks are 0 to ranks - 1");
        // Before this check u32::MAX ranks asked the host for 100 GB, and
        // the process died of the failed allocation.
        for ranks in [0, MAX_STAND_IN_RANKS + 1, u32::MAX] {
            let e = CommId::new(true, ranks, Duration::from_secs(1)).err().expect("refused");
            assert_eq!(e.to_string(), format!("a group of {ranks} ranks: the emulator's stand-in takes 1 to MAX_STAND_IN_RANKS (1024) ranks"));
        }
        let e = gpu.communicator(&id, 0, 0).err().expect("no ranks");
        assert!(e.to_string().contains("at least one rank"), "{e}");
        let e = gpu.communicator(&id, 1, 3).err().expect("3 ranks on an id for 2");
        assert!(e.to_string().contains("another number of ranks"), "{e}");
        let first = gpu.communicator(&id, 1, 2).unwrap();
        let e = gpu.communicator(&id, 1, 2).err().expect("rank 1 twice");
        assert!(e.to_string().contains("each rank joins once"), "{e}");
        drop(first);
        let again = gpu.communicator(&id, 1, 2).unwrap();
        assert_eq!(again.rank(), 1);
    }

    /// Before this check, a destination longer than the source was called
    /// past its end ('elements 0..3 of a buffer of 5: past its end').
    #[test]
    fn a_source_and_destination_of_different_lengths_are_named_with_both() {
        let gpu = gpu();
        let id = CommId::new(true, 1, Duration::from_secs(5)).unwrap();
        let comm = gpu.communicator(&id, 0, 1).unwrap();
        let src = gpu.zeros::<f32>(3).unwrap();
        let mut dst = gpu.zeros::<f32>(5).unwrap();
        let e = gpu.all_reduce_sum(&comm, &src.slice(..), dst.slice_mut(..)).unwrap_err();
        assert_eq!(e.to_string(), "gpu.all_reduce_sum: src holds 3 elements and dst 5: they must be as long as each other");
        let one = gpu.zeros::<f32>(1).unwrap();
        let e = gpu.all_reduce_sum(&comm, &one.slice(..), dst.slice_mut(..)).unwrap_err();
        assert_eq!(e.to_string(), "gpu.all_reduce_sum: src holds 1 element and dst 5: they must be as long as each other");
    }

    /// Before this check, ranks summing 3 and 2 floats returned a sum
    /// whose tail silently left out the shorter rank.
    #[test]
    fn ranks_summing_different_lengths_each_get_an_error_naming_the_lengths() {
        let s = StandIn::new(2, Duration::from_secs(10));
        let results = std::thread::scope(|scope| {
            let s = &s;
            let a = scope.spawn(move || s.all_reduce_sum(0, vec![1.0; 3]));
            let b = scope.spawn(move || s.all_reduce_sum(1, vec![1.0; 2]));
            [a.join().unwrap(), b.join().unwrap()]
        });
        for r in results {
            let e = r.expect_err("lengths differ");
            assert!(e.to_string().contains("rank 0: 3, rank 1: 2"), "{e}");
        }
        // The group is whole again: the next sum meets and adds.
        let sums = std::thread::scope(|scope| {
            let s = &s;
            let a = scope.spawn(move || s.all_reduce_sum(0, vec![1.0, 2.0]));
            let b = scope.spawn(move || s.all_reduce_sum(1, vec![3.0, 4.0]));
            [a.join().unwrap().unwrap(), b.join().unwrap().unwrap()]
        });
        assert_eq!(sums, [vec![4.0, 6.0], vec![4.0, 6.0]]);
    }

    /// Before this check, a rank that gave up waiting stayed marked as
    /// arrived, so the late rank's call completed that round with the next
    /// round's floats, and every later round returned Ok with a sum of two
    /// different rounds (the stranger's 101 for 102).
    #[test]
    fn a_wait_that_gives_up_breaks_the_group_for_every_later_call() {
        let s = StandIn::new(2, Duration::from_millis(100));
        let results = std::thread::scope(|scope| {
            let s = &s;
            let early = scope.spawn(move || (0..3).map(|round| s.all_reduce_sum(0, vec![round as f32])).collect::<Vec<_>>());
            let late = scope.spawn(move || {
                std::thread::sleep(Duration::from_millis(400));
                (0..3).map(|round| s.all_reduce_sum(1, vec![100.0 + round as f32])).collect::<Vec<_>>()
            });
            [early.join().unwrap(), late.join().unwrap()]
        });
        let first = results[0][0].as_ref().expect_err("rank 1 came late");
        assert!(first.to_string().contains("rank(s) 1 of 2 did not arrive within 0.1 s"), "{first}");
        for (rank, calls) in results.iter().enumerate() {
            for (round, r) in calls.iter().enumerate().skip(if rank == 0 { 1 } else { 0 }) {
                let e = r.as_ref().expect_err("a broken group sums nothing");
                assert!(
                    e.to_string().contains("an earlier all-reduce of this group failed (rank(s) 1 of 2 did not arrive within 0.1 s)"),
                    "rank {rank} round {round}: {e}"
                );
            }
        }
    }
}
