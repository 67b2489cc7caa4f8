//! MODEL.md section 6c (b, c, j, l): the node law, a family of laws ([`super::node_forms`])
//! weighed by each code's own left-out evidence ([`Rule`]), and node power fitted with physical
//! bounds. Extra-P's performance model normal form (Calotoiu et al., SC'13) is the reference for
//! the family; its selection by cross-validation over measurement points is kept, with the
//! error relative to the measured time.

pub use super::node_forms::LawPoint;
use super::node_forms::{Form, mean_signed};
pub use super::node_rule::{Center, Rule, Weighing};
use crate::model::node_law::{Candidate, Law, NodeFit, Spread};
use crate::numeric::lsq;

/// Fits the law on `points` (every multi-node configuration, repeats averaged); `one_node`:
/// whether runs on one node were measured (otherwise the fewest nodes are the anchor).
/// `None` without points beyond the anchor.
pub fn fit_law(points: &[LawPoint], one_node: bool) -> Option<NodeFit> {
    fit_law_within(
        points,
        one_node,
        (u32::MAX, false),
        (&Rule::default(), None),
    )
}

/// As [`fit_law`], keeping only laws that leave time at every node count up to `horizon.0`
/// (the machine's nodes), the time without the law carried from the largest measured count
/// as `1/n` (strong) or flat (weak: `horizon.1`, which also leaves the `n^-p` laws out);
/// `repeat_rel`: the measured run-to-run spread, where repeats exist.
pub fn fit_law_within(
    points: &[LawPoint],
    one_node: bool,
    horizon: (u32, bool),
    (rule, repeat_rel): (&Rule, Option<f64>),
) -> Option<NodeFit> {
    let fit = |r: &Rule, pts: &[LawPoint]| fit_family(pts, one_node, horizon, (r, repeat_rel));
    if rule.method_choice {
        let noise = repeat_rel.map_or(rule.noise_floor, |r| r.max(rule.noise_floor));
        return super::node_method::choose(points, (one_node, noise), rule, &fit);
    }
    fit(rule, points)
}

/// [`fit_law_within`] by the family of laws the rule weighs (no choice of method).
fn fit_family(
    points: &[LawPoint],
    one_node: bool,
    horizon: (u32, bool),
    (rule, repeat_rel): (&Rule, Option<f64>),
) -> Option<NodeFit> {
    let multi: Vec<LawPoint> = points.iter().copied().filter(|p| p.nodes > 1).collect();
    let mut counts: Vec<u32> = multi.iter().map(|p| p.nodes).collect();
    counts.sort_unstable();
    counts.dedup();
    let n0 = if one_node { 1 } else { *counts.first()? };
    let beyond: Vec<u32> = counts.iter().copied().filter(|&n| n > n0).collect();
    let mut measured_nodes = counts.clone();
    if one_node {
        measured_nodes.insert(0, 1);
    }
    if beyond.is_empty() {
        return Some(model_alone(n0, &multi, measured_nodes, (rule, repeat_rel)));
    }
    let folds: &[u32] = if beyond.len() > 1 { &beyond } else { &[] };
    let (mut cands, grows) = candidates(n0, &multi, (&beyond, folds), (horizon, rule));
    if cands.is_empty() {
        return None;
    }
    let noise = repeat_rel.map_or(rule.noise_floor, |r| r.max(rule.noise_floor));
    if folds.is_empty() {
        weigh_on_the_fit(&mut cands, &grows, (&multi, &beyond), (noise, rule));
    } else {
        let fitted = fitted_misses(&cands, &multi, &beyond);
        weigh_laws(&mut cands, &grows, noise, (rule, Some(&fitted)));
    }
    let (law, combined) = if rule.center != Center::Mean {
        let m = median(&cands, &multi, horizon, rule.center);
        (cands[m].law, cands[m].folds.clone())
    } else {
        let pairs: Vec<(f64, Law)> = cands.iter().map(|c| (c.weight, c.law)).collect();
        let combined = folds
            .iter()
            .enumerate()
            .map(|(k, &n)| (n, cands.iter().map(|c| c.weight * c.folds[k].1).sum()))
            .collect();
        (Law::weighted_sum(n0, &pairs)?, combined)
    };
    let residuals = counts
        .iter()
        .map(|&n| {
            let at: Vec<LawPoint> = multi.iter().copied().filter(|p| p.nodes == n).collect();
            (n, mean_signed(&law, &at).abs())
        })
        .collect();
    Some(NodeFit {
        law,
        compared: cands.len(),
        candidates: cands,
        spread: spread(&combined, repeat_rel, rule),
        folds: combined,
        rule: rule.describe(),
        measured_nodes,
        residuals,
        weak: false,
        energy: None,
    })
}

