//! MODEL.md section 6c (d, g): what a prediction rests on along the node axis, and the
//! interval it carries at every node count that was not measured. `docs/MODEL.md` section 6c
//! writes the rule; this file is its only implementation.
//!
//! With a node law, the time at `n` nodes lies in `T exp(+-z s)`, `z` the normal quantile of
//! the stated coverage (80% unless asked) and `s` the relative standard deviation from, in
//! quadrature: the run-to-run spread of repeated runs; the combined law's out-of-sample error
//! between the measured counts; the error per doubling (the code's own extrapolation error and
//! the rule's prior) times the doublings beyond the measured counts; and the candidate laws'
//! weighted disagreement at `n`. Without one (a profile measured on one node), the time lies
//! between the model's (its network terms and perfect division of the work) and the time with
//! the work divided no further than over the largest measured count. Energy moves with the
//! time at the nodes' waiting power (the time the interval adds or takes is waiting), widened
//! by the machine's power-fit residual.

use super::node_law::{Law, NodeFit, Spread};
use super::workload::Profile;

/// The coverage of an interval unless asked otherwise.
pub const DEFAULT_COVERAGE: f64 = 0.8;

/// The node-axis evidence of a profile, shared by its groups.
#[derive(Debug, Clone, PartialEq)]
pub struct Evidence {
    /// The largest measured node count (1 without a node law).
    pub largest: u32,
    /// The smallest measured node count (the law's anchor).
    pub smallest: u32,
    /// The measured node counts (empty without a node law).
    measured: Vec<u32>,
    /// The law's spread and its weighted candidates, when there is a law.
    fitted: Option<Fit>,
    /// The intervals' nominal coverage.
    pub coverage: f64,
    /// Its two-sided normal quantile.
    z: f64,
}

/// An interval on a prediction at a node count that was not measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// `(low, high)` time, s.
    pub time_s: (f64, f64),
    /// `(low, high)` energy, J (the whole node's, as the prediction's `E`).
    pub energy_j: (f64, f64),
    /// The nodes' waiting power `n P_idle`, W, for the energy of a narrower scope.
    pub idle_w: f64,
    /// The largest measured node count it extends from.
    pub largest_measured: u32,
    /// The power fit's relative residual the energy interval includes.
    pub power_rel: f64,
    /// The factor the power residual widens the energy interval by, `exp(z power_rel)`.
    pub energy_widen: f64,
    /// The nominal coverage (of a calibrated interval; bounds have none).
    pub coverage: f64,
    /// Whether it is a calibrated interval or bounds.
    pub kind: IntervalKind,
}

/// What a prediction's range beyond the measured node counts is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntervalKind {
    /// A fitted node law's interval, calibrated at a nominal coverage (docs/NODE_AXIS.md).
    Interval,
    /// A profile measured on one node: bounds from perfect division of the work (the model)
    /// to no gain beyond the largest measured count. No coverage can be stated.
    Bounds,
}

impl IntervalKind {
    /// Its name in JSON and CSV: `interval` or `bounds`.
    pub fn key(self) -> &'static str {
        match self {
            IntervalKind::Interval => "interval",
            IntervalKind::Bounds => "bounds",
        }
    }
}

impl Interval {
    /// What it is, in words: `80% interval` or `bounds`.
    pub fn what(&self) -> String {
        match self.kind {
            IntervalKind::Interval => format!("{:.0}% interval", 100.0 * self.coverage),
            IntervalKind::Bounds => "bounds".into(),
        }
    }

    /// [`Interval::what`] with its verb: `80% interval is`, `bounds are`.
    pub fn what_is(&self) -> String {
        match self.kind {
            IntervalKind::Interval => format!("{} is", self.what()),
            IntervalKind::Bounds => "bounds are".into(),
        }
    }

    /// Its coverage where it is a calibrated interval (bounds have none).
    pub fn nominal(&self) -> Option<f64> {
        (self.kind == IntervalKind::Interval).then_some(self.coverage)
    }

