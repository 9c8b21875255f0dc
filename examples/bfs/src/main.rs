//! A level-synchronous breadth-first search on a random graph, two ways
//! (`kernels/`): one cooperative launch for the whole search, its frontier
//! compacted by the grid's `select_items`; and a launch per level whose
//! frontier goes through cg-algorithms' `select_flagged`. Each is checked
//! vertex by vertex against a BFS on the CPU, on the emulated T4
//! (`--emulate`) or a CUDA GPU, where the default graph has 2^22 vertices;
//! `--bench` times the two against each other on a GPU, paired.

use bfs_kernels::{BFS, BFS_LEVEL, UNREACHED};
use cg_algorithms::Algorithms;
use cg_launcher::device::{Buffer, Gpu};
use cg_launcher::error::{Error, Result};
use cg_launcher::launch::ensure_len;
use clap::Parser;
use example_bench::{paired, program};
use std::collections::VecDeque;
use std::process::ExitCode;
use std::time::Instant;

// Links the kernels' crate, whose PTX and kernels the launcher finds by name.
use bfs_kernels as _;

/// Threads per block.
const THREADS: u32 = 256;

#[derive(Parser)]
#[command(
    name = "bfs",
    about = "A breadth-first search in one cooperative launch (the frontier compacted by grid.select_items) and in a launch per level (select_flagged), checked against the CPU's"
)]
struct Args {
    /// Run on the emulated GPU (a T4) instead of a CUDA GPU.
    #[arg(long)]
    emulate: bool,
    /// Vertices (default: 2^22 on a GPU, 2^14 on the emulator).
    #[arg(long)]
    n: Option<usize>,
    /// Edges out of each vertex, to random others.
    #[arg(long, default_value_t = 8)]
    degree: usize,
    /// The random graph's seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Time the one launch against the launch per level, paired (GPU only).
    #[arg(long)]
    bench: bool,
    /// Paired rounds of --bench.
    #[arg(long, default_value_t = 15)]
    rounds: usize,
}

/// A graph in CSR form: vertex `v`'s neighbours are `columns[offsets[v]..offsets[v + 1]]`.
struct Graph {
    offsets: Vec<u32>,
    columns: Vec<u32>,
}

/// `n` vertices, each with `degree` edges to vertices drawn by a
/// splitmix64 generator from `seed` (repeats and self-loops allowed).
fn random_graph(n: usize, degree: usize, seed: u64) -> Graph {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let offsets = (0..=n).map(|v| (v * degree) as u32).collect();
    let columns = (0..n * degree).map(|_| (next() % n as u64) as u32).collect();
    Graph { offsets, columns }
}

/// The CPU's BFS: each vertex's distance from `source`, or [`UNREACHED`].
fn cpu_bfs(g: &Graph, source: usize) -> Vec<u32> {
    let n = g.offsets.len() - 1;
    let mut dist = vec![UNREACHED; n];
    let mut queue = VecDeque::from([source]);
    dist[source] = 0;
    while let Some(v) = queue.pop_front() {
        for &u in &g.columns[g.offsets[v] as usize..g.offsets[v + 1] as usize] {
            if dist[u as usize] == UNREACHED {
                dist[u as usize] = dist[v] + 1;
                queue.push_back(u as usize);
            }
        }
    }
    dist
}

/// Whether `g` is a CSR graph whose vertices' neighbours are all vertices,
/// with `source` among them, and its largest degree.
fn well_formed(g: &Graph, source: usize) -> Result<u32> {
    let n = g.offsets.len() - 1;
    let ok = g.offsets[0] == 0
        && g.offsets.windows(2).all(|w| w[0] <= w[1])
        && g.offsets[n] as usize == g.columns.len()
        && g.columns.iter().all(|&u| (u as usize) < n)
        && source < n
        && u32::try_from(n).is_ok_and(|n| n < UNREACHED);
    if !ok {
        return Err(Error::Caller("the graph is not a CSR graph of n vertices with the source among them".into()));
    }
    Ok(g.offsets.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0))
}

/// A graph on the device, and what either BFS needs beside it.
struct OnDevice<'g> {
    gpu: &'g Gpu,
    n: usize,
    max_degree: u32,
    offsets: Buffer<u32>,
    columns: Buffer<u32>,
    dist: Buffer<u32>,
    frontier: Buffer<u32>,
    /// The launch per level's: every vertex id (`select_flagged`'s input) and a flag per vertex.
    ids: Buffer<u32>,
    flags: Buffer<u8>,
}

impl<'g> OnDevice<'g> {
    /// Uploads `g`, checked against the kernels' contracts.
    fn new(gpu: &'g Gpu, g: &Graph, source: usize) -> Result<Self> {
        let max_degree = well_formed(g, source)?;
        let n = g.offsets.len() - 1;
        Ok(OnDevice {
            gpu,
            n,
            max_degree,
            offsets: gpu.upload(&g.offsets)?,
            columns: gpu.upload(&g.columns)?,
            dist: gpu.zeros(n)?,
            frontier: gpu.zeros(2 * n)?,
            ids: gpu.upload(&(0..n as u32).collect::<Vec<_>>())?,
            flags: gpu.zeros(n)?,
        })
    }