/// Every law of the family the evidence allows, fitted on `multi` and on `multi` less each of
/// `folds` in turn, and whether each grows: `p` parameters need `p + 1` counts `beyond` the
/// anchor to be judged on one left out; with one count beyond it, one parameter, judged on
/// nothing. Laws whose time runs out before the horizon, or whose left-out error is not
/// finite, are dropped.
fn candidates(
    n0: u32,
    multi: &[LawPoint],
    (beyond, folds): (&[u32], &[u32]),
    (horizon, rule): ((u32, bool), &Rule),
) -> (Vec<Candidate>, Vec<bool>) {
    let most = (beyond.len() - 1).max(1);
    Form::family(rule.power && !horizon.1)
        .into_iter()
        .filter(|f| f.params() <= most)
        .filter_map(|form| {
            let law = form.fit(n0, multi, rule)?;
            let errs = folds
                .iter()
                .map(|&n| {
                    let (held, rest): (Vec<LawPoint>, Vec<LawPoint>) =
                        multi.iter().partition(|p| p.nodes == n);
                    let l = form.fit(n0, &rest, rule)?;
                    Some((n, mean_signed(&l, &held)))
                })
                .collect::<Option<Vec<_>>>()?;
            let finite = errs.iter().all(|e| e.1.is_finite());
            (finite && positive_up_to(&law, multi, horizon)).then_some((
                Candidate {
                    law,
                    form: form.name(),
                    weight: 0.0,
                    folds: errs,
                },
                form.grows(),
            ))
        })
        .unzip()
}

/// One node count, not one node: the model alone from there (perfect scaling of its terms),
/// its intervals on the rule's prior for what nothing measured.
fn model_alone(
    n0: u32,
    multi: &[LawPoint],
    measured_nodes: Vec<u32>,
    (rule, repeat_rel): (&Rule, Option<f64>),
) -> NodeFit {
    let none = Law::anchored(n0, &[]);
    NodeFit {
        law: none,
        candidates: vec![Candidate {
            law: none,
            form: Form::NONE.name(),
            weight: 1.0,
            folds: Vec::new(),
        }],
        folds: Vec::new(),
        rule: rule.describe(),
        spread: spread(&[], repeat_rel, rule),
        measured_nodes,
        residuals: vec![(n0, mean_signed(&none, multi).abs())],
        compared: 1,
        weak: false,
        energy: None,
    }
}

