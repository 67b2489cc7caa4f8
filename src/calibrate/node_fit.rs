//! MODEL.md section 6c (b, c): the node law chosen by cross-validation over the measured node
//! counts, and node power fitted with physical bounds. Extra-P's performance model normal form
//! (Calotoiu et al., SC'13) is the reference for the family; its selection by cross-validation
//! over measurement points is kept, with the error relative to the measured time.

use crate::model::node_law::{Basis, Candidate, Law, NodeFit};
use crate::numeric::lsq;

/// One measured multi-node configuration for the law: node count, measured time (repeats
/// averaged), and the time the single-node terms give it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LawPoint {
    /// Nodes.
    pub nodes: u32,
    /// Measured wall time, s.
    pub measured: f64,
    /// `T_model(n)`: the model without a node law, s.
    pub model: f64,
}

impl LawPoint {
    /// `X = T - T_model`.
    fn x(&self) -> f64 {
        self.measured - self.model
    }
}

/// Exponents of `n` in the family (Extra-P's default set, Calotoiu et al.).
const EXPONENTS: [f64; 13] = [
    0.0,
    0.25,
    1.0 / 3.0,
    0.5,
    2.0 / 3.0,
    0.75,
    1.0,
    1.25,
    4.0 / 3.0,
    1.5,
    5.0 / 3.0,
    1.75,
    2.0,
];

/// The basis functions: `1/n` and every `n^i log2(n)^j` with `j <= 2`, but the constant.
pub fn family() -> Vec<Basis> {
    let mut v = vec![Basis { i: -1.0, j: 0 }];
    for &i in &EXPONENTS {
        for j in 0..=2u8 {
            if !(i == 0.0 && j == 0) {
                v.push(Basis { i, j });
            }
        }
    }
    v
}

/// The hypotheses: no term (the single-node terms alone), one term, and `1/n` with one more.
fn hypotheses() -> Vec<Vec<Basis>> {
    let fam = family();
    let mut h: Vec<Vec<Basis>> = vec![Vec::new()];
    h.extend(fam.iter().map(|b| vec![*b]));
    h.extend(fam[1..].iter().map(|b| vec![fam[0], *b]));
    h
}

/// The most candidates a profile keeps (the chosen one and its runners-up).
const KEPT: usize = 4;

/// Fits the law on `points` (every node count above one). `None` without such points. With
/// one node count to leave out (above one, or above the fewest without one-node runs) no law
/// can be chosen by cross-validation: the single-term law `c log2(n)` is fitted, its `loo_rel`
/// that of the fit itself and no extrapolation error.
pub fn fit_law(points: &[LawPoint], one_node: bool) -> Option<NodeFit> {
    fit_law_within(points, one_node, (u32::MAX, false))
}

/// As [`fit_law`], keeping only laws that leave time at every node count up to `horizon.0`
/// (the machine's nodes), the time without the law carried from the largest measured count
/// as `1/n` (strong) or flat (weak: `horizon.1`).
pub fn fit_law_within(
    points: &[LawPoint],
    one_node: bool,
    horizon: (u32, bool),
) -> Option<NodeFit> {
    let multi: Vec<LawPoint> = points.iter().copied().filter(|p| p.nodes > 1).collect();
    let mut counts: Vec<u32> = multi.iter().map(|p| p.nodes).collect();
    counts.sort_unstable();
    counts.dedup();
    if counts.is_empty() {
        return None;
    }
    let mut measured_nodes = counts.clone();
    if one_node {
        measured_nodes.insert(0, 1);
    }
    // Without runs on one node the fewest nodes are the one-node terms' anchor (their `X` is 0
    // by construction): they are fitted on, never left out.
    let folds: &[u32] = if one_node { &counts } else { &counts[1..] };
    let hyps = hypotheses();
    let usable: Vec<&Vec<Basis>> = hyps
        .iter()
        .filter(|h| h.len() < folds.len() || (folds.len() <= 1 && h.len() <= 1))
        .collect();
    let mut cands: Vec<Candidate> = usable
        .iter()
        .filter(|h| folds.len() > 1 || h.len() == 1 && h[0] == Basis { i: 0.0, j: 1 })
        .filter_map(|h| {
            let law = fit_terms(h, &multi)?;
            let (loo_rel, extrapolation_rel) = if folds.len() > 1 {
                let e = loo(h, &multi, folds)?;
                (e.iter().sum::<f64>() / e.len() as f64, e.last().copied())
            } else {
                (mean_rel(&law, &multi), None)
            };
            positive_up_to(&law, &multi, horizon).then_some(Candidate {
                law,
                loo_rel,
                extrapolation_rel,
            })
        })
        .collect();
    // Least error first; on a tie the law of fewer terms.
    cands.sort_by(|a, b| {
        a.loo_rel
            .total_cmp(&b.loo_rel)
            .then(a.law.terms().count().cmp(&b.law.terms().count()))
    });
    let compared = cands.len();
    cands.truncate(KEPT);
    let best = cands.first()?.law;
    let residuals = counts
        .iter()
        .map(|&n| {
            let at: Vec<LawPoint> = multi.iter().copied().filter(|p| p.nodes == n).collect();
            (n, mean_rel(&best, &at))
        })
        .collect();
    Some(NodeFit {
        candidates: cands,
        measured_nodes,
        residuals,
        compared,
        weak: false,
    })
}

