//! `validate --plot`: predicted against measured, on logarithmic axes when the values span
//! more than a decade, with the y = x line and a ±10% band; time and, when measured, energy
//! in the scope that was measured (node, CPU or GPU energy). The points farthest from y = x
//! are labelled with their configuration, where a label finds a free place.

use super::ticks::{self, Axis};
use super::{DrawResult, ensure_font, err};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// `(measured, predicted)` pairs of one quantity, with its name and tick labels.
pub struct Panel<'a> {
    /// `time`, or the energy measured (`node energy`, `GPU energy`).
    pub name: &'a str,
    /// The pairs.
    pub pairs: Vec<(f64, f64)>,
    /// Each pair's configuration, as the chart labels it.
    pub labels: Vec<String>,
    /// Tick label of a value.
    pub label: fn(f64) -> String,
}

fn draw_panel<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, p: &Panel<'_>) -> DrawResult {
    let all = || p.pairs.iter().flat_map(|&(m, q)| [m, q]);
    let ax = Axis::with_max_ticks(all(), None, 7);
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("{}: predicted against measured", p.name),
            ("sans-serif", 14),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(65)
        .build_cartesian_2d(ticks::Coord::from(&ax), ticks::Coord::from(&ax))
        .map_err(err)?;
    let (a1, a2) = (ax.clone(), ax.clone());
    let label = p.label;
    let fx = move |x: &f64| label(a1.unmap(*x));
    let fy = move |y: &f64| label(a2.unmap(*y));
    chart
        .configure_mesh()
        .x_desc(format!("measured {}", p.name))
        .y_desc(format!("predicted {}", p.name))
        .x_label_formatter(&fx)
        .y_label_formatter(&fy)
        .label_style(("sans-serif", 11))
        .bold_line_style(BLACK.mix(0.15))
        .draw()
        .map_err(err)?;
    let r = ax.range();
    // The +-10% band and y = x, sampled along the axis (straight on either scale).
    let line = |f: f64| -> Vec<(f64, f64)> {
        (0..=50)
            .map(|i| {
                let x = r.start + (r.end - r.start) * f64::from(i) / 50.0;
                (x, ax.map(ax.unmap(x) * f))
            })
            .collect()
    };
    let mut band = line(0.9);
    band.extend(line(1.1).into_iter().rev());
    chart
        .draw_series(std::iter::once(Polygon::new(band, BLUE.mix(0.12).filled())))
        .map_err(err)?
        .label("±10%")
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], BLUE.mix(0.2).filled()));
    chart
        .draw_series(LineSeries::new(line(1.0), BLACK.stroke_width(1)))
        .map_err(err)?
        .label("y = x")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], BLACK.stroke_width(1)));
    chart
        .draw_series(
            p.pairs
                .iter()
                .map(|&(m, q)| Circle::new((ax.map(m), ax.map(q)), 3, RED.filled())),
        )
        .map_err(err)?
        .label("a measured configuration")
        .legend(|(x, y)| Circle::new((x + 8, y), 3, RED.filled()));
    label_points(area, &chart, p, &ax)?;
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", 11))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(err)
}

/// Most points labelled in a panel.
const MAX_LABELS: usize = 12;

/// Labels the points farthest from y = x first, each where it overlaps nothing.
fn label_points<DB: DrawingBackend, X, Y>(
    area: &DrawingArea<DB, Shift>,
    chart: &ChartContext<'_, DB, Cartesian2d<X, Y>>,
    p: &Panel<'_>,
    ax: &Axis,
) -> DrawResult
where
    X: plotters::coord::ranged1d::Ranged<ValueType = f64>,
    Y: plotters::coord::ranged1d::Ranged<ValueType = f64>,
{
    let style = ("sans-serif", 10).into_font().color(&BLACK);
    let px: Vec<(i32, i32)> = p
        .pairs
        .iter()
        .map(|&(m, q)| chart.backend_coord(&(ax.map(m), ax.map(q))))
        .collect();
    let (x, y) = chart.plotting_area().get_base_pixel();
    let (w, h) = chart.plotting_area().dim_in_pixel();
    let mut placer = super::labels::Placer::new((x, y, x + w as i32, y + h as i32));
    for &q in &px {
        placer.block_point(q, 4);
    }
    let mut order: Vec<usize> = (0..p.pairs.len()).collect();
    let off = |i: usize| (p.pairs[i].1 / p.pairs[i].0 - 1.0).abs();
    order.sort_by(|&a, &b| off(b).total_cmp(&off(a)));
    for &i in order.iter().take(MAX_LABELS) {
        let Some(text) = p.labels.get(i) else {
            continue;
        };
        let size = super::labels::room(area.estimate_text_size(text, &style).map_err(err)?);
        if let Some(at) = placer.place(px[i], size) {
            let at = (
                at.0 - area.get_base_pixel().0,
                at.1 - area.get_base_pixel().1,
            );
            area.draw(&Text::new(text.clone(), at, style.clone()))
                .map_err(err)?;
        }
    }
    Ok(())
}

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, panels: &[Panel<'_>]) -> DrawResult {
    ensure_font();
    root.fill(&WHITE).map_err(err)?;
    let areas = root.split_evenly((1, panels.len().max(1)));
    for (a, p) in areas.iter().zip(panels) {
        draw_panel(a, p)?;
    }
    root.present().map_err(err)
}

/// Writes the panels side by side to `path` (SVG or PNG by extension).
pub fn write_validation(path: &Path, panels: &[Panel<'_>]) -> Result<(), String> {
    let size = (520 * panels.len().max(1) as u32, 480);
    match super::format_of(path)? {
        super::Format::Svg => {
            let mut s = String::new();
            {
                let root = SVGBackend::with_string(&mut s, size).into_drawing_area();
                draw(&root, panels)?;
            }
            super::save_svg(path, &s)
        }
        super::Format::Png => {
            let png = super::png_bytes(size, |root| draw(root, panels))
                .map_err(|e| format!("{}: {e}", path.display()))?;
            super::save_bytes(path, &png)
        }
    }
}
