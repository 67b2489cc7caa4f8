//! Energy over node counts, judged per code (MODEL.md 6c; docs/MODEL.md "Energy over node
//! counts"): the derived energy `E_d(n)` (node power over the predicted time) against direct
//! laws of `n` fitted on the measured energy itself, relative to the derived energy at the
//! anchor `n0` of the same configuration:
//! ```text
//! E(n) = E_d(n0) (1 + h(n)),  h in { 0,  b (1 - n0/n),  c (g(n) - g(n0)),  b (1 - n0/n) + c (g(n) - g(n0)) }
//! g in {log2 n, sqrt n, n};  b of either sign, c >= 0
//! ```
//! Each is refitted with each left-out node count of the time law left out and predicts it; the
//! derived energy's left-out error is the time law's at that count, carried into energy at the
//! nodes' waiting power (the node power is not refitted). They are weighed as the time laws are
//! ([`super::node_fit`]'s rule), and the model uses the weighted median (or mean) of them.

use super::node_fit::{self, Center, Rule};
use super::node_forms::bounded_lsq;
use crate::model::node_law::{Basis, Candidate, EnergyLaw, Law};

/// One measured configuration with energy (repeats averaged).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EnergyPoint {
    /// Nodes.
    pub nodes: u32,
    /// Measured energy, J (in the scope measured).
    pub measured: f64,
    /// The derived energy the model gives it, J.
    pub derived: f64,
    /// The derived energy of the same configuration at the anchor, J.
    pub anchor: f64,
    /// Energy the derived form moves per second of predicted time: the nodes' waiting power, W.
    pub wait_w: f64,
    /// Measured time, s.
    pub time: f64,
    /// The model's time, s.
    pub predicted_time: f64,
}

/// What the fit needs besides the points: the anchor, the time law's signed left-out error at
/// each left-out count, the code's run-to-run spread, the machine's nodes, and the derived
/// energy and the anchor's energy of the largest count's configuration at any node count.
pub struct EnergyInputs<'a> {
    /// The anchor `n0`.
    pub anchor: u32,
    /// `(nodes, signed relative time error)` of the time law at each left-out count.
    pub time_folds: &'a [(u32, f64)],
    /// Run-to-run spread (relative), where repeats exist.
    pub repeat_rel: Option<f64>,
    /// The machine's nodes.
    pub horizon: u32,
    /// `(E_d(n), E_d(n0))` of the largest count's configuration.
    pub far: &'a dyn Fn(u32) -> Option<(f64, f64)>,
}

/// A direct law: a serial-like share `b (1 - n0/n)` and/or a growing term, or the power law
/// `(n/n0)^q - 1` with `q` fitted (`power`).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Shape {
    sat: bool,
    growth: Option<Basis>,
    power: bool,
}

impl Shape {
    fn family() -> Vec<Shape> {
        let gs = [
            Basis { i: 0.0, j: 1 },
            Basis { i: 0.5, j: 0 },
            Basis { i: 1.0, j: 0 },
        ];
        let none = Shape {
            sat: false,
            growth: None,
            power: false,
        };
        let mut v = vec![
            none,
            Shape { sat: true, ..none },
            Shape {
                power: true,
                ..none
            },
        ];
        for sat in [false, true] {
            v.extend(gs.iter().map(|&g| Shape {
                sat,
                growth: Some(g),
                power: false,
            }));
        }
        v
    }

    fn params(self) -> usize {
        usize::from(self.sat) + usize::from(self.growth.is_some()) + usize::from(self.power)
    }

    fn name(self) -> String {
        if self.power {
            return "E_d(n0) (n/n0)^q".into();
        }
        let g = self.growth.map(|b| format!("c ({} - at n0)", b.name()));
        match (self.sat, g) {
            (false, None) => "E_d(n0), flat".into(),
            (true, None) => "E_d(n0) (1 + b (1 - n0/n))".into(),
            (false, Some(g)) => format!("E_d(n0) (1 + {g})"),
            (true, Some(g)) => format!("E_d(n0) (1 + b (1 - n0/n) + {g})"),
        }
    }

