//! The exercise's harness: the case ladder, each case against a double
//! reference, the smallest failure first.

pub mod diagnosis;
pub mod variants;

use crate::checks::{self, Check, Status};
use crate::device::{Buffer, Gpu};
use crate::error::{Error, Result};
use crate::launch::{DeviceInput, SumParams};
use crate::observe::Launched;
use crate::reference::{self, Reference};
use crate::text::{per_sm_times_sms, plural};
use cg_kernel::kernels::{GridSync, KernelDef};
use cg_launcher::error::Error as L;
use diagnosis::{Counted, Grid, Loop};
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
    /// Our solution's grid, its kernel's second stage one `grid.reduce`
    /// (`exercise_sum_grid_reduce`): the lesson's next step.
    GridReduce,
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
    /// A grid larger than the exercise's answer, within the capacity: it
    /// passes, with a note ([`idle_blocks`]).
    pub idle: Option<Idle>,
    /// A right sum whose atomics on one word make a longer chain than the
    /// tree's: it passes, with a note ([`Slow`]).
    pub slow: Option<Slow>,
}

/// One run of the solver at one size, as the harness saw it: its outcome,
/// what is wrong with its launch ([`grid_problem`]), its idle blocks
/// ([`idle_blocks`]), and on the emulator the most atomic updates one word
/// received (`Launched::most_atomics_on_one_word`).
#[derive(Debug)]
pub struct Attempt {
    pub outcome: Outcome,
    pub grid: Option<String>,
    pub idle: Option<Idle>,
    pub atomics: Option<u64>,
}

impl Attempt {
    /// An outcome with nothing wrong with its launch and nothing counted.
    pub fn of(outcome: Outcome) -> Attempt {
        Attempt { outcome, grid: None, idle: None, atomics: None }
    }
}

/// A right sum made with more atomic updates of one word than any order of
/// block totals makes (`out.atomic_add(0, x)` for every element: n of
/// them). A GPU applies atomics on one address one after another, so they
/// are one chain, `atomics` long, where the lesson's tree's longest is
/// `tree` additions: correct, and about [`Slow::times`] slower. Where its
/// error was past the bound of any order of block totals, it passed within
/// the bound of that longer chain only because the probe found every
/// sampled element added once (`counted`).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Slow {
    pub atomics: u64,
    pub tree: u64,
    pub counted: Option<Counted>,
}

impl Slow {
    /// `atomics / tree`, to two significant figures.
    pub fn times(&self) -> u64 {
        let r = self.atomics as f64 / self.tree.max(1) as f64;
        if r < 100.0 {
            return r.round() as u64;
        }
        let p = 10f64.powi(r.log10().floor() as i32 - 1);
        ((r / p).round() * p) as u64
    }

    /// The note a passing case carries.
    pub fn note(&self, n: u64) -> String {
        let mut o = format!(
            "the sum at n = {n} is correct, and about {} times slower than the tree: the emulator counted {} atomic updates of one word, and a GPU applies atomics on one address one after another, so they are one chain of {} steps, where the lesson's tree's longest is {} additions (a thread's share of the grid-stride loop, block_sum, then block 0's loop and block_sum over the partials)",
            self.times(),
            self.atomics,
            self.atomics,
            self.tree
        );
        if let Some(c) = &self.counted {
            let _ = write!(
                o,
                ". Its error is past the bound of any order of block totals and within the bound of a chain that long, and {}, so the sampled elements were neither lost nor doubled",
                c.describe()
            );
        }
        o.push_str(". Add each thread's elements in a register and each block's in its tree first, as the lesson does: then total[0] needs one atomic per block at most");
        o
    }
}

/// A grid larger than the exercise's answer, min(ceil(n / threads), blocks
/// per SM x SMs), and no larger than the capacity: correct, since a
/// grid-stride loop leaves the extra blocks nothing to do, but idle.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
pub struct Idle {
    pub blocks: u32,
    /// The exercise's answer for this n.
    pub wanted: u64,
}

impl Idle {
    /// The note a passing case carries.
    pub fn note(&self, n: u64) -> String {
        format!(
            "{} for n = {n}: {} nothing to do; the exercise's answer, min(ceil(n / threads), capacity), is {}",
            plural(self.blocks, "block", "blocks"),
            match self.blocks as u64 - self.wanted {
                1 => "1 has".to_string(),
                k => format!("{k} have"),
            },
            self.wanted
        )
    }
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

/// The kernels the exercise may launch: `exercise_sum`, its two mutants,
/// and its second stage as one grid reduce.
fn exercise_kernels() -> [KernelDef<SumParams, GridSync>; 4] {
    let k = crate::kernels();
    [k.exercise_sum, k.exercise_sum_bounds_bug, k.exercise_sum_partials_if, k.exercise_sum_grid_reduce]
}

/// What a case reports for a solver's error: an emulator fault in full, a
/// driver error by its name, anything else as its message. The harness knows
/// n, so a 0-block grid for n > 0 is named as the rounding it is.
fn case_error(n: u64, e: &Error) -> String {
    match e {
        Error::Launch(L::Emulated { fault, launch: Some(launch), .. }) => format!("{fault}; the launch: {launch}"),
        Error::Launch(L::Emulated { fault, .. }) => fault.to_string(),
        Error::Launch(L::EmptyGrid { kernel }) if n > 0 => format!(
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
        [] if n == 0 && solved.blocks == 0 => return None,
        [] if n == 0 => {
            return Some(format!(
                "solve() returned Solved {{ blocks: {}, .. }} but launched nothing: for n = 0 return without launching, and return what you launched, 0 blocks",
                solved.blocks
            ));
        }
        [] => {
            return Some(
                "solve() launched nothing: the exercise is one cooperative launch of exercise_sum for every n above 0 (a block count computed as n / threads per block is 0 below one block's threads: round the division up, n.div_ceil(threads))"
                    .to_string(),
            );
        }
        [one] if !exercise_kernels().iter().any(|k| k.name() == one.kernel) => {
            return Some(format!(
                "solve() launched {}: the exercise is one cooperative launch of exercise_sum, `gpu.cooperative_kernel(&host::kernels().exercise_sum)?`",
                one.kernel
            ));
        }
        [one] if one.cooperative => one,
        [one] => {
            return Some(format!(
                "solve() launched {} the ordinary way: exercise_sum calls grid.sync(), so it needs a cooperative launch, `gpu.cooperative_kernel(&host::kernels().exercise_sum)?`",
                one.kernel
            ));
        }
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
            "solve() returned Solved {{ blocks: {}, threads_per_block: {}, .. }} but launched {} of {}: return what you launched",
            solved.blocks,
            solved.threads_per_block,
            plural(launch.blocks, "block", "blocks"),
            plural(launch.threads_per_block, "thread", "threads")
        ));
    }
    let counts = counts?;
    if (solved.blocks_per_sm, solved.sms) != (counts.blocks_per_sm, counts.sms) {
        return Some(format!(
            "solve() reports {}, but {} at {} threads per block fits {}: ask kernel.limits(threads_per_block) of the kernel you launch, at the block size you launch",
            per_sm_times_sms(solved.blocks_per_sm, solved.sms),
            launch.kernel,
            launch.threads_per_block,
            per_sm_times_sms(counts.blocks_per_sm, counts.sms)
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
            "the sum is right, but the grid is too small: {}{why}, where n = {n} takes min(ceil({n} / {threads}), {} x {}) = {wanted}",
            plural(launch.blocks, "block", "blocks"),
            counts.blocks_per_sm,
            counts.sms
        ));
    }
    None
}

/// Where a launch that [`grid_problem`] passed leaves blocks idle: more than
/// the exercise's answer for `n`, min(ceil(n / threads), capacity).
pub fn idle_blocks(n: u64, launched: &[Launched], counts: Option<DeviceCounts>) -> Option<Idle> {
    let ([launch], Some(counts)) = (launched, counts) else { return None };
    let capacity = counts.blocks_per_sm as u64 * counts.sms as u64;
    let wanted = n.div_ceil(launch.threads_per_block as u64).min(capacity);
    (launch.blocks as u64 > wanted).then_some(Idle { blocks: launch.blocks, wanted })
}

/// The largest size at which the harness measures, element by element, how
/// often solve() adds each element ([`diagnosis::Counted`]): each of the
/// probe's few runs of solve() is a run at this size.
pub const PROBE_MAX: u64 = 65_536;

/// The largest size at which the harness tries every loop it knows against
/// a wrong total (each try reads the input once).
pub const SEARCH_MAX: u64 = 4_194_915;

/// What the harness has learnt of a ladder's wrong sums so far: the loops
/// that make every wrong total seen (narrowed size by size: at a small size
/// several loops count alike), what each case's total was made of, and the
/// counts a probe measured.
#[derive(Clone, Debug, Default)]
pub struct Diagnosis {
    pub suspects: Option<Vec<Loop>>,
    /// Each size a loop was named at, and the loops that made its total.
    pub told: Vec<Told>,
    pub counted: Option<Counted>,
}

