//! Ratios that noise cannot flip: two variants timed in alternating rounds
//! (A B, B A, A B, ...), one ratio per round, and the median ratio with a 95%
//! bootstrap interval over the rounds. A target is judged on the interval,
//! never on one run: MET, MISSED, or not resolved (with the rounds that
//! would resolve it).

use crate::timing::Stats;
use serde::Serialize;

/// Bootstrap resamples of the rounds.
const RESAMPLES: usize = 4000;

/// Whether round `r` times A first (A B, B A, A B, ...): each variant leads
/// in half the rounds, so a drift within a round (clocks, caches) falls on
/// both alike.
pub fn a_first(round: usize) -> bool {
    round.is_multiple_of(2)
}

/// The median of `xs` (NaN when empty), as [`Stats`] computes it.
pub fn median(xs: &[f64]) -> f64 {
    Stats::of(xs).map_or(f64::NAN, |s| s.median_ms)
}

/// SplitMix64: a fixed, seedable stream, so an interval is the same for the
/// same rounds on every machine (and a seeded matrix the same everywhere).
pub(crate) struct SplitMix(pub(crate) u64);

impl SplitMix {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The median of `ratios` and its 95% percentile-bootstrap interval (the
/// 2.5th and 97.5th percentiles of the medians of resamples of the rounds).
pub fn interval(ratios: &[f64]) -> (f64, f64, f64) {
    let m = median(ratios);
    if ratios.len() < 2 {
        return (m, m, m);
    }
    let mut rng = SplitMix(0x5eed ^ ratios.len() as u64);
    let k = ratios.len();
    let mut sample = vec![0.0; k];
    let mut medians: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            for x in sample.iter_mut() {
                *x = ratios[(rng.next() % k as u64) as usize];
            }
            let (_, upper, _) = sample.select_nth_unstable_by(k / 2, f64::total_cmp);
            let upper = *upper;
            if k % 2 == 1 {
                upper
            } else {
                let lower = sample[..k / 2].iter().copied().fold(f64::NEG_INFINITY, f64::max);
                (lower + upper) / 2.0
            }
        })
        .collect();
    medians.sort_by(f64::total_cmp);
    let at = |q: f64| medians[((q * (RESAMPLES - 1) as f64).round() as usize).min(RESAMPLES - 1)];
    (m, at(0.025), at(0.975))
}

/// A target's standing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "verdict")]
pub enum Verdict {
    /// The median is at or below the target and the interval's upper end
    /// within 0.01 of it.
    Met,
    /// The interval's lower end is above the target.
    Missed,
    /// Neither: the interval straddles the target. `rounds` is about how many
    /// rounds would narrow it enough, were the spread the same.
    NotResolved {
        #[serde(rename = "rounds_needed")]
        rounds: usize,
    },
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Met => "MET",
            Verdict::Missed => "MISSED",
            Verdict::NotResolved { .. } => "NOT RESOLVED",
        }
    }
}

/// Slack above the target that the interval's upper end may reach.
pub const SLACK: f64 = 0.01;

/// Judges a ratio whose target is "at most `target`".
pub fn judge(median: f64, lo: f64, hi: f64, target: f64, rounds: usize) -> Verdict {
    if lo > target {
        return Verdict::Missed;
    }
    if median <= target && hi <= target + SLACK {
        return Verdict::Met;
    }
    // An interval's half-width shrinks as 1 / sqrt(rounds).
    let needed = |have: f64, want: f64| {
        if want <= 0.0 || !have.is_finite() {
            return usize::MAX;
        }
        let scale = (have / want).powi(2);
        ((rounds.max(2) as f64) * scale).ceil().min(1e6) as usize
    };
    let rounds = if median <= target { needed(hi - median, target + SLACK - median) } else { needed(median - lo, median - target) };
    Verdict::NotResolved { rounds }
}

/// One paired ratio: A's time over B's, at one n, judged against a target.
#[derive(Clone, Debug, Serialize)]
pub struct PairedRatio {
    /// What the target says, in words.
    pub target_name: String,
    pub a: String,
    pub b: String,
    pub n: u64,
    /// At most this.
    pub target: f64,
    pub rounds: usize,
    /// Each round's ratio, in the order the rounds ran.
    pub ratios: Vec<f64>,
    pub median: f64,
    /// The 95% bootstrap interval of the median.
    pub ci_low: f64,
    pub ci_high: f64,
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Every total both variants computed in the rounds was within its bound.
    pub totals_ok: bool,
}

impl PairedRatio {
    pub fn new(target_name: impl Into<String>, a: impl Into<String>, b: impl Into<String>, n: u64, target: f64, ratios: Vec<f64>) -> PairedRatio {
        let (median, ci_low, ci_high) = interval(&ratios);
        let verdict = judge(median, ci_low, ci_high, target, ratios.len());
        PairedRatio {
            target_name: target_name.into(),
            a: a.into(),
            b: b.into(),
            n,
            target,
            rounds: ratios.len(),
            ratios,
            median,
            ci_low,
            ci_high,
            verdict,
            totals_ok: true,
        }
    }

    /// `1.004 [0.998, 1.011], 10 rounds`.
    pub fn summary(&self) -> String {
        format!("{:.3} [{:.3}, {:.3}], {} rounds", self.median, self.ci_low, self.ci_high, self.rounds)
    }
}

