//! Thread-block clusters on the emulator: each cluster's barrier, and its
//! distributed shared memory as the blocks see it.
//!
//! Distributed shared memory follows the rule global memory follows between
//! grid barriers (`crate::launch`): a block reads another block's shared
//! memory as it stood at the cluster's last barrier, and its writes there
//! land at the next one. Between two barriers (a phase) the emulator records
//! who touched which word of whose memory, and when the phase ends it reports
//! - a word of one block's shared memory that another block read or wrote
//!   while a third party (the owner, or another block) wrote it: a race;
//! - an access to the memory of a block that exited during the phase: on a
//!   GPU that memory is gone once its block exits, so the reader needs a
//!   `cluster.sync()` after its reads that the owner reaches before it exits.
//!
//! A phase ends when the cluster's barrier completes (every block of the
//! cluster that has not exited has arrived), when a grid barrier completes
//! (every block is alive and ordered), or when all its blocks have exited.

use crate::fault::{Access, Fault, Touch};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What one block did to shared memory, its own and its cluster's, in one phase.
#[derive(Default, Debug)]
pub(crate) struct Phase {
    /// Words of its own shared memory it read and wrote (the first access of each).
    pub own_reads: BTreeMap<usize, Touch>,
    pub own_writes: BTreeMap<usize, Touch>,
    /// Words of other blocks' memory, by rank, it read.
    pub remote_reads: BTreeMap<(u32, usize), Touch>,
    /// Words of other blocks' memory it wrote, with the last bits written.
    pub remote_writes: BTreeMap<(u32, usize), (u32, Touch)>,
}

/// The cluster's shared memory as its blocks see it during a phase: each
/// block's words as they stood at the last barrier, and which had exited.
#[derive(Debug)]
pub(crate) struct View {
    pub words: Vec<Vec<u32>>,
    pub exited: Vec<bool>,
}

/// Where a block sits in its cluster, and what it sees of it.
pub(crate) struct Seat {
    pub cluster: u32,
    pub rank: u32,
    pub size: u32,
    pub view: std::cell::RefCell<Arc<View>>,
    pub phase: std::cell::RefCell<Phase>,
}

impl Seat {
    /// The grid's number for the cluster's block of `rank`.
    pub fn block_of(&self, rank: u32) -> u32 {
        self.cluster * self.size + rank
    }
}

/// How a block of a cluster stands in the current phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Standing {
    NotStarted,
    Running,
    /// Parked at the cluster barrier.
    Arrived,
    /// Parked at a grid barrier.
    AtGrid,
    Exited,
}

/// One cluster, in the launch's shared state.
pub(crate) struct Cluster {
    pub standing: Vec<Standing>,
    /// Exited in the current phase (their memory is still read-checked this phase).
    pub exited_in_phase: Vec<bool>,
    /// Completed cluster barriers.
    pub generation: u32,
    /// Each block's memory as it last published it, with remote writes applied.
    pub words: Vec<Vec<u32>>,
    /// What each block did in this phase.
    pub phases: Vec<Phase>,
    /// Remote writes each block applies to its own memory when it goes on.
    pub pending: Vec<Vec<(usize, u32)>>,
    pub view: Arc<View>,
}

impl Cluster {
    pub fn new(size: u32, shared_words: usize) -> Cluster {
        let n = size as usize;
        let words = vec![vec![0u32; shared_words]; n];
        Cluster {
            standing: vec![Standing::NotStarted; n],
            exited_in_phase: vec![false; n],
            generation: 0,
            view: Arc::new(View { words: words.clone(), exited: vec![false; n] }),
            words,
            phases: (0..n).map(|_| Phase::default()).collect(),
            pending: vec![Vec::new(); n],
        }
    }

