//! What a campaign measures next, or why it stops (MODEL.md 6d), as rules over what it has
//! measured and its last plan ([`View`]), tried in order by [`next`]:
//! 1. the recommendation was not measured: measure it ([`unmeasured_recommendation`]);
//! 2. bracket by measurement: the recommendation, or the best measured count, is the largest
//!    (smallest) count measured and a larger (smaller) one can be: measure beyond it
//!    (`bracket`); the extrapolation may choose how far, never whether;
//! 3. explore: an unmeasured count whose interval's favourable end beats the measured
//!    recommendation by more than the tolerance; of several, the one that narrows the decision
//!    most per node-hour (`explore`), until the best measured count is settled (measured
//!    twice, or with no run left to measure it again);
//! 4. confirm: a recommendation measured once is measured again, and again where its runs
//!    differ by more than the spread seen at other counts (`confirm`);
//! 5. else stop, stable, saying what could not be confirmed.
//!
//! Every count is judged by the plan's query ([`Objective`]): measured counts by the mean of
//! their runs, as `fit` takes them; unmeasured ones by the plan's predictions and intervals.
//! Whatever a rule chooses passes the cost guard ([`within_budget`]); a count it cannot pay
//! for gives way to the next rule's (explore takes the best count it can pay for), and the
//! campaign stops on the budget where no rule's count can be paid for (or where a run
//! reaches its budget limit, [`crate::campaign::RunSource::budget`]).

use super::objective::{Measured, Objective, Run, Score};
use crate::search::plan::{FrontEntry, Plan};
use crate::units::{count, fmt_node_hours};
use std::collections::BTreeSet;

/// `1 node`, `8 nodes`: a node count as the campaign's texts say it.
fn nodes(n: u32) -> String {
    count(n, "node", "nodes")
}

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
    /// The counts that can be measured again (a recording's counts with runs left).
    pub again: Vec<u32>,
    /// Every run so far.
    pub runs: &'a [Run],
    /// How such a count is called (`recorded`, `available`).
    pub word: &'static str,
    /// The largest count planned.
    pub max_nodes: u32,
    /// The gain an unmeasured count must be able to make to be measured.
    pub tolerance: f64,
    /// The node-hours the campaign may spend, and has spent.
    pub budget: Option<(f64, f64)>,
    /// Runs a count.
    pub repeat: u32,
    /// Whether `(nodes, cores)` was measured.
    pub measured_at: &'a dyn Fn(u32, u32) -> bool,
}

/// A view with the plan it decides on: its recommendation, objective and measured counts.
struct Ctx<'a> {
    view: &'a View<'a>,
    plan: &'a Plan,
    rec: &'a FrontEntry,
    o: Objective,
    m: Measured,
}

impl Ctx<'_> {
    /// The recommendation's count.
    fn n(&self) -> u32 {
        self.rec.prediction.config.nodes
    }

    /// How the rules name the recommendation's count: `the recommendation`, or `the fitted
    /// model's pick` where the best measured count is another (the campaign would recommend
    /// that one, were it to stop now).
    fn pick_said(&self) -> &'static str {
        match self.m.best(&self.o) {
            Some(b) if b != self.n() => "the fitted model's pick",
            _ => "the recommendation",
        }
    }

    /// The count the explored ones must beat: the best measured count (the recommendation
    /// where the plan and the measured means agree).
    fn reference(&self) -> Option<(u32, Score)> {
        let n = self.m.best(&self.o)?;
        Some((n, self.m.score(&self.o, n)?))
    }

    /// The run-to-run spread a difference must exceed: the median seen at counts other than
    /// `n` measured twice, at least the tolerance.
    fn spread(&self, n: u32) -> f64 {
        self.m
            .spread_elsewhere(n)
            .unwrap_or(0.0)
            .max(self.view.tolerance)
    }

    /// The plan's front entries on `n` nodes.
    fn entries(&self, n: u32) -> impl Iterator<Item = &FrontEntry> {
        self.plan
            .front
            .iter()
            .filter(move |f| f.prediction.config.nodes == n)
    }

    /// The best predicted score on `n` nodes, at the point (`favourable` false) or at its
    /// interval's low ends.
    fn predicted(&self, n: u32, favourable: bool) -> Option<Score> {
        self.entries(n)
            .map(|f| {
                let p = &f.prediction;
                match (favourable, p.interval) {
                    (true, Some(i)) => self.o.score(i.time_s.0, i.energy_j.0),
                    _ => self.o.score(p.time.0, p.energy.0),
                }
            })
            .min_by(|a, b| a.over.total_cmp(&b.over).then(a.value.total_cmp(&b.value)))
    }
}