    /// The energy interval of the CPU scope (idle power only while waiting).
    pub fn cpu_energy(&self, time: f64, energy: f64) -> (f64, f64) {
        (
            (energy - self.idle_w * (time - self.time_s.0)) / self.energy_widen,
            (energy + self.idle_w * (self.time_s.1 - time)) * self.energy_widen,
        )
    }
}

impl Evidence {
    /// The evidence of a profile (its node law; one node without), at the default coverage.
    pub fn of(profile: &Profile) -> Evidence {
        let mut e = match &profile.node_law {
            None => Evidence {
                largest: 1,
                smallest: 1,
                measured: Vec::new(),
                fitted: None,
                coverage: DEFAULT_COVERAGE,
                z: 0.0,
            },
            Some(f) => Evidence::of_fit(f),
        };
        e.set_coverage(DEFAULT_COVERAGE);
        e
    }

    fn of_fit(f: &NodeFit) -> Evidence {
        let laws = f.candidates.iter().map(|c| (c.weight, c.law)).collect();
        Evidence {
            largest: f.largest(),
            smallest: f.smallest(),
            measured: f.measured_nodes.clone(),
            fitted: Some((f.spread, f.law(), laws)),
            coverage: DEFAULT_COVERAGE,
            z: 0.0,
        }
    }

    /// Sets the intervals' nominal coverage (in (0, 1)).
    pub fn set_coverage(&mut self, coverage: f64) {
        self.coverage = coverage;
        self.z = crate::numeric::normal::two_sided(coverage);
    }

    /// The interval at `n` nodes: `None` at a measured count (and, without a node law, at
    /// one node). `(time, energy)`: the prediction; `k`: the law's iteration ratio;
    /// `undivided`: the time the divided terms would add with the work divided over `largest`
    /// nodes only; `(wait_w, idle_w, power_rel)`: the nodes' power over time while waiting,
    /// all and idle only, and the machine's power-fit residual, which widens the energy
    /// interval too.
    pub fn interval(
        &self,
        n: u32,
        (time, energy): (f64, f64),
        k: f64,
        undivided: f64,
        (wait_w, idle_w, power_rel): (f64, f64, f64),
    ) -> Option<Interval> {
        let (lo, hi, kind) = match &self.fitted {
            None if n <= self.largest => return None,
            None => (time, time + undivided.max(0.0), IntervalKind::Bounds),
            Some(_) if self.measured.contains(&n) => return None,
            Some(fit) => {
                let s = self.time_sd(n, time, k, fit);
                let z = self.z * s;
                (time * (-z).exp(), time * z.exp(), IntervalKind::Interval)
            }
        };
        let p = power_rel.max(0.0);
        let widen = (self.z * p).exp();
        Some(Interval {
            time_s: (lo, hi),
            energy_j: (
                (energy - wait_w * (time - lo)) / widen,
                (energy + wait_w * (hi - time)) * widen,
            ),
            idle_w,
            largest_measured: self.largest,
            power_rel: p,
            energy_widen: widen,
            coverage: self.coverage,
            kind,
        })
    }

    /// The relative standard deviation of the time at `n` nodes (module docs).
    fn time_sd(&self, n: u32, time: f64, k: f64, (spread, law, laws): &Fit) -> f64 {
        let nf = f64::from(n);
        let x = k * law.at(nf);
        let disagreement = laws
            .iter()
            .map(|(w, l)| w * (k * l.at(nf) - x).powi(2))
            .sum::<f64>()
            .sqrt()
            / time.max(f64::MIN_POSITIVE);
        let doublings = if n > self.largest {
            (nf / f64::from(self.largest)).log2()
        } else if n < self.smallest {
            (f64::from(self.smallest) / nf).log2()
        } else {
            0.0
        };
        let beyond = spread.per_doubling_rel * doublings;
        (spread.repeat_rel.powi(2)
            + spread.within_rel.powi(2)
            + beyond.powi(2)
            + disagreement.powi(2))
        .sqrt()
    }
}

type Fit = (Spread, Law, Vec<(f64, Law)>);
