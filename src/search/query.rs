//! Recommendation queries (MODEL.md section 7): a deadline, an energy budget, a slowdown
//! allowance against a fixed reference time, or none (then the front point with the least
//! energy-delay product `E x T`). Every answer lies on the front: a configuration off the front
//! is dominated by a front point that is no slower and uses no more energy.

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

/// Answers `q` on `front` (fastest first). `label` renders a front point for messages.
pub fn answer(
    q: &Query,
    front: &[FrontPoint],
    reference: Option<&Reference>,
    label: impl Fn(&FrontPoint) -> String,
) -> Answer {
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
            fmt_energy(Joules(p.energy))
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
        (None, None) => least_edp(front),
        (Some(l), e) => within_time(front, &time_text(l), l, e, &at),
        (None, Some(b)) => within_budget(front, b, &at),
    };
    done(pick, reason)
}

/// No limit: the front point with the least energy-delay product.
fn least_edp(front: &[FrontPoint]) -> (Option<usize>, String) {
    let best = (0..front.len())
        .min_by(|&a, &b| {
            (front[a].time * front[a].energy).total_cmp(&(front[b].time * front[b].energy))
        })
        .unwrap_or(0);
    (
        Some(best),
        "no deadline, budget or slowdown given: the front point with the least energy-delay \
         product (E x T)"
            .into(),
    )
}

/// A time limit `l` (said as `limit`), perhaps with a budget `e`: the least energy within it.
fn within_time(
    front: &[FrontPoint],
    limit: &str,
    l: Seconds,
    e: Option<Joules>,
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
            format!("least energy that finishes within {limit}")
                + &e.map(|b| format!(" and within {}", fmt_energy(b)))
                    .unwrap_or_default(),
        ),
    }
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
        return (
            None,
            format!(
                "infeasible: no configuration uses at most {}; the nearest front point is the \
                 least-energy one, {}",
                fmt_energy(b),
                at(last)
            ),
        );
    }
    (
        Some(j),
        format!("fastest within the energy budget of {}", fmt_energy(b)),
    )
}
