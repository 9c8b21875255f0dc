//! What one grid barrier costs (`bench --barrier`, and part of every
//! `bench`): this project's `grid.sync()`, NVIDIA's `cg::this_grid().sync()`
//! built by nvcc and launched through the same launch path, one more kernel
//! launch of the same grid and one more graph node, at 1 block per SM, from
//! half to full residency by eighths (256 threads, where the two barriers
//! cross), at 1 and 2 blocks per SM (1,024), and at 3/8, half and full
//! residency at 32 threads, the many-block grids.

use super::cpp;
use crate::device::{ArgValue, Gpu};
use crate::error::Result;
use crate::launch::RawKernel;
use crate::launch::Shape;
use crate::launch::prelude::*;
use crate::text::plural;
use crate::timing::{BarrierCost, BarrierLoop, barrier_cost};
use cg_kernel::cg::barrier::{WATCHED_ABOVE_BLOCKS, is_watched};
use std::fmt::Write;

/// The grids measured: (blocks, threads per block).
pub fn grids(gpu: &Gpu) -> Result<Vec<(u32, u32)>> {
    let def = crate::kernels().grid_sync_loop;
    let kernel = gpu.cooperative_kernel(&def)?;
    let sms = gpu.info.sms;
    let full = |threads| Ok::<u32, crate::error::Error>(kernel.limits(threads)?.capacity());
    let (f256, f1024, f32) = (full(256)?, full(1024)?, full(32)?);
    let eighths = |k: u32| (f256 * k / 8, 256);
    let mut g =
        vec![(sms, 256), eighths(4), eighths(5), eighths(6), eighths(7), (f256, 256), (sms, 1024), (f1024, 1024), (f32 * 3 / 8, 32), (f32 / 2, 32), (f32, 32)];
    g.retain(|&(b, _)| b > 0);
    g.dedup();
    Ok(g)
}

/// `k` barriers back to back by NVIDIA's `gridSyncLoop`, launched
/// cooperatively on `shape`.
fn nvidia_loop<'a>(f: &'a RawKernel<'_>, shape: Shape) -> impl FnMut(u32) -> Result<()> + 'a {
    // SAFETY: it takes one 64-bit count and touches no memory but its grid
    // barrier's; it is launched cooperatively, on a grid the launch checks
    // against its capacity.
    move |k| unsafe { Ok(f.launch(shape, true, &[ArgValue::number(k as u64)])?) }
}

/// Every grid of [`grids`], with NVIDIA's barrier where nvcc builds it (the
/// second value says why it is missing), and the barrier the launch did not
/// choose (`grid_sync_loop`'s other entry, with barrier memory of its own as
/// any launch of it has).
pub fn run(gpu: &Gpu) -> Result<(Vec<BarrierCost>, Option<String>)> {
    let built = cpp::build_barrier();
    let module = built.as_ref().ok().map(|b| gpu.load_module_file(&b.cubin)).transpose()?;
    let nvidia = module.as_ref().map(|m| gpu.raw_kernel_in(m, "gridSyncLoop")).transpose()?;
    let ours = gpu.cooperative_kernel(&crate::kernels().grid_sync_loop)?;
    let mut out = Vec::new();
    for (blocks, threads) in grids(gpu)? {
        let shape = Shape::new(blocks, threads, 0);
        let mut theirs = nvidia.as_ref().map(|f| nvidia_loop(f, shape));
        let launch = ours.configure(blocks, threads)?;
        let mut other = (!gpu.info.emulated).then_some(|k| launch.barriers_by(k, !is_watched(blocks)));
        out.push(barrier_cost(gpu, blocks, threads, theirs.as_mut().map(|f| f as BarrierLoop), other.as_mut().map(|f| f as BarrierLoop))?);
    }
    Ok((out, built.err()))
}

/// The table as text.
pub fn render(rows: &[BarrierCost], why_no_nvidia: Option<&str>) -> String {
    let mut o = String::from(
        "\nWhat one grid barrier costs (µs; K = 2,000 barriers in one cooperative launch and none, interleaved, median of 7 each; a launch or graph node: 64 queued behind a hold, GPU time)\n",
    );
    let _ = writeln!(
        o,
        "  {:>7} {:>7}  {:>10} {:>10} {:>7}  {:>11}  {:>16} {:>11}",
        "blocks", "threads", "grid.sync", "NVIDIA cg", "ratio", "other entry", "kernel boundary", "graph node"
    );
    let or_dash = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"));
    for r in rows {
        let ratio = r.nvidia_us.map(|n| r.grid_sync_us / n);
        let _ = writeln!(
            o,
            "  {:>7} {:>7}  {:>10.3} {:>10} {:>7}  {:>11}  {:>16.3} {:>11.3}",
            r.blocks,
            r.threads_per_block,
            r.grid_sync_us,
            or_dash(r.nvidia_us),
            or_dash(ratio),
            or_dash(r.other_barrier_us),
            r.kernel_boundary_us,
            r.graph_node_us
        );
    }
    let _ = writeln!(
        o,
        "  (other entry: the barrier the launch did not choose at that grid, the watched one up to {WATCHED_ABOVE_BLOCKS} blocks and the single word above)"
    );
    if let Some(why) = why_no_nvidia {
        let _ = writeln!(o, "  (NVIDIA's barrier not measured: {why})");
    }
    let _ = writeln!(o, "  ({} measured)", plural(rows.len() as u32, "grid", "grids"));
    o
}
