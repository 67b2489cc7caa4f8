//! The family of node laws (MODEL.md 6c b, j, l), each written in time and fitted on
//! `X(n) = T(n) - T_model(n)`, anchored at the fewest measured nodes `n0` (every term 0 there):
//! ```text
//! a/n                X = 0                                     the model's own division
//! a/n + b            X = b (1 - n0/n)                          serial time b >= 0
//! a/n + c g(n)       X = c (g(n) - g(n0) n0/n)                 growth c >= 0, no constant
//! a/n + b + c g(n)   X = b (1 - n0/n) + c (g(n) - g(n0))       b, c >= 0
//! T0 (n0/n)^p        X = T0 ((n0/n)^p - n0/n)                  work that gains 2^p a doubling
//! (T0 - b)(n0/n)^p + b   X = T0 ((n0/n)^p - n0/n) + b (1 - (n0/n)^p)   0 <= b <= T0
//! g in {log2 n, sqrt n, n};  T0 = T_model(n0);  0 < p <= 1 fitted (steps of 0.01)
//! ```
//! The work term of the first three is the model's own perfect division `a/n`; the last two
//! let the work divide as `n^-p` (Extra-P's normal form, Calotoiu et al., SC'13, with the
//! exponent fitted rather than taken from a fixed list), so that a code that keeps gaining
//! less than 2x a doubling is not forced to saturate or turn back.

use super::node_rule::Rule;
use crate::model::node_law::{Basis, Law};
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

/// The growing term of a law.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Growth {
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

/// One law of the family (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Form {
    /// The work divides as `n^-p` with `p` fitted, not as `1/n`.
    power: bool,
    serial: bool,
    growth: Option<Growth>,
}

impl Form {
    /// `a/n`: the model's own division of the work, no law.
    pub(super) const NONE: Form = Form {
        power: false,
        serial: false,
        growth: None,
    };

    /// The family: the model's own perfect division (no law), 7 laws of perfect division with
    /// serial or growing time, and the 2 of `n^-p` with `power`.
    pub(super) fn family(power: bool) -> Vec<Form> {
        let mut v = vec![Form {
            serial: true,
            ..Form::NONE
        }];
        for serial in [false, true] {
            for g in Growth::ALL {
                v.push(Form {
                    serial,
                    growth: Some(g),
                    ..Form::NONE
                });
            }
        }
        v.push(Form::NONE);
        if power {
            for serial in [false, true] {
                v.push(Form {
                    power: true,
                    serial,
                    growth: None,
                });
            }
        }
        v
    }

    /// Parameters fitted (the exponent of `n^-p` counts as one).
    pub(super) fn params(self) -> usize {
        usize::from(self.serial) + usize::from(self.growth.is_some()) + usize::from(self.power)
    }

    /// Whether the law has a growing term.
    pub(super) fn grows(self) -> bool {
        self.growth.is_some()
    }

    /// The form in time, as printed.
    pub(super) fn name(self) -> String {
        match (self.power, self.serial, self.growth) {
            (true, false, _) => "T0 (n0/n)^p".into(),
            (true, true, _) => "(T0 - b) (n0/n)^p + b".into(),
            (false, true, None) => "a/n + b".into(),
            (false, false, Some(g)) => format!("a/n + c {}", g.name()),
            (false, true, Some(g)) => format!("a/n + b + c {}", g.name()),
            (false, false, None) => "a/n".into(),
        }
    }

