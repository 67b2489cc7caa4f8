//! MODEL.md section 6c (d): what a prediction rests on along the node axis, and the interval
//! it carries beyond the largest measured node count. `docs/MODEL.md` section 6c writes the
//! rule; this file is its only implementation.
//!
//! With a node law, the half-width at `n` nodes is the time the law adds beyond the largest
//! measured count, `|X(n) - X(n_max)|` (never measured: the law may stop there or grow twice
//! as fast), plus the candidate laws' disagreement `max_k |X_k(n) - X(n)|`, plus the law's
//! error grown with the distance,
//! `T(n) e (1 + log2(n / n_max))`, where `e` is the larger of its leave-one-out error and its
//! error predicting the largest measured count from the smaller ones; the lower end is never below the time without the law
//! (perfect scaling of the measured terms) where the law adds time, nor below half the
//! prediction. Without one (a profile measured on one node), the time lies between the model's
//! (its network terms and perfect division of the work) and the time with the work divided no
//! further than over the largest measured count. Energy moves with the time at the nodes'
//! waiting power (the time the interval adds or takes is waiting), widened by the machine's
//! power-fit residual.

use super::node_law::{Law, NodeFit};
use super::workload::Profile;

/// The runners-up a prediction keeps for the disagreement.
const ALTERNATIVES: usize = 3;

/// The node-axis evidence of a profile, copied into every group.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Evidence {
    /// The largest measured node count (1 without a node law).
    pub largest: u32,
    /// The chosen law's error: the larger of its leave-one-out error and its error when
    /// extrapolating to the largest measured count, when there is a law.
    pub loo_rel: Option<f64>,
    law: Law,
    alternatives: [Option<Law>; ALTERNATIVES],
}

/// An interval on a prediction beyond the measured node counts.
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
}

impl Interval {
    /// The energy interval of the CPU scope (idle power only while waiting).
    pub fn cpu_energy(&self, time: f64, energy: f64) -> (f64, f64) {
        (
            (energy - self.idle_w * (time - self.time_s.0)) * (1.0 - self.power_rel),
            (energy + self.idle_w * (self.time_s.1 - time)) * (1.0 + self.power_rel),
        )
    }
}

impl Evidence {
    /// The evidence of a profile (its node law; one node without).
    pub fn of(profile: &Profile) -> Evidence {
        match &profile.node_law {
            None => Evidence {
                largest: 1,
                ..Evidence::default()
            },
            Some(f) => Evidence::of_fit(f),
        }
    }

    fn of_fit(f: &NodeFit) -> Evidence {
        let mut alternatives = [None; ALTERNATIVES];
        for (slot, c) in alternatives.iter_mut().zip(f.candidates.iter().skip(1)) {
            *slot = Some(c.law);
        }
        // A law no cross-validation chose (one node count to leave out) is as good a guess as
        // none at all: the single-node terms alone are its alternative.
        if f.candidates
            .first()
            .is_some_and(|c| c.extrapolation_rel.is_none())
        {
            alternatives[ALTERNATIVES - 1] = Some(Law::default());
        }
        Evidence {
            largest: f.largest(),
            loo_rel: f
                .candidates
                .first()
                .map(|c| c.loo_rel.max(c.extrapolation_rel.unwrap_or(0.0))),
            law: f.law(),
            alternatives,
        }
    }

    /// The interval at `n` nodes, `None` at or below the largest measured count.
    /// `(time, energy)`: the prediction; `k`: the law's iteration ratio; `undivided`: the time
    /// the divided terms would add with the work divided over `largest` nodes only;
    /// `(wait_w, idle_w, power_rel)`: the nodes' power over time while waiting, all and idle
    /// only, and the machine's power-fit residual, which widens the energy interval too.
    pub fn interval(
        &self,
        n: u32,
        (time, energy): (f64, f64),
        k: f64,
        undivided: f64,
        (wait_w, idle_w, power_rel): (f64, f64, f64),
    ) -> Option<Interval> {
        if n <= self.largest {
            return None;
        }
        let (lo, hi) = match self.loo_rel {
            None => (time, time + undivided.max(0.0)),
            Some(loo) => {
                let nf = f64::from(n);
                let x = k * self.law.at(nf);
                let spread = self
                    .alternatives
                    .iter()
                    .flatten()
                    .map(|l| (k * l.at(nf) - x).abs())
                    .fold(0.0, f64::max);
                let largest = f64::from(self.largest);
                let distance = 1.0 + (nf / largest).log2();
                // What the law adds beyond the largest measured count was never measured.
                let unverified = (x - k * self.law.at(largest)).abs();
                let w = unverified + spread + time * loo * distance;
                let floor = if x > 0.0 { time - x } else { 0.5 * time };
                ((time - w).max(floor), time + w)
            }
        };
        let p = power_rel.max(0.0);
        Some(Interval {
            time_s: (lo, hi),
            energy_j: (
                (energy - wait_w * (time - lo)) * (1.0 - p),
                (energy + wait_w * (hi - time)) * (1.0 + p),
            ),
            idle_w,
            largest_measured: self.largest,
            power_rel: p,
        })
    }
}
