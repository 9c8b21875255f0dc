//! The lesson, step by step, on the device: every value in the report is
//! read from the device or computed from what was read. Each section is
//! handed to the caller as soon as it is complete, so the output appears as
//! it is computed.

use crate::checks::{self, Check, Status};
use crate::device::{DeviceInfo, Gpu};
use crate::error::Result;
use crate::launch::prelude::*;
use crate::launch::{CoalescedRecord, DeviceInput, GraphProbe, Probe, device_bytes};
use crate::reference::{self, Reference};
use crate::sizing::{Limits, ordinary_blocks};
use crate::sums::{Path, Run, Sums};
use crate::timing::{Repeats, Timing, time_path};
use serde::Serialize;

/// What the user asked for.
#[derive(Clone, Copy, Debug)]
pub struct LessonConfig {
    pub n: usize,
    pub threads_per_block: u32,
    pub runs: usize,
    pub warmups: usize,
}

impl LessonConfig {
    /// The warm-ups and timed runs asked for.
    pub fn repeats(&self) -> Repeats {
        Repeats { warmups: self.warmups, runs: self.runs }
    }
}

/// A kernel's cooperative capacity as the lesson prints it.
#[derive(Clone, Debug, Serialize)]
pub struct Capacity {
    pub kernel: &'static str,
    pub blocks_per_sm: u32,
    pub sms: u32,
    pub blocks: u32,
    pub limited_by: String,
}

impl Capacity {
    pub(crate) fn of(kernel: &'static str, limits: &Limits) -> Capacity {
        Capacity { kernel, blocks_per_sm: limits.blocks_per_sm, sms: limits.sms, blocks: limits.capacity(), limited_by: limits.explain() }
    }

    /// `8 blocks/SM x 132 SMs = 1056`, as the lesson prints it.
    pub fn product(&self) -> String {
        format!("{} = {}", crate::text::per_sm_times_sms(self.blocks_per_sm, self.sms), self.blocks)
    }
}

/// Whether a probe launch ran or was refused.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Ran,
    Refused,
}

/// A probe launch: what `this_grid()` reported, or the launch's error.
#[derive(Clone, Debug, Serialize)]
pub struct ProbeResult {
    /// `ordinary`, `cooperative`, or `ordinary, after` (an ordinary launch after a cooperative one).
    pub launch: &'static str,
    pub blocks: u32,
    pub outcome: Outcome,
    pub is_valid: Option<bool>,
    pub num_blocks: Option<u32>,
    /// The driver's error name (`CUDA_ERROR_...`) when the launch failed.
    pub error: Option<String>,
    /// The driver call that refused it (`cuGraphInstantiate`, say), where known.
    pub refused_at: Option<&'static str>,
    /// For a launch from a graph: whether the graph's kernel node is
    /// cooperative, read back from the graph.
    pub cooperative_node: Option<bool>,
}

impl ProbeResult {
    fn of(launch: &'static str, blocks: u32, result: Result<Probe>) -> ProbeResult {
        match result {
            Ok(p) => ProbeResult {
                launch,
                blocks,
                outcome: Outcome::Ran,
                is_valid: Some(p.is_valid),
                num_blocks: Some(p.num_blocks),
                error: None,
                refused_at: None,
                cooperative_node: None,
            },
            Err(e) => ProbeResult {
                launch,
                blocks,
                outcome: Outcome::Refused,
                is_valid: None,
                num_blocks: None,
                error: Some(e.driver_name().unwrap_or_else(|| e.to_string())),
                refused_at: e.call(),
                cooperative_node: None,
            },
        }
    }

    fn of_graph(blocks: u32, result: Result<GraphProbe>) -> ProbeResult {
        let cooperative_node = result.as_ref().ok().map(|g| g.cooperative_nodes == [true]);
        let mut r = ProbeResult::of("cooperative, graph", blocks, result.map(|g| g.probe));
        r.cooperative_node = cooperative_node;
        r
    }
}

