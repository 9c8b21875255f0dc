//! The arithmetic of the driver's grid barrier (what `grid.sync()` runs).
//!
//! A cooperative launch gives the kernel a workspace word, `barrier`. At each
//! sync one thread per block adds its [`arrival`] to it with a release atomic
//! and keeps the old value; block 0's arrival is chosen so that the arrivals of
//! all `n` blocks add up to exactly `0x8000_0000`. The top bit therefore flips
//! once, when the last block arrives, and the low bits come back to where they
//! started, so the same word serves the next sync with no reset. A block may
//! leave when [`released`] sees the top bit differ from the value it added to.

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

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `generations` barriers of `n` blocks arriving in `order`, checking
    /// after every arrival that nobody is released early and, after the last,
    /// that everybody is.
    fn run_barriers(n: u32, order: &[u32], generations: u32) {
        let mut word = 0u32;
        for _ in 0..generations {
            let mut arrived_at = Vec::new();
            for (k, &block) in order.iter().enumerate() {
                arrived_at.push(word);
                word = word.wrapping_add(arrival(block == 0, n));
                let everyone_in = k + 1 == order.len();
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