/// Whether `law` leaves time at every doubling of the largest measured count up to the
/// horizon, and at the horizon.
fn positive_up_to(law: &Law, pts: &[LawPoint], (horizon, weak): (u32, bool)) -> bool {
    let Some(last) = pts.iter().max_by_key(|p| p.nodes) else {
        return true;
    };
    let n0 = f64::from(last.nodes);
    let top = f64::from(horizon.min(1 << 24));
    let mut n = n0;
    loop {
        let n_at = n.min(top);
        let base = if weak {
            last.model
        } else {
            last.model * n0 / n_at
        };
        if base + law.at(n_at) <= 0.0 {
            return false;
        }
        if n_at >= top {
            return true;
        }
        n *= 2.0;
    }
}

/// Weighted least squares of `X` on the terms, residuals relative to the measured time.
fn fit_terms(terms: &[Basis], pts: &[LawPoint]) -> Option<Law> {
    if terms.is_empty() {
        return Some(Law::default());
    }
    let rows: Vec<Vec<f64>> = pts
        .iter()
        .map(|p| terms.iter().map(|b| b.at(f64::from(p.nodes))).collect())
        .collect();
    let y: Vec<f64> = pts.iter().map(LawPoint::x).collect();
    let w: Vec<f64> = pts.iter().map(|p| 1.0 / p.measured).collect();
    let f = lsq::fit(&rows, &y, &w)?;
    let law = Law::new(
        &terms
            .iter()
            .copied()
            .zip(f.params.iter().copied())
            .collect::<Vec<_>>(),
    );
    // A law that predicts no time left at a measured count is no law.
    pts.iter()
        .all(|p| p.model + law.at(f64::from(p.nodes)) > 0.0)
        .then_some(law)
}

/// The mean relative error at each node count (ascending), refitted without it: the last is
/// the error of extrapolating to the largest count from the smaller ones.
fn loo(terms: &[Basis], pts: &[LawPoint], counts: &[u32]) -> Option<Vec<f64>> {
    let mut errs = Vec::new();
    for &n in counts {
        let (held, rest): (Vec<LawPoint>, Vec<LawPoint>) = pts.iter().partition(|p| p.nodes == n);
        let law = fit_terms(terms, &rest)?;
        errs.push(mean_rel(&law, &held));
    }
    Some(errs)
}

fn mean_rel(law: &Law, pts: &[LawPoint]) -> f64 {
    let e: f64 = pts
        .iter()
        .map(|p| ((p.model + law.at(f64::from(p.nodes))) / p.measured - 1.0).abs())
        .sum();
    e / pts.len().max(1) as f64
}

/// One measured run for the node power: its energy, node-seconds `n T` and busy
/// core-seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PowerPoint {
    /// Measured energy, J.
    pub energy: f64,
    /// `n T`: node-seconds.
    pub node_s: f64,
    /// Busy core-seconds the model gives the run.
    pub busy_core_s: f64,
}

