//! The input, and the scan checked element by element against a
//! double-precision scan on the CPU, with a bound on the error a float scan
//! of this shape can make.

/// How the input is made (the lesson's own input).
pub const FILL_RULE: &str = "x[i] = 0.5 + ((i * 2654435761) mod 1024) / 1024";

/// `n` floats by [`FILL_RULE`]: all positive, not all equal, each exact in f32.
pub fn fill(n: usize) -> Vec<f32> {
    (0..n as u64).map(|i| 0.5 + (i.wrapping_mul(2_654_435_761) % 1024) as f32 / 1024.0).collect()
}

/// How the exact input is made.
pub const SIGNS_RULE: &str = "x[i] = +1 or -1, by the top bit of a hash of i";

/// `n` floats each +1 or -1 ([`SIGNS_RULE`]): every sum of a run of them is
/// an integer of magnitude far below 2^24 (a random walk: about the square
/// root of its length), so every partial sum a scan adds, in any order, is
/// exact in f32, and the scan must equal the exact one. No element is 0, so
/// an element dropped or added twice changes every output after it by 1.
pub fn signs(n: usize) -> Vec<f32> {
    (0..n as u64)
        .map(|i| {
            let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z ^= z >> 31;
            if z >> 63 == 0 { 1.0 } else { -1.0 }
        })
        .collect()
}

/// The first index at which `ys` is not the exact scan of `xs` (which must be
/// integer-valued and small: [`signs`]), or `None` where every element is equal.
pub fn first_inexact(xs: &[f32], ys: &[f32]) -> Option<usize> {
    if ys.len() != xs.len() {
        return Some(ys.len().min(xs.len()));
    }
    let mut exact = 0i64;
    xs.iter().zip(ys).position(|(&x, &y)| {
        exact += x as i64;
        y != exact as f32
    })
}

/// What the check found.
pub struct Checked {
    /// Whether every element is within its bound.
    pub pass: bool,
    /// The reference's last element.
    pub last_reference: f64,
    /// The element whose error is the largest part of its bound.
    pub worst_index: usize,
    /// Its error.
    pub worst_error: f64,
    /// Its bound.
    pub worst_bound: f64,
}

/// Float additions on the longest path to any output of the kernel
/// (`scan_kernels::inclusive_scan`) with `blocks` blocks of `threads`: the
/// chunk's sum (steps of `ITEMS` floats per thread, then the tile and block
/// scans), the offset (a thread's share of the totals before it, then the
/// block scan), the carry across the chunk's steps, and the element's own.
pub fn additions(n: usize, blocks: usize, threads: usize) -> usize {
    let span = threads * scan_kernels::ITEMS;
    let steps = n.div_ceil(span).div_ceil(blocks.max(1));
    let log = |x: usize| (usize::BITS - x.max(1).leading_zeros()) as usize;
    let items = scan_kernels::ITEMS;
    let block_scan = 2 * log(threads) + 2;
    let chunk_sum = items * steps + block_scan;
    let offset = blocks.div_ceil(threads) + block_scan + chunk_sum;
    let carry = steps * (block_scan + 1);
    offset + carry + block_scan + items
}

/// `ys` against the double-precision scan of `xs`: element `i` must be
/// within gamma_h (|x[0]| + ... + |x[i]|), gamma_h = h u / (1 - h u), u = 2^-24,
/// h = [`additions`], the classic bound for a sum of that depth.
#[cfg(test)]
pub fn against_reference(xs: &[f32], ys: &[f32], blocks: usize, threads: usize) -> Checked {
    within(xs, ys, additions(xs.len(), blocks, threads))
}

/// Float additions on the longest path to any output of
/// `scan_kernels::inclusive_scan_once`: one round's, as [`additions`]
/// counts them for the round's length, then for each earlier round its
/// total (the totals' sum, a block scan of it) added into the carry.
pub fn additions_once(n: usize, blocks: usize, threads: usize) -> usize {
    let round = scan_kernels::round_len(blocks.max(1), threads);
    let rounds = n.div_ceil(round);
    let log = |x: usize| (usize::BITS - x.max(1).leading_zeros()) as usize;
    additions(n.min(round), blocks, threads) + rounds.saturating_sub(1) * (blocks.div_ceil(threads) + 2 * log(threads) + 3)
}

/// Float additions on the longest path to any output of
/// cg-algorithms' `inclusive_scan` with tiles of `threads` threads (16 floats each):
/// the tile's own scan (a thread's `ITEMS`, then the block scan), and the
/// prefix before it, which in the worst case is a chain through every
/// earlier tile (each tile's prefix is the one before it plus its own total,
/// or a window's totals added by a 32-lane reduction first).
pub fn additions_lookback(n: usize, threads: usize) -> usize {
    let log = |x: usize| (usize::BITS - x.max(1).leading_zeros()) as usize;
    let tiles = n.div_ceil(threads * 16);
    let tile_scan = 16 + 2 * log(threads) + 2;
    tiles * (log(32) + 2) + tile_scan + 2
}