    /// Fits the form on `pts` (module docs); `None` where no feasible fit exists or the law
    /// leaves no time at a measured count.
    pub(super) fn fit(self, n0: u32, pts: &[LawPoint], rule: &Rule) -> Option<Law> {
        let law = if self.power {
            self.fit_power(n0, pts)?
        } else {
            self.fit_linear(n0, pts, rule)?
        };
        // A law that predicts no time left at a measured count is no law.
        pts.iter()
            .all(|q| q.model + law.at(f64::from(q.nodes)) > 0.0)
            .then_some(law)
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

    /// The bounded weighted least squares of `X` on the form's columns (residuals relative to
    /// the measured time; the growth `c >= 0`, the serial time `b >= 0` where the rule holds
    /// it): every set of parameters held at 0 is tried, the feasible fit of least error kept.
    fn fit_linear(self, n0: u32, pts: &[LawPoint], rule: &Rule) -> Option<Law> {
        let n0f = f64::from(n0);
        let p = self.params();
        if p == 0 {
            return Some(Law::anchored(n0, &[]));
        }
        let cols: Vec<Vec<f64>> = pts
            .iter()
            .map(|q| self.columns(f64::from(q.nodes), n0f))
            .collect();
        let y: Vec<f64> = pts.iter().map(|q| q.measured - q.model).collect();
        let w: Vec<f64> = pts.iter().map(|q| 1.0 / q.measured).collect();
        let may_be_negative = |k: usize| self.serial && k == 0 && !rule.serial_nonneg;
        let params = bounded_lsq((&cols, &y, &w), may_be_negative)?;
        Some(self.law(n0, &params))
    }

    /// The `n^-p` laws: for each `p` in steps of 0.01 up to 1, the serial time (if any) by
    /// least squares within `0 <= b <= T0`; the `p` of least error kept. `T0` is the model's
    /// time at the anchor (its terms divide as `1/n`: each point's `T_model n / n0`).
    fn fit_power(self, n0: u32, pts: &[LawPoint]) -> Option<Law> {
        let n0f = f64::from(n0);
        let t0 = pts
            .iter()
            .map(|q| q.model * f64::from(q.nodes) / n0f)
            .sum::<f64>()
            / pts.len().max(1) as f64;
        if !(t0.is_finite() && t0 > 0.0) {
            return None;
        }
        let mut best: Option<(f64, f64, f64)> = None;
        for k in 1..=100 {
            let p = f64::from(k) / 100.0;
            let (mut sxy, mut sxx) = (0.0, 0.0);
            let parts: Vec<(f64, f64, f64)> = pts
                .iter()
                .map(|q| {
                    let s = (n0f / f64::from(q.nodes)).powf(p);
                    let base = t0 * (s - n0f / f64::from(q.nodes));
                    let (col, w) = (1.0 - s, 1.0 / q.measured);
                    let y = q.measured - q.model - base;
                    sxy += w * w * col * y;
                    sxx += w * w * col * col;
                    (col, y, w)
                })
                .collect();
            let b = if self.serial && sxx > 0.0 {
                (sxy / sxx).clamp(0.0, t0)
            } else {
                0.0
            };
            let sse: f64 = parts
                .iter()
                .map(|(c, y, w)| ((y - b * c) * w).powi(2))
                .sum();
            if best.is_none_or(|x| sse < x.0 * (1.0 - 1e-12)) {
                best = Some((sse, p, b));
            }
        }
        let (_, p, b) = best?;
        let terms = [
            (Basis { i: -p, j: 0 }, (t0 - b) * n0f.powf(p)),
            (Basis { i: -1.0, j: 0 }, -t0 * n0f),
        ];
        // At p = 1 the two terms are one basis: their sum.
        let one = Law::anchored(n0, &terms[..1]);
        let two = Law::anchored(n0, &terms[1..]);
        Law::weighted_sum(n0, &[(1.0, one), (1.0, two)])
    }
}

/// Weighted least squares `y ~ cols` (`sum (w (y - fit))^2`) with every parameter `>= 0` but
/// those `may_be_negative` allows: every set of parameters held at 0 is tried, the feasible fit
/// of least error kept (`None` where none is feasible).
pub(super) fn bounded_lsq(
    (cols, y, w): (&[Vec<f64>], &[f64], &[f64]),
    may_be_negative: impl Fn(usize) -> bool,
) -> Option<Vec<f64>> {
    let p = cols.first().map_or(0, Vec::len);
    let mut best: Option<(f64, Vec<f64>)> = None;
    for free_mask in (0u32..(1 << p)).rev() {
        let free: Vec<usize> = (0..p).filter(|k| free_mask & (1 << k) != 0).collect();
        let mut params = vec![0.0; p];
        if !free.is_empty() {
            let rows: Vec<Vec<f64>> = cols
                .iter()
                .map(|r| free.iter().map(|&k| r[k]).collect())
                .collect();
            let Some(f) = lsq::fit(&rows, y, w) else {
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
            .zip(y)
            .zip(w)
            .map(|((r, yi), wi)| {
                let fit: f64 = r.iter().zip(&params).map(|(a, b)| a * b).sum();
                ((fit - yi) * wi).powi(2)
            })
            .sum();
        if best.as_ref().is_none_or(|b| sse < b.0 * (1.0 - 1e-12)) {
            best = Some((sse, params));
        }
    }
    best.map(|b| b.1)
}

/// The mean signed relative error of `law` on `pts` (predicted / measured - 1).
pub(super) fn mean_signed(law: &Law, pts: &[LawPoint]) -> f64 {
    let e: f64 = pts
        .iter()
        .map(|p| (p.model + law.at(f64::from(p.nodes))) / p.measured - 1.0)
        .sum();
    e / pts.len().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(t: impl Fn(f64) -> f64, nodes: &[u32]) -> Vec<LawPoint> {
        let n0 = f64::from(nodes[0]);
        nodes
            .iter()
            .map(|&n| LawPoint {
                nodes: n,
                measured: t(f64::from(n)),
                model: t(n0) * n0 / f64::from(n),
            })
            .collect()
    }

    #[test]
    fn a_code_that_gains_less_than_twice_a_doubling_is_a_power_law() {
        // 1.6x a doubling from 16 nodes: p = log2(1.6).
        let p = 1.6f64.log2();
        let t = |n: f64| 419.0 * (16.0 / n).powf(p);
        let f = Form {
            power: true,
            serial: false,
            growth: None,
        };
        let law = f.fit(16, &pts(t, &[16, 32, 64]), &Rule::default()).unwrap();
        let at256 = 419.0 * 16.0 / 256.0 + law.at(256.0);
        assert!(
            (at256 / t(256.0) - 1.0).abs() < 0.01,
            "{at256} {}",
            t(256.0)
        );
        assert_eq!(law.at(16.0), 0.0);
    }

    #[test]
    fn with_a_serial_share_the_power_law_finds_both() {
        let t = |n: f64| 900.0 * (1.0 / n).powf(0.8) + 100.0;
        let f = Form {
            power: true,
            serial: true,
            growth: None,
        };
        let law = f.fit(1, &pts(t, &[1, 2, 4, 8]), &Rule::default()).unwrap();
        let at64 = 1000.0 / 64.0 + law.at(64.0);
        assert!((at64 / t(64.0) - 1.0).abs() < 0.02, "{at64} {}", t(64.0));
    }

    #[test]
    fn the_family_holds_seven_laws_and_two_of_n_to_the_minus_p() {
        assert_eq!(Form::family(false).len(), 8);
        let all = Form::family(true);
        assert_eq!(all.len(), 10);
        assert_eq!(all.iter().filter(|f| f.grows()).count(), 6);
        assert_eq!(all.iter().filter(|f| f.params() == 1).count(), 5);
    }
}
