//! The benchmark's picture: time per sum against n on log-log axes (the
//! launch floor shows as the flat left end), and each sum's read bandwidth as
//! a fraction of the copy's, in two panels sharing the n axis.

use super::{Point, Variant};
use crate::error::{Error, Result};
use plotters::prelude::*;
use std::path::Path;

/// Colours that can be told apart (Okabe-Ito), one per variant, in legend order.
const STYLE: [(Variant, RGBColor); 9] = [
    // The three fast variants the choice is made from appear in the tables only.
    (Variant::RustTwoLaunches, RGBColor(0, 114, 178)),
    (Variant::RustCooperative, RGBColor(86, 180, 233)),
    (Variant::RustFast, RGBColor(0, 0, 0)),
    (Variant::CppTwoLaunches, RGBColor(213, 94, 0)),
    (Variant::CppCooperative, RGBColor(230, 159, 0)),
    (Variant::Cub, RGBColor(0, 158, 115)),
    (Variant::NvccKernelsTwoLaunches, RGBColor(204, 121, 167)),
    (Variant::NvccKernelsCooperative, RGBColor(153, 153, 153)),
    (Variant::Copy, RGBColor(240, 228, 66)),
];

/// The points of variant `v` at powers of two (the lines), and at other sizes
/// (the lesson's 4,194,915: drawn as marked points off the lines, since its
/// input rotation and copy differ from its neighbour 2^22's).
/// Points as (log2 n, y).
type Xy = Vec<(f64, f64)>;

fn series(points: &[Point], v: Variant, y: impl Fn(&Point) -> Option<f64>) -> (Xy, Xy) {
    let mut s: Vec<(u64, f64, f64)> = points.iter().filter(|p| p.variant == v).filter_map(|p| Some((p.n, (p.n as f64).log2(), y(p)?))).collect();
    s.sort_by(|a, b| a.1.total_cmp(&b.1));
    let (line, off): (Vec<_>, Vec<_>) = s.into_iter().partition(|(n, _, _)| n.is_power_of_two());
    (line.into_iter().map(|(_, x, y)| (x, y)).collect(), off.into_iter().map(|(_, x, y)| (x, y)).collect())
}

/// Writes the two-panel SVG of `points` to `path`.
pub fn svg(points: &[Point], title: &str, path: &Path) -> Result<()> {
    draw(points, title, path).map_err(|why| Error::Io { path: path.display().to_string(), error: std::io::Error::other(why) })
}