/// One path's timings, and whether every timed run's total was right.
#[derive(Clone, Debug, Serialize)]
pub struct PathTiming {
    pub path: Path,
    pub timing: Timing,
    /// Timed and warm-up runs whose total was outside the bound.
    pub wrong_totals: usize,
}

/// The section of the lesson just completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    Device,
    Capacity,
    Probes,
    Sums,
    Coalesced,
    Timing,
    Clusters,
    Checks,
}

/// The whole lesson's results (`--json` prints this; README documents it).
#[derive(Clone, Debug, Serialize)]
pub struct LessonReport {
    pub status: Status,
    pub device: DeviceInfo,
    pub n: usize,
    pub mib: f64,
    pub threads_per_block: u32,
    pub tile: u32,
    pub fill: &'static str,
    pub capacity: Vec<Capacity>,
    pub ordinary_blocks: u64,
    /// The grid both sums run; 0 when n = 0 (nothing is launched).
    pub grid: u32,
    pub probes: Vec<ProbeResult>,
    #[serde(serialize_with = "crate::json::float")]
    pub reference: f64,
    pub bound_rule: &'static str,
    pub sums: Vec<Run>,
    pub coalesced: Vec<CoalescedRecord>,
    pub warmups: usize,
    pub runs: usize,
    pub timing: Vec<PathTiming>,
    /// On a GPU: what one `grid.sync()` cost on the sums' grid, against one
    /// more kernel launch and one more graph node (null on the emulator).
    pub barrier: Option<crate::timing::BarrierCost>,
    /// The level between block and grid: thread-block clusters (on compute
    /// capability 9.0 and the emulated H200; elsewhere, why not).
    pub clusters: Option<crate::clusters::ClusterSection>,
    pub checks: Vec<Check>,
}

/// The rows the lesson's branch should produce when each warp's taking lanes
/// run converged: lanes 2, 4, 8 of warp 0 and 0..15 of warp 1, ranked in lane order.
pub fn expected_coalesced() -> Vec<CoalescedRecord> {
    let warp0 = [2, 4, 8].iter().enumerate().map(|(r, &lane)| CoalescedRecord { warp: 0, lane, group_size: 3, rank: r as u32 });
    let warp1 = (0..16).map(|lane| CoalescedRecord { warp: 1, lane, group_size: 16, rank: lane });
    warp0.chain(warp1).collect()
}

/// The lesson's two paths, and the same two captured once as CUDA graphs and replayed.
pub const PATHS: [Path; 4] = [Path::TwoLaunches, Path::Cooperative, Path::TwoLaunchesGraph, Path::CooperativeGraph];

/// Runs every step of the lesson; `section` sees the report after each step.
pub fn run(gpu: &Gpu, cfg: LessonConfig, section: &mut dyn FnMut(&LessonReport, Section)) -> Result<LessonReport> {
    run_with(gpu, cfg, &Sums::load(gpu, cfg.threads_per_block)?, section)
}

