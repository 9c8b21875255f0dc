//! The watchdog's rule: when a launch counts as stuck. Not when it has run
//! long (a loaded machine is slow, not stuck), but when nothing has happened
//! that a kernel which ends does only a bounded number of times: a block
//! ending, or a barrier completing (a block's, a cluster's or the grid's).
//! Warp collectives and memory accesses do not count: a loop that never
//! ends makes them forever.
//!
//! How long is "for a while" is counted in the emulator's own steps (the
//! memory accesses `emu::clock` counts), not in seconds, so that a loaded
//! machine gives the verdict an idle one gives. [`Budget`] turns
//! `Options::timeout` into steps at [`STEPS_PER_SECOND`], the rate of one
//! worker on an idle machine: there a stuck kernel is named about a timeout
//! after it stuck, and elsewhere later, never sooner. Two budgets run out:
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
//!   A poll counts as [`POLL_STEPS`] steps, for what it costs.
//!
//! Two rules stay in wall time, as backstops: a launch that makes no step
//! at all for the timeout (a thread that computes without touching memory)
//! is stopped, and a loop that never ends but holds a barrier completes
//! barriers forever, so barriers alone cannot keep a launch alive:
//! [`BACKSTOP`] says for how long they can. The workers count what happens
//! ([`Progress`]); the thread that launched looks at the counts a few times
//! per timeout, and at once when a budget runs out ([`Watchdog`]).

