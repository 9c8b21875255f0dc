//! `cg-lesson trace`: where and when each block ran, drawn. On a GPU, from
//! the traced build of the kernels (`cg_kernel::trace`: `%smid` and `%globaltimer`
//! per block, recorded by thread 0); on the emulator, from the emulator's
//! own record, laid out in the emulated device's time (`cg_emulator`'s
//! timeline: its SMs, resident blocks advancing together). Drawn for:
//! - the lesson's cooperative launch at capacity, every block resident at once;
//! - the two-launch path;
//! - an ordinary launch of the first stage sized to n, which runs in waves;
//! - on a device with clusters, the emulator only (the traced module is
//!   sm_70, and cluster kernels are sm_90), the sum with a cluster stage:
//!   one row per block, grouped and shaded by cluster, each cluster's barrier marked;
//! - on the emulator only, an ordinary launch sized to n of the cooperative
//!   kernel, which a GPU would hang on: the blocks that got a place wait at
//!   `grid.sync()` for blocks that can never start, and the emulator names
//!   the deadlock. The program never launches it on a GPU.

mod draw;

use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::launch::prelude::*;
use crate::launch::{DeviceInput, Input};
use crate::observe::{BlockTrace, LaunchTrace, TraceUnit};
use crate::reference::{self, Reference};
use crate::sizing::ordinary_blocks;
use crate::sums::{Path, Sums};
use crate::text::plural;
use crate::timing::{Repeats, time_path};
use cg_kernel::kernels::Params;
use cg_launcher::error::Error as L;
use std::path::{Path as FsPath, PathBuf};

/// The cluster picture's grid, and its input: four elements a thread, and
/// one more for some, so that the blocks arrive apart.
const CLUSTER_TRACE_BLOCKS: u32 = 32;
const CLUSTER_TRACE_N: usize = 32 * 256 * 4 + 3000;

/// One picture: what was launched, its trace, and where it was drawn.
#[derive(Debug)]
pub struct Picture {
    pub title: String,
    pub file: PathBuf,
    pub trace: LaunchTrace,
}

/// What `trace` made.
#[derive(Debug)]
pub struct TraceReport {
    pub pictures: Vec<Picture>,
    /// The cooperative sum's median GPU time, traced and not (µs), on a GPU.
    pub cost_us: Option<(f64, f64)>,
}

/// A traced launch's picture, drawn to `dir/name.svg`.
fn picture(dir: &FsPath, name: &str, title: String, trace: LaunchTrace, device: &str) -> Result<Picture> {
    let file = dir.join(format!("{name}.svg"));
    draw::svg(&trace, &title, device, &file)?;
    Ok(Picture { title, file, trace })
}

/// The one launch `work` makes, traced.
fn one(gpu: &Gpu, work: impl FnOnce() -> Result<()>) -> Result<LaunchTrace> {
    gpu.take_traces();
    work()?;
    gpu.take_traces().pop().ok_or(Error::Launch(L::NotOnEmulator("a trace of a launch that made none")))
}