fn draw(points: &[Point], title: &str, path: &Path) -> Result<(), String> {
    let fail = |e: &dyn std::fmt::Display| e.to_string();
    let log2 = |p: &Point| (p.n as f64).log2();
    let (x0, x1) = points.iter().map(log2).fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let (x0, x1) = if x0 > x1 { (10.0, 28.0) } else { (x0.floor(), x1.ceil()) };
    let us = |p: &Point| p.queued.median_ms * 1e3;
    let (t0, t1) = points.iter().map(us).fold((f64::MAX, 0.0f64), |(a, b), t| (a.min(t), b.max(t)));
    let (t0, t1) = if t0 > t1 { (1.0, 10.0) } else { (t0 * 0.8, t1 * 1.25) };
    let top = points.iter().filter_map(|p| p.of_copy).fold(1.1f64, f64::max) * 1.05;

    let root = SVGBackend::new(path, (1100, 1000)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let root = root.titled(title, ("sans-serif", 22)).map_err(|e| fail(&e))?;
    let (upper, lower) = root.split_vertically(560);
    let x_label = |x: &f64| format!("2^{:.0}", x);

    let mut time = ChartBuilder::on(&upper)
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, (t0..t1).log_scale())
        .map_err(|e| fail(&e))?;
    time.configure_mesh()
        .x_labels((x1 - x0) as usize + 1)
        .x_label_formatter(&x_label)
        .x_desc("n, floats summed")
        .y_desc("GPU time per sum, µs (log scale)")
        .draw()
        .map_err(|e| fail(&e))?;
    let mut bandwidth =
        ChartBuilder::on(&lower).margin(15).x_label_area_size(40).y_label_area_size(70).build_cartesian_2d(x0..x1, 0.0..top).map_err(|e| fail(&e))?;
    bandwidth
        .configure_mesh()
        .x_labels((x1 - x0) as usize + 1)
        .x_label_formatter(&x_label)
        .x_desc("n, floats summed")
        .y_desc("read bandwidth / copy's read + write")
        .draw()
        .map_err(|e| fail(&e))?;

    let mut marked_lesson = false;
    for (v, color) in STYLE {
        let width = if v == Variant::RustFast || v == Variant::Cub { 3 } else { 2 };
        let (t, t_off) = series(points, v, |p| Some(us(p)));
        if t.is_empty() && t_off.is_empty() {
            continue;
        }
        time.draw_series(LineSeries::new(t.clone(), color.stroke_width(width)))
            .map_err(|e| fail(&e))?
            .label(v.label())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(3)));
        time.draw_series(t.into_iter().map(|xy| Circle::new(xy, 3, color.filled()))).map_err(|e| fail(&e))?;
        let (b, b_off) = series(points, v, |p| if v == Variant::Copy { Some(1.0) } else { p.of_copy });
        bandwidth.draw_series(LineSeries::new(b.clone(), color.stroke_width(width))).map_err(|e| fail(&e))?;
        bandwidth.draw_series(b.into_iter().map(|xy| Circle::new(xy, 3, color.filled()))).map_err(|e| fail(&e))?;
        // Sizes off the powers of two: a hollow diamond each, not on the line.
        let diamond = move |(x, y): (f64, f64)| {
            EmptyElement::at((x, y))
                + Polygon::new(vec![(0, -6), (6, 0), (0, 6), (-6, 0)], color.filled())
                + Polygon::new(vec![(0, -3), (3, 0), (0, 3), (-3, 0)], WHITE.filled())
        };
        let has_off = !t_off.is_empty();
        let lesson = time.draw_series(t_off.into_iter().map(diamond)).map_err(|e| fail(&e))?;
        if has_off && !marked_lesson {
            marked_lesson = true;
            lesson.label("◇ the lesson's n = 4,194,915 (off the lines)").legend(|(x, y)| {
                EmptyElement::at((x + 10, y))
                    + Polygon::new(vec![(0, -6), (6, 0), (0, 6), (-6, 0)], BLACK.filled())
                    + Polygon::new(vec![(0, -3), (3, 0), (0, 3), (-3, 0)], WHITE.filled())
            });
        }
        bandwidth.draw_series(b_off.into_iter().map(diamond)).map_err(|e| fail(&e))?;
    }
    time.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| fail(&e))?;
    root.present().map_err(|e| fail(&e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::Stats;

    #[test]
    fn the_plot_is_an_svg_with_a_line_per_variant_and_ticks_at_powers_of_two() {
        let stats = |ms: f64| Stats::of(&[ms, ms, ms]).unwrap();
        let mut points = Vec::new();
        for n in super::super::default_sizes(10, 14) {
            for (v, ms) in [(Variant::RustCooperative, 0.010), (Variant::RustFast, 0.008), (Variant::Copy, 0.007)] {
                points.push(Point::new(v, n, 1, 1, 256, stats(ms), stats(ms), Some(true)));
            }
        }
        super::super::relate_to_copy(&mut points);
        let path = std::env::temp_dir().join(format!("bench-plot-{}.svg", std::process::id()));
        svg(&points, "synthetic", &path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).ok();
        let doc = roxmltree::Document::parse(&text).expect("well-formed XML");
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        for label in [Variant::RustCooperative.label(), Variant::RustFast.label(), Variant::Copy.label(), "synthetic", "2^10", "2^12", "2^14"] {
            assert!(text.contains(label), "no {label} in the plot");
        }
        assert!(!text.contains("2^11.5"), "ticks fall on powers of two");
        // Two panels: three time lines and three bandwidth lines.
        assert!(doc.descendants().filter(|n| n.tag_name().name() == "polyline").count() >= 6);
    }
}
