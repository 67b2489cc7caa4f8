//! What the time-energy chart draws over the front: each front point's interval beyond the
//! measured node counts as error bars (time across, energy up), and measured runs as their own
//! markers. Bars are cut at the panel's edges; measured runs outside a panel are not drawn in it.

use super::ticks::Axis;
use super::{Chart, DrawResult, err};
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

/// The interval of every front point that has one: a horizontal bar for time and a vertical
/// bar for energy through the point, each with short end caps.
pub fn draw_intervals<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    plan: &Plan,
    (tx, ey): (&Axis, &Axis),
) -> DrawResult {
    let style = bar_colour().stroke_width(1);
    for f in &plan.front {
        let p = &f.prediction;
        let Some(i) = p.interval else { continue };
        if !(within(tx, p.time.0) && within(ey, p.energy.0)) {
            continue;
        }
        let (x, y) = (tx.map(p.time.0), ey.map(p.energy.0));
        let (x0, x1) = (inside(tx, i.time_s.0), inside(tx, i.time_s.1));
        let (y0, y1) = (inside(ey, i.energy_j.0), inside(ey, i.energy_j.1));
        // Caps a fixed share of the axis long, so they look alike on every panel.
        let cx = 0.008 * (tx.range().end - tx.range().start);
        let cy = 0.008 * (ey.range().end - ey.range().start);
        let lines = [
            [(x0, y), (x1, y)],
            [(x0, y - cy), (x0, y + cy)],
            [(x1, y - cy), (x1, y + cy)],
            [(x, y0), (x, y1)],
            [(x - cx, y0), (x + cx, y0)],
            [(x - cx, y1), (x + cx, y1)],
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

/// The intervals' nominal coverage, when any front point has an interval.
pub fn coverage(plan: &Plan) -> Option<f64> {
    plan.front
        .iter()
        .find_map(|f| f.prediction.interval.map(|i| i.coverage))
}
