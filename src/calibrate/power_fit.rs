//! Node power per frequency and core state, fitted to measured node power (`jouleplan fit`:
//! one program's runs; `jouleplan calibrate power`: idle, compute-bound and memory-bound
//! micro-benchmarks). Each sample's power is a sum of laws, each law `p0 + p1 x^g` with
//! `x = f / 1 GHz` (or a constant), applied per node or per busy core of the kinds of run it
//! describes:
//! ```text
//! program run:  P = P_idle(f) + c P_core(f)                  (fit: P_act = P_stall = P_core)
//! idle:         P = P_idle(f)
//! compute:      P = P_idle(f) + c P_act(f)
//! memory:       P = P_idle(f) + c P_stall(f) + P_mem
//! ```
//! The exponent `g` (bounded to [`GAMMA_RANGE`], shared by the laws) is found on a grid with
//! the other parameters by weighted linear least squares at each grid value (the bounded
//! start); then all are refined together by Gauss-Newton ([`super::nonlinear`]), residuals
//! relative to the measured power. With two frequencies `g = 1`; with one, every law is a
//! constant.

use super::nonlinear::{self, FitError, Fitted, Residuals};
use crate::numeric::lsq;
use nalgebra::{DMatrix, DVector};

/// Admissible exponents of the frequency laws.
pub const GAMMA_RANGE: (f64, f64) = (0.5, 3.0);

/// What ran during a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A program's own run (`jouleplan fit`).
    Program,
    /// Nothing busy.
    Idle,
    /// A compute-bound kernel on every used core.
    Compute,
    /// A memory-bound kernel on every used core.
    Memory,
}

/// One measured run: what ran, busy cores, GHz, mean node power in W.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PowerSample {
    /// What ran.
    pub kind: Kind,
    /// Busy cores.
    pub cores: f64,
    /// Frequency, GHz.
    pub ghz: f64,
    /// Mean node power, W (energy / wall time).
    pub watts: f64,
}

/// A power law of the model: its name and the runs it draws power in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Law {
    /// `P_idle`, `P_core`, `P_act`, `P_stall`, `P_mem`.
    pub name: &'static str,
    /// Kinds of run it draws in.
    pub kinds: &'static [Kind],
    /// Per busy core (`true`) or per node.
    pub per_core: bool,
    /// Whether it changes with the frequency (`p0 + p1 x^g`) or is a constant.
    pub by_frequency: bool,
}

/// `jouleplan fit`'s laws.
pub const PROGRAM_LAWS: &[Law] = &[
    Law {
        name: "P_idle",
        kinds: &[Kind::Program],
        per_core: false,
        by_frequency: true,
    },
    Law {
        name: "P_core",
        kinds: &[Kind::Program],
        per_core: true,
        by_frequency: true,
    },
];

/// One fitted parameter: the law, and whether it is the slope `p1` or the base `p0`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Term {
    law: usize,
    slope: bool,
}

/// The fitted laws.
#[derive(Debug, Clone, PartialEq)]
pub struct PowerLaws {
    /// The laws fitted.
    pub laws: Vec<Law>,
    /// `(p0, p1)` of each law, W (`p1 = 0` for constants).
    pub coef: Vec<(f64, f64)>,
    /// Standard errors of `(p0, p1)` (0 where not fitted).
    pub coef_err: Vec<(f64, f64)>,
    /// The exponent `g` and its standard error (0 when fixed).
    pub gamma: (f64, f64),
    /// Relative power residuals (model / measured - 1) at each sample.
    pub residuals: Vec<f64>,
    /// `Gauss-Newton`, or the grid start when Gauss-Newton did not improve it.
    pub method: &'static str,
}

impl PowerLaws {
    /// The law named `name` at `ghz`, W; `None` when it was not fitted.
    pub fn at(&self, name: &str, ghz: f64) -> Option<f64> {
        let i = self.laws.iter().position(|l| l.name == name)?;
        let (p0, p1) = self.coef[i];
        Some(p0 + p1 * ghz.powf(self.gamma.0))
    }
    /// Largest |relative residual|.
    pub fn max_residual(&self) -> f64 {
        self.residuals.iter().fold(0.0, |m, r| f64::max(m, r.abs()))
    }

    /// The machine file's `fit_residual_rel`: the largest residual rounded up to 4 decimals,
    /// so the model stays within it after the written powers are rounded.
    pub fn residual_bound(&self) -> f64 {
        round_up(self.max_residual())
    }
}

