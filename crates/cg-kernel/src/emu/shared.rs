//! One emulated block's memory: its dynamic shared memory, and the writes
//! and reads it has made to global memory since the last grid barrier, each
//! word with its race shadow.

use super::fault::Site;
use super::race::Shadow;
use std::cell::{RefCell, UnsafeCell};
use std::collections::{BTreeMap, HashMap};

/// The block's dynamic shared memory and its race shadow.
pub(crate) struct SharedMemory {
    pub(crate) words: UnsafeCell<Box<[u32]>>,
    pub(crate) bytes: usize,
    pub(crate) shadow: RefCell<Vec<Shadow>>,
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
    pub(crate) shadow: HashMap<(u32, usize), Shadow>,
}
