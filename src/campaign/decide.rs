//! What a campaign measures next, or why it stops (MODEL.md 6d), as rules over what it has
//! measured and its last plan ([`View`]), tried in order by [`next`]: measure the
//! recommendation where it was not measured ([`unmeasured_recommendation`]); else measure the
//! count predicted to beat it by more than the tolerance ([`beaten_by_prediction`]); else
//! stop, stable. Whatever a rule chooses passes the cost guard ([`within_budget`]).

use crate::search::plan::{FrontEntry, Plan};
use std::collections::BTreeSet;

/// What the campaign measures next, or why it stops.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Measure this node count, for this reason.
    Measure(u32, String),
    /// Stop, for this reason.
    Stop(String),
}

/// What the rules see of a campaign.
pub struct View<'a> {
    /// The node counts measured.
    pub measured: &'a BTreeSet<u32>,
    /// The counts that can still be measured, up to the largest planned, not yet measured.
    pub unmeasured: Vec<u32>,
    /// How such a count is called (`recorded`, `available`).
    pub word: &'static str,
    /// The largest count planned.
    pub max_nodes: u32,
    /// The tolerance of [`beaten_by_prediction`].
    pub tolerance: f64,
    /// The node-hours the campaign may spend, and has spent.
    pub budget: Option<(f64, f64)>,
    /// Runs a count.
    pub repeat: u32,
    /// Whether `(nodes, cores)` was measured.
    pub measured_at: &'a dyn Fn(u32, u32) -> bool,
}

/// The next count to measure, or why the campaign stops.
pub fn next(view: &View<'_>, plan: &Plan) -> Next {
    let Some(rec) = plan.recommendation() else {
        return Next::Stop(format!("no recommendation: {}", plan.answer.reason));
    };
    let chosen = unmeasured_recommendation(view, rec)
        .or_else(|| beaten_by_prediction(view, plan, rec))
        .unwrap_or_else(|| stable(view, plan, rec));
    match chosen {
        Next::Measure(m, why) => within_budget(view, plan, m, why),
        stop => stop,
    }
}

/// The recommendation's count was not measured: measure it, or (not available) the nearest
/// count that is, in doublings; stop where a measured count lies nearer than any left.
pub fn unmeasured_recommendation(view: &View<'_>, rec: &FrontEntry) -> Option<Next> {
    let n = rec.prediction.config.nodes;
    let word = view.word;
    if view.measured.contains(&n) {
        return None;
    }
    if view.unmeasured.contains(&n) {
        return Some(Next::Measure(
            n,
            format!("the recommendation, {n} nodes, was not measured"),
        ));
    }
    // Nearness in doublings.
    let d = |m: u32| (f64::from(m) / f64::from(n)).ln().abs();
    let near = view
        .unmeasured
        .iter()
        .copied()
        .min_by(|&a, &b| d(a).total_cmp(&d(b)).then(a.cmp(&b)));
    let closest_measured = view
        .measured
        .iter()
        .map(|&m| d(m))
        .fold(f64::INFINITY, f64::min);
    Some(match near {
        Some(m) if d(m) >= closest_measured => Next::Stop(format!(
            "the recommendation, {n} nodes, was not {word}, and a measured count lies nearer to \
             it than any {word} count left"
        )),
        Some(m) => Next::Measure(
            m,
            format!(
                "the recommendation, {n} nodes, was not {word}: {m} is the nearest {word} count"
            ),
        ),
        None => Next::Stop(format!(
            "the recommendation, {n} nodes, was not measured and no {word} count is left"
        )),
    })
}

/// The recommendation's objective: energy-delay product, or node-hours x time (the energy of
/// a time-only plan).
fn objective(f: &FrontEntry) -> f64 {
    f.prediction.time.0 * f.prediction.energy.0
}

/// The unmeasured count with the best predicted objective, where it beats the measured
/// recommendation by more than the tolerance (the far-end ranking already prefers the
/// recommendation at its interval's high ends).
pub fn beaten_by_prediction(view: &View<'_>, plan: &Plan, rec: &FrontEntry) -> Option<Next> {
    let n = rec.prediction.config.nodes;
    let best = plan
        .front
        .iter()
        .filter(|f| view.unmeasured.contains(&f.prediction.config.nodes))
        .min_by(|a, b| objective(a).total_cmp(&objective(b)))?;
    if objective(best) >= objective(rec) * (1.0 - view.tolerance) {
        return None;
    }
    let m = best.prediction.config.nodes;
    Some(Next::Measure(
        m,
        format!(
            "the recommendation, {n} nodes, was measured{}, but {m} nodes are predicted to beat \
             its {} by {:.1}% (tolerance {:.1}%)",
            layout(view, rec),
            product(plan),
            100.0 * (1.0 - objective(best) / objective(rec)),
            100.0 * view.tolerance
        ),
    ))
}

/// Nothing is predicted to beat the measured recommendation by more than the tolerance.
fn stable(view: &View<'_>, plan: &Plan, rec: &FrontEntry) -> Next {
    Next::Stop(format!(
        "stable: the recommendation, {} nodes, was measured{}, and no unmeasured {} count up \
         to {} is predicted to beat its {} by more than {:.1}%",
        rec.prediction.config.nodes,
        layout(view, rec),
        view.word,
        view.max_nodes,
        product(plan),
        100.0 * view.tolerance
    ))
}

/// What the objective is called.
fn product(plan: &Plan) -> &'static str {
    match plan.time_only() {
        true => "product of node-hours and time",
        false => "energy-delay product",
    }
}

/// Where the recommendation's count was measured at other cores a node than it has.
fn layout(view: &View<'_>, rec: &FrontEntry) -> String {
    let (n, cores) = (rec.prediction.config.nodes, rec.prediction.config.cores);
    match (view.measured_at)(n, cores) {
        true => String::new(),
        false => format!(
            " (at other cores a node than its {cores}: give --cores to measure the layout you \
             plan)"
        ),
    }
}

/// Measures `m` unless its predicted cost would pass the node-hours the campaign may spend.
pub fn within_budget(view: &View<'_>, plan: &Plan, m: u32, why: String) -> Next {
    let Some((budget, spent)) = view.budget else {
        return Next::Measure(m, why);
    };
    let time = plan
        .front
        .iter()
        .find(|f| f.prediction.config.nodes == m)
        .or(plan.recommendation())
        .map_or(0.0, |f| f.prediction.time.0);
    let cost = f64::from(m) * time * f64::from(view.repeat.max(1)) / 3600.0;
    if spent + cost > budget {
        return Next::Stop(format!(
            "budget: {why}, but measuring {m} nodes would cost about {cost:.2} node-hours and \
             {:.2} of {budget:.2} are left",
            (budget - spent).max(0.0)
        ));
    }
    Next::Measure(m, why)
}
