//! What a wrong sum says about the loop that made it, told by arithmetic,
//! not by how the loop is spelled.
//!
//! The exercise's kernel has two loops: every thread's over the input (the
//! lesson's starts at `grid.thread_rank()` and steps by `grid.num_threads()`)
//! and block 0's over the partials (`block.thread_rank()`, stepping by
//! `block.num_threads()`). Written with another start or step, a loop counts
//! some elements more than once, or never, and the total is the sum of each
//! element times the number of times it was counted. The harness knows the
//! grid solve() launched, so for each start and step a loop may be written
//! with (the ranks and sizes of the grid, the block and the tile, 0 and 1)
//! it can count how often that loop adds each element, and the total it
//! would make. A loop whose total is the wrong one, and whose counts are the
//! ones measured on a small input (solve() run again with one element 1 and
//! the others 0: its total is how often that element was added), is named,
//! with the fix.

use crate::reference::{self, error_bound};
use serde::Serialize;

/// The grid a case launched: blocks, threads per block, and the kernel's tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    pub blocks: u32,
    pub threads: u32,
    pub tile: u32,
}

impl Grid {
    fn threads_in_grid(self) -> u64 {
        self.blocks as u64 * self.threads as u64
    }
}

/// A term a loop's start or step may be written with, as the kernel spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Term {
    GridRank,
    BlockRank,
    BlockIndex,
    TileRank,
    Zero,
    GridThreads,
    BlockThreads,
    GridBlocks,
    TileThreads,
    One,
}

impl Term {
    /// The kernel's spelling.
    pub fn code(self) -> &'static str {
        match self {
            Term::GridRank => "grid.thread_rank()",
            Term::BlockRank => "block.thread_rank()",
            Term::BlockIndex => "block.group_index().x",
            Term::TileRank => "tile.thread_rank()",
            Term::Zero => "0",
            Term::GridThreads => "grid.num_threads()",
            Term::BlockThreads => "block.num_threads()",
            Term::GridBlocks => "grid.num_blocks()",
            Term::TileThreads => "tile.num_threads()",
            Term::One => "1",
        }
    }

    /// Its value in thread `thread` of block `block` of grid `g`.
    fn value(self, g: Grid, block: u64, thread: u64) -> u64 {
        match self {
            Term::GridRank => block * g.threads as u64 + thread,
            Term::BlockRank => thread,
            Term::BlockIndex => block,
            Term::TileRank => thread % g.tile.max(1) as u64,
            Term::Zero => 0,
            Term::GridThreads => g.threads_in_grid(),
            Term::BlockThreads => g.threads as u64,
            Term::GridBlocks => g.blocks as u64,
            Term::TileThreads => g.tile as u64,
            Term::One => 1,
        }
    }

    const STEPS: [Term; 5] = [Term::BlockThreads, Term::GridThreads, Term::One, Term::GridBlocks, Term::TileThreads];
}

/// Which of the kernel's two loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Every thread's loop over the input.
    Input,
    /// Block 0's loop over the partials.
    Partials,
}

/// A loop of the kernel: `let mut i = start; while i < bound { ...; i += step }`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loop {
    pub stage: Stage,
    pub start: Term,
    pub step: Term,
}

impl Loop {
    /// The lesson's loop over the input.
    pub const INPUT: Loop = Loop { stage: Stage::Input, start: Term::GridRank, step: Term::GridThreads };
    /// The lesson's loop over the partials.
    pub const PARTIALS: Loop = Loop { stage: Stage::Partials, start: Term::BlockRank, step: Term::BlockThreads };

    /// Every loop the harness tries, one loop written otherwise than the
    /// lesson's and the other as the lesson's: each start with each step.
    /// Where two count alike, the one named is the first here: the
    /// likeliest spellings first (a block's stride where the grid's
    /// belongs, a step of 1), then the loop over the input before the loop
    /// over the partials.
    pub fn suspects() -> Vec<Loop> {
        use Stage::{Input, Partials};
        use Term::*;
        let likeliest = [
            (Input, BlockRank, BlockThreads),
            (Input, GridRank, BlockThreads),
            (Input, BlockRank, GridThreads),
            (Input, GridRank, One),
            (Input, BlockRank, One),
            (Input, Zero, One),
            (Partials, Zero, One),
            (Partials, BlockRank, One),
            (Partials, Zero, BlockThreads),
            (Input, Zero, GridThreads),
            (Input, Zero, BlockThreads),
        ];
        let mut all: Vec<Loop> = likeliest.iter().map(|&(stage, start, step)| Loop { stage, start, step }).collect();
        for (stage, lesson, starts) in [
            (Input, Loop::INPUT, [BlockRank, GridRank, Zero, TileRank, BlockIndex]),
            (Partials, Loop::PARTIALS, [BlockRank, Zero, TileRank, GridRank, BlockIndex]),
        ] {
            for start in starts {
                for step in Term::STEPS {
                    let l = Loop { stage, start, step };
                    if l != lesson && !all.contains(&l) {
                        all.push(l);
                    }
                }
            }
        }
        all
    }

