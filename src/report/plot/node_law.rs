//! The node-law chart: time (and energy, below) against the node count, on a doubling axis.
//! Each measured run is a dot, the mean of a count's runs a black diamond with the runs' range
//! as a whisker; the model's prediction is the line, its interval (or a one-node profile's
//! bounds) the shaded band; the counts the law was fitted on are ticked along the bottom, and
//! a campaign's steps numbered in the order it measured them.

use super::ticks::{self, Axis};
use super::{DrawResult, SIZE, ensure_font, err};
use crate::report::node_law::NodeSeries;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// The line's and the band's colour.
const LAW: RGBColor = RGBColor(31, 119, 180);
/// The runs' colour.
const RUN: RGBColor = RGBColor(230, 85, 13);
/// The campaign steps' colour.
const STEP: RGBColor = RGBColor(160, 0, 0);
/// The legend strip's height, pixels.
const LEGEND: u32 = 84;

/// The node axis: logarithmic with a tick at every power of two, from 1 to `max`.
fn node_axis(max: u32) -> Axis {
    let top = f64::from(max.max(2)).log2().ceil() as i32;
    let step = (top / 10 + 1) as usize;
    Axis {
        log: true,
        lo: 1.0,
        hi: 2f64.powi(top),
        ticks: (0..=top).step_by(step).map(|k| 2f64.powi(k)).collect(),
        scale: 1.0,
    }
}

/// One panel's values: the runs' and the curve's, by `get` (time or energy).
struct Values {
    runs: Vec<(u32, f64)>,
    line: Vec<(u32, f64)>,
    band: Vec<(u32, f64, f64)>,
}

/// Draws the chart of `s` on `root`.
pub fn draw_node_law<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    s: &NodeSeries,
) -> DrawResult {
    ensure_font();
    root.fill(&WHITE).map_err(err)?;
    let (title, body) = root.split_vertically(30);
    title
        .titled(
            &format!(
                "{}: time against node count, {} a node",
                s.title, s.per_node
            ),
            ("sans-serif", 17),
        )
        .map_err(err)?;
    let (body, strip) = body.split_vertically(SIZE.1 - 30 - LEGEND);
    let max = s.curve.iter().map(|c| c.nodes).max().unwrap_or(1);
    let x = node_axis(max);
    let time = Values {
        runs: s.runs.iter().map(|r| (r.0, r.1)).collect(),
        line: s.curve.iter().map(|c| (c.nodes, c.time_s)).collect(),
        band: s
            .curve
            .iter()
            .map(|c| (c.nodes, c.time_band.0, c.time_band.1))
            .collect(),
    };
    let energy = s.energy.as_ref().map(|name| {
        let v = Values {
            runs: s.runs.iter().filter_map(|r| Some((r.0, r.2?))).collect(),
            line: s
                .curve
                .iter()
                .filter_map(|c| Some((c.nodes, c.energy_j?)))
                .collect(),
            band: s
                .curve
                .iter()
                .filter_map(|c| c.energy_band.map(|b| (c.nodes, b.0, b.1)))
                .collect(),
        };
        (name, v)
    });
    match &energy {
        Some((name, e)) => {
            let (top, bottom) = body.split_vertically((SIZE.1 - 30 - LEGEND) / 2);
            panel(&top, s, &x, &time, ("time", &ticks::time_label_step))?;
            panel(&bottom, s, &x, e, (name, &ticks::energy_label_step))?;
        }
        None => panel(&body, s, &x, &time, ("time", &ticks::time_label_step))?,
    }
    legend(&strip, s)?;
    root.present().map_err(err)
}

