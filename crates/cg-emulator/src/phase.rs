//! One phase of global memory, from one grid barrier to the next: what
//! each block read, wrote and updated atomically in `Out` buffers, the races
//! between blocks that shows, and the writes published to the launch's
//! memory when the barrier completes (`launch.rs` says why a block sees
//! other blocks' writes only then).

use crate::fault::{Access, Fault, Site};
use crate::info::LaunchInfo;
use crate::scheduler::BlockRun;
use crate::spec::{Arg, Launch};
use std::collections::BTreeMap;

/// Global memory in this phase, as the blocks that have reported used it;
/// each map is keyed by `(slot, index)`, an element of an `Out` argument.
#[derive(Default)]
pub(crate) struct Phase {
    /// This phase's writes to `Out` buffers: the block that wrote each word, where, and the bits.
    writes: BTreeMap<(u32, usize), (BlockAccess, u64)>,
    /// This phase's reads from `Out` buffers (of words the reader had not written): the readers.
    reads: BTreeMap<(u32, usize), Vec<BlockAccess>>,
    /// Two blocks that touched one word in this phase: the writer, the other, what the other did.
    races: BTreeMap<(u32, usize), (BlockAccess, BlockAccess, Access)>,
    /// This phase's atomics on `Out` buffers: the first block's to make one
    /// on each word, and the first of block scope.
    atomics: BTreeMap<(u32, usize), (BlockAccess, Option<BlockAccess>)>,
    /// Atomic updates of each word over the whole launch, every phase and
    /// block (kept when a phase is published).
    atomic_updates: BTreeMap<(u32, usize), u64>,
    /// Atomics that raced in this phase, by word: with another block's plain
    /// access, or with another block's atomic where one had block scope.
    atomic_races: BTreeMap<(u32, usize), AtomicRace>,
}

/// A block's access to a word of an `Out` buffer: the block, and where in the source.
#[derive(Clone, Copy, Debug)]
struct BlockAccess {
    block: u32,
    site: Site,
}

/// Two blocks' accesses to one word in one phase that race because of an atomic.
#[derive(Clone, Copy, Debug)]
enum AtomicRace {
    /// An atomic, and another block's plain read or write.
    Plain { atomic: BlockAccess, other: BlockAccess, access: Access },
    /// An atomic of block scope, and another block's atomic.
    Scope { narrow: BlockAccess, other: BlockAccess },
}

impl AtomicRace {
    /// The blocks it names, for keeping the lowest of several races on one
    /// word (found in whatever order the blocks reached the barrier).
    fn blocks(&self) -> (u32, u32) {
        match self {
            AtomicRace::Plain { atomic, other, .. } => (atomic.block, other.block),
            AtomicRace::Scope { narrow, other } => (narrow.block.min(other.block), narrow.block.max(other.block)),
        }
    }

    /// Notes `self` on `key`, where it names lower blocks than the race kept there.
    fn note(self, races: &mut BTreeMap<(u32, usize), AtomicRace>, key: (u32, usize)) {
        let kept = races.entry(key).or_insert(self);
        if self.blocks() < kept.blocks() {
            *kept = self;
        }
    }
}

impl Phase {
    /// Adds a block's reads and writes in this phase to the phase's, noting any
    /// word another block also touched.
    pub(crate) fn contribute(&mut self, run: &BlockRun) {
        let id = run.block.id;
        let global = run.block.global.borrow();
        for (&key, &(bits, site)) in &global.writes {
            let me = BlockAccess { block: id, site };
            if let Some(&(other, _)) = self.writes.get(&key) {
                let (first, second) = if other.block < id { (other, me) } else { (me, other) };
                self.races.entry(key).or_insert((first, second, Access::Write));
            } else if let Some(readers) = self.reads.get(&key)
                && let Some(&reader) = readers.iter().min_by_key(|r| r.block)
            {
                self.races.entry(key).or_insert((me, reader, Access::Read));
            }
            self.writes.insert(key, (me, bits));
        }
        for (&key, &site) in &global.reads {
            let me = BlockAccess { block: id, site };
            if let Some(&(writer, _)) = self.writes.get(&key)
                && writer.block != id
            {
                self.races.entry(key).or_insert((writer, me, Access::Read));
            }
            self.reads.entry(key).or_default().push(me);
        }
        self.contribute_atomics(run);
    }

    /// Adds a block's atomics in this phase to the phase's, noting a plain access
    /// by another block of a word one updated atomically (either came first),
    /// and two blocks' atomics on one word where one had block scope.
    fn contribute_atomics(&mut self, run: &BlockRun) {
        let id = run.block.id;
        let global = run.block.global.borrow();
        // Another block's atomic on a word this block read or wrote plainly.
        let plain = global.writes.iter().map(|(k, &(_, site))| (k, site, Access::Write)).chain(global.reads.iter().map(|(k, &site)| (k, site, Access::Read)));
        for (key, site, access) in plain {
            if let Some(&(atomic, _)) = self.atomics.get(key) {
                AtomicRace::Plain { atomic, other: BlockAccess { block: id, site }, access }.note(&mut self.atomic_races, *key);
            }
        }
        for (&key, u) in &global.atomics {
            *self.atomic_updates.entry(key).or_default() += u.updates;
            let me = BlockAccess { block: id, site: u.site };
            let narrow = u.block_scoped.map(|site| BlockAccess { block: id, site });
            // Another block's plain write or read of a word this block updated atomically.
            let writer = self.writes.get(&key).map(|&(w, _)| (w, Access::Write)).filter(|(w, _)| w.block != id);
            let reader = || self.reads.get(&key).and_then(|rs| rs.iter().filter(|r| r.block != id).min_by_key(|r| r.block)).map(|&r| (r, Access::Read));
            if let Some((other, access)) = writer.or_else(reader) {
                AtomicRace::Plain { atomic: me, other, access }.note(&mut self.atomic_races, key);
            }
            match self.atomics.get_mut(&key) {
                Some((first, first_narrow)) => {
                    let race = match (narrow, *first_narrow) {
                        (Some(mine), Some(theirs)) if theirs.block < mine.block => Some(AtomicRace::Scope { narrow: theirs, other: me }),
                        (Some(mine), _) => Some(AtomicRace::Scope { narrow: mine, other: *first }),
                        (None, Some(theirs)) => Some(AtomicRace::Scope { narrow: theirs, other: me }),
                        (None, None) => None,
                    };
                    if let Some(race) = race {
                        race.note(&mut self.atomic_races, key);
                    }
                    // The lowest block's, so that what a report names does not depend on timing.
                    if me.block < first.block {
                        *first = me;
                    }
                    if let Some(n) = narrow
                        && first_narrow.is_none_or(|f| n.block < f.block)
                    {
                        *first_narrow = Some(n);
                    }
                }
                None => {
                    self.atomics.insert(key, (me, narrow));
                }
            }
        }
    }