    /// A block stopped running: records its memory and its phase.
    pub fn publish(&mut self, rank: u32, words: Vec<u32>, phase: Phase, standing: Standing) {
        let r = rank as usize;
        self.words[r] = words;
        let mine = &mut self.phases[r];
        mine.own_reads.extend(phase.own_reads);
        mine.own_writes.extend(phase.own_writes);
        mine.remote_reads.extend(phase.remote_reads);
        mine.remote_writes.extend(phase.remote_writes);
        if standing == Standing::Exited {
            self.exited_in_phase[r] = true;
        }
        self.standing[r] = standing;
    }

    /// Whether the cluster barrier can complete now: every block that has
    /// not exited waits at it, and at least one does.
    pub fn barrier_complete(&self) -> bool {
        self.standing.iter().all(|s| matches!(s, Standing::Arrived | Standing::Exited)) && self.standing.contains(&Standing::Arrived)
    }

    /// Whether every block has exited.
    pub fn all_exited(&self) -> bool {
        self.standing.iter().all(|&s| s == Standing::Exited)
    }

    /// Ends the phase: the first mistake in it, by rank, or else the remote
    /// writes applied and a new view for the next phase. `block_of(rank)`
    /// numbers the cluster's blocks in the grid.
    pub fn end_phase(&mut self, block_of: impl Fn(u32) -> u32) -> Result<(), Fault> {
        let phases = std::mem::take(&mut self.phases);
        let fault = first_mistake(&phases, &self.exited_in_phase, &block_of);
        self.phases = (0..self.standing.len()).map(|_| Phase::default()).collect();
        if let Some(f) = fault {
            return Err(f);
        }
        for p in &phases {
            for (&(rank, word), &(bits, _)) in &p.remote_writes {
                self.words[rank as usize][word] = bits;
                self.pending[rank as usize].push((word, bits));
            }
        }
        let exited: Vec<bool> = self.standing.iter().map(|&s| s == Standing::Exited).collect();
        self.exited_in_phase.iter_mut().for_each(|e| *e = false);
        self.view = Arc::new(View { words: self.words.clone(), exited });
        Ok(())
    }
}

/// The first race or read of an exiting block's memory in one phase, by the
/// reader's rank (so the report does not depend on timing).
fn first_mistake(phases: &[Phase], exited: &[bool], block_of: &dyn Fn(u32) -> u32) -> Option<Fault> {
    for p in phases {
        let remote = p.remote_reads.iter().map(|(&k, &t)| (k, t)).chain(p.remote_writes.iter().map(|(&k, &(_, t))| (k, t)));
        for ((rank, word), touch) in remote {
            let access = touch.access;
            let owner = block_of(rank);
            if exited[rank as usize] {
                return Some(Fault::ClusterBlockExited { thread: touch.thread, site: touch.site, owner, rank, access });
            }
            let o = &phases[rank as usize];
            let owner_touch = match access {
                Access::Read => o.own_writes.get(&word),
                // Remote accesses are reads and writes; an atomic would be a write.
                Access::Write | Access::Atomic => o.own_writes.get(&word).or_else(|| o.own_reads.get(&word)),
            };
            if let Some(&t) = owner_touch {
                return Some(race(owner, rank, word, touch, t));
            }
            // Another block's write of the same word, or (for a write) its read.
            for q in phases.iter().filter(|q| !std::ptr::eq(*q, p)) {
                let other = q.remote_writes.get(&(rank, word)).map(|&(_, t)| t);
                let other = other.or_else(|| (access == Access::Write).then(|| q.remote_reads.get(&(rank, word)).copied()).flatten());
                if let Some(t) = other {
                    return Some(race(owner, rank, word, touch, t));
                }
            }
        }
    }
    None
}

fn race(owner: u32, rank: u32, word: usize, a: Touch, b: Touch) -> Fault {
    let (first, second) = if a.thread <= b.thread { (a, b) } else { (b, a) };
    Fault::ClusterRace { word: format!("block {owner}'s shared memory word {word} (cluster rank {rank})"), first, second }
}
