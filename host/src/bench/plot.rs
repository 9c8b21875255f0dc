//! The bandwidth plot: effective read bandwidth against n, one line per
//! variant, with the copy ceiling drawn.

use super::Point;
use plotters::prelude::*;
use std::path::Path;

/// Writes an SVG of `points` to `path`.
pub fn bandwidth_svg(points: &[Point], title: &str, path: &Path) -> Result<(), String> {
    let mut variants: Vec<&str> = Vec::new();
    for p in points {
        if !variants.contains(&p.variant.as_str()) {
            variants.push(&p.variant);
        }
    }
    let n_max = points.iter().map(|p| p.n).max().unwrap_or(2) as f64;
    let n_min = points.iter().map(|p| p.n).min().unwrap_or(1).max(1) as f64;
    let top = points.iter().map(|p| p.plotted_gb_s()).fold(1.0, f64::max) * 1.1;

    let root = SVGBackend::new(path, (1100, 700)).into_drawing_area();
    let fail = |e: &dyn std::fmt::Display| format!("plot {}: {e}", path.display());
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d((n_min..n_max).log_scale(), 0.0..top)
        .map_err(|e| fail(&e))?;
    chart
        .configure_mesh()
        .x_desc("n (floats), log scale")
        .y_desc("GB/s (bytes read; the copy counts read + write)")
        .x_label_formatter(&|n| format!("2^{:.0}", n.log2()))
        .draw()
        .map_err(|e| fail(&e))?;
    for (i, variant) in variants.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let series: Vec<(f64, f64)> =
            points.iter().filter(|p| p.variant == *variant).map(|p| (p.n as f64, p.plotted_gb_s())).collect();
        let style = if variant.starts_with("copy") { color.stroke_width(3) } else { color.stroke_width(2) };
        chart
            .draw_series(LineSeries::new(series.clone(), style))
            .map_err(|e| fail(&e))?
            .label(*variant)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(series.into_iter().map(|xy| Circle::new(xy, 3, color.filled()))).map_err(|e| fail(&e))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| fail(&e))?;
    root.present().map_err(|e| fail(&e))
}