/// The candidates' weights (heaviest first) by [`Rule::weighing`] and the rule's prior, `noise`
/// the code's run-to-run spread (for [`Weighing::Evidence`], at least the root-mean-square
/// left-out error of the best law: what no law explains): a growing law (`grows`) weighs only where some left-out count
/// shows growth ([`Rule::growth_evidence`]); a law under [`Rule::span`] of the heaviest's
/// weight is ruled out (0). Without left-out counts, the laws not ruled out weigh alike.
pub(super) fn weigh_laws(
    cands: &mut [Candidate],
    grows: &[bool],
    noise: f64,
    (rule, fitted): (&Rule, Option<&[f64]>),
) {
    let shown = growth_shown(cands, grows, noise, rule);
    let allowed: Vec<bool> = grows.iter().map(|&g| shown || !g).collect();
    let left_out: Vec<f64> = cands
        .iter()
        .map(|c| c.folds.iter().map(|f| -f.1).fold(0.0, f64::max))
        .collect();
    let mut refuted = refuted(&left_out, &allowed, noise, rule);
    if let Some(fitted) = fitted {
        // Among the laws the left-out counts leave, so that one is always left.
        let left: Vec<bool> = allowed
            .iter()
            .zip(&refuted)
            .map(|(&a, &r)| a && !r)
            .collect();
        for (r, f) in refuted
            .iter_mut()
            .zip(self::refuted(fitted, &left, noise, rule))
        {
            *r |= f;
        }
    }
    let prior = |k: usize| match grows[k] {
        _ if !allowed[k] || refuted[k] => 0.0,
        true => rule.growth_prior,
        false => 1.0,
    };
    let sq = |c: &Candidate| c.folds.iter().map(|f| f.1 * f.1).sum::<f64>();
    let rms = |c: &Candidate| (sq(c) / c.folds.len().max(1) as f64).sqrt();
    let judged = cands.iter().any(|c| !c.folds.is_empty());
    let raw: Vec<f64> = match rule.weighing {
        _ if !judged => (0..cands.len()).map(prior).collect(),
        Weighing::Floor(floor) => (0..cands.len())
            .map(|k| prior(k) / (rms(&cands[k]).powi(2) + floor * floor))
            .collect(),
        Weighing::Stack(k) => super::node_stack::weights(cands, &prior, k, (noise, false)),
        Weighing::StackPooled(k) => super::node_stack::weights(cands, &prior, k, (noise, true)),
        Weighing::PseudoBma(kappa) => {
            let s = kappa * noise.max(best_rms(cands, &prior));
            pseudo_bma(cands, &prior, 2.0 * s.powi(2).max(1e-12))
        }
        Weighing::Evidence(kappa) => {
            let least = (0..cands.len())
                .filter(|&k| prior(k) > 0.0)
                .map(|k| sq(&cands[k]))
                .fold(f64::INFINITY, f64::min);
            // What no law of the family explains is noise too: the best law's own error.
            let best_rms = (least / cands[0].folds.len().max(1) as f64).sqrt();
            let s2 = 2.0 * (kappa * noise.max(best_rms)).powi(2).max(1e-12);
            (0..cands.len())
                .map(|k| prior(k) * (-(sq(&cands[k]) - least) / s2).exp())
                .collect()
        }
        Weighing::Best => {
            let best = (0..cands.len())
                .filter(|&k| prior(k) > 0.0)
                .min_by(|&a, &b| rms(&cands[a]).total_cmp(&rms(&cands[b])));
            (0..cands.len())
                .map(|k| f64::from(u8::from(Some(k) == best)))
                .collect()
        }
    };
    let top = raw.iter().copied().fold(0.0, f64::max);
    let kept: Vec<f64> = raw
        .iter()
        .map(|&w| if w >= rule.span * top { w } else { 0.0 })
        .collect();
    let total: f64 = kept.iter().sum();
    for (c, w) in cands.iter_mut().zip(kept) {
        c.weight = if total > 0.0 { w / total } else { 0.0 };
    }
    cands.sort_by(|a, b| b.weight.total_cmp(&a.weight));
}