/// A residual rounded up to 4 decimals, as a machine file keeps it: the model stays within it
/// after the written powers are rounded.
pub fn round_up(residual: f64) -> f64 {
    (residual * 1e4).ceil() / 1e4
}

/// The power model's residuals, relative to the measured power.
struct PowerModel<'a> {
    samples: &'a [PowerSample],
    laws: &'a [Law],
    terms: Vec<Term>,
    /// Frequencies (GHz) at which every law must stay positive.
    check_at: &'a [f64],
    /// `Some(g)`: the exponent is fixed and not a parameter.
    fixed_gamma: Option<f64>,
}

impl PowerModel<'_> {
    fn gamma(&self, p: &DVector<f64>) -> f64 {
        self.fixed_gamma.unwrap_or_else(|| p[self.terms.len()])
    }
    /// The factor of term `t` at sample `s`: 0 where its law draws nothing.
    fn factor(&self, t: Term, s: &PowerSample, g: f64) -> f64 {
        let law = &self.laws[t.law];
        if !law.kinds.contains(&s.kind) {
            return 0.0;
        }
        let per = if law.per_core { s.cores } else { 1.0 };
        per * if t.slope { s.ghz.powf(g) } else { 1.0 }
    }
    fn coef(&self, p: &DVector<f64>) -> Vec<(f64, f64)> {
        let mut c = vec![(0.0, 0.0); self.laws.len()];
        for (i, t) in self.terms.iter().enumerate() {
            if t.slope {
                c[t.law].1 = p[i];
            } else {
                c[t.law].0 = p[i];
            }
        }
        c
    }
}

impl Residuals for PowerModel<'_> {
    fn names(&self) -> Vec<String> {
        let mut n: Vec<String> = self
            .terms
            .iter()
            .map(|t| {
                format!(
                    "{} {}",
                    self.laws[t.law].name,
                    if t.slope { "slope" } else { "base" }
                )
            })
            .collect();
        if self.fixed_gamma.is_none() {
            n.push("frequency exponent g".into());
        }
        n
    }
    fn residuals(&self, p: &DVector<f64>) -> DVector<f64> {
        let g = self.gamma(p);
        DVector::from_iterator(
            self.samples.len(),
            self.samples.iter().map(|s| {
                let model: f64 = self
                    .terms
                    .iter()
                    .enumerate()
                    .map(|(i, t)| p[i] * self.factor(*t, s, g))
                    .sum();
                model / s.watts - 1.0
            }),
        )
    }
    fn jacobian(&self, p: &DVector<f64>) -> DMatrix<f64> {
        let g = self.gamma(p);
        let k = self.terms.len();
        let cols = if self.fixed_gamma.is_some() { k } else { k + 1 };
        DMatrix::from_fn(self.samples.len(), cols, |r, j| {
            let s = &self.samples[r];
            if j < k {
                return self.factor(self.terms[j], s, g) / s.watts;
            }
            let d: f64 = self
                .terms
                .iter()
                .enumerate()
                .filter(|(_, t)| t.slope)
                .map(|(i, t)| p[i] * self.factor(*t, s, g))
                .sum();
            d * s.ghz.ln() / s.watts
        })
    }
    fn admissible(&self, p: &DVector<f64>) -> bool {
        let g = self.gamma(p);
        let c = self.coef(p);
        (self.fixed_gamma.is_some() || (GAMMA_RANGE.0..=GAMMA_RANGE.1).contains(&g))
            && self
                .check_at
                .iter()
                .all(|x| c.iter().all(|(p0, p1)| p0 + p1 * x.powf(g) >= 0.0))
    }
}

/// The linear parameters at a fixed exponent, by weighted linear least squares.
fn linear_at(m: &PowerModel<'_>, g: f64) -> Option<(Vec<f64>, f64)> {
    let rows: Vec<Vec<f64>> = m
        .samples
        .iter()
        .map(|s| m.terms.iter().map(|t| m.factor(*t, s, g)).collect())
        .collect();
    let y: Vec<f64> = m.samples.iter().map(|s| s.watts).collect();
    let w: Vec<f64> = y.iter().map(|p| 1.0 / p).collect();
    let f = lsq::fit(&rows, &y, &w)?;
    let rss = f
        .residuals
        .iter()
        .zip(&y)
        .map(|(r, p)| (r / p).powi(2))
        .sum();
    Some((f.params, rss))
}

