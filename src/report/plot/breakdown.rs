//! The time and energy terms along the front as stacked bars, one bar a front point, the
//! recommended bar outlined in red. Bar labels are horizontal (an SVG viewer does not turn
//! rotated axis labels) and only as many as fit side by side; where every bar shares its
//! cores, frequency and GPUs, a bar is labelled by its node count alone and the caption says
//! the rest.

use super::ticks::{self, Axis};
use super::{DrawResult, SIZE, ensure_font, err};
use crate::search::plan::{FrontEntry, Plan};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// At most this many bars.
const MAX_BARS: usize = 40;

/// The colour that marks the recommended bar.
const PICK: RGBColor = RED;

/// At most `max` indices spread evenly over `0..len`, both ends included; `keep` (the
/// recommendation) takes the place of the nearest one where it is not among them.
fn bar_indices(len: usize, max: usize, keep: Option<usize>) -> Vec<usize> {
    if len <= max {
        return (0..len).collect();
    }
    let mut v: Vec<usize> = (0..max).map(|i| i * (len - 1) / (max - 1)).collect();
    v.dedup();
    if let Some(k) = keep.filter(|k| *k < len && !v.contains(k)) {
        let nearest = (0..v.len()).min_by_key(|&j| v[j].abs_diff(k)).unwrap_or(0);
        v[nearest] = k;
        v.sort_unstable();
    }
    v
}

/// A named term of a front point, for stacked bars.
type Term = (&'static str, fn(&FrontEntry) -> f64);

/// The bars' labels and the caption's words for them: the node count alone (`16`) where every
/// bar has the same cores, frequency, GPUs and GPU clock (`nodes, each x 72 cores @ 2.4 GHz`),
/// the GPU clock alone (`747`) where only it differs (`GPU MHz, each 1 x 1 @ 2 GHz + 1 GPUs`),
/// else `16x72@2.4` (`+2g` with GPUs, `+1g@747MHz` with a clock) as `nodes x cores @ GHz`.
fn bar_labels(plan: &Plan, idx: &[usize]) -> (Vec<String>, String) {
    let configs: Vec<&crate::model::Config> = idx
        .iter()
        .map(|&i| &plan.front[i].prediction.config)
        .collect();
    let same = |a: &&crate::model::Config, b: &crate::model::Config| {
        a.cores == b.cores && a.freq == b.freq && a.gpus == b.gpus
    };
    let clock = |c: &crate::model::Config| {
        c.gpu_clock_mhz
            .map_or(String::new(), |m| format!(" at {m} MHz"))
    };
    if let Some(first) = configs
        .first()
        .filter(|f| configs.iter().all(|c| same(f, c)))
    {
        let gpus = match first.gpus {
            0 => String::new(),
            g => format!(" + {g} GPUs"),
        };
        let shared = format!("{} cores @ {} GHz{gpus}", first.cores, first.freq.ghz());
        if configs
            .iter()
            .all(|c| c.gpu_clock_mhz == first.gpu_clock_mhz)
        {
            return (
                configs.iter().map(|c| c.nodes.to_string()).collect(),
                format!("nodes, each x {shared}{}", clock(first)),
            );
        }
        if configs.iter().all(|c| c.nodes == first.nodes) {
            let mhz =
                |c: &&crate::model::Config| c.gpu_clock_mhz.map_or("-".into(), |m| m.to_string());
            return (
                configs.iter().map(mhz).collect(),
                format!("GPU MHz, each {} x {shared}", first.nodes),
            );
        }
    }
    let label = |c: &&crate::model::Config| {
        let g = match (c.gpus, c.gpu_clock_mhz) {
            (0, _) => String::new(),
            (g, None) => format!("+{g}g"),
            (g, Some(m)) => format!("+{g}g@{m}MHz"),
        };
        format!("{}x{}@{}{g}", c.nodes, c.cores, c.freq.ghz())
    };
    (
        configs.iter().map(label).collect(),
        "nodes x cores @ GHz".into(),
    )
}

/// Which of `n` bars get a label: every `every`-th from the first, and the recommended bar
/// `pick` always, its neighbours closer than `every` left out so no two labels touch.
fn labelled(n: usize, every: usize, pick: Option<usize>) -> Vec<usize> {
    let every = every.max(1);
    let mut v: Vec<usize> = (0..n)
        .step_by(every)
        .filter(|j| pick.is_none_or(|p| j.abs_diff(p) >= every))
        .collect();
    if let Some(p) = pick.filter(|p| *p < n) {
        v.push(p);
        v.sort_unstable();
    }
    v
}

/// Draws stacked bars of the time terms (top) and energy terms (bottom; none without
/// measured power) for up to 40 front points (evenly spaced, the recommendation among them),
/// with the legends in a column beside the bars. Every term that adds to `T` or `E` is a bar
/// segment, the node law's `X(n)` included (outlined, above the others' top, where it takes
/// time away); a term that is 0 along the whole front is left out of the legend.
pub fn draw_breakdown<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    plan: &Plan,
) -> DrawResult {
    ensure_font();
    root.fill(&WHITE).map_err(err)?;
    let idx = bar_indices(plan.front.len(), MAX_BARS, plan.answer.pick);
    let time_terms: [Term; 8] = [
        ("T_CPU", |f| f.prediction.t.cpu),
        ("T_mem", |f| f.prediction.t.mem),
        ("T_w,net", |f| f.prediction.t.wait_net),
        ("T_s,net", |f| f.prediction.t.serv_net),
        ("T_gpu", |f| f.prediction.t.gpu),
        ("T_ser", |f| f.prediction.t.serial),
        ("T_idle", |f| f.prediction.t.wait),
        ("X(n) node law", |f| f.prediction.t.nodes),
    ];
    let energy_terms: [Term; 5] = [
        ("CPU", |f| f.prediction.e.cpu),
        ("memory", |f| f.prediction.e.mem),
        ("network", |f| f.prediction.e.net),
        ("idle", |f| f.prediction.e.idle),
        ("GPU", |f| f.prediction.e.gpu),
    ];
    let used = |terms: &[Term]| -> Vec<(Term, RGBColor)> {
        terms
            .iter()
            .zip(COLOURS)
            .filter(|(t, _)| idx.iter().any(|&i| t.1(&plan.front[i]) != 0.0))
            .map(|(t, c)| (*t, c))
            .collect()
    };
    let bars = Bars {
        plan,
        idx: &idx,
        labels: bar_labels(plan, &idx),
    };
    let time = &used(&time_terms);
    let time_fmt = |v: f64| ticks::time_label(v);
    if plan.time_only() {
        // Without measured power there are no energy terms: the time terms take the page.
        stacked(
            root,
            root,
            &bars,
            time,
            "time terms along the front",
            &time_fmt,
        )?;
        return root.present().map_err(err);
    }
    let (top, bottom) = root.split_vertically(SIZE.1 / 2);
    stacked(
        root,
        &top,
        &bars,
        time,
        "time terms along the front",
        &time_fmt,
    )?;
    stacked(
        root,
        &bottom,
        &bars,
        &used(&energy_terms),
        &format!("{} terms along the front", plan.energy_scope.name()),
        &|v| ticks::energy_label(v),
    )?;
    root.present().map_err(err)
}

