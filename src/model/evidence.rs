//! MODEL.md section 6c (d, g): what a prediction rests on along the node axis, and the
//! interval it carries at every node count that was not measured. `docs/MODEL.md` section 6c
//! writes the rule; this file is its only implementation.
//!
//! With a node law, the time at `n` nodes lies between the most and the least favourable of the
//! laws the evidence has not ruled out (every candidate of weight above 0, and the combined law),
//! each widened by `exp(+-z s)`, `z` the normal quantile of the stated coverage (80% unless
//! asked) and `s` the relative standard deviation from, in quadrature: the run-to-run spread of
//! repeated runs; the combined law's out-of-sample error between the measured counts; and the
//! error per doubling (the code's own extrapolation error and the rule's prior) times the
//! doublings beyond the measured counts. Without one (a profile measured on one node), the time
//! lies between the model's (its network terms and perfect division of the work) and the time
//! with the work divided no further than over the largest measured count. Energy moves with the
//! time at the nodes' waiting power (the time the interval adds or takes is waiting); where an
//! energy law judged the derived energy against direct laws of `n`, the interval reaches every
//! one of them left a weight too (each widened by the energy's own error per doubling); the
//! whole is widened by the machine's power-fit residual.

use super::node_law::{EnergyLaw, Law, NodeFit, Spread};
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
    /// The energy law, where the runs' energy judged one.
    energy: Option<EnergyLaw>,
    /// The intervals' nominal coverage.
    pub coverage: f64,
    /// Its two-sided normal quantile.
    z: f64,
    /// What the GPU clock law's half-widths are multiplied by at this coverage
    /// ([`clock_scale`]).
    clock_scale: f64,
}

/// What a GPU clock law's half-widths, drawn at [`DEFAULT_COVERAGE`] (MODEL.md 6e), are
/// multiplied by at `coverage`: the ratio of the two-sided normal quantiles (1 at 80%, 1.53 at
/// 95%, 0.53 at 50%).
pub fn clock_scale(coverage: f64) -> f64 {
    let z = crate::numeric::normal::two_sided;
    z(coverage) / z(DEFAULT_COVERAGE)
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
    /// The energy law's reach, `(low, high)` relative to the predicted energy (`(1, 1)`
    /// without one).
    pub energy_span: (f64, f64),
    /// The nominal coverage (of a calibrated interval; bounds have none).
    pub coverage: f64,
    /// Whether it is a calibrated interval or bounds.
    pub kind: IntervalKind,
    /// The GPU clock's relative half-widths `(time, energy)` it includes, at a clock not
    /// measured (MODEL.md 6e); `(0, 0)` elsewhere.
    pub gpu_clock: (f64, f64),
}

