//! The grid-synchronized scan against CUB's `DeviceScan::InclusiveSum`, on
//! the same GPU in the same run: `cub/cub_scan.cu` built by nvcc into a
//! shared library and loaded, each round timing ours and CUB's one after
//! the other (which goes first alternates), each by CUDA events around
//! back-to-back runs; the ratio is taken round by round.

use crate::check;
use cg_launcher::device::{Buffer, Gpu};
use cg_launcher::error::Result;
use std::process::Command;

const SOURCE: &str = include_str!("../cub/cub_scan.cu");
/// Sizes timed: 2^20 to 2^26.
const SIZES: [usize; 4] = [1 << 20, 1 << 22, 1 << 24, 1 << 26];
/// Runs per measurement, after as many warm-ups.
const RUNS: usize = 20;
/// The target from 2^24 up: at most 1.6 times CUB's time.
const TARGET: f64 = 1.6;

/// The scan of x into y with scratch for the block totals; the blocks it launched.
type Scan<'a> = dyn FnMut(&Buffer<f32>, &mut Buffer<f32>, &mut Buffer<f32>) -> Result<u32> + 'a;

struct Cub {
    _lib: libloading::Library,
    setup: unsafe extern "C" fn(*const f32, i32) -> i32,
    time: unsafe extern "C" fn(i32, *mut f32) -> i32,
    result: unsafe extern "C" fn(*mut f32) -> i32,
    teardown: unsafe extern "C" fn(),
}

