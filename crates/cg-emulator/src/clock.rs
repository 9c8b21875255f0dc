//! Each worker's counters, advanced at every memory access an emulated
//! thread makes: its budget before the next check for a stop (or, in a
//! seeded run, a chance to preempt), the accesses left before a data race
//! found in its block is reported, the steps the launch's clock for
//! traces has not yet taken, and the steps the watchdog (`crate::watch`) has
//! not yet been told of, split into work and polls.

use std::cell::Cell;

/// Memory accesses of one thread before the scheduler looks for other work (seeded runs).
pub(crate) const QUANTUM: u32 = 4096;

/// Memory accesses the block may make after a data race before the race is
/// reported: enough for threads that skipped a barrier to reach the next one.
pub(crate) const ACCESSES_AFTER_RACE: u32 = 4096;

thread_local! {
    static BUDGET: Cell<u32> = const { Cell::new(QUANTUM) };
    /// 0: no race found.
    static AFTER_RACE: Cell<u32> = const { Cell::new(0) };
    static STEPS: Cell<u64> = const { Cell::new(0) };
    /// Accesses since the last `take_stretch`, and how many of them were
    /// polls (an atomic that changed nothing and returned what it returned before).
    static STRETCH: Cell<u64> = const { Cell::new(0) };
    static POLLS: Cell<u64> = const { Cell::new(0) };
}

/// Counts one memory access: whether the budget ran out (check for a stop,
/// maybe preempt) and whether a race found earlier is now due.
#[inline]
pub(crate) fn step() -> (bool, bool) {
    STEPS.with(|s| s.set(s.get() + 1));
    STRETCH.with(|s| s.set(s.get() + 1));
    let checkpoint = BUDGET.with(|b| {
        let left = b.get();
        if left == 0 {
            true
        } else {
            b.set(left - 1);
            false
        }
    });
    let race = AFTER_RACE.with(|a| match a.get() {
        0 => false,
        1 => true,
        left => {
            a.set(left - 1);
            false
        }
    });
    (checkpoint, race)
}

/// The next budget, after a checkpoint.
pub(crate) fn set_budget(accesses: u32) {
    BUDGET.with(|c| c.set(accesses));
}

/// Lets the block run [`ACCESSES_AFTER_RACE`] more memory accesses before
/// the race it has found is reported.
pub(crate) fn count_down_after_race() {
    AFTER_RACE.with(|c| c.set(ACCESSES_AFTER_RACE));
}

/// Starts a block's run with a full budget, so that where a seeded run
/// preempts a thread does not depend on the blocks a worker ran before.
pub(crate) fn reset_budget() {
    BUDGET.with(|c| c.set(QUANTUM));
    AFTER_RACE.with(|c| c.set(0));
}

/// The memory accesses this worker has made since the last call: the
/// emulator's clock for traces advances by them.
pub(crate) fn take_steps() -> u64 {
    STEPS.with(|s| s.replace(0))
}

/// Counts the access just made as a poll, not work (`Block::note_poll`).
pub(crate) fn poll_made() {
    POLLS.with(|p| p.set(p.get() + 1));
}

/// Counts `n` polls that were not accesses: the arrivals at a warp
/// collective in which a lane polls (`Block::collective`), which cost the
/// emulator as much as several polls each and are part of the same wait.
pub(crate) fn polls_made(n: u64) {
    STRETCH.with(|s| s.set(s.get() + n));
    POLLS.with(|p| p.set(p.get() + n));
}

/// The accesses made since the last call: (work, polls).
pub(crate) fn take_stretch() -> (u64, u64) {
    let all = STRETCH.with(|s| s.replace(0));
    let polls = POLLS.with(|p| p.replace(0)).min(all);
    (all - polls, polls)
}
