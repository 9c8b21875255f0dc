//! The lesson, step by step, on the GPU: every value in the report is read
//! from the device or computed from what was read.

use crate::device::{DeviceInfo, Gpu};
use crate::error::{Error, Result};
use crate::launch::{CoalescedRecord, DeviceInput, Probe, device_bytes};
use crate::reference::{self, SumCheck};
use crate::report::Check;
use crate::sizing::{Limits, ordinary_blocks};
use crate::sums::Sums;
use crate::timing::{Stats, time_runs};
use gpu::kernels::{PROBE_COOPERATIVE, REDUCE_COOPERATIVE_GRID};
use serde::Serialize;

/// What the user asked for.
#[derive(Clone, Copy, Debug)]
pub struct LessonConfig {
    pub n: usize,
    pub threads: u32,
    pub runs: usize,
    pub warmups: usize,
}

/// A kernel's cooperative capacity as the lesson prints it.
#[derive(Clone, Debug, Serialize)]
pub struct Capacity {
    pub kernel: &'static str,
    pub blocks_per_sm: u32,
    pub sms: u32,
    pub blocks: u64,
    pub limited_by: String,
}

impl Capacity {
    fn of(kernel: &'static str, limits: &Limits) -> Capacity {
        Capacity { kernel, blocks_per_sm: limits.blocks_per_sm, sms: limits.sms, blocks: limits.capacity(), limited_by: limits.explain() }
    }
}

/// A probe launch: what `this_grid()` reported, or the launch error by name.
#[derive(Clone, Debug, Serialize)]
pub struct ProbeResult {
    pub launch: String,
    pub blocks: u64,
    pub result: Result<Probe, String>,
}

/// The whole lesson's results.
#[derive(Clone, Debug, Serialize)]
pub struct LessonReport {
    pub device: DeviceInfo,
    pub n: usize,
    pub mib: f64,
    pub threads: u32,
    pub fill: &'static str,
    pub reduce_capacity: Capacity,
    pub probe_capacity: Capacity,
    pub ordinary_blocks: u64,
    pub grid: u64,
    pub probes: Vec<ProbeResult>,
    pub reference: f64,
    pub bound_rule: &'static str,
    pub two_launch: Option<SumCheck>,
    pub cooperative: Option<SumCheck>,
    pub coalesced: Vec<CoalescedRecord>,
    pub warmups: usize,
    pub two_launch_time: Option<Stats>,
    pub cooperative_time: Option<Stats>,
    pub checks: Vec<Check>,
}

/// The rows the lesson's branch should produce when each warp's taking lanes
/// run converged: lanes 2, 4, 8 of warp 0 and 0..15 of warp 1, ranked in lane order.
pub fn expected_coalesced() -> Vec<CoalescedRecord> {
    let warp0 = [2, 4, 8].iter().enumerate().map(|(r, &lane)| CoalescedRecord { warp: 0, lane, group_size: 3, rank: r as u32 });
    let warp1 = (0..16).map(|lane| CoalescedRecord { warp: 1, lane, group_size: 16, rank: lane });
    warp0.chain(warp1).collect()
}