/// The root-mean-square left-out error of the law of least error among those of nonzero prior.
fn best_rms(cands: &[Candidate], prior: &dyn Fn(usize) -> f64) -> f64 {
    (0..cands.len())
        .filter(|&k| prior(k) > 0.0)
        .map(|k| {
            let f = &cands[k].folds;
            (f.iter().map(|x| x.1 * x.1).sum::<f64>() / f.len().max(1) as f64).sqrt()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Pseudo-BMA+ ([`Weighing::PseudoBma`]): each law's log-likelihood `-e^2 / s2` summed over the
/// left-out counts, each count reweighted by a Bayesian bootstrap (flat Dirichlet weights, a
/// fixed seed so that a fit is repeatable), the softmax weights averaged over the draws.
fn pseudo_bma(cands: &[Candidate], prior: &dyn Fn(usize) -> f64, s2: f64) -> Vec<f64> {
    const DRAWS: usize = 1000;
    let m = cands.iter().map(|c| c.folds.len()).max().unwrap_or(0);
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut uniform = move || {
        // SplitMix64.
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut sum = vec![0.0; cands.len()];
    for _ in 0..DRAWS {
        let g: Vec<f64> = (0..m).map(|_| -(1.0 - uniform()).ln()).collect();
        let total: f64 = g.iter().sum();
        let z: Vec<f64> = cands
            .iter()
            .map(|c| {
                let ll: f64 = c.folds.iter().zip(&g).map(|(f, a)| a * f.1 * f.1).sum();
                -(m as f64) * ll / total / s2
            })
            .collect();
        let top = (0..cands.len())
            .filter(|&k| prior(k) > 0.0)
            .map(|k| z[k])
            .fold(f64::NEG_INFINITY, f64::max);
        let w: Vec<f64> = (0..cands.len())
            .map(|k| prior(k) * (z[k] - top).exp())
            .collect();
        let t: f64 = w.iter().sum();
        for (s, x) in sum.iter_mut().zip(w) {
            *s += if t > 0.0 { x / t } else { 0.0 };
        }
    }
    sum
}

/// Which candidates a count refutes ([`Rule::refute`]): `fast` is by how much each predicted
/// some count faster than measured (relative, 0 where never); those beyond the `allowed`
/// candidate of least `fast` by more than the rule's multiple of `noise` (and its
/// [`Rule::refute_floor`]) are refuted (so some law is always left).
fn refuted(fast: &[f64], allowed: &[bool], noise: f64, rule: &Rule) -> Vec<bool> {
    let Some(r) = rule.refute else {
        return vec![false; fast.len()];
    };
    let least = fast
        .iter()
        .zip(allowed)
        .filter(|(_, a)| **a)
        .map(|(f, _)| *f)
        .fold(f64::INFINITY, f64::min);
    let bar = (r * noise).max(rule.refute_floor);
    fast.iter().map(|&f| f > least + bar).collect()
}

/// By how much each candidate, fitted on every count, is faster than measured at the count
/// where it is most so (relative; 0 where it is nowhere faster).
fn fitted_misses(cands: &[Candidate], multi: &[LawPoint], beyond: &[u32]) -> Vec<f64> {
    cands
        .iter()
        .map(|c| {
            beyond
                .iter()
                .map(|&n| {
                    let at: Vec<LawPoint> =
                        multi.iter().copied().filter(|p| p.nodes == n).collect();
                    -mean_signed(&c.law, &at)
                })
                .fold(0.0, f64::max)
        })
        .collect()
}

/// With one count beyond the anchor nothing can be left out: the laws are weighed as
/// [`weigh_laws`] weighs them, on how far each misses the counts it was fitted on instead (a law
/// that cannot pass through the one count weighs less than one that can); no count shows growth.
fn weigh_on_the_fit(
    cands: &mut [Candidate],
    grows: &[bool],
    (multi, beyond): (&[LawPoint], &[u32]),
    (noise, rule): (f64, &Rule),
) {
    for c in cands.iter_mut() {
        c.folds = beyond
            .iter()
            .map(|&n| {
                let at: Vec<LawPoint> = multi.iter().copied().filter(|p| p.nodes == n).collect();
                (n, mean_signed(&c.law, &at))
            })
            .collect();
    }
    let rule = Rule {
        growth_evidence: rule.growth_evidence.map(|_| f64::INFINITY),
        refute: None,
        ..*rule
    };
    weigh_laws(cands, grows, noise, (&rule, None));
    for c in cands.iter_mut() {
        c.folds.clear();
    }
}

/// Whether some left-out count shows growth: every law without a growing term, refitted
/// without it, predicted it faster than measured by more than the rule's multiple of `noise`.
/// True without such laws to ask, or where the rule asks for no evidence.
fn growth_shown(cands: &[Candidate], grows: &[bool], noise: f64, rule: &Rule) -> bool {
    let Some(g) = rule.growth_evidence else {
        return true;
    };
    let flat: Vec<&Candidate> = cands
        .iter()
        .zip(grows)
        .filter(|(_, g)| !**g)
        .map(|(c, _)| c)
        .collect();
    let Some(first) = flat.first() else {
        return true;
    };
    (0..first.folds.len()).any(|m| flat.iter().all(|c| c.folds[m].1 < -g * noise))
}

/// What the intervals are made of: the run-to-run spread, the combined law's error between
/// the measured counts (every fold but the last), and per doubling beyond them (the rule's
/// prior and the last fold's error per doubling of its extrapolation, in quadrature;
/// [`Rule::per_doubling`]).
fn spread(combined: &[(u32, f64)], repeat_rel: Option<f64>, rule: &Rule) -> Spread {
    let inner = &combined[..combined.len().saturating_sub(1)];
    let within_rel = if inner.is_empty() {
        0.0
    } else {
        (inner.iter().map(|f| f.1 * f.1).sum::<f64>() / inner.len() as f64).sqrt()
    };
    let own = rule.per_doubling(combined);
    // Beyond `MOST_REL_SD` an interval is no interval: the fit says so where it writes that.
    let most = crate::limits::MOST_REL_SD;
    Spread {
        // A few repeats understate the spread: the rule's figure is a floor.
        repeat_rel: repeat_rel
            .map_or(rule.repeat_prior, |r| r.max(rule.repeat_prior))
            .min(most),
        within_rel: within_rel.min(most),
        per_doubling_rel: own.hypot(rule.per_doubling_prior).min(most),
    }
}

/// The candidate at the weighted median ([`central`]) of the candidates' times at eight times
/// the largest measured count (or the horizon, if nearer): the time without a law carried from
/// the largest count as `1/n` (strong) or flat (weak).
fn median(
    cands: &[Candidate],
    pts: &[LawPoint],
    (horizon, weak): (u32, bool),
    center: Center,
) -> usize {
    let Some(last) = pts.iter().max_by_key(|p| p.nodes) else {
        return 0;
    };
    let largest = f64::from(last.nodes);
    let far = (8.0 * largest).min(f64::from(horizon)).max(largest);
    let base = if weak {
        last.model
    } else {
        last.model * largest / far
    };
    let values: Vec<(f64, f64)> = cands
        .iter()
        .map(|c| (base + c.law.at(far), c.weight))
        .collect();
    central(&values, center)
}

/// The index of the weighted median of `(value, weight)`; with [`Center::Relative`] each weight
/// is divided by its (positive) value first.
pub(super) fn central(values: &[(f64, f64)], center: Center) -> usize {
    let w = |&(v, w): &(f64, f64)| {
        if center == Center::Relative {
            w / v.max(f64::MIN_POSITIVE)
        } else {
            w
        }
    };
    let total: f64 = values.iter().map(w).sum();
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].0.total_cmp(&values[b].0));
    let mut below = 0.0;
    for &k in &order {
        below += w(&values[k]);
        if below >= 0.5 * total * (1.0 - 1e-12) {
            return k;
        }
    }
    order.last().copied().unwrap_or(0)
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
pub(crate) mod tests {
    use super::*;

    /// The default rule's family of laws, without the choice of method per code (the tests
    /// here pin how the family weighs its laws; `node_method` pins the choice).
    fn family() -> Rule {
        Rule {
            method_choice: false,
            ..Rule::default()
        }
    }

    /// Points whose measured time is perfect division (the model) plus `law(n)`.
    pub(crate) fn pts(law: impl Fn(f64) -> f64, nodes: &[u32]) -> Vec<LawPoint> {
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
    fn recovers_a_law_of_the_family_and_weighs_it_most() {
        let truth = |n: f64| 20.0 * n.log2();
        let f = fit_law_within(
            &pts(truth, &[2, 4, 8, 16]),
            true,
            (u32::MAX, false),
            (&family(), None),
        )
        .unwrap();
        assert_eq!(f.measured_nodes, vec![1, 2, 4, 8, 16]);
        let best = &f.candidates[0];
        assert!(best.form.ends_with("c log2(n)"), "{}", best.form);
        assert!((best.law.at(32.0) - truth(32.0)).abs() < 1e-6, "{f:?}");
        assert!(best.loo_rel() < 1e-9);
        // a/n + c log2(n) and a/n + b + c log2(n) with b = 0: one law, most of the weight.
        let exact: f64 = f
            .candidates
            .iter()
            .filter(|c| (c.law.at(32.0) - truth(32.0)).abs() < 1e-6)
            .map(|c| c.weight)
            .sum();
        assert!(exact > 0.5, "{f:?}");
        // The model's law is that law; the 7 laws of perfect division, the model alone and the
        // 2 of n^-p were compared.
        assert!((f.law.at(32.0) - truth(32.0)).abs() < 1e-6);
        assert_eq!(f.compared, 10);
        let total: f64 = f.candidates.iter().map(|c| c.weight).sum();
        assert!((total - 1.0).abs() < 1e-12);
    }

    #[test]
    fn with_the_mean_the_law_is_the_weighted_sum_of_the_candidates() {
        let truth = |n: f64| 20.0 * n.log2() + 30.0 * (1.0 - 1.0 / n);
        let rule = Rule {
            center: Center::Mean,
            weighing: Weighing::Floor(1.0),
            ..family()
        };
        let f = fit_law_within(
            &pts(truth, &[2, 4, 8]),
            true,
            (u32::MAX, false),
            (&rule, None),
        )
        .unwrap();
        assert!(f.candidates.iter().filter(|c| c.weight > 0.0).count() > 2);
        for n in [3.0, 12.0, 64.0] {
            let sum: f64 = f.candidates.iter().map(|c| c.weight * c.law.at(n)).sum();
            assert!((f.law.at(n) - sum).abs() < 1e-9 * sum.abs().max(1.0));
        }
    }

    #[test]
    fn three_counts_allow_one_parameter_and_four_allow_two() {
        let truth = |n: f64| 50.0 * (1.0 - 1.0 / n);
        let three = fit_law(&pts(truth, &[2, 4]), true).unwrap();
        assert!(three.candidates.iter().all(|c| !c.form.contains("b + c")));
        assert!(
            three
                .candidates
                .iter()
                .all(|c| !c.form.starts_with("(T0 - b)"))
        );
        // a/n + b, three growths alone, the model alone, T0 (n0/n)^p.
        assert_eq!(three.compared, 6);
        let four = fit_law(&pts(truth, &[2, 4, 8]), true).unwrap();
        assert_eq!(four.compared, 10);
        assert_eq!(four.candidates[0].form, "a/n + b");
    }

    #[test]
    fn laws_the_left_out_counts_cannot_tell_apart_weigh_alike_and_others_nothing() {
        // Perfect division within 0.5%, whose noise every law fits as well as the next: those
        // that add no growth keep weight; the growing ones earn none (no count shows growth).
        let wobble = |n: f64| if n == 4.0 { 2.0 } else { -1.0 };
        let f = fit_law(&pts(wobble, &[2, 4, 8]), true).unwrap();
        let left: Vec<&Candidate> = f.candidates.iter().filter(|c| c.weight > 0.0).collect();
        assert!(left.len() >= 2, "{f:?}");
        for c in &f.candidates {
            if c.form.contains("c ") {
                assert_eq!(c.weight, 0.0, "{}", c.form);
            }
        }
    }

    #[test]
    fn the_law_is_anchored_at_the_fewest_nodes_without_one_node_runs() {
        let truth = |n: f64| 3.0 * (n - 4.0);
        let mut p = pts(truth, &[4, 8, 16]);
        // The runs at the anchor are reproduced by the model alone.
        p[0].model = p[0].measured;
        let f = fit_law(&p, false).unwrap();
        assert_eq!(f.law.anchor(), 4);
        assert_eq!(f.law.at(4.0), 0.0);
        assert_eq!(f.measured_nodes, vec![4, 8, 16]);
    }

    #[test]
    fn growth_is_never_negative() {
        // Time that falls faster than the model's division: no law may grow negatively.
        let f = fit_law(&pts(|n| -30.0 * n.log2(), &[2, 4, 8]), true).unwrap();
        for c in &f.candidates {
            for (b, coef) in c.law.terms() {
                if b.i >= 0.0 {
                    assert!(*coef >= 0.0, "{}: {coef}", c.form);
                }
            }
        }
    }

    #[test]
    fn no_law_when_the_model_already_explains() {
        let f = fit_law(&pts(|_| 0.0, &[2, 4, 8]), true).unwrap();
        assert!(f.law().at(64.0).abs() < 1e-9);
    }

    #[test]
    fn a_law_faster_than_a_count_by_more_than_the_spread_allows_is_ruled_out() {
        // Every law misses the last left-out count, so the evidence weights stay nearly flat;
        // the one that misses it on the fast side by 10 points more than the least is refuted,
        // one within 2 spreads of the least is not, and one that the fit on every count leaves
        // 20% too fast is refuted as well.
        let cand = |form: &str, last: f64| Candidate {
            law: Law::anchored(1, &[]),
            form: form.into(),
            weight: 0.0,
            folds: vec![(2, 0.01), (4, last)],
        };
        let fresh = || {
            vec![
                cand("least", -0.30),
                cand("far", -0.40),
                cand("near", -0.31),
            ]
        };
        let weight = |c: &[Candidate], form: &str| {
            c.iter().find(|x| x.form == form).map(|x| x.weight).unwrap()
        };
        let flat = [false; 3];
        let open_rule = Rule {
            refute: None,
            ..Rule::default()
        };
        let mut open = fresh();
        weigh_laws(&mut open, &flat, 0.01, (&open_rule, None));
        assert!(weight(&open, "far") > 0.2, "{open:?}");
        let rule = Rule {
            refute: Some(2.0),
            ..Rule::default()
        };
        let mut judged = fresh();
        weigh_laws(&mut judged, &flat, 0.01, (&rule, None));
        assert_eq!(weight(&judged, "far"), 0.0, "{judged:?}");
        assert!(weight(&judged, "near") > 0.4, "{judged:?}");
        let mut fitted = fresh();
        weigh_laws(&mut fitted, &flat, 0.01, (&rule, Some(&[0.0, 0.0, 0.2])));
        assert_eq!(weight(&fitted, "near"), 0.0, "{fitted:?}");
        assert_eq!(weight(&fitted, "least"), 1.0, "{fitted:?}");
        // The fit on every count refutes only among the laws the left-out counts leave: where
        // it favours a law they refuted, some law is still left.
        let mut crossed = fresh();
        weigh_laws(&mut crossed, &flat, 0.01, (&rule, Some(&[0.2, 0.0, 0.2])));
        assert_eq!(weight(&crossed, "far"), 0.0, "{crossed:?}");
        let total: f64 = crossed.iter().map(|c| c.weight).sum();
        assert!((total - 1.0).abs() < 1e-12, "{crossed:?}");
    }

    #[test]
    fn the_intervals_run_to_run_prior_does_not_move_the_law() {
        // A law with noise of about 2%: a wider interval prior widens the intervals only.
        let noisy = |n: f64| 5.0 * n.log2() + if n == 4.0 { 4.0 } else { -2.0 };
        let p = pts(noisy, &[2, 4, 8, 16]);
        let fit = |rule: &Rule| fit_law_within(&p, true, (u32::MAX, false), (rule, None)).unwrap();
        let narrow = fit(&family());
        let wide = fit(&Rule {
            repeat_prior: 0.03,
            ..family()
        });
        assert_eq!(narrow.law.at(128.0), wide.law.at(128.0));
        let weights = |f: &NodeFit| f.candidates.iter().map(|c| c.weight).collect::<Vec<_>>();
        assert_eq!(weights(&narrow), weights(&wide));
        assert!(wide.spread.repeat_rel > narrow.spread.repeat_rel);
        // The evidence's own floor does move it.
        let doubted = fit(&Rule {
            noise_floor: 0.03,
            ..family()
        });
        assert_ne!(weights(&narrow), weights(&doubted));
    }

    #[test]
    fn a_refutation_needs_the_stated_least_margin() {
        let cand = |form: &str, last: f64| Candidate {
            law: Law::anchored(1, &[]),
            form: form.into(),
            weight: 0.0,
            folds: vec![(2, 0.0), (4, last)],
        };
        let mut c = vec![cand("least", 0.0), cand("fast", -0.047)];
        let rule = |bar: f64| Rule {
            refute: Some(2.0),
            refute_floor: bar,
            weighing: Weighing::Evidence(4.0),
            ..Rule::default()
        };
        weigh_laws(&mut c, &[false; 2], 0.01, (&rule(0.0), None));
        assert!(
            c.iter().any(|x| x.form == "fast" && x.weight == 0.0),
            "{c:?}"
        );
        weigh_laws(&mut c, &[false; 2], 0.01, (&rule(0.05), None));
        assert!(
            c.iter().any(|x| x.form == "fast" && x.weight > 0.0),
            "{c:?}"
        );
    }

    #[test]
    fn pseudo_bma_weights_sharpen_only_as_the_left_out_counts_agree() {
        // One law misses the left-out counts by 2% (every count, or the last only), the other
        // by nothing. Where one count alone tells them apart, pseudo-BMA+ keeps more weight on
        // the worse law than the evidence weights do (that count may weigh little in a draw);
        // where every count agrees, the draws agree and the weights are the same.
        let worse = |rule: &Rule, misses: &[f64]| {
            let cand = |form: &str, scale: f64| Candidate {
                law: Law::anchored(1, &[]),
                form: form.into(),
                weight: 0.0,
                folds: (0..misses.len())
                    .map(|k| (2 << k, scale * misses[k]))
                    .collect(),
            };
            let mut c = vec![cand("exact", 0.0), cand("worse", 1.0)];
            let rule = Rule { span: 0.0, ..*rule };
            weigh_laws(&mut c, &[false; 2], 0.01, (&rule, None));
            let total: f64 = c.iter().map(|x| x.weight).sum();
            assert!((total - 1.0).abs() < 1e-9, "{c:?}");
            c.iter().find(|x| x.form == "worse").unwrap().weight
        };
        let rule = |w: Weighing| Rule {
            weighing: w,
            ..Rule::default()
        };
        let (pbma, evidence) = (
            rule(Weighing::PseudoBma(2.0)),
            rule(Weighing::Evidence(2.0)),
        );
        let one = [0.0, 0.0, 0.04];
        assert!(worse(&pbma, &one) > 1.3 * worse(&evidence, &one));
        let every = [0.02, 0.02, 0.02];
        assert!((worse(&pbma, &every) - worse(&evidence, &every)).abs() < 1e-9);
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
