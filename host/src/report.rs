//! The lesson's results as text, in the lesson's order, one section at a time.

use crate::checks;
use crate::lesson::{LessonReport, Section};
use crate::text::plural;
use crate::timing::Stats;
use std::fmt::Write;

/// The text of one section of the lesson, from the report as it stands.
pub fn section(r: &LessonReport, s: Section) -> String {
    let mut o = String::new();
    let d = &r.device;
    match s {
        Section::Device => {
            if d.emulated {
                let _ = writeln!(o, "GPU: {}", d.name);
                o.push_str("  the lesson's kernels, run by cg_emulator on the CPU: every check of the lesson; it times nothing, since CPU times say nothing about a GPU\n");
                if let Some(seed) = d.seed {
                    let _ = writeln!(o, "  threads interleaved at random from seed {seed} (--seed {seed} repeats this run)");
                }
            } else {
                let (major, minor) = d.compute_capability.unwrap_or((0, 0));
                let _ = writeln!(
                    o,
                    "GPU: {} (compute capability {major}.{minor}), {}, driver supports {}",
                    d.name,
                    plural(d.sms, "SM", "SMs"),
                    d.driver_version.as_deref().unwrap_or("an unknown CUDA version")
                );
            }
            let _ = writeln!(o, "cudaDevAttrCooperativeLaunch: {}", d.cooperative_launch as u8);
            let _ = writeln!(o, "n = {} floats, {:.1} MiB, {} threads/block, tiles of {}", r.n, r.mib, r.threads_per_block, r.tile);
            let _ = writeln!(o, "input: {}", r.fill);
        }
        Section::Capacity => {
            o.push_str("\nHow big a cooperative grid fits\n");
            for c in &r.capacity {
                let _ = writeln!(o, "  {:<26} {}   (limited by {})", c.kernel, c.product(), c.limited_by);
            }
            let _ = writeln!(o, "  an ordinary launch sized to n would use {}", plural(r.ordinary_blocks, "block", "blocks"));
            if r.grid > 0 {
                let _ = writeln!(o, "  both sums below run {}, the same grid", plural(r.grid, "block", "blocks"));
            } else {
                o.push_str("  n = 0: no block has anything to add, so neither sum launches anything\n");
            }
        }
        Section::Probes => {
            o.push_str("\nWhat this_grid() reports (probe_cooperative, no barrier)\n");
            for p in &r.probes {
                let what = match (&p.error, p.is_valid, p.num_blocks) {
                    (Some(e), _, _) => match p.refused_at {
                        Some(call) => format!("{e} (from {call})"),
                        None => e.clone(),
                    },
                    (None, Some(v), Some(b)) => format!("is_valid={}  blocks={b}", v as u8),
                    _ => String::new(),
                };
                let node = match p.cooperative_node {
                    Some(true) => "   (the captured node reads back as cooperative)",
                    Some(false) => "   (the captured node reads back as NOT cooperative)",
                    None => "",
                };
                let _ = writeln!(o, "  {:<18} {:>6} blocks   {}{node}", p.launch, p.blocks, what);
            }
            let valid = |launch: &str| r.probes.iter().find(|p| p.launch == launch).and_then(|p| p.is_valid);
            if let (Some(first), Some(after)) = (valid("ordinary"), valid("ordinary, after"))
                && first != after
            {
                o.push_str("  the same ordinary launch reads differently once the context has made a cooperative launch:\n  is_valid() cannot tell you how you were launched, so only the launch API may decide\n");
            }
            if d.emulated {
                o.push_str("  (on an H200, driver 580.159.04, `ordinary, after` reads is_valid=1: once a context has made a cooperative launch, its driver\n   hands every launch a grid workspace; the emulator does not model that, so is_valid() cannot tell you how you were launched there either)\n");
            }
        }
        Section::Sums => {
            let _ = writeln!(o, "\nSum of {} floats", r.n);
            let _ = writeln!(o, "  CPU reference, double     {:.6}", r.reference);
            if r.sums.is_empty() {
                o.push_str("  two launches              not launched (n = 0)\n  one cooperative launch    not launched (n = 0)\n");
            }
            for run in &r.sums {
                let t = &run.total;
                let _ = writeln!(o, "  {:<25} {:.6}   error {:.2e} (bound {:.2e})", run.path.label(), t.value, t.error, t.bound);
            }
            let _ = writeln!(o, "  bound: {}", r.bound_rule);
            if let Some(run) = r.sums.iter().find(|s| s.stages.is_some()) {
                let st = run.stages.as_ref().expect("found above");
                let each = match run.blocks {
                    1 => "the 1 partial".to_string(),
                    b => format!("each of the {b} partials"),
                };
                let _ = writeln!(
                    o,
                    "  and stage by stage: {each} against its block's elements, each total against its partials (bound {:.2e})",
                    st.total_of_partials.bound
                );
            }
        }
        Section::Coalesced => {
            o.push_str("\nWhat coalesced_threads() returns\n  warp  lane  group size  rank in group\n");
            for c in &r.coalesced {
                let _ = writeln!(o, "  {:>4}  {:>4}  {:>10}  {:>13}", c.warp, c.lane, c.group_size, c.rank);
            }
        }
        Section::Timing => {
            if d.emulated {
                o.push_str(
                    "\nTime: not measured on the emulator. It runs every thread on the CPU, so a way's CPU time says how much\n  work the emulator does for it (a cooperative launch parks every block at grid.sync()), not how fast a GPU runs it:\n  on a GPU this section times each way with CUDA events, and a grid.sync() against a launch.\n",
                );
                if r.runs > 0 {
                    let _ = writeln!(o, "  (--runs {}: each way runs {} more, every total checked below)", r.runs, plural(r.runs, "time", "times"));
                }
            } else {
                let _ = writeln!(
                    o,
                    "\nTime, mean of {} after {}, CUDA events, copies excluded",
                    plural(r.runs, "run", "runs"),
                    plural(r.warmups, "warm-up", "warm-ups")
                );
                o.push_str("  (GPU time: runs queued, then run back to back; to completion: the host waits for each run before the next)\n");
            }
            if r.timing.is_empty() && !d.emulated {
                o.push_str(if r.runs == 0 { "  nothing timed (--runs 0)\n" } else { "  nothing timed (n = 0: nothing to launch)\n" });
            }
            for t in r.timing.iter().filter(|_| !d.emulated) {
                let ms = |s: &Option<Stats>| {
                    s.map_or("-".to_string(), |s| format!("{:.4} ms (min {:.4}, median {:.4}, max {:.4})", s.mean_ms, s.min_ms, s.median_ms, s.max_ms))
                };
                if d.emulated {
                    let _ = writeln!(o, "  {:<25} {}", t.path.label(), ms(&t.timing.cpu_wall));
                } else {
                    let _ = writeln!(o, "  {:<25} GPU time {}", t.path.label(), ms(&t.timing.gpu_queued));
                    let _ = writeln!(o, "  {:<25} to completion {}", "", ms(&t.timing.launch_to_completion));
                }
            }
            if let Some(b) = &r.barrier {
                let _ = writeln!(
                    o,
                    "  one grid.sync() on these {} blocks: {:.2} µs; one more launch of them, queued: {:.2} µs; one more graph node: {:.2} µs\n  (GPU time; {} barriers in one launch against none; `bench --only-barrier` measures other grids and NVIDIA's barrier)",
                    b.blocks,
                    b.grid_sync_us,
                    b.kernel_boundary_us,
                    b.graph_node_us,
                    crate::timing::BARRIERS
                );
            }
        }
        Section::Clusters => clusters(&mut o, r),
        Section::Checks => {
            o.push('\n');
            checks::render(&mut o, &r.checks);
            // Only after a lesson whose checks all passed.
            if r.checks.iter().all(|c| c.pass()) {
                o.push_str(&format!(
                    "Next: where a grid barrier pays, a conjugate-gradient solve in one cooperative kernel (`{}`, docs/conjugate-gradient.md)\n",
                    crate::invocation::command("conjugate-gradient", r.device.emulated)
                ));
            }
        }
    }
    o
}

