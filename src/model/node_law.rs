//! MODEL.md section 6c (b), the node law: the time that the single-node terms do not explain
//! at `n` nodes, `X(n) = T(n) - T_model(n)`, carried across node counts by a law of the family
//! `a (1/n - 1) + sum_k c_k (n^i_k log2(n)^j_k - [j_k = 0])`. Every basis function is 0 at
//! `n = 1`, so a law never changes a one-node prediction (the worked example and every
//! single-node figure stay exact). `docs/MODEL.md` section 6c writes the equations; the fit is
//! [`crate::calibrate::node_fit`]. The time is waiting (no core busy): it is charged at the
//! node's idle power and counts as communication in the efficiency trees.

pub use crate::artefact::node_law::MAX_TERMS;
use crate::artefact::node_law::{
    CandidateFile, CombinedFile, EnergyLawFile, FoldFile, NodeLawFile, ResidualFile, TermFile,
};

/// One basis function `n^i log2(n)^j - [j = 0]` (`i = -1, j = 0`: `1/n - 1`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Basis {
    /// Exponent of `n`.
    pub i: f64,
    /// Exponent of `log2(n)`.
    pub j: u8,
}

impl Basis {
    /// `n^i log2(n)^j` itself.
    #[inline(always)]
    pub fn raw(self, n: f64) -> f64 {
        // The family's exponents without `powf` (the search evaluates this per node count).
        let mut v = if self.i == -1.0 {
            1.0 / n
        } else if self.i == 0.5 {
            n.sqrt()
        } else if self.i == 1.0 {
            n
        } else if self.i == 0.0 {
            1.0
        } else {
            n.powf(self.i)
        };
        if self.j > 0 {
            let l = n.log2();
            for _ in 0..self.j {
                v *= l;
            }
        }
        v
    }

    /// The function at `n` less its value at one node (0 at `n = 1`).
    #[inline(always)]
    pub fn at(self, n: f64) -> f64 {
        let v = self.raw(n);
        if self.j == 0 { v - 1.0 } else { v }
    }

    /// The term as printed: `n^0.5 log2(n)`, `1/n`.
    pub fn name(self) -> String {
        let p = if self.i == -1.0 {
            "1/n".to_string()
        } else if self.i == 0.0 {
            String::new()
        } else if self.i == 1.0 {
            "n".to_string()
        } else {
            format!("n^{}", trim(self.i))
        };
        let l = match self.j {
            0 => String::new(),
            1 => "log2(n)".to_string(),
            j => format!("log2(n)^{j}"),
        };
        match (p.is_empty(), l.is_empty()) {
            (true, true) => "1".into(),
            (false, true) => p,
            (true, false) => l,
            (false, false) => format!("{p} {l}"),
        }
    }
}

/// `x` with four significant digits, without an exponent for ordinary magnitudes.
pub fn sig(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = (3 - x.abs().log10().floor() as i32).clamp(0, 12) as usize;
    format!("{x:.digits$}")
}

