//! Data-race detection inside a block: for each word, the last write and the
//! reads and atomics since it, each with the barrier epoch and the warp syncs
//! it saw. Two accesses by different threads, one a write, race unless a
//! block barrier (`block.sync()`, `grid.sync()`) or a warp sync naming both
//! lanes (`tile.sync()`) lies between them, the rule `compute-sanitizer
//! --tool racecheck` applies on a GPU. An atomic counts as a write, except
//! against another atomic: atomics among themselves never race.

use crate::fault::{Access, Fault, PartialBarrier, Site, ThreadId, Touch};

/// One access, as the shadow remembers it.
#[derive(Clone, Copy, Debug)]
pub struct Touched {
    pub thread: u32,
    /// Block barriers the block had completed at the access.
    pub epoch: u32,
    /// Warp syncs the thread's warp had completed at the access.
    pub warp_syncs: u32,
    pub site: Site,
    /// An atomic read-modify-write, not a plain read (in `Shadow::reads`).
    pub atomic: bool,
}

/// What one word has seen since it was last ordered: its last plain write,
/// and the plain reads and atomics since it (the latest of each kind by each thread).
#[derive(Clone, Default, Debug)]
pub struct Shadow {
    write: Option<Touched>,
    reads: Vec<Touched>,
    /// Whether `reads` may hold an atomic (a plain read need not look otherwise).
    atomics: bool,
}

/// The current access, and what orders it after earlier ones.
pub struct Now<'a> {
    pub block: u32,
    pub touched: Touched,
    /// The masks of the warp syncs completed by each warp of the block, in order.
    pub warp_syncs: &'a dyn Fn(u32) -> Vec<u32>,
}

impl Now<'_> {
    fn ordered_after(&self, earlier: &Touched) -> bool {
        let now = &self.touched;
        if earlier.thread == now.thread || earlier.epoch < now.epoch {
            return true;
        }
        let (warp, lanes) = (earlier.thread / 32, (1u32 << (earlier.thread % 32)) | (1u32 << (now.thread % 32)));
        warp == now.thread / 32 && (self.warp_syncs)(warp).iter().skip(earlier.warp_syncs as usize).any(|m| m & lanes == lanes)
    }

    /// The warp syncs the earlier thread's warp completed after its access
    /// that named its lane: a barrier between the two accesses that does not
    /// reach the later thread.
    fn partial_barrier(&self, earlier: &Touched) -> Option<PartialBarrier> {
        let (warp, lane) = (earlier.thread / 32, earlier.thread % 32);
        let masks = (self.warp_syncs)(warp);
        let mask = masks.iter().skip(earlier.warp_syncs as usize).rev().find(|&&m| m & (1 << lane) != 0)?;
        Some(PartialBarrier { warp, mask: *mask })
    }

    fn race(&self, word: &str, earlier: &Touched, earlier_access: Access, access: Access) -> Fault {
        let id = |thread| ThreadId { block: self.block, thread };
        Fault::Race {
            word: word.to_string(),
            first: Touch { thread: id(earlier.thread), access: earlier_access, site: earlier.site },
            second: Touch { thread: id(self.touched.thread), access, site: self.touched.site },
            partial: self.partial_barrier(earlier),
        }
    }
}

impl Shadow {
    /// Records a read; a race if an unordered write or atomic came before it.
    pub fn read(&mut self, now: &Now, word: impl Fn() -> String) -> Result<(), Fault> {
        if let Some(w) = &self.write
            && !now.ordered_after(w)
        {
            return Err(now.race(&word(), w, Access::Write, Access::Read));
        }
        if self.atomics
            && let Some(a) = self.reads.iter().find(|r| r.atomic && !now.ordered_after(r))
        {
            return Err(now.race(&word(), a, Access::Atomic, Access::Read));
        }
        self.note(now.touched);
        Ok(())
    }

    /// Records an atomic; a race if an unordered plain write or read came
    /// before it (atomics among themselves never race).
    pub fn atomic(&mut self, now: &Now, word: impl Fn() -> String) -> Result<(), Fault> {
        if let Some(w) = &self.write
            && !now.ordered_after(w)
        {
            return Err(now.race(&word(), w, Access::Write, Access::Atomic));
        }
        if let Some(r) = self.reads.iter().find(|r| !r.atomic && !now.ordered_after(r)) {
            return Err(now.race(&word(), r, Access::Read, Access::Atomic));
        }
        self.note(now.touched);
        Ok(())
    }

    /// Keeps `t` among the reads and atomics, in place of its thread's last
    /// of the same kind and of whatever an epoch before it (ordered before
    /// every later access).
    fn note(&mut self, t: Touched) {
        self.reads.retain(|r| !(r.thread == t.thread && r.atomic == t.atomic) && r.epoch == t.epoch);
        self.atomics |= t.atomic;
        self.reads.push(t);
    }

