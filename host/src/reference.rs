//! The input, the double-precision references, and the float error bounds
//! every GPU sum is checked against: the total, each block's partial, and the
//! second stage's sum of the partials.

use crate::error::{Error, Result};
use cg_launcher::error::Error as L;
use serde::Serialize;

/// How the input is filled, as printed.
pub const FILL_RULE: &str = "x[i] = 0.5 + ((i * 2654435761) mod 1024) / 1024";

/// Bytes of `n` floats, or the error that `--n` is too large to count.
pub fn float_bytes(n: usize) -> Result<u64> {
    (n as u64).checked_mul(4).ok_or(Error::Launch(L::InputTooLarge { n }))
}

pub use cg_launcher::device::host_available;

/// Fails with a named error unless the host has `bytes` more memory to
/// give: checked before a size is used, so that an input too large is one
/// line, not a process the system kills half-way.
pub fn ensure_host_free(bytes: u64) -> Result<()> {
    match host_available() {
        Some(available) if bytes > available => Err(Error::Launch(L::OutOfHostMemory { needed: bytes })),
        _ => Ok(()),
    }
}

/// The lesson's input: deterministic, not all equal, no zeros, every value
/// exact in f32. Fails with a named error when the host cannot hold it.
pub fn fill(n: usize) -> Result<Vec<f32>> {
    fill_range(0, n)
}

/// Elements `first .. first + len` of the lesson's input ([`fill`] is `fill_range(0, n)`).
pub fn fill_range(first: usize, len: usize) -> Result<Vec<f32>> {
    let bytes = float_bytes(len)?;
    let mut xs = Vec::new();
    xs.try_reserve_exact(len).map_err(|_| Error::Launch(L::OutOfHostMemory { needed: bytes }))?;
    xs.extend((first as u64..(first + len) as u64).map(element));
    Ok(xs)
}

/// Element `k` of the lesson's input (`gpu::kernels::fill_lesson_input` computes the same).
fn element(k: u64) -> f32 {
    0.5 + (k.wrapping_mul(2_654_435_761) % 1024) as f32 / 1024.0
}

/// The double sum of elements `first .. first + len` of the lesson's input,
/// without making them: element `k` depends only on `k mod 1024` (1024
/// divides 2^64, and `2654435761 mod 1024 = 433` is odd, so each 1024 in a
/// row take every residue once and add up to 1023.5). Exact: every partial
/// sum is a multiple of 2^-10 far below 2^43. Equal to [`reference_sum`] of
/// [`fill_range`] (a test holds it).
pub fn fill_range_sum(first: usize, len: usize) -> f64 {
    let periods = (len / 1024) as f64;
    let rest = (first + len - len % 1024) as u64..(first + len) as u64;
    periods * 1023.5 + rest.map(|k| element(k) as f64).sum::<f64>()
}

/// The sum in double precision, and the sum of magnitudes the bound scales with.
pub fn reference_sum(xs: &[f32]) -> (f64, f64) {
    xs.iter().fold((0.0, 0.0), |(s, a), &x| (s + x as f64, a + (x as f64).abs()))
}

/// Unit roundoff of f32.
const U: f64 = 1.0 / (1u64 << 24) as f64;

/// Additions on the longest chain through `block_sum` for a block of
/// `threads_per_block` cut into tiles of `tile`: a butterfly over the tile
/// (log2 tile), the first tile's sum of the tile totals (one per `tile` of
/// them), and a second butterfly.
pub fn block_sum_depth(threads_per_block: u32, tile: u32) -> u64 {
    let tiles = threads_per_block.div_ceil(tile) as u64;
    2 * tile.trailing_zeros() as u64 + tiles.div_ceil(tile as u64)
}

/// Additions on the longest chain of a block's first stage: its grid-stride
/// share, then `block_sum`.
pub fn first_stage_chain(n: usize, blocks: u32, threads_per_block: u32, tile: u32) -> u64 {
    let stride = blocks.max(1) as u64 * threads_per_block as u64;
    (n as u64).div_ceil(stride) + block_sum_depth(threads_per_block, tile)
}

