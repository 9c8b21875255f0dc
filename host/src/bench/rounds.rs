//! The ratio targets, judged on paired rounds ([`super::paired`]): after the
//! sweep, every pair of variants a target compares is timed again in
//! alternating rounds, each variant with its own scratch buffers and every
//! total checked. In-process pairs alternate within a round (A B, then B A
//! in the next); the C++ program, a process of its own, runs once per round,
//! before the Rust side in odd rounds and after it in even ones.

use super::cpp;
use super::paired::{PairedRatio, a_first};
use super::peer::Oxide;
use super::{BenchConfig, Case, Variant};
use crate::device::{Buffer, Gpu};
use crate::error::Result;
use crate::launch::{DeviceInput, Input};
use crate::progress::Progress;
use crate::reference::Reference;
use crate::sums::{Path, Scratch, Sums};
use crate::timing::{Repeats, time_path, time_runs};
use std::collections::BTreeMap;

/// One size of the sweep, kept for the rounds: its input and the scratch
/// each side writes.
pub(crate) struct Kept {
    pub n: u64,
    pub xs: Vec<f32>,
    pub all: DeviceInput,
    pub s: Scratch,
    pub cpp_s: Option<Scratch>,
    /// The copy's destination, at the sizes a target compares with the copy.
    pub copy_dst: Option<Buffer<f32>>,
}

/// The sizes at which the fast sum is held to the copy's bandwidth.
pub const COPY_TARGET_SIZES: [u64; 2] = [1 << 26, 1 << 28];

/// The fast sum's floor, as a fraction of the copy's read + write bandwidth.
pub const OF_COPY: f64 = 0.97;

/// What the rounds can time.
pub(crate) struct Sides<'a> {
    pub sums: &'a Sums<'a>,
    pub nvcc: Option<&'a Sums<'a>>,
    pub oxide: Option<&'a Oxide<'a>>,
    pub cpp: Option<&'a cpp::Build>,
}

/// Each variant's per-round median times (ms) at each n, and whether every total was right.
#[derive(Default)]
struct Times {
    ms: BTreeMap<(Variant, u64), Vec<f64>>,
    ok: BTreeMap<(Variant, u64), bool>,
}

impl Times {
    fn add(&mut self, variant: Variant, n: u64, ms: f64, ok: bool) {
        self.ms.entry((variant, n)).or_default().push(ms);
        *self.ok.entry((variant, n)).or_insert(true) &= ok;
    }

    /// Round-by-round ratios of `a` over `b` at `n` (`b` scaled by `b_scale`).
    fn ratios(&self, a: Variant, b: Variant, n: u64, b_scale: f64) -> Option<Vec<f64>> {
        let (x, y) = (self.ms.get(&(a, n))?, self.ms.get(&(b, n))?);
        (x.len() == y.len() && !x.is_empty()).then(|| x.iter().zip(y).map(|(x, y)| x / (y * b_scale)).collect())
    }

    fn all_ok(&self, a: Variant, b: Variant, n: u64) -> bool {
        self.ok.get(&(a, n)).copied().unwrap_or(true) && self.ok.get(&(b, n)).copied().unwrap_or(true)
    }
}

/// The in-process variants timed at `n`, in the order of an A-first round.
fn in_process(sides: &Sides, n: u64) -> Vec<Variant> {
    let mut v = Vec::new();
    for (rust, nvcc, oxide) in [
        (Variant::RustTwoLaunches, Variant::NvccKernelsTwoLaunches, Variant::OxideKernelsTwoLaunches),
        (Variant::RustCooperative, Variant::NvccKernelsCooperative, Variant::OxideKernelsCooperative),
    ] {
        v.push(rust);
        if sides.nvcc.is_some() {
            v.push(nvcc);
        }
        if sides.oxide.is_some() {
            v.push(oxide);
        }
    }
    if sides.cpp.is_some() {
        v.extend([Variant::RustTwoLaunchesGraph, Variant::RustCooperativeGraph]);
    }
    v.push(Variant::RustFast);
    if COPY_TARGET_SIZES.contains(&n) {
        v.push(Variant::Copy);
    }
    v
}