    /// The law `h` of these parameters, anchored at `n0`.
    fn law(self, n0: u32, params: &[f64]) -> Law {
        let mut it = params.iter();
        let mut terms = Vec::new();
        if self.sat {
            let b = it.next().copied().unwrap_or(0.0);
            terms.push((Basis { i: -1.0, j: 0 }, -b * f64::from(n0)));
        }
        if let (Some(g), Some(&c)) = (self.growth, it.next()) {
            terms.push((g, c));
        }
        Law::anchored(n0, &terms)
    }

    /// Bounded least squares of `E / E_d(n0) - 1` on relative residuals (`c >= 0`); every set
    /// of parameters held at 0 tried, the feasible fit of least error kept.
    fn fit(self, n0: u32, pts: &[EnergyPoint]) -> Option<Law> {
        if self.power {
            return Some(fit_power(n0, pts));
        }
        let p = self.params();
        if p == 0 {
            return Some(Law::anchored(n0, &[]));
        }
        let cols: Vec<Vec<f64>> = pts
            .iter()
            .map(|q| {
                let n = f64::from(q.nodes);
                (0..p)
                    .map(|k| {
                        let mut one = vec![0.0; p];
                        one[k] = 1.0;
                        self.law(n0, &one).at(n)
                    })
                    .collect()
            })
            .collect();
        let y: Vec<f64> = pts.iter().map(|q| q.measured / q.anchor - 1.0).collect();
        let w: Vec<f64> = pts.iter().map(|q| q.anchor / q.measured).collect();
        // The growth (the last parameter where there is one) never negative.
        let growth = self.growth.is_some();
        let params = bounded_lsq((&cols, &y, &w), |k| !(growth && k == p - 1))?;
        Some(self.law(n0, &params))
    }
}

/// `h = (n/n0)^q - 1`, `q` from 0 to 1.5 in steps of 0.01 by least squares on relative
/// residuals.
fn fit_power(n0: u32, pts: &[EnergyPoint]) -> Law {
    let n0f = f64::from(n0);
    let sse = |q: f64| -> f64 {
        pts.iter()
            .map(|p| {
                let e = p.anchor * (f64::from(p.nodes) / n0f).powf(q);
                (e / p.measured - 1.0).powi(2)
            })
            .sum()
    };
    let q = (0..=150)
        .map(|k| f64::from(k) / 100.0)
        .min_by(|a, b| sse(*a).total_cmp(&sse(*b)))
        .unwrap_or(0.0);
    if q == 0.0 {
        return Law::anchored(n0, &[]);
    }
    Law::anchored(n0, &[(Basis { i: q, j: 0 }, n0f.powf(-q))])
}

/// The mean signed relative error of `E_d(n0) (1 + h(n))` on `pts`.
pub(super) fn direct_error(h: &Law, pts: &[EnergyPoint]) -> f64 {
    let e: f64 = pts
        .iter()
        .map(|p| p.anchor * (1.0 + h.at(f64::from(p.nodes))) / p.measured - 1.0)
        .sum();
    e / pts.len().max(1) as f64
}

/// The derived energy's mean signed relative error at `m` when the time law left `m` out
/// (`rel`: its time error there): the energy moves with the time at the waiting power.
fn derived_error(pts: &[EnergyPoint], rel: f64) -> f64 {
    let e: f64 = pts
        .iter()
        .map(|p| {
            let moved = p.wait_w * (p.time * (1.0 + rel) - p.predicted_time);
            (p.derived + moved) / p.measured - 1.0
        })
        .sum();
    e / pts.len().max(1) as f64
}

/// Judges the derived energy against the direct laws (module docs); `None` without points
/// beyond the anchor or with the rule's energy law off.
pub fn fit(pts: &[EnergyPoint], inputs: &EnergyInputs<'_>, rule: &Rule) -> Option<EnergyLaw> {
    let n0 = inputs.anchor;
    let (pts, beyond, folds) = usable(pts, inputs)?;
    let (center, weighing) = rule.energy_law?;
    let rule = &Rule { weighing, ..*rule };
    let derived = Candidate {
        law: Law::anchored(n0, &[]),
        form: "derived".into(),
        weight: 0.0,
        folds: derived_folds(&pts, &folds),
    };
    let counts: Vec<u32> = folds.iter().map(|f| f.0).collect();
    let mut cands = vec![derived];
    cands.extend(direct_laws(
        &pts,
        (n0, &counts),
        (beyond.len() - 1).max(1),
        inputs.horizon,
    ));
    let largest = beyond.last().copied().unwrap_or(n0);
    Some(combine(cands, (inputs, largest), (rule, center)))
}