/// A wrong total, and the loops that make it, with what each does.
#[derive(Clone, Debug)]
pub struct Told {
    pub n: u64,
    pub grid: Grid,
    pub total: f32,
    pub reference: f64,
    pub found: Vec<(Loop, diagnosis::Prediction)>,
}

impl Told {
    /// The hint by `named` (and `also`, where it made this total too).
    fn hint(&self, named: Loop, also: Option<Loop>) -> Option<String> {
        let (_, p) = self.found.iter().find(|(l, _)| *l == named)?;
        let also = also.filter(|a| self.found.iter().any(|(l, _)| l == a));
        Some(diagnosis::loop_hint(named, p, self.grid, self.total, self.reference, also))
    }
}

impl Diagnosis {
    /// The loop named in the end (the first that made every wrong total),
    /// and the first of the other stage that did too, if any: a loop of the
    /// other stage that counts every element alike at every size.
    pub fn named(&self) -> Option<(Loop, Option<Loop>)> {
        let s = self.suspects.as_ref()?;
        let first = *s.first()?;
        Some((first, s.iter().copied().find(|l| l.stage != first.stage)))
    }

    /// Each case's hint by the loop named in the end, where that loop made
    /// its total too: a small size where several loops count alike is
    /// named as the larger sizes tell it.
    pub fn settle(&self, cases: &mut [Case]) {
        let Some((named, also)) = self.named() else { return };
        for told in &self.told {
            if let (Some(case), Some(hint)) = (cases.iter_mut().find(|c| c.n == told.n), told.hint(named, also)) {
                case.hint = Some(hint);
            }
        }
    }
}

/// What a wrong `total` on grid `g` matches, where the harness can tell, and
/// the fix: the first `threads` partials of more (block 0 reads one partial
/// per thread, an `if` where the loop over the partials belongs), block 0's
/// partial alone, or the total of a loop over the input or the partials
/// written with another start or step ([`diagnosis`]), whatever its start and
/// step, told by the arithmetic of its total and, where `probe` measures them
/// (solve() run again on this size, element by element), by how often it
/// adds each element; failing those, a whole multiple of the sum. `d` carries
/// what earlier sizes taught, and learns from this one.
pub fn wrong_sum_hint(r: &Reference, total: f32, g: Grid, d: &mut Diagnosis, probe: &mut dyn FnMut(Grid) -> Option<Counted>) -> Option<String> {
    let (blocks, threads) = (g.blocks, g.threads);
    if blocks == 0 || threads == 0 {
        return None;
    }
    if blocks > 1 {
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
    }
    let n = r.xs.len() as u64;
    // One probe, at the first wrong size, and again at the first of more than one block.
    let probed_one_block = d.counted.as_ref().is_some_and(|c| c.blocks < 2);
    if n <= PROBE_MAX && (d.counted.is_none() || probed_one_block && blocks > 1) {
        d.counted = probe(g).or(d.counted.take());
    }
    // The loops that made every earlier wrong total; all of them at the first,
    // up to the size past which trying each costs too much.
    let pool = match &d.suspects {
        Some(s) => s.clone(),
        None if n <= SEARCH_MAX => Loop::suspects(),
        None => Vec::new(),
    };
    let mut found = diagnosis::loops_that_make(&pool, r.xs, g, total, d.counted.as_ref());
    if found.is_empty() && d.suspects.is_some() && n <= SEARCH_MAX {
        // A total none of them makes: another mistake, or another loop; look afresh.
        found = diagnosis::loops_that_make(&Loop::suspects(), r.xs, g, total, d.counted.as_ref());
    }
    if found.is_empty() {
        return diagnosis::arithmetic_hint(r.xs, r.sum, total, g, d.counted.as_ref());
    }
    d.suspects = Some(found.iter().map(|(l, _)| *l).collect());
    let told = Told { n, grid: g, total, reference: r.sum, found };
    let hint = d.named().and_then(|(named, also)| told.hint(named, also));
    d.told.push(told);
    hint
}

/// Checks one case's outcome against the reference of `xs`; `tile` is the
/// exercise kernel's tile size; `grid` is what [`grid_problem`] found.
pub fn judge(n: u64, xs: &[f32], tile: u32, outcome: Outcome, grid: Option<String>, idle: Option<Idle>) -> Case {
    let attempt = Attempt { outcome, grid, idle, atomics: None };
    judge_with(n, xs, tile, attempt, &mut |r, total, g| wrong_sum_hint(r, total, g, &mut Diagnosis::default(), &mut |_| None), &mut |_, _| None)
}

/// What says why a wrong total is wrong: the reference, the total, the grid.
pub type Diagnose<'a> = dyn FnMut(&Reference, f32, Grid) -> Option<String> + 'a;

/// How often solve() adds each sampled element on grid `g`
/// ([`diagnosis::Counted`]): measured at this size where it is small enough
/// ([`PROBE_MAX`]) and `needed` (or no probe has yet run on more than one
/// block), else the last one measured at a smaller size of the ladder.
pub type Probe<'a> = dyn FnMut(Grid, bool) -> Option<Counted> + 'a;

/// [`judge`], with `diagnose` to tell a wrong total, and the atomics the
/// emulator counted: where one word's are more than any order of block
/// totals makes, a sum past that order's bound is correct within the bound
/// of a chain that much longer, if `probe` finds every sampled element
/// added once ([`Slow`]).
pub fn judge_with(n: u64, xs: &[f32], tile: u32, attempt: Attempt, diagnose: &mut Diagnose, probe: &mut Probe) -> Case {
    let r = Reference::new(xs);
    let Attempt { outcome, grid, idle, atomics } = attempt;
    match outcome {
        Ok((value, solved)) => {
            let chain = reference::longest_chain_any_order(n as usize, solved.blocks, solved.threads_per_block, tile);
            let mut c = r.check_total(value, chain);
            let g = Grid { blocks: solved.blocks, threads: solved.threads_per_block, tile };
            // Atomics on one word beyond that order: a chain of them, one after another.
            let atomics = atomics.filter(|&a| a > chain);
            let mut counted = None;
            // A chain of atomics so long that the float bound says nothing
            // (2^24 additions and more): such a sum is never judged right.
            let mut endless_chain = None;
            if let Some(a) = atomics {
                let longer = r.check_total(value, chain + a);
                if !longer.bound.is_finite() {
                    endless_chain = Some(a);
                }
                let needed = !c.pass && longer.pass && longer.bound.is_finite();
                let once = probe(g, needed).filter(|k| !k.counts.is_empty() && k.counts.iter().all(|&(_, t)| t == 1));
                if needed && once.is_some() {
                    (c, counted) = (longer, once);
                }
            }
            let right = c.pass && grid.is_none();
            let tree = reference::longest_chain(n as usize, solved.blocks, solved.threads_per_block, tile);
            Case {
                n,
                status: Status::of(right),
                sum: Some(value),
                reference: r.sum,
                error: Some(c.error),
                bound: Some(c.bound),
                launch_error: None,
                solved: Some(solved),
                hint: match (c.pass, endless_chain) {
                    (true, _) => None,
                    (false, Some(a)) => Some(format!(
                        "{a} atomic adds on one float are one chain of {a} additions, one after another: past 2^24 of them an f32 sum can stop growing (adding 1 to 2^25 rounds back to 2^25), so no bound vouches for it; add each thread's share in a register and each block's in its tree first, then one atomic per block"
                    )),
                    (false, None) => diagnose(&r, value, g),
                },
                idle: if right { idle } else { None },
                // Slower by a factor worth a note: twice the tree's chain or
                // more (a warp-level atomic per warp at n = 1024 is 32 against
                // 24, no slower to speak of), or a pass that took the probe.
                slow: atomics.filter(|&a| right && (a >= 2 * tree || counted.is_some())).map(|atomics| Slow { atomics, tree, counted }),
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
            idle: None,
            slow: None,
        },
    }
}

/// Which sizes a ladder leaves out once a size has failed: on the emulator,
/// where the ladder's largest sizes take seconds each (minutes, for a kernel
/// that does more work than it should), and add nothing to a failure the
/// smaller ones have already named.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Skip {
    /// Once a size has failed, the sizes above this are not run (`None`: every size runs).
    pub above: Option<u64>,
    /// A size that failed before this ladder began (on the first device).
    pub failed: Option<u64>,
}

impl Skip {
    /// Every size runs.
    pub const NEVER: Skip = Skip { above: None, failed: None };
    /// The program's choice on the emulator: above 40,960, once a size has failed.
    pub const ON_THE_EMULATOR: Skip = Skip { above: Some(40_960), failed: None };
}

/// What a ladder ran, and what it left out.
#[derive(Clone, Debug, Default)]
pub struct Ran {
    pub cases: Vec<Case>,
    /// Sizes not run ([`Skip`]), and the failed size that left them out.
    pub skipped: Vec<u64>,
    pub skipped_after: Option<u64>,
    /// The size whose kernel did not finish ([`is_stuck`]): the ladder stopped there.
    pub stuck: Option<u64>,
}