/// The measured count the plan's query ranks best by the mean of its runs (at the
/// recommendation's cores a node), where there is one: the recommendation unless the fitted
/// model does not reproduce the measured counts.
pub fn measured_best(runs: &[Run], plan: &Plan) -> Option<u32> {
    let o = Objective::of(plan);
    let cores = plan.recommendation().map(|r| r.prediction.config.cores);
    Measured::new(runs, cores, o.time_only).best(&o)
}

/// By what fraction the measured count `a` beats the measured count `b` by the plan's query,
/// by the means of their runs (at the recommendation's cores a node), where both were measured.
pub fn measured_gain(runs: &[Run], plan: &Plan, a: u32, b: u32) -> Option<f64> {
    let o = Objective::of(plan);
    let cores = plan.recommendation().map(|r| r.prediction.config.cores);
    let m = Measured::new(runs, cores, o.time_only);
    Some(Objective::gain(m.score(&o, a)?, m.score(&o, b)?))
}

/// The next count to measure, or why the campaign stops.
pub fn next(view: &View<'_>, plan: &Plan) -> Next {
    let Some(rec) = plan.recommendation() else {
        return Next::Stop(format!("no recommendation: {}", plan.answer.reason));
    };
    let o = Objective::of(plan);
    let c = Ctx {
        view,
        plan,
        rec,
        o,
        m: Measured::new(view.runs, Some(rec.prediction.config.cores), o.time_only),
    };
    let rules: [&dyn Fn() -> Option<Next>; 4] = [
        &|| unmeasured_recommendation(view, rec),
        &|| bracket(&c),
        &|| explore(&c),
        &|| confirm(&c),
    ];
    // A rule whose count the budget cannot pay for gives way to the next rule's count; where
    // none can be paid for, the first one's budget stop says why the campaign ends.
    let mut over: Option<String> = None;
    for rule in rules {
        match rule().map(|n| guarded(view, plan, n)) {
            Some(Next::Measure(m, why)) => return Next::Measure(m, after_over(why, &over)),
            Some(Next::Stop(s)) => {
                over.get_or_insert(s);
            }
            None => {}
        }
    }
    over.map_or_else(|| stable(&c), Next::Stop)
}

/// A rule's choice through the cost guard.
fn guarded(view: &View<'_>, plan: &Plan, n: Next) -> Next {
    match n {
        Next::Measure(m, why) => within_budget(view, plan, m, why),
        stop => stop,
    }
}

/// The reason for a count, saying which earlier choice the budget could not pay for.
fn after_over(why: String, over: &Option<String>) -> String {
    match over {
        Some(o) => format!(
            "{why} (before it, {})",
            o.replacen("budget: ", "over budget: ", 1)
        ),
        None => why,
    }
}

/// Whether measuring `m` fits what is left of the budget (always, without one).
fn affordable(view: &View<'_>, plan: &Plan, m: u32) -> bool {
    matches!(
        within_budget(view, plan, m, String::new()),
        Next::Measure(..)
    )
}

/// The recommendation's count was not measured: measure it, or (not available) the nearest
/// count that is, in doublings; nothing where a measured count lies nearer than any left (the
/// other rules decide).
pub fn unmeasured_recommendation(view: &View<'_>, rec: &FrontEntry) -> Option<Next> {
    let n = rec.prediction.config.nodes;
    let word = view.word;
    if view.measured.contains(&n) {
        return None;
    }
    if view.unmeasured.contains(&n) {
        return Some(Next::Measure(
            n,
            format!("the recommendation, {}, was not measured", nodes(n)),
        ));
    }
    let d = |m: u32| (f64::from(m) / f64::from(n)).ln().abs();
    let near = view
        .unmeasured
        .iter()
        .copied()
        .min_by(|&a, &b| d(a).total_cmp(&d(b)).then(a.cmp(&b)))?;
    let closest_measured = view
        .measured
        .iter()
        .map(|&m| d(m))
        .fold(f64::INFINITY, f64::min);
    (d(near) < closest_measured).then(|| {
        Next::Measure(
            near,
            format!(
                "the recommendation, {}, was not {word}: {near} is the nearest {word} count",
                nodes(n)
            ),
        )
    })
}