    /// The one-launch BFS from `source`: the blocks it launched.
    fn one_launch(&mut self, source: usize) -> Result<u32> {
        let (gpu, n) = (self.gpu, self.n);
        let kernel = gpu.cooperative_kernel(&BFS)?;
        let blocks = kernel.limits(THREADS)?.capacity();
        let launch = kernel.configure(blocks, THREADS)?;
        gpu.fill(&mut self.dist, UNREACHED)?;
        ensure_len(BFS.name(), "frontier", 2 * n, self.frontier.len())?;
        // SAFETY: offsets holds n + 1 ascending offsets ending at columns'
        // length, none more than max_degree apart, each column below n,
        // source below n (checked in `new`); dist holds n UNREACHED (filled
        // above), frontier 2n.
        unsafe {
            launch.launch((
                &self.offsets.slice(..),
                &self.columns.slice(..),
                self.dist.slice_mut(..),
                self.frontier.slice_mut(..),
                source as u32,
                self.max_degree,
                n,
            ))?
        };
        gpu.finish()?;
        Ok(blocks)
    }

    /// The launch-per-level BFS from `source`: the levels it launched.
    fn per_level(&mut self, alg: &mut Algorithms, source: usize) -> Result<u32> {
        let gpu = self.gpu;
        let kernel = gpu.kernel(&BFS_LEVEL)?;
        let blocks = kernel.limits(THREADS)?.capacity();
        gpu.fill(&mut self.dist, UNREACHED)?;
        gpu.fill(&mut self.flags, 0)?;
        gpu.write(&mut self.dist, source, &[0])?;
        gpu.write(&mut self.frontier, 0, &[source as u32])?;
        let (mut size, mut level) = (1usize, 0u32);
        while size > 0 {
            // SAFETY: as in `one_launch`; frontier holds `size` vertices
            // below n (the source, or select_flagged's output of vertex
            // ids), flags n bytes.
            unsafe {
                kernel.launch(
                    blocks,
                    THREADS,
                    (
                        &self.offsets.slice(..),
                        &self.columns.slice(..),
                        self.dist.slice_mut(..),
                        &self.frontier.slice(..),
                        self.flags.slice_mut(..),
                        size as u32,
                        level,
                    ),
                )?
            };
            size = alg.select_flagged(&self.ids, &self.flags, &mut self.frontier)?;
            gpu.fill(&mut self.flags, 0)?;
            level += 1;
        }
        Ok(level)
    }
}

fn run(args: &Args) -> std::result::Result<bool, String> {
    let gpu = program::device(args.emulate)?;
    program::bench_needs_a_gpu(&gpu, args.bench)?;
    let n = args.n.unwrap_or(if gpu.info.emulated { 1 << 14 } else { 1 << 22 });
    if n == 0 {
        return Err("--n 0: a graph needs at least one vertex".into());
    }
    if args.degree == 0 || n.checked_mul(args.degree).is_none_or(|e| e > u32::MAX as usize) {
        return Err(format!("--n {n} --degree {}: the edges must number 1 to {}", args.degree, u32::MAX));
    }
    if args.rounds < 2 {
        return Err(format!("--rounds {}: at least 2", args.rounds));
    }
    program::memory_fits(&gpu, n, 4 * (args.degree as u64 + 5), 4 * (args.degree as u64 + 6) + 1)?;
    let e = |e: Error| e.to_string();
    let g = random_graph(n, args.degree, args.seed);
    let want = cpu_bfs(&g, 0);
    let mut dev = OnDevice::new(&gpu, &g, 0).map_err(e)?;
    let mut alg = Algorithms::new(&gpu);
    let levels = want.iter().filter(|&&d| d != UNREACHED).max().map_or(0, |&d| d + 1);
    let reached = want.iter().filter(|&&d| d != UNREACHED).count();
    println!(
        "bfs on {}: {n} vertices, {} edges ({} each, random); from vertex 0, {reached} reached in {levels} levels",
        gpu.info.name,
        g.columns.len(),
        args.degree
    );
    let mut pass = true;
    let blocks = dev.one_launch(0).map_err(e)?;
    pass &=
        check(&format!("one cooperative launch of {blocks} blocks of {THREADS}, the frontier by grid.select_items"), &gpu.read(&dev.dist).map_err(e)?, &want);
    let launched = dev.per_level(&mut alg, 0).map_err(e)?;
    pass &= check(&format!("a launch per level ({launched}), the frontier by select_flagged"), &gpu.read(&dev.dist).map_err(e)?, &want);
    if args.bench && pass {
        let time = |f: &mut dyn FnMut() -> Result<u32>| -> Result<f64> {
            let start = Instant::now();
            f()?;
            Ok(start.elapsed().as_secs_f64() * 1e3)
        };
        let dev = std::cell::RefCell::new(dev);
        let p = paired(args.rounds, &mut || time(&mut || dev.borrow_mut().per_level(&mut alg, 0)), &mut || time(&mut || dev.borrow_mut().one_launch(0)))
            .map_err(e)?;
        let (ratio, lo, hi) = p.ratio;
        // A missed target is a measurement, printed, not a failed run.
        let verdict = if lo >= 1.5 {
            "met (>= 1.5)"
        } else if hi < 1.5 {
            "MISSED (< 1.5)"
        } else {
            "inside the noise of 1.5"
        };
        println!(
            "time from the first launch to the distances on the device, median of {} paired rounds: one launch {:.3} ms, a launch per level {:.3} ms: the one launch is {ratio:.2}x faster [{lo:.2}, {hi:.2}] {verdict}",
            args.rounds, p.theirs_ms, p.ours_ms
        );
    }
    Ok(pass)
}

/// Whether `got` equals the CPU's distances, saying so.
fn check(what: &str, got: &[u32], want: &[u32]) -> bool {
    match got.iter().zip(want).position(|(a, b)| a != b) {
        None => {
            println!("{what}: every vertex's distance equals the CPU's: pass");
            true
        }
        Some(v) => {
            println!("{what}: FAIL at vertex {v}: distance {} where the CPU's BFS has {}", got[v], want[v]);
            false
        }
    }
}

fn main() -> ExitCode {
    program::exit(run(&Args::parse()))
}