/// What a prediction's range at the node counts not measured is.
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
            IntervalKind::Interval => {
                format!("{} interval", crate::units::coverage_pct(self.coverage))
            }
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
            (energy - self.idle_w * (time - self.time_s.0)).min(energy * self.energy_span.0)
                / self.energy_widen,
            (energy + self.idle_w * (self.time_s.1 - time)).max(energy * self.energy_span.1)
                * self.energy_widen,
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
                energy: None,
                coverage: DEFAULT_COVERAGE,
                z: 0.0,
                clock_scale: 1.0,
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
            energy: f.energy.clone(),
            coverage: DEFAULT_COVERAGE,
            z: 0.0,
            clock_scale: 1.0,
        }
    }

    /// Sets the intervals' nominal coverage (in (0, 1)).
    pub fn set_coverage(&mut self, coverage: f64) {
        self.coverage = coverage;
        self.z = crate::numeric::normal::two_sided(coverage);
        self.clock_scale = clock_scale(coverage);
    }

    /// The interval at `n` nodes: `None` at a measured count (and, without a node law, at
    /// one node). `(time, energy)`: the prediction; `k`: the law's iteration ratio;
    /// `undivided`: the time the divided terms would add with the work divided over `largest`
    /// nodes only; `(wait_w, idle_w, power_rel)`: the nodes' power over time while waiting,
    /// all and idle only, and the machine's power-fit residual, which widens the energy
    /// interval too; `(e_d, e0)`: the derived energy at `n` and at the anchor, from which the
    /// energy law's alternatives are read.
    pub fn interval(
        &self,
        n: u32,
        (time, energy): (f64, f64),
        k: f64,
        undivided: f64,
        (wait_w, idle_w, power_rel): (f64, f64, f64),
        (e_d, e0): (f64, f64),
    ) -> Option<Interval> {
        let (lo, hi, kind) = match &self.fitted {
            None if n <= self.largest => return None,
            None => (time, time + undivided.max(0.0), IntervalKind::Bounds),
            Some(_) if self.measured.contains(&n) => return None,
            Some(fit) => {
                let s = self.time_sd(n, fit);
                let (least, most) = span(n, time, k, fit);
                (
                    least * (-self.z * s).exp(),
                    most * (self.z * s).exp(),
                    IntervalKind::Interval,
                )
            }
        };
        let p = power_rel.max(0.0);
        let widen = (self.z * p).exp();
        let span = self.energy_span(n, energy, (e_d, e0));
        Some(Interval {
            time_s: (lo, hi),
            energy_j: (
                (energy - wait_w * (time - lo)).min(energy * span.0) / widen,
                (energy + wait_w * (hi - time)).max(energy * span.1) * widen,
            ),
            idle_w,
            largest_measured: self.largest,
            power_rel: p,
            energy_widen: widen,
            energy_span: span,
            coverage: self.coverage,
            kind,
            gpu_clock: (0.0, 0.0),
        })
    }

    /// `node` (the node axis's interval at `(time, energy)`, if any) with the GPU clock's
    /// relative half-widths `(ht, he)` combined in quadrature of the logarithmic half-widths
    /// (MODEL.md 6e); the clock's alone where the node axis has none. Unchanged at a measured
    /// clock (`(0, 0)`).
    pub fn with_gpu_clock(
        &self,
        node: Option<Interval>,
        (time, energy): (f64, f64),
        (ht, he): (f64, f64),
    ) -> Option<Interval> {
        if ht <= 0.0 && he <= 0.0 {
            return node;
        }
        let (ht, he) = (ht * self.clock_scale, he * self.clock_scale);
        let (ct, ce) = ((1.0 + ht).ln(), (1.0 + he).ln());
        let both = |(lo, hi): (f64, f64), mid: f64, c: f64| {
            let wide = |x: f64| (x.max(1e-300) / mid.max(1e-300)).ln().abs();
            let (l, h) = (wide(lo), wide(hi));
            (
                mid * (-(l * l + c * c).sqrt()).exp(),
                mid * (h * h + c * c).sqrt().exp(),
            )
        };
        let Some(n) = node else {
            return Some(Interval {
                time_s: (time / (1.0 + ht), time * (1.0 + ht)),
                energy_j: (energy / (1.0 + he), energy * (1.0 + he)),
                idle_w: 0.0,
                largest_measured: self.largest,
                power_rel: 0.0,
                energy_widen: 1.0,
                energy_span: (1.0 / (1.0 + he), 1.0 + he),
                coverage: self.coverage,
                kind: IntervalKind::Interval,
                gpu_clock: (ht, he),
            });
        };
        Some(Interval {
            time_s: both(n.time_s, time, ct),
            energy_j: both(n.energy_j, energy, ce),
            energy_span: both(n.energy_span, 1.0, ce),
            gpu_clock: (ht, he),
            ..n
        })
    }

    /// The energy law's reach at `n`, relative to the prediction `energy`: from the least to the
    /// most of the energies it judged (the derived and each direct law left a weight), each
    /// widened by its error per doubling beyond the measured counts. `(1, 1)` without one.
    fn energy_span(&self, n: u32, energy: f64, parts: (f64, f64)) -> (f64, f64) {
        let Some(e) = &self.energy else {
            return (1.0, 1.0);
        };
        if energy <= 0.0 {
            return (1.0, 1.0);
        }
        let s = self.z * e.per_doubling_rel * self.doublings(n);
        e.alternatives(f64::from(n), parts)
            .into_iter()
            .chain([energy])
            .fold((1.0f64, 1.0f64), |(lo, hi), x| {
                (
                    lo.min(x * (-s).exp() / energy),
                    hi.max(x * s.exp() / energy),
                )
            })
    }

    /// Doublings beyond the largest measured count (or below the fewest); 0 between.
    fn doublings(&self, n: u32) -> f64 {
        let nf = f64::from(n);
        if n > self.largest {
            (nf / f64::from(self.largest)).log2()
        } else if n < self.smallest {
            (f64::from(self.smallest) / nf).log2()
        } else {
            0.0
        }
    }

    /// The relative standard deviation of the time at `n` nodes about each law (module docs).
    fn time_sd(&self, n: u32, (spread, _, _): &Fit) -> f64 {
        let beyond = spread.per_doubling_rel * self.doublings(n);
        (spread.repeat_rel.powi(2) + spread.within_rel.powi(2) + beyond.powi(2)).sqrt()
    }
}