/// Which way a bracket is sought.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Above,
    Below,
}

/// The recommendation, or the best measured count, is the largest (smallest) count measured
/// while a larger (smaller) one can be, or every count measured beyond it was worse by no more
/// than the run-to-run spread (noise could have made it so): measure beyond them.
fn bracket(c: &Ctx<'_>) -> Option<Next> {
    let best = c.m.best(&c.o);
    let mut ends: Vec<(u32, &str)> = vec![(c.n(), c.pick_said())];
    if let Some(b) = best.filter(|&b| b != c.n()) {
        ends.push((b, "the best measured count"));
    }
    for (n, what) in ends {
        for side in [Side::Above, Side::Below] {
            let Some((from, passed, far)) = open_side(c, n, side) else {
                continue;
            };
            let Some((to, how)) = jump(c, from, side, far) else {
                continue;
            };
            let (edge, beyond) = match side {
                Side::Above => ("largest", "larger"),
                Side::Below => ("smallest", "smaller"),
            };
            let state = match (far, passed.is_empty()) {
                (Some(m), _) => format!(
                    "beat {}, but {m} lies more than 4 times as far, with counts left between",
                    nodes(m)
                ),
                (None, true) => format!("is the {edge} count measured"),
                (None, false) => format!(
                    "was not beaten by more than the {:.1}% run-to-run spread (or tolerance) at \
                     the {beyond} counts measured ({})",
                    100.0 * c.spread(n),
                    crate::units::count_ranges(passed.iter().copied())
                ),
            };
            return Some(Next::Measure(
                to,
                format!(
                    "bracket: {what}, {}, {state}, and {beyond} {} counts are left: measured \
                     beyond {from} ({how})",
                    nodes(n),
                    c.view.word
                ),
            ));
        }
    }
    None
}

/// Whether `n` is open on `side`: the measured counts beyond it, in order, none worse than it
/// by more than the run-to-run spread, or the first that is worse lying more than 4 times as far
/// from the last of them with a count left between (a jump farther than the bracket's own, as a
/// far recommendation measured, that came out worse does not show where the objective turned). Gives the farthest of them (or `n`), them, and that far
/// worse count.
fn open_side(c: &Ctx<'_>, n: u32, side: Side) -> Option<(u32, Vec<u32>, Option<u32>)> {
    let at = c.m.score(&c.o, n);
    let spread = c.spread(n);
    let beyond: Vec<u32> = match side {
        Side::Above => c.view.measured.range(n + 1..).copied().collect(),
        Side::Below => c.view.measured.range(..n).rev().copied().collect(),
    };
    let mut passed = Vec::new();
    for &m in &beyond {
        let worse = match (at, c.m.score(&c.o, m)) {
            (Some(a), Some(s)) => Objective::gain(a, s) > spread,
            _ => false,
        };
        if worse {
            let from = *passed.last().unwrap_or(&n);
            let gap = c.view.unmeasured.iter().any(|&u| between(u, from, m));
            return (m.max(from) > 4 * m.min(from) && gap).then_some((from, passed, Some(m)));
        }
        passed.push(m);
    }
    Some((*passed.last().unwrap_or(&n), passed, None))
}

/// Whether `u` lies strictly between `a` and `b` (either order).
fn between(u: u32, a: u32, b: u32) -> bool {
    u > a.min(b) && u < a.max(b)
}

