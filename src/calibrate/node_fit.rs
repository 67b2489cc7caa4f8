//! MODEL.md section 6c (b, c): the node law chosen by cross-validation over the measured node
//! counts, and node power fitted with physical bounds. Extra-P's performance model normal form
//! (Calotoiu et al., SC'13) is the reference for the family; its selection by cross-validation
//! over measurement points is kept, with the error relative to the measured time.

use crate::model::node_law::{Basis, Candidate, Law, NodeFit, Spread};
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

/// How the laws are weighed and what the intervals assume: the settings of MODEL.md 6c (f),
/// (g) and (j). [`Rule::default`] holds the values the design study chose by error on codes
/// held out of that choice (`docs/NODE_AXIS.md`); `fit --design` sets others for the study.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// Weight of a law `1 / (e^2 + floor^2)`, `e` its root-mean-square out-of-sample error:
    /// laws whose errors differ by less than the floor weigh alike (noise cannot tell them
    /// apart). `None`: the single law of least error.
    pub floor: Option<f64>,
    /// Whether the serial time `b` of `a/n + b` is held at `>= 0` (no superlinear term).
    pub serial_nonneg: bool,
    /// The least run-to-run spread assumed (where nothing was repeated, the spread itself).
    pub repeat_prior: f64,
    /// The error added per doubling beyond the measured counts, before the code's own
    /// extrapolation error.
    pub per_doubling_prior: f64,
    /// The error per doubling where no count could be left out (one count beyond the
    /// fewest): nothing measured it.
    pub unvalidated_per_doubling: f64,
}

impl Default for Rule {
    fn default() -> Rule {
        // Chosen on the nine Ice Lake codes by the design study (docs/NODE_AXIS.md): the
        // floor of 100% weighs the laws nearly alike (each code scored with the setting chosen
        // on the other eight preferred it for eight of nine), the serial time held >= 0 won
        // for every code, and the interval priors are those whose coverage came nearest 80%.
        Rule {
            floor: Some(1.0),
            serial_nonneg: true,
            repeat_prior: 0.01,
            per_doubling_prior: 0.0,
            unvalidated_per_doubling: 0.2,
        }
    }
}

impl Rule {
    /// The rule in words, as the profile records it.
    pub fn describe(&self) -> String {
        let w = match self.floor {
            Some(f) => format!(
                "laws weighted by 1/(e^2 + {:.1}%^2), e each law's root-mean-square \
                 leave-one-node-count-out error",
                100.0 * f
            ),
            None => "the law of least leave-one-node-count-out error".into(),
        };
        format!(
            "{w}; serial time {}; intervals: run-to-run spread at least {:.1}%, {:.1}% more \
             error per doubling beyond the measured counts ({:.1}% with no count to leave out)",
            if self.serial_nonneg {
                ">= 0"
            } else {
                "of either sign"
            },
            100.0 * self.repeat_prior,
            100.0 * self.per_doubling_prior,
            100.0 * self.unvalidated_per_doubling
        )
    }
}

/// The growing term of a law.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Growth {
    Log,
    Sqrt,
    Linear,
}

impl Growth {
    const ALL: [Growth; 3] = [Growth::Log, Growth::Sqrt, Growth::Linear];

    fn basis(self) -> Basis {
        match self {
            Growth::Log => Basis { i: 0.0, j: 1 },
            Growth::Sqrt => Basis { i: 0.5, j: 0 },
            Growth::Linear => Basis { i: 1.0, j: 0 },
        }
    }

    fn name(self) -> &'static str {
        match self {
            Growth::Log => "log2(n)",
            Growth::Sqrt => "sqrt(n)",
            Growth::Linear => "n",
        }
    }

    /// `g(n)` itself.
    fn g(self, n: f64) -> f64 {
        self.basis().raw(n)
    }
}

/// One law of the family, in time: `a/n + b` (serial), `a/n + c g(n)` (growth alone) or
/// `a/n + b + c g(n)`; `a/n` is the model's own division of the work.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Form {
    serial: bool,
    growth: Option<Growth>,
}

impl Form {
    /// `a/n`: the model's own division of the work, no law.
    const NONE: Form = Form {
        serial: false,
        growth: None,
    };

    /// The family: 7 laws.
    fn family() -> Vec<Form> {
        let mut v = vec![Form {
            serial: true,
            growth: None,
        }];
        for g in Growth::ALL {
            v.push(Form {
                serial: false,
                growth: Some(g),
            });
        }
        for g in Growth::ALL {
            v.push(Form {
                serial: true,
                growth: Some(g),
            });
        }
        v
    }

    fn params(self) -> usize {
        usize::from(self.serial) + usize::from(self.growth.is_some())
    }

    fn name(self) -> String {
        match (self.serial, self.growth) {
            (true, None) => "a/n + b".into(),
            (false, Some(g)) => format!("a/n + c {}", g.name()),
            (true, Some(g)) => format!("a/n + b + c {}", g.name()),
            (false, None) => "a/n".into(),
        }
    }

