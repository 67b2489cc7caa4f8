//! Charts (plotters, with an embedded DejaVu Sans so no system font is needed): the time-energy
//! scatter of the space with the front, and the time and energy terms along the front.

mod breakdown;
mod gpu_clock;
mod labels;
mod node_law;
mod overlay;
mod ticks;
mod trees;
pub mod validation;

pub use breakdown::{breakdown_svg, draw_breakdown};
pub use gpu_clock::gpu_clock_svg;
pub use node_law::{draw_node_law, node_law_bytes, node_law_svg, write_node_law};
pub use ticks::{energy_label, time_label};
pub use trees::{TreePoint, trees_svg};

use crate::search::plan::{FrontEntry, Plan};
use crate::search::sample::Sample;
use crate::units::{fmt_duration, fmt_energy};
use plotters::coord::Shift;
use plotters::coord::ranged1d::Ranged;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::Path;
use std::sync::Once;
use ticks::Axis;

static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");
static REGISTER: Once = Once::new();

/// Registers the embedded font with plotters (once).
pub fn ensure_font() {
    REGISTER.call_once(|| {
        // The font is compiled in and known to be valid; a failure here is a build defect.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// Width and height of the charts, in pixels.
pub const SIZE: (u32, u32) = (1000, 700);

/// Colour for a UCR in [0, 1]: dark blue (low) through green to yellow (high).
pub fn ucr_colour(ucr: f64) -> RGBColor {
    let stops = [
        (0.0, (68, 1, 84)),
        (0.25, (59, 82, 139)),
        (0.5, (33, 145, 140)),
        (0.75, (94, 201, 98)),
        (1.0, (253, 231, 37)),
    ];
    let u = if ucr.is_finite() {
        ucr.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let i = stops
        .iter()
        .rposition(|s| s.0 <= u)
        .unwrap_or(0)
        .min(stops.len() - 2);
    let (a, b) = (stops[i], stops[i + 1]);
    let t = (u - a.0) / (b.0 - a.0);
    let mix = |x: u8, y: u8| (f64::from(x) + t * (f64::from(y) - f64::from(x))).round() as u8;
    RGBColor(mix(a.1.0, b.1.0), mix(a.1.1, b.1.1), mix(a.1.2, b.1.2))
}

type DrawResult = Result<(), String>;

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("{e:?}")
}

/// Where the front's points land in a chart, in backend pixels.
fn pixels<DB: DrawingBackend, X, Y>(
    chart: &ChartContext<'_, DB, Cartesian2d<X, Y>>,
    pts: &[(f64, f64)],
) -> Vec<(i32, i32)>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    pts.iter().map(|p| chart.backend_coord(p)).collect()
}

/// Draws the labels of the front points in `order`, each at a free place (or not at all).
fn draw_labels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: labels::Rect,
    px: &[(i32, i32)],
    order: &[usize],
    (front, pick): (&[FrontEntry], Option<usize>),
) -> DrawResult {
    let style = ("sans-serif", 12).into_font().color(&BLACK);
    let mut placer = labels::Placer::new(area);
    for &p in px {
        placer.block_point(p, 5);
    }

    for &i in order {
        let text = chart_label(&front[i].prediction.config);
        let size = labels::room(root.estimate_text_size(&text, &style).map_err(err)?);
        if let Some((x, y)) = placer.place(px[i], size) {
            root.draw(&Text::new(text, (x, y), style.clone()))
                .map_err(err)?;
        }
        // The recommendation's ring is wider than a point: no later label runs under it.
        if Some(i) == pick {
            placer.block_point(px[i], 16);
        }
    }
    Ok(())
}

/// A configuration as a chart labels it: `6 x 57 @ 1.1 GHz` (`+ 2 GPUs`), explained in the
/// legend as nodes x cores per node @ frequency.
pub fn chart_label(c: &crate::model::Config) -> String {
    let g = match c.gpus {
        0 => String::new(),
        1 => " + 1 GPU".into(),
        g => format!(" + {g} GPUs"),
    };
    let mhz = c
        .gpu_clock_mhz
        .map_or(String::new(), |m| format!(" @ {m} MHz"));
    format!("{} x {} @ {} GHz{g}{mhz}", c.nodes, c.cores, c.freq.ghz())
}

/// How much of its values a zoomed axis spans: `(max - min) / max`.
fn span(values: impl Iterator<Item = f64>) -> f64 {
    let (lo, hi) = values.fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    if hi > 0.0 { (hi - lo) / hi } else { 0.0 }
}

/// The zoomed panel's title, saying when an axis spans only a few percent of its values (a
/// zoom makes small differences look large).
fn zoom_title(plan: &Plan) -> String {
    let t = span(plan.front.iter().map(|f| f.prediction.time.0));
    let e = span(plan.front.iter().map(|f| f.prediction.energy.0));
    let narrow: Vec<String> = [("time", t), ("energy", e)]
        .iter()
        .filter(|(_, v)| *v < 0.05)
        .map(|(n, v)| format!("{n} spans only {}%", crate::model::node_law::sig(100.0 * v)))
        .collect();
    if narrow.is_empty() {
        "the front, zoomed (the box at left)".into()
    } else {
        format!("the front, zoomed (box at left): {}", narrow.join(", "))
    }
}

/// The rectangle of a chart's plotting area, in backend pixels.
fn plot_rect<DB: DrawingBackend, CT: CoordTranslate>(
    chart: &ChartContext<'_, DB, CT>,
) -> labels::Rect {
    let (x, y) = chart.plotting_area().get_base_pixel();
    let (w, h) = chart.plotting_area().dim_in_pixel();
    (x, y, x + w as i32, y + h as i32)
}

/// One panel: a time-energy chart over `tx` x `ey` with the front, its intervals, the
/// recommendation, the limits and the measured runs; `cloud` adds the sampled configurations,
/// `box_front` outlines the front's region.
struct Panel<'a> {
    title: String,
    tx: Axis,
    ey: Axis,
    cloud: Option<&'a Sample>,
    box_front: bool,
    /// Draw the recommendation's interval alone (a zoomed panel, where every point's would
    /// crowd it), not every front point's.
    pick_interval_only: bool,
    max_labels: usize,
    measured: &'a [(f64, f64)],
}