/// Whether `e` says a kernel did not finish: the emulator's watchdog stopped
/// it, or a GPU's launch outlived `--timeout-s` (after which the device
/// still runs it). Every later size would wait out a timeout of its own.
pub fn is_stuck(e: &Error) -> bool {
    use cg_emulator::Fault;
    match e {
        Error::Launch(L::Emulated { fault, .. }) => matches!(**fault, Fault::Timeout { .. } | Fault::BarrierLoop { .. }),
        Error::Launch(L::Timeout { .. } | L::DeviceStuck { .. } | L::GridBarrierTimedOut { .. }) => true,
        _ => false,
    }
}

/// Runs every size through `attempt` (the solver's outcome, and what is wrong
/// with its grid, if anything); a failed case does not stop the ladder,
/// except that `skip` leaves out its largest sizes after one, and a kernel
/// that did not finish ([`is_stuck`]) leaves out every size after it, but an
/// unwritten `solve()` does, before any case ([`Error::SolveUnwritten`]).
/// `diagnose` tells each wrong total; `each` sees every case as soon as it is
/// judged. `probe` measures how often solve() adds each sampled element of
/// an input ([`Probe`]): the ladder keeps the last it measured.
pub fn run_ladder(
    sizes: &[u64],
    tile: u32,
    skip: Skip,
    mut attempt: impl FnMut(&[f32]) -> Attempt,
    diagnose: &mut Diagnose,
    probe: &mut dyn FnMut(&[f32], Grid) -> Option<Counted>,
    each: &mut dyn FnMut(&Case),
) -> Result<Ran> {
    let mut ran = Ran { cases: Vec::with_capacity(sizes.len()), ..Ran::default() };
    let mut failed = skip.failed;
    let mut probed: Option<Counted> = None;
    for &n in sizes {
        if let Some(stuck) = ran.stuck {
            ran.skipped.push(n);
            ran.skipped_after = Some(stuck);
            continue;
        }
        if let (Some(above), Some(f)) = (skip.above, failed)
            && n > above
        {
            ran.skipped.push(n);
            ran.skipped_after = Some(f);
            continue;
        }
        let case = match reference::fill(n as usize) {
            Ok(xs) => match attempt(&xs) {
                Attempt { outcome: Err(Error::SolveUnwritten), .. } => return Err(Error::SolveUnwritten),
                attempt => {
                    if matches!(&attempt.outcome, Err(e) if is_stuck(e)) {
                        ran.stuck = Some(n);
                    }
                    let mut once = |g: Grid, needed: bool| {
                        let stale = probed.as_ref().is_none_or(|c| c.blocks < 2 || needed && c.n != n);
                        if n <= PROBE_MAX
                            && stale
                            && let Some(c) = probe(&xs, g)
                        {
                            probed = Some(c);
                        }
                        probed.clone()
                    };
                    judge_with(n, &xs, tile, attempt, diagnose, &mut once)
                }
            },
            Err(e) => judge(n, &[], tile, Err(e), None, None),
        };
        each(&case);
        if !case.pass() {
            failed = failed.or(Some(n));
        }
        ran.cases.push(case);
    }
    Ok(ran)
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
    /// The emulator's interleaving seed (`--seed`, or the one `--seed random` drew).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
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
    /// Sizes of the ladder not run ([`Skip`]), and the failed size after which.
    pub skipped: Vec<u64>,
    pub skipped_after: Option<u64>,
    /// The size whose kernel did not finish, after which nothing ran, on
    /// this device or the next ([`is_stuck`]).
    pub stuck: Option<u64>,
    /// How often solve() added each of a few elements of the smallest size
    /// whose sum was wrong, measured ([`diagnosis::Counted`]).
    pub counted: Option<Counted>,
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
pub const LARGER_DEVICE: cg_emulator::Device = cg_emulator::Device::H200;

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

/// The line before the second ladder: `capacity`, the cooperative blocks of
/// `threads` the larger device holds of the kernel solve() launched, at the
/// block size it launched.
pub fn larger_device_header(capacity: u32, threads: u32) -> String {
    let grid = format!("{} of {threads}", plural(capacity, "cooperative block", "cooperative blocks"));
    if capacity > threads {
        format!("\nTwo sizes again, on a larger emulated GPU: {grid}, more than one block has threads, so block 0 must loop over the partials\n")
    } else {
        format!(
            "\nTwo sizes again, on a larger emulated GPU: {grid}, no more than one block has threads, so even here block 0's loop over the partials takes one trip (with blocks of 256 there would be more blocks than threads)\n"
        )
    }
}

/// The block size solve() launched with in `r` (its last launch), if it launched.
pub fn launched_threads(r: &ExerciseReport) -> Option<u32> {
    r.cases.iter().rev().find_map(|c| c.solved.filter(|s| s.blocks > 0).map(|s| s.threads_per_block))
}

/// [`larger_device_header`] for `larger`, after the first device's report
/// `first`: at the block size solve() launched there (256 if it launched
/// none, or one the device cannot hold).
pub fn larger_device_header_on(larger: &Gpu, first: &ExerciseReport) -> Result<String> {
    let kernel = larger.cooperative_kernel(&crate::kernels().exercise_sum)?;
    let threads = launched_threads(first).unwrap_or(256);
    let (capacity, threads) = match kernel.limits(threads) {
        Ok(limits) => (limits.capacity(), threads),
        Err(_) => (kernel.limits(256)?.capacity(), 256),
    };
    Ok(larger_device_header(capacity, threads))
}

/// Runs `sizes` on the device against the chosen solver, `yours` for
/// [`Variant::Solve`] (the program passes the learner's `solve()`, which it
/// compiles from `exercise/solve.rs`); `each` sees every case as it is judged.
pub fn run_sizes(gpu: &Gpu, variant: Variant, yours: Solver, sizes: &[u64], each: &mut dyn FnMut(&Case)) -> Result<ExerciseReport> {
    run_sizes_skipping(gpu, variant, yours, sizes, Skip::NEVER, each)
}

/// [`run_sizes`], leaving out the sizes `skip` says once a size has failed.
pub fn run_sizes_skipping(gpu: &Gpu, variant: Variant, yours: Solver, sizes: &[u64], skip: Skip, each: &mut dyn FnMut(&Case)) -> Result<ExerciseReport> {
    let solver: Solver = match variant {
        Variant::Solve => yours,
        Variant::Reference => variants::reference,
        Variant::GridFromN => variants::grid_from_n,
        Variant::ZeroGrid => variants::zero_grid,
        Variant::RoundDown => variants::round_down,
        Variant::BoundsBug => variants::bounds_bug,
        Variant::PartialsIf => variants::partials_if,
        Variant::PerSm => variants::per_sm,
        Variant::GridReduce => variants::grid_reduce,
    };
    let tile = crate::kernels().exercise_sum.tile().unwrap_or(32);
    let mut d = Diagnosis::default();
    let ran = run_ladder(
        sizes,
        tile,
        skip,
        |xs| {
            let (mut grid, mut idle, mut atomics) = (None, None, None);
            let outcome = (|| {
                let input = DeviceInput::upload(gpu, xs)?;
                let mut total = gpu.zeros::<f32>(1)?;
                let (solved, launched) = gpu.recording_launches(|| solver(gpu, &input, &mut total));
                let solved = solved?;
                let n = xs.len() as u64;
                let counts = counts_of(gpu, &launched)?;
                grid = grid_problem(n, solved, &launched, counts);
                idle = idle_blocks(n, &launched, counts);
                atomics = launched.iter().filter_map(|l| l.most_atomics_on_one_word).max();
                Ok((gpu.read(&total)?[0], solved))
            })();
            Attempt { outcome, grid, idle, atomics }
        },
        &mut |r, total, g| wrong_sum_hint(r, total, g, &mut d, &mut |g| count_each(gpu, solver, r.xs.len() as u64, g)),
        &mut |xs, g| count_each(gpu, solver, xs.len() as u64, g),
        each,
    )?;
    let mut cases = ran.cases;
    d.settle(&mut cases);
    let counts = cases.iter().rev().find_map(|c| c.solved.filter(|s| s.blocks_per_sm > 0));
    let checks: Vec<Check> = cases.iter().map(|c| Check::new(format!("n = {}", c.n), c.pass(), failure(c).unwrap_or_default())).collect();
    Ok(ExerciseReport {
        status: checks::status(&checks),
        device: gpu.info.name.clone(),
        seed: gpu.info.seed,
        variant,
        smallest_failure: smallest_failure(&cases).map(|c| c.n),
        cases,
        blocks_per_sm: counts.map(|s| s.blocks_per_sm),
        sms: counts.map(|s| s.sms),
        checks,
        larger_device: None,
        skipped: ran.skipped,
        skipped_after: ran.skipped_after,
        stuck: ran.stuck,
        counted: d.counted,
    })
}

/// How often `solver` adds each of a few elements of `n` on grid `g`
/// ([`diagnosis::samples`]): for each, `solver` run on `n` zeros but for
/// that element, 1.0, whose total is the count (exact in f32). `None` if a
/// run fails, launches another grid, or returns no whole count.
fn count_each(gpu: &Gpu, solver: Solver, n: u64, g: Grid) -> Option<Counted> {
    let mut counts = Vec::new();
    let mut xs = vec![0.0f32; n as usize];
    for i in diagnosis::samples(n, g) {
        xs[i as usize] = 1.0;
        let input = DeviceInput::upload(gpu, &xs).ok()?;
        xs[i as usize] = 0.0;
        let mut total = gpu.zeros::<f32>(1).ok()?;
        let solved = solver(gpu, &input, &mut total).ok()?;
        let t = gpu.read(&total).ok()?[0];
        if (solved.blocks, solved.threads_per_block) != (g.blocks, g.threads) || !(t >= 0.0 && t.fract() == 0.0 && t < 1e7) {
            return None;
        }
        counts.push((i, t as u32));
    }
    Some(Counted { n, blocks: g.blocks, threads_per_block: g.threads, counts })
}

/// Why a case failed, in full: the solver's error, what is wrong with its
/// launch (and whether the sum was right too), or what its wrong sum matches.
fn failure(c: &Case) -> Option<String> {
    if c.pass() {
        return None;
    }
    let sum_right = c.error.zip(c.bound).is_some_and(|(e, b)| e <= b);
    Some(match (&c.launch_error, &c.grid, &c.hint) {
        (Some(e), _, _) => e.clone(),
        (None, Some(g), _) if sum_right => g.clone(),
        (None, Some(g), _) => format!("wrong sum, and {g}"),
        (None, None, Some(h)) => format!("wrong sum: {h}"),
        (None, None, None) => "wrong sum".to_string(),
    })
}

/// What the device says of the kernel `launched` holds, at the block size it
/// was launched with (`None` unless it holds exactly one cooperative launch).
fn counts_of(gpu: &Gpu, launched: &[Launched]) -> Result<Option<DeviceCounts>> {
    let [launch] = launched else { return Ok(None) };
    if !launch.cooperative {
        return Ok(None);
    }
    let def = exercise_kernels().into_iter().find(|d| d.name() == launch.kernel);
    let Some(def) = def else { return Ok(None) };
    let limits = gpu.cooperative_kernel(&def)?.limits(launch.threads_per_block)?;
    Ok(Some(DeviceCounts { blocks_per_sm: limits.blocks_per_sm, sms: limits.sms }))
}

/// The harness's heading.
pub fn header(device: &str, variant: Variant, seed: Option<u64>) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "Exercise: single-launch sum, solver {}, on {}", variant.name(), device);
    if let Some(seed) = seed {
        let _ = writeln!(o, "threads interleaved at random from seed {seed} (--seed {seed} repeats this run)");
    }
    let _ = writeln!(o, "input: {}; reference: double-precision sum; bound: {}\n", reference::FILL_RULE, reference::ANY_ORDER_BOUND_RULE);
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
        (None, _, true) => match (&c.slow, c.idle) {
            (Some(slow), _) => format!("pass, correct but about {}x slower than the tree (note below)", slow.times()),
            (None, Some(idle)) => format!("pass, {} of {} blocks idle (note below)", idle.blocks as u64 - idle.wanted, idle.blocks),
            (None, None) => "pass".to_string(),
        },
        (Some(_), _, _) => "FAIL (below)".to_string(),
        (None, _, false) if sum_right => "FAIL: right sum, wrong launch (below)".to_string(),
        (None, _, false) => "FAIL: wrong sum (below)".to_string(),
    };
    format!("{:>10}  {:>7}  {:>20}  {:>20.6}  {:>9}  {:>9}  {}\n", c.n, blocks, value, c.reference, error, bound, verdict)
}