fn trim(x: f64) -> String {
    let s = format!("{x:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A law: up to [`MAX_TERMS`] basis functions with their coefficients (seconds), anchored at
/// the smallest measured node count `n0`: `X(n) = sum_k c_k (b_k(n) - b_k(n0))` for `n > n0`
/// and 0 at or below it, so the law never changes a prediction at the anchor or below (the
/// worked example and every single-node figure stay exact).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Law {
    terms: [Option<(Basis, f64)>; MAX_TERMS],
    /// `n0`.
    anchor: f64,
    /// `sum_k c_k b_k(n0)`, subtracted from the sum at `n`.
    offset: f64,
}

impl Default for Law {
    fn default() -> Law {
        Law {
            terms: [None; MAX_TERMS],
            anchor: 1.0,
            offset: 0.0,
        }
    }
}

impl Law {
    /// A law of these terms anchored at one node (at most [`MAX_TERMS`]; more are dropped).
    pub fn new(terms: &[(Basis, f64)]) -> Law {
        Law::anchored(1, terms)
    }

    /// A law of these terms anchored at `n0` nodes.
    pub fn anchored(n0: u32, terms: &[(Basis, f64)]) -> Law {
        let mut l = Law {
            anchor: f64::from(n0.max(1)),
            ..Law::default()
        };
        for (slot, t) in l.terms.iter_mut().zip(terms) {
            *slot = Some(*t);
        }
        l.offset = l.terms().map(|(b, c)| c * b.at(l.anchor)).sum();
        l
    }

    /// The node count the law is anchored at (`X(n0) = 0`).
    pub fn anchor(&self) -> u32 {
        self.anchor as u32
    }

    /// `X(n)`, seconds (0 without terms, and at or below the anchor).
    #[inline(always)]
    pub fn at(&self, n: f64) -> f64 {
        // Most profiles have no law: no powers, logarithms or loop for them.
        if self.terms[0].is_none() || n <= self.anchor {
            return 0.0;
        }
        let mut x = -self.offset;
        for (b, c) in self.terms.iter().flatten() {
            x += c * b.at(n);
        }
        x
    }

    /// A lower bound on `X` over every node count from `n1` to `n2`: each anchored term is
    /// monotone in `n` and 0 at or below the anchor, so its least is at an end.
    pub fn lower_bound(&self, n1: f64, n2: f64) -> f64 {
        self.terms()
            .map(|&(b, c)| {
                let at = |n: f64| {
                    if n <= self.anchor {
                        0.0
                    } else {
                        c * (b.at(n) - b.at(self.anchor))
                    }
                };
                at(n1).min(at(n2))
            })
            .sum()
    }

    /// The terms.
    pub fn terms(&self) -> impl Iterator<Item = &(Basis, f64)> {
        self.terms.iter().flatten()
    }

    /// The weighted sum of laws of one anchor: again a law over the union of their bases
    /// (`None` when that union has more than [`MAX_TERMS`] bases).
    pub fn weighted_sum(n0: u32, laws: &[(f64, Law)]) -> Option<Law> {
        let mut acc: Vec<(Basis, f64)> = Vec::new();
        for (w, l) in laws {
            for &(b, c) in l.terms() {
                match acc.iter_mut().find(|(x, _)| *x == b) {
                    Some(slot) => slot.1 += w * c,
                    None => acc.push((b, w * c)),
                }
            }
        }
        acc.retain(|(_, c)| *c != 0.0);
        (acc.len() <= MAX_TERMS).then(|| Law::anchored(n0, &acc))
    }

    /// `X(n) = 3.1 (1/n - 1) + 0.2 log2(n)` as printed (`- f(n0)` where the anchor is not
    /// one node).
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .terms()
            .map(|(b, c)| {
                let base = b.raw(self.anchor);
                if self.anchor == 1.0 && b.j == 0 {
                    format!("{} ({} - 1)", sig(*c), b.name())
                } else if self.anchor == 1.0 {
                    format!("{} {}", sig(*c), b.name())
                } else {
                    format!("{} ({} - {})", sig(*c), b.name(), sig(base))
                }
            })
            .collect();
        if parts.is_empty() {
            "X(n) = 0".into()
        } else {
            format!("X(n) = {}", parts.join(" + ").replace("+ -", "- "))
        }
    }
}

/// One candidate law, its weight in the prediction and its out-of-sample errors.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The law fitted on every measured node count.
    pub law: Law,
    /// The law's form in time, `T(n) = a/n + b + c log2(n)` (empty where not recorded).
    pub form: String,
    /// Its weight from the left-out evidence (the weights add up to 1; 0: ruled out).
    pub weight: f64,
    /// `(nodes, signed mean relative time error)` at each left-out node count, predicted by
    /// the law refitted without it (ascending: the last is the extrapolation to the largest).
    pub folds: Vec<(u32, f64)>,
}

impl Candidate {
    /// Mean absolute relative error over the left-out counts (0 without any).
    pub fn loo_rel(&self) -> f64 {
        mean_abs(&self.folds)
    }

    /// The error at the largest measured count predicted from the smaller ones.
    pub fn extrapolation_rel(&self) -> Option<f64> {
        self.folds.last().map(|f| f.1.abs())
    }
}