/// The chart of one panel: time across, energy up, on the panel's axes.
type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<ticks::Coord, ticks::Coord>>;

fn draw_panel<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    plan: &Plan,
    panel: &Panel<'_>,
) -> DrawResult {
    let mut chart = panel_chart(area, panel, y_name(plan))?;
    let (tx, ey) = (&panel.tx, &panel.ey);
    if let Some(sample) = panel.cloud {
        chart
            .draw_series(sample.points.iter().map(|p| {
                Circle::new(
                    (tx.map(p.time), ey.map(p.energy)),
                    2,
                    ucr_colour(p.ucr).mix(0.6).filled(),
                )
            }))
            .map_err(err)?;
    }
    draw_limits(&mut chart, plan, panel)?;
    let front = &plan.front;
    let pts: Vec<(f64, f64)> = front
        .iter()
        .map(|f| (tx.map(f.prediction.time.0), ey.map(f.prediction.energy.0)))
        .collect();
    let only = match panel.pick_interval_only {
        true => Some(plan.answer.pick.unwrap_or(usize::MAX)),
        false => None,
    };
    overlay::draw_intervals(&mut chart, plan, (tx, ey), only)?;
    draw_front(&mut chart, plan, panel, &pts)?;
    overlay::draw_measured(&mut chart, panel.measured, (tx, ey))?;
    if panel.max_labels > 0 {
        let px = pixels(&chart, &pts);
        let order = labels::priority(front.len(), plan.answer.pick, panel.max_labels);
        draw_labels(
            root,
            plot_rect(&chart),
            &px,
            &order,
            (front, plan.answer.pick),
        )?;
    }
    Ok(())
}