/// One panel: the band, the line, the runs with their means, the fitted counts and the steps.
fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: &NodeSeries,
    x: &Axis,
    v: &Values,
    (name, fmt): (&str, &dyn Fn(f64, f64) -> String),
) -> DrawResult {
    let y = Axis::new(
        v.runs
            .iter()
            .map(|r| r.1)
            .chain(v.line.iter().map(|l| l.1))
            .chain(v.band.iter().flat_map(|b| [b.1, b.2])),
        None,
    );
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(74)
        .build_cartesian_2d(ticks::Coord::from(x), ticks::Coord::from(&y))
        .map_err(err)?;
    let (xf, yf) = (x.clone(), y.clone());
    chart
        .configure_mesh()
        .x_desc("nodes (log scale)")
        .y_desc(if y.log {
            format!("{name} (log scale)")
        } else {
            name.to_string()
        })
        .x_label_formatter(&|v: &f64| format!("{}", xf.unmap(*v).round()))
        // With the ticks' step, so that ticks 0.5 mJ apart near 1.275 J read apart (they read
        // `1.275 J` twice).
        .y_label_formatter(&|v: &f64| fmt(yf.unmap(*v), yf.step()))
        .label_style(("sans-serif", 12))
        .bold_line_style(BLACK.mix(0.15))
        .draw()
        .map_err(err)?;
    let at = |n: u32, val: f64| (x.map(f64::from(n)), y.map(val));
    let mut poly: Vec<(f64, f64)> = v.band.iter().map(|b| at(b.0, b.2)).collect();
    poly.extend(v.band.iter().rev().map(|b| at(b.0, b.1)));
    chart
        .draw_series(std::iter::once(Polygon::new(poly, LAW.mix(0.18).filled())))
        .map_err(err)?;
    let line: Vec<(f64, f64)> = v.line.iter().map(|l| at(l.0, l.1)).collect();
    chart
        .draw_series(LineSeries::new(line, LAW.stroke_width(2)))
        .map_err(err)?;
    draw_runs(&mut chart, &v.runs, &at)?;
    draw_marks(&mut chart, s, v, &at)
}

/// The chart of one panel.
type NodeChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<ticks::Coord, ticks::Coord>>;

/// Each run as a dot, and each count's mean as a black diamond with the runs' range.
fn draw_runs<DB: DrawingBackend>(
    chart: &mut NodeChart<'_, DB>,
    runs: &[(u32, f64)],
    at: &dyn Fn(u32, f64) -> (f64, f64),
) -> DrawResult {
    chart
        .draw_series(
            runs.iter()
                .map(|r| Circle::new(at(r.0, r.1), 3, RUN.mix(0.7).filled())),
        )
        .map_err(err)?;
    let mut nodes: Vec<u32> = runs.iter().map(|r| r.0).collect();
    nodes.sort_unstable();
    nodes.dedup();
    for n in nodes {
        let of: Vec<f64> = runs.iter().filter(|r| r.0 == n).map(|r| r.1).collect();
        let mean = of.iter().sum::<f64>() / of.len() as f64;
        let (lo, hi) = of
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), &t| (a.min(t), b.max(t)));
        if of.len() > 1 {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![at(n, lo), at(n, hi)],
                    BLACK.stroke_width(1),
                )))
                .map_err(err)?;
        }
        let (px, py) = at(n, mean);
        chart
            .draw_series(std::iter::once(EmptyElement::at((px, py)) + diamond()))
            .map_err(err)?;
    }
    Ok(())
}

/// A black diamond centred on its anchor.
fn diamond() -> Polygon<(i32, i32)> {
    Polygon::new(vec![(0, -6), (6, 0), (0, 6), (-6, 0)], BLACK.filled())
}

/// The counts the law was fitted on (a tick above the axis) and a campaign's step numbers
/// (above the highest of the count's values).
fn draw_marks<DB: DrawingBackend>(
    chart: &mut NodeChart<'_, DB>,
    s: &NodeSeries,
    v: &Values,
    at: &dyn Fn(u32, f64) -> (f64, f64),
) -> DrawResult {
    let bottom = chart.y_range().start;
    for &n in &s.fitted_on {
        let (px, _) = at(n, 1.0);
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((px, bottom))
                    + PathElement::new(vec![(0, 0), (0, -10)], LAW.stroke_width(3)),
            ))
            .map_err(err)?;
    }
    let style = ("sans-serif", 12)
        .into_font()
        .color(&STEP)
        .pos(Pos::new(HPos::Center, VPos::Bottom));
    for (n, label) in step_labels(&s.steps) {
        let top = v
            .runs
            .iter()
            .filter(|r| r.0 == n)
            .map(|r| r.1)
            .chain(v.line.iter().filter(|l| l.0 == n).map(|l| l.1))
            .fold(f64::MIN, f64::max);
        if top == f64::MIN {
            continue;
        }
        chart
            .draw_series(std::iter::once(
                EmptyElement::at(at(n, top)) + Text::new(label, (0, -9), style.clone()),
            ))
            .map_err(err)?;
    }
    Ok(())
}

/// Each count a campaign measured, with the numbers of the steps that measured it (`4, 6`),
/// in the order first measured.
fn step_labels(steps: &[u32]) -> Vec<(u32, String)> {
    let mut labels: Vec<(u32, Vec<String>)> = Vec::new();
    for (k, &n) in steps.iter().enumerate() {
        match labels.iter_mut().find(|(m, _)| *m == n) {
            Some((_, at)) => at.push((k + 1).to_string()),
            None => labels.push((n, vec![(k + 1).to_string()])),
        }
    }
    labels
        .into_iter()
        .map(|(n, at)| (n, at.join(", ")))
        .collect()
}