/// The mean absolute value of the folds' errors (0 without folds).
pub fn mean_abs(folds: &[(u32, f64)]) -> f64 {
    if folds.is_empty() {
        0.0
    } else {
        folds.iter().map(|f| f.1.abs()).sum::<f64>() / folds.len() as f64
    }
}

/// What the interval of a prediction at an unmeasured node count is made of (MODEL.md 6c g):
/// relative standard deviations, combined in quadrature.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Spread {
    /// Run-to-run spread of repeated runs of one configuration.
    pub repeat_rel: f64,
    /// The combined law's out-of-sample error between measured counts.
    pub within_rel: f64,
    /// How much the error grows per doubling beyond the largest measured count.
    pub per_doubling_rel: f64,
}

/// The node law of a profile: the combined law, the candidates it was chosen among, and the
/// evidence it rests on.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeFit {
    /// The law the model uses ("combined"): the weighted median or mean of the candidates left
    /// (or the one chosen, in older files).
    pub law: Law,
    /// Candidates, heaviest first.
    pub candidates: Vec<Candidate>,
    /// `(nodes, signed relative error)` of the combined law at each left-out count.
    pub folds: Vec<(u32, f64)>,
    /// How the candidates were weighed, in words.
    pub rule: String,
    /// What the intervals are made of.
    pub spread: Spread,
    /// The node counts measured.
    pub measured_nodes: Vec<u32>,
    /// `(nodes, mean relative residual of the combined law there)`.
    pub residuals: Vec<(u32, f64)>,
    /// How many candidate laws the evidence allowed.
    pub compared: usize,
    /// Whether the runs were weak scaling (work per rank fixed) rather than strong.
    pub weak: bool,
    /// The energy over node counts, where runs with energy judged it ([`EnergyLaw`]); `None`:
    /// energy derived from the predicted time and node power alone.
    pub energy: Option<EnergyLaw>,
}

/// Energy over node counts (MODEL.md 6c, docs/MODEL.md "Energy over node counts"): the derived
/// energy `E_d(n)` (node power over the predicted time) and direct laws of `n`, `E_d(n0) (1 +
/// h_k(n))`, each weighted by its own left-out error. The model uses
/// `E(n) = u E_d(n) + (1 - u) E_d(n0) (1 + h(n))` above the anchor `n0`, `E_d(n)` at and below it.
#[derive(Debug, Clone, PartialEq)]
pub struct EnergyLaw {
    /// `u`: the weight the model puts on the derived energy.
    pub derived_use: f64,
    /// `h`: the direct laws the model uses, as one law (anchored at `n0`: 0 there).
    pub law: Law,
    /// The derived energy's evidence weight.
    pub derived_weight: f64,
    /// The derived energy's signed relative error at each left-out count.
    pub derived_folds: Vec<(u32, f64)>,
    /// The direct laws `h_k`, with their weights (with `derived_weight`, they add up to 1).
    pub candidates: Vec<Candidate>,
    /// The energy's signed relative error at each left-out count, as the model combines it.
    pub folds: Vec<(u32, f64)>,
    /// Its error per doubling beyond the measured counts.
    pub per_doubling_rel: f64,
}

impl EnergyLaw {
    /// `(u, (1 - u) (1 + h(n)))`: the weights of `E_d(n)` and of `E_d(n0)` at `n` nodes; `(1,
    /// 0)` at and below the anchor.
    #[inline]
    pub fn mix(&self, n: f64) -> (f64, f64) {
        if n <= self.law.anchor || self.derived_use >= 1.0 {
            (1.0, 0.0)
        } else {
            (
                self.derived_use,
                (1.0 - self.derived_use) * (1.0 + self.law.at(n)),
            )
        }
    }

    /// The least of `(1 - u) (1 + h(n))` over `n1..=n2` above the anchor (each anchored term is
    /// monotone, [`Law::lower_bound`]), never below 0.
    pub fn direct_lower_bound(&self, n1: f64, n2: f64) -> f64 {
        ((1.0 - self.derived_use) * (1.0 + self.law.lower_bound(n1, n2))).max(0.0)
    }

