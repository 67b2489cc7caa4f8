//! Charts (plotters, with an embedded DejaVu Sans so no system font is needed): the time-energy
//! scatter of the space with the front, and the time and energy terms along the front.

use crate::search::plan::{FrontEntry, Plan, label};
use crate::search::sample::Sample;
use crate::units::{Joules, Seconds, fmt_duration, fmt_energy};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::Path;
use std::sync::Once;

static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
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

/// An axis that is logarithmic when its range spans more than a decade.
#[derive(Debug, Clone, Copy)]
struct Axis {
    log: bool,
    lo: f64,
    hi: f64,
}

impl Axis {
    fn new(values: impl Iterator<Item = f64>) -> Axis {
        let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
        for v in values.filter(|v| v.is_finite() && *v > 0.0) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() {
            (lo, hi) = (1.0, 10.0);
        }
        if hi <= lo {
            hi = lo * 1.1 + 1e-12;
        }
        let log = hi / lo > 10.0;
        let (a, b) = if log {
            (lo.log10(), hi.log10())
        } else {
            (lo, hi)
        };
        let pad = (b - a) * 0.05;
        Axis {
            log,
            lo: a - pad,
            hi: b + pad,
        }
    }

    fn map(&self, v: f64) -> f64 {
        if self.log { v.max(1e-300).log10() } else { v }
    }

    fn unmap(&self, x: f64) -> f64 {
        if self.log { 10f64.powf(x) } else { x }
    }
}

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