/// The panel's chart with its caption, axes and grid; the energy axis is named by its scope.
fn panel_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    panel: &Panel<'_>,
    energy: &str,
) -> Result<Chart<'a, DB>, String> {
    let (tx, ey) = (panel.tx.clone(), panel.ey.clone());
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, ("sans-serif", 15))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(ticks::Coord::from(&tx), ticks::Coord::from(&ey))
        .map_err(err)?;
    let (txf, eyf) = (tx.clone(), ey.clone());
    let (t_step, e_step) = (tx.step(), ey.step());
    let fmt_t = move |x: &f64| ticks::time_label_step(txf.unmap(*x), t_step);
    let fmt_e = move |y: &f64| {
        if eyf.scale == 1.0 {
            ticks::energy_label_step(eyf.unmap(*y), e_step)
        } else {
            ticks::node_hours_label(eyf.unmap(*y))
        }
    };
    chart
        .configure_mesh()
        .x_desc(if tx.log { "time (log scale)" } else { "time" })
        .y_desc(if ey.log {
            format!("{energy} (log scale)")
        } else {
            energy.to_string()
        })
        .x_label_formatter(&fmt_t)
        .y_label_formatter(&fmt_e)
        .label_style(("sans-serif", 12))
        .bold_line_style(BLACK.mix(0.15))
        .draw()
        .map_err(err)?;
    Ok(chart)
}

/// The deadline (red, vertical) and the energy budget (magenta, horizontal) where they fall
/// inside the panel.
fn draw_limits<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    plan: &Plan,
    panel: &Panel<'_>,
) -> DrawResult {
    let (tx, ey) = (&panel.tx, &panel.ey);
    let (x0, x1) = (tx.range().start, tx.range().end);
    let (y0, y1) = (ey.range().start, ey.range().end);
    if let Some(d) = plan
        .answer
        .time_limit
        .filter(|d| tx.range().contains(&tx.map(d.0)))
    {
        let x = tx.map(d.0);
        chart
            .draw_series(LineSeries::new([(x, y0), (x, y1)], RED.stroke_width(2)))
            .map_err(err)?;
    }
    if let Some(b) = plan
        .answer
        .energy_limit
        .filter(|b| ey.range().contains(&ey.map(b.0)))
    {
        let y = ey.map(b.0);
        chart
            .draw_series(LineSeries::new([(x0, y), (x1, y)], MAGENTA.stroke_width(2)))
            .map_err(err)?;
    }
    Ok(())
}

/// The front as a line through its points, boxed when the panel asks, with the pick ringed.
fn draw_front<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    plan: &Plan,
    panel: &Panel<'_>,
    pts: &[(f64, f64)],
) -> DrawResult {
    if panel.box_front && !pts.is_empty() {
        let (a, b) = bounds(pts);
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(a.0, a.1), (b.0, b.1)],
                BLACK.mix(0.6).stroke_width(1),
            )))
            .map_err(err)?;
    }
    chart
        .draw_series(LineSeries::new(pts.to_vec(), BLACK.stroke_width(2)))
        .map_err(err)?;
    chart
        .draw_series(pts.iter().map(|&p| Circle::new(p, 4, BLACK.filled())))
        .map_err(err)?;
    if let Some(i) = plan.answer.pick {
        chart
            .draw_series(std::iter::once(Circle::new(pts[i], 9, RED.stroke_width(3))))
            .map_err(err)?;
    }
    Ok(())
}

/// Lower-left and upper-right corners of points, padded by 3% of their span.
fn bounds(pts: &[(f64, f64)]) -> ((f64, f64), (f64, f64)) {
    let (mut a, mut b) = (
        (f64::INFINITY, f64::INFINITY),
        (f64::NEG_INFINITY, f64::NEG_INFINITY),
    );
    for &(x, y) in pts {
        a = (a.0.min(x), a.1.min(y));
        b = (b.0.max(x), b.1.max(y));
    }
    let (px, py) = (
        ((b.0 - a.0) * 0.03).max(1e-3),
        ((b.1 - a.1) * 0.03).max(1e-3),
    );
    ((a.0 - px, a.1 - py), (b.0 + px, b.1 + py))
}

/// Whether the front is a thin sliver of the whole chart (under 12% of either axis), so that
/// a second panel zoomed on it is drawn.
fn front_is_sliver(plan: &Plan, tx: &Axis, ey: &Axis) -> bool {
    if plan.front.len() < 2 {
        return false;
    }
    let share = |ax: &Axis, v: &mut dyn Iterator<Item = f64>| {
        let (lo, hi) = v.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(ax.map(x)), b.max(ax.map(x)))
        });
        // The ticks' span: the range less its 3% padding at both ends.
        let r = ax.range();
        (hi - lo) / ((r.end - r.start) / 1.06)
    };
    let t = share(tx, &mut plan.front.iter().map(|f| f.prediction.time.0));
    let e = share(ey, &mut plan.front.iter().map(|f| f.prediction.energy.0));
    t.min(e) < 0.12
}

