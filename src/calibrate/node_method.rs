//! The method chosen per code by its own left-out counts ([`Rule::method_choice`], judged by
//! the design study, docs/NODE_AXIS.md): the family's law as the rule weighs it, or the plain
//! reference's single law of least left-out error (perfect division with a serial or growing
//! time, `weigh=best,growth=free,power=off`), whichever, refitted whole (its own left-out
//! weighing included) without each count beyond the anchor, predicted that count better.

use super::node_forms::{LawPoint, mean_signed};
use super::node_rule::{Rule, Weighing};
use crate::model::node_law::NodeFit;

/// The fewest counts beyond the anchor that let each method be refitted as itself without
/// one of them and judged there.
pub(super) const LEAST_BEYOND: usize = 3;

/// The plain reference's method in the family's terms (its growing laws under the family's
/// growth bar where [`Rule::plain_growth_gate`] asks).
fn plain(rule: &Rule) -> Rule {
    Rule {
        weighing: Weighing::Best,
        growth_evidence: rule.growth_evidence.filter(|_| rule.plain_growth_gate),
        power: false,
        serial_nonneg: false,
        refute: None,
        method_choice: false,
        ..*rule
    }
}

/// The fit (by `fit`, the family's fit of a rule on points) of the method whose left-out
/// errors are least (sum of squares over the counts beyond the anchor, each left out in turn).
/// Each method is judged refitted as itself, its own left-out weighing included, which needs
/// two counts beyond the anchor once one is left out: with fewer than [`LEAST_BEYOND`] counts
/// beyond it (three counts fitted, or fewer), or where the plain's root-mean-square error is
/// not less than the family's by more than [`Rule::method_bar`] times `noise` (the code's
/// run-to-run spread), the family's.
pub(super) fn choose(
    points: &[LawPoint],
    (one_node, noise): (bool, f64),
    rule: &Rule,
    fit: &dyn Fn(&Rule, &[LawPoint]) -> Option<NodeFit>,
) -> Option<NodeFit> {
    let family = Rule {
        method_choice: false,
        ..*rule
    };
    let plain = plain(rule);
    let mut counts: Vec<u32> = points.iter().map(|p| p.nodes).filter(|&n| n > 1).collect();
    counts.sort_unstable();
    counts.dedup();
    let n0 = if one_node {
        1
    } else {
        counts.first().copied()?
    };
    let beyond: Vec<u32> = counts.into_iter().filter(|&n| n > n0).collect();
    let own = fit(&family, points).map(|f| NodeFit {
        rule: rule.describe(),
        ..f
    });
    if beyond.len() < LEAST_BEYOND {
        return own;
    }
    let error = |r: &Rule| -> f64 {
        beyond
            .iter()
            .map(|&m| {
                let (held, rest): (Vec<LawPoint>, Vec<LawPoint>) =
                    points.iter().partition(|p| p.nodes == m);
                fit(r, &rest).map_or(f64::INFINITY, |f| mean_signed(&f.law, &held).powi(2))
            })
            .sum()
    };
    let (e_family, e_plain) = (error(&family), error(&plain));
    let rms = |e: f64| (e / beyond.len() as f64).sqrt();
    let better = rms(e_plain) + rule.method_bar * noise < rms(e_family);
    // Where the plain law cannot be fitted on every count, the family's.
    let chosen = better.then(|| fit(&plain, points)).flatten();
    if let Some(mut f) = chosen {
        f.rule = format!(
            "the plain reference's single law of least leave-one-node-count-out error, chosen \
             over the family ({}) by the code's own left-out counts ({:.1}% against {:.1}% \
             root-mean-square)",
            family.describe(),
            100.0 * rms(e_plain),
            100.0 * rms(e_family),
        );
        Some(f)
    } else {
        own
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::node_fit::fit_law_within;
    use crate::calibrate::node_fit::tests::pts;

    #[test]
    fn a_code_whose_left_out_counts_favour_the_plain_law_takes_it_and_three_counts_keep_the_family()
    {
        // A family that may never grow misses every left-out count of a code that grows; the
        // plain reference's law of least left-out error, its growing laws not gated, follows it.
        let family = Rule {
            growth_evidence: Some(f64::INFINITY),
            plain_growth_gate: false,
            method_choice: false,
            ..Rule::default()
        };
        let choose = Rule {
            method_choice: true,
            ..family
        };
        let fit = |r: &Rule, nodes: &[u32]| {
            fit_law_within(
                &pts(|n| 5.0 * (n - 1.0), nodes),
                true,
                (u32::MAX, false),
                (r, None),
            )
            .unwrap()
        };
        let four = fit(&choose, &[2, 4, 8, 16]);
        assert!(
            four.rule.starts_with("the plain reference"),
            "{}",
            four.rule
        );
        assert!((four.law.at(64.0) - 5.0 * 63.0).abs() < 1e-6, "{four:?}");
        assert!(fit(&family, &[2, 4, 8, 16]).law.at(64.0) < 100.0);
        // A bar beyond the plain law's advantage (its left-out error is 0, the family's a few
        // percent) keeps the family.
        let barred = Rule {
            method_bar: 1e3,
            ..choose
        };
        assert_eq!(
            fit(&barred, &[2, 4, 8, 16]).law,
            fit(&family, &[2, 4, 8, 16]).law
        );
        // Two counts beyond the anchor: a method refitted without one is not itself.
        let three = fit(&choose, &[2, 4]);
        assert_eq!(three.law, fit(&family, &[2, 4]).law);
        assert_eq!(three.rule, choose.describe());
    }
}
