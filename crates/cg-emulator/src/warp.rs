//! One emulated thread's state, and one warp's: what a thread waits for,
//! a warp collective's round as its lanes arrive, and the PTX rule for the
//! lane a shuffle reads. The floor above the race shadow; below the block.

use crate::fault::Site;
use corosensei::Yielder;
use std::cell::{Cell, RefCell};

/// What a thread is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// In the run queue.
    Runnable,
    Running,
    /// At `block.sync()`.
    BlockBarrier,
    /// In a warp collective (shuffle, vote, match, `tile.sync()`).
    Collective,
    /// In `coalesced_threads()`, at the call site with this key.
    ActiveMask(usize),
    /// At `grid.sync()`.
    Grid,
    /// At the cluster barrier (`cluster.sync()`, `barrier_wait()`).
    Cluster,
    /// Reading one word over and over that nothing in its block writes.
    Spin,
    /// Polling a global word that keeps its value (`Block::note_poll`):
    /// runs again when a thread of its block changes the word, or when its
    /// block resumes after giving its worker to other blocks.
    Poll,
    Exited,
}

/// One emulated GPU thread's state.
pub(crate) struct Thread {
    pub wait: Cell<Wait>,
    /// Where it waits, or the call it is in.
    pub site: Cell<Option<Site>>,
    /// The cooperative-groups call in progress, and where the kernel made it.
    pub call: Cell<Option<Site>>,
    /// A collective's result for this lane.
    pub mailbox: Cell<u32>,
    pub yielder: Cell<*const Yielder<(), ()>>,
    /// An address just below the frame that last suspended.
    pub mark: Cell<usize>,
    /// The word this thread keeps reading, and how many times in a row.
    pub spin: Cell<(u64, u32)>,
    /// What it spins on, for the report.
    pub spin_word: RefCell<String>,
    /// The global word it last loaded atomically, the value it read, and
    /// how many times in a row it has read that value since it last gave way.
    pub poll: Cell<Poll>,
    /// It has arrived at the cluster barrier and not yet waited.
    pub cluster_arrived: Cell<bool>,
    /// Grid barriers it has reached: which slot of the grid collectives'
    /// words its block publishes to and reads ([`crate::info::LaunchInfo::gathered`]).
    pub grid_syncs: Cell<u32>,
}

impl Thread {
    pub(crate) fn new() -> Thread {
        Thread {
            wait: Cell::new(Wait::Runnable),
            site: Cell::new(None),
            call: Cell::new(None),
            mailbox: Cell::new(0),
            yielder: Cell::new(std::ptr::null()),
            mark: Cell::new(0),
            spin: Cell::new((u64::MAX, 0)),
            spin_word: RefCell::new(String::new()),
            poll: Cell::new(Poll::default()),
            cluster_arrived: Cell::new(false),
            grid_syncs: Cell::new(0),
        }
    }
}

/// A thread's last atomic on global memory that changed nothing: which
/// word (the spin detector's key, and the element for reports), the value
/// it returned, and how many times in a row it returned it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Poll {
    pub key: u64,
    pub value: u64,
    pub repeats: u32,
    pub word: Option<(&'static str, usize)>,
}

/// The kinds of warp collective; lanes meet only with lanes making the same kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Sync,
    Ballot,
    Shfl(Mode),
    /// `match.any.sync`, of 64-bit values where `wide`.
    MatchAny {
        wide: bool,
    },
    /// `match.all.sync`, of 64-bit values where `wide`.
    MatchAll {
        wide: bool,
    },
}

/// The four `shfl.sync` modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `shfl.sync.up`: from the lane `b` below.
    Up,
    /// `shfl.sync.down`: from the lane `b` above.
    Down,
    /// `shfl.sync.bfly`: from the lane `lane ^ b`.
    Bfly,
    /// `shfl.sync.idx`: from lane `b`.
    Idx,
}

/// One collective call in progress over the lanes of `mask`.
pub(crate) struct Round {
    pub(crate) mask: u32,
    pub(crate) kind: Kind,
    pub(crate) arrived: u32,
    /// Each lane's operand: a shuffle's word, a vote's predicate, a match's value.
    pub(crate) values: [u64; 32],
    pub(crate) b: [u32; 32],
    pub(crate) c: [u32; 32],
}

