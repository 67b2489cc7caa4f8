//! The report's GPU clock axis as a chart: time and energy of the recommendation's layout
//! against the GPU core clock (MODEL.md 6e), measured clocks filled, the others (from the clock
//! law) open, the recommended clock ringed, and the query's time limit drawn across the time
//! panel.

use super::ticks::{self, Axis};
use super::{DrawResult, ensure_font, err};
use crate::report::gpu_clock::{ClockAxis, ClockRow};
use plotters::coord::Shift;
use plotters::prelude::*;

/// One panel: what it draws of a row, its name and its tick labels.
struct Panel {
    name: &'static str,
    value: fn(&ClockRow) -> f64,
    label: fn(f64) -> String,
    /// A horizontal line at this value (the time limit).
    limit: Option<f64>,
}

/// The chart as SVG text (two panels side by side, 900 x 320); `time_only`: the energy panel
/// shows node-hours (the model's energy is node-seconds without measured power).
pub fn gpu_clock_svg(a: &ClockAxis, time_only: bool) -> Result<String, String> {
    let energy = Panel {
        name: if time_only { "node-hours" } else { "energy" },
        value: |r| r.energy_j,
        label: if time_only {
            |j| crate::units::node_hours_cell(j / 3600.0)
        } else {
            ticks::energy_label
        },
        limit: None,
    };
    let time = Panel {
        name: "time",
        value: |r| r.time_s,
        label: ticks::time_label,
        limit: a.time_limit,
    };
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (900, 320)).into_drawing_area();
        ensure_font();
        root.fill(&WHITE).map_err(err)?;
        let halves = root.split_evenly((1, 2));
        draw_panel(&halves[0], a, &time)?;
        draw_panel(&halves[1], a, &energy)?;
        root.present().map_err(err)?;
    }
    Ok(s)
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    a: &ClockAxis,
    p: &Panel,
) -> DrawResult {
    let x = Axis::with_max_ticks(a.rows.iter().map(|r| r.mhz), Some(false), 8);
    let values = a.rows.iter().map(p.value).chain(p.limit);
    let y = Axis::with_max_ticks(values, Some(false), 6);
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("{} against the GPU clock", p.name),
            ("sans-serif", 14),
        )
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(65)
        .build_cartesian_2d(ticks::Coord::from(&x), ticks::Coord::from(&y))
        .map_err(err)?;
    let label = p.label;
    chart
        .configure_mesh()
        .x_desc("GPU MHz")
        .y_desc(p.name)
        .x_label_formatter(&|v: &f64| format!("{}", v.round()))
        .y_label_formatter(&|v: &f64| label(*v))
        .label_style(("sans-serif", 11))
        .bold_line_style(BLACK.mix(0.15))
        .draw()
        .map_err(err)?;
    let at = |r: &ClockRow| (x.map(r.mhz), y.map((p.value)(r)));
    chart
        .draw_series(LineSeries::new(a.rows.iter().map(at), BLUE.mix(0.5)))
        .map_err(err)?;
    if let Some(l) = p.limit {
        let ends = [x.range().start, x.range().end].map(|v| (v, y.map(l)));
        chart
            .draw_series(LineSeries::new(ends, RED.stroke_width(1)))
            .map_err(err)?
            .label("time limit")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], RED));
    }
    let dot = |r: &ClockRow| match r.measured {
        true => Circle::new(at(r), 4, BLUE.filled()),
        false => Circle::new(at(r), 4, BLUE.stroke_width(1)),
    };
    chart
        .draw_series(a.rows.iter().filter(|r| r.measured).map(dot))
        .map_err(err)?
        .label("measured clock")
        .legend(|(x, y)| Circle::new((x + 8, y), 4, BLUE.filled()));
    chart
        .draw_series(a.rows.iter().filter(|r| !r.measured).map(dot))
        .map_err(err)?
        .label("from the clock law")
        .legend(|(x, y)| Circle::new((x + 8, y), 4, BLUE.stroke_width(1)));
    chart
        .draw_series(
            a.rows
                .iter()
                .filter(|r| r.mhz == a.chosen)
                .map(|r| Circle::new(at(r), 8, RED.stroke_width(2))),
        )
        .map_err(err)?
        .label("recommended")
        .legend(|(x, y)| Circle::new((x + 8, y), 6, RED.stroke_width(2)));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", 10))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(err)
}