/// Additions on the longest chain of the second stage: one block's
/// block-stride share of the `blocks` partials, then `block_sum`.
pub fn second_stage_chain(blocks: u32, threads_per_block: u32, tile: u32) -> u64 {
    (blocks.max(1) as u64).div_ceil(threads_per_block as u64) + block_sum_depth(threads_per_block, tile)
}

/// The longest chain of float additions any input goes through in the
/// lesson's sums (both stages).
pub fn longest_chain(n: usize, blocks: u32, threads_per_block: u32, tile: u32) -> u64 {
    if n == 0 {
        return 0;
    }
    first_stage_chain(n, blocks, threads_per_block, tile) + second_stage_chain(blocks, threads_per_block, tile)
}

/// Additions on the longest chain a correct single-launch sum may make, in
/// whatever order it adds the block totals: each block's grid-stride share
/// and its tree (`block_sum`), then the block totals in a tree, as the
/// lesson's block 0 adds them, or one at a time in any order, as
/// `out.atomic_add(0, total)` from every block adds them (a chain as long
/// as the grid: any order of adding `blocks` totals onto the zeroed
/// `out[0]` makes at most `blocks` additions in a row). The longer of the two.
pub fn longest_chain_any_order(n: usize, blocks: u32, threads_per_block: u32, tile: u32) -> u64 {
    if n == 0 {
        return 0;
    }
    first_stage_chain(n, blocks, threads_per_block, tile) + second_stage_chain(blocks, threads_per_block, tile).max(blocks.max(1) as u64)
}

/// Additions on the longest chain of the cluster stage: rank 0's
/// block-stride share of its cluster's `cluster` block totals, then `block_sum`.
pub fn cluster_stage_chain(cluster: u32, threads_per_block: u32, tile: u32) -> u64 {
    (cluster.max(1) as u64).div_ceil(threads_per_block as u64) + block_sum_depth(threads_per_block, tile)
}

/// [`longest_chain`] for the sums with a cluster stage: block sums, the
/// cluster stage, then one block over the `blocks / cluster` cluster partials.
pub fn longest_chain_clusters(n: usize, blocks: u32, threads_per_block: u32, tile: u32, cluster: u32) -> u64 {
    if n == 0 {
        return 0;
    }
    let clusters = blocks / cluster.max(1);
    first_stage_chain(n, blocks, threads_per_block, tile)
        + cluster_stage_chain(cluster, threads_per_block, tile)
        + second_stage_chain(clusters, threads_per_block, tile)
}

/// [`longest_chain`] for the fast kernel, which adds each float into a sum
/// of four first and its four accumulators at the end: 4 more additions.
pub fn longest_chain_fast(n: usize, blocks: u32, threads_per_block: u32, tile: u32) -> u64 {
    if n == 0 { 0 } else { longest_chain(n, blocks, threads_per_block, tile) + 4 }
}

/// A bound on |float sum - exact sum| for a summation whose longest chain has
/// `h` additions: `gamma_h * sum|x|`, with `gamma_h = h u / (1 - h u)`.
pub fn error_bound(h: u64, abs_sum: f64) -> f64 {
    let hu = h as f64 * U;
    // Past h = 2^24 the classical bound says nothing.
    if hu >= 1.0 { f64::INFINITY } else { hu / (1.0 - hu) * abs_sum }
}

/// The bound's rule, as printed.
pub const BOUND_RULE: &str = "|sum - reference| <= gamma_h * sum|x|, gamma_h = h*2^-24/(1 - h*2^-24), h = additions on the longest path";

/// The exercise's rule ([`longest_chain_any_order`]), as printed.
pub const ANY_ORDER_BOUND_RULE: &str = "|sum - reference| <= gamma_h * sum|x|, gamma_h = h*2^-24/(1 - h*2^-24), h = additions on the longest path a correct sum may take (each block's share and tree, then the block totals in a tree or in any order: up to one addition per block)";