/// Runs every step of the lesson.
pub fn run(gpu: &Gpu, cfg: LessonConfig) -> Result<LessonReport> {
    let threads = cfg.threads;
    let mut checks = Vec::new();

    // How big a cooperative grid fits, asked separately for each kernel.
    let sums = Sums::load(gpu, threads)?;
    let probe_limits = gpu.kernel(&PROBE_COOPERATIVE)?.limits(threads)?;
    let n = cfg.n as u64;
    let grid = sums.grid(cfg.n);

    // What this_grid() reports. The ordinary probe runs first, on a context
    // that has made no cooperative launch yet.
    let probe_max = probe_limits.capacity();
    let probe = |launch: &str, blocks: u64, coop: bool| ProbeResult {
        launch: launch.to_string(),
        blocks,
        result: gpu.probe(blocks, threads, coop).map_err(|e| e.driver_name().unwrap_or_else(|| e.to_string())),
    };
    let probes = vec![
        probe("ordinary", probe_max, false),
        probe("cooperative", probe_max, true),
        probe("cooperative", probe_max + 1, true),
        probe("ordinary, after", probe_max, false),
    ];
    checks.push(Check::new(
        "cooperative probe at the maximum reads is_valid = 1 and every block",
        matches!(probes[1].result, Ok(Probe { is_valid: true, num_blocks }) if num_blocks as u64 == probe_max),
        format!("{:?}", probes[1].result),
    ));
    checks.push(Check::new(
        "cooperative probe one block over the maximum is refused as too large",
        matches!(&probes[2].result, Err(name) if name == "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"),
        format!("{:?}", probes[2].result),
    ));

    // The sums, on the same grid, each against the double reference. The
    // device check comes before filling the input on the host, so an input
    // too large for the GPU is refused before the host allocates it.
    gpu.ensure_free(device_bytes(n))?;
    let xs = reference::fill(cfg.n)?;
    let (reference, abs_sum) = reference::reference_sum(&xs);
    let input = DeviceInput::upload(gpu, &xs)?;
    drop(xs);
    let bound = reference::error_bound(reference::longest_chain(n, grid, threads), abs_sum);
    let mut scratch = sums.scratch(grid)?;
    let (two_launch, cooperative) = if grid > 0 {
        let two = sums.total_of(&mut scratch, |s| sums.two_launches(grid, &input, s))?;
        let one = sums.total_of(&mut scratch, |s| sums.one_cooperative_launch(grid, &input, s))?;
        (Some(reference::check(two, reference, bound)), Some(reference::check(one, reference, bound)))
    } else {
        (None, None)
    };
    for (name, sum) in [("two-launch sum is within the bound", two_launch), ("cooperative sum is within the bound", cooperative)] {
        if let Some(sum) = sum {
            checks.push(Check::new(name, sum.pass, format!("{} vs {:.6}, error {:.3e} <= {:.3e}", sum.value, sum.reference, sum.error, sum.bound)));
        }
    }

    // coalesced_threads().
    let coalesced = gpu.coalesced_demo()?;
    checks.push(Check::new(
        "coalesced_threads() groups the converged lanes: sizes 3 and 16, ranks in lane order",
        coalesced == expected_coalesced(),
        format!("{} rows", coalesced.len()),
    ));

    // Time, copies excluded.
    let (two_launch_time, cooperative_time) = if grid > 0 {
        (
            time_runs(gpu, cfg.warmups, cfg.runs, || sums.two_launches(grid, &input, &mut scratch))?,
            time_runs(gpu, cfg.warmups, cfg.runs, || sums.one_cooperative_launch(grid, &input, &mut scratch))?,
        )
    } else {
        (None, None)
    };

    Ok(LessonReport {
        device: gpu.info.clone(),
        n: cfg.n,
        mib: cfg.n as f64 * 4.0 / (1024.0 * 1024.0),
        threads,
        fill: reference::FILL_RULE,
        reduce_capacity: Capacity::of(REDUCE_COOPERATIVE_GRID.name, &sums.limits),
        probe_capacity: Capacity::of(PROBE_COOPERATIVE.name, &probe_limits),
        ordinary_blocks: ordinary_blocks(n, threads),
        grid,
        probes,
        reference,
        bound_rule: reference::BOUND_RULE,
        two_launch,
        cooperative,
        coalesced,
        warmups: cfg.warmups,
        two_launch_time,
        cooperative_time,
        checks,
    })
}

impl LessonReport {
    /// Ok when every check passed, else the failed checks by name.
    pub fn verdict(&self) -> Result<()> {
        let failed: Vec<String> = self.checks.iter().filter(|c| !c.pass).map(|c| c.name.clone()).collect();
        if failed.is_empty() { Ok(()) } else { Err(Error::ChecksFailed(failed)) }
    }
}