/// Where to measure beyond `n`: the count nearest twice (half) `n`, or farther, up to a factor
/// of 4, where the plan predicts a count there best and beating `n` by more than the
/// tolerance (a count short of the doubling would only need bracketing again). `None` where
/// no count lies beyond. Short of `limit`, a measured count beyond that was worse.
fn jump(c: &Ctx<'_>, n: u32, side: Side, limit: Option<u32>) -> Option<(u32, String)> {
    let beyond: Vec<u32> = c
        .view
        .unmeasured
        .iter()
        .copied()
        .filter(|&m| match side {
            Side::Above => m > n,
            Side::Below => m < n,
        })
        .filter(|&m| limit.is_none_or(|l| between(m, n, l)))
        .collect();
    let (near, far) = match side {
        Side::Above => (*beyond.first()?, *beyond.last()?),
        Side::Below => (*beyond.last()?, *beyond.first()?),
    };
    let within: Vec<u32> = beyond
        .iter()
        .copied()
        .filter(|&m| m.max(n) <= 4 * m.min(n))
        .collect();
    let target = match side {
        Side::Above => 2.0 * f64::from(n),
        Side::Below => 0.5 * f64::from(n),
    };
    let d = |m: u32| (f64::from(m) / target).ln().abs();
    let Some(doubling) = within
        .iter()
        .copied()
        .min_by(|&a, &b| d(a).total_cmp(&d(b)).then(a.cmp(&b)))
    else {
        return Some((near, format!("{near} is the nearest; {far} the farthest")));
    };
    let at = c.m.score(&c.o, n);
    let predicted = within
        .iter()
        .filter_map(|&m| Some((m, c.predicted(m, false)?)))
        .filter(|(_, s)| at.is_some_and(|a| Objective::gain(*s, a) > c.view.tolerance))
        .min_by(|a, b| {
            a.1.over
                .total_cmp(&b.1.over)
                .then(a.1.value.total_cmp(&b.1.value))
        });
    let farther = |m: u32| match side {
        Side::Above => m > doubling,
        Side::Below => m < doubling,
    };
    Some(match predicted {
        Some((m, s)) if farther(m) => (
            m,
            format!(
                "the plan predicts {} {:.1}% better; the doubling would be {doubling}",
                nodes(m),
                100.0 * at.map_or(0.0, |a| Objective::gain(s, a))
            ),
        ),
        _ => (
            doubling,
            format!("{doubling} is the {} count nearest {target}", c.view.word),
        ),
    })
}

/// The unmeasured counts whose interval's favourable end beats the measured reference by more
/// than a repeat differs (the run-to-run spread seen, at least the tolerance), short of the
/// measured counts on either side that were already worse than it; the one whose possible
/// gain beyond that is largest per node-hour it costs.
fn explore(c: &Ctx<'_>) -> Option<Next> {
    let (r, at) = c.reference()?;
    if settled(c, r) {
        return None;
    }
    let spread = c.spread(r);
    // A measured count worse than the reference fences off the counts beyond it.
    let worse = |m: u32| {
        c.m.score(&c.o, m)
            .is_some_and(|s| Objective::gain(at, s) > 0.0)
    };
    let fence_hi = c.m.counts.keys().copied().find(|&m| m > r && worse(m));
    let fence_lo =
        c.m.counts
            .keys()
            .rev()
            .copied()
            .find(|&m| m < r && worse(m));
    let tol = spread;
    let mut could: Vec<(u32, f64, f64, f64)> = c
        .view
        .unmeasured
        .iter()
        .copied()
        .filter(|&m| fence_hi.is_none_or(|f| m < f) && fence_lo.is_none_or(|f| m > f))
        .filter_map(|m| {
            let fav = Objective::gain(c.predicted(m, true)?, at);
            let point = Objective::gain(c.predicted(m, false)?, at);
            let cost = cost(c.view, c.plan, m);
            (fav > tol && cost > 0.0).then_some((m, fav, point, (fav - tol) / cost))
        })
        .collect();
    could.sort_by(|a, b| b.3.total_cmp(&a.3).then(a.0.cmp(&b.0)));
    // The best the budget can pay for; where it can pay for none, the best (the guard stops).
    let skipped = could
        .iter()
        .position(|x| affordable(c.view, c.plan, x.0))
        .unwrap_or(0);
    let &(m, fav, point, _) = could.get(skipped)?;
    let within = match skipped {
        0 => String::new(),
        k => format!(" of those the budget can pay for ({k} cannot be)"),
    };
    Some(Next::Measure(
        m,
        format!(
            "explore: {} could beat the {} of the best measured count, {}, by up \
             to {:.1}% at its interval's favourable end ({}; a repeat \
             differs by {:.1}%, the run-to-run spread or the tolerance); of {} such {}, it \
             narrows the decision most per node-hour{within} ({})",
            nodes(m),
            c.o.said(),
            nodes(r),
            100.0 * fav,
            point_said(point),
            100.0 * tol,
            could.len(),
            if could.len() == 1 { "count" } else { "counts" },
            fmt_node_hours(cost(c.view, c.plan, m))
        ),
    ))
}