/// A float result against its double reference.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct SumCheck {
    #[serde(serialize_with = "crate::json::float")]
    pub value: f32,
    #[serde(serialize_with = "crate::json::float")]
    pub reference: f64,
    #[serde(serialize_with = "crate::json::float")]
    pub error: f64,
    #[serde(serialize_with = "crate::json::float")]
    pub bound: f64,
    pub pass: bool,
}

impl SumCheck {
    /// `value vs reference, error E <= bound B` when it passed, `... error E > bound B`
    /// when it did not (NaN and infinity: `error NaN, not within bound B`).
    pub fn detail(&self) -> String {
        let relation = if self.pass {
            "<= bound"
        } else if self.error.is_finite() {
            "> bound"
        } else {
            "not within bound"
        };
        format!("{} vs {:.6}, error {:.3e} {relation} {:.3e}", self.value, self.reference, self.error, self.bound)
    }
}

/// Checks `value` against `reference` within `bound`. NaN and infinity never
/// pass (unless the reference is the same infinity).
pub fn check(value: f32, reference: f64, bound: f64) -> SumCheck {
    let error = (value as f64 - reference).abs();
    let pass = if reference.is_finite() { value.is_finite() && error <= bound } else { value as f64 == reference };
    SumCheck { value, reference, error, bound, pass }
}

/// Each block's double-precision sum and sum of magnitudes over exactly the
/// elements it reads in the grid-stride loop: element `i` belongs to block
/// `(i mod (blocks * threads_per_block)) / threads_per_block`.
pub fn per_block(xs: &[f32], blocks: u32, threads_per_block: u32) -> Vec<(f64, f64)> {
    let mut sums = vec![(0.0f64, 0.0f64); blocks as usize];
    if blocks == 0 {
        return sums;
    }
    for chunk in xs.chunks(blocks as usize * threads_per_block as usize) {
        for (s, part) in sums.iter_mut().zip(chunk.chunks(threads_per_block as usize)) {
            let (a, b) = reference_sum(part);
            s.0 += a;
            s.1 += b;
        }
    }
    sums
}

/// What a sum's stages wrote, checked stage by stage.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct StageChecks {
    /// Blocks whose partial is outside its bound (NaN included).
    pub bad_partials: Vec<u32>,
    /// The first bad block's partial against its own reference.
    pub first_bad: Option<SumCheck>,
    /// The total against the double sum of the partials the kernel wrote,
    /// within the second stage's bound alone: a dropped or doubled block
    /// shows here even where the total's own bound is wider than one block.
    pub total_of_partials: SumCheck,
}

impl StageChecks {
    pub fn pass(&self) -> bool {
        self.bad_partials.is_empty() && self.total_of_partials.pass
    }

    /// The partials' check in words, for `blocks` blocks.
    pub fn partials_detail(&self, blocks: u32) -> String {
        match &self.first_bad {
            Some(c) => format!(
                "{} of {} outside their bounds, first block {}: {} vs {:.6}",
                self.bad_partials.len(),
                crate::text::plural(blocks, "block", "blocks"),
                self.bad_partials[0],
                c.value,
                c.reference
            ),
            None => format!("{}, each within its block's bound", crate::text::plural(blocks, "partial", "partials")),
        }
    }
}

/// [`per_block`] as computed for a grid of `(blocks, threads_per_block)`.
type PerBlockFor = (u32, u32, std::rc::Rc<Vec<(f64, f64)>>);

/// An input with its references, computed once: the total's, and (for the
/// last grid asked about) each block's.
pub struct Reference<'a> {
    pub xs: &'a [f32],
    pub sum: f64,
    pub abs: f64,
    per_block: std::cell::RefCell<Option<PerBlockFor>>,
}

