//! Recommendation queries (MODEL.md section 7): a deadline, an energy budget, a slowdown
//! allowance against a fixed reference time, or none (then the front point with the least
//! energy-delay product `E x T`, each point's product taken at the far end of its interval
//! where it has one). Every answer lies on the front: a configuration off the front is
//! dominated by a front point that is no slower and uses no more energy.

use super::front::FrontPoint;
use crate::units::{Joules, Seconds, fmt_duration, fmt_energy};

/// What the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Query {
    /// `--deadline`: least energy with `T <= D`.
    pub deadline: Option<Seconds>,
    /// `--budget`: least time with `E <= B` (with a deadline too: least energy within both).
    pub budget: Option<Joules>,
    /// `--slowdown th`: least energy with `T <= (1 + th) T_ref`.
    pub slowdown: Option<f64>,
    /// `--min-efficiency`: only configurations whose predicted host parallel efficiency is at
    /// least this (applied in the search, so the front is the exact front of those).
    pub min_efficiency: Option<f64>,
}

/// The reference time of a slowdown query.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// `T_ref`.
    pub time: Seconds,
    /// What it is (`the fastest configuration (...)` or the one the user named).
    pub what: String,
}

/// The answer to a query.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// Index of the recommended front point, `None` when infeasible.
    pub pick: Option<usize>,
    /// The time limit applied (deadline, or `(1 + th) T_ref`).
    pub time_limit: Option<Seconds>,
    /// The energy limit applied.
    pub energy_limit: Option<Joules>,
    /// A one-line reason for the pick, or why nothing fits.
    pub reason: String,
    /// Whether a configuration satisfies the query.
    pub feasible: bool,
}

/// The front's second axis, as the answers name it: energy, or node-hours where no power was
/// measured (the model's "energy" is then node-seconds: one watt a node and nothing else).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Cost {
    /// Joules.
    #[default]
    Energy,
    /// Node-seconds, said as node-hours.
    NodeHours,
}

impl Cost {
    /// An amount on this axis, in its unit.
    pub fn amount(self, v: f64) -> String {
        match self {
            Cost::Energy => fmt_energy(Joules(v)),
            Cost::NodeHours => crate::units::fmt_node_hours(v / 3600.0),
        }
    }

    /// "least energy" or "fewest node-hours".
    fn least(self) -> &'static str {
        match self {
            Cost::Energy => "least energy",
            Cost::NodeHours => "fewest node-hours",
        }
    }

    /// The product the default query minimises, in words.
    fn product(self) -> &'static str {
        match self {
            Cost::Energy => "energy-delay product (E x T)",
            Cost::NodeHours => "product of node-hours and time (energy is unavailable)",
        }
    }
}

/// How the front's points are ranked: the cost axis, and each point's far end `(T, E)` (the
/// high ends of its interval; the point itself where it has none), in front order.
#[derive(Debug, Clone, Copy)]
pub struct Ranking<'a> {
    /// The second axis.
    pub cost: Cost,
    /// The far end of each front point, and the intervals' nominal coverage where any has one.
    pub far: (&'a [(f64, f64)], Option<f64>),
}