/// What follows the table: each distinct failure once, with every size it
/// failed at (one already printed for `earlier`, the first device's ladder,
/// is named as such); the note on idle blocks, once.
pub fn footer(r: &ExerciseReport, earlier: Option<&ExerciseReport>) -> String {
    let mut o = String::from("\n");
    // A failure differs from size to size in its numbers only (the grid,
    // the block that raced, how many blocks): its words are printed once.
    let printed = |detail: &str| earlier.is_some_and(|e| e.checks.iter().any(|c| !c.pass() && shape(&c.detail) == shape(detail)));
    let mut first_of_shape: Vec<(String, &Check)> = Vec::new();
    let checks: Vec<Check> = r
        .checks
        .iter()
        .map(|c| {
            if c.pass() {
                return c.clone();
            }
            if printed(&c.detail) {
                return Check::new(c.name.clone(), false, "the same failure as on the first device, above");
            }
            match first_of_shape.iter().find(|(s, _)| *s == shape(&c.detail)) {
                Some((_, first)) if first.detail != c.detail => {
                    Check::new(c.name.clone(), false, format!("the same failure as {}, with this size's numbers", first.name))
                }
                Some(_) => c.clone(),
                None => {
                    first_of_shape.push((shape(&c.detail), c));
                    c.clone()
                }
            }
        })
        .collect();
    checks::render(&mut o, &checks);
    // The counts, where a wrong sum's words are printed here, not only on the first device.
    let told_here = checks.iter().any(|c| !c.pass() && c.detail.starts_with("wrong sum"));
    if let Some(c) = r.counted.as_ref().filter(|_| told_here) {
        let _ = writeln!(o, "counted: {}", c.describe());
    }
    if let (Some(after), false, Some(_)) = (r.skipped_after, r.skipped.is_empty(), r.stuck) {
        let sizes: Vec<String> = r.skipped.iter().map(u64::to_string).collect();
        let _ = writeln!(
            o,
            "not run: n = {}, since the kernel did not finish at n = {after}: each size would wait out a timeout of its own, so make the kernel finish first",
            sizes.join(", ")
        );
    } else if let (Some(after), false) = (r.skipped_after, r.skipped.is_empty()) {
        let sizes: Vec<String> = r.skipped.iter().map(u64::to_string).collect();
        let why = if r.cases.iter().any(|c| c.n == after) { format!("n = {after} failed") } else { format!("n = {after} failed on the first device") };
        let _ = writeln!(
            o,
            "not run: n = {}, since {why}: on the emulator these sizes take seconds each (minutes, for a kernel that does more work than it should), so fix what failed first (a GPU runs every size)",
            sizes.join(", ")
        );
    }
    // The smallest failure of the whole run: the first device's, where it failed a smaller size.
    match (r.smallest_failure, earlier.and_then(|e| e.smallest_failure)) {
        (Some(n), Some(first)) if first <= n => {
            let _ = writeln!(o, "smallest failing case: n = {first}, on the first device (above)");
        }
        (Some(n), _) => {
            let _ = writeln!(o, "smallest failing case: n = {n}");
        }
        (None, _) => {}
    }
    let idle: Vec<&Case> = r.cases.iter().filter(|c| c.idle.is_some()).collect();
    if let Some(first) = idle.first() {
        let others: Vec<String> = idle[1..].iter().map(|c| c.n.to_string()).collect();
        let _ = write!(o, "note: {}", first.idle.expect("filtered").note(first.n));
        if !others.is_empty() {
            let _ = write!(o, " (likewise at n = {})", others.join(", "));
        }
        o.push_str(". Correct all the same, since the grid-stride loop leaves the extra blocks nothing to do; the exercise's grid, which the lesson's own sums launch too, leaves none idle\n");
    }
    // The note of the largest size whose sum passed on the probe's counts, else of the largest.
    let slow: Vec<&Case> = r.cases.iter().filter(|c| c.slow.is_some()).collect();
    let told = slow.iter().rev().find(|c| c.slow.as_ref().is_some_and(|s| s.counted.is_some())).or(slow.last());
    if let Some(told) = told {
        let others: Vec<String> = slow.iter().filter(|c| c.n != told.n).map(|c| c.n.to_string()).collect();
        let _ = write!(o, "note: {}", told.slow.as_ref().expect("filtered").note(told.n));
        if !others.is_empty() {
            let _ = write!(o, " (slower than the tree likewise at n = {})", others.join(", "));
        }
        o.push('\n');
    }
    o
}

