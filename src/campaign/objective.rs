//! What a campaign minimises, as the plan's query answers it ([`Objective`]): the energy-delay
//! product (node-hours x time where energy is unavailable) with no limit; the least energy
//! within a time limit (`--deadline`, or `--slowdown` against the plan's reference); the least
//! time within an energy limit (`--budget`). A configuration's [`Score`] puts every one that
//! meets the limits before any that does not, and [`Objective::gain`] says by what fraction one
//! beats another, so the rules judge measured and predicted counts alike.
//!
//! The measured side ([`Measured`]) takes each count's runs as `fit` takes them: the mean of the
//! runs at a count decides, and the run-to-run spread is what a difference must exceed to be
//! told from repeating a run.

use crate::search::plan::Plan;
use std::collections::BTreeMap;

/// The plan's query as the campaign's rules use it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Objective {
    /// The time limit the plan applied (a deadline, or `(1 + th) T_ref` of a slowdown), s.
    pub time_limit: Option<f64>,
    /// The energy limit the plan applied (a budget), J.
    pub energy_limit: Option<f64>,
    /// The plan ranks by time and node-hours: energy is node-seconds (`n T`).
    pub time_only: bool,
}

/// A configuration judged by the objective: how far it lies beyond the limits (0 within them)
/// and the quantity minimised within them. Lower is better on both, `over` first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score {
    /// How far beyond the limits, as a fraction (`T / limit - 1`, summed over the limits).
    pub over: f64,
    /// The quantity minimised: `E x T`, the energy, or the time.
    pub value: f64,
}

impl Objective {
    /// The objective of `plan`'s query.
    pub fn of(plan: &Plan) -> Objective {
        Objective {
            time_limit: plan.answer.time_limit.map(|t| t.0),
            energy_limit: plan.answer.energy_limit.map(|e| e.0),
            time_only: plan.time_only(),
        }
    }

    /// The score of a run or prediction of `time` s and `energy` J.
    pub fn score(&self, time: f64, energy: f64) -> Score {
        let beyond = |v: f64, l: Option<f64>| l.map_or(0.0, |l| (v / l - 1.0).max(0.0));
        let over = beyond(time, self.time_limit) + beyond(energy, self.energy_limit);
        let value = match (self.time_limit, self.energy_limit) {
            (None, None) => time * energy,
            (Some(_), _) => energy,
            (None, Some(_)) => time,
        };
        Score { over, value }
    }

    /// The fraction by which `a` beats `b` (negative where it is worse): on the quantity
    /// minimised where both meet the limits, on the distance to them where neither does; 1
    /// (or -1) where only `a` (only `b`) meets them.
    pub fn gain(a: Score, b: Score) -> f64 {
        match (a.over > 0.0, b.over > 0.0) {
            (false, false) => 1.0 - a.value / b.value,
            (true, true) => 1.0 - (1.0 + a.over) / (1.0 + b.over),
            (false, true) => 1.0,
            (true, false) => -1.0,
        }
    }

    /// What is minimised, in words.
    pub fn said(&self) -> &'static str {
        match (self.time_limit, self.energy_limit, self.time_only) {
            (None, None, true) => "product of node-hours and time",
            (None, None, false) => "energy-delay product",
            (Some(_), _, true) => "node-hours within the time limit",
            (Some(_), _, false) => "energy within the time limit",
            (None, Some(_), _) => "time within the energy budget",
        }
    }
}

/// One run as the objective sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Run {
    /// Node count.
    pub nodes: u32,
    /// Cores a node.
    pub cores: u32,
    /// Time, s.
    pub time: f64,
    /// Energy, J, where measured.
    pub energy: Option<f64>,
}

/// A measured count: its runs' mean time and energy, and how far its runs differ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Count {
    /// Runs at this count.
    pub runs: usize,
    /// The mean time, s.
    pub time: f64,
    /// The mean energy as the objective takes it, J (node-seconds where time only); `None`
    /// where a run lacks the energy the objective needs.
    pub energy: Option<f64>,
    /// `(slowest - fastest) / mean` of the runs' times (0 for one run).
    pub spread: f64,
}

/// Every measured count at the cores a node the recommendation has (or, at a count not run
/// at them, every layout run there).
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// Each count.
    pub counts: BTreeMap<u32, Count>,
}