/// The least and the most time at `n` among the combined law (`time`) and every candidate the
/// evidence left a weight: each candidate's time is `time` moved by `k (X_k(n) - X(n))`, never
/// below a thousandth of `time`.
fn span(n: u32, time: f64, k: f64, (_, law, laws): &Fit) -> (f64, f64) {
    let nf = f64::from(n);
    let x = k * law.at(nf);
    laws.iter()
        .filter(|(w, _)| *w > 0.0)
        .map(|(_, l)| (time + k * l.at(nf) - x).max(1e-3 * time))
        .fold((time, time), |(lo, hi), t| (lo.min(t), hi.max(t)))
}

type Fit = (Spread, Law, Vec<(f64, Law)>);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::node_law::{Basis, Candidate, EnergyLaw};

    /// A fit over 1, 2, 4 nodes whose two laws the evidence could not tell apart: perfect
    /// division and a serial time of 100 s.
    fn two_laws(energy: Option<EnergyLaw>) -> NodeFit {
        let none = Law::anchored(1, &[]);
        let serial = Law::anchored(1, &[(Basis { i: -1.0, j: 0 }, -100.0)]);
        let cand = |law, w| Candidate {
            law,
            form: String::new(),
            weight: w,
            folds: vec![(2, 0.01), (4, 0.02)],
        };
        NodeFit {
            law: serial,
            candidates: vec![cand(serial, 0.5), cand(none, 0.5), cand(none, 0.0)],
            folds: vec![(2, 0.01), (4, 0.02)],
            rule: String::new(),
            spread: Spread {
                repeat_rel: 0.01,
                within_rel: 0.01,
                per_doubling_rel: 0.01,
            },
            measured_nodes: vec![1, 2, 4],
            residuals: Vec::new(),
            compared: 3,
            weak: false,
            energy,
        }
    }

    #[test]
    fn the_interval_reaches_from_the_most_to_the_least_favourable_law_left() {
        let e = Evidence::of_fit(&two_laws(None));
        let mut e = e;
        e.set_coverage(0.8);
        // At 64 nodes: 1000/64 s with perfect division, 100 s more with the serial time.
        let (t_fast, t_slow) = (1000.0 / 64.0, 1000.0 / 64.0 + 100.0 * (1.0 - 1.0 / 64.0));
        let iv = e
            .interval(64, (t_slow, 1e5), 1.0, 0.0, (100.0, 100.0, 0.0), (1e5, 0.0))
            .unwrap();
        assert!(iv.time_s.0 < t_fast && t_fast < t_slow, "{iv:?}");
        assert!(iv.time_s.1 > t_slow, "{iv:?}");
        // A measured count has none.
        assert!(
            e.interval(4, (t_slow, 1e5), 1.0, 0.0, (100.0, 100.0, 0.0), (1e5, 0.0))
                .is_none()
        );
    }

    #[test]
    fn the_energy_interval_reaches_every_energy_law_left() {
        let direct = Law::anchored(1, &[(Basis { i: 1.0, j: 0 }, 0.01)]);
        let energy = EnergyLaw {
            derived_use: 1.0,
            law: Law::anchored(1, &[]),
            derived_weight: 0.6,
            derived_folds: vec![(2, 0.0), (4, 0.0)],
            candidates: vec![Candidate {
                law: direct,
                form: String::new(),
                weight: 0.4,
                folds: vec![(2, 0.0), (4, 0.0)],
            }],
            folds: vec![(2, 0.0), (4, 0.0)],
            per_doubling_rel: 0.0,
        };
        let mut e = Evidence::of_fit(&two_laws(Some(energy)));
        e.set_coverage(0.8);
        // The direct law says 1.63x the anchor's energy at 64 nodes; the derived, 1.0x.
        let iv = e
            .interval(
                64,
                (50.0, 1000.0),
                1.0,
                0.0,
                (0.0, 0.0, 0.0),
                (1000.0, 1000.0),
            )
            .unwrap();
        assert!(iv.energy_j.1 >= 1000.0 * (1.0 + 0.63) - 1e-9, "{iv:?}");
        assert!(iv.energy_j.0 <= 1000.0, "{iv:?}");
        assert!((iv.energy_span.1 - 1.63).abs() < 1e-9, "{iv:?}");
    }
}