/// Node power at one frequency: `E = P_idle n T + P_core (busy core-seconds)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodePower {
    /// `P_idle`, W per node.
    pub idle: f64,
    /// `P_core`, W per busy core.
    pub core: f64,
    /// Largest relative energy residual.
    pub residual_max: f64,
    /// Root-mean-square relative energy residual.
    pub residual_rms: f64,
    /// Which bound held (`None`: neither).
    pub bound: Option<&'static str>,
}

/// The bounded fit (`P_idle, P_core >= 0`), relative residuals. `None` with fewer than two
/// points or points that cannot tell the two apart.
pub fn node_power(pts: &[PowerPoint]) -> Option<NodePower> {
    if pts.len() < 2 {
        return None;
    }
    let w: Vec<f64> = pts.iter().map(|p| 1.0 / p.energy).collect();
    let y: Vec<f64> = pts.iter().map(|p| p.energy).collect();
    let one = |col: fn(&PowerPoint) -> f64| -> f64 {
        let (mut sxx, mut sxy) = (0.0, 0.0);
        for (p, wi) in pts.iter().zip(&w) {
            let x = col(p) * wi;
            sxx += x * x;
            sxy += x * p.energy * wi;
        }
        if sxx > 0.0 { (sxy / sxx).max(0.0) } else { 0.0 }
    };
    let rows: Vec<Vec<f64>> = pts.iter().map(|p| vec![p.node_s, p.busy_core_s]).collect();
    let (idle, core, bound) = match lsq::fit(&rows, &y, &w) {
        Some(f) if f.params[0] >= 0.0 && f.params[1] >= 0.0 => (f.params[0], f.params[1], None),
        _ => {
            let a = (one(|p| p.node_s), 0.0, Some("P_core = 0 (bound)"));
            let b = (0.0, one(|p| p.busy_core_s), Some("P_idle = 0 (bound)"));
            let sse = |(i, c, _): (f64, f64, Option<&str>)| -> f64 {
                pts.iter()
                    .map(|p| ((i * p.node_s + c * p.busy_core_s) / p.energy - 1.0).powi(2))
                    .sum()
            };
            if sse(a) <= sse(b) { a } else { b }
        }
    };
    let rel: Vec<f64> = pts
        .iter()
        .map(|p| ((idle * p.node_s + core * p.busy_core_s) / p.energy - 1.0).abs())
        .collect();
    let residual_max = rel.iter().copied().fold(0.0, f64::max);
    let residual_rms = (rel.iter().map(|r| r * r).sum::<f64>() / rel.len() as f64).sqrt();
    Some(NodePower {
        idle,
        core,
        residual_max,
        residual_rms,
        bound,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(law: impl Fn(f64) -> f64, nodes: &[u32]) -> Vec<LawPoint> {
        nodes
            .iter()
            .map(|&n| {
                let model = 1000.0 / f64::from(n);
                LawPoint {
                    nodes: n,
                    measured: model + law(f64::from(n)),
                    model,
                }
            })
            .collect()
    }

    #[test]
    fn recovers_a_law_of_the_family_and_carries_it() {
        let truth = |n: f64| 20.0 * n.log2();
        let f = fit_law(&pts(truth, &[2, 4, 8]), true).unwrap();
        assert_eq!(f.measured_nodes, vec![1, 2, 4, 8]);
        assert!((f.law().at(16.0) - truth(16.0)).abs() < 1e-6, "{:?}", f);
        assert!(f.candidates[0].loo_rel < 1e-9);
        assert!(f.compared > 50);
    }

    #[test]
    fn no_law_when_the_model_already_explains() {
        let f = fit_law(&pts(|_| 0.0, &[2, 4, 8]), true).unwrap();
        assert_eq!(f.law().terms().count(), 0);
    }

    #[test]
    fn node_power_is_never_negative() {
        // Energy that falls with node-seconds: an unbounded fit gives a negative idle power.
        let p: Vec<PowerPoint> = [
            (100.0, 10.0, 2000.0),
            (200.0, 10.0, 1900.0),
            (400.0, 10.0, 1800.0),
        ]
        .iter()
        .map(|&(node_s, busy, e)| PowerPoint {
            energy: e,
            node_s,
            busy_core_s: busy,
        })
        .collect();
        let f = node_power(&p).unwrap();
        assert!(f.idle >= 0.0 && f.core >= 0.0, "{f:?}");
        assert!(f.bound.is_some());
        assert!(f.residual_max > 0.05);
    }
}