    /// How the loop is written, for a message.
    pub fn written(self) -> String {
        let which = match self.stage {
            Stage::Input => "the loop over the input",
            Stage::Partials => "block 0's loop over the partials",
        };
        format!("{which} starts at `{}` and steps by `{}`", self.start.code(), self.step.code())
    }

    /// The lesson's loop of the same stage, as the fix.
    fn fix(self, g: Grid) -> String {
        match self.stage {
            Stage::Input if g.blocks == 1 => format!(
                "start it at `grid.thread_rank()` and step by `grid.num_threads()`, the {} threads of the grid's one block, so that each element is added once",
                g.threads_in_grid()
            ),
            Stage::Input => format!(
                "start it at `grid.thread_rank()` and step by `grid.num_threads()`, the {} threads of all {} blocks, so that each element is added once",
                g.threads_in_grid(),
                g.blocks
            ),
            Stage::Partials => "start it at `block.thread_rank()` and step by `block.num_threads()`, so that each partial is added once".to_string(),
        }
    }

    /// How often this loop (the other as the lesson's) adds each of `n`
    /// elements on grid `g`, element by element, to `each`; the longest
    /// chain of additions it makes. O(n + threads), whatever the loop.
    fn count(self, n: usize, g: Grid, mut each: impl FnMut(usize, u32)) -> u64 {
        if n == 0 || g.blocks == 0 || g.threads == 0 {
            return 0;
        }
        // A loop from `start` by `step` adds element i once for every thread
        // whose start is i, i - step, i - 2 step, ...: the counts of starts,
        // carried forward by the step.
        let carry = |len: usize, blocks: std::ops::Range<u64>, l: Loop| -> Vec<u32> {
            let step = l.step.value(g, 0, 0).max(1) as usize;
            let mut counts = vec![0u32; len];
            for b in blocks {
                for t in 0..g.threads as u64 {
                    let s = l.start.value(g, b, t);
                    if (s as usize) < len {
                        counts[s as usize] += 1;
                    }
                }
            }
            for i in step..len {
                counts[i] += counts[i - step];
            }
            counts
        };
        let depth = reference::block_sum_depth(g.threads, g.tile);
        match self.stage {
            Stage::Input => {
                // Counts carried over n, kept for one step back only.
                let step = self.step.value(g, 0, 0).max(1) as usize;
                let starts_len = (g.threads_in_grid() as usize).min(n);
                let mut starts = vec![0u32; starts_len];
                for b in 0..g.blocks as u64 {
                    for t in 0..g.threads as u64 {
                        let s = self.start.value(g, b, t) as usize;
                        if s < starts_len {
                            starts[s] += 1;
                        }
                    }
                }
                let mut ring = vec![0u32; step.min(n)];
                for i in 0..n {
                    let back = if i >= step { ring[i % step] } else { 0 };
                    let c = starts.get(i).copied().unwrap_or(0) + back;
                    if step <= n {
                        ring[i % step] = c;
                    }
                    each(i, c);
                }
                (n as u64).div_ceil(step as u64) + depth + reference::second_stage_chain(g.blocks, g.threads, g.tile)
            }
            Stage::Partials => {
                let partials = carry(g.blocks as usize, 0..1, self);
                let per_grid = g.threads_in_grid() as usize;
                for i in 0..n {
                    each(i, partials[(i % per_grid) / g.threads as usize]);
                }
                let step = self.step.value(g, 0, 0).max(1);
                reference::first_stage_chain(n, g.blocks, g.threads, g.tile) + (g.blocks as u64).div_ceil(step) + depth
            }
        }
    }

