//! How the examples time themselves against CUB on the same GPU in the same
//! run: the baseline's CUDA C++ built by `nvcc` into a shared library at run
//! time ([`build`]), and rounds that time ours and the baseline's one after
//! the other, which goes first alternating ([`paired`]), the ratio taken
//! round by round and summarized by its median and a distribution-free 95%
//! interval ([`median_interval`]); and what each example's `main` does the
//! same way ([`program`]).

pub mod program;

use std::process::Command;

/// A baseline built and loaded: the four functions each example's CUDA C++
/// exports, `cub_setup` (the input, copied to the device), `cub_time` (runs
/// timed by events, milliseconds each), `cub_result` (the output, copied
/// back) and `cub_teardown`. `S` and `R` are the first and third's
/// signatures, which differ by example.
pub struct Baseline<S, R> {
    _lib: libloading::Library,
    /// `cub_setup`.
    pub setup: S,
    /// `cub_time(runs, ms)`: `runs` runs, each one's milliseconds into `ms`.
    pub time: unsafe extern "C" fn(i32, *mut f32) -> i32,
    /// `cub_result`.
    pub result: R,
    /// `cub_teardown`.
    pub teardown: unsafe extern "C" fn(),
}

impl<S, R> Baseline<S, R> {
    /// The median milliseconds of `runs` timed runs, after as many
    /// warm-ups: one side of a round of [`paired`].
    ///
    /// # Safety
    /// `cub_setup` succeeded for the input at hand, and `cub_teardown` has
    /// not been called since.
    pub unsafe fn median_ms(&self, runs: usize) -> f64 {
        let mut ms = vec![0f32; runs];
        // SAFETY: `ms` holds `runs` floats; the caller's contract for the rest.
        unsafe {
            (self.time)(runs as i32, ms.as_mut_ptr());
            (self.time)(runs as i32, ms.as_mut_ptr());
        }
        median(&mut ms.iter().map(|&m| m as f64).collect::<Vec<_>>())
    }
}

/// The median milliseconds of `runs` runs of `run` on `gpu`, timed by
/// events (`Gpu::time_queued`), after as many warm-ups: our side of a round
/// of [`paired`].
pub fn median_ms(gpu: &cg_launcher::device::Gpu, runs: usize, run: &mut dyn FnMut() -> cg_launcher::error::Result<()>) -> cg_launcher::error::Result<f64> {
    for _ in 0..runs {
        run()?;
    }
    let mut t = gpu.time_queued(runs, &mut |_| run())?;
    Ok(median(&mut t))
}

/// Builds `source` ([`build`]) and loads its four functions.
///
/// # Safety
/// `source` exports `cub_setup` with the signature `S`, `cub_result` with
/// `R`, and `cub_time` and `cub_teardown` as [`Baseline`] types them: a
/// function called through a wrong signature is undefined behaviour.
pub unsafe fn baseline<S: Copy, R: Copy>(name: &str, source: &str) -> Result<Baseline<S, R>, String> {
    let lib = build(name, source)?;
    // SAFETY: the caller's contract names each signature.
    unsafe {
        let setup = *lib.get::<S>(b"cub_setup").map_err(|e| e.to_string())?;
        let time = *lib.get(b"cub_time").map_err(|e| e.to_string())?;
        let result = *lib.get::<R>(b"cub_result").map_err(|e| e.to_string())?;
        let teardown = *lib.get(b"cub_teardown").map_err(|e| e.to_string())?;
        Ok(Baseline { _lib: lib, setup, time, result, teardown })
    }
}

/// Builds `source` (CUDA C++) with nvcc into a shared library named
/// `lib{name}.so` in a folder of this process's own, and loads it.
pub fn build(name: &str, source: &str) -> Result<libloading::Library, String> {
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let (cu, so) = (dir.join(format!("{name}.cu")), dir.join(format!("lib{name}.so")));
    std::fs::write(&cu, source).map_err(|e| e.to_string())?;
    let out = Command::new("nvcc")
        .args(["-O3", "-std=c++17", "-arch=native", "-shared", "-Xcompiler", "-fPIC", "-o"])
        .arg(&so)
        .arg(&cu)
        .output()
        .map_err(|e| format!("nvcc: {e} (is it on PATH?)"))?;
    if !out.status.success() {
        return Err(format!("nvcc failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    // SAFETY: loading runs the library's initializers: a CUDA runtime
    // library's, built just now from our own source.
    unsafe { libloading::Library::new(&so) }.map_err(|e| e.to_string())
}

/// The median of `v` (sorted in place).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 { v[m] } else { (v[m - 1] + v[m]) / 2.0 }
}

/// The median of `v` and a distribution-free 95% interval for it (the
/// order statistics either side, as for a sign test).
pub fn median_interval(v: &mut [f64]) -> (f64, f64, f64) {
    let m = median(v);
    let n = v.len();
    let half = (1.96 * (n as f64).sqrt() / 2.0).ceil() as usize;
    let lo = (n / 2).saturating_sub(half);
    let hi = (n.div_ceil(2) + half).min(n - 1);
    (m, v[lo], v[hi])
}

/// Paired rounds: each times ours and the baseline's, in alternating order.
#[derive(Clone, Copy, Debug)]
pub struct Paired {
    /// Our median time, milliseconds.
    pub ours_ms: f64,
    /// The baseline's median time, milliseconds.
    pub theirs_ms: f64,
    /// The median of the rounds' ratios ours / theirs, and its 95% interval.
    pub ratio: (f64, f64, f64),
}

impl Paired {
    /// `met` where the interval is at most `target`, `MISSED` where it is
    /// wholly above it, and inside the noise otherwise; and whether it was missed.
    pub fn verdict(&self, target: f64) -> (String, bool) {
        let (_, lo, hi) = self.ratio;
        if hi <= target {
            (format!("met (<= {target})"), false)
        } else if lo > target {
            (format!("MISSED (> {target})"), true)
        } else {
            (format!("inside the noise of {target}"), false)
        }
    }
}

/// `rounds` rounds, each timing `ours` and `theirs` (each returning the
/// median milliseconds of its own batch of runs), one after the other,
/// which goes first alternating.
pub fn paired<E>(rounds: usize, ours: &mut dyn FnMut() -> Result<f64, E>, theirs: &mut dyn FnMut() -> Result<f64, E>) -> Result<Paired, E> {
    let (mut o, mut t, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let (a, b) = if round % 2 == 0 {
            let a = ours()?;
            (a, theirs()?)
        } else {
            let b = theirs()?;
            (ours()?, b)
        };
        o.push(a);
        t.push(b);
        ratios.push(a / b);
    }
    Ok(Paired { ours_ms: median(&mut o), theirs_ms: median(&mut t), ratio: median_interval(&mut ratios) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_intervals_and_verdicts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        let mut v: Vec<f64> = (1..=15).map(f64::from).collect();
        let (m, lo, hi) = median_interval(&mut v);
        assert!(m == 8.0 && lo < m && hi > m, "{lo} {m} {hi}");
        let mut calls = 0;
        let p = paired::<()>(
            4,
            &mut || {
                calls += 1;
                Ok(2.0)
            },
            &mut || Ok(1.0),
        )
        .unwrap();
        assert_eq!((calls, p.ours_ms, p.theirs_ms, p.ratio.0), (4, 2.0, 1.0, 2.0));
        assert!(p.verdict(2.5).0.starts_with("met") && p.verdict(1.5).0.starts_with("MISSED"));
    }
}
