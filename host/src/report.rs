//! Printing results: the lesson's text layout, or JSON for scripts.

use crate::lesson::LessonReport;
use serde::Serialize;
use std::fmt::Write;

/// A named check and whether it passed.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    pub name: String,
    pub pass: bool,
    pub detail: String,
}

impl Check {
    pub fn new(name: &str, pass: bool, detail: String) -> Check {
        Check { name: name.to_string(), pass, detail }
    }
}

/// Any report as one JSON object.
pub fn json<T: Serialize>(report: &T) -> String {
    serde_json::to_string_pretty(report).expect("reports hold only plain data")
}

/// Prints the checks: "all checks passed", or each failure by name.
pub fn checks(out: &mut String, checks: &[Check]) {
    let failed: Vec<_> = checks.iter().filter(|c| !c.pass).collect();
    if failed.is_empty() {
        out.push_str("all checks passed\n");
    }
    for c in failed {
        let _ = writeln!(out, "FAILED: {} ({})", c.name, c.detail);
    }
}

fn ms(stats: &Option<crate::timing::Stats>) -> String {
    match stats {
        Some(s) => format!("{:.4} ms  (min {:.4}, max {:.4}, median {:.4})", s.mean_ms, s.min_ms, s.max_ms, s.median_ms),
        None => "not run (n = 0: nothing to launch)".to_string(),
    }
}

/// The lesson's results in the lesson's order.
pub fn lesson(r: &LessonReport) -> String {
    let mut o = String::new();
    let d = &r.device;
    if d.emulated {
        let _ = writeln!(o, "GPU: {}", d.name);
        o.push_str("  the lesson's kernels, unchanged, run by gpu::emu on the CPU; times below are CPU wall time, not GPU timings\n");
    } else {
        let _ = writeln!(o, "GPU: {} (compute capability {}.{}), {} SMs, driver supports {}", d.name, d.compute_capability.0, d.compute_capability.1, d.sms, d.driver_version);
    }
    let _ = writeln!(o, "cudaDevAttrCooperativeLaunch: {}", d.cooperative_launch as u8);
    let _ = writeln!(o, "n = {} floats, {:.1} MiB, {} threads/block", r.n, r.mib, r.threads);
    let _ = writeln!(o, "input: {}", r.fill);

    o.push_str("\nHow big a cooperative grid fits\n");
    for c in [&r.reduce_capacity, &r.probe_capacity] {
        let _ = writeln!(o, "  {:<26} {} blocks/SM x {} SMs = {}   (limited by {})", c.kernel, c.blocks_per_sm, c.sms, c.blocks, c.limited_by);
    }
    let _ = writeln!(o, "  an ordinary launch sized to n would use {} blocks", r.ordinary_blocks);
    if r.grid > 0 {
        let _ = writeln!(o, "  both sums below run {} blocks, the same grid", r.grid);
    } else {
        o.push_str("  n = 0: the grid is 0 blocks, so nothing is launched\n");
    }

    o.push_str("\nWhat this_grid() reports (probe_cooperative, no barrier)\n");
    for p in &r.probes {
        let what = match &p.result {
            Ok(probe) => format!("is_valid={}  blocks={}", probe.is_valid as u8, probe.num_blocks),
            Err(name) => name.clone(),
        };
        let _ = writeln!(o, "  {:<18} {:>6} blocks   {}", p.launch, p.blocks, what);
    }
    if let (Some(Ok(first)), Some(Ok(after))) = (r.probes.first().map(|p| &p.result), r.probes.last().map(|p| &p.result)) {
        if first.is_valid != after.is_valid {
            o.push_str("  the same ordinary launch reads differently once the context has made a cooperative launch:\n  is_valid() cannot tell you how you were launched, so only the launch API may decide\n");
        }
    }

    let _ = writeln!(o, "\nSum of {} floats", r.n);
    let _ = writeln!(o, "  CPU reference, double     {:.6}", r.reference);
    for (name, sum) in [("two launches", &r.two_launch), ("one cooperative launch", &r.cooperative)] {
        match sum {
            Some(s) => {
                let _ = writeln!(o, "  {:<25} {:.6}   error {:.2e} (bound {:.2e})", name, s.value, s.error, s.bound);
            }
            None => {
                let _ = writeln!(o, "  {:<25} not launched (n = 0)", name);
            }
        }
    }
    let _ = writeln!(o, "  bound: {}", r.bound_rule);

    o.push_str("\nWhat coalesced_threads() returns\n  warp  lane  group size  rank in group\n");
    for c in &r.coalesced {
        let _ = writeln!(o, "  {:>4}  {:>4}  {:>10}  {:>13}", c.warp, c.lane, c.group_size, c.rank);
    }

    let runs = r.two_launch_time.or(r.cooperative_time).map_or(0, |s| s.runs);
    let clock = if d.emulated { "CPU wall time of the emulator" } else { "CUDA events" };
    let _ = writeln!(o, "\nTime, mean of {} runs after {} warm-ups, {clock}, copies excluded", runs, r.warmups);
    let _ = writeln!(o, "  two launches              {}", ms(&r.two_launch_time));
    let _ = writeln!(o, "  one cooperative launch    {}", ms(&r.cooperative_time));
    o.push('\n');
    checks(&mut o, &r.checks);
    o
}