    /// What this loop makes of `xs`: the total, its bound, how often it adds
    /// each element (in runs), and at `samples` (sorted).
    pub fn predict(self, xs: &[f32], g: Grid, samples: &[u64]) -> Prediction {
        let (mut sum, mut abs) = (0.0f64, 0.0f64);
        let mut runs = Runs::default();
        let mut at = Vec::with_capacity(samples.len());
        let mut next = samples.iter().peekable();
        let chain = self.count(xs.len(), g, |i, c| {
            let x = xs[i] as f64;
            sum += x * c as f64;
            abs += x.abs() * c as f64;
            runs.push(i as u64, c);
            while next.peek().is_some_and(|&&s| s == i as u64) {
                at.push((i as u64, c));
                next.next();
            }
        });
        Prediction { sum, bound: error_bound(chain, abs), runs, at }
    }
}

/// What a loop makes of an input.
#[derive(Clone, Debug)]
pub struct Prediction {
    /// The total, in double precision.
    pub sum: f64,
    /// How far the kernel's float total may be from it.
    pub bound: f64,
    /// How often each element is added, as runs of equal counts.
    pub runs: Runs,
    /// How often each sampled element is added.
    pub at: Vec<(u64, u32)>,
}

impl Prediction {
    /// Whether a kernel's float `total` is this loop's.
    pub fn matches(&self, total: f32) -> bool {
        self.bound.is_finite() && (total as f64 - self.sum).abs() <= self.bound
    }

    /// Whether it adds every element once: the lesson's counts.
    pub fn is_lessons(&self) -> bool {
        self.runs.runs.len() == 1 && self.runs.runs[0].2 == 1 && !self.runs.more
    }
}

/// Counts of consecutive elements, as runs `(first, last, count)`: the
/// first few, and the smallest and largest count over all.
#[derive(Clone, Debug, Default)]
pub struct Runs {
    pub runs: Vec<(u64, u64, u32)>,
    /// More runs than [`Runs::KEPT`] followed.
    pub more: bool,
    pub min: Option<(u64, u32)>,
    pub max: Option<(u64, u32)>,
}

impl Runs {
    const KEPT: usize = 4;

    fn push(&mut self, i: u64, c: u32) {
        if self.min.is_none_or(|(_, m)| c < m) {
            self.min = Some((i, c));
        }
        if self.max.is_none_or(|(_, m)| c > m) {
            self.max = Some((i, c));
        }
        let full = self.runs.len() == Self::KEPT;
        match self.runs.last_mut() {
            Some(last) if last.2 == c && last.1 + 1 == i && !self.more => last.1 = i,
            _ if full => self.more = true,
            _ => self.runs.push((i, i, c)),
        }
    }

    /// In words, of `what` (`element`, `partial`): `each element is added 3
    /// times`; `elements 0-255 are added once, 256-511 twice, 512-610 3
    /// times`; `elements are added from 0 times (element 1) to 256 times
    /// (element 0)`.
    pub fn describe(&self, what: &str) -> String {
        match (self.runs.as_slice(), self.more) {
            ([(_, _, c)], false) => format!("each {what} is added {}", times(*c)),
            (runs, false) => {
                let parts: Vec<String> = runs
                    .iter()
                    .enumerate()
                    .map(|(k, (a, b, c))| {
                        let span = if a == b { a.to_string() } else { format!("{a}-{b}") };
                        match (k, a == b) {
                            (0, true) => format!("{what} {span} is added {}", times(*c)),
                            (0, false) => format!("{what}s {span} are added {}", times(*c)),
                            _ => format!("{span} {}", times(*c)),
                        }
                    })
                    .collect();
                parts.join(", ")
            }
            (_, true) => {
                let (lo, hi) = (self.min.unwrap_or((0, 0)), self.max.unwrap_or((0, 0)));
                format!("{what}s are added from {} ({what} {}) to {} ({what} {})", times(lo.1), lo.0, times(hi.1), hi.0)
            }
        }
    }
}

/// `never`, `once`, `twice`, `3 times`.
pub fn times(c: u32) -> String {
    match c {
        0 => "never".to_string(),
        1 => "once".to_string(),
        2 => "twice".to_string(),
        c => format!("{c} times"),
    }
}