    /// Records a write; a race if an unordered read, atomic or write came before it.
    pub fn write(&mut self, now: &Now, word: impl Fn() -> String) -> Result<(), Fault> {
        if let Some(w) = &self.write
            && !now.ordered_after(w)
        {
            return Err(now.race(&word(), w, Access::Write, Access::Write));
        }
        if let Some(r) = self.reads.iter().find(|r| !now.ordered_after(r)) {
            return Err(now.race(&word(), r, if r.atomic { Access::Atomic } else { Access::Read }, Access::Write));
        }
        self.reads.clear();
        self.atomics = false;
        self.write = Some(now.touched);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site() -> Site {
        Site { location: std::panic::Location::caller(), call: "" }
    }

    fn at(thread: u32, epoch: u32, warp_syncs: u32) -> Touched {
        Touched { thread, epoch, warp_syncs, site: site(), atomic: false }
    }

    fn atomic_at(thread: u32, epoch: u32) -> Touched {
        Touched { atomic: true, ..at(thread, epoch, 0) }
    }

    fn now<'a>(t: Touched, syncs: &'a dyn Fn(u32) -> Vec<u32>) -> Now<'a> {
        Now { block: 0, touched: t, warp_syncs: syncs }
    }

    #[test]
    fn a_write_then_a_read_by_another_thread_races_without_a_barrier() {
        let none = |_| Vec::new();
        let mut s = Shadow::default();
        s.write(&now(at(32, 0, 0), &none), || "w".into()).unwrap();
        let err = s.read(&now(at(0, 0, 0), &none), || "shared word 1".into()).unwrap_err();
        assert!(err.to_string().starts_with("data race on shared word 1: thread 32 of block 0"), "{err}");
        // After a block barrier the same read is ordered.
        s.read(&now(at(0, 1, 0), &none), || "w".into()).unwrap();
    }

    #[test]
    fn a_warp_sync_naming_both_lanes_orders_them() {
        let synced = |_| vec![0xffff_ffff];
        let partial = |_| vec![0x0000_00ff];
        let mut s = Shadow::default();
        s.write(&now(at(3, 0, 0), &synced), || "w".into()).unwrap();
        s.read(&now(at(17, 0, 1), &synced), || "w".into()).unwrap();
        let mut s = Shadow::default();
        s.write(&now(at(3, 0, 0), &partial), || "w".into()).unwrap();
        let err = s.read(&now(at(17, 0, 1), &partial), || "w".into()).unwrap_err();
        assert!(err.to_string().contains("covers lanes 0-7 of warp 0 only"), "lane 17 is not in the sync: {err}");
    }

    #[test]
    fn a_warp_sync_between_threads_of_different_warps_is_named_as_too_narrow() {
        // tile.sync() where block.sync() belongs: warp 1 writes and syncs, warp 0 reads.
        let syncs = |w| if w == 1 { vec![0xffff_ffff] } else { Vec::new() };
        let mut s = Shadow::default();
        s.write(&now(at(32, 0, 0), &syncs), || "w".into()).unwrap();
        let err = s.read(&now(at(1, 0, 0), &syncs), || "w".into()).unwrap_err().to_string();
        assert!(err.contains("the warp sync between them (tile.sync()?) covers warp 1 only"), "{err}");
        assert!(err.contains("block.sync()"), "names the fix: {err}");
        assert!(!err.contains("with no barrier between"), "{err}");
    }

    #[test]
    fn reads_by_many_threads_then_an_unordered_write_races() {
        let none = |_| Vec::new();
        let mut s = Shadow::default();
        for t in 0..4 {
            s.read(&now(at(t, 0, 0), &none), || "w".into()).unwrap();
        }
        assert!(s.write(&now(at(2, 0, 0), &none), || "w".into()).is_err(), "thread 2 writes what 0, 1 and 3 read");
        let mut s = Shadow::default();
        s.read(&now(at(1, 0, 0), &none), || "w".into()).unwrap();
        s.write(&now(at(1, 0, 0), &none), || "w".into()).unwrap();
    }

    #[test]
    fn atomics_never_race_with_each_other_but_race_with_plain_accesses() {
        let none = |_| Vec::new();
        let mut s = Shadow::default();
        for t in 0..4 {
            s.atomic(&now(atomic_at(t, 0), &none), || "w".into()).unwrap();
        }
        // A plain read by another thread, with no barrier after the atomics.
        let err = s.read(&now(at(7, 0, 0), &none), || "bins[3]".into()).unwrap_err().to_string();
        assert!(err.starts_with("data race on bins[3]: thread 0 of block 0"), "{err}");
        assert!(err.contains("atomically updated it at"), "{err}");
        // After a barrier: ordered.
        s.read(&now(at(7, 1, 0), &none), || "w".into()).unwrap();
        // A plain write, then an atomic by another thread: a race; by the same thread: ordered.
        let mut s = Shadow::default();
        s.write(&now(at(1, 0, 0), &none), || "w".into()).unwrap();
        s.atomic(&now(atomic_at(1, 0), &none), || "w".into()).unwrap();
        assert!(s.atomic(&now(atomic_at(2, 0), &none), || "w".into()).is_err());
        // An atomic, then a plain write by another thread.
        let mut s = Shadow::default();
        s.atomic(&now(atomic_at(3, 0), &none), || "w".into()).unwrap();
        s.read(&now(at(3, 0, 0), &none), || "w".into()).unwrap();
        assert!(s.write(&now(at(4, 0, 0), &none), || "w".into()).is_err());
    }
}
