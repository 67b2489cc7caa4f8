//! The `node_law` section of a profile (MODEL.md 6c b): the chosen law, the runners-up and the
//! evidence, as `fit` and `profile --nodes --machine` write it and `plan` reads it.

use crate::error::InputResult;
use crate::input::Check;
use crate::limits;
use crate::limits::{Bound, Whole};
use serde::{Deserialize, Serialize};

/// The most basis terms a law has.
pub const MAX_TERMS: usize = 8;

/// The node law of a profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeLawFile {
    /// The chosen law in words (written for the reader; not read back).
    #[serde(default)]
    pub law: String,
    /// The node counts measured.
    pub measured_nodes: Vec<u32>,
    /// How many candidate laws the cross-validation compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub laws_compared: Option<usize>,
    /// `strong` (the default) or `weak`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling: Option<String>,
    /// Candidates, the chosen one first.
    pub candidates: Vec<CandidateFile>,
    /// The chosen law's mean relative residual at each measured count.
    #[serde(default)]
    pub residuals: Vec<ResidualFile>,
    /// The combined law the model uses, its anchor, its out-of-sample errors and what its
    /// intervals are made of (absent in profiles written before laws were averaged: the
    /// first candidate is then the law, anchored at one node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub combined: Option<CombinedFile>,
    /// Energy over node counts judged on the runs' energy: the derived energy beside direct
    /// laws of `n` (absent: energy derived from time and node power alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<EnergyLawFile>,
}

/// Energy over node counts: `E(n) = derived_use E_d(n) + (1 - derived_use) E_d(n0) (1 + h(n))`
/// above the anchor, `h` the terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnergyLawFile {
    /// The weight the model puts on the derived energy.
    pub derived_use: f64,
    /// `h(n)`'s terms, `coef (f(n) - f(anchor_nodes))` (dimensionless).
    pub terms: Vec<TermFile>,
    /// The derived energy's evidence weight.
    pub derived_weight: f64,
    /// The derived energy's signed relative error at each left-out count.
    pub derived_folds: Vec<FoldFile>,
    /// The direct laws, with their weights.
    pub candidates: Vec<CandidateFile>,
    /// The energy's signed relative error at each left-out count, as the model combines it.
    pub folds: Vec<FoldFile>,
    /// Its error per doubling beyond the measured counts.
    pub per_doubling_rel: f64,
}

impl EnergyLawFile {
    fn validate(&self, c: &Check, at: &str) -> InputResult<()> {
        let unit = Bound::Within(0.0, 1.0);
        c.num(&format!("{at}.derived_use"), self.derived_use, unit)?;
        c.num(&format!("{at}.derived_weight"), self.derived_weight, unit)?;
        validate_terms(c, at, &self.terms)?;
        validate_folds(c, at, &self.derived_folds)?;
        validate_folds(c, at, &self.folds)?;
        let mut total = self.derived_weight;
        for (k, cand) in self.candidates.iter().enumerate() {
            cand.validate(c, &format!("{at}.candidates[{k}]"))?;
            total += cand.weight.unwrap_or(0.0);
        }
        if self.candidates.len() > 64 || (total - 1.0).abs() > 1e-6 {
            return Err(c.fail(
                &format!("{at}.candidates"),
                "at most 64 laws whose weights add up to 1 with derived_weight",
                format!("{} laws, a sum of {total}", self.candidates.len()),
            ));
        }
        c.num(
            &format!("{at}.per_doubling_rel"),
            self.per_doubling_rel,
            limits::REL_SD,
        )
    }
}

/// The combined law: the candidates' weighted sum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CombinedFile {
    /// The node count every term vanishes at (the smallest measured).
    pub anchor_nodes: u32,
    /// How the candidates were weighed, in words.
    pub rule: String,
    /// Its terms, `coef_s (f(n) - f(anchor_nodes))`.
    pub terms: Vec<TermFile>,
    /// Its signed relative error at each left-out node count.
    pub folds: Vec<FoldFile>,
    /// Run-to-run spread (relative standard deviation) of repeated runs.
    pub repeat_rel: f64,
    /// Out-of-sample error between the measured counts (relative standard deviation).
    pub within_rel: f64,
    /// Growth of the error per doubling beyond the largest measured count.
    pub per_doubling_rel: f64,
}

/// A relative error at one left-out node count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FoldFile {
    /// The node count left out.
    pub nodes: u32,
    /// Signed mean relative time error there (predicted / measured - 1).
    pub rel: f64,
}

/// One candidate law and its cross-validated error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CandidateFile {
    /// Its terms.
    pub terms: Vec<TermFile>,
    /// Leave-one-node-count-out mean relative error.
    pub loo_rel: f64,
    /// The error at the largest measured count predicted from the smaller ones (`null`: none).
    #[serde(default)]
    pub extrapolation_rel: Option<f64>,
    /// The law's form in time, for the reader.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<String>,
    /// Its weight in the combined law.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
    /// Its signed relative error at each left-out node count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folds: Option<Vec<FoldFile>>,
}

/// One term `coef_s * n^i log2(n)^j` (less its value at one node).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TermFile {
    /// Exponent of `n`.
    pub i: f64,
    /// Exponent of `log2(n)`.
    pub j: u8,
    /// Coefficient, s.
    pub coef_s: f64,
    /// The basis in words (written for the reader; not read back).
    #[serde(default)]
    pub term: String,
}

/// The chosen law's residual at one node count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResidualFile {
    /// Node count.
    pub nodes: u32,
    /// Mean relative residual.
    pub rel: f64,
}

/// A relative error: a law may miss a left-out count by far, but never by a non-finite amount.
const REL: Bound = Bound::Within(0.0, 1e6);

