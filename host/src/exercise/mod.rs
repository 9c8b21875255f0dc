//! The exercise's harness: the case ladder, each case against a double
//! reference, the smallest failure first.

pub mod variants;

use crate::checks::{self, Check, Status};
use crate::device::{Buffer, Gpu, Launched};
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
    /// solve() as written in exercise/solve.rs (compiled into the program, not this library).
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
    /// The grid is blocks per SM alone, the SM count forgotten: every sum is
    /// right, on too few blocks.
    PerSm,
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
    /// Why the grid, or the counts solve() reported, are not what the
    /// exercise asks, though the sum may be right ([`grid_problem`]).
    pub grid: Option<String>,
    /// What a wrong sum matches, where the harness can tell, and the fix
    /// ([`wrong_sum_hint`]).
    pub hint: Option<String>,
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

/// The limits the harness itself asks of the kernel a case launched, at the
/// block size it launched: blocks per SM, SMs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceCounts {
    pub blocks_per_sm: u32,
    pub sms: u32,
}

/// Why a case's launch is not the exercise's one cooperative launch on the
/// lesson's grid, min(ceil(n / threads), blocks per SM x SMs), or why the
/// `Solved` that solve() returned is not what it launched; `None` when both
/// are right. `launched` is every launch solve() made; `counts` what the
/// device says of the kernel it launched.
pub fn grid_problem(n: u64, solved: Solved, launched: &[Launched], counts: Option<DeviceCounts>) -> Option<String> {
    let launch = match launched {
        [] if n == 0 => return None,
        [] => return Some("solve() launched nothing: the exercise is one cooperative launch of exercise_sum".to_string()),
        [one] if one.cooperative => one,
        [one] => return Some(format!("solve() launched {} the ordinary way: a kernel that calls grid.sync() needs a cooperative launch", one.kernel)),
        many => {
            return Some(format!(
                "solve() made {} launches ({}): the exercise is one cooperative launch",
                many.len(),
                many.iter().map(|l| l.kernel).collect::<Vec<_>>().join(", ")
            ));
        }
    };
    if (solved.blocks, solved.threads_per_block) != (launch.blocks, launch.threads_per_block) {
        return Some(format!(
            "solve() returned Solved {{ blocks: {}, threads_per_block: {}, .. }} but launched {} blocks of {} threads: return what you launched",
            solved.blocks, solved.threads_per_block, launch.blocks, launch.threads_per_block
        ));
    }
    let counts = counts?;
    if (solved.blocks_per_sm, solved.sms) != (counts.blocks_per_sm, counts.sms) {
        return Some(format!(
            "solve() reports {} blocks/SM x {} SMs, but {} at {} threads per block fits {} blocks/SM x {} SMs: ask kernel.limits(threads_per_block) of the kernel you launch, at the block size you launch",
            solved.blocks_per_sm, solved.sms, launch.kernel, launch.threads_per_block, counts.blocks_per_sm, counts.sms
        ));
    }
    let threads = launch.threads_per_block as u64;
    let capacity = counts.blocks_per_sm as u64 * counts.sms as u64;
    let wanted = n.div_ceil(threads).min(capacity);
    if (launch.blocks as u64) < wanted {
        let why = if launch.blocks == counts.blocks_per_sm {
            " (that is blocks per SM alone: the ceiling is blocks per SM times the SM count)"
        } else if launch.blocks == counts.sms {
            " (that is the SM count alone: the ceiling is blocks per SM times the SM count)"
        } else if launch.blocks as u64 == n / threads {
            " (n / threads rounded down: round the division up)"
        } else {
            ""
        };
        return Some(format!(
            "the sum is right, but the grid is too small: {} blocks{why}, where n = {n} takes min(ceil({n} / {threads}), {} x {}) = {wanted}",
            launch.blocks, counts.blocks_per_sm, counts.sms
        ));
    }
    None
}