/// The colours of the terms, in their order.
const COLOURS: [RGBColor; 8] = [
    BLUE,
    CYAN,
    RED,
    MAGENTA,
    GREEN,
    RGBColor(255, 140, 0),
    RGBColor(128, 128, 128),
    RGBColor(140, 86, 75),
];

/// The bars to draw: the plan, which front points, their labels and the caption's words.
struct Bars<'a> {
    plan: &'a Plan,
    idx: &'a [usize],
    labels: (Vec<String>, String),
}

impl Bars<'_> {
    /// The position of the recommended bar among the bars.
    fn pick(&self) -> Option<usize> {
        let p = self.plan.answer.pick?;
        self.idx.iter().position(|&i| i == p)
    }

    /// The top of bar `j`: the sum of its positive terms.
    fn top(&self, j: usize, terms: &[(Term, RGBColor)]) -> f64 {
        let f = &self.plan.front[self.idx[j]];
        terms.iter().map(|t| t.0.1(f).max(0.0)).sum()
    }
}

/// One panel of stacked bars on `area` (labels drawn on `root`, in its pixels).
fn stacked<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    bars: &Bars<'_>,
    terms: &[(Term, RGBColor)],
    title: &str,
    fmt: &dyn Fn(f64) -> String,
) -> DrawResult {
    let (bars_area, legend_area) = area.split_horizontally(SIZE.0 - 140);
    let n = bars.idx.len();
    let max = (0..n)
        .map(|j| bars.top(j, terms))
        .fold(0.0, f64::max)
        .max(1e-300);
    let y = Axis::from_zero(max, 6);
    let x = ticks::Coord::linear(-0.5, n as f64 - 0.5, Vec::new());
    let mut chart = ChartBuilder::on(&bars_area)
        .caption(
            format!("{title} (bars: {}, fastest at left)", bars.labels.1),
            ("sans-serif", 15),
        )
        .margin(10)
        .x_label_area_size(34)
        .y_label_area_size(70)
        .build_cartesian_2d(x, ticks::Coord::linear(0.0, y.hi * 1.03, y.mapped_ticks()))
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_label_formatter(&|v: &f64| fmt(*v))
        .label_style(("sans-serif", 12))
        .bold_line_style(BLACK.mix(0.15))
        .draw()
        .map_err(err)?;
    draw_segments(&mut chart, bars, terms)?;
    if let Some(j) = bars.pick() {
        let top = bars.top(j, terms);
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(j as f64 - 0.47, 0.0), (j as f64 + 0.47, top)],
                PICK.stroke_width(3),
            )))
            .map_err(err)?;
        let (x, y) = chart.backend_coord(&(j as f64, top));
        root.draw(&pick_marker((x, y - 3))).map_err(err)?;
    }
    draw_bar_labels(root, &chart, bars)?;
    stacked_legend(&legend_area, terms, bars.pick().is_some())
}

