//! The exercise's harness: the case ladder, each case against a double
//! reference, the smallest failure first.

mod solve;
pub mod variants;

pub use solve::solve;

use crate::cli::Variant;
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::launch::{Buffer, DeviceInput};
use crate::reference;
use crate::report::{self, Check};
use serde::Serialize;
use std::fmt::Write;

/// The nine sizes the lesson's harness checks.
pub const LADDER: [u64; 9] = [0, 1, 31, 611, 1024, 4096, 40960, 4_194_915, 67_108_864];

/// What a solver launched.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
pub struct Solved {
    pub blocks: u64,
    pub threads: u32,
    pub blocks_per_sm: u32,
    pub sms: u32,
}

/// A solver's signature.
pub type Solver = fn(&Gpu, &DeviceInput, &mut Buffer<f32>) -> Result<Solved>;

/// One case of the ladder.
#[derive(Clone, Debug, Serialize)]
pub struct Case {
    pub n: u64,
    pub result: Option<f32>,
    pub reference: f64,
    pub error: Option<f64>,
    pub bound: Option<f64>,
    pub pass: bool,
    pub launch_error: Option<String>,
    pub solved: Option<Solved>,
}

/// A case's outcome before checking: the solver's total and what it
/// launched, or the error it returned.
pub type Outcome = Result<(f32, Solved)>;

/// Checks one case's outcome against the reference of `xs`.
pub fn judge(n: u64, xs: &[f32], outcome: Outcome) -> Case {
    let (reference, abs_sum) = reference::reference_sum(xs);
    match outcome {
        Ok((value, solved)) => {
            let bound = reference::error_bound(reference::longest_chain(n, solved.blocks, solved.threads), abs_sum);
            let c = reference::check(value, reference, bound);
            Case { n, result: Some(value), reference, error: Some(c.error), bound: Some(bound), pass: c.pass, launch_error: None, solved: Some(solved) }
        }
        Err(e) => {
            let name = e.driver_name().unwrap_or_else(|| e.to_string());
            Case { n, result: None, reference, error: None, bound: None, pass: false, launch_error: Some(name), solved: None }
        }
    }
}

/// Runs every size through `attempt`; a failed case never stops the ladder.
pub fn run_ladder(sizes: &[u64], mut attempt: impl FnMut(&[f32]) -> Outcome) -> Vec<Case> {
    sizes
        .iter()
        .map(|&n| match reference::fill(n as usize) {
            Ok(xs) => {
                let outcome = attempt(&xs);
                judge(n, &xs, outcome)
            }
            Err(e) => judge(n, &[], Err(e)),
        })
        .collect()
}

/// The smallest failing case, if any.
pub fn smallest_failure(cases: &[Case]) -> Option<&Case> {
    cases.iter().filter(|c| !c.pass).min_by_key(|c| c.n)
}

/// The harness's results.
#[derive(Clone, Debug, Serialize)]
pub struct ExerciseReport {
    pub device: String,
    pub variant: Variant,
    pub cases: Vec<Case>,
    pub smallest_failure: Option<u64>,
    /// The two counts the lesson asks you to submit, from the largest case.
    pub blocks_per_sm: Option<u32>,
    pub sms: Option<u32>,
    pub checks: Vec<Check>,
}

impl ExerciseReport {
    /// Ok when every case passed.
    pub fn verdict(&self) -> Result<()> {
        match self.smallest_failure {
            None => Ok(()),
            Some(n) => Err(Error::ChecksFailed(vec![format!("the case ladder (smallest failing case: n = {n})")])),
        }
    }
}

/// Runs the lesson's ladder on the device against the chosen solver.
pub fn run(gpu: &Gpu, variant: Variant) -> Result<ExerciseReport> {
    run_sizes(gpu, variant, &LADDER)
}

/// Runs `sizes` on the device against the chosen solver.
pub fn run_sizes(gpu: &Gpu, variant: Variant, sizes: &[u64]) -> Result<ExerciseReport> {
    let solver: Solver = match variant {
        Variant::Solve => solve,
        Variant::GridFromN => variants::grid_from_n,
        Variant::ZeroGrid => variants::zero_grid,
        Variant::BoundsBug => variants::bounds_bug,
    };
    let cases = run_ladder(sizes, |xs| {
        let input = DeviceInput::upload(gpu, xs)?;
        let mut total = gpu.zeros::<f32>(1)?;
        let solved = solver(gpu, &input, &mut total)?;
        Ok((gpu.read(&total)?[0], solved))
    });
    let counts = cases.iter().rev().find_map(|c| c.solved.filter(|s| s.blocks_per_sm > 0));
    let checks = cases
        .iter()
        .map(|c| Check::new(&format!("n = {}", c.n), c.pass, c.launch_error.clone().unwrap_or_default()))
        .collect();
    Ok(ExerciseReport {
        device: gpu.info.name.clone(),
        variant,
        smallest_failure: smallest_failure(&cases).map(|c| c.n),
        cases,
        blocks_per_sm: counts.map(|s| s.blocks_per_sm),
        sms: counts.map(|s| s.sms),
        checks,
    })
}

