//! The grid-synchronized scan against CUB's `DeviceScan::InclusiveSum`, on
//! the same GPU in the same run: `cub/cub_scan.cu` built by nvcc into a
//! shared library and loaded, each round timing ours and CUB's one after
//! the other (which goes first alternates), each by CUDA events around
//! back-to-back runs; the ratio is taken round by round.

use crate::check;
use cg_launcher::device::{Buffer, Gpu};
use cg_launcher::error::Result;

/// Sizes timed: 2^20 to 2^26.
const SIZES: [usize; 4] = [1 << 20, 1 << 22, 1 << 24, 1 << 26];
/// Runs per measurement, after as many warm-ups.
const RUNS: usize = 20;
/// The target from 2^24 up: at most 1.6 times CUB's time.
const TARGET: f64 = 1.6;

/// The scan of x into y with scratch for the block totals; the blocks it launched.
type Scan<'a> = dyn FnMut(&Buffer<f32>, &mut Buffer<f32>, &mut Buffer<f32>) -> Result<u32> + 'a;

/// CUB's side: `cub/cub_scan.cu`, built and loaded.
type Cub = example_bench::Baseline<unsafe extern "C" fn(*const f32, i32) -> i32, unsafe extern "C" fn(*mut f32) -> i32>;

fn build() -> std::result::Result<Cub, String> {
    // SAFETY: cub/cub_scan.cu exports these signatures.
    unsafe { example_bench::baseline("cub_scan", include_str!("../cub/cub_scan.cu")) }
}

/// Times both at each size; prints the table; whether CUB's own output was
/// right and every size from 2^24 met the target.
pub fn bench(gpu: &Gpu, rounds: usize, once: bool, scan: &mut Scan<'_>) -> Result<bool> {
    let cub = match build() {
        Ok(c) => c,
        Err(why) => {
            eprintln!("error: CUB's scan could not be built: {why}");
            return Ok(false);
        }
    };
    println!();
    println!(
        "{} against CUB's DeviceScan::InclusiveSum on {}: {rounds} rounds, each timing both ({RUNS} runs each, by events, after as many warm-ups), in alternating order",
        if once { "inclusive_scan_once" } else { "inclusive_scan" },
        gpu.info.name
    );
    println!("{:>10}  {:>10}  {:>10}  {:>22}  {:>9}  {:>8}  target", "n", "ours us", "CUB us", "ours/CUB [95% CI]", "ours GB/s", "CUB GB/s");
    let mut ok = true;
    for n in SIZES {
        let xs = check::fill(n);
        let x = gpu.upload(&xs)?;
        let mut y = gpu.zeros::<f32>(n)?;
        let mut totals = gpu.zeros::<f32>(2 * 4096)?;
        // SAFETY: xs holds n floats.
        if unsafe { (cub.setup)(xs.as_ptr(), n as i32) } != 0 {
            eprintln!("error: CUB's setup failed at n = {n}");
            return Ok(false);
        }
        // The first run also says how many blocks every run launches.
        let blocks = scan(&x, &mut y, &mut totals)? as usize;
        let paired = example_bench::paired(
            rounds,
            &mut || example_bench::median_ms(gpu, RUNS, &mut || scan(&x, &mut y, &mut totals).map(|_| ())),
            // SAFETY: the library was set up for n.
            &mut || Ok(unsafe { cub.median_ms(RUNS) }),
        )?;
        let ys = gpu.read(&y)?;
        let mut cub_ys = vec![0f32; n];
        // SAFETY: cub_ys holds n floats.
        unsafe { (cub.result)(cub_ys.as_mut_ptr()) };
        // SAFETY: set up above.
        unsafe { (cub.teardown)() };
        let threads = crate::THREADS as usize;
        let depth = if once { check::additions_once } else { check::additions };
        let ours_right = check::within(&xs, &ys, depth(n, blocks, threads)).pass;
        let cub_right = check::against_reference(&xs, &cub_ys, blocks, threads).pass;
        let (r, lo, hi) = paired.ratio;
        let (o, c) = (paired.ours_ms, paired.theirs_ms);
        let bytes = 4.0 * n as f64;
        let (verdict, missed) = if n < 1 << 24 { ("-".to_string(), false) } else { paired.verdict(TARGET) };
        ok &= !missed;
        println!(
            "{n:>10}  {:>10.1}  {:>10.1}  {:>8.3} [{:.3}, {:.3}]  {:>9.0}  {:>8.0}  {verdict}{}",
            o * 1e3,
            c * 1e3,
            r,
            lo,
            hi,
            if once { 2.0 } else { 3.0 } * bytes / (o * 1e-3) / 1e9,
            2.0 * bytes / (c * 1e-3) / 1e9,
            match (ours_right, cub_right) {
                (true, true) => "",
                (false, _) => "  (ours WRONG)",
                (_, false) => "  (CUB's output outside the bound)",
            }
        );
        ok &= ours_right;
    }
    println!(
        "GB/s counts the bytes each must move: ours {}, CUB's 2n (x once, y once).",
        if once { "2n floats (x once, y once)" } else { "3n floats (x twice, y once)" }
    );
    Ok(ok)
}