impl NodeLawFile {
    /// Checks ranges and meaning, naming the key path under `at` (`node_law`).
    pub fn validate(&self, c: &Check, at: &str) -> InputResult<()> {
        for (i, &n) in self.measured_nodes.iter().enumerate() {
            c.whole(
                &format!("{at}.measured_nodes[{i}]"),
                n.into(),
                limits::NODES,
            )?;
        }
        self.validate_counts(c, at)?;
        if self.candidates.is_empty() || self.candidates.len() > 64 {
            return Err(c.fail(
                &format!("{at}.candidates"),
                "1 to 64 candidate laws",
                format!("{} entries", self.candidates.len()),
            ));
        }
        for (k, cand) in self.candidates.iter().enumerate() {
            let at = format!("{at}.candidates[{k}]");
            cand.validate(c, &at)?;
        }
        for (k, r) in self.residuals.iter().enumerate() {
            c.num(&format!("{at}.residuals[{k}].rel"), r.rel, REL)?;
        }
        if let Some(comb) = &self.combined {
            comb.validate(c, &format!("{at}.combined"))?;
            let mut total = 0.0;
            for (k, cand) in self.candidates.iter().enumerate() {
                let Some(w) = cand.weight else {
                    return Err(c.fail(
                        &format!("{at}.candidates[{k}].weight"),
                        "a weight from 0 to 1 (every candidate of a combined law has one)",
                        "nothing",
                    ));
                };
                total += w;
            }
            if (total - 1.0).abs() > 1e-6 {
                return Err(c.fail(
                    &format!("{at}.candidates[].weight"),
                    "weights that add up to 1",
                    format!("a sum of {total}"),
                ));
            }
        }
        if let Some(e) = &self.energy {
            e.validate(c, &format!("{at}.energy"))?;
        }
        match self.scaling.as_deref() {
            None | Some("strong" | "weak") => Ok(()),
            Some(other) => Err(c.fail(
                &format!("{at}.scaling"),
                "\"strong\" or \"weak\"",
                format!("{other:?}"),
            )),
        }
    }
}

impl NodeLawFile {
    /// The measured counts are what `plan` reads as measured (no interval there, none to
    /// measure next) and the smallest is the law's anchor: a list that is empty, out of order
    /// or repeats a count, or an anchor that is not its smallest, is no law `fit` wrote.
    fn validate_counts(&self, c: &Check, at: &str) -> InputResult<()> {
        let key = format!("{at}.measured_nodes");
        let ascending = self.measured_nodes.windows(2).all(|w| w[0] < w[1]);
        if self.measured_nodes.is_empty() || !ascending {
            return Err(c.fail(
                &key,
                "the node counts the law was fitted on, distinct and ascending (as fit writes \
                 them)",
                format!("{:?}", self.measured_nodes),
            ));
        }
        match &self.combined {
            Some(comb) if comb.anchor_nodes != self.measured_nodes[0] => Err(c.fail(
                &format!("{at}.combined.anchor_nodes"),
                format!(
                    "the smallest measured node count, {} (node_law.measured_nodes): the law \
                     is 0 there",
                    self.measured_nodes[0]
                ),
                comb.anchor_nodes.to_string(),
            )),
            _ => Ok(()),
        }
    }
}

impl CombinedFile {
    fn validate(&self, c: &Check, at: &str) -> InputResult<()> {
        c.whole(
            &format!("{at}.anchor_nodes"),
            self.anchor_nodes.into(),
            limits::NODES,
        )?;
        validate_terms(c, at, &self.terms)?;
        validate_folds(c, at, &self.folds)?;
        let sd = limits::REL_SD;
        c.num(&format!("{at}.repeat_rel"), self.repeat_rel, sd)?;
        c.num(&format!("{at}.within_rel"), self.within_rel, sd)?;
        c.num(&format!("{at}.per_doubling_rel"), self.per_doubling_rel, sd)
    }
}

fn validate_folds(c: &Check, at: &str, folds: &[FoldFile]) -> InputResult<()> {
    for (k, f) in folds.iter().enumerate() {
        c.whole(
            &format!("{at}.folds[{k}].nodes"),
            f.nodes.into(),
            limits::NODES,
        )?;
        c.num(
            &format!("{at}.folds[{k}].rel"),
            f.rel,
            Bound::Within(-1e6, 1e6),
        )?;
    }
    Ok(())
}

impl CandidateFile {
    fn validate(&self, c: &Check, at: &str) -> InputResult<()> {
        c.num(&format!("{at}.loo_rel"), self.loo_rel, REL)?;
        c.opt(
            &format!("{at}.extrapolation_rel"),
            self.extrapolation_rel,
            REL,
        )?;
        c.opt(
            &format!("{at}.weight"),
            self.weight,
            Bound::Within(0.0, 1.0),
        )?;
        if let Some(f) = &self.folds {
            validate_folds(c, at, f)?;
        }
        validate_terms(c, at, &self.terms)
    }
}

fn validate_terms(c: &Check, at: &str, terms: &[TermFile]) -> InputResult<()> {
    {
        if terms.len() > MAX_TERMS {
            return Err(c.fail(
                &format!("{at}.terms"),
                format!("at most {MAX_TERMS} terms"),
                format!("{} terms", terms.len()),
            ));
        }
        for (k, t) in terms.iter().enumerate() {
            c.num(&format!("{at}.terms[{k}].i"), t.i, Bound::Within(-1.0, 3.0))?;
            c.whole(&format!("{at}.terms[{k}].j"), t.j.into(), Whole(0, 2))?;
            c.num(
                &format!("{at}.terms[{k}].coef_s"),
                t.coef_s,
                Bound::Within(-1e9, 1e9),
            )?;
        }
        Ok(())
    }
}