/// The point prediction's gain in words: a gain of -1 is a prediction past the query's limit.
fn point_said(point: f64) -> String {
    if point <= -1.0 {
        "its point prediction is past the query's limit".to_string()
    } else {
        format!(
            "point prediction {}",
            crate::units::signed_percent(point, 1)
        )
    }
}

/// Whether the best measured count `r` is settled: bracketed on both sides (the bracket rule,
/// tried first, found no side open) and measured more than once, or with no run left to measure
/// it again. Exploring stops there: what it could still find is within what the bracket
/// and the confirmed mean already say.
fn settled(c: &Ctx<'_>, r: u32) -> bool {
    let runs = c.m.counts.get(&r).map_or(0, |a| a.runs);
    runs >= 2 || !c.view.again.contains(&r)
}

/// The recommendation, or the best measured count where they differ, measured once, or with
/// runs that differ by more than the spread seen at other counts (up to 3 runs): measure it
/// again, where it can be.
fn confirm(c: &Ctx<'_>) -> Option<Next> {
    let best = c.m.best(&c.o).filter(|&b| b != c.n());
    let mut which = vec![(c.n(), c.pick_said())];
    which.extend(best.map(|b| (b, "the best measured count")));
    which
        .into_iter()
        .find_map(|(n, what)| confirm_one(c, n, what))
}

/// [`confirm`] for one count.
fn confirm_one(c: &Ctx<'_>, n: u32, what: &str) -> Option<Next> {
    let at = c.m.counts.get(&n)?;
    if !c.view.again.contains(&n) {
        return None;
    }
    if at.runs == 1 {
        return Some(Next::Measure(
            n,
            format!(
                "confirm: {what}, {}, was measured once; one run can be an outlier, and the \
                 mean of its runs decides",
                nodes(n)
            ),
        ));
    }
    let spread = c.spread(n);
    (at.runs < 3 && at.spread > spread).then(|| {
        Next::Measure(
            n,
            format!(
                "confirm: the {} runs of {what} on {} differ by {:.1}%, more than the {:.1}% \
                 seen at other counts (or the tolerance): measured again",
                at.runs,
                nodes(n),
                100.0 * at.spread,
                100.0 * spread
            ),
        )
    })
}

/// Why the recommendation stands, and what could not be confirmed. The recommendation is the
/// best measured count by the mean of its runs; where the fitted model picks another, it says so.
fn stable(c: &Ctx<'_>) -> Next {
    let pick = c.n();
    let n = c.reference().map_or(pick, |(b, _)| b);
    let word = c.view.word;
    let at = c.m.counts.get(&n);
    let runs = at.map_or(0, |a| a.runs);
    let below = match c.view.measured.range(..n).next_back() {
        Some(m) => format!("{} measured below", nodes(*m)),
        None => format!("no {word} count below"),
    };
    let above = match c.view.measured.range(n + 1..).next() {
        Some(m) => format!("{} measured above", nodes(*m)),
        None => format!("no {word} count above up to {}", c.view.max_nodes),
    };
    let times = match runs {
        1 => "once".to_string(),
        k => format!("{k} times"),
    };
    let what = match n == pick {
        true => "the recommendation",
        false => "the best measured count",
    };
    let mut s = format!(
        "stable: {what}, {}, was measured {times}{}, bracketed by {below} and {above}, and no \
         unmeasured {word} count, even at its interval's favourable end, beats its {} by more \
         than {:.1}%",
        nodes(n),
        match n == pick {
            true => layout(c.view, c.rec),
            false => String::new(),
        },
        c.o.said(),
        100.0 * c.view.tolerance
    );
    match at {
        Some(a) if a.runs == 1 => {
            s += &format!(
                "; it could not be confirmed: no other {word} run on {} is left, so one run \
                 decides",
                nodes(n)
            )
        }
        Some(a) if a.spread > c.spread(n) => {
            s += &format!(
                "; its {} runs differ by {:.1}%, more than the {:.1}% seen at other counts, \
                 and it was not measured again ({}): their mean decides",
                a.runs,
                100.0 * a.spread,
                100.0 * c.spread(n),
                match a.runs >= 3 {
                    true => "3 runs taken",
                    false => "no other run is left",
                }
            )
        }
        None => {
            s = format!(
                "stable: the recommendation, {}, was not {word}, and no count was measured at \
                 its cores a node; it is bracketed by {below} and {above}, and no unmeasured \
                 {word} count beats it by more than {:.1}% even at its interval's favourable end",
                nodes(n),
                100.0 * c.view.tolerance
            )
        }
        _ => {}
    }
    if n != pick {
        s += &format!("; {}", model_differs(c, pick, n));
    }
    Next::Stop(s)
}

