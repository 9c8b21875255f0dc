//! A block's atomics (`atomic_add` and the rest), on global and shared memory.
//!
//! Global memory is otherwise buffered per block until the next grid
//! barrier (`crate::launch`); an atomic is not: it reads and writes the
//! launch's memory at once, with the host's own atomic instructions, so
//! every block sees one sequence of updates, as on a GPU. Each is recorded
//! in the word's race shadow as an atomic, which races with a plain access
//! of another thread that no barrier orders with it, and never with another
//! atomic; the grid barrier checks the same between blocks
//! (`Fault::BlockAtomicRace`), and names two blocks updating one word with
//! an atomic of block scope (`Fault::AtomicScope`). Shared memory is the
//! block's own: its threads run one at a time, so an atomic there is a read
//! and a write with nothing between.

use crate::block::Block;
use crate::fault::{Access, Fault, Site};
use crate::shared::AtomicUse;
use crate::spec::Arg;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// One element of an `Out` parameter, as an atomic addresses it.
#[derive(Clone, Copy, Debug)]
pub struct Element {
    /// Which `Out` parameter of the launch.
    pub slot: u32,
    /// Its name.
    pub name: &'static str,
    /// The element's index.
    pub index: usize,
    /// The element's address.
    pub address: usize,
    /// Its size in bytes: 4 or 8.
    pub size: usize,
}

/// Sets the `size` bytes at `address` to `op(old)` in one atomic step of the
/// host's, and returns `old`.
///
/// # Safety
/// `address` holds `size` (4 or 8) bytes of live memory, aligned to `size`,
/// that every thread of this process accesses atomically meanwhile.
unsafe fn update(address: usize, size: usize, op: &dyn Fn(u64) -> u64) -> u64 {
    match size {
        4 => {
            // SAFETY: the caller's contract.
            let a = unsafe { AtomicU32::from_ptr(address as *mut u32) };
            let old = a.fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| Some(op(old as u64) as u32));
            old.unwrap_or_else(|v| v) as u64
        }
        8 => {
            // SAFETY: the caller's contract.
            let a = unsafe { AtomicU64::from_ptr(address as *mut u64) };
            a.fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| Some(op(old))).unwrap_or_else(|v| v)
        }
        _ => unreachable!("atomics are on 4- and 8-byte elements"),
    }
}

/// The `size` bytes at `address`, read in one atomic step of the host's.
///
/// # Safety
/// As [`update`].
unsafe fn load(address: usize, size: usize) -> u64 {
    match size {
        // SAFETY: the caller's contract.
        4 => unsafe { AtomicU32::from_ptr(address as *mut u32) }.load(Ordering::Acquire) as u64,
        // SAFETY: the caller's contract.
        8 => unsafe { AtomicU64::from_ptr(address as *mut u64) }.load(Ordering::Acquire),
        _ => unreachable!("atomics are on 4- and 8-byte elements"),
    }
}

impl Block {
    /// An atomic on element `e` of an `Out` parameter: checks its race
    /// shadow, notes it for the grid's checks, and applies `op` to the
    /// launch's memory (or to this block's own unpublished write of the
    /// element, which no other block can see); returns the old bits.
    ///
    /// `op` `None` is an atomic load. An atomic that changes nothing (a
    /// load, a compare-and-swap that fails) is a poll of the word for the
    /// spin detector (`note_poll`).
    pub fn global_atomic(&self, e: Element, block_scoped: bool, op: Option<&dyn Fn(u64) -> u64>, site: Site) -> u64 {
        self.check_element(e);
        let key = (e.slot, e.index);
        let race = {
            let mut g = self.global.borrow_mut();
            let race = self.check(g.shadow.entry(key).or_default(), Access::Atomic, site, || format!("{}[{}]", e.name, e.index));
            let scoped = block_scoped.then_some(site);
            let update = u64::from(op.is_some());
            g.atomics
                .entry(key)
                .and_modify(|u| {
                    u.block_scoped = u.block_scoped.or(scoped);
                    u.updates += update;
                })
                .or_insert(AtomicUse { site, block_scoped: scoped, updates: update });
            race
        };
        if let Some(f) = race {
            self.race_found(f);
        }
        let word = Self::global_key(e.slot, e.index);
        loop {
            let (old, changed) = self.apply_global(e, key, op, site);
            if changed {
                self.forget_spin();
                self.thread().poll.set(super::warp::Poll::default());
                return old;
            }
            // It changed nothing: a poll, which gives way after a run of the
            // same result (`note_poll`) and is made again once resumed.
            if !self.note_poll(word, old, (e.name, e.index), site) {
                return old;
            }
        }
    }