/// A target over several sizes: its worst standing (MISSED over not
/// resolved over MET), and the ratios that decide it.
pub fn overall(ratios: &[&PairedRatio]) -> Option<Verdict> {
    let rank = |v: &Verdict| match v {
        Verdict::Met => 0,
        Verdict::NotResolved { .. } => 1,
        Verdict::Missed => 2,
    };
    ratios.iter().map(|r| r.verdict).max_by_key(rank)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic noisy timing: `mean` with a relative spread of about `spread`.
    fn noisy(rng: &mut SplitMix, mean: f64, spread: f64) -> f64 {
        let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
        let v = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
        // A sum of two uniforms, centred: triangular noise.
        mean * (1.0 + spread * (u + v - 1.0))
    }

    fn rounds(seed: u64, n: usize, a_mean: f64, b_mean: f64, spread: f64, drift: bool) -> Vec<f64> {
        let mut rng = SplitMix(seed);
        (0..n)
            .map(|r| {
                // A shared drift (clock, temperature) moves both variants of a round alike.
                let d = if drift { 1.0 + 0.08 * ((r as f64) * 0.7).sin() } else { 1.0 };
                noisy(&mut rng, a_mean * d, spread) / noisy(&mut rng, b_mean * d, spread)
            })
            .collect()
    }

    #[test]
    fn rounds_alternate_which_variant_leads() {
        assert_eq!((0..4).map(a_first).collect::<Vec<_>>(), [true, false, true, false]);
    }

    #[test]
    fn median_and_interval_of_a_known_sample() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        let (m, lo, hi) = interval(&[1.0; 9]);
        assert_eq!((m, lo, hi), (1.0, 1.0, 1.0));
        let (m, lo, hi) = interval(&[0.9, 1.0, 1.1, 1.0, 0.95, 1.05, 1.0, 0.98, 1.02]);
        assert!(lo <= m && m <= hi && lo >= 0.9 && hi <= 1.1, "{lo} {m} {hi}");
    }

    /// Rounds the bench runs by default.
    const ROUNDS: usize = 16;

    #[test]
    fn a_known_two_percent_gap_is_missed() {
        // Each timing 3% noisy, each round's pair sharing an 8% drift: the pairing cancels the drift.
        let mut missed = 0;
        for seed in 0..60 {
            let r = PairedRatio::new("t", "a", "b", 1, 1.00, rounds(seed, ROUNDS, 1.02, 1.00, 0.03, true));
            assert_ne!(r.verdict, Verdict::Met, "seed {seed}: {}", r.summary());
            missed += usize::from(r.verdict == Verdict::Missed);
        }
        eprintln!("2% gap: {missed} of 60 missed");
        assert!(missed >= 57, "{missed} of 60 missed");
    }

    #[test]
    fn equal_distributions_are_missed_no_more_often_than_the_interval_allows() {
        let (mut met, mut missed) = (0, 0);
        for seed in 0..300 {
            let r = PairedRatio::new("t", "a", "b", 1, 1.00, rounds(seed, ROUNDS, 1.0, 1.0, 0.03, true));
            met += usize::from(r.verdict == Verdict::Met);
            missed += usize::from(r.verdict == Verdict::Missed);
        }
        eprintln!("equal: {met} met, {missed} missed of 300");
        // A 95% interval lies wholly above the truth 2.5% of the time; a
        // percentile bootstrap of a median over 16 rounds, a little more often.
        assert!(missed <= 12, "{missed} of 300 missed");
        // And equal variants meet a <= 1.00 target about half the time (the
        // median falls either side of 1); the rest are not resolved.
        assert!((90..=210).contains(&met), "{met} of 300 met");
    }

    #[test]
    fn a_clear_lead_is_met_and_a_straddle_says_how_many_rounds_would_resolve_it() {
        let r = PairedRatio::new("t", "a", "b", 1, 1.00, rounds(1, ROUNDS, 0.95, 1.0, 0.03, true));
        assert_eq!(r.verdict, Verdict::Met, "{}", r.summary());
        match judge(1.004, 0.990, 1.020, 1.00, 10) {
            // Above the target by 0.004 with a lower half-width of 0.014: (0.014 / 0.004)^2 x 10 rounds.
            Verdict::NotResolved { rounds } => assert_eq!(rounds, 123),
            v => panic!("{v:?}"),
        }
        match judge(0.995, 0.985, 1.02, 1.00, 10) {
            // Below it, the upper end 0.005 past target + slack: half-width 0.025 must become 0.015.
            Verdict::NotResolved { rounds } => assert_eq!(rounds, 28),
            v => panic!("{v:?}"),
        }
        assert_eq!(judge(1.02, 1.011, 1.03, 1.00, 10), Verdict::Missed);
        assert_eq!(judge(0.999, 0.99, 1.009, 1.00, 10), Verdict::Met);
    }

    #[test]
    fn the_worst_size_decides_a_target() {
        let met = PairedRatio::new("t", "a", "b", 1, 1.0, vec![0.9; 5]);
        let missed = PairedRatio::new("t", "a", "b", 2, 1.0, vec![1.1; 5]);
        assert_eq!(overall(&[&met, &missed]), Some(Verdict::Missed));
        assert_eq!(overall(&[&met]), Some(Verdict::Met));
        assert_eq!(overall(&[]), None);
    }
}
