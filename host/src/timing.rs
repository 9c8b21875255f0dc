//! Timing: warm-ups, then one CUDA event pair around each run.

use crate::device::Gpu;
use crate::error::Result;
use serde::Serialize;

/// Summary of timed runs, in milliseconds.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Stats {
    pub runs: usize,
    pub mean_ms: f64,
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
}

impl Stats {
    /// Mean, median, min and max of `samples` (none when empty).
    pub fn of(samples: &[f64]) -> Option<Stats> {
        if samples.is_empty() {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mid = sorted.len() / 2;
        let median = if sorted.len() % 2 == 1 { sorted[mid] } else { (sorted[mid - 1] + sorted[mid]) / 2.0 };
        Some(Stats {
            runs: sorted.len(),
            mean_ms: sorted.iter().sum::<f64>() / sorted.len() as f64,
            median_ms: median,
            min_ms: sorted[0],
            max_ms: sorted[sorted.len() - 1],
        })
    }
}

/// Runs `work` `warmups` times untimed, then `runs` times, each between two
/// CUDA events (wall time on the emulator).
pub fn time_runs(gpu: &Gpu, warmups: usize, runs: usize, mut work: impl FnMut() -> Result<()>) -> Result<Option<Stats>> {
    for _ in 0..warmups {
        work()?;
    }
    Ok(Stats::of(&gpu.time_each(runs, &mut work)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_of_odd_and_even_sample_counts() {
        let s = Stats::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.mean_ms, s.median_ms, s.min_ms, s.max_ms, s.runs), (2.0, 2.0, 1.0, 3.0, 3));
        let s = Stats::of(&[4.0, 1.0, 2.0, 3.0]).unwrap();
        assert_eq!((s.median_ms, s.mean_ms), (2.5, 2.5));
        assert_eq!(Stats::of(&[]), None);
    }
}
