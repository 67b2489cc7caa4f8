//! What the time-energy chart draws over the front: each front point's interval beyond the
//! measured node counts as error bars (time across, energy up), and measured runs as their own
//! markers. Bars are cut at the panel's edges; measured runs outside a panel are not drawn in it.

use super::ticks::Axis;
use super::{Chart, DrawResult, err};
use crate::model::evidence::IntervalKind;
use crate::search::plan::Plan;
use plotters::prelude::*;

/// The colour of measured runs (an orange that no UCR colour takes).
pub const MEASURED: RGBColor = RGBColor(230, 85, 13);

/// The colour of the interval bars.
pub fn bar_colour() -> RGBAColor {
    BLACK.mix(0.45)
}

/// A value in chart coordinates, held inside the axis's range.
fn inside(ax: &Axis, v: f64) -> f64 {
    let r = ax.range();
    ax.map(v).clamp(r.start, r.end)
}

/// Whether a value lies inside the axis's range.
fn within(ax: &Axis, v: f64) -> bool {
    ax.range().contains(&ax.map(v))
}

/// The interval of every front point that has one (`only`: of that front point alone): a
/// horizontal bar for time and a vertical bar for energy through the point, each end with a
/// short cap, or with an arrowhead at the panel's edge where the range runs past it.
pub fn draw_intervals<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    plan: &Plan,
    (tx, ey): (&Axis, &Axis),
    only: Option<usize>,
) -> DrawResult {
    let style = bar_colour().stroke_width(1);
    for (k, f) in plan.front.iter().enumerate() {
        let p = &f.prediction;
        let Some(i) = p.interval else { continue };
        if only.is_some_and(|o| o != k) || !(within(tx, p.time.0) && within(ey, p.energy.0)) {
            continue;
        }
        let (x, y) = (tx.map(p.time.0), ey.map(p.energy.0));
        let (x0, x1) = (inside(tx, i.time_s.0), inside(tx, i.time_s.1));
        let (y0, y1) = (inside(ey, i.energy_j.0), inside(ey, i.energy_j.1));
        // Caps a fixed share of the axis long, so they look alike on every panel.
        let cx = 0.008 * (tx.range().end - tx.range().start);
        let cy = 0.008 * (ey.range().end - ey.range().start);
        let cut = |ax: &Axis, v: f64| !within(ax, v);
        // An end inside the panel gets a cap across the bar; a cut end an arrowhead outward.
        let end = |(ex, ey_): (f64, f64), across: (f64, f64), out: (f64, f64), cut: bool| {
            if cut {
                [
                    (ex - out.0 + across.0, ey_ - out.1 + across.1),
                    (ex, ey_),
                    (ex - out.0 - across.0, ey_ - out.1 - across.1),
                ]
                .to_vec()
            } else {
                vec![
                    (ex - across.0, ey_ - across.1),
                    (ex + across.0, ey_ + across.1),
                ]
            }
        };
        let lines = [
            vec![(x0, y), (x1, y)],
            end((x0, y), (0.0, cy), (-cx, 0.0), cut(tx, i.time_s.0)),
            end((x1, y), (0.0, cy), (cx, 0.0), cut(tx, i.time_s.1)),
            vec![(x, y0), (x, y1)],
            end((x, y0), (cx, 0.0), (0.0, -cy), cut(ey, i.energy_j.0)),
            end((x, y1), (cx, 0.0), (0.0, cy), cut(ey, i.energy_j.1)),
        ];
        chart
            .draw_series(lines.into_iter().map(|l| PathElement::new(l, style)))
            .map_err(err)?;
    }
    Ok(())
}

/// Measured runs `(time s, energy J)` inside the panel, as orange triangles outlined in black.
pub fn draw_measured<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    measured: &[(f64, f64)],
    (tx, ey): (&Axis, &Axis),
) -> DrawResult {
    let pts: Vec<(f64, f64)> = measured
        .iter()
        .filter(|(t, e)| within(tx, *t) && within(ey, *e))
        .map(|&(t, e)| (tx.map(t), ey.map(e)))
        .collect();
    // A triangle is always filled: a black one under a smaller orange one outlines it.
    for (size, colour) in [(9, BLACK), (6, MEASURED)] {
        chart
            .draw_series(
                pts.iter()
                    .map(|&p| TriangleMarker::new(p, size, colour.filled())),
            )
            .map_err(err)?;
    }
    Ok(())
}

/// The legend's words for the front's intervals, when any front point has one: a fitted
/// law's `80% interval ...`, or a one-node profile's bounds (never called an interval).
pub fn legend_text(plan: &Plan) -> Option<String> {
    let i = plan.front.iter().find_map(|f| f.prediction.interval)?;
    // A clock's interval names the clock; one without a clock part is a node count's, as is
    // a clock's beyond the measured node counts.
    let (mut clocks, mut nodes) = (false, false);
    for p in plan.front.iter().map(|f| &f.prediction) {
        if let Some(r) = p.interval {
            clocks |= r.gpu_clock != (0.0, 0.0);
            nodes |= r.gpu_clock == (0.0, 0.0) || p.config.nodes > r.largest_measured;
        }
    }
    let at = match (clocks, nodes) {
        (true, false) => "GPU clocks",
        (true, true) => "node counts or GPU clocks",
        _ => "node counts",
    };
    Some(match i.kind {
        IntervalKind::Interval => format!("{} at {at} not measured", i.what()),
        IntervalKind::Bounds => format!(
            "bounds beyond the {} measured: perfect division to no gain",
            crate::units::count(i.largest_measured, "node", "nodes")
        ),
    })
}