/// Draws every picture into `dir`. `gpu` was opened traced
/// ([`Gpu::open_traced`] with `Tracing::Read`, or [`Gpu::emulated_traced`]);
/// `timed`, on a GPU, is the same GPU opened plainly and opened with the
/// traced kernels unread, to time what the recording costs.
pub fn run(
    gpu: &Gpu,
    timed: Option<(&Gpu, &Gpu)>,
    emulated: Option<(cg_emulator::Device, cg_emulator::Options)>,
    n: usize,
    dir: &FsPath,
) -> Result<TraceReport> {
    std::fs::create_dir_all(dir).map_err(|error| Error::Io { path: dir.display().to_string(), error })?;
    let tpb = 256;
    let device = gpu.info.name.clone();
    let xs = reference::fill(n)?;
    let input = DeviceInput::upload(gpu, &xs)?;
    let sums = Sums::load(gpu, tpb)?;
    let grid = sums.grid(n);
    let mut s = sums.scratch(grid.max(ordinary_blocks(n, tpb) as u32), 1)?;
    let mut pictures = Vec::new();

    let t = one(gpu, || sums.run(Path::Cooperative, grid, &input, &mut s, 0))?;
    pictures.push(picture(
        dir,
        "trace-cooperative",
        format!("One cooperative launch, {} of {tpb}: every block resident at once", plural(grid, "block", "blocks")),
        t,
        &device,
    )?);

    gpu.take_traces();
    sums.run(Path::TwoLaunches, grid, &input, &mut s, 0)?;
    let mut two = gpu.take_traces();
    if two.len() == 2 {
        let second = two.pop().expect("two launches");
        let first = two.pop().expect("two launches");
        pictures.push(picture(
            dir,
            "trace-two-launches-first",
            format!("Two launches, the first: {} {} their partials", plural(grid, "block", "blocks"), if grid == 1 { "writes" } else { "write" }),
            first,
            &device,
        )?);
        pictures.push(picture(dir, "trace-two-launches-second", "Two launches, the second: one block adds the partials".into(), second, &device)?);
    }

    let blocks = ordinary_blocks(n, tpb) as u32;
    let stage1 = gpu.kernel(&crate::kernels().reduce_blocks_to_partials)?;
    let t = one(gpu, || stage1.reduce(blocks, tpb, &input.view(), s.partials.slice_mut(..blocks as usize)))?;
    pictures.push(picture(
        dir,
        "trace-ordinary-sized-to-n",
        format!("An ordinary launch sized to n: {} of {tpb} run in waves", plural(blocks, "block", "blocks")),
        t,
        &device,
    )?);

    if gpu.info.clusters && gpu.info.emulated {
        // Few enough blocks to see each cluster: 8 clusters of 4, on a part of the input.
        let clusters = crate::clusters::ClusterSums::load(gpu, tpb)?;
        let c = crate::clusters::LESSON_CLUSTER;
        let small = DeviceInput::upload(gpu, &xs[..n.min(CLUSTER_TRACE_N)])?;
        let blocks = CLUSTER_TRACE_BLOCKS;
        let mut cs = clusters.scratch(blocks, 1)?;
        let t = one(gpu, || clusters.run(crate::clusters::ClusterPath::OneLaunch, blocks, c, &small, &mut cs, 0))?;
        let title = format!("Clusters of {}, {blocks} blocks: each cluster leaves its barrier when its own last block arrives", c.blocks);
        pictures.push(picture(dir, "trace-clusters", title, t, &device)?);
    }

    if let Some((dev, options)) = emulated {
        let t = deadlock(&dev, options, &xs, blocks, tpb);
        let def = crate::kernels().reduce_cooperative_grid;
        let fit = dev.blocks_per_sm_using(tpb, def.shared_bytes(tpb), crate::kernels().ptx.registers_sm75(def.name())) * dev.sms;
        pictures.push(picture(
            dir,
            "trace-ordinary-with-grid-sync",
            format!(
                "The cooperative kernel launched the ordinary way, {blocks} blocks: {fit} hold the device and wait at grid.sync() for blocks that never start"
            ),
            t,
            &device,
        )?);
    }

    let cost_us = match timed {
        Some((plain, traced)) => {
            let r = Reference::new(&xs);
            let median = |g: &Gpu| -> Result<f64> {
                let sums = Sums::load(g, tpb)?;
                let input = DeviceInput::upload(g, &xs)?;
                let repeats = Repeats { warmups: 10, runs: 100 };
                let mut s = sums.scratch(grid, repeats.slots())?;
                let t = time_path(&sums, Path::Cooperative, grid, std::slice::from_ref(&input), &mut s, &r, repeats)?;
                Ok(t.timing.gpu_queued.map_or(f64::NAN, |q| q.median_ms * 1e3))
            };
            Some((median(traced)?, median(plain)?))
        }
        None => None,
    };
    Ok(TraceReport { pictures, cost_us })
}