/// The elements of `n` a probe counts: both sides of the tile, block and
/// grid boundaries of `g`, the middle and the end; sorted, at most 16.
pub fn samples(n: u64, g: Grid) -> Vec<u64> {
    let (w, t, grid) = (g.tile as u64, g.threads as u64, g.threads_in_grid());
    // n / 32 * 32: the first element of a warp that n leaves partly filled.
    let mut s: Vec<u64> = [0, 1, w - 1, w, t - 1, t, t + 1, 2 * t - 1, 2 * t, grid - 1, grid, n / 2, n / 32 * 32, n.saturating_sub(2), n.saturating_sub(1)]
        .into_iter()
        .filter(|&i| i < n)
        .collect();
    s.sort_unstable();
    s.dedup();
    s.truncate(16);
    s
}

/// How often solve() added each of a few elements of a small input, measured:
/// solve() run again on `n` elements, all 0 but one, which is 1, once per
/// element; its total is how often that element was added.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Counted {
    pub n: u64,
    pub blocks: u32,
    pub threads_per_block: u32,
    /// Each element tried, and how often it was added.
    pub counts: Vec<(u64, u32)>,
}

impl Counted {
    /// In words: `solve() run again on n = 611 (3 blocks of 256), each time
    /// with one element 1 and the others 0, added elements 0, 1, 610 3 times each`.
    pub fn describe(&self) -> String {
        let mut groups: Vec<(u32, Vec<String>)> = Vec::new();
        for &(i, c) in &self.counts {
            match groups.iter_mut().find(|(g, _)| *g == c) {
                Some((_, list)) => list.push(i.to_string()),
                None => groups.push((c, vec![i.to_string()])),
            }
        }
        let parts: Vec<String> = groups
            .iter()
            .map(|(c, list)| match list.as_slice() {
                [one] => format!("element {one} {}", times(*c)),
                many if *c == 0 => format!("elements {} {}", many.join(", "), times(*c)),
                many => format!("elements {} {} each", many.join(", "), times(*c)),
            })
            .collect();
        format!(
            "solve() run again on n = {} ({} of {}), each time with one element 1 and the others 0, added {}",
            self.n,
            crate::text::plural(self.blocks, "block", "blocks"),
            self.threads_per_block,
            crate::text::listed(&parts)
        )
    }
}

/// The loops of `pool` that make `total` of `xs` on grid `g`, and whose
/// counts at the sampled elements are `counted`'s (where a probe measured
/// them on this input's size), in `pool`'s order, each with what it makes.
pub fn loops_that_make(pool: &[Loop], xs: &[f32], g: Grid, total: f32, counted: Option<&Counted>) -> Vec<(Loop, Prediction)> {
    let probed = counted.filter(|c| c.n == xs.len() as u64 && (c.blocks, c.threads_per_block) == (g.blocks, g.threads));
    let samples: Vec<u64> = probed.map(|c| c.counts.iter().map(|&(i, _)| i).collect()).unwrap_or_default();
    pool.iter()
        .filter_map(|&l| {
            let p = l.predict(xs, g, &samples);
            let agrees = probed.is_none_or(|c| c.counts == p.at);
            (agrees && !p.is_lessons() && p.matches(total)).then_some((l, p))
        })
        .collect()
}

/// The first of [`Loop::suspects`] that makes `total` ([`loops_that_make`]).
pub fn find_loop(xs: &[f32], g: Grid, total: f32, counted: Option<&Counted>) -> Option<(Loop, Prediction)> {
    loops_that_make(&Loop::suspects(), xs, g, total, counted).into_iter().next()
}

/// The hint for a total that loop `l` makes (its prediction `p`), of a sum
/// whose reference is `reference`; `also`, another loop (of the other stage)
/// that makes the same counts, which the totals cannot tell from it.
pub fn loop_hint(l: Loop, p: &Prediction, g: Grid, total: f32, reference: f64, also: Option<Loop>) -> String {
    let mut counts = p.runs.describe("element");
    if l.stage == Stage::Input && g.blocks > 1 && matches!(p.runs.runs.as_slice(), [(_, _, c)] if *c == g.blocks) && !p.runs.more {
        counts += &format!(", once by each of the {} blocks", g.blocks);
    }
    let mut hint = format!("{}: {}, so {counts}; {}", ratio(total, reference), l.written(), l.fix(g));
    if let Some(other) = also {
        hint += &format!("; or else {}, which adds each element as often: {}", other.written(), other.fix(g));
    }
    hint
}

