//! The energy chosen per code by its own left-out counts ([`Rule::energy_choice`], judged by the
//! design study, docs/NODE_AXIS.md), the energy counterpart of [`super::node_method`]: the
//! derived energy (node power over the time law the code's method chose) or the plain
//! reference's direct energy law in the family's terms (the single direct law of
//! [`super::energy_law`] of least left-out error), whichever, refitted without each count
//! beyond the anchor (the direct law's own choice by left-out error included), predicted that
//! count better.

use super::energy_law::{self, EnergyInputs, EnergyPoint, at, derived_folds, direct_error};
use super::energy_law::{direct_laws, usable};
use super::node_method::LEAST_BEYOND;
use super::node_rule::Rule;
use crate::model::node_law::{Candidate, EnergyLaw};

/// The sum of squares of the signed left-out errors.
fn squares(folds: &[(u32, f64)]) -> f64 {
    folds.iter().map(|f| f.1 * f.1).sum()
}

/// The direct law of least left-out error on `pts`, judged at their counts beyond the anchor.
fn best_direct(pts: &[EnergyPoint], n0: u32, horizon: u32) -> Option<Candidate> {
    let mut counts: Vec<u32> = pts.iter().map(|p| p.nodes).filter(|&n| n > n0).collect();
    counts.sort_unstable();
    counts.dedup();
    let most = counts.len().saturating_sub(1).max(1);
    direct_laws(pts, (n0, &counts), most, horizon)
        .into_iter()
        .min_by(|a, b| squares(&a.folds).total_cmp(&squares(&b.folds)))
}

/// The energy over node counts as the rule asks: the direct laws judged against the derived
/// energy ([`energy_law::fit`]) where it weighs them, else the energy chosen per code where it
/// asks ([`choose`]); `None`: the derived energy.
pub(super) fn fit(
    pts: &[EnergyPoint],
    inputs: &EnergyInputs<'_>,
    rule: &Rule,
) -> Option<EnergyLaw> {
    if rule.energy_law.is_some() || !rule.energy_choice {
        return energy_law::fit(pts, inputs, rule);
    }
    let (pts, _, folds) = usable(pts, inputs)?;
    choose(&pts, inputs, &folds, rule)
}

/// The direct law, in place of the derived energy, where its left-out errors at the time
/// law's left-out counts `folds` are less (sum of squares, the direct law chosen afresh
/// without each count); `None` (the derived energy) with fewer than [`LEAST_BEYOND`] of them,
/// on a tie, or where the direct law cannot be fitted.
fn choose(
    pts: &[EnergyPoint],
    inputs: &EnergyInputs<'_>,
    folds: &[(u32, f64)],
    rule: &Rule,
) -> Option<EnergyLaw> {
    if folds.len() < LEAST_BEYOND {
        return None;
    }
    let (n0, horizon) = (inputs.anchor, inputs.horizon);
    let derived = derived_folds(pts, folds);
    let direct: Option<Vec<(u32, f64)>> = folds
        .iter()
        .map(|&(m, _)| {
            let rest: Vec<EnergyPoint> = pts.iter().copied().filter(|p| p.nodes != m).collect();
            let law = best_direct(&rest, n0, horizon)?.law;
            Some((m, direct_error(&law, &at(pts, m))))
        })
        .collect();
    let direct = direct.filter(|d| d.iter().all(|e| e.1.is_finite()))?;
    if squares(&direct) >= squares(&derived) {
        return None;
    }
    let mut law = best_direct(pts, n0, horizon)?;
    law.weight = 1.0;
    Some(EnergyLaw {
        derived_use: 0.0,
        law: law.law,
        derived_weight: 0.0,
        derived_folds: derived,
        per_doubling_rel: rule.per_doubling(&direct),
        folds: direct,
        candidates: vec![law],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::energy_law::tests::{flat_derived, pts};

    #[test]
    fn a_code_whose_left_out_counts_favour_the_direct_energy_takes_it_and_two_counts_keep_the_derived()
     {
        let inputs = flat_derived();
        let choose = Rule {
            energy_choice: true,
            ..Rule::default()
        };
        let e = fit(&pts(&[2, 4, 8]), &inputs, &choose).unwrap();
        assert_eq!(e.derived_use, 0.0);
        assert!((e.mix(32.0).1 - 1.5).abs() < 0.01, "{e:?}");
        assert!(e.folds.iter().all(|f| f.1.abs() < 1e-6), "{e:?}");
        // Two counts beyond the anchor: the derived energy.
        assert!(fit(&pts(&[4, 8]), &inputs, &choose).is_none());
        assert!(fit(&pts(&[2, 4, 8]), &inputs, &Rule::default()).is_none());
    }
}