/// The legend below the panels.
fn legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, s: &NodeSeries) -> DrawResult {
    let font = ("sans-serif", 13).into_font().color(&BLACK);
    let mut items: Vec<(String, u8)> = match s.runs.is_empty() {
        false => vec![
            ("measured run".into(), 0),
            ("mean of a count's runs, their range".into(), 1),
        ],
        true => vec![(
            "no runs given (report --measured RUNS.csv draws them)".into(),
            6,
        )],
    };
    items.extend([(
        match &s.law {
            Some(l) => format!("model with the node law {l}"),
            None => "model (no node law: measured on one node)".into(),
        },
        2,
    )]);
    if let Some(b) = &s.band {
        let none = match s.law {
            Some(_) => " (none at a count fitted on)",
            None => "",
        };
        items.push((format!("its {b}{none}"), 3));
    }
    items.push(match s.law {
        Some(_) => ("node counts the law was fitted on".into(), 4),
        None => ("node count measured".into(), 4),
    });
    if !s.steps.is_empty() {
        items.push(("campaign step, in the order measured".into(), 5));
    }
    let (mut x, mut y) = (80i32, 10i32);
    for (text, kind) in items {
        let (w, _) = area.estimate_text_size(&text, &font).map_err(err)?;
        if x + 30 + w as i32 > SIZE.0 as i32 - 10 {
            (x, y) = (80, y + 22);
        }
        marker(area, kind, (x, y))?;
        area.draw(&Text::new(text, (x + 26, y), font.clone()))
            .map_err(err)?;
        x += 26 + w as i32 + 26;
    }
    Ok(())
}

/// The legend marker of item `kind` at `(x, y)`.
fn marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    kind: u8,
    (x, y): (i32, i32),
) -> DrawResult {
    let c = (x + 10, y + 7);
    match kind {
        0 => area.draw(&Circle::new(c, 3, RUN.mix(0.7).filled())),
        1 => area
            .draw(&PathElement::new(
                [(c.0, y), (c.0, y + 14)],
                BLACK.stroke_width(1),
            ))
            .and_then(|()| area.draw(&(EmptyElement::at(c) + diamond()))),
        2 => area.draw(&PathElement::new(
            [(x, c.1), (x + 20, c.1)],
            LAW.stroke_width(2),
        )),
        3 => area.draw(&Rectangle::new(
            [(x, y + 1), (x + 20, y + 13)],
            LAW.mix(0.18).filled(),
        )),
        4 => area.draw(&PathElement::new(
            [(c.0, y + 14), (c.0, y + 4)],
            LAW.stroke_width(3),
        )),
        5 => area.draw(&Text::new(
            "1",
            (c.0 - 3, y),
            ("sans-serif", 12).into_font().color(&STEP),
        )),
        _ => Ok(()),
    }
    .map_err(err)
}

/// The node-law chart as SVG text.
pub fn node_law_svg(s: &NodeSeries) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        draw_node_law(&root, s)?;
    }
    Ok(out)
}

/// Writes the node-law chart to `path`: SVG or PNG by its extension.
pub fn write_node_law(path: &Path, s: &NodeSeries) -> Result<(), String> {
    super::save_bytes(path, &node_law_bytes(path, s)?)
}

/// The chart of [`write_node_law`] as the bytes of the file `path` names (SVG or PNG by its
/// extension), for a caller that writes it with other files at once.
pub fn node_law_bytes(path: &Path, s: &NodeSeries) -> Result<Vec<u8>, String> {
    match super::format_of(path)? {
        super::Format::Svg => Ok(node_law_svg(s)?.into_bytes()),
        super::Format::Png => super::png_bytes(SIZE, |root| draw_node_law(root, s))
            .map_err(|e| format!("{}: {e}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::step_labels;

    #[test]
    fn a_count_measured_in_two_steps_carries_both_numbers() {
        let labels = step_labels(&[1, 2, 4, 8, 16, 8]);
        let want: Vec<(u32, String)> = [(1, "1"), (2, "2"), (4, "3"), (8, "4, 6"), (16, "5")]
            .iter()
            .map(|&(n, l)| (n, l.to_string()))
            .collect();
        assert_eq!(labels, want);
        assert!(step_labels(&[]).is_empty());
    }
}