/// The fitted terms: each law's constant, and its slope in the frequency where it depends on
/// it and two or more frequencies were measured.
fn terms_of(laws: &[Law], n_freqs: usize) -> Vec<Term> {
    laws.iter()
        .enumerate()
        .flat_map(|(i, l)| {
            let slope = l.by_frequency && n_freqs >= 2;
            std::iter::once(Term {
                law: i,
                slope: false,
            })
            .chain(slope.then_some(Term {
                law: i,
                slope: true,
            }))
        })
        .collect()
}

/// Each law's `(constant, slope)` standard errors from the parameters' ones.
fn coef_errors(model: &PowerModel<'_>, std_err: &[f64]) -> Vec<(f64, f64)> {
    let mut coef_err = vec![(0.0, 0.0); model.laws.len()];
    for (i, t) in model.terms.iter().enumerate() {
        if t.slope {
            coef_err[t.law].1 = std_err[i];
        } else {
            coef_err[t.law].0 = std_err[i];
        }
    }
    coef_err
}

/// Fits `laws` to `samples`; `check_at` are the frequencies (GHz) the result will be used at
/// (every law must stay non-negative there).
pub fn fit(samples: &[PowerSample], laws: &[Law], check_at: &[f64]) -> Result<PowerLaws, FitError> {
    let mut freqs: Vec<f64> = samples.iter().map(|s| s.ghz).collect();
    freqs.sort_by(f64::total_cmp);
    freqs.dedup();
    let fixed_gamma = (freqs.len() < 3).then_some(1.0);
    let terms = terms_of(laws, freqs.len());
    let k = terms.len();
    let model = PowerModel {
        samples,
        laws,
        terms,
        check_at,
        fixed_gamma,
    };
    let grid: Vec<f64> = match fixed_gamma {
        Some(g) => vec![g],
        None => (0..=50)
            .map(|i| GAMMA_RANGE.0 + (GAMMA_RANGE.1 - GAMMA_RANGE.0) * f64::from(i) / 50.0)
            .collect(),
    };
    let with_g = |mut p: Vec<f64>, g: f64| {
        if fixed_gamma.is_none() {
            p.push(g);
        }
        DVector::from_vec(p)
    };
    let best = grid
        .iter()
        .filter_map(|g| linear_at(&model, *g).map(|(p, rss)| (with_g(p, *g), rss)))
        .filter(|(p, _)| model.admissible(p))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    let Some((start, _)) = best else {
        // Let the non-linear core say what cannot be identified (or how many are needed).
        nonlinear::fit(&model, with_g(vec![1.0; k], 1.0), "probe")?;
        return Err(FitError::OutOfBounds(
            "positive powers at every machine frequency (the best fit gives a negative power \
             somewhere)"
                .into(),
        ));
    };
    let method = match fixed_gamma {
        Some(_) if freqs.len() < 2 => "linear least squares (one frequency: constant powers)",
        Some(_) => "linear least squares (g = 1 fixed: two frequencies)",
        None => "grid over g + linear least squares",
    };
    let Fitted {
        params,
        std_err,
        residuals,
        method,
        ..
    } = nonlinear::fit(&model, start, method)?;
    let coef_err = coef_errors(&model, &std_err);
    Ok(PowerLaws {
        laws: laws.to_vec(),
        coef: model.coef(&params),
        coef_err,
        gamma: (
            model.gamma(&params),
            if fixed_gamma.is_some() {
                0.0
            } else {
                std_err[k]
            },
        ),
        residuals: residuals.iter().copied().collect(),
        method,
    })
}

/// One line per law with standard errors, and the exponent.
pub fn describe_lines(f: &PowerLaws) -> Vec<String> {
    let mut v: Vec<String> = f
        .laws
        .iter()
        .zip(f.coef.iter().zip(&f.coef_err))
        .map(|(l, ((p0, p1), (e0, e1)))| {
            if *p1 == 0.0 && *e1 == 0.0 {
                format!("{}(f) = {p0:.5} (±{e0:.5}) W", l.name)
            } else {
                format!(
                    "{}(f) = {p0:.5} (±{e0:.5}) + {p1:.5} (±{e1:.5}) x^g W",
                    l.name
                )
            }
        })
        .collect();
    let at_bound = f.gamma.1 > 0.0
        && (f.gamma.0 - GAMMA_RANGE.0)
            .abs()
            .min((f.gamma.0 - GAMMA_RANGE.1).abs())
            < 1e-9;
    v.push(format!(
        "g = {:.3} (±{:.3}){}",
        f.gamma.0,
        f.gamma.1,
        if at_bound {
            format!(
                ", at a bound of [{}, {}]: the best law lies at or beyond it",
                GAMMA_RANGE.0, GAMMA_RANGE.1
            )
        } else {
            String::new()
        }
    ));
    v
}