/// Answers `q` on `front` (fastest first). `label` renders a front point for messages.
pub fn answer(
    q: &Query,
    front: &[FrontPoint],
    (reference, ranking): (Option<&Reference>, Ranking<'_>),
    label: impl Fn(&FrontPoint) -> String,
) -> Answer {
    let cost = ranking.cost;
    let time_limit = match (q.deadline, q.slowdown, reference) {
        (Some(d), _, _) => Some(d),
        (None, Some(th), Some(r)) => Some(Seconds((1.0 + th) * r.time.0)),
        _ => None,
    };
    let energy_limit = q.budget;
    let at = |p: &FrontPoint| {
        format!(
            "{} ({}, {})",
            label(p),
            fmt_duration(Seconds(p.time)),
            cost.amount(p.energy)
        )
    };
    let done = |pick: Option<usize>, reason: String| Answer {
        pick,
        time_limit,
        energy_limit,
        feasible: pick.is_some(),
        reason,
    };
    if front.is_empty() {
        return done(
            None,
            "every configuration of the space saturates the network (rho >= 1): no finite prediction".into(),
        );
    }
    let time_text = |l: Seconds| match (q.slowdown, reference) {
        (Some(th), Some(r)) if q.deadline.is_none() => format!(
            "{} ({:.0}% slower than {}, {})",
            fmt_duration(l),
            th * 100.0,
            r.what,
            fmt_duration(r.time)
        ),
        _ => fmt_duration(l),
    };
    let (pick, reason) = match (time_limit, energy_limit) {
        (None, None) => least_edp(front, ranking),
        (Some(l), e) => within_time(front, (&time_text(l), l, e), cost, &at),
        (None, Some(b)) => within_budget(front, b, &at),
    };
    done(pick, reason)
}

/// No limit: the front point with the least energy-delay product at the far end of its
/// interval. An unmeasured count is chosen over a measured one only where it is better even
/// if its time and energy come out at their interval's high ends (judged on held-out
/// recommendations: docs/NODE_AXIS.md).
fn least_edp(front: &[FrontPoint], ranking: Ranking<'_>) -> (Option<usize>, String) {
    let (far, coverage) = ranking.far;
    let product = |i: usize| match far.get(i) {
        Some(&(t, e)) => t * e,
        None => front[i].time * front[i].energy,
    };
    let best = (0..front.len())
        .min_by(|&a, &b| product(a).total_cmp(&product(b)))
        .unwrap_or(0);
    let mut reason = format!(
        "no deadline, budget or slowdown given: the front point with the least {}",
        ranking.cost.product()
    );
    if let Some(c) = coverage {
        reason += &format!(
            ", each taken at the high end of its {} interval where it has one",
            crate::units::coverage_pct(c)
        );
    }
    (Some(best), reason)
}

/// A time limit `l` (said as `limit`), perhaps with a budget `e`: the least energy within it.
fn within_time(
    front: &[FrontPoint],
    (limit, l, e): (&str, Seconds, Option<Joules>),
    cost: Cost,
    at: &dyn Fn(&FrontPoint) -> String,
) -> (Option<usize>, String) {
    // Energy falls along the front: the last point within the time limit uses the least.
    let i = front.partition_point(|p| p.time <= l.0);
    if i == 0 {
        let mut msg = format!(
            "infeasible: no configuration finishes within {limit}; the nearest front point is \
             the fastest, {}",
            at(&front[0])
        );
        let fastest = front[0].time;
        if fmt_duration(Seconds(fastest)) == fmt_duration(l) {
            let (t, l) = told_apart(fastest, l.0);
            msg.push_str(&format!(": its {t} s is above the limit's {l} s"));
        }
        if let Some(b) = e {
            msg.push_str(&format!(" (budget {})", fmt_energy(b)));
        }
        return (None, msg);
    }
    let p = &front[i - 1];
    match e {
        Some(b) if p.energy > b.0 => {
            let j = front.partition_point(|p| p.energy > b.0);
            let other = if j < front.len() {
                format!("; the fastest within the budget is {}", at(&front[j]))
            } else {
                "; no configuration at all is within the budget".into()
            };
            let msg = format!(
                "infeasible: nothing meets both {limit} and {}: the least energy within the time \
                 is {}{other}",
                fmt_energy(b),
                at(p)
            );
            (None, msg)
        }
        _ => (
            Some(i - 1),
            format!("{} that finishes within {limit}", cost.least())
                + &e.map(|b| format!(" and within {}", fmt_energy(b)))
                    .unwrap_or_default(),
        ),
    }
}

/// `a` and `b` with as many decimals as tell them apart (a limit and a point that print
/// alike at three digits: `17.3 ms` within no `17.3 ms`).
pub(crate) fn told_apart(a: f64, b: f64) -> (String, String) {
    let digits = (1..=15)
        .find(|&d| format!("{a:.d$}") != format!("{b:.d$}"))
        .unwrap_or(15);
    (format!("{a:.digits$}"), format!("{b:.digits$}"))
}

/// An energy budget alone: the fastest within it.
fn within_budget(
    front: &[FrontPoint],
    b: Joules,
    at: &dyn Fn(&FrontPoint) -> String,
) -> (Option<usize>, String) {
    let j = front.partition_point(|p| p.energy > b.0);
    if j == front.len() {
        let last = &front[front.len() - 1];
        let mut msg = format!(
            "infeasible: no configuration uses at most {}; the nearest front point is the \
             least-energy one, {}",
            fmt_energy(b),
            at(last)
        );
        if fmt_energy(Joules(last.energy)) == fmt_energy(b) {
            let (e, b) = told_apart(last.energy, b.0);
            msg.push_str(&format!(": its {e} J is above the budget's {b} J"));
        }
        return (None, msg);
    }
    (
        Some(j),
        format!("fastest within the energy budget of {}", fmt_energy(b)),
    )
}