/// `the total is 3 times the sum`, `the total is 1.74 times the sum`, `the total is 0`.
pub fn ratio(total: f32, reference: f64) -> String {
    if total == 0.0 {
        return "the total is 0".to_string();
    }
    if reference == 0.0 || !total.is_finite() {
        return format!("the total is {total}");
    }
    let r = total as f64 / reference;
    let k = r.round();
    if k >= 1.0 && (r - k).abs() <= 1e-4 * k {
        format!("the total is {k} times the sum")
    } else if (r - 1.0).abs() < 0.005 {
        // Off by less than 0.5%: two decimals would say 1.00.
        format!("the total is {r:.4} times the sum")
    } else {
        format!("the total is {r:.2} times the sum")
    }
}

/// Where the probe found the elements of full warps added once and those of
/// the warp that n leaves partly filled never (n not a multiple of 32, and
/// blocks of whole warps, so that the grid-stride loop's last warp with work
/// holds elements n / 32 * 32 to n - 1): what a kernel does that counts on
/// 32 lanes, as a `coalesced_threads()` group's writer chosen as
/// `thread_rank() == 31` does. `None` where the counts say anything else, or
/// sample only one side.
fn partial_warp_hint(c: &Counted, ratio: &str) -> Option<String> {
    let (n, tail) = (c.n, c.n % 32);
    let full = n - tail;
    if tail == 0 || !c.threads_per_block.is_multiple_of(32) {
        return None;
    }
    let whole = |&&(i, k): &&(u64, u32)| i < full && k == 1;
    let lost = |&&(i, k): &&(u64, u32)| i >= full && k == 0;
    let (before, after): (Vec<_>, Vec<_>) = c.counts.iter().partition(|&&(i, _)| i < full);
    // Both sides sampled: with none below, nothing added at all says as much.
    if before.is_empty() || after.is_empty() || !before.iter().all(whole) || !after.iter().all(lost) {
        return None;
    }
    let lanes = crate::text::plural(tail as u32, "lane", "lanes");
    let (tail_words, group) = match tail {
        1 => (format!("Element {full} is"), "1 thread, ranked 0".to_string()),
        _ => (format!("Elements {full} to {} are", n - 1), format!("{tail} threads, ranked 0 to {}", tail - 1)),
    };
    Some(format!(
        "{ratio}, and solve() run again with one element 1 added each sampled element below {full} once and none from {full} on (counted: below). {tail_words} the one warp that n = {n} leaves partly filled ({lanes} with an element, the rest past n), and none of it was added: in such a warp a group of the threads that take the loop (coalesced_threads()) has {group}, so a writer chosen as thread_rank() == 31, or anything sized for 32 lanes, is not there. Choose the writer by the group's own size (thread_rank() == 0, or == num_threads() - 1)"
    ))
}