/// The harness's report as text.
pub fn render(r: &ExerciseReport) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "Exercise: single-launch sum, solver = {:?}, on {}", r.variant, r.device);
    let _ = writeln!(o, "input: {}; reference: double-precision sum; bound: {}\n", reference::FILL_RULE, reference::BOUND_RULE);
    let _ = writeln!(o, "{:>10}  {:>7}  {:>20}  {:>20}  {:>9}  {:>9}  result", "n", "blocks", "GPU sum", "reference", "error", "bound");
    for c in &r.cases {
        let blocks = c.solved.map_or("-".to_string(), |s| s.blocks.to_string());
        let value = c.result.map_or("-".to_string(), |v| format!("{v:.6}"));
        let error = c.error.map_or("-".to_string(), |e| format!("{e:.2e}"));
        let bound = c.bound.map_or("-".to_string(), |b| format!("{b:.2e}"));
        let verdict = match (&c.launch_error, c.pass) {
            (Some(e), _) => format!("FAIL: {e}"),
            (None, true) => "pass".to_string(),
            (None, false) => "FAIL: wrong sum".to_string(),
        };
        let _ = writeln!(o, "{:>10}  {:>7}  {:>20}  {:>20.6}  {:>9}  {:>9}  {}", c.n, blocks, value, c.reference, error, bound, verdict);
    }
    if let (Some(bps), Some(sms)) = (r.blocks_per_sm, r.sms) {
        let _ = writeln!(o, "\nYour kernel's counts: {bps} blocks/SM x {sms} SMs = {} blocks, the most one cooperative launch may use", bps as u64 * sms as u64);
    }
    match r.smallest_failure {
        Some(n) => {
            let _ = writeln!(o, "\nsmallest failing case: n = {n}");
        }
        None => o.push('\n'),
    }
    report::checks(&mut o, &r.checks);
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solved(blocks: u64) -> Solved {
        Solved { blocks, threads: 256, blocks_per_sm: 4, sms: 40 }
    }

    /// A correct CPU solver: the sum rounded once to f32.
    fn cpu_sum(xs: &[f32]) -> Outcome {
        let blocks = (xs.len() as u64).div_ceil(256).min(160);
        Ok((xs.iter().map(|&x| x as f64).sum::<f64>() as f32, solved(blocks)))
    }

    #[test]
    fn the_ladder_is_the_lessons_nine_sizes() {
        assert_eq!(LADDER.len(), 9);
        assert_eq!((LADDER[0], LADDER[8]), (0, 67_108_864));
        assert!(LADDER.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_correct_solver_passes_every_case() {
        let cases = run_ladder(&LADDER[..7], cpu_sum);
        assert!(cases.iter().all(|c| c.pass), "{cases:?}");
        assert!(smallest_failure(&cases).is_none());
    }

    #[test]
    fn failures_are_reported_smallest_first_and_errors_do_not_stop_the_ladder() {
        let cases = run_ladder(&LADDER[..7], |xs| match xs.len() {
            1024 => Err(Error::EmptyGrid { kernel: "exercise_sum" }),
            611 => Ok((1.0, solved(3))),
            _ => cpu_sum(xs),
        });
        assert_eq!(cases.len(), 7);
        assert_eq!(smallest_failure(&cases).map(|c| c.n), Some(611));
        let failing: Vec<u64> = cases.iter().filter(|c| !c.pass).map(|c| c.n).collect();
        assert_eq!(failing, vec![611, 1024]);
        assert!(cases[4].launch_error.as_deref().unwrap().contains("0 blocks"));
        assert!(cases[5].pass, "the case after an error still runs");
    }

    #[test]
    fn a_nan_total_fails_its_case() {
        let cases = run_ladder(&[611], |_| Ok((f32::NAN, solved(3))));
        assert!(!cases[0].pass);
        assert_eq!(cases[0].result.map(f32::is_nan), Some(true));
    }

    #[test]
    fn the_empty_case_needs_a_zero_total() {
        let cases = run_ladder(&[0], |_| Ok((0.0, solved(0))));
        assert!(cases[0].pass);
        let cases = run_ladder(&[0], |_| Ok((1.0, solved(0))));
        assert!(!cases[0].pass);
    }
}
