//! A small chart of the baseline's efficiencies against its core counts: TALP's measured
//! parallel efficiency (where attached) and POP's strong-scaling efficiency.

use super::ticks::{self, Axis};
use super::{DrawResult, ensure_font, err};
use plotters::prelude::*;

/// One core count: cores, TALP's parallel efficiency (if measured), POP scaling efficiency.
pub type TreePoint = (u32, Option<f64>, f64);

/// A named, coloured line of points.
type Series = (&'static str, RGBColor, Vec<(f64, f64)>);

/// The chart as SVG text (640 x 300).
pub fn trees_svg(points: &[TreePoint]) -> Result<String, String> {
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (640, 300)).into_drawing_area();
        draw(&root, points)?;
    }
    Ok(s)
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    points: &[TreePoint],
) -> DrawResult {
    ensure_font();
    root.fill(&WHITE).map_err(err)?;
    let cores = Axis::with_max_ticks(points.iter().map(|p| f64::from(p.0)), None, 8);
    let top = points
        .iter()
        .flat_map(|p| [p.1.unwrap_or(0.0), p.2])
        .fold(1.0f64, f64::max);
    let eff = Axis::from_zero(top, 6);
    let mut chart = ChartBuilder::on(root)
        .caption(
            "efficiency of the baseline against its core counts",
            ("sans-serif", 14),
        )
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(45)
        .build_cartesian_2d(
            ticks::Coord::from(&cores),
            ticks::Coord::linear(0.0, eff.hi * 1.03, eff.mapped_ticks()),
        )
        .map_err(err)?;
    let cx = cores.clone();
    let fmt_c = move |x: &f64| format!("{}", cx.unmap(*x).round());
    chart
        .configure_mesh()
        .x_desc("cores")
        .y_desc("efficiency")
        .x_label_formatter(&fmt_c)
        .y_label_formatter(&|y: &f64| format!("{y:.1}"))
        .label_style(("sans-serif", 11))
        .bold_line_style(BLACK.mix(0.15))
        .draw()
        .map_err(err)?;
    let series: [Series; 2] = [
        (
            "parallel efficiency (TALP, measured)",
            BLUE,
            points
                .iter()
                .filter_map(|p| p.1.map(|v| (cores.map(f64::from(p.0)), v)))
                .collect(),
        ),
        (
            "POP strong-scaling efficiency",
            RED,
            points
                .iter()
                .map(|p| (cores.map(f64::from(p.0)), p.2))
                .collect(),
        ),
    ];
    for (name, colour, pts) in series {
        if pts.is_empty() {
            continue;
        }
        chart
            .draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))
            .map_err(err)?
            .label(name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], colour.stroke_width(2)));
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled())))
            .map_err(err)?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", 11))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}