    /// Panics (a fault of the launch) unless `e` is an element of one of the
    /// launch's `Out` arguments, at its address, of its size, 4 or 8 bytes:
    /// the atomic then touches only memory `Device::launch`'s caller lent.
    fn check_element(&self, e: Element) {
        let is_ours = self.info().launch.args.iter().any(|a| match *a {
            Arg::Out { address, len, elem, slot, .. } => {
                slot == e.slot && e.index < len && elem == e.size && e.index.checked_mul(elem).and_then(|o| address.checked_add(o)) == Some(e.address)
            }
            _ => false,
        });
        assert!(
            is_ours && matches!(e.size, 4 | 8),
            "an atomic on {}[{}] (slot {}, {} bytes at {:#x}), which is not a 4- or 8-byte element of this launch's Out arguments",
            e.name,
            e.index,
            e.slot,
            e.size,
            e.address
        );
    }

    /// Applies `op` (none: a load) to element `e` as `global_atomic` says:
    /// the old bits, and whether the element changed.
    fn apply_global(&self, e: Element, key: (u32, usize), op: Option<&dyn Fn(u64) -> u64>, site: Site) -> (u64, bool) {
        let mask = if e.size == 8 { u64::MAX } else { (1u64 << (8 * e.size)) - 1 };
        {
            // The block's own write since the last grid barrier: the word as
            // this block sees it. Another block's atomic on it races with
            // that write, which the grid barrier reports.
            let mut g = self.global.borrow_mut();
            if let Some(w) = g.writes.get_mut(&key) {
                let old = w.0 & mask;
                let new = op.map_or(old, |op| op(old) & mask);
                w.0 = new;
                return (old, new != old);
            }
        }
        if super::block::CHECKS_INIT.with(|c| c.get())
            && let Some((shadow, offset)) = self.info().shadow(e.address, e.size)
            && !shadow.all_set(offset, e.size)
        {
            self.fail(Fault::Uninitialized { thread: self.thread_id(), site, buffer: e.name, index: e.index });
        }
        // SAFETY: the element is in bounds of an `Out` argument, at its
        // address, of its size (`check_element`), which `Device::launch`'s caller keeps live and
        // aligned to its element for the launch; during the launch every
        // access to it is atomic (`thread::load_published`, this) or made
        // while no block runs (`launch::publish`).
        let Some(op) = op else {
            // SAFETY: as below.
            return (unsafe { load(e.address, e.size) }, false);
        };
        let old = unsafe { update(e.address, e.size, op) };
        if let Some((shadow, offset)) = self.info().shadow(e.address, e.size) {
            shadow.set(offset, e.size);
        }
        let changed = op(old) & mask != old;
        if changed {
            // A thread of this block polling the word may go on.
            self.wake_spinners(Self::global_key(e.slot, e.index));
        }
        (old, changed)
    }

    /// An atomic on element `index` (of `size` bytes) of the block's shared
    /// memory: checks its bounds and race shadow, and applies `op`; returns
    /// the old bits.
    ///
    /// `op` `None` is an atomic load, which counts as a read of the word for
    /// the spin detector: a thread polling a flag another thread of the block
    /// sets waits for that write, and a flag nothing in the block can set is a
    /// deadlock, named with the word.
    pub fn shared_atomic(&self, index: usize, size: usize, op: Option<&dyn Fn(u64) -> u64>, site: Site) -> u64 {
        let words = self.shared_access(index, size, Access::Atomic, site);
        self.check_shared_written(index, size, if op.is_some() { Access::Atomic } else { Access::Read }, site);
        let Some(op) = op else {
            self.note_own(words.start, Access::Read, site);
            self.note_read(Self::shared_key(words.start), site, || format!("{} word {}", self.shared_place(4 * words.start), words.start));
            return self.shared_bits(index, size);
        };
        self.note_own(words.start, Access::Atomic, site);
        self.forget_spin();
        let old = self.shared_bits(index, size);
        self.set_shared_bits(index, size, op(old));
        self.shared.mark_written(index * size, size);
        self.wake_spinners(Self::shared_key(words.start));
        old
    }
}