/// The whole chart's axes: every sampled configuration, the front with its intervals (so no
/// error bar is cut), the limits and the measured runs.
fn axes(plan: &Plan, sample: &Sample, measured: &[(f64, f64)]) -> (Axis, Axis) {
    let front = &plan.front;
    let ranges = || front.iter().filter_map(|f| f.prediction.interval);
    let tx = Axis::with_max_ticks(
        sample
            .points
            .iter()
            .map(|p| p.time)
            .chain(front.iter().map(|f| f.prediction.time.0))
            .chain(ranges().flat_map(|i| [i.time_s.0, i.time_s.1]))
            .chain(plan.answer.time_limit.map(|t| t.0))
            .chain(measured.iter().map(|m| m.0)),
        None,
        7,
    );
    let ey = y_axis(
        plan,
        sample
            .points
            .iter()
            .map(|p| p.energy)
            .chain(front.iter().map(|f| f.prediction.energy.0))
            .chain(ranges().flat_map(|i| [i.energy_j.0, i.energy_j.1]))
            .chain(plan.answer.energy_limit.map(|e| e.0))
            .chain(measured.iter().map(|m| m.1)),
    );
    (tx, ey)
}

/// The vertical axis of the time-energy chart: energy, or without measured power the
/// model's node-seconds shown as node-hours.
fn y_axis(plan: &Plan, values: impl Iterator<Item = f64>) -> Axis {
    if plan.time_only() {
        Axis::scaled(values, None, 1.0 / 3600.0)
    } else {
        Axis::new(values, None)
    }
}

/// What the vertical axis of the time-energy chart shows: the energy's scope, or node-hours.
fn y_name(plan: &Plan) -> &'static str {
    if plan.time_only() {
        "node-hours"
    } else {
        plan.energy_scope.name()
    }
}

/// The height of the legend strip below the charts, pixels (three rows of items).
const LEGEND_STRIP: u32 = 84;

/// Draws the time-energy chart of a plan on any backend: the whole space with its front (each
/// point's interval as error bars) and the `measured` runs `(time s, energy J)`, a second panel
/// zoomed on the front when the front is a thin sliver of the space, and a legend strip below
/// the charts.
pub fn draw_pareto<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    plan: &Plan,
    sample: &Sample,
    measured: &[(f64, f64)],
) -> DrawResult {
    ensure_font();
    root.fill(&WHITE).map_err(err)?;
    let front = &plan.front;
    let times = || front.iter().map(|f| f.prediction.time.0);
    let energies = || front.iter().map(|f| f.prediction.energy.0);
    let (tx, ey) = axes(plan, sample, measured);
    let what = if sample.complete {
        format!("all {} configurations", sample.taken)
    } else {
        format!(
            "a stratified sample of {} of {} configurations",
            sample.taken, plan.evaluated
        )
    };
    let (title, body) = root.split_vertically(30);
    title
        .titled(
            &format!(
                "{} on {}: {} and the exact front ({})",
                plan.program,
                plan.machine,
                what,
                crate::units::count(front.len() as u64, "point", "points")
            ),
            ("sans-serif", 17),
        )
        .map_err(err)?;
    let (body, strip) = body.split_vertically(SIZE.1 - 30 - LEGEND_STRIP);
    let zoom = front_is_sliver(plan, &tx, &ey);
    let (main, right) = if zoom {
        let (a, b) = body.split_horizontally(SIZE.0 * 56 / 100);
        (a, Some(b))
    } else {
        (body, None)
    };
    draw_panel(
        root,
        &main,
        plan,
        &Panel {
            title: "every configuration".into(),
            tx: tx.clone(),
            ey: ey.clone(),
            cloud: Some(sample),
            box_front: zoom,
            pick_interval_only: false,
            max_labels: if zoom { 0 } else { 8 },
            measured,
        },
    )?;
    if let Some(right) = right {
        draw_panel(
            root,
            &right,
            plan,
            &Panel {
                title: zoom_title(plan),
                tx: Axis::with_max_ticks(times(), None, 6),
                ey: y_axis(plan, energies()),
                cloud: None,
                box_front: false,
                pick_interval_only: true,
                max_labels: 10,
                measured,
            },
        )?;
    }
    draw_legend(&strip, plan, zoom, !measured.is_empty())?;
    root.present().map_err(err)
}

