//! The input, the double-precision reference, and the float error bound every
//! GPU sum is checked against.

use crate::error::{Error, Result};
use serde::Serialize;

/// How the input is filled, as printed.
pub const FILL_RULE: &str = "x[i] = 0.5 + ((i * 2654435761) mod 1024) / 1024";

/// The lesson's input: deterministic, not all equal, no zeros, every value
/// exact in f32. Fails with a named error when the host cannot hold it.
pub fn fill(n: usize) -> Result<Vec<f32>> {
    let mut xs = Vec::new();
    xs.try_reserve_exact(n).map_err(|_| Error::OutOfHostMemory { needed: (n as u64).saturating_mul(4) })?;
    xs.extend((0..n as u64).map(|i| 0.5 + (i.wrapping_mul(2_654_435_761) % 1024) as f32 / 1024.0));
    Ok(xs)
}

/// The sum in double precision, and the sum of magnitudes the bound scales with.
pub fn reference_sum(xs: &[f32]) -> (f64, f64) {
    xs.iter().fold((0.0, 0.0), |(s, a), &x| (s + x as f64, a + (x as f64).abs()))
}

/// Unit roundoff of f32.
const U: f64 = 1.0 / (1u64 << 24) as f64;

/// The longest chain of float additions any input goes through in the
/// lesson's sums with `blocks` blocks of `threads`: its grid-stride share, the
/// partials' share in the last block, and two block reductions of two
/// 32-lane butterflies (5 steps each).
pub fn longest_chain(n: u64, blocks: u64, threads: u32) -> u64 {
    if n == 0 {
        return 0;
    }
    let stride = blocks.max(1) * threads as u64;
    n.div_ceil(stride) + blocks.max(1).div_ceil(threads as u64) + 4 * 5
}

/// [`longest_chain`] for the fast kernel, which adds each float into a sum
/// of four first and its four accumulators at the end: 4 more additions.
pub fn longest_chain_fast(n: u64, blocks: u64, threads: u32) -> u64 {
    if n == 0 { 0 } else { longest_chain(n, blocks, threads) + 4 }
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

/// A GPU sum against the reference.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct SumCheck {
    pub value: f32,
    pub reference: f64,
    pub error: f64,
    pub bound: f64,
    pub pass: bool,
}

/// Checks `value` against `reference` within `bound`. NaN and infinity never
/// pass (unless the reference is the same infinity).
pub fn check(value: f32, reference: f64, bound: f64) -> SumCheck {
    let error = (value as f64 - reference).abs();
    let pass = if reference.is_finite() { value.is_finite() && error <= bound } else { value as f64 == reference };
    SumCheck { value, reference, error, bound, pass }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn an_input_the_host_cannot_hold_is_a_named_error() {
        let err = fill(1 << 60).unwrap_err();
        assert!(matches!(err, Error::OutOfHostMemory { .. }), "{err}");
        assert!(err.to_string().contains("use a smaller --n"));
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
    fn longest_chain_counts_the_lesson_grid() {
        // H200 lesson run: 1056 blocks of 256 over 4,194,915 floats.
        assert_eq!(longest_chain(4_194_915, 1056, 256), 16 + 5 + 20);
        assert_eq!(longest_chain(0, 0, 256), 0);
        assert_eq!(longest_chain(1, 1, 256), 1 + 1 + 20);
    }

    #[test]
    fn a_float_sum_of_the_lesson_input_passes_and_a_nudged_one_fails() {
        let xs = fill(100_000).unwrap();
        let (reference, abs) = reference_sum(&xs);
        let naive: f32 = xs.iter().sum();
        let h = longest_chain(xs.len() as u64, 1, 1);
        let bound = error_bound(h, abs);
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
}
