//! One emulated block's memory: its dynamic shared memory, and the writes
//! and reads it has made to global memory since the last grid barrier, each
//! word with its race shadow.

use crate::fault::Site;
use crate::race::Shadow;
use std::cell::{Cell, RefCell, UnsafeCell};
use std::collections::{BTreeMap, HashMap};

/// The block's dynamic shared memory and its race shadow, one entry per
/// `granule` bytes: 4 (a word) until the block makes a smaller access, 1 after.
pub(crate) struct SharedMemory {
    pub(crate) words: UnsafeCell<Box<[u32]>>,
    pub(crate) bytes: usize,
    pub(crate) shadow: RefCell<Vec<Shadow>>,
    pub(crate) granule: Cell<usize>,
    /// Which bytes the block has written (its threads, or another block of
    /// its cluster): its initialization shadow. A GPU block's shared memory
    /// starts with whatever an earlier block left there; the emulator's
    /// starts at 0, and a read of a byte not written is named instead.
    pub(crate) written: RefCell<Vec<bool>>,
}

impl SharedMemory {
    /// Shared memory of `bytes` bytes, none of them written.
    pub(crate) fn new(bytes: usize) -> SharedMemory {
        SharedMemory {
            words: UnsafeCell::new(vec![0u32; bytes.div_ceil(4)].into_boxed_slice()),
            bytes,
            shadow: RefCell::new(vec![Shadow::default(); bytes.div_ceil(4)]),
            granule: Cell::new(4),
            written: RefCell::new(vec![false; bytes]),
        }
    }

    /// Notes bytes `start .. start + len` as written.
    pub(crate) fn mark_written(&self, start: usize, len: usize) {
        let mut w = self.written.borrow_mut();
        let end = (start + len).min(w.len());
        w[start.min(end)..end].iter_mut().for_each(|b| *b = true);
    }

    /// Whether every byte of `start .. start + len` has been written.
    pub(crate) fn all_written(&self, start: usize, len: usize) -> bool {
        self.written.borrow().get(start..start + len).is_none_or(|b| b.iter().all(|&w| w))
    }

    /// Its shadow per byte from now on: each byte gets its word's history.
    pub(crate) fn bytewise(&self) {
        if self.granule.get() == 1 {
            return;
        }
        let mut shadow = self.shadow.borrow_mut();
        *shadow = shadow.iter().flat_map(|w| std::iter::repeat_n(w.clone(), 4)).collect();
        self.granule.set(1);
    }
}

/// The block's view of the launch's `Out` buffers: its own writes (seen by
/// its threads at once, by other blocks at the next grid barrier), the words
/// it read from before them, and each word's race shadow.
#[derive(Default)]
pub(crate) struct Global {
    /// The last bits written to each word, and where the block first wrote it.
    pub writes: BTreeMap<(u32, usize), (u64, Site)>,
    /// Words read before the block wrote them, and where it first read each.
    pub reads: BTreeMap<(u32, usize), Site>,
    /// Words the block updated atomically, applied to memory at once.
    pub atomics: BTreeMap<(u32, usize), AtomicUse>,
    pub(crate) shadow: HashMap<(u32, usize), Shadow>,
}

/// A block's atomics on one word since the last grid barrier: where it
/// first made one, where it first made one of block scope, and how many
/// updated it (atomic loads not counted).
#[derive(Clone, Copy, Debug)]
pub(crate) struct AtomicUse {
    pub site: Site,
    pub block_scoped: Option<Site>,
    pub updates: u64,
}