/// The points with energy, the counts beyond the anchor, the time law's left-out errors there.
pub(super) type Usable = (Vec<EnergyPoint>, Vec<u32>, Vec<(u32, f64)>);

/// The points with energy, the counts beyond the anchor, and the time law's left-out errors at
/// those counts; `None` without a count beyond the anchor.
pub(super) fn usable(pts: &[EnergyPoint], inputs: &EnergyInputs<'_>) -> Option<Usable> {
    let ok = |p: &&EnergyPoint| p.measured > 0.0 && p.anchor > 0.0 && p.derived > 0.0;
    let pts: Vec<EnergyPoint> = pts.iter().filter(ok).copied().collect();
    let mut beyond: Vec<u32> = pts
        .iter()
        .map(|p| p.nodes)
        .filter(|&n| n > inputs.anchor)
        .collect();
    beyond.sort_unstable();
    beyond.dedup();
    if beyond.is_empty() {
        return None;
    }
    let folds: Vec<(u32, f64)> = inputs
        .time_folds
        .iter()
        .copied()
        .filter(|(n, _)| beyond.contains(n))
        .collect();
    Some((pts, beyond, folds))
}

/// The derived energy's signed error at each of the time law's left-out counts `folds`.
pub(super) fn derived_folds(pts: &[EnergyPoint], folds: &[(u32, f64)]) -> Vec<(u32, f64)> {
    folds
        .iter()
        .map(|&(n, r)| (n, derived_error(&at(pts, n), r)))
        .collect()
}

/// The points at `n` nodes.
pub(super) fn at(pts: &[EnergyPoint], n: u32) -> Vec<EnergyPoint> {
    pts.iter().copied().filter(|p| p.nodes == n).collect()
}

/// The direct laws of at most `most` parameters fitted on `pts`, each with its signed error at
/// each of `counts`, refitted without it; those that cannot be fitted, or fall under a tenth of
/// the anchor's energy up to the `horizon`, left out.
pub(super) fn direct_laws(
    pts: &[EnergyPoint],
    (n0, counts): (u32, &[u32]),
    most: usize,
    horizon: u32,
) -> Vec<Candidate> {
    let mut cands = Vec::new();
    for shape in Shape::family().into_iter().filter(|s| s.params() <= most) {
        let Some(h) = shape.fit(n0, pts) else {
            continue;
        };
        let errs: Option<Vec<(u32, f64)>> = counts
            .iter()
            .map(|&n| {
                let rest: Vec<EnergyPoint> = pts.iter().copied().filter(|p| p.nodes != n).collect();
                Some((n, direct_error(&shape.fit(n0, &rest)?, &at(pts, n))))
            })
            .collect();
        let Some(errs) = errs.filter(|e| e.iter().all(|x| x.1.is_finite())) else {
            continue;
        };
        if positive_up_to(&h, pts, horizon) {
            cands.push(Candidate {
                law: h,
                form: shape.name(),
                weight: 0.0,
                folds: errs,
            });
        }
    }
    cands
}