/// The whole lesson as text.
pub fn lesson(r: &LessonReport) -> String {
    [Section::Device, Section::Capacity, Section::Probes, Section::Sums, Section::Coalesced, Section::Timing, Section::Clusters, Section::Checks]
        .into_iter()
        .map(|s| section(r, s))
        .collect()
}

/// The cluster section: the ceiling table, the refusals, the sums and their times.
fn clusters(o: &mut String, r: &LessonReport) {
    let Some(c) = &r.clusters else { return };
    o.push_str("\nThe level between block and grid: clusters\n");
    o.push_str("  a cluster is up to 8 blocks that the GPU runs at once, side by side, with a barrier of their own and each\n  other's shared memory (compute capability 9.0 and later; docs/clusters.md explains this section)\n");
    if let Some(why) = &c.unavailable {
        let _ = writeln!(o, "  {why}");
        return;
    }
    let _ = writeln!(
        o,
        "  {} at {} threads/block: block ceiling {} = {}; clusters resident at once (cuOccupancyMaxActiveClusters):",
        c.kernel, c.threads_per_block, c.block_ceiling_product, c.block_ceiling
    );
    for row in &c.ceilings {
        let short = c.block_ceiling.saturating_sub(row.blocks);
        let note = if short > 0 { format!("   {short} fewer than the block ceiling") } else { String::new() };
        let np = if row.non_portable { " (non-portable)" } else { "" };
        let _ = writeln!(o, "    clusters of {:>2}{np:<15} {:>5} clusters = {:>5} blocks{note}", row.cluster, row.clusters, row.blocks);
    }
    o.push_str("  a cluster's blocks are scheduled together on one GPC (a group of SMs), and the driver counts fewer of them resident\n  than the block ceiling suggests (no per-GPC sum reproduces its count; it is measured, not derived): the cooperative\n  ceiling of a cluster launch is this cluster ceiling, and a grid sized from the block ceiling is refused\n");
    if let Some(refusal) = &c.refusal {
        let what = if c.probes.first().is_some_and(|p| p.blocks == c.block_ceiling) { "sized from the block ceiling" } else { "one cluster too many" };
        let _ = writeln!(o, "  {what}: {refusal}");
    }
    for p in &c.probes {
        let what = p.error.clone().unwrap_or_else(|| "ran".into());
        let _ = writeln!(o, "  cooperative, clusters of {}, {:>5} blocks, past the host's check, straight to the driver: {what}", p.cluster, p.blocks);
    }
    if c.runs.is_empty() {
        o.push_str("  n = 0: nothing to sum\n");
        return;
    }
    let _ = writeln!(o, "  sums with a cluster stage, {} blocks in clusters of {} ({} cluster partials):", c.blocks, c.cluster, c.blocks / c.cluster);
    for run in &c.runs {
        let t = &run.total;
        let _ = writeln!(o, "    {:<33} {:.6}   error {:.2e} (bound {:.2e}); {}", run.path.label(), t.value, t.error, t.bound, run.partials_detail());
    }
    let cooperative = r.timing.iter().find(|t| t.path == crate::sums::Path::Cooperative).and_then(|t| t.timing.primary());
    for t in &c.timing {
        let Some(s) = t.timing.primary() else { continue };
        let what = if r.device.emulated { "CPU wall time" } else { "GPU time" };
        let beside = cooperative.map_or(String::new(), |co| format!("   (one cooperative launch without clusters: {:.4} ms)", co.mean_ms));
        let _ = writeln!(o, "    {:<33} {what} {:.4} ms (median {:.4}){beside}", t.path.label(), s.mean_ms, s.median_ms);
    }
    if let (Some(cl), Some(b)) = (c.cluster_sync_us, &r.barrier) {
        let _ = writeln!(
            o,
            "  one cluster.sync() on these {} blocks: {cl:.2} µs; one grid.sync() on the lesson's {} blocks: {:.2} µs",
            c.blocks, b.blocks, b.grid_sync_us
        );
    }
}