    /// The design's columns at `n` for anchor `n0`, each vanishing at `n0`: `1 - n0/n` for
    /// `b`; `g(n) - g(n0)` for `c` beside `b`, `g(n) - g(n0) n0/n` alone (no constant).
    fn columns(self, n: f64, n0: f64) -> Vec<f64> {
        let mut v = Vec::new();
        if self.serial {
            v.push(1.0 - n0 / n);
        }
        if let Some(g) = self.growth {
            v.push(if self.serial {
                g.g(n) - g.g(n0)
            } else {
                g.g(n) - g.g(n0) * n0 / n
            });
        }
        v
    }

    /// The law of these parameters as anchored basis terms.
    fn law(self, n0: u32, params: &[f64]) -> Law {
        let n0f = f64::from(n0);
        let inv = Basis { i: -1.0, j: 0 };
        let mut it = params.iter();
        let mut terms = Vec::new();
        if self.serial {
            terms.push((inv, -n0f * it.next().copied().unwrap_or(0.0)));
        }
        if let (Some(g), Some(&c)) = (self.growth, it.next()) {
            terms.push((g.basis(), c));
            if !self.serial {
                terms.push((inv, -n0f * g.g(n0f) * c));
            }
        }
        Law::weighted_sum(n0, &[(1.0, Law::anchored(n0, &terms))]).unwrap_or_default()
    }
}

/// Fits the law on `points` (every multi-node configuration, repeats averaged); `one_node`:
/// whether runs on one node were measured (otherwise the fewest nodes are the anchor);
/// `repeat_rel`: the measured run-to-run spread, where repeats exist. `None` without points
/// beyond the anchor.
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
/// as `1/n` (strong) or flat (weak: `horizon.1`).
pub fn fit_law_within(
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
    let mut cands = candidates(n0, &multi, (&beyond, folds), (horizon, rule));
    if cands.is_empty() {
        return None;
    }
    weigh(&mut cands, rule);
    let pairs: Vec<(f64, Law)> = cands.iter().map(|c| (c.weight, c.law)).collect();
    let law = Law::weighted_sum(n0, &pairs)?;
    let combined: Vec<(u32, f64)> = folds
        .iter()
        .enumerate()
        .map(|(k, &n)| (n, cands.iter().map(|c| c.weight * c.folds[k].1).sum()))
        .collect();
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
    })
}

/// Every law of the family the evidence allows, fitted on `multi` and on `multi` less each of
/// `folds` in turn: `p` parameters need `p + 1` counts `beyond` the anchor to be judged on one
/// left out; with one count beyond it, one parameter, judged on nothing. Laws whose time runs
/// out before the horizon, or whose left-out error is not finite, are dropped.
fn candidates(
    n0: u32,
    multi: &[LawPoint],
    (beyond, folds): (&[u32], &[u32]),
    (horizon, rule): ((u32, bool), &Rule),
) -> Vec<Candidate> {
    let most = (beyond.len() - 1).max(1);
    Form::family()
        .into_iter()
        .filter(|f| f.params() <= most)
        .filter_map(|form| {
            let law = fit_form(form, n0, multi, rule)?;
            let errs = folds
                .iter()
                .map(|&n| {
                    let (held, rest): (Vec<LawPoint>, Vec<LawPoint>) =
                        multi.iter().partition(|p| p.nodes == n);
                    let l = fit_form(form, n0, &rest, rule)?;
                    Some((n, mean_signed(&l, &held)))
                })
                .collect::<Option<Vec<_>>>()?;
            let finite = errs.iter().all(|e| e.1.is_finite());
            (finite && positive_up_to(&law, multi, horizon)).then_some(Candidate {
                law,
                form: form.name(),
                weight: 0.0,
                folds: errs,
            })
        })
        .collect()
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
    }
}

/// The candidates' weights (heaviest first): by [`Rule::floor`], equal without folds.
pub fn weigh(cands: &mut [Candidate], rule: &Rule) {
    let rms = |c: &Candidate| -> f64 {
        let n = c.folds.len().max(1) as f64;
        (c.folds.iter().map(|f| f.1 * f.1).sum::<f64>() / n).sqrt()
    };
    let raw: Vec<f64> = match rule.floor {
        _ if cands.iter().all(|c| c.folds.is_empty()) => vec![1.0; cands.len()],
        Some(floor) => cands
            .iter()
            .map(|c| 1.0 / (rms(c).powi(2) + floor * floor))
            .collect(),
        None => {
            let best = cands
                .iter()
                .map(rms)
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map_or(0, |x| x.0);
            (0..cands.len())
                .map(|k| f64::from(u8::from(k == best)))
                .collect()
        }
    };
    let total: f64 = raw.iter().sum();
    for (c, w) in cands.iter_mut().zip(raw) {
        c.weight = w / total;
    }
    cands.sort_by(|a, b| b.weight.total_cmp(&a.weight));
}

