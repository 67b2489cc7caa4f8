//! Bayesian stacking of the node laws' predictive distributions (Yao, Vehtari, Simpson and
//! Gelman, Bayesian Analysis 13(3), 2018), a weighing the design study judged
//! ([`super::node_rule::Weighing::Stack`], docs/NODE_AXIS.md): the weights on the simplex that
//! maximise `sum_m log sum_k w_k p_k(e_km)` over the left-out counts `m`, `p_k` law `k`'s
//! leave-one-count-out predictive density of the measured time. Unlike evidence weights,
//! stacking gives a law no weight for being one of many laws alike: a second copy of a law adds
//! nothing to the mixture's fit of the left-out counts.

use crate::model::node_law::Candidate;

/// The expectation-maximisation steps: each never lowers the (concave) objective, and from
/// the prior's start a few hundred settle the weights well within the span cut's 5%.
const STEPS: usize = 400;

/// The stacking weights of `cands` (summing to 1 over those of nonzero `prior`, which is also
/// where the steps start). Each law's predictive density at a left-out count is a normal of its
/// relative error there, centred on its prediction, of spread `kappa` times the law's own
/// root-mean-square left-out error (or, `pooled`, that of every law alike: the least among
/// them) or `noise` (the code's run-to-run spread), the larger.
pub(super) fn weights(
    cands: &[Candidate],
    prior: &dyn Fn(usize) -> f64,
    kappa: f64,
    (noise, pooled): (f64, bool),
) -> Vec<f64> {
    let live: Vec<usize> = (0..cands.len()).filter(|&k| prior(k) > 0.0).collect();
    let m = live
        .iter()
        .map(|&k| cands[k].folds.len())
        .min()
        .unwrap_or(0);
    let mut w = vec![0.0; cands.len()];
    let start: f64 = live.iter().map(|&k| prior(k)).sum();
    for &k in &live {
        w[k] = prior(k) / start;
    }
    if m == 0 || live.len() < 2 {
        return w;
    }
    let best = live
        .iter()
        .map(|&k| rms(&cands[k]))
        .fold(f64::INFINITY, f64::min);
    let dens = densities(cands, &live, (m, kappa, noise), pooled.then_some(best));
    for _ in 0..STEPS {
        let mut next = vec![0.0; cands.len()];
        for at in &dens {
            let mix: f64 = live.iter().map(|&k| w[k] * at[k]).sum();
            if mix > 0.0 {
                for &k in &live {
                    next[k] += w[k] * at[k] / mix / m as f64;
                }
            }
        }
        w = next;
    }
    w
}

/// At each of the first `m` left-out counts, each live law's predictive density, scaled per
/// count by the largest there (a factor per count leaves the optimum where it is), so that
/// none underflows to 0 for every law at once.
fn densities(
    cands: &[Candidate],
    live: &[usize],
    (m, kappa, noise): (usize, f64, f64),
    pooled: Option<f64>,
) -> Vec<Vec<f64>> {
    let log_p = |k: usize, j: usize| -> f64 {
        let spread = pooled.unwrap_or_else(|| rms(&cands[k]));
        let s = (kappa * spread.max(noise)).max(1e-9);
        let e = cands[k].folds[j].1;
        -0.5 * (e / s).powi(2) - s.ln()
    };
    (0..m)
        .map(|j| {
            let top = live
                .iter()
                .map(|&k| log_p(k, j))
                .fold(f64::NEG_INFINITY, f64::max);
            let mut at = vec![0.0; cands.len()];
            for &k in live {
                at[k] = (log_p(k, j) - top).exp();
            }
            at
        })
        .collect()
}

/// A law's root-mean-square left-out error.
fn rms(c: &Candidate) -> f64 {
    let f = &c.folds;
    (f.iter().map(|x| x.1 * x.1).sum::<f64>() / f.len().max(1) as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::node_law::Law;

    fn cand(form: &str, folds: &[f64]) -> Candidate {
        Candidate {
            law: Law::anchored(1, &[]),
            form: form.into(),
            weight: 0.0,
            folds: folds
                .iter()
                .enumerate()
                .map(|(k, &e)| (2 << k, e))
                .collect(),
        }
    }

    #[test]
    fn copies_of_a_law_add_no_weight_to_its_side() {
        // Two laws, each right on one left-out count: stacking splits the weight evenly. Three
        // copies of the first do not take three quarters of it, as weights per law would.
        let one = |copies: usize| {
            let mut c: Vec<Candidate> = (0..copies).map(|_| cand("a", &[0.0, 0.1])).collect();
            c.push(cand("b", &[0.1, 0.0]));
            let w = weights(&c, &|_| 1.0, 1.0, (0.01, false));
            (w[..copies].iter().sum::<f64>(), w[copies])
        };
        let (a, b) = one(1);
        assert!((a - 0.5).abs() < 0.01 && (b - 0.5).abs() < 0.01, "{a} {b}");
        let (a3, b3) = one(3);
        assert!(
            (a3 - 0.5).abs() < 0.01 && (b3 - 0.5).abs() < 0.01,
            "{a3} {b3}"
        );
    }

    #[test]
    fn a_law_every_left_out_count_favours_takes_the_weight() {
        let c = vec![
            cand("good", &[0.01, -0.01, 0.01]),
            cand("bad", &[0.2, 0.3, 0.25]),
        ];
        let w = weights(&c, &|_| 1.0, 1.0, (0.01, false));
        assert!(w[0] > 0.95, "{w:?}");
        assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        // A law of zero prior weighs nothing.
        let w = weights(&c, &|k| if k == 0 { 0.0 } else { 1.0 }, 1.0, (0.01, false));
        assert_eq!(w, vec![0.0, 1.0]);
    }
}
