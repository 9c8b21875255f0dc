//! The watchdog's rule: when a launch counts as stuck. Not when it has run
//! long (a loaded machine is slow, not stuck), but when nothing has happened
//! that a kernel which ends does only a bounded number of times: a block
//! ending, or a barrier completing (a block's, a cluster's or the grid's).
//! Warp collectives and memory accesses do not count: a loop that never
//! ends makes them forever.
//!
//! How long is "for a while" is counted in the emulator's own steps (the
//! memory accesses `crate::clock` counts), not in seconds, so that a loaded
//! machine gives the verdict an idle one gives. [`Budget`] turns
//! `Options::timeout` into steps at [`STEPS_PER_SECOND`], the rate of one
//! worker on an idle machine: there a stuck kernel is named about a timeout
//! after it stuck, and elsewhere later, never sooner. Three budgets run out:
//!
//! - a block's work: the accesses one block makes since it started or last
//!   completed a barrier, polls left out. It is the block's own count, the
//!   same whichever worker runs it and whatever runs beside it, so the
//!   verdict does not depend on the number of cores;
//! - the launch's polls: atomics that change nothing and return what they
//!   returned before (`Block::note_poll`), counted since the last access of
//!   any block that was work, or the last block ending or barrier
//!   completing. A block that polls waits for another, which works
//!   meanwhile (or starts, or runs once the poller gives way); when only
//!   polls are made, every block waits for a word that nothing changes.
//!   A poll counts as [`POLL_STEPS`] steps, for what it costs, and each
//!   arrival at a warp collective in which a lane is polling (the vote of
//!   a warp that waits on up to 32 words at once) as [`COLLECTIVE_STEPS`].
//!
//! - a block's work over its life: a loop that never ends but holds a
//!   barrier completes barriers forever, so barriers alone cannot keep a
//!   launch alive; a block may do [`BACKSTOP`] budgets of work in all,
//!   where its arrivals at barriers ([`ARRIVAL_STEPS`]) and at warp
//!   collectives ([`COLLECTIVE_STEPS`]) count as steps too.
//!
//! One rule stays in wall time: a launch that makes no step at all for the
//! timeout (a thread that computes without touching memory) is stopped.
//! The workers count what happens
//! ([`Progress`]); the thread that launched looks at the counts a few times
//! per timeout, and at once when a budget runs out ([`Watchdog`]).

use std::ops::Sub;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How many budgets of work a block may do over its life, barriers or not.
/// A block ending is the only progress with a bound known in advance (each
/// block ends once); barriers can complete forever, in a loop around
/// `block.sync()` or `grid.sync()` whose exit no thread takes, so barriers
/// alone cannot keep a launch alive. Yet a kernel may rightly go long with
/// no block ending: a cooperative one whose blocks loop over `grid.sync()`
/// (the conjugate-gradient solve), or a lone block looping over its input
/// with a `block.sync()` per tile. Ten budgets is ten times the work a block
/// may do between two barriers. Counted in each block's own steps, like the
/// budget, it gives a loaded machine the verdict of an idle one, where a
/// limit of ten timeouts of wall time did not (a cooperative launch whose
/// three rounds of work were legitimate was stopped on a busy machine and
/// not on an idle one).
pub(crate) const BACKSTOP: u32 = 10;

/// How long a block may take to stop once told to, before the launch is
/// called a runaway: a block stops at its next memory access or switch, so
/// only a thread that computes without touching memory or waiting takes
/// longer, and it never stops.
pub(crate) const GRACE: Duration = Duration::from_secs(2);

/// The emulator's steps per second on one worker of an idle machine,
/// measured with the watchdog's tests (`gpu/tests/emulator_watchdog.rs`):
/// in a build without optimisation, as the tests run, a loop of plain
/// reads; in a release build, a loop of polls (counted [`POLL_STEPS`] each),
/// where a loop of plain reads runs several times faster and so is named
/// sooner than the timeout, never later. Only the timing of a verdict
/// depends on it, never the verdict on a given machine state.
pub(crate) const STEPS_PER_SECOND: u64 = if cfg!(debug_assertions) { 16_000_000 } else { 100_000_000 };