/// The chart of one panel of bars.
type BarChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<ticks::Coord, ticks::Coord>>;

/// A red triangle pointing down at `(x, y)`, the tip there: the recommended bar's mark.
fn pick_marker((x, y): (i32, i32)) -> Polygon<(i32, i32)> {
    Polygon::new(
        vec![(x - 6, y - 11), (x + 6, y - 11), (x, y)],
        PICK.filled(),
    )
}

/// Every bar's segments, bottom to top in the terms' order.
fn draw_segments<DB: DrawingBackend>(
    chart: &mut BarChart<'_, DB>,
    bars: &Bars<'_>,
    terms: &[(Term, RGBColor)],
) -> DrawResult {
    for (k, ((_, get), colour)) in terms.iter().enumerate() {
        for (j, &i) in bars.idx.iter().enumerate() {
            let f = &bars.plan.front[i];
            let below: f64 = terms[..k].iter().map(|t| t.0.1(f).max(0.0)).sum();
            let v = get(f);
            let (a, b) = ((j as f64 - 0.4, below), (j as f64 + 0.4, below + v));
            // A negative term (a node law that gains time) is the outlined part of the stack
            // above the bar's total.
            let styles = if v < 0.0 {
                vec![WHITE.filled(), colour.stroke_width(1)]
            } else {
                vec![colour.filled()]
            };
            chart
                .draw_series(styles.into_iter().map(|st| Rectangle::new([a, b], st)))
                .map_err(err)?;
        }
    }
    Ok(())
}

/// The bars' labels under the axis, horizontal, as many as fit without touching; the
/// recommended bar's always, in red.
fn draw_bar_labels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &BarChart<'_, DB>,
    bars: &Bars<'_>,
) -> DrawResult {
    let font = ("sans-serif", 11).into_font();
    let measure = font.clone().color(&BLACK);
    let names = &bars.labels.0;
    let widest = names
        .iter()
        .map(|t| root.estimate_text_size(t, &measure).map(|s| s.0))
        .try_fold(0u32, |m, w| w.map(|w| m.max(w)))
        .map_err(err)?;
    let n = names.len();
    let (x0, x1) = (
        chart.backend_coord(&(0.0, 0.0)).0,
        chart.backend_coord(&((n.max(2) - 1) as f64, 0.0)).0,
    );
    let per_bar = f64::from(x1 - x0) / (n.max(2) - 1) as f64;
    let every = ((f64::from(widest) + 8.0) / per_bar.max(1.0)).ceil() as usize;
    let pick = bars.pick();
    for j in labelled(n, every, pick) {
        let (x, y) = chart.backend_coord(&(j as f64, 0.0));
        let colour = if Some(j) == pick { PICK } else { BLACK };
        let style = font
            .clone()
            .color(&colour)
            .pos(Pos::new(HPos::Center, VPos::Top));
        root.draw(&Text::new(names[j].clone(), (x, y + 6), style))
            .map_err(err)?;
    }
    Ok(())
}

/// The stacked bars' legend, in a column, the top segment's name first, then the mark of the
/// recommended bar.
fn stacked_legend<DB: DrawingBackend>(
    legend_area: &DrawingArea<DB, Shift>,
    terms: &[(Term, RGBColor)],
    pick: bool,
) -> DrawResult {
    let font = ("sans-serif", 12).into_font().color(&BLACK);
    for (k, ((name, _), colour)) in terms.iter().enumerate().rev() {
        let yk = 40 + 20 * (terms.len() - 1 - k) as i32;
        legend_area
            .draw(&Rectangle::new([(8, yk), (20, yk + 12)], colour.filled()))
            .map_err(err)?;
        legend_area
            .draw(&Text::new(name.to_string(), (26, yk), font.clone()))
            .map_err(err)?;
    }
    if pick {
        let yk = 40 + 20 * terms.len() as i32 + 8;
        legend_area.draw(&pick_marker((14, yk + 12))).map_err(err)?;
        legend_area
            .draw(&Text::new("recommended", (26, yk), font))
            .map_err(err)?;
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recommended_bar_is_kept_and_labelled_and_no_labels_touch() {
        let idx = bar_indices(100, 40, Some(37));
        assert!(idx.contains(&37) && idx.len() <= 40, "{idx:?}");
        assert_eq!((idx[0], *idx.last().unwrap()), (0, 99));
        let l = labelled(29, 3, Some(1));
        assert!(l.contains(&1), "{l:?}");
        assert!(l.windows(2).all(|w| w[1] - w[0] >= 3), "{l:?}");
    }
}
