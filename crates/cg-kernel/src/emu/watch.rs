//! The watchdog's rule: when a launch counts as stuck. Not when it has run
//! long (a loaded machine is slow, not stuck), but when nothing has happened
//! that a kernel which ends does only a bounded number of times: a block
//! ending, or a barrier completing (a block's, a cluster's or the grid's).
//! Warp collectives and memory accesses do not count: a loop that never
//! ends makes them forever.
//!
//! A loop that never ends but holds a barrier completes barriers forever,
//! so barriers alone cannot keep a launch alive: [`BACKSTOP`] says for how
//! long they can. The workers count what happens ([`Progress`]); the thread
//! that launched looks at the counts a few times per timeout ([`Watchdog`]).

use std::ops::Sub;
use std::sync::atomic::{AtomicU64, Ordering};
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

/// What has happened in a launch, counted by its workers: only what a kernel
/// that ends does a bounded number of times.
#[derive(Default)]
pub(crate) struct Progress {
    ended: AtomicU64,
    block_barriers: AtomicU64,
    cluster_barriers: AtomicU64,
    grid_barriers: AtomicU64,
}

impl Progress {
    /// A block ended (returned, or stopped at a fault).
    pub fn block_ended(&self) {
        self.ended.fetch_add(1, Ordering::Relaxed);
    }
    /// A block barrier (`bar.sync`, `block.sync()`) completed.
    pub fn block_barrier(&self) {
        self.block_barriers.fetch_add(1, Ordering::Relaxed);
    }
    /// A cluster barrier completed.
    pub fn cluster_barrier(&self) {
        self.cluster_barriers.fetch_add(1, Ordering::Relaxed);
    }
    /// A grid barrier completed.
    pub fn grid_barrier(&self) {
        self.grid_barriers.fetch_add(1, Ordering::Relaxed);
    }
    pub fn read(&self) -> Counts {
        Counts {
            ended: self.ended.load(Ordering::Relaxed),
            block_barriers: self.block_barriers.load(Ordering::Relaxed),
            cluster_barriers: self.cluster_barriers.load(Ordering::Relaxed),
            grid_barriers: self.grid_barriers.load(Ordering::Relaxed),
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
}

impl Sub for Counts {
    type Output = Counts;
    fn sub(self, earlier: Counts) -> Counts {
        Counts {
            ended: self.ended - earlier.ended,
            block_barriers: self.block_barriers - earlier.block_barriers,
            cluster_barriers: self.cluster_barriers - earlier.cluster_barriers,
            grid_barriers: self.grid_barriers - earlier.grid_barriers,
        }
    }
}

/// Why the watchdog stops a launch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Verdict {
    /// Nothing happened for `seconds`, the timeout.
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

    /// Looks at the counts at `now`: whether the launch is to stop, and why.
    pub fn look(&mut self, counts: Counts, now: Instant) -> Option<Verdict> {
        if counts != self.last {
            self.moved = now;
        }
        if counts.ended != self.last.ended {
            self.ended = now;
            self.at_end = counts;
        }
        self.last = counts;
        let backstop = self.timeout.saturating_mul(BACKSTOP);
        if now.duration_since(self.moved) >= self.timeout {
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
    fn a_launch_is_stuck_only_after_a_whole_timeout_with_nothing_happening() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut dog = Watchdog::new(s, t0);
        // A block ends every 0.9 s: never stuck, however long it runs.
        for k in 1..100u32 {
            assert_eq!(dog.look(counts(k as u64, 0), t0 + s * 9 * k / 10), None);
        }
        // Then nothing, for a timeout.
        let last = t0 + s * 9 * 99 / 10;
        assert_eq!(dog.look(counts(99, 0), last + s / 2), None);
        assert_eq!(dog.look(counts(99, 0), last + s), Some(Verdict::Stuck { seconds: 1.0 }));
    }

    #[test]
    fn barriers_alone_keep_a_launch_going_for_the_backstop_and_no_longer() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut dog = Watchdog::new(s, t0);
        assert_eq!(dog.look(counts(1, 5), t0 + s / 2), None);
        // A block barrier every half second after the last block ended.
        let mut k = 1;
        while k < 2 * BACKSTOP {
            assert_eq!(dog.look(counts(1, 5 + k as u64), t0 + s / 2 + s * k / 2), None, "at {k} half seconds");
            k += 1;
        }
        assert_eq!(dog.look(counts(1, 5 + k as u64), t0 + s / 2 + s * k / 2), Some(Verdict::Looping { seconds: 10.0, barriers: counts(0, k as u64) }));
    }

    #[test]
    fn a_block_ending_resets_the_backstop() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut dog = Watchdog::new(s, t0);
        for k in 1..=9 {
            assert_eq!(dog.look(counts(0, k), t0 + s * k as u32), None);
        }
        assert_eq!(dog.look(counts(1, 10), t0 + s * 10), None, "a block ended just in time");
        for k in 11..20 {
            assert_eq!(dog.look(counts(1, k), t0 + s * k as u32), None);
        }
        assert!(matches!(dog.look(counts(1, 20), t0 + s * 20), Some(Verdict::Looping { .. })));
    }

    #[test]
    fn the_watchdog_looks_ten_times_a_timeout_within_bounds() {
        let now = Instant::now();
        assert_eq!(Watchdog::new(Duration::from_secs(60), now).tick(), Duration::from_millis(100));
        assert_eq!(Watchdog::new(Duration::from_millis(300), now).tick(), Duration::from_millis(30));
        assert_eq!(Watchdog::new(Duration::ZERO, now).tick(), Duration::from_millis(1));
        assert_eq!(Watchdog::new(Duration::MAX, now).look(Counts::default(), now), None);
    }
}