/// Steps a poll counts for in the launch's budget of polls: an atomic costs
/// the emulator several plain accesses (the race shadow, the launch's record
/// of atomics, the turns given to other threads), so that a launch of polls
/// alone is named about as soon as one block's endless loop of reads.
pub(crate) const POLL_STEPS: u64 = 8;

/// Steps a thread's arrival at a completed barrier counts for in its
/// block's work over its life ([`BACKSTOP`]): a switch of coroutines and the
/// barrier's bookkeeping cost the emulator about as many plain accesses, so
/// that a loop around a barrier that touches no memory is named about as
/// soon as one that does.
pub(crate) const ARRIVAL_STEPS: u64 = 32;

/// Steps a lane's arrival at a warp collective (a shuffle, vote, match or
/// `__syncwarp`) counts for in its block's work over its life
/// ([`BACKSTOP`]): measured, in a build without optimisation, at about 26
/// plain accesses (a loop of shuffles around `block.sync()`,
/// `gpu/tests/emulator_watchdog.rs`; the repository's
/// `records/2026-12-07-cpu-watchdog-collectives`), so a little under, and a loop
/// around a barrier whose work is warp collectives (a block scan on a
/// ticket that never moves) is named about as soon as one of reads.
pub(crate) const COLLECTIVE_STEPS: u64 = 24;

/// `Options::timeout` in steps: how much work a block may do between its
/// barriers, and how many polls the launch may make with no work, before
/// the launch counts as stuck.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Budget(pub u64);

impl Budget {
    pub fn of(timeout: Duration) -> Budget {
        let steps = timeout.as_secs_f64() * STEPS_PER_SECOND as f64;
        // `as` saturates: an endless timeout is an endless budget.
        Budget(steps as u64)
    }
}

/// What has happened in a launch, counted by its workers: only what a kernel
/// that ends does a bounded number of times, and the steps between.
#[derive(Default)]
pub(crate) struct Progress {
    ended: AtomicU64,
    block_barriers: AtomicU64,
    cluster_barriers: AtomicU64,
    grid_barriers: AtomicU64,
    /// Every step accounted so far, work and polls: whether anything runs at all.
    steps: AtomicU64,
    /// Polls since the last work, block ending or barrier, of any block.
    streak: AtomicU64,
    /// A budget ran out: 1, a block's work; 2, the launch's polls; 3, a
    /// block's work over its life ([`BACKSTOP`] budgets). The watchdog
    /// stops the launch.
    over: AtomicU8,
}