/// What a wrong `total` of a grid of `blocks` x `threads` matches, where it
/// matches one of the mistakes the harness can recognise from the sum alone,
/// and the fix: the first `threads` partials of more (block 0 reads one
/// partial per thread, an `if` where the loop over the partials belongs), or
/// block 0's partial alone.
pub fn wrong_sum_hint(r: &Reference, total: f32, blocks: u32, threads: u32) -> Option<String> {
    if blocks <= 1 || threads == 0 {
        return None;
    }
    let per = r.per_block(blocks, threads);
    let matches = |(sum, abs): (f64, f64)| (total as f64 - sum).abs() <= 1e-4 * abs + 1e-3;
    let first = |k: usize| per[..k].iter().fold((0.0, 0.0), |(s, a), &(bs, ba)| (s + bs, a + ba));
    if blocks > threads && matches(first(threads as usize)) {
        return Some(format!(
            "the total is the sum of the first {threads} of the {blocks} block partials: block 0 read one partial per thread, where it must loop over all {blocks} (`while i < m {{ w += partials[i]; i += block.num_threads() }}`, not an `if`)"
        ));
    }
    if matches(per[0]) {
        return Some("the total is block 0's partial alone: the other blocks' partials were never added to it".to_string());
    }
    None
}

/// Checks one case's outcome against the reference of `xs`; `tile` is the
/// exercise kernel's tile size; `grid` is what [`grid_problem`] found.
pub fn judge(n: u64, xs: &[f32], tile: u32, outcome: Outcome, grid: Option<String>) -> Case {
    let r = Reference::new(xs);
    match outcome {
        Ok((value, solved)) => {
            let chain = reference::longest_chain(n as usize, solved.blocks, solved.threads_per_block, tile);
            let c = r.check_total(value, chain);
            Case {
                n,
                status: Status::of(c.pass && grid.is_none()),
                sum: Some(value),
                reference: r.sum,
                error: Some(c.error),
                bound: Some(c.bound),
                launch_error: None,
                solved: Some(solved),
                hint: if c.pass { None } else { wrong_sum_hint(&r, value, solved.blocks, solved.threads_per_block) },
                grid,
            }
        }
        Err(e) => Case {
            n,
            status: Status::Failed,
            sum: None,
            reference: r.sum,
            error: None,
            bound: None,
            launch_error: Some(case_error(n, &e)),
            solved: None,
            grid: None,
            hint: None,
        },
    }
}

