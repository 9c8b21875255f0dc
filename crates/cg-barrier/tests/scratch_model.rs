//! The grid collectives' scratch (`cg_barrier::launch_memory`), checked
//! exhaustively on small grids: every interleaving of the blocks' steps for
//! 2 and 3 blocks running the same program of collectives and plain grid
//! barriers, back to back or apart, from a word of either parity.
//!
//! The model is what each block does for a collective in cg-kernel's
//! `GridGroup::exchange` and the reads after it: read the slot (the parity of
//! the barriers completed: the barrier word's top bit, or the watched
//! barrier's epoch, which cannot change before this block arrives), write
//! its word to `slot`, arrive at the barrier, wait for it to complete, then
//! read every block's word of that slot, one read a step, before going on
//! to its next operation. A plain `grid.sync()` is the arrival and the wait
//! alone. Checked in every interleaving: every read after a collective sees
//! the word each block wrote for that same collective (never one of an
//! earlier or a later call), and every block finishes. The same model with
//! one slot fails: a block that has gone on to the next collective
//! overwrites a word another block has yet to read.

use std::collections::HashSet;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Op {
    /// A grid collective: write, barrier, read every block's word.
    Collective,
    /// A plain grid barrier.
    Sync,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Step {
    /// About to read the slot (collectives) or arrive (a plain barrier).
    Start,
    /// Read the slot; about to write its word.
    Write { slot: usize },
    /// About to arrive.
    Arrive { slot: usize },
    /// Arrived at barrier number `barrier` (counted from the launch's start).
    Wait { slot: usize, barrier: u32 },
    /// Past the barrier: about to read block `next`'s word of `slot`.
    Read { slot: usize, next: usize },
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Block {
    /// The operation it is in (an index into the program).
    pc: usize,
    step: Step,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct State {
    blocks: Vec<Block>,
    /// Barriers completed, from `start` (whose parity the word begins in).
    completed: u32,
    arrived: usize,
    /// Each slot's word of each block: the program counter of the
    /// collective that wrote it, if any.
    words: Vec<Vec<Option<usize>>>,
}

/// Explores every interleaving from `state`; `slots` is 2 as shipped, 1 for
/// the mutant. Returns the first wrong read, if any.
fn explore(program: &[Op], slots: usize, start_parity: u32, state: State, seen: &mut HashSet<State>) -> Result<(), String> {
    if !seen.insert(state.clone()) {
        return Ok(());
    }
    let n = state.blocks.len();
    if state.blocks.iter().all(|b| b.pc == program.len()) {
        return Ok(());
    }
    let mut moved = false;
    for i in 0..n {
        let b = &state.blocks[i];
        if b.pc == program.len() {
            continue;
        }
        let mut next = state.clone();
        let me = &mut next.blocks[i];
        match (program[b.pc], b.step) {
            (Op::Collective, Step::Start) => {
                // The parity of the barriers completed, which cannot change
                // before this block arrives.
                let slot = ((state.completed + start_parity) % 2) as usize % slots;
                me.step = Step::Write { slot };
            }
            (Op::Collective, Step::Write { slot }) => {
                next.words[slot][i] = Some(b.pc);
                next.blocks[i].step = Step::Arrive { slot };
            }
            (Op::Sync, Step::Start) | (_, Step::Arrive { .. }) => {
                let slot = if let Step::Arrive { slot } = b.step { slot } else { 0 };
                let barrier = state.completed;
                next.arrived += 1;
                if next.arrived == n {
                    next.arrived = 0;
                    next.completed += 1;
                }
                next.blocks[i].step = Step::Wait { slot, barrier };
            }
            (op, Step::Wait { slot, barrier }) => {
                if state.completed <= barrier {
                    continue; // still waiting: no step
                }
                if op == Op::Collective {
                    next.blocks[i].step = Step::Read { slot, next: 0 };
                } else {
                    next.blocks[i] = Block { pc: b.pc + 1, step: Step::Start };
                }
            }
            (_, Step::Read { slot, next: j }) => {
                if state.words[slot][j] != Some(b.pc) {
                    return Err(format!(
                        "{n} blocks, program {program:?}, word parity {start_parity}: block {i} in operation {} read block {j}'s word of slot {slot} as {:?}",
                        b.pc, state.words[slot][j]
                    ));
                }
                next.blocks[i].step = if j + 1 == n { Step::Start } else { Step::Read { slot, next: j + 1 } };
                if j + 1 == n {
                    next.blocks[i].pc += 1;
                }
            }
            (Op::Sync, Step::Write { .. }) => unreachable!("a plain barrier writes nothing"),
        }
        moved = true;
        explore(program, slots, start_parity, next, seen)?;
    }
    assert!(moved, "stuck: {state:?}");
    Ok(())
}

fn check(program: &[Op], slots: usize) -> Result<(), String> {
    for n in [2, 3] {
        for start_parity in [0, 1] {
            let state = State { blocks: vec![Block { pc: 0, step: Step::Start }; n], completed: 0, arrived: 0, words: vec![vec![None; n]; slots] };
            explore(program, slots, start_parity, state, &mut HashSet::new())?;
        }
    }
    Ok(())
}

const PROGRAMS: [&[Op]; 4] = [
    &[Op::Collective, Op::Collective, Op::Collective],
    &[Op::Collective, Op::Sync, Op::Collective, Op::Collective],
    &[Op::Sync, Op::Collective, Op::Sync, Op::Sync, Op::Collective],
    &[Op::Collective, Op::Sync, Op::Sync, Op::Collective, Op::Collective],
];

#[test]
fn two_slots_by_the_barriers_parity_never_let_a_block_read_another_calls_word() {
    for program in PROGRAMS {
        check(program, 2).unwrap();
    }
}

#[test]
fn one_slot_lets_a_block_overwrite_a_word_another_has_yet_to_read() {
    let e = check(PROGRAMS[0], 1).unwrap_err();
    assert!(e.contains("read block"), "{e}");
}