/// Times one variant at one size: its median over `repeats`, and whether its totals were right.
fn measure(gpu: &Gpu, sides: &Sides, variant: Variant, k: &mut Kept, repeats: Repeats) -> Result<(f64, bool)> {
    let n = k.n as usize;
    let reference = Reference::new(&k.xs);
    let inputs = k.all.windows(n);
    let rust = |path: Path| (sides.sums, path);
    let (sums, path) = match variant {
        Variant::RustTwoLaunches => rust(Path::TwoLaunches),
        Variant::RustCooperative => rust(Path::Cooperative),
        Variant::RustTwoLaunchesGraph => rust(Path::TwoLaunchesGraph),
        Variant::RustCooperativeGraph => rust(Path::CooperativeGraph),
        Variant::RustFast => rust(Path::Fast),
        Variant::NvccKernelsTwoLaunches | Variant::NvccKernelsCooperative => {
            let nvcc = sides.nvcc.expect("timed only with nvcc's kernels loaded");
            let path = if variant == Variant::NvccKernelsTwoLaunches { Path::TwoLaunches } else { Path::Cooperative };
            let s = k.cpp_s.as_mut().expect("scratch for nvcc's kernels");
            let t = time_path(nvcc, path, nvcc.grid(n), &inputs, s, &reference, repeats)?;
            return Ok((t.timing.gpu_queued.expect("a GPU times queued runs").median_ms, t.wrong_totals == 0));
        }
        Variant::OxideKernelsTwoLaunches | Variant::OxideKernelsCooperative => {
            let oxide = sides.oxide.expect("timed only with cuda-oxide's kernels loaded");
            let path = if variant == Variant::OxideKernelsTwoLaunches { Path::TwoLaunches } else { Path::Cooperative };
            let (t, ok) = oxide.time_one(sides.sums, path, repeats, &inputs, &mut k.s, &reference)?;
            return Ok((t.gpu_queued.expect("a GPU times queued runs").median_ms, ok));
        }
        Variant::Copy => {
            let dst = k.copy_dst.as_mut().expect("a copy destination at the copy's sizes");
            let t = time_runs(gpu, repeats, &mut |j| Ok(gpu.copy(&inputs[j % inputs.len()].view(), dst)?))?;
            return Ok((t.gpu_queued.expect("a GPU times queued runs").median_ms, true));
        }
        other => unreachable!("{other:?} is timed in the C++ program"),
    };
    let t = time_path(sums, path, sums.grid_for(path, n), &inputs, &mut k.s, &reference, repeats)?;
    Ok((t.timing.gpu_queued.expect("a GPU times queued runs").median_ms, t.wrong_totals == 0))
}

/// Runs the C++ program once, on every size, and adds its times.
fn cpp_round(build: &cpp::Build, cfg: &BenchConfig, cases: &[Case], times: &mut Times) -> Result<(), String> {
    let round = BenchConfig { runs: cfg.round_runs, warmups: cfg.round_warmups, ..cfg.clone() };
    for p in cpp::run(build, &round, cases)? {
        times.add(p.variant, p.n, p.queued.median_ms, p.totals_ok.unwrap_or(true));
    }
    Ok(())
}

/// Every paired ratio the targets judge. `Err` inside: why the C++ side could not run.
pub(crate) fn run(
    gpu: &Gpu,
    cfg: &BenchConfig,
    sides: &Sides,
    kept: &mut [Kept],
    cases: &[Case],
    progress: &Progress,
) -> Result<(Vec<PairedRatio>, Option<String>)> {
    let repeats = cfg.round_repeats();
    let mut times = Times::default();
    let mut cpp_failed = None;
    let bar = progress.bar(cfg.rounds as u64, "paired rounds");
    for round in 0..cfg.rounds {
        bar.advance(format!("round {}", round + 1));
        let a_leads = a_first(round);
        let cpp = |times: &mut Times, failed: &mut Option<String>| {
            if let (Some(build), None) = (sides.cpp, failed.as_ref()) {
                *failed = cpp_round(build, cfg, cases, times).err();
            }
        };
        if !a_leads {
            cpp(&mut times, &mut cpp_failed);
        }
        for k in kept.iter_mut() {
            let mut order = in_process(sides, k.n);
            if !a_leads {
                order.reverse();
            }
            for variant in order {
                let (ms, ok) = measure(gpu, sides, variant, k, repeats)?;
                times.add(variant, k.n, ms, ok);
            }
        }
        if a_leads {
            cpp(&mut times, &mut cpp_failed);
        }
    }
    drop(bar);
    Ok((ratios(&times, kept.iter().map(|k| k.n)), cpp_failed))
}