/// Runs every size through `attempt` (the solver's outcome, and what is wrong
/// with its grid, if anything); a failed case never stops the ladder, but an
/// unwritten `solve()` does, before any case ([`Error::SolveUnwritten`]).
/// `each` sees every case as soon as it is judged.
pub fn run_ladder(sizes: &[u64], tile: u32, mut attempt: impl FnMut(&[f32]) -> (Outcome, Option<String>), each: &mut dyn FnMut(&Case)) -> Result<Vec<Case>> {
    let mut cases = Vec::with_capacity(sizes.len());
    for &n in sizes {
        let case = match reference::fill(n as usize) {
            Ok(xs) => match attempt(&xs) {
                (Err(Error::SolveUnwritten), _) => return Err(Error::SolveUnwritten),
                (outcome, grid) => judge(n, &xs, tile, outcome, grid),
            },
            Err(e) => judge(n, &[], tile, Err(e), None),
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

/// The emulated device the exercise runs a second time: an H200's shape,
/// 1056 cooperative blocks of 256 threads.
pub const LARGER_DEVICE: gpu_core::emu::Device = gpu_core::emu::Device::H200;

/// The sizes it runs there: one whose grid is smaller than a block's
/// threads, and the lesson's n, whose 1056 blocks are more than a block has
/// threads (the case the second run is for; the ladder's largest size adds
/// nothing there but a second of the learner's wait).
pub const LARGER_DEVICE_SIZES: [u64; 2] = [40_960, 4_194_915];

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
        "\nTwo sizes again, on a larger emulated GPU: {capacity} cooperative blocks of 256, more than one block has threads, so block 0 must loop over the partials\n"
    )
}

/// Runs `sizes` on the device against the chosen solver, `yours` for
/// [`Variant::Solve`] (the program passes the learner's `solve()`, which it
/// compiles from `exercise/solve.rs`); `each` sees every case as it is judged.
pub fn run_sizes(gpu: &Gpu, variant: Variant, yours: Solver, sizes: &[u64], each: &mut dyn FnMut(&Case)) -> Result<ExerciseReport> {
    let solver: Solver = match variant {
        Variant::Solve => yours,
        Variant::Reference => variants::reference,
        Variant::GridFromN => variants::grid_from_n,
        Variant::ZeroGrid => variants::zero_grid,
        Variant::RoundDown => variants::round_down,
        Variant::BoundsBug => variants::bounds_bug,
        Variant::PartialsIf => variants::partials_if,
        Variant::PerSm => variants::per_sm,
    };
    let tile = crate::kernels().exercise_sum.tile().unwrap_or(32);
    let cases = run_ladder(
        sizes,
        tile,
        |xs| {
            let mut grid = None;
            let outcome = (|| {
                let input = DeviceInput::upload(gpu, xs)?;
                let mut total = gpu.zeros::<f32>(1)?;
                let (solved, launched) = gpu.recording_launches(|| solver(gpu, &input, &mut total));
                let solved = solved?;
                grid = grid_problem(xs.len() as u64, solved, &launched, counts_of(gpu, &launched)?);
                Ok((gpu.read(&total)?[0], solved))
            })();
            (outcome, grid)
        },
        each,
    )?;
    let counts = cases.iter().rev().find_map(|c| c.solved.filter(|s| s.blocks_per_sm > 0));
    let checks: Vec<Check> = cases
        .iter()
        .map(|c| Check::new(format!("n = {}", c.n), c.pass(), c.launch_error.clone().or(c.grid.clone()).or(c.hint.clone()).unwrap_or_default()))
        .collect();
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

/// What the device says of the kernel `launched` holds, at the block size it
/// was launched with (`None` unless it holds exactly one cooperative launch).
fn counts_of(gpu: &Gpu, launched: &[Launched]) -> Result<Option<DeviceCounts>> {
    let [launch] = launched else { return Ok(None) };
    if !launch.cooperative {
        return Ok(None);
    }
    let k = crate::kernels();
    let def = [k.exercise_sum, k.exercise_sum_bounds_bug, k.exercise_sum_partials_if].into_iter().find(|d| d.name() == launch.kernel);
    let Some(def) = def else { return Ok(None) };
    let limits = gpu.cooperative_kernel(&def)?.limits(launch.threads_per_block)?;
    Ok(Some(DeviceCounts { blocks_per_sm: limits.blocks_per_sm, sms: limits.sms }))
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
    let sum_right = c.error.zip(c.bound).is_some_and(|(e, b)| e <= b);
    let verdict = match (&c.launch_error, &c.grid, c.pass()) {
        (Some(e), _, _) => format!("FAIL: {e}"),
        (None, _, true) => "pass".to_string(),
        (None, Some(g), false) if sum_right => format!("FAIL: {g}"),
        (None, Some(g), false) => format!("FAIL: wrong sum, and {g}"),
        (None, None, false) => match &c.hint {
            Some(h) => format!("FAIL: wrong sum: {h}"),
            None => "FAIL: wrong sum".to_string(),
        },
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

    fn ladder(sizes: &[u64], mut attempt: impl FnMut(&[f32]) -> Outcome) -> Vec<Case> {
        run_ladder(sizes, 32, |xs| (attempt(xs), None), &mut |_| {}).unwrap()
    }

    /// The T4's limits for the exercise kernel at 256 threads.
    const T4: DeviceCounts = DeviceCounts { blocks_per_sm: 4, sms: 40 };

    fn launched(blocks: u32, threads_per_block: u32) -> Launched {
        Launched { kernel: "exercise_sum", blocks, threads_per_block, cooperative: true }
    }

    fn problem(n: u64, blocks: u32) -> Option<String> {
        grid_problem(n, Solved { blocks, threads_per_block: 256, blocks_per_sm: 4, sms: 40 }, &[launched(blocks, 256)], Some(T4))
    }

    #[test]
    fn the_lessons_grid_passes_at_every_size_of_the_ladder() {
        for n in LADDER {
            let blocks = n.div_ceil(256).min(160) as u32;
            if blocks > 0 {
                assert_eq!(problem(n, blocks), None, "n = {n}");
            }
        }
        assert_eq!(grid_problem(0, Solved { blocks: 0, threads_per_block: 256, blocks_per_sm: 4, sms: 40 }, &[], None), None);
    }

    #[test]
    fn a_grid_of_blocks_per_sm_alone_is_named_where_n_needs_more() {
        // The mistake the issue found passing: 4 blocks on the T4.
        assert_eq!(problem(1024, 4), None, "n = 1024 needs exactly 4");
        let p = problem(4096, 4).unwrap();
        assert!(p.contains("the grid is too small: 4 blocks (that is blocks per SM alone"), "{p}");
        assert!(p.contains("min(ceil(4096 / 256), 4 x 40) = 16"), "{p}");
        assert!(problem(40960, 40).unwrap().contains("the SM count alone"));
        assert!(problem(611, 2).unwrap().contains("rounded down: round the division up"));
    }

    #[test]
    fn a_solved_that_is_not_what_was_launched_is_named() {
        let said = Solved { blocks: 160, threads_per_block: 256, blocks_per_sm: 4, sms: 40 };
        let p = grid_problem(4096, said, &[launched(40, 1024)], Some(DeviceCounts { blocks_per_sm: 1, sms: 40 })).unwrap();
        assert!(p.contains("returned Solved { blocks: 160, threads_per_block: 256, .. } but launched 40 blocks of 1024"), "{p}");
        // Counts from another block size than the launch's.
        let said = Solved { blocks: 16, threads_per_block: 1024, blocks_per_sm: 4, sms: 40 };
        let p = grid_problem(16384, said, &[launched(16, 1024)], Some(DeviceCounts { blocks_per_sm: 1, sms: 40 })).unwrap();
        assert!(p.contains("reports 4 blocks/SM x 40 SMs, but exercise_sum at 1024 threads per block fits 1 blocks/SM x 40 SMs"), "{p}");
    }

    #[test]
    fn no_launch_two_launches_and_an_ordinary_launch_are_named() {
        let s = Solved { blocks: 1, threads_per_block: 256, blocks_per_sm: 4, sms: 40 };
        assert!(grid_problem(1, s, &[], Some(T4)).unwrap().contains("launched nothing"));
        assert!(grid_problem(1, s, &[launched(1, 256), launched(1, 256)], Some(T4)).unwrap().contains("made 2 launches"));
        let ordinary = Launched { cooperative: false, ..launched(1, 256) };
        assert!(grid_problem(1, s, &[ordinary], Some(T4)).unwrap().contains("the ordinary way"));
    }

    #[test]
    fn a_total_of_the_first_partials_is_named_as_an_if_where_the_loop_belongs() {
        // 1,056 blocks of 256: block 0's `if` adds partials 0..256 only.
        let xs = reference::fill(4_194_915).unwrap();
        let r = Reference::new(&xs);
        let per = r.per_block(1056, 256);
        let first: f64 = per[..256].iter().map(|p| p.0).sum();
        let h = wrong_sum_hint(&r, first as f32, 1056, 256).unwrap();
        assert!(h.contains("the first 256 of the 1056 block partials") && h.contains("not an `if`"), "{h}");
        assert!(wrong_sum_hint(&r, per[0].0 as f32, 1056, 256).unwrap().contains("block 0's partial alone"));
        // A wrong total that matches neither gets no guess.
        assert_eq!(wrong_sum_hint(&r, 1.0, 1056, 256), None);
    }

    #[test]
    fn a_right_sum_on_a_small_grid_fails_its_case_and_says_the_sum_is_right() {
        let xs = reference::fill(4096).unwrap();
        let sum = xs.iter().map(|&x| x as f64).sum::<f64>() as f32;
        let case = judge(4096, &xs, 32, Ok((sum, solved(4))), problem(4096, 4));
        assert!(!case.pass());
        let r = row(&case);
        assert!(r.contains("FAIL: the sum is right, but the grid is too small"), "{r}");
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