/// What a wrong total is, where no loop the harness knows makes it, told
/// only by what is known: its arithmetic against the input (the sum less,
/// or plus, its first or last element exactly; a whole multiple of it; 0)
/// and, where a probe measured them ([`Counted`], printed as the `counted:`
/// line), how often each sampled element was added. Where those say no
/// more, `None`: a plain wrong sum, with the reference beside it.
pub fn arithmetic_hint(xs: &[f32], sum: f64, total: f32, g: Grid, counted: Option<&Counted>) -> Option<String> {
    let n = xs.len();
    if n == 0 || !total.is_finite() {
        return None;
    }
    let ratio = ratio(total, sum);
    // One element, told from the total, where the bound is finer than the smallest element.
    let abs: f64 = xs.iter().map(|&x| (x as f64).abs()).sum();
    let bound = error_bound(reference::longest_chain_any_order(n, g.blocks, g.threads, g.tile), abs);
    let smallest = xs.iter().map(|&x| (x as f64).abs()).fold(f64::INFINITY, f64::min);
    let near = |want: f64| (total as f64 - want).abs() <= bound;
    if n > 1 && bound < smallest / 2.0 {
        let (first, last) = (xs[0] as f64, xs[n - 1] as f64);
        let one = |k: usize, x: f64, what: &str, fix: &str| format!("the total is the sum {what} element {k} (x[{k}] = {x}), exactly: {fix}");
        if near(sum - first) {
            return Some(one(
                0,
                first,
                "less",
                "element 0 was never added, and as far as the total can tell every other element once; the loop over the input must reach i = 0 (thread 0 of block 0, whose `grid.thread_rank()` is 0, adds it first)",
            ));
        }
        if near(sum - last) {
            return Some(one(
                n - 1,
                last,
                "less",
                &format!(
                    "the last element, {}, was never added, and as far as the total can tell every other element once; the loop's bound must let i = n - 1 through (`while i < n`)",
                    n - 1
                ),
            ));
        }
        if near(sum + first) {
            return Some(one(0, first, "plus", "element 0 was added twice, and as far as the total can tell every other element once"));
        }
        if near(sum + last) {
            return Some(one(n - 1, last, "plus", "the last element was added twice, and as far as the total can tell every other element once"));
        }
    }
    if let Some(c) = counted {
        if let Some(hint) = partial_warp_hint(c, &ratio) {
            return Some(hint);
        }
        let mut ks: Vec<u32> = c.counts.iter().map(|&(_, k)| k).collect();
        ks.sort_unstable();
        ks.dedup();
        let tile = g.tile;
        return Some(match ks.as_slice() {
            [0, t] if tile > 1 && t.is_power_of_two() && *t >= tile && t.trailing_zeros().is_multiple_of(tile.trailing_zeros()) => {
                let steps = tile.trailing_zeros();
                let m = t.trailing_zeros() / steps;
                let through = if m == 1 { String::new() } else { format!(" at each of the {m} tile reductions it goes through ({tile}^{m} = {t})") };
                format!(
                    "{ratio}, and solve() run again with one element 1 added each sampled element either {t} times or never (counted: below). {tile} is 2^{steps}: a value that each of a tile's {steps} shuffle steps adds to itself, as the lane the shuffles do not reach does{through} (a shuffle down gathers the tile's values into lane 0, and lane {} gets only its own back; a shuffle up gathers them into lane {}, and lane 0 gets only its own back), so each tile's total is one lane's value {tile} times: read the total from the lane the shuffles gather into, or shuffle the other way",
                    tile - 1,
                    tile - 1
                )
            }
            [0] => format!(
                "{ratio}, and solve() run again with one element 1 added none of the sampled elements (counted: below): nothing of the input reaches total[0]"
            ),
            [1] => format!(
                "{ratio}, yet solve() run again with one element 1 added each sampled element once (counted: below): what differs is not how often an element is added, but what else reaches total[0] (a value left from before, read as a start)"
            ),
            [k] => format!("{ratio}, and solve() run again with one element 1 added each sampled element {} (counted: below)", times(*k)),
            _ => format!(
                "{ratio}, and solve() run again with one element 1 added the sampled elements unequally (counted: below), as no loop written with the grid's ranks and sizes does"
            ),
        });
    }
    if total == 0.0 && sum != 0.0 {
        return Some("the total is 0: total[0] holds the 0 it started as, or only 0 reached it".to_string());
    }
    let r = total as f64 / sum;
    let k = r.round();
    (sum != 0.0 && k >= 2.0 && (r - k).abs() <= 1e-4 * k).then(|| format!("the total is {k} times the sum, as if every element were added {k} times"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: Grid = Grid { blocks: 3, threads: 256, tile: 32 };

    fn counts(l: Loop, n: usize, g: Grid) -> Vec<u32> {
        let mut v = vec![0; n];
        l.count(n, g, |i, c| v[i] = c);
        v
    }

    /// Each loop counted the slow way: every thread of every block walks its loop.
    fn walked(l: Loop, n: usize, g: Grid) -> Vec<u32> {
        let mut v = vec![0u32; n];
        let step = l.step.value(g, 0, 0) as usize;
        match l.stage {
            Stage::Input => {
                for b in 0..g.blocks as u64 {
                    for t in 0..g.threads as u64 {
                        let mut i = l.start.value(g, b, t) as usize;
                        while i < n {
                            v[i] += 1;
                            i += step;
                        }
                    }
                }
            }
            Stage::Partials => {
                let mut m = vec![0u32; g.blocks as usize];
                for t in 0..g.threads as u64 {
                    let mut j = l.start.value(g, 0, t) as usize;
                    while j < m.len() {
                        m[j] += 1;
                        j += step;
                    }
                }
                for (i, c) in v.iter_mut().enumerate() {
                    *c = m[(i % (g.blocks * g.threads) as usize) / g.threads as usize];
                }
            }
        }
        v
    }

    #[test]
    fn the_counts_of_every_suspect_are_what_walking_its_loop_gives() {
        for g in [G, Grid { blocks: 5, threads: 64, tile: 16 }, Grid { blocks: 1, threads: 32, tile: 32 }] {
            for n in [0, 1, 31, 611, 1000] {
                for l in Loop::suspects().into_iter().chain([Loop::INPUT, Loop::PARTIALS]) {
                    assert!(counts(l, n, g) == walked(l, n, g), "{l:?} n = {n} {g:?}");
                }
            }
        }
        assert!(counts(Loop::INPUT, 611, G).iter().all(|&c| c == 1));
    }

    #[test]
    fn a_block_stride_from_the_blocks_own_rank_counts_everything_once_per_block() {
        // The learner's loop: every block walks the whole input.
        let l = Loop { stage: Stage::Input, start: Term::BlockRank, step: Term::BlockThreads };
        let xs = reference::fill(611).unwrap();
        let p = l.predict(&xs, G, &[0, 610]);
        assert_eq!(p.runs.describe("element"), "each element is added 3 times");
        assert_eq!(p.at, vec![(0, 3), (610, 3)]);
        // The documented one: from the grid's rank, by a block's threads.
        let l = Loop { stage: Stage::Input, start: Term::GridRank, step: Term::BlockThreads };
        let p = l.predict(&xs, G, &[]);
        assert_eq!(p.runs.describe("element"), "elements 0-255 are added once, 256-511 twice, 512-610 3 times");
    }

    #[test]
    fn a_wrong_total_is_told_from_its_arithmetic_whatever_the_loop() {
        for (n, g) in [(611, G), (4096, Grid { blocks: 16, threads: 256, tile: 32 })] {
            let xs = reference::fill(n).unwrap();
            for l in Loop::suspects() {
                let truth = counts(l, n, g);
                if truth.iter().all(|&c| c == 1) {
                    continue;
                }
                let total: f64 = xs.iter().zip(&truth).map(|(&x, &c)| x as f64 * c as f64).sum();
                // What a probe measures: the counts at the sampled elements.
                let probed = Counted {
                    n: n as u64,
                    blocks: g.blocks,
                    threads_per_block: g.threads,
                    counts: samples(n as u64, g).iter().map(|&i| (i, truth[i as usize])).collect(),
                };
                let (found, p) = find_loop(&xs, g, total as f32, Some(&probed)).unwrap_or_else(|| panic!("{l:?} at n = {n}: nothing found"));
                // Another loop may count the same on this grid: then it is the same mistake here.
                assert!(p.at == probed.counts && p.matches(total as f32), "{l:?} at n = {n} found as {found:?}");
            }
            assert!(find_loop(&xs, g, 12345.0, None).is_none());
        }
        // The total alone tells the learner's loop at a size too large to probe.
        let xs = reference::fill(1_000_003).unwrap();
        let g = Grid { blocks: 160, threads: 256, tile: 32 };
        let l = Loop { stage: Stage::Input, start: Term::BlockRank, step: Term::BlockThreads };
        let total = 160.0 * xs.iter().map(|&x| x as f64).sum::<f64>();
        let (found, p) = find_loop(&xs, g, total as f32, None).unwrap();
        assert_eq!((found, p.runs.describe("element")), (l, "each element is added 160 times".to_string()));
    }

    #[test]
    fn runs_ratios_and_samples_read_as_sentences() {
        assert_eq!(ratio(1836.0, 612.0), "the total is 3 times the sum");
        assert_eq!(ratio(1065.0, 612.0), "the total is 1.74 times the sum");
        assert_eq!(ratio(608.953, 612.003), "the total is 0.9950 times the sum");
        assert_eq!(times(1), "once");
        assert_eq!(samples(611, G), vec![0, 1, 31, 32, 255, 256, 257, 305, 511, 512, 608, 609, 610]);
        let c = Counted { n: 611, blocks: 3, threads_per_block: 256, counts: vec![(0, 3), (1, 3), (610, 3)] };
        assert_eq!(
            c.describe(),
            "solve() run again on n = 611 (3 blocks of 256), each time with one element 1 and the others 0, added elements 0, 1, 610 3 times each"
        );
        let c = Counted { n: 611, blocks: 3, threads_per_block: 256, counts: vec![(0, 1), (256, 2), (512, 3), (610, 3)] };
        assert_eq!(
            c.describe(),
            "solve() run again on n = 611 (3 blocks of 256), each time with one element 1 and the others 0, added element 0 once, element 256 twice and elements 512, 610 3 times each"
        );
    }
}