/// The legend, below the charts so it never covers data.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    plan: &Plan,
    zoom: bool,
    measured: bool,
) -> DrawResult {
    let font = ("sans-serif", 13).into_font().color(&BLACK);
    let (mut x, mut y) = (90i32, 12i32);
    x = colour_bar(area, (x, y))?;
    for (text, kind) in legend_items(plan, zoom, measured) {
        let (w, _) = area.estimate_text_size(&text, &font).map_err(err)?;
        if x + 30 + w as i32 > SIZE.0 as i32 - 10 {
            (x, y) = (90, y + 24);
        }
        legend_marker(area, kind, (x, y))?;
        area.draw(&Text::new(text, (x + 26, y), font.clone()))
            .map_err(err)?;
        x += 26 + w as i32 + 28;
    }
    Ok(())
}

/// What the legend explains: its text and the marker kind [`legend_marker`] draws.
fn legend_items(plan: &Plan, zoom: bool, measured: bool) -> Vec<(String, u8)> {
    let clocked = plan
        .front
        .iter()
        .any(|f| f.prediction.config.gpu_clock_mhz.is_some());
    let labels = if clocked {
        "Pareto front; labels: nodes x cores @ GHz + GPUs @ GPU MHz"
    } else {
        "Pareto front; labels: nodes x cores @ GHz"
    };
    let mut items: Vec<(String, u8)> =
        vec![("configuration, by its UCR".into(), 0), (labels.into(), 1)];
    if let Some(f) = plan.recommendation() {
        let c = &f.prediction.config;
        items.push((
            format!(
                "recommended: {} x {} @ {} GHz{}{}",
                crate::units::count(c.nodes, "node", "nodes"),
                crate::units::count(c.cores, "core", "cores"),
                c.freq.ghz(),
                match c.gpus {
                    0 => String::new(),
                    1 => ", 1 GPU per node".to_string(),
                    g => format!(", {g} GPUs per node"),
                },
                c.gpu_clock_mhz
                    .map_or(String::new(), |m| format!(" at {m} MHz"))
            ),
            2,
        ));
    }
    if let Some(d) = plan.answer.time_limit {
        items.push((format!("time limit {}", fmt_duration(d)), 3));
    }
    if let Some(b) = plan.answer.energy_limit {
        items.push((format!("energy budget {}", fmt_energy(b)), 4));
    }
    if zoom {
        items.push(("region of the front".into(), 5));
    }
    if let Some(text) = overlay::legend_text(plan) {
        match zoom {
            true => items.push((format!("{text} (zoomed: the recommendation's)"), 6)),
            false => items.push((text, 6)),
        }
    }
    if measured {
        items.push(("measured run (--measured)".into(), 7));
    }
    items
}

/// The marker of legend item `kind` at `(x, y)`.
fn legend_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    kind: u8,
    (x, y): (i32, i32),
) -> DrawResult {
    let c = (x + 10, y + 7);
    let line =
        |colour: RGBAColor| PathElement::new([(x, c.1), (x + 20, c.1)], colour.stroke_width(2));
    match kind {
        0 => area.draw(&Circle::new(c, 5, ucr_colour(0.5).mix(0.6).filled())),
        1 => area.draw(&line(BLACK.to_rgba())),
        2 => area.draw(&Circle::new(c, 7, RED.stroke_width(3))),
        3 => area.draw(&line(RED.to_rgba())),
        4 => area.draw(&line(MAGENTA.to_rgba())),
        6 => area
            .draw(&PathElement::new(
                [(x + 2, c.1), (x + 18, c.1)],
                overlay::bar_colour().stroke_width(1),
            ))
            .and_then(|()| {
                area.draw(&PathElement::new(
                    [(x + 10, y), (x + 10, y + 14)],
                    overlay::bar_colour().stroke_width(1),
                ))
            }),
        7 => area
            .draw(&TriangleMarker::new(c, 9, BLACK.filled()))
            .and_then(|()| area.draw(&TriangleMarker::new(c, 6, overlay::MEASURED.filled()))),
        _ => area.draw(&Rectangle::new(
            [(x + 2, y + 1), (x + 18, y + 13)],
            BLACK.mix(0.6).stroke_width(1),
        )),
    }
    .map_err(err)
}

