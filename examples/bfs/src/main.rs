//! A level-synchronous breadth-first search in one cooperative launch
//! (`kernels/`), on a random graph, checked vertex by vertex against a BFS
//! on the CPU: on the emulated T4 (`--emulate`) or a CUDA GPU, where the
//! default graph has 2^22 vertices.

use bfs_kernels::{BFS, UNREACHED};
use cg_launcher::device::{Buffer, Gpu};
use cg_launcher::error::{Error, Result};
use cg_launcher::launch::ensure_len;
use clap::Parser;
use example_bench::program;
use std::collections::VecDeque;
use std::process::ExitCode;

// Links the kernels' crate, whose PTX and kernels the launcher finds by name.
use bfs_kernels as _;

/// Threads per block.
const THREADS: u32 = 256;

#[derive(Parser)]
#[command(name = "bfs", about = "A breadth-first search in one cooperative launch, level by level, checked against the CPU's")]
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

/// The GPU's BFS from `source`: a safe wrapper that checks the graph and
/// the buffers against the kernel's contract, sizes the grid from the
/// kernel's own occupancy, and makes the one `unsafe` launch. Returns the
/// distances and the blocks launched.
fn gpu_bfs(gpu: &Gpu, g: &Graph, source: usize) -> Result<(Vec<u32>, u32)> {
    let n = g.offsets.len() - 1;
    let edges = g.columns.len();
    // The contract, checked here once: ascending offsets ending at the
    // columns' length, every column a vertex, the source a vertex.
    let well_formed = g.offsets[0] == 0
        && g.offsets.windows(2).all(|w| w[0] <= w[1])
        && g.offsets[n] as usize == edges
        && g.columns.iter().all(|&u| (u as usize) < n)
        && source < n
        && u32::try_from(n).is_ok_and(|n| n < UNREACHED);
    if !well_formed {
        return Err(Error::Caller("the graph is not a CSR graph of n vertices with the source among them".into()));
    }
    let kernel = gpu.cooperative_kernel(&BFS)?;
    let blocks = kernel.limits(THREADS)?.capacity();
    let launch = kernel.configure(blocks, THREADS)?;
    let offsets = gpu.upload(&g.offsets)?;
    let columns = gpu.upload(&g.columns)?;
    let mut dist: Buffer<u32> = gpu.zeros(n)?;
    gpu.fill(&mut dist, UNREACHED)?;
    let mut frontier: Buffer<u32> = gpu.zeros(2 * n)?;
    let mut counts: Buffer<u32> = gpu.zeros(n + 1)?;
    ensure_len(BFS.name(), "frontier", 2 * n, frontier.len())?;
    ensure_len(BFS.name(), "counts", n + 1, counts.len())?;
    // SAFETY: offsets holds n + 1 ascending offsets ending at columns'
    // length, each column below n, source below n (checked above); dist
    // holds n UNREACHED, frontier 2n, counts n + 1 zeros (made above).
    unsafe { launch.launch((&offsets.slice(..), &columns.slice(..), dist.slice_mut(..), frontier.slice_mut(..), counts.slice_mut(..), source as u32, n))? };
    Ok((gpu.read(&dist)?, blocks))
}

fn run(args: &Args) -> std::result::Result<bool, String> {
    let gpu = program::device(args.emulate)?;
    let n = args.n.unwrap_or(if gpu.info.emulated { 1 << 14 } else { 1 << 22 });
    if n == 0 {
        return Err("--n 0: a graph needs at least one vertex".into());
    }
    if args.degree == 0 || n.checked_mul(args.degree).is_none_or(|e| e > u32::MAX as usize) {
        return Err(format!("--n {n} --degree {}: the edges must number 1 to {}", args.degree, u32::MAX));
    }
    program::memory_fits(&gpu, n, 4 * (args.degree as u64 + 4), 4 * (args.degree as u64 + 5))?;
    let g = random_graph(n, args.degree, args.seed);
    let want = cpu_bfs(&g, 0);
    let (got, blocks) = gpu_bfs(&gpu, &g, 0).map_err(|e| e.to_string())?;
    let levels = want.iter().filter(|&&d| d != UNREACHED).max().map_or(0, |&d| d + 1);
    let reached = want.iter().filter(|&&d| d != UNREACHED).count();
    println!(
        "bfs on {}: {n} vertices, {} edges ({} each, random), {blocks} cooperative blocks of {THREADS}; from vertex 0, {reached} reached in {levels} levels",
        gpu.info.name,
        g.columns.len(),
        args.degree
    );
    match got.iter().zip(&want).position(|(a, b)| a != b) {
        None => {
            println!("every vertex's distance equals the CPU's: pass");
            Ok(true)
        }
        Some(v) => {
            println!("FAIL at vertex {v}: distance {} where the CPU's BFS has {}", got[v], want[v]);
            Ok(false)
        }
    }
}

fn main() -> ExitCode {
    program::exit(run(&Args::parse()))
}
