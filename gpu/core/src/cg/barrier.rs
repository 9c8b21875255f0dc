//! The arithmetic of the driver's grid barrier (what `grid.sync()` runs).
//!
//! A cooperative launch gives the kernel a workspace word, `barrier`. At each
//! sync one thread per block adds its [`arrival`] to it with an atomic and
//! keeps the old value; block 0's arrival is chosen so that the arrivals of
//! all `n` blocks add up to exactly `0x8000_0000`. The top bit therefore flips
//! once, when the last block arrives, and the low bits come back to where they
//! started, so the same word serves the next sync with no reset. A block may
//! leave when [`released`] sees the top bit differ from the value it added to;
//! the last block's own add flips it, so `released(old, old + arrival)` tells
//! that block it arrived last.

/// The bit that flips once per completed barrier.
pub const FLIP: u32 = 0x8000_0000;

/// What a block adds on arriving: 1, except block 0, whose share brings the
/// total of all `num_blocks` arrivals to [`FLIP`].
#[inline(always)]
pub const fn arrival(is_block_zero: bool, num_blocks: u32) -> u32 {
    if is_block_zero { FLIP.wrapping_sub(num_blocks - 1) } else { 1 }
}

/// Whether the barrier a block joined when the word read `arrived_at` has
/// completed, now that the word reads `now`.
#[inline(always)]
pub const fn released(arrived_at: u32, now: u32) -> bool {
    (arrived_at ^ now) & FLIP != 0
}

/// How many of `num_blocks` blocks have arrived at the current barrier, from
/// the word's value `now` (block 0's large arrival puts the low bits near 2^31).
#[inline(always)]
pub const fn arrivals(now: u32, num_blocks: u32) -> u32 {
    let low = now & !FLIP;
    if low < (1 << 30) { low } else { low - (FLIP - (num_blocks - 1)) + 1 }
}

/// Nanoseconds a diagnosing `grid.sync()` waits before giving up.
pub const TIMEOUT_NS: u64 = 2_000_000_000;

/// Marks a filled-in [`Report`] (the first word of the report buffer).
pub const REPORT_MAGIC: u32 = 0x6721_5ace;

/// What a diagnosing `grid.sync()` records before it traps, as four `u32`:
/// magic, the block that gave up, blocks arrived, blocks expected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Report {
    pub block: u32,
    pub arrived: u32,
    pub expected: u32,
}

impl Report {
    /// Reads a report buffer; `None` unless the magic word is there.
    pub fn from_words(w: [u32; 4]) -> Option<Report> {
        (w[0] == REPORT_MAGIC).then_some(Report { block: w[1], arrived: w[2], expected: w[3] })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrivals_count_every_order_of_arrival() {
        for n in [1u32, 2, 7, 1056] {
            for generation_start in [0, FLIP] {
                // Block 0 first, last, and in the middle.
                for zero_at in [0, n / 2, n - 1] {
                    let mut word = generation_start;
                    let mut arrived = 0;
                    for k in 0..n {
                        let is_zero = k == zero_at;
                        word = word.wrapping_add(arrival(is_zero, n));
                        arrived += 1;
                        if arrived < n {
                            assert_eq!(arrivals(word, n), arrived, "n={n} zero_at={zero_at} k={k}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_report_needs_its_magic_word() {
        assert_eq!(Report::from_words([REPORT_MAGIC, 3, 1055, 1056]), Some(Report { block: 3, arrived: 1055, expected: 1056 }));
        assert_eq!(Report::from_words([0, 3, 1055, 1056]), None);
    }

    /// Runs `generations` barriers of `n` blocks arriving in `order`, checking
    /// after every arrival that nobody is released early and, after the last,
    /// that everybody is; and that an arrival's own add shows it was the last
    /// exactly when it was (what lets the last block skip its polls).
    fn run_barriers(n: u32, order: &[u32], generations: u32) {
        let mut word = 0u32;
        for _ in 0..generations {
            let mut arrived_at = Vec::new();
            for (k, &block) in order.iter().enumerate() {
                arrived_at.push(word);
                let share = arrival(block == 0, n);
                word = word.wrapping_add(share);
                let everyone_in = k + 1 == order.len();
                let old = arrived_at[k];
                assert_eq!(
                    released(old, old.wrapping_add(share)),
                    everyone_in,
                    "the add itself tells the last block, and only it: n={n} order={order:?} at {k}"
                );
                for &old in &arrived_at {
                    assert_eq!(released(old, word), everyone_in, "n={n} order={order:?} after {k}");
                }
            }
            assert_eq!(word & !FLIP, 0, "low bits return to zero");
        }
    }

    #[test]
    fn arrivals_of_all_blocks_add_up_to_one_flip() {
        for n in [1u32, 2, 3, 160, 1056, 1 << 20] {
            let total = (0..n).fold(0u32, |w, b| w.wrapping_add(arrival(b == 0, n)));
            assert_eq!(total, FLIP, "n = {n}");
        }
    }

    #[test]
    fn no_block_is_released_before_the_last_arrives_in_any_order() {
        fn permutations(items: Vec<u32>) -> Vec<Vec<u32>> {
            if items.len() <= 1 {
                return vec![items];
            }
            let mut all = Vec::new();
            for i in 0..items.len() {
                let mut rest = items.clone();
                let first = rest.remove(i);
                for mut p in permutations(rest) {
                    p.insert(0, first);
                    all.push(p);
                }
            }
            all
        }
        for n in 1..=5u32 {
            for order in permutations((0..n).collect()) {
                run_barriers(n, &order, 3);
            }
        }
    }

    #[test]
    fn the_barrier_is_reusable_at_the_h200_cooperative_maximum() {
        let n = 1056;
        let forward: Vec<u32> = (0..n).collect();
        let backward: Vec<u32> = (0..n).rev().collect();
        run_barriers(n, &forward, 4);
        run_barriers(n, &backward, 4);
    }
}