#[derive(Default)]
pub(crate) struct Warp {
    pub(crate) rounds: Vec<Round>,
    /// The masks of completed `bar.warp.sync`s, in order (for race detection).
    pub syncs: Vec<u32>,
}

/// The source lane of a `shfl.sync` (PTX ISA, `shfl.sync`): `b` and the clamp
/// use their low five bits; `None` where PTX returns the lane's own value.
pub(crate) fn shfl_source(lane: u32, mode: Mode, b: u32, c: u32) -> Option<u32> {
    let (lane, b) = (lane as i32, (b & 0x1f) as i32);
    let seg = ((c >> 8) & 0x1f) as i32;
    let clamp = (c & 0x1f) as i32;
    let min_lane = lane & seg;
    let max_lane = min_lane | (clamp & !seg);
    let (j, ok) = match mode {
        Mode::Up => (lane - b, lane - b >= max_lane),
        Mode::Down => (lane + b, lane + b <= max_lane),
        Mode::Bfly => (lane ^ b, (lane ^ b) <= max_lane),
        Mode::Idx => (min_lane | (b & !seg), (min_lane | (b & !seg)) <= max_lane),
    };
    ok.then_some(j as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `shfl.sync`'s `c` operand for segments of `width` lanes, as
    /// cg-kernel's `cg::lanes::shfl_c` makes it: the segment mask in bits
    /// 8..13, the clamp in bits 0..5 (0 for `up`, else the segment's last lane).
    fn shfl_c(width: u32, up: bool) -> u32 {
        let seg = (32 - width) << 8;
        if up { seg } else { seg | 0x1f }
    }

    #[test]
    pub(crate) fn shuffle_sources_follow_the_ptx_rules() {
        // Whole warp: down and xor stay inside 0..32, idx picks the lane.
        assert_eq!(shfl_source(3, Mode::Down, 16, shfl_c(32, false)), Some(19));
        assert_eq!(shfl_source(20, Mode::Down, 16, shfl_c(32, false)), None);
        assert_eq!(shfl_source(5, Mode::Bfly, 1, shfl_c(32, false)), Some(4));
        assert_eq!(shfl_source(7, Mode::Idx, 0, shfl_c(32, false)), Some(0));
        assert_eq!(shfl_source(2, Mode::Up, 1, shfl_c(32, true)), Some(1));
        assert_eq!(shfl_source(0, Mode::Up, 1, shfl_c(32, true)), None);
        // Tiles of 8: lane 13 is rank 5 of the tile at lanes 8..16.
        assert_eq!(shfl_source(13, Mode::Down, 2, shfl_c(8, false)), Some(15));
        assert_eq!(shfl_source(13, Mode::Down, 3, shfl_c(8, false)), None);
        assert_eq!(shfl_source(13, Mode::Idx, 1, shfl_c(8, false)), Some(9));
        assert_eq!(shfl_source(13, Mode::Bfly, 4, shfl_c(8, false)), Some(9));
        assert_eq!(shfl_source(9, Mode::Up, 2, shfl_c(8, true)), None);
        assert_eq!(shfl_source(11, Mode::Up, 2, shfl_c(8, true)), Some(9));
    }

    #[test]
    pub(crate) fn out_of_range_shuffle_operands_use_their_low_five_bits() {
        // idx: source 37 is lane 5; in a tile of 8, 11 is rank 3 of the tile.
        assert_eq!(shfl_source(9, Mode::Idx, 37, shfl_c(32, false)), Some(5));
        assert_eq!(shfl_source(13, Mode::Idx, 11, shfl_c(8, false)), Some(11));
        // down by 33 is down by 1; xor with 35 is xor with 3.
        assert_eq!(shfl_source(4, Mode::Down, 33, shfl_c(32, false)), Some(5));
        assert_eq!(shfl_source(4, Mode::Bfly, 35, shfl_c(32, false)), Some(7));
        // up by 34 is up by 2.
        assert_eq!(shfl_source(4, Mode::Up, 34, shfl_c(32, true)), Some(2));
    }
}