/// On the emulator: the cooperative kernel launched the ordinary way with a
/// grid sized to n, on a device that hands ordinary launches a workspace too
/// (as the H200's driver does once its context has made a cooperative
/// launch). Its trace, and the emulator's report of the deadlock.
fn deadlock(dev: &cg_emulator::Device, options: cg_emulator::Options, xs: &[f32], blocks: u32, tpb: u32) -> LaunchTrace {
    let def = crate::kernels().reduce_cooperative_grid;
    let (mut partials, mut out) = (vec![f32::NAN; blocks as usize], [f32::NAN]);
    let arg_in = cg_emulator::Arg::In { name: "input", address: xs.as_ptr() as usize, len: xs.len(), elem: 4 };
    let arg_out = |name, v: &mut [f32], slot| cg_emulator::Arg::Out { name, address: v.as_mut_ptr() as usize, len: v.len(), elem: 4, slot };
    let args = [arg_in, arg_out("partials", &mut partials, 0), arg_out("out", &mut out, 1), cg_emulator::Arg::Value(xs.len() as u64)];
    let entry = def.entry();
    // SAFETY: one argument per parameter, of its kind, over live vectors of the sizes the kernel reads and writes.
    let f = move |a: &[cg_emulator::Arg]| unsafe {
        <(cg_kernel::mem::In<f32>, cg_kernel::mem::Out<f32>, cg_kernel::mem::Out<f32>, usize) as Params>::call(entry, a)
    };
    let sink = std::sync::Mutex::new(Vec::<BlockTrace>::new());
    let launch = cg_emulator::Launch {
        kernel: def.name(),
        grid: blocks,
        threads: tpb,
        shared_bytes: def.shared_bytes(tpb),
        shared_tail: def.shared_bytes(tpb) - def.dynamic_shared_bytes(tpb),
        registers_per_thread: crate::kernels().ptx.registers_sm75(def.name()),
        cooperative: false,
        grid_sync: true,
        cluster: None,
        cluster_kernel: false,
        args: &args,
        entry: &f,
        trace: Some(&sink),
    };
    let options = cg_emulator::Options { ordinary_launches_get_a_workspace: true, ..options };
    // SAFETY: each argument addresses a live vector of its length, aligned
    // for f32; nothing else touches them during the call, and `f` calls the
    // kernel with its parameters' kinds (input holds n floats, partials one
    // per block, out one).
    let error = unsafe { dev.launch(&launch, &options) }.err().map(|f| f.to_string());
    LaunchTrace {
        kernel: def.name(),
        blocks,
        threads_per_block: tpb,
        cooperative: false,
        cluster: None,
        unit: TraceUnit::EmulatorSteps,
        trace: sink.into_inner().unwrap_or_else(|e| e.into_inner()),
        error,
    }
}

/// The most blocks a trace shows running at one moment (a block that never
/// ended holds its place to the end).
pub fn most_resident(trace: &[BlockTrace]) -> usize {
    let mut edges: Vec<(u64, i32)> = Vec::with_capacity(trace.len() * 2);
    for b in trace {
        edges.push((b.start, 1));
        if let Some(end) = b.end {
            edges.push((end, -1));
        }
    }
    // At one moment, ends before starts: a block that takes a freed place does not overlap it.
    edges.sort_unstable();
    let (mut now, mut most) = (0i32, 0i32);
    for (_, d) in edges {
        now += d;
        most = most.max(now);
    }
    most as usize
}

/// The report as text: where each picture is, and what it shows.
pub fn render(r: &TraceReport) -> String {
    let mut o = String::new();
    for p in &r.pictures {
        let t = &p.trace;
        let started = t.trace.len();
        let places: std::collections::BTreeSet<u32> = t.trace.iter().map(|b| b.place).collect();
        o += &format!(
            "{}\n  {} of {} started, on {}, at most {} resident at once",
            p.title,
            started,
            plural(t.blocks, "block", "blocks"),
            if t.unit == TraceUnit::Nanoseconds { plural(places.len(), "SM", "SMs") } else { plural(places.len(), "emulated SM", "emulated SMs") },
            most_resident(&t.trace)
        );
        if let Some(e) = &t.error {
            o += &format!("\n  the emulator: {e}");
        }
        o += &format!("\n  drawn to {}\n\n", p.file.display());
    }
    if let Some((traced, plain)) = r.cost_us {
        o += &format!(
            "Recording the trace costs the cooperative sum {:.2} µs: {traced:.2} µs traced against {plain:.2} µs as timed (median of 100, GPU time)\n",
            traced - plain
        );
    }
    o
}