/// The UCR colour bar at `(x, y)`: `UCR 0 [bar] 1`; returns where the next item starts.
fn colour_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
) -> Result<i32, String> {
    let font = ("sans-serif", 13).into_font().color(&BLACK);
    area.draw(&Text::new("UCR 0", (x, y), font.clone()))
        .map_err(err)?;
    let x0 = x + 44;
    for i in 0..20 {
        let u = (f64::from(i) + 0.5) / 20.0;
        let xi = x0 + i * 6;
        area.draw(&Rectangle::new(
            [(xi, y + 1), (xi + 6, y + 13)],
            ucr_colour(u).filled(),
        ))
        .map_err(err)?;
    }
    area.draw(&Rectangle::new(
        [(x0, y + 1), (x0 + 120, y + 13)],
        BLACK.stroke_width(1),
    ))
    .map_err(err)?;
    area.draw(&Text::new("1", (x0 + 124, y), font))
        .map_err(err)?;
    Ok(x0 + 150)
}

/// The time-energy chart as SVG text, with the `measured` runs `(time s, energy J)`.
pub fn pareto_svg(plan: &Plan, sample: &Sample, measured: &[(f64, f64)]) -> Result<String, String> {
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, SIZE).into_drawing_area();
        draw_pareto(&root, plan, sample, measured)?;
    }
    Ok(s)
}

/// The two file formats a chart is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Scalable vector graphics.
    Svg,
    /// A bitmap.
    Png,
}

/// The format of a chart path, by its extension.
pub fn format_of(path: &Path) -> Result<Format, String> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("svg") => Ok(Format::Svg),
        Some("png") => Ok(Format::Png),
        _ => Err(format!(
            "{}: expected a file ending in .svg or .png",
            path.display()
        )),
    }
}

/// Writes SVG text to `path` atomically.
pub(crate) fn save_svg(path: &Path, svg: &str) -> Result<(), String> {
    save_bytes(path, svg.as_bytes())
}

/// A chart drawn into memory and encoded as PNG, for the one safe writer: no file is opened
/// by the drawing library, so a planted link, a full disk or a kill never leaves a truncated
/// chart or one written through a link.
pub(crate) fn png_bytes(
    (w, h): (u32, u32),
    draw: impl FnOnce(&DrawingArea<BitMapBackend<'_>, Shift>) -> DrawResult,
) -> Result<Vec<u8>, String> {
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        draw(&root)?;
        root.present().map_err(err)?;
    }
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().map_err(|e| e.to_string())?;
    writer.write_image_data(&rgb).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(out)
}

/// Writes chart bytes to `path` atomically, through the same rules as every output.
pub(crate) fn save_bytes(path: &Path, bytes: &[u8]) -> Result<(), String> {
    crate::atomic_write::write_atomic(path, bytes, false).map_err(|e| e.to_string())
}

/// The time-energy chart as PNG bytes, drawn in memory.
pub fn pareto_png(
    plan: &Plan,
    sample: &Sample,
    measured: &[(f64, f64)],
) -> Result<Vec<u8>, String> {
    png_bytes(SIZE, |root| draw_pareto(root, plan, sample, measured))
}

/// Writes the time-energy chart to `path`, with the `measured` runs `(time s, energy J)`: SVG
/// or PNG by its extension.
pub fn write_pareto(
    path: &Path,
    plan: &Plan,
    sample: &Sample,
    measured: &[(f64, f64)],
) -> Result<(), String> {
    match format_of(path)? {
        Format::Svg => save_svg(path, &pareto_svg(plan, sample, measured)?),
        Format::Png => {
            let png = pareto_png(plan, sample, measured)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            save_bytes(path, &png)
        }
    }
}