/// [`run`] with the sum kernels already loaded (another tile, say).
pub fn run_with(gpu: &Gpu, cfg: LessonConfig, sums: &Sums, section: &mut dyn FnMut(&LessonReport, Section)) -> Result<LessonReport> {
    let tpb = cfg.threads_per_block;
    let n = cfg.n;
    // An input too large to count, or to hold on the device and on the host
    // (where the emulated device's memory is too), is refused before
    // anything is printed or allocated.
    gpu.ensure_free(device_bytes(n)?)?;
    let on_host = reference::float_bytes(n)? + if gpu.info.emulated { device_bytes(n)? } else { 0 };
    reference::ensure_host_free(on_host)?;
    let mut r = LessonReport {
        status: Status::Failed,
        device: gpu.info.clone(),
        n,
        mib: n as f64 * 4.0 / (1024.0 * 1024.0),
        threads_per_block: tpb,
        tile: sums.tile,
        fill: reference::FILL_RULE,
        capacity: Vec::new(),
        ordinary_blocks: ordinary_blocks(n, tpb),
        grid: sums.grid(n),
        probes: Vec::new(),
        reference: 0.0,
        bound_rule: reference::BOUND_RULE,
        sums: Vec::new(),
        coalesced: Vec::new(),
        warmups: cfg.warmups,
        runs: cfg.runs,
        timing: Vec::new(),
        barrier: None,
        clusters: None,
        checks: Vec::new(),
    };
    section(&r, Section::Device);

    // How big a cooperative grid fits, asked separately for each kernel.
    let probe_limits = gpu.kernel(&crate::kernels().probe_cooperative)?.limits(tpb)?;
    r.capacity = vec![
        Capacity::of(crate::kernels().reduce_cooperative_grid.name(), &sums.limits),
        Capacity::of(crate::kernels().probe_cooperative.name(), &probe_limits),
    ];
    section(&r, Section::Capacity);

    // What this_grid() reports. The ordinary probe runs first, on a context
    // that has made no cooperative launch yet.
    let max = probe_limits.capacity();
    for (launch, blocks, cooperative) in [("ordinary", max, false), ("cooperative", max, true), ("cooperative", max + 1, true), ("ordinary, after", max, false)]
    {
        r.probes.push(ProbeResult::of(launch, blocks, gpu.probe(blocks, tpb, cooperative)));
    }
    // The same cooperative launch captured into a CUDA graph: does the node
    // stay cooperative, and where is one block too many refused?
    for blocks in [max, max + 1] {
        r.probes.push(ProbeResult::of_graph(blocks, gpu.probe_graph(blocks, tpb)));
    }
    let p = &r.probes;
    r.checks.push(Check::new(
        "the cooperative probe at the maximum reads is_valid = 1 and every block",
        p[1].is_valid == Some(true) && p[1].num_blocks == Some(max),
        probe_detail(&p[1]),
    ));
    r.checks.push(Check::new(
        "the cooperative probe one block over the maximum is refused as too large",
        p[2].error.as_deref() == Some("CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"),
        probe_detail(&p[2]),
    ));
    let g = &r.probes[4..];
    r.checks.push(Check::new(
        "the cooperative probe captured in a graph keeps its cooperative node and reads is_valid = 1",
        g[0].cooperative_node == Some(true) && g[0].is_valid == Some(true) && g[0].num_blocks == Some(max),
        format!("{}, cooperative node: {}", probe_detail(&g[0]), g[0].cooperative_node.map_or("-", |c| if c { "yes" } else { "no" })),
    ));
    r.checks.push(Check::new(
        "the cooperative probe one block over the maximum is refused from a graph too",
        g[1].error.as_deref() == Some("CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"),
        probe_detail(&g[1]),
    ));
    section(&r, Section::Probes);

    // The sums, on the same grid, each from poisoned buffers, each against the
    // double reference.
    let xs = reference::fill(n)?;
    let reference = Reference::new(&xs);
    r.reference = reference.sum;
    let input = DeviceInput::upload(gpu, &xs)?;
    let mut scratch = sums.scratch(r.grid, cfg.repeats().slots())?;
    if r.grid > 0 {
        for path in PATHS {
            let run = sums.checked(path, &input, &reference, &mut scratch)?;
            r.checks.push(Check::new(format!("the {} sum is within its bound", path.label()), run.total.pass, run.total.detail()));
            if let Some(st) = &run.stages {
                r.checks.push(Check::new(
                    format!("every block's partial ({}) matches the elements it read", path.label()),
                    st.bad_partials.is_empty(),
                    st.partials_detail(run.blocks),
                ));
                let t = &st.total_of_partials;
                r.checks.push(Check::new(format!("the {} total is the sum of its partials", path.label()), t.pass, t.detail()));
            }
            r.sums.push(run);
        }
    }
    section(&r, Section::Sums);

    r.coalesced = gpu.coalesced_demo()?;
    r.checks.push(Check::new(
        "coalesced_threads() groups the converged lanes: sizes 3 and 16, ranks in lane order",
        r.coalesced == expected_coalesced(),
        format!("{} rows", r.coalesced.len()),
    ));
    section(&r, Section::Coalesced);

    // Time, copies excluded; each run's total lands in its own slot and is checked.
    if r.grid > 0 && cfg.runs > 0 {
        for path in PATHS {
            let t = time_path(sums, path, r.grid, std::slice::from_ref(&input), &mut scratch, &reference, cfg.repeats())?;
            r.checks.push(Check::new(
                format!("every timed {} total is within the bound", path.label()),
                t.wrong_totals == 0,
                format!("{} of {} outside", t.wrong_totals, t.checked),
            ));
            r.timing.push(PathTiming { path, timing: t.timing, wrong_totals: t.wrong_totals });
        }
        if !gpu.info.emulated {
            r.barrier = Some(crate::timing::barrier_cost(gpu, r.grid, cfg.threads_per_block, None, None)?);
        }
    }
    section(&r, Section::Timing);

    let clusters = crate::clusters::section(gpu, tpb, &input, &reference, cfg.repeats())?;
    cluster_checks(&mut r.checks, &clusters);
    r.clusters = Some(clusters);
    section(&r, Section::Clusters);

    r.status = checks::status(&r.checks);
    section(&r, Section::Checks);
    Ok(r)
}

