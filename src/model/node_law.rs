//! MODEL.md section 6c (b), the node law: the time that the single-node terms do not explain
//! at `n` nodes, `X(n) = T(n) - T_model(n)`, carried across node counts by a law of the family
//! `a (1/n - 1) + sum_k c_k (n^i_k log2(n)^j_k - [j_k = 0])`. Every basis function is 0 at
//! `n = 1`, so a law never changes a one-node prediction (the worked example and every
//! single-node figure stay exact). `docs/MODEL.md` section 6c writes the equations; the fit is
//! [`crate::calibrate::node_fit`]. The time is waiting (no core busy): it is charged at the
//! node's idle power and counts as communication in the efficiency trees.

pub use crate::artefact::node_law::MAX_TERMS;
use crate::artefact::node_law::{CandidateFile, NodeLawFile, ResidualFile, TermFile};

/// One basis function `n^i log2(n)^j - [j = 0]` (`i = -1, j = 0`: `1/n - 1`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Basis {
    /// Exponent of `n`.
    pub i: f64,
    /// Exponent of `log2(n)`.
    pub j: u8,
}

impl Basis {
    /// The function at `n` (0 at `n = 1`).
    #[inline(always)]
    pub fn at(self, n: f64) -> f64 {
        let l = n.log2();
        let mut v = n.powf(self.i);
        for _ in 0..self.j {
            v *= l;
        }
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

/// A law: up to [`MAX_TERMS`] basis functions with their coefficients (seconds).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Law {
    terms: [Option<(Basis, f64)>; MAX_TERMS],
}

impl Law {
    /// A law of these terms (at most [`MAX_TERMS`]; more are dropped).
    pub fn new(terms: &[(Basis, f64)]) -> Law {
        let mut l = Law::default();
        for (slot, t) in l.terms.iter_mut().zip(terms) {
            *slot = Some(*t);
        }
        l
    }

    /// `X(n)`, seconds (0 without terms, and at `n = 1`).
    #[inline(always)]
    pub fn at(&self, n: f64) -> f64 {
        // Most profiles have no law: no powers, logarithms or loop for them.
        if self.terms[0].is_none() {
            return 0.0;
        }
        let mut x = 0.0;
        for (b, c) in self.terms.iter().flatten() {
            x += c * b.at(n);
        }
        x
    }

    /// The terms.
    pub fn terms(&self) -> impl Iterator<Item = &(Basis, f64)> {
        self.terms.iter().flatten()
    }

    /// `X(n) = 3.1 (1/n - 1) + 0.2 log2(n)` as printed.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .terms()
            .map(|(b, c)| {
                if b.j == 0 {
                    format!("{} ({} - 1)", sig(*c), b.name())
                } else {
                    format!("{} {}", sig(*c), b.name())
                }
            })
            .collect();
        if parts.is_empty() {
            "X(n) = 0".into()
        } else {
            format!("X(n) = {}", parts.join(" + "))
        }
    }
}

/// One candidate law with its leave-one-node-count-out error.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The law fitted on every measured node count.
    pub law: Law,
    /// Mean absolute relative time error of the runs at each node count predicted by the law
    /// refitted without that node count.
    pub loo_rel: f64,
    /// The same error at the largest measured count alone (predicted from the smaller ones):
    /// the law's measured error when it extrapolates; `None` with one count beyond one node.
    pub extrapolation_rel: Option<f64>,
}

/// The node law of a profile: the chosen law, the runners-up whose disagreement widens the
/// intervals, and the evidence it rests on.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeFit {
    /// Candidates, best (chosen) first.
    pub candidates: Vec<Candidate>,
    /// The node counts measured.
    pub measured_nodes: Vec<u32>,
    /// `(nodes, mean relative residual of the chosen law there)`.
    pub residuals: Vec<(u32, f64)>,
    /// How many candidate laws the cross-validation compared.
    pub compared: usize,
    /// Whether the runs were weak scaling (work per rank fixed) rather than strong.
    pub weak: bool,
}

impl NodeFit {
    /// The chosen law.
    pub fn law(&self) -> Law {
        self.candidates.first().map_or(Law::default(), |c| c.law)
    }

    /// The largest measured node count.
    pub fn largest(&self) -> u32 {
        self.measured_nodes.iter().copied().max().unwrap_or(1)
    }

    /// The profile's `node_law` section.
    pub fn to_file(&self) -> NodeLawFile {
        let candidates = self.candidates.iter().map(|c| CandidateFile {
            terms: c
                .law
                .terms()
                .map(|(b, coef)| TermFile {
                    i: b.i,
                    j: b.j,
                    coef_s: *coef,
                    term: b.name(),
                })
                .collect(),
            loo_rel: c.loo_rel,
            extrapolation_rel: c.extrapolation_rel,
        });
        NodeLawFile {
            law: self.law().describe(),
            measured_nodes: self.measured_nodes.clone(),
            laws_compared: Some(self.compared),
            scaling: Some(if self.weak { "weak" } else { "strong" }.into()),
            candidates: candidates.collect(),
            residuals: self
                .residuals
                .iter()
                .map(|&(nodes, rel)| ResidualFile { nodes, rel })
                .collect(),
        }
    }

    /// The law a validated `node_law` section holds.
    pub fn from_file(f: &NodeLawFile) -> NodeFit {
        let candidates: Vec<Candidate> = f
            .candidates
            .iter()
            .map(|c| {
                let terms: Vec<(Basis, f64)> = c
                    .terms
                    .iter()
                    .map(|t| (Basis { i: t.i, j: t.j }, t.coef_s))
                    .collect();
                Candidate {
                    law: Law::new(&terms),
                    loo_rel: c.loo_rel,
                    extrapolation_rel: c.extrapolation_rel,
                }
            })
            .collect();
        NodeFit {
            compared: f.laws_compared.unwrap_or(candidates.len()),
            candidates,
            measured_nodes: f.measured_nodes.clone(),
            residuals: f.residuals.iter().map(|r| (r.nodes, r.rel)).collect(),
            weak: f.scaling.as_deref() == Some("weak"),
        }
    }
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
        let f = NodeFit {
            candidates: vec![Candidate {
                law: Law::new(&[(Basis { i: 0.5, j: 1 }, 3.0)]),
                loo_rel: 0.02,
                extrapolation_rel: Some(0.03),
            }],
            measured_nodes: vec![1, 2, 4],
            residuals: vec![(2, 0.01)],
            compared: 40,
            weak: true,
        };
        assert_eq!(NodeFit::from_file(&f.to_file()), f);
        assert!(f.law().describe().contains("n^0.5 log2(n)"));
    }
}