fn build() -> std::result::Result<Cub, String> {
    let dir = std::env::temp_dir().join(format!("scan-cub-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let (cu, so) = (dir.join("cub_scan.cu"), dir.join("libcub_scan.so"));
    std::fs::write(&cu, SOURCE).map_err(|e| e.to_string())?;
    let out = Command::new("nvcc")
        .args(["-O3", "-std=c++17", "-arch=native", "-shared", "-Xcompiler", "-fPIC", "-o"])
        .arg(&so)
        .arg(&cu)
        .output()
        .map_err(|e| format!("nvcc: {e} (is it on PATH?)"))?;
    if !out.status.success() {
        return Err(format!("nvcc failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    // SAFETY: the library is ours, built just now; its symbols have these signatures.
    unsafe {
        let lib = libloading::Library::new(&so).map_err(|e| e.to_string())?;
        let setup = *lib.get(b"cub_setup").map_err(|e| e.to_string())?;
        let time = *lib.get(b"cub_time").map_err(|e| e.to_string())?;
        let result = *lib.get(b"cub_result").map_err(|e| e.to_string())?;
        let teardown = *lib.get(b"cub_teardown").map_err(|e| e.to_string())?;
        Ok(Cub { _lib: lib, setup, time, result, teardown })
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 { v[m] } else { (v[m - 1] + v[m]) / 2.0 }
}

/// The median of `v` and a distribution-free 95% interval for it (the
/// order statistics either side, as for a sign test).
fn median_interval(v: &mut [f64]) -> (f64, f64, f64) {
    let m = median(v);
    let n = v.len();
    let half = (1.96 * (n as f64).sqrt() / 2.0).ceil() as usize;
    let lo = (n / 2).saturating_sub(half);
    let hi = (n.div_ceil(2) + half).min(n - 1);
    (m, v[lo], v[hi])
}

/// Times both at each size; prints the table; whether CUB's own output was
/// right and every size from 2^24 met the target.
pub fn bench(gpu: &Gpu, rounds: usize, scan: &mut Scan<'_>) -> Result<bool> {
    let cub = match build() {
        Ok(c) => c,
        Err(why) => {
            eprintln!("error: CUB's scan could not be built: {why}");
            return Ok(false);
        }
    };
    println!();
    println!(
        "Against CUB's DeviceScan::InclusiveSum on {}: {rounds} rounds, each timing both ({RUNS} runs each, by events, after as many warm-ups), in alternating order",
        gpu.info.name
    );
    println!("{:>10}  {:>10}  {:>10}  {:>22}  {:>9}  {:>8}  target", "n", "ours us", "CUB us", "ours/CUB [95% CI]", "ours GB/s", "CUB GB/s");
    let mut ok = true;
    for n in SIZES {
        let xs = check::fill(n);
        let x = gpu.upload(&xs)?;
        let mut y = gpu.zeros::<f32>(n)?;
        let mut totals = gpu.zeros::<f32>(4096)?;
        // SAFETY: xs holds n floats.
        if unsafe { (cub.setup)(xs.as_ptr(), n as i32) } != 0 {
            eprintln!("error: CUB's setup failed at n = {n}");
            return Ok(false);
        }
        // The first run also says how many blocks every run launches.
        let blocks = scan(&x, &mut y, &mut totals)? as usize;
        let (mut ours, mut theirs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        let mut cub_ms = vec![0f32; RUNS];
        for round in 0..rounds {
            let mut time_ours = |ours: &mut Vec<f64>| -> Result<f64> {
                for _ in 0..RUNS {
                    scan(&x, &mut y, &mut totals)?;
                }
                let mut t = gpu.time_queued(RUNS, &mut |_| scan(&x, &mut y, &mut totals).map(|_| ()))?;
                let m = median(&mut t);
                ours.push(m);
                Ok(m)
            };
            let mut time_cub = |theirs: &mut Vec<f64>| -> f64 {
                // SAFETY: cub_ms holds RUNS floats; the library was set up for n.
                unsafe { (cub.time)(RUNS as i32, cub_ms.as_mut_ptr()) };
                // SAFETY: as above.
                unsafe { (cub.time)(RUNS as i32, cub_ms.as_mut_ptr()) };
                let mut t: Vec<f64> = cub_ms.iter().map(|&m| m as f64).collect();
                let m = median(&mut t);
                theirs.push(m);
                m
            };
            let (a, b) = if round % 2 == 0 {
                let a = time_ours(&mut ours)?;
                (a, time_cub(&mut theirs))
            } else {
                let b = time_cub(&mut theirs);
                (time_ours(&mut ours)?, b)
            };
            ratios.push(a / b);
        }
        let ys = gpu.read(&y)?;
        let mut cub_ys = vec![0f32; n];
        // SAFETY: cub_ys holds n floats.
        unsafe { (cub.result)(cub_ys.as_mut_ptr()) };
        // SAFETY: set up above.
        unsafe { (cub.teardown)() };
        let threads = crate::THREADS as usize;
        let ours_right = check::against_reference(&xs, &ys, blocks, threads).pass;
        let cub_right = check::against_reference(&xs, &cub_ys, blocks, threads).pass;
        let (r, lo, hi) = median_interval(&mut ratios);
        let (o, c) = (median(&mut ours), median(&mut theirs));
        let bytes = 4.0 * n as f64;
        let verdict = if n < 1 << 24 {
            "-".to_string()
        } else if hi <= TARGET {
            format!("met (<= {TARGET})")
        } else if lo > TARGET {
            ok = false;
            format!("MISSED (> {TARGET})")
        } else {
            format!("inside the noise of {TARGET}")
        };
        println!(
            "{n:>10}  {:>10.1}  {:>10.1}  {:>8.3} [{:.3}, {:.3}]  {:>9.0}  {:>8.0}  {verdict}{}",
            o * 1e3,
            c * 1e3,
            r,
            lo,
            hi,
            3.0 * bytes / (o * 1e-3) / 1e9,
            2.0 * bytes / (c * 1e-3) / 1e9,
            match (ours_right, cub_right) {
                (true, true) => "",
                (false, _) => "  (ours WRONG)",
                (_, false) => "  (CUB's output outside the bound)",
            }
        );
        ok &= ours_right;
    }
    println!("GB/s counts the bytes each must move: ours 3n floats (x twice, y once), CUB's 2n (x once, y once).");
    Ok(ok)
}