/// What the intervals are made of: the run-to-run spread, the combined law's error between
/// the measured counts (every fold but the last), and per doubling beyond them (the rule's
/// prior and the last fold's error per doubling of its extrapolation, in quadrature).
fn spread(combined: &[(u32, f64)], repeat_rel: Option<f64>, rule: &Rule) -> Spread {
    let inner = &combined[..combined.len().saturating_sub(1)];
    let within_rel = if inner.is_empty() {
        0.0
    } else {
        (inner.iter().map(|f| f.1 * f.1).sum::<f64>() / inner.len() as f64).sqrt()
    };
    let own = match combined {
        [.., (prev, _), (last, e)] => e.abs() / (f64::from(*last) / f64::from(*prev)).log2(),
        [(_, e)] => e.abs(),
        [] => rule.unvalidated_per_doubling,
    };
    Spread {
        // A few repeats understate the spread: the rule's figure is a floor.
        repeat_rel: repeat_rel.map_or(rule.repeat_prior, |r| r.max(rule.repeat_prior)),
        within_rel,
        per_doubling_rel: own.hypot(rule.per_doubling_prior),
    }
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

/// The bounded weighted least squares of `X` on a form's columns (residuals relative to the
/// measured time; the growth `c >= 0`, the serial time `b >= 0` where the rule holds it):
/// every set of parameters held at 0 is tried, the feasible fit of least error kept.
fn fit_form(form: Form, n0: u32, pts: &[LawPoint], rule: &Rule) -> Option<Law> {
    let n0f = f64::from(n0);
    let p = form.params();
    if p == 0 {
        return Some(Law::default());
    }
    let cols: Vec<Vec<f64>> = pts
        .iter()
        .map(|q| form.columns(f64::from(q.nodes), n0f))
        .collect();
    let y: Vec<f64> = pts.iter().map(LawPoint::x).collect();
    let w: Vec<f64> = pts.iter().map(|q| 1.0 / q.measured).collect();
    let may_be_negative = |k: usize| form.serial && k == 0 && !rule.serial_nonneg;
    let mut best: Option<(f64, Vec<f64>)> = None;
    for free_mask in (0u32..(1 << p)).rev() {
        let free: Vec<usize> = (0..p).filter(|k| free_mask & (1 << k) != 0).collect();
        let mut params = vec![0.0; p];
        if !free.is_empty() {
            let rows: Vec<Vec<f64>> = cols
                .iter()
                .map(|r| free.iter().map(|&k| r[k]).collect())
                .collect();
            let Some(f) = lsq::fit(&rows, &y, &w) else {
                continue;
            };
            for (&k, v) in free.iter().zip(f.params) {
                params[k] = v;
            }
        }
        if (0..p).any(|k| params[k] < 0.0 && !may_be_negative(k)) {
            continue;
        }
        let sse: f64 = cols
            .iter()
            .zip(&y)
            .zip(&w)
            .map(|((r, yi), wi)| {
                let fit: f64 = r.iter().zip(&params).map(|(a, b)| a * b).sum();
                ((fit - yi) * wi).powi(2)
            })
            .sum();
        if best.as_ref().is_none_or(|b| sse < b.0 * (1.0 - 1e-12)) {
            best = Some((sse, params));
        }
    }
    let law = form.law(n0, &best?.1);
    // A law that predicts no time left at a measured count is no law.
    pts.iter()
        .all(|q| q.model + law.at(f64::from(q.nodes)) > 0.0)
        .then_some(law)
}

/// The mean signed relative error of `law` on `pts` (predicted / measured - 1).
fn mean_signed(law: &Law, pts: &[LawPoint]) -> f64 {
    let e: f64 = pts
        .iter()
        .map(|p| (p.model + law.at(f64::from(p.nodes))) / p.measured - 1.0)
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
    fn recovers_a_law_of_the_family_and_weighs_it_most() {
        let truth = |n: f64| 20.0 * n.log2();
        let f = fit_law(&pts(truth, &[2, 4, 8, 16]), true).unwrap();
        assert_eq!(f.measured_nodes, vec![1, 2, 4, 8, 16]);
        let best = &f.candidates[0];
        assert_eq!(best.form, "a/n + c log2(n)");
        assert!((best.law.at(32.0) - truth(32.0)).abs() < 1e-6, "{f:?}");
        assert!(best.loo_rel() < 1e-9);
        assert_eq!(f.compared, 7);
        let total: f64 = f.candidates.iter().map(|c| c.weight).sum();
        assert!((total - 1.0).abs() < 1e-12);
        // The combined law is the weighted sum of the candidates, at every count.
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
        assert_eq!(three.compared, 4);
        let four = fit_law(&pts(truth, &[2, 4, 8]), true).unwrap();
        assert_eq!(four.compared, 7);
        assert_eq!(four.candidates[0].form, "a/n + b");
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
