//! The exercise's harness: the case ladder, each case against a double
//! reference, the smallest failure first.

mod solve;
pub mod variants;

pub use solve::solve;

use crate::checks::{self, Check, Status};
use crate::device::{Buffer, Gpu};
use crate::error::{Error, Result};
use crate::launch::DeviceInput;
use crate::reference::{self, Reference};
use serde::Serialize;
use std::fmt::Write;

/// The nine sizes the lesson's harness checks.
pub const LADDER: [u64; 9] = [0, 1, 31, 611, 1024, 4096, 40960, 4_194_915, 67_108_864];

/// The exercise's solvers: yours, ours, or one that makes a mistake the lesson describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// solve() as written in host/src/exercise/solve.rs.
    Solve,
    /// Our solution, to compare against yours.
    Reference,
    /// The grid sized from n alone: the largest cases ask for more blocks than fit.
    GridFromN,
    /// No n = 0 special case: the empty case asks for a 0-block launch.
    ZeroGrid,
    /// Blocks counted as n / 256, rounded down: n below one block gets 0 blocks.
    RoundDown,
    /// The loop bound rounded up to whole blocks: reads past the input.
    BoundsBug,
    /// Block 0 adds the partials with an `if` where the loop was: one partial
    /// per thread, so a grid of more blocks than a block has threads loses some.
    PartialsIf,
}

impl Variant {
    /// The name the command line uses (`grid-from-n`).
    pub fn name(self) -> String {
        clap::ValueEnum::to_possible_value(&self).expect("no variant is skipped").get_name().to_string()
    }
}

/// What a solver launched.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
pub struct Solved {
    pub blocks: u32,
    pub threads_per_block: u32,
    pub blocks_per_sm: u32,
    pub sms: u32,
}

/// A solver's signature.
pub type Solver = fn(&Gpu, &DeviceInput, &mut Buffer<f32>) -> Result<Solved>;

/// One case of the ladder.
#[derive(Clone, Debug, Serialize)]
pub struct Case {
    pub n: u64,
    pub status: Status,
    #[serde(serialize_with = "crate::json::opt_float")]
    pub sum: Option<f32>,
    #[serde(serialize_with = "crate::json::float")]
    pub reference: f64,
    #[serde(serialize_with = "crate::json::opt_float")]
    pub error: Option<f64>,
    #[serde(serialize_with = "crate::json::opt_float")]
    pub bound: Option<f64>,
    /// Why the solver returned no sum (a refused launch, an emulator fault).
    pub launch_error: Option<String>,
    pub solved: Option<Solved>,
}

impl Case {
    pub fn pass(&self) -> bool {
        self.status == Status::Passed
    }
}

/// A case's outcome before checking: the solver's total and what it
/// launched, or the error it returned.
pub type Outcome = Result<(f32, Solved)>;

/// What `solve()` returns as it ships, not written yet.
pub fn unwritten(_: &Gpu, _: &DeviceInput, _: &mut Buffer<f32>) -> Result<Solved> {
    Err(Error::SolveUnwritten)
}

/// What a case reports for a solver's error: an emulator fault in full, a
/// driver error by its name, anything else as its message. The harness knows
/// n, so a 0-block grid for n > 0 is named as the rounding it is.
fn case_error(n: u64, e: &Error) -> String {
    match e {
        Error::Emulated { fault, .. } => fault.to_string(),
        Error::EmptyGrid { kernel } if n > 0 => format!(
            "launch of {kernel} with 0 blocks refused, but n = {n} has elements to sum: a block count computed as n / threads per block rounds down to 0 when n is less than one block's threads; round the division up"
        ),
        _ => e.driver_name().unwrap_or_else(|| e.to_string()),
    }
}

/// Checks one case's outcome against the reference of `xs`; `tile` is the
/// exercise kernel's tile size.
pub fn judge(n: u64, xs: &[f32], tile: u32, outcome: Outcome) -> Case {
    let r = Reference::new(xs);
    match outcome {
        Ok((value, solved)) => {
            let chain = reference::longest_chain(n as usize, solved.blocks, solved.threads_per_block, tile);
            let c = r.check_total(value, chain);
            Case {
                n,
                status: Status::of(c.pass),
                sum: Some(value),
                reference: r.sum,
                error: Some(c.error),
                bound: Some(c.bound),
                launch_error: None,
                solved: Some(solved),
            }
        }
        Err(e) => {
            Case { n, status: Status::Failed, sum: None, reference: r.sum, error: None, bound: None, launch_error: Some(case_error(n, &e)), solved: None }
        }
    }
}

/// Runs every size through `attempt`; a failed case never stops the ladder,
/// but an unwritten `solve()` does, before any case ([`Error::SolveUnwritten`]).
/// `each` sees every case as soon as it is judged.
pub fn run_ladder(sizes: &[u64], tile: u32, mut attempt: impl FnMut(&[f32]) -> Outcome, each: &mut dyn FnMut(&Case)) -> Result<Vec<Case>> {
    let mut cases = Vec::with_capacity(sizes.len());
    for &n in sizes {
        let case = match reference::fill(n as usize) {
            Ok(xs) => match attempt(&xs) {
                Err(Error::SolveUnwritten) => return Err(Error::SolveUnwritten),
                outcome => judge(n, &xs, tile, outcome),
            },
            Err(e) => judge(n, &[], tile, Err(e)),
        };
        each(&case);
        cases.push(case);
    }
    Ok(cases)
}