impl Progress {
    /// A block ended (returned, or stopped at a fault).
    pub fn block_ended(&self) {
        self.ended.fetch_add(1, Ordering::Relaxed);
        self.streak.store(0, Ordering::Relaxed);
    }
    /// A block barrier (`bar.sync`, `block.sync()`) completed.
    pub fn block_barrier(&self) {
        self.block_barriers.fetch_add(1, Ordering::Relaxed);
        self.streak.store(0, Ordering::Relaxed);
    }
    /// A cluster barrier completed.
    pub fn cluster_barrier(&self) {
        self.cluster_barriers.fetch_add(1, Ordering::Relaxed);
        self.streak.store(0, Ordering::Relaxed);
    }
    /// A grid barrier completed.
    pub fn grid_barrier(&self) {
        self.grid_barriers.fetch_add(1, Ordering::Relaxed);
        self.streak.store(0, Ordering::Relaxed);
    }
    /// A block made `work` accesses and `polls` polls; `block_work` is its
    /// work since it started or last completed a barrier, and since it
    /// started: whether a budget ran out just now.
    pub fn steps(&self, work: u64, polls: u64, block_work: (u64, u64), budget: Budget) -> bool {
        let (block_work, lifetime) = block_work;
        self.steps.fetch_add(work + polls, Ordering::Relaxed);
        let streak = if work > 0 {
            self.streak.store(0, Ordering::Relaxed);
            0
        } else {
            let weighed = polls * POLL_STEPS;
            self.streak.fetch_add(weighed, Ordering::Relaxed) + weighed
        };
        let cause = if block_work > budget.0 {
            1
        } else if lifetime > budget.0.saturating_mul(BACKSTOP as u64) {
            3
        } else if streak > budget.0 {
            2
        } else {
            return false;
        };
        self.over.compare_exchange(0, cause, Ordering::Relaxed, Ordering::Relaxed).is_ok()
    }
    /// Whether a budget has run out, and which: 0, none; 1, a block's work
    /// between barriers; 2, the launch's polls; 3, a block's work over its life.
    pub fn over(&self) -> u8 {
        self.over.load(Ordering::Relaxed)
    }
    /// Whether the launch's budget of polls ran out (only polls were made).
    pub fn polls_ran_out(&self) -> bool {
        self.over.load(Ordering::Relaxed) == 2
    }
    pub fn read(&self) -> Counts {
        Counts {
            ended: self.ended.load(Ordering::Relaxed),
            block_barriers: self.block_barriers.load(Ordering::Relaxed),
            cluster_barriers: self.cluster_barriers.load(Ordering::Relaxed),
            grid_barriers: self.grid_barriers.load(Ordering::Relaxed),
            steps: self.steps.load(Ordering::Relaxed),
        }
    }
}

/// [`Progress`] at one moment, or between two.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub ended: u64,
    pub block_barriers: u64,
    pub cluster_barriers: u64,
    pub grid_barriers: u64,
    pub steps: u64,
}

impl Sub for Counts {
    type Output = Counts;
    fn sub(self, earlier: Counts) -> Counts {
        Counts {
            ended: self.ended - earlier.ended,
            block_barriers: self.block_barriers - earlier.block_barriers,
            cluster_barriers: self.cluster_barriers - earlier.cluster_barriers,
            grid_barriers: self.grid_barriers - earlier.grid_barriers,
            steps: self.steps - earlier.steps,
        }
    }
}

/// Why the watchdog stops a launch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Verdict {
    /// Nothing happened for `seconds`, the timeout: a budget of steps ran
    /// out, or no step at all was made for that long.
    Stuck { seconds: f64 },
    /// Barriers completed (`barriers`) but no block ended for `seconds`, [`BACKSTOP`] timeouts.
    Looping { seconds: f64, barriers: Counts },
}

/// The watchdog's memory of what it has seen: when the counts last moved,
/// and what they were when a block last ended.
pub(crate) struct Watchdog {
    timeout: Duration,
    last: Counts,
    moved: Instant,
    /// The counts when a block last ended (or the launch started): the
    /// barriers a looping launch completed since are in its report.
    at_end: Counts,
}

impl Watchdog {
    pub fn new(timeout: Duration, now: Instant) -> Watchdog {
        Watchdog { timeout, last: Counts::default(), moved: now, at_end: Counts::default() }
    }

    /// How long to wait between looks: a tenth of the timeout, from 1 ms to
    /// 100 ms, so a stop comes at most that late.
    pub fn tick(&self) -> Duration {
        (self.timeout / 10).clamp(Duration::from_millis(1), Duration::from_millis(100))
    }