/// `ys` against the double-precision scan of `xs`, each element within the
/// bound of a sum `h` additions deep (see [`against_reference`]).
pub fn within(xs: &[f32], ys: &[f32], h: usize) -> Checked {
    let h = h as f64;
    let u = 2f64.powi(-24);
    let gamma = h * u / (1.0 - h * u);
    let (mut exact, mut magnitude) = (0.0f64, 0.0f64);
    let mut worst = Checked { pass: ys.len() == xs.len(), last_reference: 0.0, worst_index: 0, worst_error: 0.0, worst_bound: 0.0 };
    let mut worst_ratio = -1.0;
    for (i, (&x, &y)) in xs.iter().zip(ys).enumerate() {
        exact += x as f64;
        magnitude += (x as f64).abs();
        let bound = gamma * magnitude;
        let error = (y as f64 - exact).abs();
        let ratio = if error.is_nan() { f64::INFINITY } else { error / bound.max(f64::MIN_POSITIVE) };
        if ratio > worst_ratio {
            worst_ratio = ratio;
            (worst.worst_index, worst.worst_error, worst.worst_bound) = (i, error, bound);
        }
        if error.is_nan() || error > bound {
            worst.pass = false;
        }
    }
    worst.last_reference = exact;
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu_scan(xs: &[f32]) -> Vec<f32> {
        let mut s = 0.0f32;
        xs.iter()
            .map(|&x| {
                s += x;
                s
            })
            .collect()
    }

    #[test]
    fn a_correct_scan_passes_and_a_dropped_element_or_offset_fails() {
        let xs = fill(4096);
        assert!(against_reference(&xs, &cpu_scan(&xs), 4, 256).pass);
        let mut skipped = cpu_scan(&xs);
        for y in &mut skipped[1000..] {
            *y -= xs[1000];
        }
        assert!(!against_reference(&xs, &skipped, 4, 256).pass, "an element left out");
        let mut no_offset = cpu_scan(&xs);
        let first_chunk = no_offset[1023];
        for y in &mut no_offset[1024..2048] {
            *y -= first_chunk;
        }
        let c = against_reference(&xs, &no_offset, 4, 256);
        assert!(!c.pass && c.worst_index == 1024, "the second block without the first's total: {}", c.worst_index);
        let mut short = cpu_scan(&xs);
        short.pop();
        assert!(!against_reference(&xs, &short, 4, 256).pass, "a missing element");
        let mut nan = cpu_scan(&xs);
        nan[7] = f32::NAN;
        assert!(!against_reference(&xs, &nan, 4, 256).pass, "a NaN");
    }

    #[test]
    fn on_signs_one_dropped_or_repeated_element_fails_the_exact_check_at_every_rung() {
        // The ladder's sizes up to 2^20 + 7 (the check is the same at every size).
        for n in [2usize, 31, 32, 33, 611, 4096, 1048583] {
            let xs = signs(n);
            let ys = cpu_scan(&xs);
            assert_eq!(first_inexact(&xs, &ys), None, "n = {n}");
            for k in [0, n / 2, n - 1] {
                let mut dropped = xs.clone();
                dropped[k] = 0.0;
                assert_eq!(first_inexact(&xs, &cpu_scan(&dropped)), Some(k), "n = {n}, element {k} dropped");
                let mut twice = xs.clone();
                twice[k] *= 2.0;
                assert_eq!(first_inexact(&xs, &cpu_scan(&twice)), Some(k), "n = {n}, element {k} added twice");
            }
        }
        // The bound check alone lets an element through where its bound is
        // larger than the element: at 2^20 on the lesson's input.
        let xs = fill(1 << 20);
        let mut total = 0.0f64;
        // Each prefix rounded once: as close as a float scan comes.
        let mut skipped: Vec<f32> = xs
            .iter()
            .map(|&x| {
                total += x as f64;
                total as f32
            })
            .collect();
        let k = (1 << 20) - 2;
        for y in &mut skipped[k..] {
            *y -= xs[k];
        }
        assert!(against_reference(&xs, &skipped, 1056, 256).pass, "the bound is that loose at 2^20");
    }

    #[test]
    fn the_depth_grows_with_the_steps_a_block_takes() {
        assert!(additions(1 << 26, 1056, 256) > additions(1 << 20, 1056, 256));
        assert!(additions(1, 1, 256) >= 4);
        // One round reads as the kernel that reads twice; each later round
        // adds its total's depth.
        let round = scan_kernels::round_len(40, 256);
        assert_eq!(additions_once(round, 40, 256), additions(round, 40, 256));
        assert!(additions_once(3 * round, 40, 256) > additions_once(round, 40, 256));
    }
}
