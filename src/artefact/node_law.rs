//! The `node_law` section of a profile (MODEL.md 6c b): the chosen law, the runners-up and the
//! evidence, as `fit` and `profile --nodes --machine` write it and `plan` reads it.

use crate::error::InputResult;
use crate::input::Check;
use crate::limits;
use crate::limits::{Bound, Whole};
use serde::{Deserialize, Serialize};

/// The most basis terms a law has.
pub const MAX_TERMS: usize = 4;

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

impl CombinedFile {
    fn validate(&self, c: &Check, at: &str) -> InputResult<()> {
        c.whole(
            &format!("{at}.anchor_nodes"),
            self.anchor_nodes.into(),
            limits::NODES,
        )?;
        validate_terms(c, at, &self.terms)?;
        validate_folds(c, at, &self.folds)?;
        // An interval's parts: a standard deviation of 10 (1000%) is already no interval.
        let sd = Bound::Within(0.0, 10.0);
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