    /// Looks at the counts at `now`, and which budget ran out (`over`, as
    /// [`Progress::over`]): whether the launch is to stop, and why.
    pub fn look(&mut self, counts: Counts, over: u8, now: Instant) -> Option<Verdict> {
        if counts != self.last {
            self.moved = now;
        }
        if counts.ended != self.last.ended {
            self.at_end = counts;
        }
        self.last = counts;
        match over {
            3 => Some(Verdict::Looping { seconds: self.timeout.saturating_mul(BACKSTOP).as_secs_f64(), barriers: counts - self.at_end }),
            1 | 2 => Some(Verdict::Stuck { seconds: self.timeout.as_secs_f64() }),
            _ if now.duration_since(self.moved) >= self.timeout => Some(Verdict::Stuck { seconds: self.timeout.as_secs_f64() }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(ended: u64, block_barriers: u64) -> Counts {
        Counts { ended, block_barriers, ..Counts::default() }
    }

    #[test]
    fn a_block_may_work_a_budget_between_barriers_and_polls_only_while_someone_works() {
        let budget = Budget(1000);
        let p = Progress::default();
        // A block's own work, up to its budget, whatever polls others make meanwhile.
        assert!(!p.steps(600, 0, (600, 600), budget));
        assert!(!p.steps(0, 900 / POLL_STEPS, (0, 0), budget));
        assert!(!p.steps(400, 0, (1000, 1000), budget));
        // Polls with no work anywhere: the launch waits for nothing.
        assert!(!p.steps(0, 999 / POLL_STEPS, (0, 0), budget));
        p.block_barrier();
        assert!(!p.steps(0, 999 / POLL_STEPS, (0, 0), budget), "a barrier is progress");
        assert!(p.steps(0, 2, (0, 0), budget), "polls past the budget with no work between");
        assert!(p.over() == 2 && p.polls_ran_out());
        assert!(!p.steps(0, 200, (0, 0), budget), "told once");
        let p = Progress::default();
        assert!(p.steps(1, 0, (1001, 1001), budget), "a block past its budget of work");
        assert!(p.over() == 1 && !p.polls_ran_out());
        assert_eq!(Budget::of(Duration::MAX), Budget(u64::MAX));
        assert_eq!(Budget::of(Duration::from_secs(1)), Budget(STEPS_PER_SECOND));
    }

    #[test]
    fn a_launch_is_stuck_only_after_a_whole_timeout_with_nothing_happening() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut dog = Watchdog::new(s, t0);
        // A block ends every 0.9 s: never stuck, however long it runs.
        for k in 1..100u32 {
            assert_eq!(dog.look(counts(k as u64, 0), 0, t0 + s * 9 * k / 10), None);
        }
        // Then nothing, for a timeout.
        let last = t0 + s * 9 * 99 / 10;
        assert_eq!(dog.look(counts(99, 0), 0, last + s / 2), None);
        assert_eq!(dog.look(counts(99, 0), 0, last + s), Some(Verdict::Stuck { seconds: 1.0 }));
    }

    #[test]
    fn barriers_keep_a_block_going_for_the_backstop_of_work_and_no_longer() {
        let budget = Budget(1000);
        let p = Progress::default();
        // Work under a budget between barriers, ten budgets in all: going on.
        for k in 1..=BACKSTOP as u64 {
            assert!(!p.steps(1000, 0, (1000, 1000 * k), budget));
        }
        // One access more over the block's life: looping.
        assert!(p.steps(1, 0, (1, 1000 * BACKSTOP as u64 + 1), budget));
        assert_eq!(p.over(), 3);
        let t0 = Instant::now();
        let mut dog = Watchdog::new(Duration::from_secs(1), t0);
        assert_eq!(dog.look(counts(1, 5), 0, t0), None);
        assert_eq!(
            dog.look(counts(1, 9), 3, t0 + Duration::from_millis(1)),
            Some(Verdict::Looping { seconds: BACKSTOP as f64, barriers: counts(0, 4) }),
            "the barriers since the last block ended"
        );
    }

    #[test]
    fn the_watchdog_looks_ten_times_a_timeout_within_bounds() {
        let now = Instant::now();
        assert_eq!(Watchdog::new(Duration::from_secs(60), now).tick(), Duration::from_millis(100));
        assert_eq!(Watchdog::new(Duration::from_millis(300), now).tick(), Duration::from_millis(30));
        assert_eq!(Watchdog::new(Duration::ZERO, now).tick(), Duration::from_millis(1));
        assert_eq!(Watchdog::new(Duration::MAX, now).look(Counts::default(), 0, now), None);
    }
}
