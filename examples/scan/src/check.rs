//! The input, and the scan checked element by element against a
//! double-precision scan on the CPU, with a bound on the error a float scan
//! of this shape can make.

/// How the input is made (the lesson's own input).
pub const FILL_RULE: &str = "x[i] = 0.5 + ((i * 2654435761) mod 1024) / 1024";

/// `n` floats by [`FILL_RULE`]: all positive, not all equal, each exact in f32.
pub fn fill(n: usize) -> Vec<f32> {
    (0..n as u64).map(|i| 0.5 + (i.wrapping_mul(2_654_435_761) % 1024) as f32 / 1024.0).collect()
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
pub fn against_reference(xs: &[f32], ys: &[f32], blocks: usize, threads: usize) -> Checked {
    let h = additions(xs.len(), blocks, threads) as f64;
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
    fn the_depth_grows_with_the_steps_a_block_takes() {
        assert!(additions(1 << 26, 1056, 256) > additions(1 << 20, 1056, 256));
        assert!(additions(1, 1, 256) >= 4);
    }
}