/// The cluster section's checks: the refusals, each run, each timed total.
fn cluster_checks(checks: &mut Vec<Check>, c: &crate::clusters::ClusterSection) {
    if c.unavailable.is_some() {
        return;
    }
    let over = c.probes.first();
    checks.push(Check::new(
        match over {
            Some(p) if p.blocks == c.block_ceiling => {
                format!("a cooperative launch of the block ceiling ({}) in clusters of {} is refused before launch and by the device", p.blocks, c.cluster)
            }
            _ => format!("a cooperative launch of one cluster of {} more than fit is refused before launch and by the device", c.cluster),
        },
        c.refusal.is_some() && over.is_some_and(|p| p.error.as_deref() == Some("CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE")),
        over.and_then(|p| p.error.clone()).unwrap_or_else(|| "it ran".into()),
    ));
    if let Some(fits) = c.probes.get(1) {
        checks.push(Check::new(
            format!("a cooperative launch of the cluster ceiling ({} blocks) runs", fits.blocks),
            fits.error.is_none(),
            fits.error.clone().unwrap_or_else(|| "ran".into()),
        ));
    }
    for run in &c.runs {
        checks.push(Check::new(format!("the {} sum is within its bound", run.path.label()), run.total.pass, run.total.detail()));
        checks.push(Check::new(
            format!("every cluster's partial ({}) matches its blocks' elements", run.path.label()),
            run.stages.bad_partials.is_empty(),
            run.partials_detail(),
        ));
        let t = &run.stages.total_of_partials;
        checks.push(Check::new(format!("the {} total is the sum of its cluster partials", run.path.label()), t.pass, t.detail()));
    }
    for t in &c.timing {
        checks.push(Check::new(
            format!("every timed {} total is within the bound", t.path.label()),
            t.wrong_totals == 0,
            format!("{} of {} outside", t.wrong_totals, t.checked),
        ));
    }
}

fn probe_detail(p: &ProbeResult) -> String {
    match (&p.error, p.is_valid, p.num_blocks) {
        (Some(e), _, _) => match p.refused_at {
            Some(call) => format!("{e} from {call}"),
            None => e.clone(),
        },
        (None, Some(v), Some(b)) => format!("is_valid = {}, {b} blocks", v as u8),
        _ => String::new(),
    }
}

impl LessonReport {
    /// Ok when every check passed, else how many failed.
    pub fn verdict(&self) -> Result<()> {
        checks::verdict(&self.checks)
    }
}
