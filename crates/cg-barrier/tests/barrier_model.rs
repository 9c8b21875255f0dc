//! The grid barrier's protocol, checked exhaustively on small grids: every
//! interleaving of the blocks' steps, for 1 to 5 blocks and 3 consecutive
//! barriers, with the arithmetic `grid.sync()` runs (`cg_barrier::arrival`
//! and `released`), from both states a barrier can start in: the word's low
//! 31 bits zero (the driver hands a cooperative launch a zeroed word, and
//! every completed barrier brings the low bits back) and its top bit either
//! way, the second of which wraps past 2^32 during the barrier.
//!
//! The model is thread 0 of each block, as `GridGroup::sync_on_gpu` runs it:
//! write this barrier's datum, add the block's arrival to the word (an
//! acquire-release atomic: the last arriver knows from the add's result and
//! does not poll), else poll the word (acquire loads) until its top bit
//! flips; then read the datum the next block wrote before the same barrier.
//! Steps are interleaved one at a time (sequential consistency): the
//! acquire-release order of the real barrier is what makes a GPU's run one
//! of these interleavings for the words involved, which is the argument
//! `crates/cg-kernel/src/cg/grid.rs` makes in its comments. Checked in every
//! interleaving: no block leaves barrier k before every block has arrived at
//! it; every read after barrier k sees what its neighbour wrote before it;
//! and no state is stuck (every block finishes).

use cg_barrier::{FLIP, arrival, released};
use std::collections::HashSet;

const BARRIERS: u8 = 3;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Phase {
    /// About to write its datum for barrier `k` and arrive.
    Arrive,
    /// Arrived at barrier `k` when the word read `arrived_at`; polling.
    Poll {
        arrived_at: u32,
    },
    /// Past barrier `k`: about to read its neighbour's datum.
    Read,
    Done,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct State {
    word: u32,
    /// Each block's barrier and phase.
    blocks: Vec<(u8, Phase)>,
    /// Double-buffered data: `data[k % 2][b]` is what block b wrote before barrier k.
    data: [Vec<i16>; 2],
    /// Arrivals at each barrier so far.
    arrived: [u8; BARRIERS as usize],
}

/// Explores every interleaving from `s`; panics on a violation.
fn explore(n: u32, s: State, seen: &mut HashSet<State>) {
    if !seen.insert(s.clone()) {
        return;
    }
    let mut moved = false;
    for b in 0..n as usize {
        let (k, phase) = s.blocks[b];
        let mut t = s.clone();
        match phase {
            Phase::Done => continue,
            Phase::Arrive => {
                t.data[k as usize % 2][b] = k as i16;
                let share = arrival(b == 0, n);
                let old = t.word;
                t.word = old.wrapping_add(share);
                t.arrived[k as usize] += 1;
                t.blocks[b].1 = if released(old, old.wrapping_add(share)) {
                    assert_eq!(t.arrived[k as usize] as u32, n, "block {b} saw barrier {k} complete on its own add before all {n} arrived ({s:?})");
                    Phase::Read
                } else {
                    Phase::Poll { arrived_at: old }
                };
            }
            Phase::Poll { arrived_at } => {
                if !released(arrived_at, t.word) {
                    // A poll that fails changes nothing.
                    continue;
                }
                assert_eq!(t.arrived[k as usize] as u32, n, "block {b} left barrier {k} before all {n} blocks arrived ({s:?})");
                t.blocks[b].1 = Phase::Read;
            }
            Phase::Read => {
                let neighbour = (b + 1) % n as usize;
                assert_eq!(
                    t.data[k as usize % 2][neighbour],
                    k as i16,
                    "block {b} after barrier {k} read block {neighbour}'s datum of another barrier ({s:?})"
                );
                t.blocks[b] = if k + 1 == BARRIERS { (k, Phase::Done) } else { (k + 1, Phase::Arrive) };
            }
        }
        moved = true;
        explore(n, t, seen);
    }
    if !moved {
        assert!(s.blocks.iter().all(|&(_, p)| p == Phase::Done), "stuck: every block left waits for a barrier that cannot complete ({s:?})");
    }
}

fn check(n: u32, start: u32) -> usize {
    let s = State {
        word: start,
        blocks: vec![(0, Phase::Arrive); n as usize],
        data: [vec![-1; n as usize], vec![-1; n as usize]],
        arrived: [0; BARRIERS as usize],
    };
    let mut seen = HashSet::new();
    explore(n, s, &mut seen);
    seen.len()
}

#[test]
fn every_interleaving_of_up_to_five_blocks_and_three_barriers_is_a_barrier() {
    // Top bit clear, and set (its arrivals carry the word past 2^32 to 0).
    for start in [0, FLIP] {
        for n in 1..=5 {
            let states = check(n, start);
            assert!(states > 0);
        }
    }
}

#[test]
fn the_largest_grids_count_their_arrivals_across_the_wrap() {
    // Too many blocks to interleave every way: every block in order, block 0
    // first, in the middle and last, over 3 barriers from starts next to the
    // wrap, for 1 block and the H200's largest cooperative grids.
    for n in [1u32, 1056, 4224] {
        for start in [0, FLIP] {
            for zero_at in [0, n / 2, n - 1] {
                let mut word = start;
                for k in 0..BARRIERS {
                    let at_start = word;
                    for i in 0..n {
                        let b = (i + n - zero_at) % n; // block 0 arrives i-th where i == zero_at
                        let share = arrival(b == 0, n);
                        let old = word;
                        word = word.wrapping_add(share);
                        let last = i == n - 1;
                        assert_eq!(released(old, word), last, "n={n} start={start:#x} barrier {k}: arrival {i} of {n}");
                        if !last {
                            assert!(!released(at_start, word), "released early at arrival {i}");
                        }
                    }
                    assert!(released(at_start, word), "n={n} barrier {k} never completed");
                    assert_eq!(word & !FLIP, at_start & !FLIP, "the low bits come back, so the next barrier starts clean");
                }
            }
        }
    }
}

#[test]
fn a_missing_block_is_found_stuck_and_a_dirty_word_is_found_releasing_early() {
    // The model's checks can fail: a block that never arrives leaves the
    // others stuck, and a word whose low bits are not zero at a barrier's
    // start (what the invariant rules out) flips before the last arrival.
    let stuck = std::panic::catch_unwind(|| {
        let s = State { word: 0, blocks: vec![(0, Phase::Arrive), (0, Phase::Arrive), (0, Phase::Done)], data: [vec![-1; 3], vec![-1; 3]], arrived: [0; 3] };
        explore(3, s, &mut HashSet::new());
    });
    assert!(stuck.is_err(), "a block that never arrives leaves the others stuck");
    let early = std::panic::catch_unwind(|| check(2, 1));
    assert!(early.is_err(), "a word starting at 1 releases two blocks when one has arrived");
}
