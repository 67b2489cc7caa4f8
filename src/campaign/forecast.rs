//! What a campaign is predicted to measure after the step it is taking ([`after`]): its rules
//! ([`decide::next`]) run forward on the last plan, each count they choose taken as the plan
//! predicts it (a count measured before, as the mean of its runs), until they stop. The
//! campaign's progress says the time left from it; no run is invented into the campaign.

use super::decide::{self, Next, View};
use super::objective::Run;
use super::source::Ahead;
use crate::search::plan::Plan;
use std::collections::BTreeSet;

/// Steps forecast at most: a campaign past them is said as at least that long.
const MAX_STEPS: usize = 64;

/// The steps the rules would take on `plan` after measuring `first` (`view`'s state), were
/// every count to come out as predicted.
pub fn after(view: &View<'_>, plan: &Plan, first: u32) -> Ahead {
    let cores = plan
        .recommendation()
        .map(|r| r.prediction.config.cores)
        .unwrap_or(1);
    let repeat = view.repeat.max(1);
    let mut runs: Vec<Run> = view.runs.to_vec();
    let mut measured: BTreeSet<u32> = view.measured.clone();
    let mut again: BTreeSet<u32> = view.again.iter().copied().collect();
    let mut spent = view.budget.map_or(0.0, |(_, s)| s);
    let mut ahead = Ahead {
        steps: 0,
        runs: 0,
        node_hours: 0.0,
        seconds: 0.0,
    };
    let take = |m: u32, runs: &mut Vec<Run>| {
        let r = predicted_run(runs, plan, m, cores);
        runs.extend(std::iter::repeat_n(r, repeat as usize));
        f64::from(m) * r.time * f64::from(repeat) / 3600.0
    };
    spent += take(first, &mut runs);
    measured.insert(first);
    again.insert(first);
    for _ in 0..MAX_STEPS {
        let at: Vec<(u32, u32)> = runs.iter().map(|r| (r.nodes, r.cores)).collect();
        let measured_at = |n: u32, c: u32| at.contains(&(n, c));
        let v = View {
            measured: &measured,
            unmeasured: view
                .unmeasured
                .iter()
                .copied()
                .filter(|m| !measured.contains(m))
                .collect(),
            again: again.iter().copied().collect(),
            runs: &runs,
            budget: view.budget.map(|(b, _)| (b, spent)),
            measured_at: &measured_at,
            ..*view
        };
        let Next::Measure(m, _) = decide::next(&v, plan) else {
            break;
        };
        let cost = take(m, &mut runs);
        spent += cost;
        measured.insert(m);
        again.insert(m);
        ahead.steps += 1;
        ahead.runs += repeat;
        ahead.node_hours += cost;
        ahead.seconds += cost * 3600.0 / f64::from(m);
    }
    ahead
}

/// A run on `m` nodes as the campaign expects it: the mean of the runs there, else the plan's
/// prediction at the recommendation's cores a node (the fastest planned on `m` nodes, else the
/// recommendation's own).
fn predicted_run(runs: &[Run], plan: &Plan, m: u32, cores: u32) -> Run {
    let there: Vec<&Run> = runs.iter().filter(|r| r.nodes == m).collect();
    let time_only = plan.time_only();
    if !there.is_empty() {
        let k = there.len() as f64;
        let energy: Option<f64> = there.iter().map(|r| r.energy).sum();
        return Run {
            nodes: m,
            cores: there[0].cores,
            time: there.iter().map(|r| r.time).sum::<f64>() / k,
            energy: energy.map(|e| e / k),
        };
    }
    let on_m = plan
        .front
        .iter()
        .filter(|f| f.prediction.config.nodes == m)
        .min_by(|a, b| {
            let key = |f: &&crate::search::plan::FrontEntry| f.prediction.config.cores != cores;
            key(a)
                .cmp(&key(b))
                .then(a.prediction.time.0.total_cmp(&b.prediction.time.0))
        })
        .or(plan.recommendation());
    let (time, energy) = on_m.map_or((0.0, 0.0), |f| (f.prediction.time.0, f.prediction.energy.0));
    Run {
        nodes: m,
        cores,
        time,
        energy: (!time_only).then_some(energy),
    }
}