/// The laws in one line (for `[sources]`).
pub fn describe(f: &PowerLaws) -> String {
    let laws: Vec<String> = f
        .laws
        .iter()
        .zip(&f.coef)
        .map(|(l, (p0, p1))| format!("{} = {p0:.5} + {p1:.5} x^{:.3} W", l.name, f.gamma.0))
        .collect();
    format!("{} (x = f/GHz), {}", laws.join(", "), f.method)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(c: f64, x: f64, w: f64) -> PowerSample {
        PowerSample {
            kind: Kind::Program,
            cores: c,
            ghz: x,
            watts: w,
        }
    }

    #[test]
    fn recovers_known_laws_and_refuses_one_core_count() {
        let truth = |c: f64, x: f64| 90.0 + 20.0 * x.powf(1.5) + c * (0.4 + 0.3 * x.powf(1.5));
        let mut s = Vec::new();
        for c in [1.0, 8.0, 29.0, 57.0] {
            for x in [0.6, 0.8, 1.1] {
                s.push(program(c, x, truth(c, x)));
            }
        }
        let f = fit(&s, PROGRAM_LAWS, &[0.6, 1.1]).unwrap();
        assert!((f.gamma.0 - 1.5).abs() < 1e-6, "{f:?}");
        let idle = f.at("P_idle", 0.7).unwrap();
        assert!((idle - (90.0 + 20.0 * 0.7f64.powf(1.5))).abs() < 1e-6);
        assert!(f.max_residual() < 1e-9);
        let one: Vec<PowerSample> = s.iter().filter(|x| x.cores == 8.0).copied().collect();
        let e = fit(&one, PROGRAM_LAWS, &[0.6]).unwrap_err();
        assert!(
            matches!(
                e,
                FitError::TooFewSamples {
                    samples: 3,
                    params: 5
                }
            ),
            "{e}"
        );
        // One core count at six frequencies: idle and per-core power cannot be told apart.
        let one: Vec<PowerSample> = [0.6, 0.7, 0.8, 0.9, 1.0, 1.1]
            .map(|x| program(8.0, x, truth(8.0, x)))
            .to_vec();
        let e = fit(&one, PROGRAM_LAWS, &[0.6]).unwrap_err();
        assert!(matches!(e, FitError::NotIdentifiable(_)), "{e}");
        assert!(
            e.to_string().contains("P_idle base") && e.to_string().contains("P_core base"),
            "{e}"
        );
    }

    #[test]
    fn separates_active_stall_memory_and_idle_power_from_three_kernels() {
        let laws = [
            Law {
                name: "P_idle",
                kinds: &[Kind::Idle, Kind::Compute, Kind::Memory],
                per_core: false,
                by_frequency: true,
            },
            Law {
                name: "P_act",
                kinds: &[Kind::Compute],
                per_core: true,
                by_frequency: true,
            },
            Law {
                name: "P_stall",
                kinds: &[Kind::Memory],
                per_core: true,
                by_frequency: true,
            },
            Law {
                name: "P_mem",
                kinds: &[Kind::Memory],
                per_core: false,
                by_frequency: false,
            },
        ];
        let (i, a, st, m) = (
            |x: f64| 50.0 + 10.0 * x,
            |x: f64| 2.0 + 3.0 * x,
            |x: f64| 1.0 + 1.0 * x,
            12.0,
        );
        let mut s = Vec::new();
        for x in [1.0, 2.0] {
            s.push(PowerSample {
                kind: Kind::Idle,
                cores: 1.0,
                ghz: x,
                watts: i(x),
            });
            for c in [1.0, 4.0, 8.0] {
                s.push(PowerSample {
                    kind: Kind::Compute,
                    cores: c,
                    ghz: x,
                    watts: i(x) + c * a(x),
                });
                s.push(PowerSample {
                    kind: Kind::Memory,
                    cores: c,
                    ghz: x,
                    watts: i(x) + c * st(x) + m,
                });
            }
        }
        let f = fit(&s, &laws, &[1.0, 2.0]).unwrap();
        assert!((f.at("P_act", 1.5).unwrap() - a(1.5)).abs() < 1e-9, "{f:?}");
        assert!((f.at("P_stall", 1.5).unwrap() - st(1.5)).abs() < 1e-9);
        assert!((f.at("P_mem", 1.5).unwrap() - m).abs() < 1e-9);
        assert!((f.at("P_idle", 2.0).unwrap() - i(2.0)).abs() < 1e-9);
        assert_eq!(f.gamma, (1.0, 0.0));
    }
}