impl Measured {
    /// The counts of `runs`, at `cores` a node where a count was run at them.
    pub fn new(runs: &[Run], cores: Option<u32>, time_only: bool) -> Measured {
        let mut by: BTreeMap<u32, Vec<Run>> = BTreeMap::new();
        for r in runs {
            by.entry(r.nodes).or_default().push(*r);
        }
        let counts = by
            .into_iter()
            .map(|(n, rs)| {
                let at: Vec<Run> = match rs.iter().any(|r| Some(r.cores) == cores) {
                    true => rs.into_iter().filter(|r| Some(r.cores) == cores).collect(),
                    false => rs,
                };
                (n, count(n, &at, time_only))
            })
            .collect();
        Measured { counts }
    }

    /// The score of the measured count `n`, where it has one.
    pub fn score(&self, o: &Objective, n: u32) -> Option<Score> {
        let c = self.counts.get(&n)?;
        Some(o.score(c.time, c.energy?))
    }

    /// The measured count with the best score (the smaller on a tie).
    pub fn best(&self, o: &Objective) -> Option<u32> {
        let scored = self
            .counts
            .keys()
            .filter_map(|&n| Some((n, self.score(o, n)?)));
        scored
            .min_by(|a, b| {
                let (x, y) = (a.1, b.1);
                x.over.total_cmp(&y.over).then(x.value.total_cmp(&y.value))
            })
            .map(|(n, _)| n)
    }

    /// The run-to-run spread seen at counts other than `n` measured twice or more: their
    /// median (`None` where no other count was).
    pub fn spread_elsewhere(&self, n: u32) -> Option<f64> {
        let mut s: Vec<f64> = self
            .counts
            .iter()
            .filter(|(m, c)| **m != n && c.runs >= 2)
            .map(|(_, c)| c.spread)
            .collect();
        s.sort_by(f64::total_cmp);
        (!s.is_empty()).then(|| s[s.len() / 2])
    }
}

/// The mean of runs on `n` nodes.
fn count(n: u32, runs: &[Run], time_only: bool) -> Count {
    let k = runs.len().max(1) as f64;
    let time = runs.iter().map(|r| r.time).sum::<f64>() / k;
    let energy = match time_only {
        true => Some(f64::from(n) * time),
        false => runs
            .iter()
            .map(|r| r.energy)
            .sum::<Option<f64>>()
            .map(|e| e / k),
    };
    let (lo, hi) = runs.iter().fold((f64::INFINITY, 0.0_f64), |(lo, hi), r| {
        (lo.min(r.time), hi.max(r.time))
    });
    let spread = match runs.len() >= 2 && time > 0.0 {
        true => (hi - lo) / time,
        false => 0.0,
    };
    Count {
        runs: runs.len(),
        time,
        energy,
        spread,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(nodes: u32, time: f64, energy: f64) -> Run {
        Run {
            nodes,
            cores: 72,
            time,
            energy: Some(energy),
        }
    }

    #[test]
    fn the_mean_of_a_count_s_runs_decides_and_its_spread_is_relative() {
        // The two recorded runs at 9 nodes of one code (432.6 s and 1011.3 s).
        let m = Measured::new(
            &[run(9, 432.6, 1.0), run(9, 1011.3, 3.0), run(8, 500.0, 2.0)],
            Some(72),
            false,
        );
        let c = m.counts[&9];
        assert_eq!(c.runs, 2);
        assert!((c.time - 721.95).abs() < 1e-9);
        assert!((c.spread - (1011.3 - 432.6) / 721.95).abs() < 1e-12);
        let o = Objective {
            time_limit: None,
            energy_limit: None,
            time_only: false,
        };
        assert_eq!(
            m.best(&o),
            Some(8),
            "the mean of 9, not its fast run, decides"
        );
        assert_eq!(m.spread_elsewhere(8), Some(c.spread));
        assert_eq!(m.spread_elsewhere(9), None);
    }

    #[test]
    fn a_time_limit_puts_what_meets_it_first_and_then_the_least_energy() {
        let o = Objective {
            time_limit: Some(100.0),
            energy_limit: None,
            time_only: false,
        };
        let fast = o.score(90.0, 500.0);
        let cheap = o.score(95.0, 400.0);
        let late = o.score(120.0, 100.0);
        assert!((Objective::gain(cheap, fast) - 0.2).abs() < 1e-12);
        assert_eq!(Objective::gain(late, fast), -1.0);
        assert_eq!(Objective::gain(fast, late), 1.0);
        let later = o.score(150.0, 100.0);
        assert!(
            Objective::gain(late, later) > 0.0,
            "nearer the limit is better"
        );
    }
}