    /// Each judged energy at `n` nodes with weight above 0, from the derived energy `e_d` and
    /// the anchor's `e0`: the derived and each direct law.
    pub fn alternatives(&self, n: f64, (e_d, e0): (f64, f64)) -> Vec<f64> {
        let derived = (self.derived_weight > 0.0).then_some(e_d);
        let direct = self
            .candidates
            .iter()
            .filter(|c| c.weight > 0.0)
            .map(|c| e0 * (1.0 + c.law.at(n)).max(1e-3));
        derived.into_iter().chain(direct).collect()
    }

    /// The energy law as `fit` prints it: each judged energy with its weight and left-out
    /// errors, and what the model uses.
    pub fn describe(&self) -> Vec<String> {
        let folds = |f: &[(u32, f64)]| -> String {
            let v: Vec<String> = f
                .iter()
                .map(|(n, e)| format!("{n}: {}", crate::units::signed_percent(*e, 1)))
                .collect();
            if v.is_empty() {
                "-".into()
            } else {
                v.join(", ")
            }
        };
        let mut out = vec![format!(
            "energy over node counts: the derived form against direct laws E_d(n0) (1 + h(n)), \
             weighted by their left-out errors; the model uses {:.3} x derived + {:.3} x E_d(n0) \
             (1 + h(n)), {}",
            self.derived_use,
            1.0 - self.derived_use,
            self.law.describe().replace("X(n)", "h(n)")
        )];
        out.push(format!(
            "  weight {:>5.3}  derived (node power over the predicted time)   left out {}",
            self.derived_weight,
            folds(&self.derived_folds)
        ));
        for c in &self.candidates {
            out.push(format!(
                "  weight {:>5.3}  {}   left out {}",
                c.weight,
                c.form,
                folds(&c.folds)
            ));
        }
        out
    }

    fn to_file(&self, terms: impl Fn(&Law) -> Vec<TermFile>) -> EnergyLawFile {
        let folds = |f: &[(u32, f64)]| -> Vec<FoldFile> {
            f.iter()
                .map(|&(nodes, rel)| FoldFile { nodes, rel })
                .collect()
        };
        EnergyLawFile {
            derived_use: self.derived_use,
            terms: terms(&self.law),
            derived_weight: self.derived_weight,
            derived_folds: folds(&self.derived_folds),
            candidates: self
                .candidates
                .iter()
                .map(|c| CandidateFile {
                    terms: terms(&c.law),
                    loo_rel: c.loo_rel(),
                    extrapolation_rel: c.extrapolation_rel(),
                    form: Some(c.form.clone()),
                    weight: Some(c.weight),
                    folds: Some(folds(&c.folds)),
                })
                .collect(),
            folds: folds(&self.folds),
            per_doubling_rel: self.per_doubling_rel,
        }
    }

    fn from_file(f: &EnergyLawFile, law_of: impl Fn(&[TermFile]) -> Law) -> EnergyLaw {
        let folds = |fs: &[FoldFile]| fs.iter().map(|x| (x.nodes, x.rel)).collect::<Vec<_>>();
        EnergyLaw {
            derived_use: f.derived_use,
            law: law_of(&f.terms),
            derived_weight: f.derived_weight,
            derived_folds: folds(&f.derived_folds),
            candidates: f
                .candidates
                .iter()
                .map(|c| Candidate {
                    law: law_of(&c.terms),
                    form: c.form.clone().unwrap_or_default(),
                    weight: c.weight.unwrap_or(0.0),
                    folds: c.folds.as_deref().map(folds).unwrap_or_default(),
                })
                .collect(),
            folds: folds(&f.folds),
            per_doubling_rel: f.per_doubling_rel,
        }
    }
}

impl NodeFit {
    /// The law the model uses.
    pub fn law(&self) -> Law {
        self.law
    }

    /// The largest measured node count.
    pub fn largest(&self) -> u32 {
        self.measured_nodes.iter().copied().max().unwrap_or(1)
    }

    /// The smallest measured node count (the anchor).
    pub fn smallest(&self) -> u32 {
        self.measured_nodes.iter().copied().min().unwrap_or(1)
    }