/// Draws the time-energy chart of a plan on any backend.
pub fn draw_pareto<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    plan: &Plan,
    sample: &Sample,
) -> DrawResult {
    ensure_font();
    root.fill(&WHITE).map_err(err)?;
    let front = &plan.front;
    let tx = Axis::new(
        sample
            .points
            .iter()
            .map(|p| p.time)
            .chain(front.iter().map(|f| f.prediction.time.0))
            .chain(plan.answer.time_limit.map(|t| t.0)),
    );
    let ey = Axis::new(
        sample
            .points
            .iter()
            .map(|p| p.energy)
            .chain(front.iter().map(|f| f.prediction.energy.0))
            .chain(plan.answer.energy_limit.map(|e| e.0)),
    );
    let what = if sample.complete {
        format!("all {} configurations", sample.taken)
    } else {
        format!(
            "a stratified sample of {} of {} configurations",
            sample.taken, plan.evaluated
        )
    };
    let mut chart = ChartBuilder::on(root)
        .caption(
            format!(
                "{} on {}: {} and the exact front ({} points)",
                plan.program,
                plan.machine,
                what,
                front.len()
            ),
            ("sans-serif", 18),
        )
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(tx.lo..tx.hi, ey.lo..ey.hi)
        .map_err(err)?;
    let fmt_t = move |x: &f64| fmt_duration(Seconds(tx.unmap(*x)));
    let fmt_e = move |y: &f64| fmt_energy(Joules(ey.unmap(*y)));
    chart
        .configure_mesh()
        .x_desc(if tx.log { "time (log scale)" } else { "time" })
        .y_desc(if ey.log {
            "energy (log scale)"
        } else {
            "energy"
        })
        .x_label_formatter(&fmt_t)
        .y_label_formatter(&fmt_e)
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(err)?;

    chart
        .draw_series(sample.points.iter().map(|p| {
            Circle::new(
                (tx.map(p.time), ey.map(p.energy)),
                2,
                ucr_colour(p.ucr).mix(0.6).filled(),
            )
        }))
        .map_err(err)?
        .label("configuration, coloured by UCR (purple 0 .. yellow 1)")
        .legend(|(x, y)| Circle::new((x + 10, y), 4, ucr_colour(0.5).filled()));

    if let Some(d) = plan.answer.time_limit {
        let x = tx.map(d.0);
        chart
            .draw_series(LineSeries::new(
                [(x, ey.lo), (x, ey.hi)],
                RED.stroke_width(2),
            ))
            .map_err(err)?
            .label(format!("time limit {}", fmt_duration(d)))
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], RED.stroke_width(2)));
    }
    if let Some(b) = plan.answer.energy_limit {
        let y = ey.map(b.0);
        chart
            .draw_series(LineSeries::new(
                [(tx.lo, y), (tx.hi, y)],
                MAGENTA.stroke_width(2),
            ))
            .map_err(err)?
            .label(format!("energy budget {}", fmt_energy(b)))
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], MAGENTA.stroke_width(2)));
    }

    let pts: Vec<(f64, f64)> = front
        .iter()
        .map(|f| (tx.map(f.prediction.time.0), ey.map(f.prediction.energy.0)))
        .collect();
    chart
        .draw_series(LineSeries::new(pts.clone(), BLACK.stroke_width(2)))
        .map_err(err)?
        .label("Pareto front")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK.stroke_width(2)));
    chart
        .draw_series(pts.iter().map(|&p| Circle::new(p, 4, BLACK.filled())))
        .map_err(err)?;
    // Labels sit above their point, staggered in height so neighbours do not overlap.
    for (k, i) in label_indices(front.len(), 8).into_iter().enumerate() {
        let dy = -14 - 13 * (k as i32 % 4);
        let text = label(&front[i].prediction.config);
        chart
            .draw_series(std::iter::once(
                EmptyElement::at(pts[i])
                    + PathElement::new([(0, 0), (0, dy + 4)], BLACK.mix(0.4))
                    + Text::new(
                        text,
                        (2, dy - 6),
                        ("sans-serif", 12).into_font().color(&BLACK),
                    ),
            ))
            .map_err(err)?;
    }
    if let Some(f) = plan.recommendation() {
        let p = (tx.map(f.prediction.time.0), ey.map(f.prediction.energy.0));
        chart
            .draw_series(std::iter::once(Circle::new(p, 9, RED.stroke_width(3))))
            .map_err(err)?
            .label(format!("recommended {}", label(&f.prediction.config)))
            .legend(|(x, y)| Circle::new((x + 10, y), 6, RED.stroke_width(3)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

/// At most `max` indices spread evenly over `0..len`, both ends included.
fn label_indices(len: usize, max: usize) -> Vec<usize> {
    if len <= max {
        return (0..len).collect();
    }
    let mut v: Vec<usize> = (0..max).map(|i| i * (len - 1) / (max - 1)).collect();
    v.dedup();
    v
}

/// A named term of a front point, for stacked bars.
type Term = (&'static str, fn(&FrontEntry) -> f64);

/// Draws stacked bars of the time terms (top) and energy terms (bottom) for up to 40 front
/// points (evenly spaced), indexed as in the front table.
pub fn draw_breakdown<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    plan: &Plan,
) -> DrawResult {
    ensure_font();
    root.fill(&WHITE).map_err(err)?;
    let idx = label_indices(plan.front.len(), 40);
    let (top, bottom) = root.split_vertically(SIZE.1 / 2);
    let colours = [BLUE, CYAN, RED, MAGENTA, GREEN];
    let time_terms: [Term; 5] = [
        ("T_CPU", |f| f.prediction.t.cpu),
        ("T_mem", |f| f.prediction.t.mem),
        ("T_w,net", |f| f.prediction.t.wait_net),
        ("T_s,net", |f| f.prediction.t.serv_net),
        ("T_gpu", |f| f.prediction.t.gpu),
    ];
    let energy_terms: [Term; 5] = [
        ("CPU", |f| f.prediction.e.cpu),
        ("memory", |f| f.prediction.e.mem),
        ("network", |f| f.prediction.e.net),
        ("idle", |f| f.prediction.e.idle),
        ("GPU", |f| f.prediction.e.gpu),
    ];
    stacked(
        &top,
        plan,
        &idx,
        &time_terms,
        &colours,
        "time terms along the front",
        &|v| fmt_duration(Seconds(v)),
    )?;
    stacked(
        &bottom,
        plan,
        &idx,
        &energy_terms,
        &colours,
        "energy terms along the front",
        &|v| fmt_energy(Joules(v)),
    )?;
    root.present().map_err(err)
}

fn stacked<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    plan: &Plan,
    idx: &[usize],
    terms: &[Term],
    colours: &[RGBColor],
    title: &str,
    fmt: &dyn Fn(f64) -> String,
) -> DrawResult {
    let max = idx
        .iter()
        .map(|&i| terms.iter().map(|t| t.1(&plan.front[i])).sum::<f64>())
        .fold(0.0, f64::max)
        .max(1e-300);
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("{title} (bar = front point index, 0 = fastest)"),
            ("sans-serif", 16),
        )
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(80)
        .build_cartesian_2d(-0.5f64..(idx.len() as f64 - 0.5), 0.0..max * 1.08)
        .map_err(err)?;
    let ids: Vec<usize> = idx.to_vec();
    let fmt_x = move |x: &f64| {
        let k = x.round();
        if (x - k).abs() < 1e-6 && k >= 0.0 {
            ids.get(k as usize)
                .map(|i| i.to_string())
                .unwrap_or_default()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(idx.len().min(20))
        .x_label_formatter(&fmt_x)
        .y_label_formatter(&|v: &f64| fmt(*v))
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(err)?;
    for (k, (name, get)) in terms.iter().enumerate() {
        let colour = colours[k % colours.len()];
        let bars = idx.iter().enumerate().map(|(j, &i)| {
            let below: f64 = terms[..k].iter().map(|t| t.1(&plan.front[i])).sum();
            let v = get(&plan.front[i]);
            Rectangle::new(
                [(j as f64 - 0.4, below), (j as f64 + 0.4, below + v)],
                colour.filled(),
            )
        });
        chart
            .draw_series(bars)
            .map_err(err)?
            .label(*name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 12))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(err)
}

/// The time-energy chart as SVG text.
pub fn pareto_svg(plan: &Plan, sample: &Sample) -> Result<String, String> {
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, SIZE).into_drawing_area();
        draw_pareto(&root, plan, sample)?;
    }
    Ok(s)
}

/// The breakdown chart as SVG text.
pub fn breakdown_svg(plan: &Plan) -> Result<String, String> {
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, SIZE).into_drawing_area();
        draw_breakdown(&root, plan)?;
    }
    Ok(s)
}

/// Writes the time-energy chart to `path`: SVG or PNG by its extension.
pub fn write_pareto(path: &Path, plan: &Plan, sample: &Sample) -> Result<(), String> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("svg") => {
            let svg = pareto_svg(plan, sample)?;
            std::fs::write(path, svg).map_err(|e| format!("{}: cannot write: {e}", path.display()))
        }
        Some("png") => {
            let root = BitMapBackend::new(path, SIZE).into_drawing_area();
            draw_pareto(&root, plan, sample).map_err(|e| format!("{}: {e}", path.display()))
        }
        _ => Err(format!(
            "{}: expected a file ending in .svg or .png",
            path.display()
        )),
    }
}
