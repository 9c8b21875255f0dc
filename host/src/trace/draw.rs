//! A traced launch as a picture: one row per place a block can hold (an SM's
//! share, on a GPU or the emulated one), each block a bar from
//! its start to its end, coloured by phase, and the moment the grid barrier
//! completes drawn across every row.

use crate::error::{Error, Result};
use crate::observe::{BlockTrace, LaunchTrace, TraceUnit};
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

const WORK: RGBColor = RGBColor(0, 114, 178);
const WAITING: RGBColor = RGBColor(230, 159, 0);
const AFTER: RGBColor = RGBColor(0, 158, 115);
/// Every other block on a row, so that waves of blocks show where they meet.
const WORK_NEXT: RGBColor = RGBColor(86, 180, 233);
/// Waiting at the cluster barrier.
const AT_CLUSTER: RGBColor = RGBColor(204, 121, 167);

/// A cluster launch's rows: one per block, in block order, so that a
/// cluster's blocks sit together.
fn cluster_rows(trace: &[BlockTrace]) -> (Vec<u32>, u32) {
    let mut order: Vec<usize> = (0..trace.len()).collect();
    order.sort_by_key(|&i| trace[i].block);
    let mut row = vec![0; trace.len()];
    for (r, i) in order.into_iter().enumerate() {
        row[i] = r as u32;
    }
    (row, trace.len() as u32)
}

/// The row each block is drawn on: blocks of one place (an SM) share as
/// few rows as never overlap, places in order. Returns the rows and their count.
pub fn rows(trace: &[BlockTrace]) -> (Vec<u32>, u32) {
    let mut by_place: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, b) in trace.iter().enumerate() {
        by_place.entry(b.place).or_default().push(i);
    }
    let mut row = vec![0; trace.len()];
    let mut first = 0;
    for blocks in by_place.values_mut() {
        blocks.sort_by_key(|&i| trace[i].start);
        // Each lane's end; a block goes in the first lane free at its start.
        let mut lanes: Vec<u64> = Vec::new();
        for &i in blocks.iter() {
            let b = &trace[i];
            let end = b.end.or(b.leave).or(b.arrive).unwrap_or(u64::MAX);
            let lane = match lanes.iter().position(|&e| e <= b.start) {
                Some(l) => l,
                None => {
                    lanes.push(0);
                    lanes.len() - 1
                }
            };
            lanes[lane] = end;
            row[i] = first + lane as u32;
        }
        first += lanes.len() as u32;
    }
    (row, first)
}

/// The smallest of 1, 2, 5, 10, 20, 50, ... that labels `count` places
/// with at most `labels` labels.
fn round_step(count: u32, labels: u32) -> u32 {
    let mut scale = 1;
    loop {
        for m in [1, 2, 5] {
            if count.div_ceil(m * scale) <= labels {
                return m * scale;
            }
        }
        scale *= 10;
    }
}

/// The line under the title: the device, and how many blocks ever started.
fn caption(t: &LaunchTrace, device: &str) -> String {
    let started = t.trace.len();
    let never = t.blocks as usize - started;
    let device = device.split(" (").next().unwrap_or(device);
    let mut c = format!("{device}: {started} of {} of {} threads started", crate::text::plural(t.blocks, "block", "blocks"), t.threads_per_block);
    if never > 0 {
        c += &format!("; {never} never did: every place is held by a block waiting at grid.sync()");
    }
    c
}

/// Writes the picture of `t` to `path`.
pub fn svg(t: &LaunchTrace, title: &str, device: &str, path: &Path) -> Result<()> {
    draw(t, title, device, path).map_err(|why| Error::Io { path: path.display().to_string(), error: std::io::Error::other(why) })
}

