//! What a campaign step reports: the count it measured, why, at what cost, and the
//! recommendation before and after ([`Step`], [`Rec`]), in words ([`said`]).

use crate::search::plan::{FrontEntry, Plan};
use crate::units::{Joules, Seconds, count, fmt_duration, fmt_energy, fmt_node_hours};
use serde::Serialize;

/// The recommendation as a step reports it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Rec {
    /// Node count.
    pub nodes: u32,
    /// Cores per node.
    pub cores: u32,
    /// Predicted time, s.
    pub time_s: f64,
    /// Predicted energy, J (null where energy is unavailable).
    pub energy_j: Option<f64>,
    /// The time interval, s (null at a measured count).
    pub time_interval_s: Option<(f64, f64)>,
    /// The energy interval, J.
    pub energy_interval_j: Option<(f64, f64)>,
    /// Whether this node count was measured at these cores a node.
    pub measured: bool,
    /// The mean time of those measured runs, s (null where not measured): the time shown is
    /// always the model's, as for every other count.
    pub measured_time_s: Option<f64>,
}

impl Rec {
    /// The recommendation of `plan`; `measured` gives the mean measured time at a node and
    /// core count, where there is one.
    pub fn of(plan: &Plan, measured: &dyn Fn(u32, u32) -> Option<f64>) -> Option<Rec> {
        plan.recommendation().map(|f| Rec::entry(f, measured))
    }

    fn entry(f: &FrontEntry, measured: &dyn Fn(u32, u32) -> Option<f64>) -> Rec {
        let p = &f.prediction;
        let at = measured(p.config.nodes, p.config.cores);
        Rec {
            nodes: p.config.nodes,
            cores: p.config.cores,
            time_s: p.time.0,
            energy_j: (!p.time_only).then_some(p.energy.0),
            time_interval_s: p.interval.map(|i| i.time_s),
            energy_interval_j: p.interval.filter(|_| !p.time_only).map(|i| i.energy_j),
            measured: at.is_some(),
            measured_time_s: at,
        }
    }
}

/// One step: what was measured, why, at what cost, and how the recommendation moved.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// 1, 2, ...
    pub step: usize,
    /// The node count measured.
    pub nodes: u32,
    /// Runs taken.
    pub runs: usize,
    /// Why this count.
    pub why: String,
    /// Its cost in node-hours (the runs' nodes x time).
    pub node_hours: f64,
    /// Its cost in node-runs (a run on `n` nodes costs `n`).
    pub node_runs: u32,
    /// The node-hours of every run so far, this step's included.
    pub spent_node_hours: f64,
    /// The predicted cost of the next step in node-hours (null where the campaign stops
    /// after this step, or before the start is fitted).
    pub next_node_hours: Option<f64>,
    /// What the last fit predicts the campaign measures after the next step, were every count
    /// to come out as predicted (null where it stops after this step, or before the start is
    /// fitted).
    pub ahead: Option<super::source::Ahead>,
    /// The recommendation before (none before the first fit).
    pub before: Option<Rec>,
    /// The recommendation after the refit.
    pub after: Option<Rec>,
    /// What the refit after this step found that the user should know (a node law or power
    /// that could not be fitted, the plan by time only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<String>,
}

impl Step {
    /// The step in words, as the campaign says it on standard error.
    pub fn said(&self) -> String {
        let mut s = format!(
            "step {}: measured {} ({}, {}, {}; {} spent): {}\n  \
             recommendation before: {}\n  after: {}",
            self.step,
            count(u64::from(self.nodes), "node", "nodes"),
            count(self.runs as u64, "run", "runs"),
            fmt_node_hours(self.node_hours),
            count(u64::from(self.node_runs), "node-run", "node-runs"),
            fmt_node_hours(self.spent_node_hours),
            self.why,
            said(&self.before),
            match (&self.after, self.findings.is_empty()) {
                (None, true) => "fitted once the start is measured".to_string(),
                _ => said(&self.after),
            }
        );
        for f in &self.findings {
            s += &format!("\n  found: {f}");
        }
        if let Some(c) = self.next_node_hours {
            s += &format!("\n  next step: predicted to cost {}", fmt_node_hours(c));
            if let Some(a) = self.ahead.filter(|a| a.steps > 0) {
                s += &format!(
                    "; then {} ({}, {}), were every count to come out as the fit predicts",
                    count(a.steps as u64, "more step", "more steps"),
                    count(u64::from(a.runs), "run", "runs"),
                    fmt_node_hours(a.node_hours)
                );
            }
        }
        s
    }
}

/// A recommendation in words: `11 nodes, 7m02.2s [6m44.3s, 7m21.0s], 1.87 MJ [...]`.
pub fn said(r: &Option<Rec>) -> String {
    let Some(r) = r else {
        return "none".into();
    };
    let mut s = format!(
        "{}, {}",
        count(u64::from(r.nodes), "node", "nodes"),
        fmt_duration(Seconds(r.time_s))
    );
    if let Some((lo, hi)) = r.time_interval_s {
        s += &format!(
            " [{}, {}]",
            fmt_duration(Seconds(lo)),
            fmt_duration(Seconds(hi))
        );
    }
    if let Some(e) = r.energy_j {
        s += &format!(", {}", fmt_energy(Joules(e)));
    }
    if let Some((lo, hi)) = r.energy_interval_j {
        s += &format!(" [{}, {}]", fmt_energy(Joules(lo)), fmt_energy(Joules(hi)));
    }
    if let Some(t) = r.measured_time_s {
        s += &format!(
            " (predicted; {} x {} were measured: {})",
            crate::units::count(r.nodes, "node", "nodes"),
            crate::units::count(r.cores, "core", "cores"),
            fmt_duration(Seconds(t))
        );
    }
    s
}