/// The smallest failing case, if any.
pub fn smallest_failure(cases: &[Case]) -> Option<&Case> {
    cases.iter().filter(|c| !c.pass()).min_by_key(|c| c.n)
}

/// The harness's results (`--json` prints this).
#[derive(Clone, Debug, Serialize)]
pub struct ExerciseReport {
    pub status: Status,
    pub device: String,
    pub variant: Variant,
    pub cases: Vec<Case>,
    pub smallest_failure: Option<u64>,
    /// The two counts the lesson asks you to submit with your solve(): your
    /// kernel's blocks per SM on this device, and the SM count.
    pub blocks_per_sm: Option<u32>,
    pub sms: Option<u32>,
    pub checks: Vec<Check>,
    /// The same ladder on [`LARGER_DEVICE`], where the emulated device's
    /// cooperative grid fits in one block ([`needs_larger_device`]).
    pub larger_device: Option<Box<ExerciseReport>>,
}

impl ExerciseReport {
    /// Ok when every case passed, on both devices where there were two.
    pub fn verdict(&self) -> Result<()> {
        let all: Vec<Check> = self.checks.iter().chain(self.larger_device.iter().flat_map(|r| &r.checks)).cloned().collect();
        checks::verdict(&all)
    }
}

/// The emulated device the exercise runs its ladder on a second time: an
/// H200's shape, 1056 cooperative blocks of 256 threads.
pub const LARGER_DEVICE: gpu_core::emu::Device = gpu_core::emu::Device::H200;

/// Whether the ladder also runs on [`LARGER_DEVICE`]: on an emulated device
/// whose cooperative grid of the exercise kernel (256 threads a block) is no
/// larger than a block can be. There block 0's loop over the partials takes
/// a single trip, so a loop written as an `if` passes every case (the lesson's
/// T4: 160 blocks); the learner should not have to know to try another device.
pub fn needs_larger_device(gpu: &Gpu) -> Result<bool> {
    if !gpu.info.emulated {
        return Ok(false);
    }
    let capacity = gpu.cooperative_kernel(&crate::kernels().exercise_sum)?.limits(256)?.capacity();
    Ok(capacity <= gpu.info.max_threads_per_block)
}

/// The line before the second ladder.
pub fn larger_device_header(capacity: u32) -> String {
    format!(
        "\nThe same ladder on a larger emulated GPU: {capacity} cooperative blocks of 256, more than one block has threads, so block 0 must loop over the partials\n"
    )
}

/// Runs `sizes` on the device against the chosen solver; `each` sees every case as it is judged.
pub fn run_sizes(gpu: &Gpu, variant: Variant, sizes: &[u64], each: &mut dyn FnMut(&Case)) -> Result<ExerciseReport> {
    let solver: Solver = match variant {
        Variant::Solve => solve,
        Variant::Reference => variants::reference,
        Variant::GridFromN => variants::grid_from_n,
        Variant::ZeroGrid => variants::zero_grid,
        Variant::RoundDown => variants::round_down,
        Variant::BoundsBug => variants::bounds_bug,
        Variant::PartialsIf => variants::partials_if,
    };
    let tile = crate::kernels().exercise_sum.tile().unwrap_or(32);
    let cases = run_ladder(
        sizes,
        tile,
        |xs| {
            let input = DeviceInput::upload(gpu, xs)?;
            let mut total = gpu.zeros::<f32>(1)?;
            let solved = solver(gpu, &input, &mut total)?;
            Ok((gpu.read(&total)?[0], solved))
        },
        each,
    )?;
    let counts = cases.iter().rev().find_map(|c| c.solved.filter(|s| s.blocks_per_sm > 0));
    let checks: Vec<Check> = cases.iter().map(|c| Check::new(format!("n = {}", c.n), c.pass(), c.launch_error.clone().unwrap_or_default())).collect();
    Ok(ExerciseReport {
        status: checks::status(&checks),
        device: gpu.info.name.clone(),
        variant,
        smallest_failure: smallest_failure(&cases).map(|c| c.n),
        cases,
        blocks_per_sm: counts.map(|s| s.blocks_per_sm),
        sms: counts.map(|s| s.sms),
        checks,
        larger_device: None,
    })
}

/// The harness's heading.
pub fn header(device: &str, variant: Variant) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "Exercise: single-launch sum, solver {}, on {}", variant.name(), device);
    let _ = writeln!(o, "input: {}; reference: double-precision sum; bound: {}\n", reference::FILL_RULE, reference::BOUND_RULE);
    let _ = writeln!(o, "{:>10}  {:>7}  {:>20}  {:>20}  {:>9}  {:>9}  result", "n", "blocks", "GPU sum", "reference", "error", "bound");
    o
}