/// A failure's words without its numbers, so that two failures that differ
/// only in those have one shape: each number is `#`, a list or range of
/// them one `#` (`blocks 1, 2` and `block 2`, `lanes 0-7` and `lane 0`),
/// and a noun or verb beside a number the same in the singular and the
/// plural (`1 block is` and `3 blocks are`).
fn shape(detail: &str) -> String {
    let mut s = String::with_capacity(detail.len());
    for c in detail.chars() {
        match c.is_ascii_digit() {
            true if s.ends_with('#') => {}
            true => s.push('#'),
            false => s.push(c),
        }
    }
    loop {
        let folded = s.replace("#, #", "#").replace("# and #", "#").replace("#-#", "#");
        if folded == s {
            break;
        }
        s = folded;
    }
    let words: Vec<&str> = s.split(' ').collect();
    let numbered = |k: usize| words.get(k).is_some_and(|w| w.starts_with('#'));
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    for (k, w) in words.iter().enumerate() {
        let beside = numbered(k + 1) || (k > 0 && numbered(k - 1)) || (k > 1 && numbered(k - 2));
        let core = w.trim_end_matches(|c: char| !c.is_alphanumeric());
        let rest = &w[core.len()..];
        let singular = match core {
            "are" => "is",
            "were" => "was",
            "have" => "has",
            _ if core.len() > 3 && core.ends_with('s') && !core.ends_with("ss") => &core[..core.len() - 1],
            _ => core,
        };
        out.push(if beside { format!("{singular}{rest}") } else { w.to_string() });
    }
    out.join(" ")
}

/// The two counts the exercise asks you to submit with your solve(), once
/// every case has passed, on every device the harness ran.
pub fn counts_to_submit(r: &ExerciseReport) -> Option<String> {
    r.verdict().ok()?;
    let (bps, sms) = r.blocks_per_sm.zip(r.sms)?;
    Some(format!(
        "\nYour kernel's two counts, to submit with your solve(): {} = {}, the most one cooperative launch of it may use\n",
        per_sm_times_sms(bps, sms),
        plural(bps as u64 * sms as u64, "block", "blocks")
    ))
}

/// The harness's report as text.
pub fn render(r: &ExerciseReport) -> String {
    let mut o = render_one(r, None);
    if let Some(larger) = &r.larger_device {
        let capacity = larger.blocks_per_sm.zip(larger.sms).map_or(0, |(b, s)| b * s);
        o += &larger_device_header(capacity, launched_threads(larger).unwrap_or(256));
        o += &render_one(larger, Some(r));
    }
    if let Some(counts) = counts_to_submit(r) {
        o += &counts;
    }
    o
}