    /// The first race between blocks this phase shows, as a fault: a block
    /// that read another's write with no grid.sync() between first (it is
    /// the cause, and a write race later in the same phase, blocks writing
    /// where the values they read would have sent them, only its symptom),
    /// then two blocks' writes, then a race through an atomic.
    pub(crate) fn race(&self, launch: &Launch) -> Option<Fault> {
        let grid = launch.grid;
        if let Some((&(slot, index), &(writer, other, access))) = self.races.iter().find(|(_, r)| r.2 == Access::Read).or_else(|| self.races.iter().next()) {
            let out = out_arg(launch, slot);
            let (name, len) = (out.as_ref().map(|o| o.name), out.map(|o| o.len));
            // Two blocks writing one word of a buffer that holds one word per
            // block: the lesson's partials, indexed by a thread's rank.
            let per_block = access == Access::Write && writer.site == other.site && len.is_some_and(|l| l > 1 && l == grid as usize);
            return Some(Fault::BlockRace {
                word: format!("{}[{index}]", name.unwrap_or("?")),
                per_block: per_block.then(|| (name.unwrap_or("?").to_string(), grid)),
                writer: writer.block,
                writer_site: writer.site,
                other: other.block,
                other_site: other.site,
                other_access: access,
            });
        }
        let (&(slot, index), &race) = self.atomic_races.iter().next()?;
        let word = format!("{}[{index}]", out_arg(launch, slot).map_or("?", |o| o.name));
        Some(match race {
            AtomicRace::Plain { atomic, other, access } => Fault::BlockAtomicRace {
                word,
                atomic: atomic.block,
                atomic_site: atomic.site,
                other: other.block,
                other_site: other.site,
                other_access: access,
            },
            AtomicRace::Scope { narrow, other } => {
                Fault::AtomicScope { word, narrow: narrow.block, narrow_site: narrow.site, other: other.block, other_site: other.site }
            }
        })
    }

    /// The most atomic updates any one word had, over the whole launch.
    pub(crate) fn most_atomics_on_one_word(&self) -> u64 {
        self.atomic_updates.values().copied().max().unwrap_or(0)
    }

    /// Writes this phase's buffered writes to memory, in order, and starts a new phase.
    pub(crate) fn publish(&mut self, info: &LaunchInfo) {
        for (&(slot, index), &(_, bits)) in &self.writes {
            let OutArg { address, len, elem, .. } = out_arg(info.launch, slot).expect("every write is to an Out argument");
            assert!(index < len, "a write to element {index} of an Out argument of {len} was buffered");
            let p = address + index * elem;
            if let Some((shadow, offset)) = info.shadow(p, elem) {
                shadow.set(offset, elem);
            }
            // SAFETY: `index` is below the argument's length (checked above), and
            // the caller of `Device::launch` gave `len` live elements there;
            // every block is parked or done, so none of this launch's threads
            // reads this memory now. Where the element is aligned, the store is
            // atomic, as every other access to memory the host shares with
            // kernels is (a `Shared` that another thread polls, or that another
            // launch reads with `load_published`); a relaxed store is a plain
            // store on the host's instructions.
            unsafe {
                use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, AtomicU64, Ordering::Relaxed};
                match elem {
                    8 if p.is_multiple_of(8) => AtomicU64::from_ptr(p as *mut u64).store(bits, Relaxed),
                    4 if p.is_multiple_of(4) => AtomicU32::from_ptr(p as *mut u32).store(bits as u32, Relaxed),
                    2 if p.is_multiple_of(2) => AtomicU16::from_ptr(p as *mut u16).store(bits as u16, Relaxed),
                    8 => (p as *mut u64).write_unaligned(bits),
                    4 => (p as *mut u32).write_unaligned(bits as u32),
                    2 => (p as *mut u16).write_unaligned(bits as u16),
                    _ => AtomicU8::from_ptr(p as *mut u8).store(bits as u8, Relaxed),
                }
            }
        }
        self.writes.clear();
        self.reads.clear();
        self.atomics.clear();
    }
}

/// The launch's `Out` argument in `slot`.
struct OutArg {
    name: &'static str,
    address: usize,
    len: usize,
    elem: usize,
}

fn out_arg(launch: &Launch, slot: u32) -> Option<OutArg> {
    launch.args.iter().find_map(|a| match *a {
        Arg::Out { name, address, len, elem, slot: s } if s == slot => Some(OutArg { name, address, len, elem }),
        _ => None,
    })
}