/// One row of the table.
pub fn row(c: &Case) -> String {
    let blocks = c.solved.map_or("-".to_string(), |s| s.blocks.to_string());
    let value = c.sum.map_or("-".to_string(), |v| format!("{v:.6}"));
    let error = c.error.map_or("-".to_string(), |e| format!("{e:.2e}"));
    let bound = c.bound.map_or("-".to_string(), |b| format!("{b:.2e}"));
    let verdict = match (&c.launch_error, c.pass()) {
        (Some(e), _) => format!("FAIL: {e}"),
        (None, true) => "pass".to_string(),
        (None, false) => "FAIL: wrong sum".to_string(),
    };
    format!("{:>10}  {:>7}  {:>20}  {:>20.6}  {:>9}  {:>9}  {}\n", c.n, blocks, value, c.reference, error, bound, verdict)
}

/// What follows the table: the verdict, then the two counts the exercise
/// asks you to submit, last whether or not every case passed.
pub fn footer(r: &ExerciseReport) -> String {
    let mut o = String::from("\n");
    checks::render(&mut o, &r.checks);
    if let Some(n) = r.smallest_failure {
        let _ = writeln!(o, "smallest failing case: n = {n}");
    }
    match (r.blocks_per_sm, r.sms) {
        (Some(bps), Some(sms)) => {
            let _ = writeln!(
                o,
                "\nYour kernel's two counts, to submit with your solve(): {bps} blocks/SM x {sms} SMs = {} blocks, the most one cooperative launch of it may use",
                bps as u64 * sms as u64
            );
        }
        _ => o.push_str("\nYour kernel's two counts: none, since solve() reported no launch of it with its limits\n"),
    }
    o
}

/// The harness's report as text.
pub fn render(r: &ExerciseReport) -> String {
    let mut o = header(&r.device, r.variant);
    for c in &r.cases {
        o.push_str(&row(c));
    }
    o += &footer(r);
    if let Some(larger) = &r.larger_device {
        let capacity = larger.blocks_per_sm.zip(larger.sms).map_or(0, |(b, s)| b * s);
        o += &larger_device_header(capacity);
        o += &render(larger);
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solved(blocks: u32) -> Solved {
        Solved { blocks, threads_per_block: 256, blocks_per_sm: 4, sms: 40 }
    }

    /// A correct CPU solver: the sum rounded once to f32.
    fn cpu_sum(xs: &[f32]) -> Outcome {
        let blocks = (xs.len() as u64).div_ceil(256).min(160) as u32;
        Ok((xs.iter().map(|&x| x as f64).sum::<f64>() as f32, solved(blocks)))
    }

    fn ladder(sizes: &[u64], attempt: impl FnMut(&[f32]) -> Outcome) -> Vec<Case> {
        run_ladder(sizes, 32, attempt, &mut |_| {}).unwrap()
    }

    #[test]
    fn the_ladder_is_the_lessons_nine_sizes() {
        assert_eq!(LADDER.len(), 9);
        assert_eq!((LADDER[0], LADDER[8]), (0, 67_108_864));
        assert!(LADDER.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_correct_solver_passes_every_case() {
        let cases = ladder(&LADDER[..7], cpu_sum);
        assert!(cases.iter().all(Case::pass), "{cases:?}");
        assert!(smallest_failure(&cases).is_none());
    }

    #[test]
    fn failures_are_reported_smallest_first_and_errors_do_not_stop_the_ladder() {
        let cases = ladder(&LADDER[..7], |xs| match xs.len() {
            1024 => Err(Error::EmptyGrid { kernel: "exercise_sum" }),
            611 => Ok((1.0, solved(3))),
            _ => cpu_sum(xs),
        });
        assert_eq!(cases.len(), 7);
        assert_eq!(smallest_failure(&cases).map(|c| c.n), Some(611));
        let failing: Vec<u64> = cases.iter().filter(|c| !c.pass()).map(|c| c.n).collect();
        assert_eq!(failing, vec![611, 1024]);
        assert!(cases[4].launch_error.as_deref().unwrap().contains("0 blocks"));
        assert!(cases[5].pass(), "the case after an error still runs");
    }

    #[test]
    fn a_nan_total_fails_its_case() {
        let cases = ladder(&[611], |_| Ok((f32::NAN, solved(3))));
        assert!(!cases[0].pass());
        assert_eq!(cases[0].sum.map(f32::is_nan), Some(true));
    }

    #[test]
    fn the_empty_case_needs_a_zero_total() {
        assert!(ladder(&[0], |_| Ok((0.0, solved(0))))[0].pass());
        assert!(!ladder(&[0], |_| Ok((1.0, solved(0))))[0].pass());
    }

    #[test]
    fn variants_are_named_as_the_command_line_names_them() {
        assert_eq!(Variant::GridFromN.name(), "grid-from-n");
        assert_eq!(Variant::Solve.name(), "solve");
    }
}