fn draw(t: &LaunchTrace, title: &str, device: &str, path: &Path) -> Result<(), String> {
    let fail = |e: &dyn std::fmt::Display| e.to_string();
    let b = &t.trace;
    let t0 = b.iter().map(|b| b.start).min().unwrap_or(0);
    let last = b.iter().flat_map(|b| [Some(b.start), b.arrive, b.leave, b.end]).flatten().max().unwrap_or(t0);
    let unfinished = b.iter().any(|b| b.end.is_none());
    // Room on the right for bars that never end.
    let x1 = ((last - t0) as f64 * if unfinished { 1.15 } else { 1.02 }).max(1.0);
    let (row, n_rows) = if t.cluster.is_some() { cluster_rows(b) } else { rows(b) };
    // The place (SM or slot) each row belongs to, for the axis labels; the
    // block, in a cluster launch.
    let mut place_of_row = vec![0u32; n_rows as usize];
    for (b, &r) in b.iter().zip(&row) {
        place_of_row[r as usize] = if t.cluster.is_some() { b.block } else { b.place };
    }
    let step = round_step(place_of_row.iter().copied().max().unwrap_or(0) + 1, 12);
    let height = (n_rows + 220).clamp(480, 1400);
    let (unit, mut place) = match t.unit {
        TraceUnit::Nanoseconds => ("time since the first block started, ns (%globaltimer)", "SM (%smid), one row per block it held at once"),
        TraceUnit::EmulatorSteps => {
            ("logical time: memory accesses each block made, resident blocks in step", "emulated SM, one row per block it held at once")
        }
    };

    if let Some(k) = t.cluster {
        place = if k == 1 { "block, one row each" } else { "block, one row each (a cluster's blocks together)" };
    }
    let root = SVGBackend::new(path, (1200, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let root = root.titled(title, ("sans-serif", 20)).map_err(|e| fail(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .caption(caption(t, device), ("sans-serif", 14))
        .build_cartesian_2d(0f64..x1, 0f64..n_rows.max(1) as f64)
        .map_err(|e| fail(&e))?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc(unit)
        .y_desc(place)
        // A key point per row, so that each label can sit on the first row of
        // its place; only places on a round step get one, the rest are blank.
        .y_labels(n_rows as usize + 1)
        .set_tick_mark_size(LabelAreaPosition::Left, 0)
        .y_label_formatter(&|y| {
            let r = (n_rows as f64 - y).floor() as usize;
            match place_of_row.get(r) {
                Some(&p) if p % step == 0 && (r == 0 || place_of_row[r - 1] != p) => p.to_string(),
                _ => String::new(),
            }
        })
        .x_label_formatter(&|x| format!("{x:.0}"))
        .draw()
        .map_err(|e| fail(&e))?;

    let x = |v: u64| (v - t0) as f64;
    let y = |r: u32| ((n_rows - r - 1) as f64, (n_rows - r) as f64 - 0.15);
    let bar = |from: f64, to: f64, r: u32, color: RGBColor| {
        let (y0, y1) = y(r);
        Rectangle::new([(from, y0), (to.max(from + x1 * 0.001), y1)], color.filled())
    };
    let mut work = Vec::new();
    let mut waiting = Vec::new();
    let mut after = Vec::new();
    let mut at_cluster = Vec::new();
    let mut releases = Vec::new();
    let mut on_row = vec![0u32; n_rows as usize];
    for (b, &r) in b.iter().zip(&row) {
        on_row[r as usize] += 1;
        let shade = if on_row[r as usize] % 2 == 1 { WORK } else { WORK_NEXT };
        if let (Some(k), Some(ca)) = (t.cluster, b.cluster_arrive) {
            // Shaded by cluster; the wait at the cluster barrier; its release
            // drawn once per cluster, across the cluster's rows.
            let shade = if (b.block / k) % 2 == 0 { WORK } else { WORK_NEXT };
            let cl = b.cluster_leave.map_or(x1, x);
            work.push(bar(x(b.start), x(ca), r, shade));
            at_cluster.push(bar(x(ca), cl, r, AT_CLUSTER));
            if b.block % k == 0 && b.cluster_leave.is_some() {
                let (y0, _) = y(r + k - 1);
                let (_, y1) = y(r);
                releases.push(PathElement::new(vec![(cl, y0), (cl, y1)], BLACK.stroke_width(1)));
            }
            match (b.arrive, b.leave, b.end) {
                (Some(a), leave, end) => {
                    work.push(bar(cl, x(a), r, shade));
                    waiting.push(bar(x(a), leave.map_or(x1, x), r, WAITING));
                    if let (Some(l), Some(e)) = (leave, end) {
                        after.push(bar(x(l), x(e), r, AFTER));
                    }
                }
                (None, _, end) => work.push(bar(cl, end.map_or(x1, x), r, shade)),
            }
            continue;
        }
        match (b.arrive, b.leave, b.end) {
            (Some(a), leave, end) => {
                work.push(bar(x(b.start), x(a), r, WORK));
                waiting.push(bar(x(a), leave.map_or(x1, x), r, WAITING));
                if let (Some(l), Some(e)) = (leave, end) {
                    after.push(bar(x(l), x(e), r, AFTER));
                }
            }
            (None, _, end) => work.push(bar(x(b.start), end.map_or(x1, x), r, shade)),
        }
    }
    let has_barrier = !waiting.is_empty();
    let legend = |c: RGBColor| move |(x, y): (i32, i32)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], c.filled());
    chart
        .draw_series(work)
        .map_err(|e| fail(&e))?
        .label(if !at_cluster.is_empty() {
            "working (shades alternate cluster by cluster)"
        } else if has_barrier {
            "before grid.sync(): the grid-stride loop and block sum"
        } else {
            "the whole kernel (shades alternate block by block on a row: the waves)"
        })
        .legend(legend(WORK));
    if !at_cluster.is_empty() {
        chart
            .draw_series(at_cluster)
            .map_err(|e| fail(&e))?
            .label("waiting at the last cluster.sync(): the cluster waits while rank 0 reads its blocks' shared memory")
            .legend(legend(AT_CLUSTER));
        chart
            .draw_series(releases)
            .map_err(|e| fail(&e))?
            .label("its cluster's last block arrives: cluster.sync() completes for that cluster")
            .legend(|(x, y)| PathElement::new(vec![(x + 8, y - 6), (x + 8, y + 6)], BLACK.stroke_width(1)));
    }
    if has_barrier {
        chart.draw_series(waiting).map_err(|e| fail(&e))?.label("waiting at grid.sync()").legend(legend(WAITING));
        // Keyed only where some block got past the barrier (not in a deadlock).
        if !after.is_empty() {
            chart.draw_series(after).map_err(|e| fail(&e))?.label("after grid.sync() (block 0: the second stage)").legend(legend(AFTER));
        }
        let all_arrived = b.len() as u32 == t.blocks && b.iter().all(|b| b.arrive.is_some());
        if all_arrived && let Some(completes) = b.iter().filter_map(|b| b.arrive).max() {
            let cx = x(completes);
            chart
                .draw_series(std::iter::once(PathElement::new(vec![(cx, 0.0), (cx, n_rows as f64)], BLACK.stroke_width(2))))
                .map_err(|e| fail(&e))?
                .label("the last block arrives: grid.sync() completes for all")
                .legend(|(x, y)| PathElement::new(vec![(x + 8, y - 6), (x + 8, y + 6)], BLACK.stroke_width(2)));
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(|e| fail(&e))?;
    root.present().map_err(|e| fail(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(block: u32, place: u32, start: u64, end: u64) -> BlockTrace {
        BlockTrace { block, place, start, arrive: None, leave: None, cluster_arrive: None, cluster_leave: None, end: Some(end) }
    }

    #[test]
    fn blocks_that_overlap_on_one_place_get_rows_of_their_own_and_later_ones_reuse_them() {
        let t = [block(0, 0, 0, 10), block(1, 0, 5, 15), block(2, 0, 10, 20), block(3, 1, 0, 10)];
        let (rows, n) = rows(&t);
        assert_eq!(rows, vec![0, 1, 0, 2]);
        assert_eq!(n, 3);
    }

    #[test]
    fn place_labels_fall_on_round_steps() {
        assert_eq!(round_step(132, 12), 20, "the H200's 132 SMs: 0, 20, ... 120");
        assert_eq!(round_step(40, 12), 5, "the T4's 40");
        assert_eq!(round_step(8, 12), 1);
        assert_eq!(round_step(1056, 12), 100);
    }
}
