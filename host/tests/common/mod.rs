//! What the test binaries of the sum across GPUs share (`mod common;`).

use host::multi::MultiReport;

/// What `mutant_multi_gpu_without_barrier` must do to a run's report: GPU 0
/// adds a total that no GPU wrote (the exchange was poisoned with NaN), so
/// its combined-total check fails and so does the verdict.
pub fn assert_the_missing_barrier_is_caught(r: &MultiReport) {
    let failed: Vec<&str> = r.checks.iter().filter(|c| !c.pass()).map(|c| c.name.as_str()).collect();
    assert!(failed.iter().any(|c| c.contains("combined total on GPU 0")), "{failed:?}");
    assert!(r.sums[0].combined[0].value.is_nan(), "GPU 0 added a total no GPU wrote: {:?}", r.sums[0].combined);
    assert!(r.verdict().is_err());
}