    /// The combined law's mean absolute out-of-sample error (0 without folds).
    pub fn loo_rel(&self) -> f64 {
        mean_abs(&self.folds)
    }

    /// The profile's `node_law` section.
    pub fn to_file(&self) -> NodeLawFile {
        let terms = |l: &Law| -> Vec<TermFile> {
            l.terms()
                .map(|(b, coef)| TermFile {
                    i: b.i,
                    j: b.j,
                    coef_s: *coef,
                    term: b.name(),
                })
                .collect()
        };
        let folds = |f: &[(u32, f64)]| -> Vec<FoldFile> {
            f.iter()
                .map(|&(nodes, rel)| FoldFile { nodes, rel })
                .collect()
        };
        let candidates = self.candidates.iter().map(|c| CandidateFile {
            terms: terms(&c.law),
            loo_rel: c.loo_rel(),
            extrapolation_rel: c.extrapolation_rel(),
            form: (!c.form.is_empty()).then(|| c.form.clone()),
            weight: Some(c.weight),
            folds: Some(folds(&c.folds)),
        });
        NodeLawFile {
            law: self.law.describe(),
            measured_nodes: self.measured_nodes.clone(),
            laws_compared: Some(self.compared),
            scaling: Some(if self.weak { "weak" } else { "strong" }.into()),
            candidates: candidates.collect(),
            residuals: self
                .residuals
                .iter()
                .map(|&(nodes, rel)| ResidualFile { nodes, rel })
                .collect(),
            combined: Some(CombinedFile {
                anchor_nodes: self.law.anchor(),
                rule: self.rule.clone(),
                terms: terms(&self.law),
                folds: folds(&self.folds),
                repeat_rel: self.spread.repeat_rel,
                within_rel: self.spread.within_rel,
                per_doubling_rel: self.spread.per_doubling_rel,
            }),
            energy: self.energy.as_ref().map(|e| e.to_file(terms)),
        }
    }

    /// The law a validated `node_law` section holds. A section without `combined` (written
    /// before laws were averaged) uses its first candidate alone, anchored at one node, and
    /// its intervals rest on that candidate's errors.
    pub fn from_file(f: &NodeLawFile) -> NodeFit {
        let n0 = f.combined.as_ref().map_or(1, |c| c.anchor_nodes);
        let law_of = |ts: &[TermFile]| -> Law {
            let terms: Vec<(Basis, f64)> = ts
                .iter()
                .map(|t| (Basis { i: t.i, j: t.j }, t.coef_s))
                .collect();
            Law::anchored(n0, &terms)
        };
        let folds_of =
            |fs: &[FoldFile]| -> Vec<(u32, f64)> { fs.iter().map(|x| (x.nodes, x.rel)).collect() };
        let candidates: Vec<Candidate> = f
            .candidates
            .iter()
            .enumerate()
            .map(|(k, c)| Candidate {
                law: law_of(&c.terms),
                form: c.form.clone().unwrap_or_default(),
                weight: c.weight.unwrap_or(if k == 0 { 1.0 } else { 0.0 }),
                folds: match &c.folds {
                    Some(fs) => folds_of(fs),
                    None => legacy_folds(c, f),
                },
            })
            .collect();
        let (law, folds, rule, spread) = match &f.combined {
            Some(c) => (
                law_of(&c.terms),
                folds_of(&c.folds),
                c.rule.clone(),
                Spread {
                    repeat_rel: c.repeat_rel,
                    within_rel: c.within_rel,
                    per_doubling_rel: c.per_doubling_rel,
                },
            ),
            None => {
                let first = candidates.first();
                let loo = first.map_or(0.0, Candidate::loo_rel);
                let ext = first.and_then(Candidate::extrapolation_rel).unwrap_or(0.0);
                (
                    first.map_or(Law::default(), |c| c.law),
                    first.map_or(Vec::new(), |c| c.folds.clone()),
                    "the single law of least leave-one-out error (an older profile)".into(),
                    Spread {
                        repeat_rel: 0.0,
                        within_rel: loo,
                        per_doubling_rel: loo.max(ext),
                    },
                )
            }
        };
        NodeFit {
            law,
            compared: f.laws_compared.unwrap_or(candidates.len()),
            candidates,
            folds,
            rule,
            spread,
            measured_nodes: f.measured_nodes.clone(),
            residuals: f.residuals.iter().map(|r| (r.nodes, r.rel)).collect(),
            weak: f.scaling.as_deref() == Some("weak"),
            energy: f.energy.as_ref().map(|e| EnergyLaw::from_file(e, law_of)),
        }
    }
}