/// The targets' paired ratios from the rounds' times.
fn ratios(times: &Times, sizes: impl Iterator<Item = u64> + Clone) -> Vec<PairedRatio> {
    let mut out = Vec::new();
    let mut pair = |name: &str, a: Variant, b: Variant, n: u64, target: f64, b_scale: f64| {
        if let Some(r) = times.ratios(a, b, n, b_scale) {
            let mut p = PairedRatio::new(name, a.label(), b.label(), n, target, r);
            p.totals_ok = times.all_ok(a, b, n);
            out.push(p);
        }
    };
    for (rust, cpp) in [
        (Variant::RustTwoLaunches, Variant::CppTwoLaunches),
        (Variant::RustCooperative, Variant::CppCooperative),
        (Variant::RustTwoLaunchesGraph, Variant::CppTwoLaunchesGraph),
        (Variant::RustCooperativeGraph, Variant::CppCooperativeGraph),
    ] {
        let name = format!("{} / {} <= 1.03 at every n", rust.label(), cpp.label());
        for n in sizes.clone() {
            pair(&name, rust, cpp, n, 1.03, 1.0);
        }
    }
    for (rust, other) in [
        (Variant::RustTwoLaunches, Variant::NvccKernelsTwoLaunches),
        (Variant::RustCooperative, Variant::NvccKernelsCooperative),
        (Variant::RustTwoLaunches, Variant::OxideKernelsTwoLaunches),
        (Variant::RustCooperative, Variant::OxideKernelsCooperative),
    ] {
        let name = format!("{} / {}, same launch path, <= 1.00 from 65,536 up and <= 1.02 below", rust.label(), other.label());
        for n in sizes.clone() {
            pair(&name, rust, other, n, if n >= 1 << 16 { 1.00 } else { 1.02 }, 1.0);
        }
    }
    for n in sizes.clone().filter(|n| (1 << 10..=1 << 28).contains(n)) {
        pair("fast sum / CUB <= 1.00 at every n from 2^10 to 2^28", Variant::RustFast, Variant::Cub, n, 1.00, 1.0);
    }
    // At least 0.97 of the copy's read + write bandwidth: the sum reads n
    // floats, the copy reads and writes them, so the sum's time against half
    // the copy's is at most 1 / 0.97.
    for n in COPY_TARGET_SIZES {
        pair(
            "fast sum >= 0.97 of the copy's read + write bandwidth (time / half the copy's <= 1/0.97)",
            Variant::RustFast,
            Variant::Copy,
            n,
            1.0 / OF_COPY,
            0.5,
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_pair_the_same_rounds_and_scale_the_copy() {
        let mut t = Times::default();
        for (a, b) in [(1.0, 2.0), (1.1, 2.0), (0.9, 2.0)] {
            t.add(Variant::RustFast, 1 << 26, a, true);
            t.add(Variant::Copy, 1 << 26, b, true);
        }
        let r = ratios(&t, [1u64 << 26].into_iter());
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].ratios, vec![1.0, 1.1, 0.9]);
        assert!((r[0].target - 1.0 / 0.97).abs() < 1e-12);
        assert_eq!(r[0].median, 1.0);
    }

    #[test]
    fn a_wrong_total_on_either_side_marks_the_ratio() {
        let mut t = Times::default();
        t.add(Variant::RustTwoLaunches, 1024, 1.0, true);
        t.add(Variant::NvccKernelsTwoLaunches, 1024, 1.0, false);
        let r = ratios(&t, [1024u64].into_iter());
        assert!(!r[0].totals_ok);
        assert_eq!(r[0].target, 1.02, "below 65,536 the kernels are held to 1.02");
    }
}