impl<'a> Reference<'a> {
    pub fn new(xs: &'a [f32]) -> Reference<'a> {
        let (sum, abs) = reference_sum(xs);
        Reference { xs, sum, abs, per_block: Default::default() }
    }

    /// [`per_block`] for this grid, computed once per grid.
    pub fn per_block(&self, blocks: u32, threads_per_block: u32) -> std::rc::Rc<Vec<(f64, f64)>> {
        let mut cache = self.per_block.borrow_mut();
        match &*cache {
            Some((b, t, sums)) if (*b, *t) == (blocks, threads_per_block) => sums.clone(),
            _ => {
                let sums = std::rc::Rc::new(per_block(self.xs, blocks, threads_per_block));
                *cache = Some((blocks, threads_per_block, sums.clone()));
                sums
            }
        }
    }

    /// Checks a total with the given longest chain.
    pub fn check_total(&self, total: f32, chain: u64) -> SumCheck {
        check(total, self.sum, error_bound(chain, self.abs))
    }

    /// Checks a two-stage sum: every partial against the double sum of its
    /// block's elements, and the total against the double sum of the partials.
    pub fn check_stages(&self, partials: &[f32], total: f32, threads_per_block: u32, tile: u32) -> StageChecks {
        let blocks = partials.len() as u32;
        let first = first_stage_chain(self.xs.len(), blocks, threads_per_block, tile);
        let mut bad_partials = Vec::new();
        let mut first_bad = None;
        for (b, (&p, &(want, abs))) in partials.iter().zip(self.per_block(blocks, threads_per_block).iter()).enumerate() {
            let c = check(p, want, error_bound(first, abs));
            if !c.pass {
                bad_partials.push(b as u32);
                first_bad.get_or_insert(c);
            }
        }
        let (of_partials, abs) = partials.iter().fold((0.0, 0.0), |(s, a), &p| (s + p as f64, a + (p as f64).abs()));
        let total_of_partials = check(total, of_partials, error_bound(second_stage_chain(blocks, threads_per_block, tile), abs));
        StageChecks { bad_partials, first_bad, total_of_partials }
    }

    /// Checks a sum with a cluster stage on `blocks` blocks in clusters of
    /// `cluster`: every cluster's partial against the double sum of its
    /// blocks' elements, and the total against the double sum of the partials.
    /// `bad_partials` numbers clusters.
    pub fn check_cluster_stages(&self, partials: &[f32], total: f32, blocks: u32, threads_per_block: u32, tile: u32, cluster: u32) -> StageChecks {
        let per_block = self.per_block(blocks, threads_per_block);
        let chain = first_stage_chain(self.xs.len(), blocks, threads_per_block, tile) + cluster_stage_chain(cluster, threads_per_block, tile);
        let mut bad_partials = Vec::new();
        let mut first_bad = None;
        for (c, (&p, blocks_of)) in partials.iter().zip(per_block.chunks(cluster.max(1) as usize)).enumerate() {
            let (want, abs) = blocks_of.iter().fold((0.0, 0.0), |(s, a), &(x, y)| (s + x, a + y));
            let check = check(p, want, error_bound(chain, abs));
            if !check.pass {
                bad_partials.push(c as u32);
                first_bad.get_or_insert(check);
            }
        }
        let (of_partials, abs) = partials.iter().fold((0.0, 0.0), |(s, a), &p| (s + p as f64, a + (p as f64).abs()));
        let total_of_partials = check(total, of_partials, error_bound(second_stage_chain(partials.len() as u32, threads_per_block, tile), abs));
        StageChecks { bad_partials, first_bad, total_of_partials }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_check_says_its_error_is_over_the_bound() {
        assert!(check(10.0, 10.0, 1.0).detail().ends_with("error 0.000e0 <= bound 1.000e0"));
        assert!(check(20.0, 10.0, 1.0).detail().ends_with("error 1.000e1 > bound 1.000e0"));
        assert!(check(f32::NAN, 10.0, 1.0).detail().ends_with("error NaN not within bound 1.000e0"));
    }

    /// A CPU model of the lesson's two stages, in the GPU's order: each
    /// thread's grid-stride sum, a block total per block, then their total.
    fn model(xs: &[f32], blocks: u32, tpb: u32) -> (Vec<f32>, f32) {
        let stride = (blocks * tpb) as usize;
        let mut partials = vec![0f32; blocks as usize];
        for (b, p) in partials.iter_mut().enumerate() {
            for t in 0..tpb as usize {
                let mut v = 0f32;
                let mut i = b * tpb as usize + t;
                while i < xs.len() {
                    v += xs[i];
                    i += stride;
                }
                *p += v;
            }
        }
        let total = partials.iter().sum();
        (partials, total)
    }

    #[test]
    fn fill_is_deterministic_varied_and_exact() {
        let xs = fill(4096).unwrap();
        assert_eq!(xs, fill(4096).unwrap());
        assert!(xs.iter().all(|&x| (0.5..1.5).contains(&x)));
        assert!(xs.iter().any(|&x| x != xs[0]));
        assert!(xs.iter().all(|&x| ((x as f64) * 1024.0).fract() == 0.0));
        assert_eq!(xs[0], 0.5);
    }

    #[test]
    fn the_host_says_how_much_memory_it_can_give_and_more_is_refused() {
        let available = host_available().expect("Linux reports MemAvailable");
        assert!(available > 0);
        assert!(ensure_host_free(available / 2).is_ok());
        assert!(matches!(ensure_host_free(available.saturating_mul(4)), Err(Error::Launch(L::OutOfHostMemory { .. }))));
    }

    #[test]
    fn an_input_the_host_cannot_hold_or_count_is_a_named_error() {
        let err = fill(1 << 60).unwrap_err();
        assert!(matches!(err, Error::Launch(L::OutOfHostMemory { .. })), "{err}");
        assert!(err.to_string().contains("use a smaller --n"));
        for n in [usize::MAX, usize::MAX / 2, 4_611_686_018_427_387_904] {
            assert!(matches!(fill(n), Err(Error::Launch(L::InputTooLarge { .. }))), "{n}");
        }
    }

    #[test]
    fn a_range_of_the_input_is_the_same_floats_and_its_closed_sum_the_double_sum() {
        let all = fill(5000).unwrap();
        for (first, len) in [(0, 0), (0, 5000), (1, 1023), (1023, 1025), (700, 2048), (4000, 1000), (3, 0)] {
            let part = fill_range(first, len).unwrap();
            assert_eq!(part, all[first..first + len], "{first}+{len}");
            assert_eq!(fill_range_sum(first, len), reference_sum(&part).0, "{first}+{len}");
        }
        // A shard far out, as the multi-GPU sweep makes them: 2^31 + 5 floats from 2^31 - 7.
        let (first, len) = ((1usize << 31) - 7, 3000);
        assert_eq!(fill_range_sum(first, len), reference_sum(&fill_range(first, len).unwrap()).0);
        assert_eq!(fill_range_sum(0, 1 << 32), 4_194_304.0 * 1023.5);
    }

    #[test]
    fn reference_is_the_exact_sum_for_small_inputs() {
        let xs = fill(611).unwrap();
        let (s, a) = reference_sum(&xs);
        let exact: f64 = xs.iter().map(|&x| x as f64).sum();
        assert_eq!(s, exact);
        assert_eq!(s, a);
    }

    #[test]
    fn chains_count_the_grid_stride_share_and_both_block_sums() {
        // H200 lesson run: 1056 blocks of 256, tiles of 32, over 4,194,915 floats.
        assert_eq!(block_sum_depth(256, 32), 5 + 1 + 5);
        assert_eq!(longest_chain(4_194_915, 1056, 256, 32), 16 + 11 + 5 + 11);
        assert_eq!(longest_chain(0, 0, 256, 32), 0);
        // Tiles of one thread: the first tile adds all 256 tile totals one by one.
        assert_eq!(block_sum_depth(256, 1), 256);
        // 128 tiles of 8: each thread of the first tile adds 16 tile totals.
        assert_eq!(block_sum_depth(1024, 8), 3 + 16 + 3);
    }

    #[test]
    fn a_float_sum_of_the_lesson_input_passes_and_a_nudged_one_fails() {
        let xs = fill(100_000).unwrap();
        let (reference, abs) = reference_sum(&xs);
        let naive: f32 = xs.iter().sum();
        let bound = error_bound(xs.len() as u64, abs);
        assert!(check(naive, reference, bound).pass);
        let off = reference as f32 + (bound as f32) * 4.0;
        assert!(!check(off, reference, bound).pass);
    }

    #[test]
    fn chains_past_2_to_the_24_have_no_finite_bound_but_still_refuse_nan() {
        assert_eq!(error_bound(1 << 24, 1.0), f64::INFINITY);
        assert!(error_bound((1 << 24) - 1, 1.0).is_finite());
        assert!(check(1.0e9, 1.0, error_bound(1 << 25, 1.0)).pass);
        assert!(!check(f32::NAN, 1.0, error_bound(1 << 25, 1.0)).pass);
    }

    #[test]
    fn nan_and_infinity_never_pass_a_finite_reference() {
        assert!(!check(f32::NAN, 1.0, f64::INFINITY).pass);
        assert!(!check(f32::INFINITY, 1.0, f64::INFINITY).pass);
        assert!(check(f32::INFINITY, f64::INFINITY, 0.0).pass);
        assert!(!check(f32::NAN, f64::NAN, 0.0).pass);
    }

    #[test]
    fn per_block_sums_cover_each_element_once_in_the_grid_stride_pattern() {
        let xs = fill(10_007).unwrap();
        let sums = per_block(&xs, 3, 64);
        let total: f64 = sums.iter().map(|s| s.0).sum();
        assert_eq!(total, reference_sum(&xs).0);
        // Block 1 reads elements 64..128, then 256..320, ...
        let want: f64 = (0..xs.len()).filter(|i| (i % 192) / 64 == 1).map(|i| xs[i] as f64).sum();
        assert_eq!(sums[1].0, want);
    }

    #[test]
    fn stage_checks_pass_the_right_sum_and_catch_a_dropped_or_doubled_block() {
        let xs = fill(100_003).unwrap();
        let (partials, total) = model(&xs, 8, 64);
        let r = Reference::new(&xs);
        let ok = r.check_stages(&partials, total, 64, 32);
        assert!(ok.pass(), "{ok:?}");
        // Drop the last block from the total; keep the partials right.
        let dropped: f32 = partials[..7].iter().sum();
        let c = r.check_stages(&partials, dropped, 64, 32);
        assert!(!c.pass() && c.bad_partials.is_empty() && !c.total_of_partials.pass, "{c:?}");
        // Count block 3 twice.
        let doubled = total + partials[3];
        assert!(!r.check_stages(&partials, doubled, 64, 32).pass());
        // A block that wrote nothing (poisoned NaN) is named.
        let mut unwritten = partials.clone();
        unwritten[5] = f32::NAN;
        let c = r.check_stages(&unwritten, total, 64, 32);
        assert_eq!(c.bad_partials, vec![5]);
    }

    #[test]
    fn at_2_to_the_32_plus_3_the_total_bound_admits_a_dropped_block_but_the_stage_bound_does_not() {
        // The H200 lesson grid at the largest size the lesson is run at.
        let (n, blocks, tpb, tile) = (4_294_967_299usize, 1056u32, 256u32, 32u32);
        let abs = n as f64; // every element is about 1 on average
        let total_bound = error_bound(longest_chain(n, blocks, tpb, tile), abs);
        let one_block = abs / blocks as f64;
        assert!(one_block < total_bound, "the issue's finding: {one_block} < {total_bound}");
        let stage_bound = error_bound(second_stage_chain(blocks, tpb, tile), abs);
        assert!(one_block > 100.0 * stage_bound, "{one_block} vs {stage_bound}");
    }
}