/// The folds an older candidate implies: its mean error, placed at the largest count (the
/// sign and the other counts were not kept).
fn legacy_folds(c: &CandidateFile, f: &NodeLawFile) -> Vec<(u32, f64)> {
    let largest = f.measured_nodes.iter().copied().max().unwrap_or(1);
    vec![(
        largest,
        c.extrapolation_rel.unwrap_or(c.loo_rel).max(c.loo_rel),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_basis_is_zero_at_one_node() {
        for i in [-1.0, 0.0, 0.5, 1.0, 2.0] {
            for j in 0..=2 {
                assert_eq!(Basis { i, j }.at(1.0), 0.0, "i {i} j {j}");
            }
        }
        let l = Law::new(&[
            (Basis { i: -1.0, j: 0 }, 10.0),
            (Basis { i: 0.0, j: 1 }, 2.0),
        ]);
        assert_eq!(l.at(1.0), 0.0);
        assert!((l.at(4.0) - (10.0 * (0.25 - 1.0) + 2.0 * 2.0)).abs() < 1e-12);
    }

    #[test]
    fn json_round_trip() {
        let law = Law::anchored(2, &[(Basis { i: 0.5, j: 1 }, 3.0)]);
        let f = NodeFit {
            law,
            candidates: vec![Candidate {
                law,
                form: "a/n + c n^0.5 log2(n)".into(),
                weight: 1.0,
                folds: vec![(4, 0.02), (8, -0.03)],
            }],
            folds: vec![(4, 0.02), (8, -0.03)],
            rule: "one law".into(),
            spread: Spread {
                repeat_rel: 0.01,
                within_rel: 0.02,
                per_doubling_rel: 0.03,
            },
            measured_nodes: vec![2, 4, 8],
            residuals: vec![(2, 0.01)],
            compared: 40,
            weak: true,
            energy: Some(EnergyLaw {
                derived_use: 0.25,
                law: Law::anchored(2, &[(Basis { i: 0.0, j: 1 }, 0.1)]),
                derived_weight: 0.25,
                derived_folds: vec![(4, 0.05), (8, -0.1)],
                candidates: vec![Candidate {
                    law: Law::anchored(2, &[(Basis { i: 0.0, j: 1 }, 0.1)]),
                    form: "c log2(n)".into(),
                    weight: 0.75,
                    folds: vec![(4, 0.01), (8, 0.02)],
                }],
                folds: vec![(4, 0.02), (8, -0.01)],
                per_doubling_rel: 0.03,
            }),
        };
        assert_eq!(NodeFit::from_file(&f.to_file()), f);
        assert!(f.law().describe().contains("n^0.5 log2(n)"));
        assert_eq!(law.at(2.0), 0.0);
        assert_eq!(law.at(1.0), 0.0);
        let at8 = 3.0 * (8f64.sqrt() * 3.0 - 2f64.sqrt());
        assert!((law.at(8.0) - at8).abs() < 1e-12);
    }

    #[test]
    fn a_weighted_sum_of_laws_is_a_law() {
        let b = Basis { i: -1.0, j: 0 };
        let l = Basis { i: 0.0, j: 1 };
        let x = Law::anchored(2, &[(b, -4.0)]);
        let y = Law::anchored(2, &[(b, 2.0), (l, 1.0)]);
        let s = Law::weighted_sum(2, &[(0.25, x), (0.75, y)]).unwrap();
        for n in [3.0, 5.0, 16.0] {
            assert!((s.at(n) - (0.25 * x.at(n) + 0.75 * y.at(n))).abs() < 1e-12);
        }
        assert!(
            s.lower_bound(1.0, 16.0) <= (1..=16).map(|n| s.at(n.into())).fold(f64::MAX, f64::min)
        );
    }
}