/// Weighs the candidates (the derived first) and combines them as the rule says.
fn combine(
    mut cands: Vec<Candidate>,
    (inputs, largest): (&EnergyInputs<'_>, u32),
    (rule, center): (&Rule, Center),
) -> EnergyLaw {
    let n0 = inputs.anchor;
    let noise = inputs
        .repeat_rel
        .map_or(rule.noise_floor, |r| r.max(rule.noise_floor));
    let flat = vec![false; cands.len()];
    node_fit::weigh_laws(&mut cands, &flat, noise, (rule, None));
    let k_derived = cands.iter().position(|c| c.form == "derived").unwrap_or(0);
    let derived = cands.remove(k_derived);
    let (derived_use, law, folds) = if center != Center::Mean {
        match median(&derived, &cands, (inputs, largest), center) {
            Some(k) => (0.0, cands[k].law, cands[k].folds.clone()),
            None => (1.0, Law::anchored(n0, &[]), derived.folds.clone()),
        }
    } else {
        let rest = 1.0 - derived.weight;
        let pairs: Vec<(f64, Law)> = cands
            .iter()
            .map(|c| (c.weight / rest.max(1e-12), c.law))
            .collect();
        let law = Law::weighted_sum(n0, &pairs).unwrap_or_else(|| Law::anchored(n0, &[]));
        let folds = derived
            .folds
            .iter()
            .enumerate()
            .map(|(m, &(n, e))| {
                let direct: f64 = cands.iter().map(|c| c.weight * c.folds[m].1).sum();
                (n, derived.weight * e + direct)
            })
            .collect();
        (derived.weight, law, folds)
    };
    let per_doubling_rel = rule.per_doubling(&folds);
    EnergyLaw {
        derived_use,
        law: if law.anchor() == n0 {
            law
        } else {
            Law::anchored(n0, &[])
        },
        derived_weight: derived.weight,
        derived_folds: derived.folds,
        candidates: cands,
        folds,
        per_doubling_rel,
    }
}

/// The direct law at the weighted median ([`node_fit::central`]) of the energies at eight times
/// the `largest` measured count (`None`: the derived energy is the median, or the largest count's
/// configuration cannot be evaluated there).
fn median(
    derived: &Candidate,
    cands: &[Candidate],
    (inputs, largest): (&EnergyInputs<'_>, u32),
    center: Center,
) -> Option<usize> {
    let far = (8 * largest).min(inputs.horizon).max(largest);
    let (e_d, e0) = (inputs.far)(far)?;
    let mut values = vec![(e_d, derived.weight)];
    values.extend(
        cands
            .iter()
            .map(|c| (e0 * (1.0 + c.law.at(f64::from(far))), c.weight)),
    );
    node_fit::central(&values, center).checked_sub(1)
}

/// Whether `1 + h` stays above a tenth at every doubling of the largest measured count up to
/// the horizon, and at the horizon.
fn positive_up_to(h: &Law, pts: &[EnergyPoint], horizon: u32) -> bool {
    let largest = pts.iter().map(|p| p.nodes).max().unwrap_or(1);
    let mut n = f64::from(largest);
    let top = f64::from(horizon.clamp(1, 1 << 24));
    loop {
        let at = n.min(top);
        if 1.0 + h.at(at) < 0.1 {
            return false;
        }
        if at >= top {
            return true;
        }
        n *= 2.0;
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Points of a code whose energy grows as `1 + 0.1 log2(n)` while the derived form says
    /// flat energy and the time law erred by `time_rel` at each left-out count.
    pub(crate) fn pts(nodes: &[u32]) -> Vec<EnergyPoint> {
        nodes
            .iter()
            .map(|&n| EnergyPoint {
                nodes: n,
                measured: 1000.0 * (1.0 + 0.1 * f64::from(n).log2()),
                derived: 1000.0,
                anchor: 1000.0,
                wait_w: 0.0,
                time: 10.0,
                predicted_time: 10.0,
            })
            .collect()
    }

    /// The derived energy, flat at 1000 J from one node, whose time law erred at none of the
    /// left-out counts 2, 4 and 8 (with [`pts`]: every left-out count favours a direct law).
    pub(crate) fn flat_derived() -> EnergyInputs<'static> {
        EnergyInputs {
            anchor: 1,
            time_folds: &[(2, 0.0), (4, 0.0), (8, 0.0)],
            repeat_rel: Some(0.01),
            horizon: 64,
            far: &|_| Some((1000.0, 1000.0)),
        }
    }

    #[test]
    fn a_direct_law_the_left_out_counts_favour_is_used() {
        let inputs = flat_derived();
        let judged = Rule {
            energy_law: Some((
                Center::Median,
                crate::calibrate::node_rule::Weighing::Evidence(1.0),
            )),
            ..Rule::default()
        };
        let e = fit(&pts(&[2, 4, 8]), &inputs, &judged).unwrap();
        assert!(e.derived_weight < 0.05, "{e:?}");
        assert_eq!(e.derived_use, 0.0);
        let (u, d) = e.mix(32.0);
        assert_eq!(u, 0.0);
        assert!((d - 1.5).abs() < 0.01, "{d}");
        assert_eq!(e.mix(1.0), (1.0, 0.0));
        assert!(fit(&pts(&[2, 4, 8]), &inputs, &Rule::default()).is_none());
    }
}