use std::ops::Sub;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How many timeouts a launch may go with barriers completing but no block
/// ending. Blocks ending is the only progress with a bound known in advance
/// (each block ends once), so a watchdog that only they reset can never be
/// fooled; barriers can complete forever, in a loop around `block.sync()`
/// whose exit no thread takes. Yet a kernel may rightly go long with no
/// block ending: a cooperative one whose blocks loop over `grid.sync()` (the
/// conjugate-gradient solve), or a lone block looping over its input with a
/// `block.sync()` per tile. Ten timeouts (ten minutes by default) is ten
/// times what a kernel gets with nothing happening at all, on any machine.
/// A cap on the count of barriers instead would not depend on the machine,
/// but no count is safe: a legitimate block makes as many barriers as its
/// input has tiles, and a count an endless loop reaches in seconds on an
/// idle machine takes minutes on a loaded one. So a launch ends at most ten
/// timeouts after its last block ended (or it started).
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
    /// A budget ran out: 1, a block's work; 2, the launch's polls. The
    /// watchdog stops the launch.
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
    /// A block made `work` accesses and `polls` polls, `block_work` since it
    /// started or last completed a barrier: whether a budget ran out just now.
    pub fn steps(&self, work: u64, polls: u64, block_work: u64, budget: Budget) -> bool {
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
        } else if streak > budget.0 {
            2
        } else {
            return false;
        };
        self.over.compare_exchange(0, cause, Ordering::Relaxed, Ordering::Relaxed).is_ok()
    }
    /// Whether a budget has run out.
    pub fn over(&self) -> bool {
        self.over.load(Ordering::Relaxed) != 0
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
/// and when a block last ended.
pub(crate) struct Watchdog {
    timeout: Duration,
    last: Counts,
    moved: Instant,
    ended: Instant,
    at_end: Counts,
}

impl Watchdog {
    pub fn new(timeout: Duration, now: Instant) -> Watchdog {
        Watchdog { timeout, last: Counts::default(), moved: now, ended: now, at_end: Counts::default() }
    }

    /// How long to wait between looks: a tenth of the timeout, from 1 ms to
    /// 100 ms, so a stop comes at most that late.
    pub fn tick(&self) -> Duration {
        (self.timeout / 10).clamp(Duration::from_millis(1), Duration::from_millis(100))
    }

    /// Looks at the counts at `now`, and whether a budget ran out (`over`):
    /// whether the launch is to stop, and why.
    pub fn look(&mut self, counts: Counts, over: bool, now: Instant) -> Option<Verdict> {
        if counts != self.last {
            self.moved = now;
        }
        if counts.ended != self.last.ended {
            self.ended = now;
            self.at_end = counts;
        }
        self.last = counts;
        let backstop = self.timeout.saturating_mul(BACKSTOP);
        if over || now.duration_since(self.moved) >= self.timeout {
            Some(Verdict::Stuck { seconds: self.timeout.as_secs_f64() })
        } else if now.duration_since(self.ended) >= backstop {
            Some(Verdict::Looping { seconds: backstop.as_secs_f64(), barriers: counts - self.at_end })
        } else {
            None
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
        assert!(!p.steps(600, 0, 600, budget));
        assert!(!p.steps(0, 900 / POLL_STEPS, 0, budget));
        assert!(!p.steps(400, 0, 1000, budget));
        // Polls with no work anywhere: the launch waits for nothing.
        assert!(!p.steps(0, 999 / POLL_STEPS, 0, budget));
        p.block_barrier();
        assert!(!p.steps(0, 999 / POLL_STEPS, 0, budget), "a barrier is progress");
        assert!(p.steps(0, 2, 0, budget), "polls past the budget with no work between");
        assert!(p.over() && p.polls_ran_out());
        assert!(!p.steps(0, 200, 0, budget), "told once");
        let p = Progress::default();
        assert!(p.steps(1, 0, 1001, budget), "a block past its budget of work");
        assert!(p.over() && !p.polls_ran_out());
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
            assert_eq!(dog.look(counts(k as u64, 0), false, t0 + s * 9 * k / 10), None);
        }
        // Then nothing, for a timeout.
        let last = t0 + s * 9 * 99 / 10;
        assert_eq!(dog.look(counts(99, 0), false, last + s / 2), None);
        assert_eq!(dog.look(counts(99, 0), false, last + s), Some(Verdict::Stuck { seconds: 1.0 }));
    }

    #[test]
    fn barriers_alone_keep_a_launch_going_for_the_backstop_and_no_longer() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut dog = Watchdog::new(s, t0);
        assert_eq!(dog.look(counts(1, 5), false, t0 + s / 2), None);
        // A block barrier every half second after the last block ended.
        let mut k = 1;
        while k < 2 * BACKSTOP {
            assert_eq!(dog.look(counts(1, 5 + k as u64), false, t0 + s / 2 + s * k / 2), None, "at {k} half seconds");
            k += 1;
        }
        assert_eq!(dog.look(counts(1, 5 + k as u64), false, t0 + s / 2 + s * k / 2), Some(Verdict::Looping { seconds: 10.0, barriers: counts(0, k as u64) }));
    }

    #[test]
    fn a_block_ending_resets_the_backstop() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut dog = Watchdog::new(s, t0);
        for k in 1..=9 {
            assert_eq!(dog.look(counts(0, k), false, t0 + s * k as u32), None);
        }
        assert_eq!(dog.look(counts(1, 10), false, t0 + s * 10), None, "a block ended just in time");
        for k in 11..20 {
            assert_eq!(dog.look(counts(1, k), false, t0 + s * k as u32), None);
        }
        assert!(matches!(dog.look(counts(1, 20), false, t0 + s * 20), Some(Verdict::Looping { .. })));
    }

    #[test]
    fn the_watchdog_looks_ten_times_a_timeout_within_bounds() {
        let now = Instant::now();
        assert_eq!(Watchdog::new(Duration::from_secs(60), now).tick(), Duration::from_millis(100));
        assert_eq!(Watchdog::new(Duration::from_millis(300), now).tick(), Duration::from_millis(30));
        assert_eq!(Watchdog::new(Duration::ZERO, now).tick(), Duration::from_millis(1));
        assert_eq!(Watchdog::new(Duration::MAX, now).look(Counts::default(), false, now), None);
    }
}