fn render_one(r: &ExerciseReport, earlier: Option<&ExerciseReport>) -> String {
    let mut o = header(&r.device, r.variant, r.seed);
    for c in &r.cases {
        o.push_str(&row(c));
    }
    o + &footer(r, earlier)
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
        run_ladder(sizes, 32, Skip::NEVER, |xs| Attempt::of(attempt(xs)), &mut |_, _, _| None, &mut |_, _| None, &mut |_| {}).unwrap().cases
    }

    /// The T4's limits for the exercise kernel at 256 threads.
    const T4: DeviceCounts = DeviceCounts { blocks_per_sm: 4, sms: 40 };

    fn launched(blocks: u32, threads_per_block: u32) -> Launched {
        Launched { kernel: "exercise_sum", blocks, threads_per_block, cooperative: true, most_atomics_on_one_word: None }
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
        // Nothing launched at n = 0, but a block reported: the returned value is checked too.
        let one = grid_problem(0, Solved { blocks: 1, threads_per_block: 256, blocks_per_sm: 4, sms: 40 }, &[], None).unwrap();
        assert!(one.starts_with("solve() returned Solved { blocks: 1, .. } but launched nothing"), "{one}");
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
        assert!(p.contains("reports 4 blocks/SM x 40 SMs, but exercise_sum at 1024 threads per block fits 1 block/SM x 40 SMs"), "{p}");
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
        let xs = reference::fill(300_007).unwrap();
        let r = Reference::new(&xs);
        let per = r.per_block(1056, 256);
        let first: f64 = per[..256].iter().map(|p| p.0).sum();
        let h = hint(&r, first as f32, 1056, 256).unwrap();
        assert!(h.contains("the first 256 of the 1056 block partials") && h.contains("not an `if`"), "{h}");
        assert!(hint(&r, per[0].0 as f32, 1056, 256).unwrap().contains("block 0's partial alone"));
        // A wrong total that matches neither gets no guess.
        assert_eq!(hint(&r, 1.0, 1056, 256), None);
    }

    #[test]
    fn a_right_sum_on_a_small_grid_fails_its_case_and_says_the_sum_is_right() {
        let xs = reference::fill(4096).unwrap();
        let sum = xs.iter().map(|&x| x as f64).sum::<f64>() as f32;
        let case = judge(4096, &xs, 32, Ok((sum, solved(4))), problem(4096, 4), None);
        assert!(!case.pass());
        let r = row(&case);
        assert!(r.contains("FAIL: right sum, wrong launch (below)"), "{r}");
        assert!(failure(&case).unwrap().starts_with("the sum is right, but the grid is too small"));
    }

    #[test]
    fn a_grid_between_the_answer_and_the_capacity_passes_with_a_note() {
        // n.div_ceil(128) blocks of 256: 5 for n = 611, where 3 are needed.
        assert_eq!(problem(611, 5), None);
        let idle = idle_blocks(611, &[launched(5, 256)], Some(T4)).unwrap();
        assert_eq!(idle, Idle { blocks: 5, wanted: 3 });
        // Always the capacity: 160 blocks for n = 1.
        let idle = idle_blocks(1, &[launched(160, 256)], Some(T4)).unwrap();
        assert_eq!(idle.note(1), "160 blocks for n = 1: 159 have nothing to do; the exercise's answer, min(ceil(n / threads), capacity), is 1");
        // The answer itself, and the capacity where n needs more, are not idle.
        assert_eq!(idle_blocks(611, &[launched(3, 256)], Some(T4)), None);
        assert_eq!(idle_blocks(67_108_864, &[launched(160, 256)], Some(T4)), None);
        let xs = reference::fill(1).unwrap();
        let case = judge(1, &xs, 32, Ok((xs[0], solved(160))), None, Some(idle));
        assert!(case.pass());
        assert!(row(&case).contains("pass, 159 of 160 blocks idle (note below)"), "{}", row(&case));
        let r = ExerciseReport {
            status: Status::Passed,
            device: "T4".into(),
            seed: None,
            variant: Variant::Solve,
            cases: vec![case.clone(), Case { n: 31, ..case }],
            smallest_failure: None,
            blocks_per_sm: Some(4),
            sms: Some(40),
            checks: vec![Check::new("n = 1", true, "")],
            larger_device: None,
            skipped: vec![],
            skipped_after: None,
            stuck: None,
            counted: None,
        };
        let f = footer(&r, None);
        assert!(
            f.contains(
                "note: 160 blocks for n = 1: 159 have nothing to do; the exercise's answer, min(ceil(n / threads), capacity), is 1 (likewise at n = 31)"
            ),
            "{f}"
        );
        assert!(render(&r).contains("to submit with your solve(): 4 blocks/SM x 40 SMs = 160 blocks"));
    }

    #[test]
    fn a_failure_that_differs_by_size_only_in_its_numbers_is_printed_once() {
        let race = |grid: u32| format!("data race on partials[0]: partials holds one element per block of this grid of {grid}; index it by the block");
        let report = |checks: Vec<Check>| ExerciseReport {
            status: Status::Failed,
            device: "T4".into(),
            seed: None,
            variant: Variant::Solve,
            cases: vec![],
            smallest_failure: None,
            blocks_per_sm: None,
            sms: None,
            checks,
            larger_device: None,
            skipped: vec![],
            skipped_after: None,
            stuck: None,
            counted: None,
        };
        let first = report(vec![
            Check::new("n = 611", false, race(3)),
            Check::new("n = 4096", false, race(16)),
            Check::new("n = 40960", false, race(160)),
            Check::new("n = 4194915", false, race(160)),
        ]);
        let f = footer(&first, None);
        assert_eq!(f.matches("index it by the block").count(), 1, "{f}");
        assert!(f.contains("FAILED: n = 4096, 40960, 4194915: the same failure as n = 611, with this size's numbers"), "{f}");
        let larger = report(vec![Check::new("n = 4194915", false, race(1056))]);
        let f = footer(&larger, Some(&first));
        assert_eq!(f, "\nFAILED: n = 4194915: the same failure as on the first device, above\n");
        // Singular or plural, one block or a list of them: the same failure.
        let exited = |reached: u32, of: u32, gone: &str| {
            format!(
                "deadlock: in exercise_sum, {reached} of {of} blocks reached grid.sync() at x.rs:1:2; {gone} exited without it: every block of the grid must reach each grid.sync()"
            )
        };
        let f = footer(
            &report(vec![
                Check::new("n = 611", false, exited(2, 3, "block 2")),
                Check::new("n = 1024", false, exited(1, 4, "blocks 1, 2, 3")),
                Check::new("n = 4096", false, exited(1, 16, "blocks 1-15")),
            ]),
            None,
        );
        assert_eq!(f.matches("every block of the grid").count(), 1, "{f}");
        assert!(f.contains("FAILED: n = 1024, 4096: the same failure as n = 611, with this size's numbers"), "{f}");
        assert_eq!(shape("lanes 0-7 of warp 1 are"), shape("lane 3 of warp 0 is"));
        assert_ne!(shape("lanes 0-7 of warp 1"), shape("threads 0-7 of block 1"), "other words are another failure");
    }

    #[test]
    fn the_second_device_names_the_first_devices_smaller_failure_as_the_smallest() {
        let report = |smallest: Option<u64>, n: u64| ExerciseReport {
            smallest_failure: smallest,
            checks: vec![Check::new(format!("n = {n}"), false, "wrong sum")],
            ..report_of(vec![])
        };
        let first = report(Some(1), 1);
        let f = footer(&report(Some(40_960), 40_960), Some(&first));
        assert!(f.contains("smallest failing case: n = 1, on the first device (above)") && !f.contains("n = 40960\n"), "{f}");
        // Where the first device failed only a larger size, this one's is the smallest.
        let f = footer(&report(Some(40_960), 40_960), Some(&report(Some(4_194_915), 4_194_915)));
        assert!(f.ends_with("smallest failing case: n = 40960\n"), "{f}");
    }

    #[test]
    fn nothing_after_a_failure_offers_counts_to_submit() {
        let xs = reference::fill(611).unwrap();
        let case = judge(611, &xs, 32, Ok((1.0, solved(3))), None, None);
        let r = ExerciseReport {
            status: Status::Failed,
            device: "T4".into(),
            seed: None,
            variant: Variant::Solve,
            checks: vec![Check::new("n = 611", false, failure(&case).unwrap())],
            cases: vec![case],
            smallest_failure: Some(611),
            blocks_per_sm: Some(4),
            sms: Some(40),
            larger_device: None,
            skipped: vec![],
            skipped_after: None,
            stuck: None,
            counted: None,
        };
        assert_eq!(counts_to_submit(&r), None);
        let text = render(&r);
        assert!(!text.contains("to submit") && !text.contains("two counts"), "{text}");
    }

    #[test]
    fn a_launch_of_nothing_of_another_kernel_or_the_ordinary_way_names_the_call_to_make() {
        let s = Solved { blocks: 1, threads_per_block: 256, blocks_per_sm: 4, sms: 40 };
        let nothing = grid_problem(31, s, &[], Some(T4)).unwrap();
        assert!(nothing.starts_with("solve() launched nothing: ") && nothing.contains("round the division up, n.div_ceil(threads)"), "{nothing}");
        let other = Launched { kernel: "reduce_partials_to_total", cooperative: false, ..launched(1, 256) };
        let p = grid_problem(31, s, &[other], Some(T4)).unwrap();
        assert!(p.starts_with("solve() launched reduce_partials_to_total: the exercise is one cooperative launch of exercise_sum"), "{p}");
        assert!(!p.contains("calls grid.sync()"), "reduce_partials_to_total calls none: {p}");
        let ordinary = Launched { cooperative: false, ..launched(1, 256) };
        let p = grid_problem(31, s, &[ordinary], Some(T4)).unwrap();
        assert!(
            p.contains("exercise_sum calls grid.sync(), so it needs a cooperative launch, `gpu.cooperative_kernel(&host::kernels().exercise_sum)?`"),
            "{p}"
        );
    }

    /// [`wrong_sum_hint`] with nothing learnt before and no probe.
    fn hint(r: &Reference, total: f32, blocks: u32, threads: u32) -> Option<String> {
        wrong_sum_hint(r, total, Grid { blocks, threads, tile: 32 }, &mut Diagnosis::default(), &mut |_| None)
    }

    /// A kernel whose loop over the input starts at `start(block, thread)`
    /// and steps by `step`, the rest the lesson's, run on the CPU in f32 as
    /// each thread would: its total on `xs` with `blocks` of 256.
    fn sum_with_loop(xs: &[f32], blocks: u32, start: impl Fn(usize, usize) -> usize, step: usize) -> f32 {
        let mut partials = vec![0f32; blocks as usize];
        for (b, partial) in partials.iter_mut().enumerate() {
            for t in 0..256 {
                let mut i = start(b, t);
                while i < xs.len() {
                    *partial += xs[i];
                    i += step;
                }
            }
        }
        partials.iter().sum()
    }

    #[test]
    fn a_wrong_total_no_loop_makes_is_told_by_its_arithmetic_and_its_counts_not_by_a_guess() {
        let xs = reference::fill(611).unwrap();
        let r = Reference::new(&xs);
        let g = Grid { blocks: 3, threads: 256, tile: 32 };
        let mut told = Vec::new();
        // A loop from `grid.thread_rank() + 1`: element 0 is never added.
        let h = hint(&r, sum_with_loop(&xs, 3, |b, t| b * 256 + t + 1, 768), 3, 256).unwrap();
        assert!(h.starts_with("the total is the sum less element 0 (x[0] = 0.5), exactly: element 0 was never added"), "{h}");
        told.push(h);
        // `while i < n - 1`: the last element is never added.
        let h = hint(&r, sum_with_loop(&xs[..610], 3, |b, t| b * 256 + t, 768), 3, 256).unwrap();
        assert!(
            h.contains("the sum less element 610 (x[610] = ") && h.contains("the last element, 610, was never added") && h.contains("`while i < n`"),
            "{h}"
        );
        told.push(h);
        // A tile's total read from the lane its shuffles do not reach: one
        // lane's value 32 times (a shuffle up read at lane 0, a shuffle down at lane 31).
        let counted = |count: &dyn Fn(u64) -> u32| Counted {
            n: 611,
            blocks: 3,
            threads_per_block: 256,
            counts: diagnosis::samples(611, g).into_iter().map(|i| (i, count(i))).collect(),
        };
        let lane_0 = counted(&|i| if i % 32 == 0 { 32 } else { 0 });
        let total: f64 = xs.iter().step_by(32).map(|&x| 32.0 * x as f64).sum();
        let h = wrong_sum_hint(&r, total as f32, g, &mut Diagnosis::default(), &mut |_| Some(lane_0.clone())).unwrap();
        assert!(
            h.contains("each sampled element either 32 times or never (counted: below)") && h.contains("read the total from the lane the shuffles gather into"),
            "{h}"
        );
        told.push(h);
        // A coalesced_threads() group's total written by thread_rank() == 31:
        // the warp that n leaves partly filled (608 to 610, 3 lanes) adds nothing.
        let tail = counted(&|i| u32::from(i < 608));
        let total: f64 = xs[..608].iter().map(|&x| x as f64).sum();
        let h = wrong_sum_hint(&r, total as f32, g, &mut Diagnosis::default(), &mut |_| Some(tail.clone())).unwrap();
        assert!(
            h.contains("added each sampled element below 608 once and none from 608 on (counted: below)")
                && h.contains("Elements 608 to 610 are the one warp that n = 611 leaves partly filled (3 lanes with an element")
                && h.contains("has 3 threads, ranked 0 to 2, so a writer chosen as thread_rank() == 31"),
            "{h}"
        );
        told.push(h);
        // Elements lost elsewhere as well are not put down to the partial warp.
        let scattered = counted(&|i| u32::from(i < 608 && i != 256));
        let h = wrong_sum_hint(&r, total as f32, g, &mut Diagnosis::default(), &mut |_| Some(scattered.clone())).unwrap();
        assert!(!h.contains("partly filled") && h.contains("unequally"), "{h}");
        // A shared accumulator never set to 0, summed twice: every element twice, as measured.
        let one = reference::fill(31).unwrap();
        let r1 = Reference::new(&one);
        let g1 = Grid { blocks: 1, threads: 256, tile: 32 };
        let twice = Counted { n: 31, blocks: 1, threads_per_block: 256, counts: diagnosis::samples(31, g1).into_iter().map(|i| (i, 2)).collect() };
        let h = wrong_sum_hint(&r1, (2.0 * r1.sum) as f32, g1, &mut Diagnosis::default(), &mut |_| Some(twice.clone())).unwrap();
        assert_eq!(h, "the total is 2 times the sum, and solve() run again with one element 1 added each sampled element twice (counted: below)");
        told.push(h);
        // Nothing reached the total: what is known, no guess at the line.
        let h = hint(&r, 0.0, 3, 256).unwrap();
        assert_eq!(h, "the total is 0: total[0] holds the 0 it started as, or only 0 reached it");
        told.push(h);
        for h in told {
            assert!(!h.contains("did the kernel write") && !h.contains("more than one block, or thread"), "{h}");
        }
    }

    #[test]
    fn a_near_miss_of_a_documented_mistake_is_named_by_what_it_does() {
        // The learner's loop: from the block's rank, by a block's threads. Every block adds everything.
        let xs = reference::fill(611).unwrap();
        let r = Reference::new(&xs);
        let total = sum_with_loop(&xs, 3, |_, t| t, 256);
        let h = hint(&r, total, 3, 256).unwrap();
        assert_eq!(
            h,
            "the total is 3 times the sum: the loop over the input starts at `block.thread_rank()` and steps by `block.num_threads()`, so each element is added 3 times, once by each of the 3 blocks; start it at `grid.thread_rank()` and step by `grid.num_threads()`, the 768 threads of all 3 blocks, so that each element is added once"
        );
        // The documented one, the step alone changed: block b adds every element from its start on.
        let xs = reference::fill(4096).unwrap();
        let r = Reference::new(&xs);
        let total = sum_with_loop(&xs, 16, |b, t| b * 256 + t, 256);
        let h = hint(&r, total, 16, 256).unwrap();
        assert!(h.contains("the loop over the input starts at `grid.thread_rank()` and steps by `block.num_threads()`"), "{h}");
        assert!(h.contains("the 4096 threads of all 16 blocks"), "{h}");
        // A start of 0 and the grid's stride: element 0 added by every thread, the rest never.
        let total = sum_with_loop(&xs, 16, |_, _| 0, 4096);
        let h = hint(&r, total, 16, 256).unwrap();
        assert!(h.contains("starts at `0` and steps by `grid.num_threads()`, so element 0 is added 4096 times, 1-4095 never"), "{h}");
    }

    #[test]
    fn a_ladder_names_the_loop_its_sizes_agree_on_counts_it_on_a_small_size_and_skips_the_largest() {
        // The learner's loop, run through the ladder: solve() on a CPU "GPU".
        let run = |xs: &[f32]| -> Outcome {
            let blocks = (xs.len() as u64).div_ceil(256).min(160) as u32;
            Ok((sum_with_loop(xs, blocks, |_, t| t, 256), solved(blocks)))
        };
        let mut d = Diagnosis::default();
        let mut probes = 0;
        let sizes = [1, 31, 611, 1024, 4096, 4_194_915, 67_108_864];
        let ran = run_ladder(
            &sizes,
            32,
            Skip::ON_THE_EMULATOR,
            |xs| Attempt::of(run(xs)),
            &mut |r, total, g| {
                wrong_sum_hint(r, total, g, &mut d, &mut |g| {
                    probes += 1;
                    // What solve() makes of one element 1 and the rest 0, element by element.
                    let n = r.xs.len();
                    let counts = diagnosis::samples(n as u64, g)
                        .into_iter()
                        .map(|i| {
                            let mut one = vec![0f32; n];
                            one[i as usize] = 1.0;
                            (i, run(&one).unwrap().0 as u32)
                        })
                        .collect();
                    Some(Counted { n: n as u64, blocks: g.blocks, threads_per_block: g.threads, counts })
                })
            },
            &mut |_, _| None,
            &mut |_| {},
        )
        .unwrap();
        let mut cases = ran.cases;
        d.settle(&mut cases);
        let failing: Vec<u64> = cases.iter().filter(|c| !c.pass()).map(|c| c.n).collect();
        assert_eq!(failing, vec![611, 1024, 4096]);
        assert_eq!((ran.skipped, ran.skipped_after), (vec![4_194_915, 67_108_864], Some(611)));
        assert_eq!(probes, 1, "one probe, at the first wrong size");
        assert_eq!(d.counted.as_ref().map(|c| (c.n, c.counts.iter().all(|&(_, k)| k == 3))), Some((611, true)));
        for c in &cases[2..] {
            let h = c.hint.as_deref().unwrap();
            assert!(h.contains("starts at `block.thread_rank()` and steps by `block.num_threads()`, so each element is added"), "{h}");
        }
    }

    #[test]
    fn a_ladder_skips_nothing_on_a_gpu_and_everything_large_after_a_failure_on_the_first_device() {
        let all = |skip: Skip| {
            run_ladder(&[611, 40_960, 4_194_915], 32, skip, |_| Attempt::of(Ok((1.0, solved(3)))), &mut |_, _, _| None, &mut |_, _| None, &mut |_| {}).unwrap()
        };
        assert!(all(Skip::NEVER).skipped.is_empty());
        let after = all(Skip { failed: Some(31), ..Skip::ON_THE_EMULATOR });
        assert_eq!((after.cases.len(), after.skipped, after.skipped_after), (2, vec![4_194_915], Some(31)));
    }

    #[test]
    fn the_second_devices_header_counts_the_blocks_solve_launched_at_its_block_size() {
        // solve() with blocks of 1024 on the emulated H200: 264 of them fit, not 1056 of 256.
        let h = larger_device_header(264, 1024);
        assert!(h.contains("264 cooperative blocks of 1024, no more than one block has threads"), "{h}");
        assert!(!h.contains("1056"), "{h}");
        let h = larger_device_header(1056, 256);
        assert!(h.contains("1056 cooperative blocks of 256, more than one block has threads, so block 0 must loop over the partials"), "{h}");
        let gpu = Gpu::emulated(LARGER_DEVICE, cg_emulator::Options::default());
        let mut first = report_of(vec![judge(611, &reference::fill(611).unwrap(), 32, Ok((1.0, Solved { threads_per_block: 1024, ..solved(1) })), None, None)]);
        assert!(larger_device_header_on(&gpu, &first).unwrap().contains("264 cooperative blocks of 1024"));
        first.cases.clear();
        assert!(larger_device_header_on(&gpu, &first).unwrap().contains("1056 cooperative blocks of 256"));
    }

    fn report_of(cases: Vec<Case>) -> ExerciseReport {
        ExerciseReport {
            status: Status::Failed,
            device: "T4".into(),
            seed: None,
            variant: Variant::Solve,
            checks: vec![],
            cases,
            smallest_failure: None,
            blocks_per_sm: None,
            sms: None,
            larger_device: None,
            skipped: vec![],
            skipped_after: None,
            stuck: None,
            counted: None,
        }
    }

    #[test]
    fn counts_of_one_read_in_the_singular() {
        let p = grid_problem(4096, Solved { blocks: 1, threads_per_block: 256, blocks_per_sm: 4, sms: 40 }, &[launched(1, 256)], Some(T4)).unwrap();
        assert!(p.contains("the grid is too small: 1 block, where"), "{p}");
        let said = Solved { blocks: 2, threads_per_block: 1024, blocks_per_sm: 2, sms: 1 };
        let p = grid_problem(2048, said, &[launched(1, 1024)], Some(DeviceCounts { blocks_per_sm: 1, sms: 1 })).unwrap();
        assert!(p.contains("but launched 1 block of 1024 threads"), "{p}");
        let p = grid_problem(2048, Solved { blocks: 1, ..said }, &[launched(1, 1024)], Some(DeviceCounts { blocks_per_sm: 1, sms: 1 })).unwrap();
        assert!(p.contains("solve() reports 2 blocks/SM x 1 SM, but exercise_sum at 1024 threads per block fits 1 block/SM x 1 SM"), "{p}");
        let mut r = report_of(vec![]);
        r.status = Status::Passed;
        (r.blocks_per_sm, r.sms) = (Some(1), Some(1));
        assert_eq!(
            counts_to_submit(&r).unwrap(),
            "\nYour kernel's two counts, to submit with your solve(): 1 block/SM x 1 SM = 1 block, the most one cooperative launch of it may use\n"
        );
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
            1024 => Err(Error::Launch(L::EmptyGrid { kernel: "exercise_sum" })),
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
    fn a_kernel_that_does_not_finish_costs_one_timeout_and_the_rest_of_the_ladder_is_not_run() {
        let mut attempted = Vec::new();
        let ran = run_ladder(
            &LADDER,
            32,
            Skip::NEVER,
            |xs| {
                attempted.push(xs.len());
                let outcome = match xs.len() {
                    0 => cpu_sum(xs),
                    _ => Err(Error::Launch(L::Timeout { kernel: "exercise_sum", seconds: 60.0 })),
                };
                Attempt::of(outcome)
            },
            &mut |_, _, _| None,
            &mut |_, _| None,
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(attempted, vec![0, 1], "one timeout, at n = 1, and nothing after it");
        assert_eq!((ran.stuck, ran.skipped_after, ran.skipped.len()), (Some(1), Some(1), LADDER.len() - 2));
        let r = ExerciseReport { stuck: ran.stuck, skipped: ran.skipped, skipped_after: ran.skipped_after, ..report_of(ran.cases) };
        let f = footer(
            &ExerciseReport { checks: r.cases.iter().map(|c| Check::new(format!("n = {}", c.n), c.pass(), failure(c).unwrap_or_default())).collect(), ..r },
            None,
        );
        assert!(f.contains("not run: n = 31, 611, 1024, 4096, 40960, 4194915, 67108864, since the kernel did not finish at n = 1"), "{f}");
        assert_eq!((f.matches("FAILED").count(), f.matches("not run").count()), (1, 1), "named once: {f}");
        // Any other error leaves the ladder going (the test above), and a stuck kernel is named by what stopped it.
        assert!(!is_stuck(&Error::Launch(L::EmptyGrid { kernel: "exercise_sum" })));
        assert!(is_stuck(&Error::Launch(L::DeviceStuck { kernel: "exercise_sum" })));
    }

    /// `out.atomic_add(0, total)` from every block: the block totals added
    /// one at a time, in the order the blocks happen to finish.
    fn atomic_block_totals(xs: &[f32], blocks: u32, order: impl Iterator<Item = usize>) -> f32 {
        let per = reference::per_block(xs, blocks, 256);
        order.fold(0.0f32, |total, b| total + per[b].0 as f32)
    }

    #[test]
    fn block_totals_added_atomically_in_any_order_pass_and_a_missing_or_doubled_element_fails() {
        // The lesson's n on the H200's grid: the tree's chain is 43 additions,
        // the atomics' 16 + 11 + 1056.
        let n = 4_194_915;
        let xs = reference::fill(n).unwrap();
        let g = Solved { blocks: 1056, threads_per_block: 256, blocks_per_sm: 8, sms: 132 };
        for total in [atomic_block_totals(&xs, 1056, 0..1056), atomic_block_totals(&xs, 1056, (0..1056).rev())] {
            let case = judge(n as u64, &xs, 32, Ok((total, g)), None, None);
            assert!(case.pass(), "{}", row(&case));
        }
        // A learner's atomics on the emulated H200 (issue 64): error 6.35e1,
        // past the tree's bound (1.07e1), within the atomics' (2.7e2).
        let r = Reference::new(&xs);
        let tree = reference::error_bound(reference::longest_chain(n, 1056, 256, 32), reference::reference_sum(&xs).1);
        let case = judge(n as u64, &xs, 32, Ok(((r.sum + 63.5) as f32, g)), None, None);
        assert!(63.5 > tree && case.pass(), "{}", row(&case));
        // A missing or doubled element still fails where the bound can see one element.
        for n in [1usize, 31, 611, 4096, 40_960] {
            let xs = reference::fill(n).unwrap();
            let blocks = n.div_ceil(256).min(160) as u32;
            let g = Solved { blocks, threads_per_block: 256, blocks_per_sm: 4, sms: 40 };
            let sum: f64 = xs.iter().map(|&x| x as f64).sum();
            let right = atomic_block_totals(&xs, blocks, 0..blocks as usize);
            assert!(judge(n as u64, &xs, 32, Ok((right, g)), None, None).pass(), "n = {n}");
            let last = xs[n - 1] as f64;
            for wrong in [sum - last, sum + last, sum - xs[0] as f64] {
                assert!(!judge(n as u64, &xs, 32, Ok((wrong as f32, g)), None, None).pass(), "n = {n}: {wrong} against {sum}");
            }
        }
    }

    /// `out.atomic_add(0, x)` for every element: each added onto the
    /// running total, one at a time, in the order of `order`.
    fn atomic_elements(xs: &[f32], order: impl Iterator<Item = usize>) -> f32 {
        order.fold(0.0f32, |total, i| total + xs[i])
    }

    /// What the probe measures of a solve() whose element `k` is added `times(k)` times.
    fn counted_with(n: usize, g: Grid, times: impl Fn(u64) -> u32) -> Counted {
        let counts = diagnosis::samples(n as u64, g).into_iter().map(|i| (i, times(i))).collect();
        Counted { n: n as u64, blocks: g.blocks, threads_per_block: g.threads, counts }
    }

    /// 2^26 elements added atomically on one float: one chain of 2^26
    /// additions, past which the float bound says nothing (it is infinite),
    /// and the f32 sum stalls at 2^25. It was judged "pass" with an infinite
    /// bound; it fails, saying why, even where the probe found each sampled
    /// element added once.
    #[test]
    fn a_chain_of_atomics_too_long_for_any_bound_fails_and_says_so() {
        let n = 1 << 26;
        let xs = reference::fill(n).unwrap();
        let s = solved(160);
        let g = Grid { blocks: 160, threads: 256, tile: 32 };
        let once = counted_with(40_960, g, |_| 1);
        // What the emulator's sum of 2^26 atomic adds of floats near 1 came to.
        let stalled = 33_554_432.0f32;
        let attempt = Attempt { atomics: Some(n as u64), ..Attempt::of(Ok((stalled, s))) };
        let case = judge_with(n as u64, &xs, 32, attempt, &mut |_, _, _| Some("wrong".into()), &mut |_, _| Some(once.clone()));
        assert!(!case.pass() && case.slow.is_none(), "{}", row(&case));
        let hint = case.hint.clone().unwrap_or_default();
        assert!(hint.starts_with("67108864 atomic adds on one float are one chain of 67108864 additions"), "{hint}");
    }

    #[test]
    fn every_element_added_atomically_is_correct_and_slow_where_the_probe_finds_each_once() {
        // Issue 64: at n = 40,960 on the T4's 160 blocks, past the bound of
        // any order of block totals, beside a probe that found each element once.
        let n = 40_960;
        let xs = reference::fill(n).unwrap();
        let s = solved(160);
        let g = Grid { blocks: 160, threads: 256, tile: 32 };
        let once = counted_with(n, g, |_| 1);
        let attempt = |total: f32, atomics: Option<u64>| Attempt { atomics, ..Attempt::of(Ok((total, s))) };
        let judged = |total: f32, atomics: Option<u64>, counted: Option<Counted>| {
            judge_with(n as u64, &xs, 32, attempt(total, atomics), &mut |_, _, _| Some("wrong".into()), &mut |_, _| counted.clone())
        };
        for total in [atomic_elements(&xs, 0..n), atomic_elements(&xs, (0..n).rev())] {
            assert!(!judge(n as u64, &xs, 32, Ok((total, s)), None, None).pass(), "past the bound of any order of block totals");
            let case = judged(total, Some(n as u64), Some(once.clone()));
            assert!(case.pass(), "{}", row(&case));
            let slow = case.slow.clone().unwrap();
            assert_eq!((slow.atomics, slow.tree, slow.times()), (n as u64, 24, 1700));
            assert!(row(&case).contains("pass, correct but about 1700x slower than the tree (note below)"), "{}", row(&case));
            let note = footer(&report_of(vec![case]), None);
            assert!(
                note.contains(
                    "note: the sum at n = 40960 is correct, and about 1700 times slower than the tree: the emulator counted 40960 atomic updates of one word"
                ),
                "{note}"
            );
            assert!(
                note.contains(
                    "added elements 0, 1, 31, 32, 255, 256, 257, 511, 512, 20480, 40958, 40959 once each, so the sampled elements were neither lost nor doubled"
                ),
                "{note}"
            );
            // Without the probe (a GPU counts no atomics), or without the count, it fails as before.
            assert!(!judged(total, Some(n as u64), None).pass());
            assert!(!judged(total, None, Some(once.clone())).pass());
        }
        // A missing or a doubled element still fails: the probe sees it.
        let missing = atomic_elements(&xs, 1..n);
        let case = judged(missing, Some(n as u64 - 1), Some(counted_with(n, g, |i| u32::from(i != 0))));
        assert!(!case.pass() && case.slow.is_none(), "{}", row(&case));
        let doubled = atomic_elements(&xs, (0..n).chain([n - 1]));
        let case = judged(doubled, Some(n as u64 + 1), Some(counted_with(n, g, |i| if i == n as u64 - 1 { 2 } else { 1 })));
        assert!(!case.pass(), "{}", row(&case));
        // Block totals added atomically stay within the bound of any order, and are not called slow.
        let totals = atomic_block_totals(&xs, 160, 0..160);
        let case = judged(totals, Some(160), None);
        assert!(case.pass() && case.slow.is_none(), "{}", row(&case));
    }

    #[test]
    fn a_ladder_probes_atomics_where_it_must_and_keeps_the_last_probe_for_sizes_too_large_to_probe() {
        let run = |xs: &[f32]| -> Attempt {
            let blocks = (xs.len() as u64).div_ceil(256).min(160) as u32;
            Attempt { atomics: Some(xs.len() as u64), ..Attempt::of(Ok((atomic_elements(xs, 0..xs.len()), solved(blocks)))) }
        };
        let mut probed = Vec::new();
        let ran = run_ladder(
            &[1, 611, 40_960, 4_194_915],
            32,
            Skip::ON_THE_EMULATOR,
            run,
            &mut |_, _, _| None,
            &mut |xs, g| {
                probed.push(xs.len());
                Some(counted_with(xs.len(), g, |_| 1))
            },
            &mut |_| {},
        )
        .unwrap();
        assert!(ran.cases.iter().all(Case::pass), "{:?}", ran.cases.iter().map(row).collect::<Vec<_>>());
        // 611: the first of more than one block; 40,960: the first past the
        // bound of any order; 4,194,915 takes 40,960's.
        assert_eq!(probed, vec![611, 40_960]);
        let slow: Vec<(u64, Option<u64>)> = ran.cases.iter().map(|c| (c.n, c.slow.as_ref().map(|s| s.counted.as_ref().map_or(0, |k| k.n)))).collect();
        assert_eq!(slow, vec![(1, None), (611, Some(0)), (40_960, Some(40_960)), (4_194_915, Some(40_960))]);
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