/// The fitted model's pick, `pick`, against the best measured count `n`, in words.
fn model_differs(c: &Ctx<'_>, pick: u32, n: u32) -> String {
    let measured = match (c.m.score(&c.o, n), c.m.score(&c.o, pick)) {
        (Some(b), Some(p)) => format!(
            "as measured, {} beat it by {:.1}%",
            nodes(n),
            100.0 * Objective::gain(b, p)
        ),
        _ => format!("it was not {}", c.view.word),
    };
    format!(
        "the fitted model picks {}, but {measured}: the campaign recommends {}, the best \
         measured count by the mean of its runs (the model does not reproduce the measured \
         counts closely enough to tell them apart)",
        nodes(pick),
        nodes(n)
    )
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

/// The predicted cost of measuring `m`, node-hours: `repeat` runs of its mean measured time,
/// else of its predicted time (the fastest planned on `m` nodes, else the recommendation's).
pub fn cost(view: &View<'_>, plan: &Plan, m: u32) -> f64 {
    cost_of(view, plan, m, false)
}

/// [`cost`], or with `high` at the unfavourable end of the predicted time's interval where it
/// has one (a count beyond the largest measured): what a budget must allow for.
fn cost_of(view: &View<'_>, plan: &Plan, m: u32, high: bool) -> f64 {
    let measured: Vec<f64> = view
        .runs
        .iter()
        .filter(|r| r.nodes == m)
        .map(|r| r.time)
        .collect();
    let at = |f: &crate::model::Prediction| match (high, &f.interval) {
        (true, Some(i)) => i.time_s.1.max(f.time.0),
        _ => f.time.0,
    };
    let time = match measured.is_empty() {
        false => measured.iter().sum::<f64>() / measured.len() as f64,
        true => plan
            .front
            .iter()
            .filter(|f| f.prediction.config.nodes == m)
            .min_by(|a, b| a.prediction.time.0.total_cmp(&b.prediction.time.0))
            .or(plan.recommendation())
            .map_or(0.0, |f| at(&f.prediction)),
    };
    f64::from(m) * time * f64::from(view.repeat.max(1)) / 3600.0
}

/// Measures `m` unless its cost could pass the node-hours the campaign may spend: its
/// predicted time taken at its interval's unfavourable end, so that a prediction that errs
/// on the fast side is less likely to be stopped at its budget limit. The interval only
/// chooses: the bound is each run's time limit ([`crate::campaign::RunSource::budget`]), at
/// which a run beyond its far end is stopped.
pub fn within_budget(view: &View<'_>, plan: &Plan, m: u32, why: String) -> Next {
    let Some((budget, spent)) = view.budget else {
        return Next::Measure(m, why);
    };
    let (cost, high) = (cost(view, plan, m), cost_of(view, plan, m, true));
    if spent + high > budget {
        let reach = match high > cost * (1.0 + 1e-9) {
            true => format!(
                " (up to {} at its interval's far end)",
                fmt_node_hours(high)
            ),
            false => String::new(),
        };
        return Next::Stop(format!(
            "budget: {why}, but measuring {} would cost about {}{reach} and {} of the {} budget \
             are left",
            nodes(m),
            fmt_node_hours(cost),
            fmt_node_hours((budget - spent).max(0.0)),
            fmt_node_hours(budget)
        ));
    }
    Next::Measure(m, why)
}
