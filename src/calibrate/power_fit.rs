//! Node power per frequency from measured time and energy alone (`jouleplan fit`,
//! `jouleplan calibrate power`). The model's single-node energy with every core busy
//! (`U_s = 1`, `P_act = P_stall`: time and energy cannot separate them) is
//! ```text
//! E = T (P_idle(f) + c P_core(f)),   P_idle(f) = i0 + i1 x^g,   P_core(f) = a0 + a1 x^g
//! ```
//! with `x = f / 1 GHz`. The exponent `g` (bounded to [`GAMMA_RANGE`]) is found on a grid
//! with the other four parameters by weighted linear least squares at each grid value (the
//! bounded start), then all five are refined together by Gauss-Newton ([`super::nonlinear`]).
//! With two frequencies `g` is not identifiable and is fixed to 1 (linear laws).

use super::lsq;
use super::nonlinear::{self, FitError, Fitted, Residuals};
use nalgebra::{DMatrix, DVector};

/// Admissible exponents of the frequency laws.
pub const GAMMA_RANGE: (f64, f64) = (0.5, 3.0);

/// One measured configuration: cores, GHz, wall time s, node energy J.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EnergySample {
    /// Busy cores.
    pub cores: f64,
    /// Frequency, GHz.
    pub ghz: f64,
    /// Wall time, s.
    pub time: f64,
    /// Node energy, J.
    pub energy: f64,
}

/// The fitted laws.
#[derive(Debug, Clone, PartialEq)]
pub struct PowerLaws {
    /// `[i0, i1, a0, a1, g]`.
    pub params: [f64; 5],
    /// Standard errors, aligned with `params` (`g`'s 0 when it was fixed).
    pub std_err: [f64; 5],
    /// Relative energy residuals (model / measured - 1) at each sample.
    pub residuals: Vec<f64>,
    /// `Gauss-Newton`, `grid + linear least squares`, or `linear (g = 1 fixed: two frequencies)`.
    pub method: &'static str,
}

impl PowerLaws {
    /// `P_idle(f)`, W.
    pub fn idle(&self, ghz: f64) -> f64 {
        self.params[0] + self.params[1] * ghz.powf(self.params[4])
    }
    /// `P_core(f)` per busy core, W.
    pub fn core(&self, ghz: f64) -> f64 {
        self.params[2] + self.params[3] * ghz.powf(self.params[4])
    }
    /// Largest |relative residual|.
    pub fn max_residual(&self) -> f64 {
        self.residuals.iter().fold(0.0, |m, r| f64::max(m, r.abs()))
    }
}

/// The energy model's residuals, relative to the measured energy.
struct EnergyModel<'a> {
    samples: &'a [EnergySample],
    /// Frequencies (GHz) at which both powers must stay positive.
    check_at: &'a [f64],
    /// `Some(g)`: the exponent is fixed and not a parameter.
    fixed_gamma: Option<f64>,
}

impl EnergyModel<'_> {
    fn full(&self, p: &DVector<f64>) -> [f64; 5] {
        [
            p[0],
            p[1],
            p[2],
            p[3],
            self.fixed_gamma.unwrap_or_else(|| p[4]),
        ]
    }
}

impl Residuals for EnergyModel<'_> {
    fn names(&self) -> Vec<String> {
        let mut n: Vec<String> = [
            "P_idle base i0",
            "P_idle slope i1",
            "P_core base a0",
            "P_core slope a1",
        ]
        .map(String::from)
        .to_vec();
        if self.fixed_gamma.is_none() {
            n.push("frequency exponent g".into());
        }
        n
    }
    fn residuals(&self, p: &DVector<f64>) -> DVector<f64> {
        let q = self.full(p);
        DVector::from_iterator(
            self.samples.len(),
            self.samples.iter().map(|s| {
                let xg = s.ghz.powf(q[4]);
                s.time * (q[0] + q[1] * xg + s.cores * (q[2] + q[3] * xg)) / s.energy - 1.0
            }),
        )
    }
    fn jacobian(&self, p: &DVector<f64>) -> DMatrix<f64> {
        let q = self.full(p);
        let cols = if self.fixed_gamma.is_some() { 4 } else { 5 };
        DMatrix::from_fn(self.samples.len(), cols, |i, j| {
            let s = &self.samples[i];
            let xg = s.ghz.powf(q[4]);
            let k = s.time / s.energy;
            match j {
                0 => k,
                1 => k * xg,
                2 => k * s.cores,
                3 => k * s.cores * xg,
                _ => k * (q[1] + s.cores * q[3]) * xg * s.ghz.ln(),
            }
        })
    }
    fn admissible(&self, p: &DVector<f64>) -> bool {
        let q = self.full(p);
        (GAMMA_RANGE.0..=GAMMA_RANGE.1).contains(&q[4])
            && self.check_at.iter().all(|x| {
                let xg = x.powf(q[4]);
                q[0] + q[1] * xg > 0.0 && q[2] + q[3] * xg > 0.0
            })
    }
}

/// The four linear parameters at a fixed exponent, by weighted linear least squares.
fn linear_at(samples: &[EnergySample], g: f64) -> Option<(lsq::LinearFit, f64)> {
    let rows: Vec<Vec<f64>> = samples
        .iter()
        .map(|s| {
            let xg = s.ghz.powf(g);
            vec![s.time, s.time * xg, s.time * s.cores, s.time * s.cores * xg]
        })
        .collect();
    let y: Vec<f64> = samples.iter().map(|s| s.energy).collect();
    let w: Vec<f64> = samples.iter().map(|s| 1.0 / s.energy).collect();
    let f = lsq::fit(&rows, &y, &w)?;
    let rss = f
        .residuals
        .iter()
        .zip(&y)
        .map(|(r, e)| (r / e).powi(2))
        .sum();
    Some((f, rss))
}

/// Fits the laws to `samples`; `check_at` are the frequencies (GHz) the result will be used at
/// (both powers must stay positive there).
pub fn fit(samples: &[EnergySample], check_at: &[f64]) -> Result<PowerLaws, FitError> {
    let mut freqs: Vec<f64> = samples.iter().map(|s| s.ghz).collect();
    freqs.sort_by(f64::total_cmp);
    freqs.dedup();
    let fixed_gamma = (freqs.len() < 3).then_some(1.0);
    let model = EnergyModel {
        samples,
        check_at,
        fixed_gamma,
    };
    let grid: Vec<f64> = match fixed_gamma {
        Some(g) => vec![g],
        None => (0..=50)
            .map(|i| GAMMA_RANGE.0 + (GAMMA_RANGE.1 - GAMMA_RANGE.0) * f64::from(i) / 50.0)
            .collect(),
    };
    let best = grid
        .iter()
        .filter_map(|g| linear_at(samples, *g).map(|(f, rss)| (f, rss, *g)))
        .filter(|(f, _, g)| {
            let mut p = f.params.clone();
            p.push(*g);
            model.admissible(&DVector::from_vec(p))
        })
        .min_by(|a, b| a.1.total_cmp(&b.1));
    let (lin, _, g) = match best {
        Some(b) => b,
        None => {
            // Let the non-linear core say what cannot be identified (or how many are needed).
            let mut probe = vec![100.0, 1.0, 1.0, 1.0];
            if fixed_gamma.is_none() {
                probe.push(1.0);
            }
            nonlinear::fit(&model, DVector::from_vec(probe), "probe")?;
            return Err(FitError::NotIdentifiable(vec![
                "positive powers at every machine frequency (the best fit gives a negative \
                 P_idle or P_core somewhere)"
                    .into(),
            ]));
        }
    };
    let mut start = lin.params.clone();
    if fixed_gamma.is_none() {
        start.push(g);
    }
    let method = if fixed_gamma.is_some() {
        "linear least squares (g = 1 fixed: fewer than 3 frequencies)"
    } else {
        "grid over g + linear least squares"
    };
    let Fitted {
        params,
        std_err,
        residuals,
        method,
        ..
    } = nonlinear::fit(&model, DVector::from_vec(start), method)?;
    let q = model.full(&params);
    let mut se = [0.0; 5];
    se[..std_err.len()].copy_from_slice(&std_err);
    Ok(PowerLaws {
        params: q,
        std_err: se,
        residuals: residuals.iter().copied().collect(),
        method,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_known_laws_and_refuses_one_core_count() {
        let truth = |c: f64, x: f64| 90.0 + 20.0 * x.powf(1.5) + c * (0.4 + 0.3 * x.powf(1.5));
        let mut s = Vec::new();
        for c in [1.0, 8.0, 29.0, 57.0] {
            for x in [0.6, 0.8, 1.1] {
                let t = 100.0 / (c * x);
                s.push(EnergySample {
                    cores: c,
                    ghz: x,
                    time: t,
                    energy: t * truth(c, x),
                });
            }
        }
        let f = fit(&s, &[0.6, 1.1]).unwrap();
        assert!((f.params[4] - 1.5).abs() < 1e-6, "{f:?}");
        assert!((f.idle(0.7) - (90.0 + 20.0 * 0.7f64.powf(1.5))).abs() < 1e-6);
        assert!(f.max_residual() < 1e-9);
        let one: Vec<EnergySample> = s.iter().filter(|x| x.cores == 8.0).copied().collect();
        let e = fit(&one, &[0.6]).unwrap_err();
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
        let one: Vec<EnergySample> = [0.6, 0.7, 0.8, 0.9, 1.0, 1.1]
            .map(|x| EnergySample {
                cores: 8.0,
                ghz: x,
                time: 10.0,
                energy: 10.0 * truth(8.0, x),
            })
            .to_vec();
        let e = fit(&one, &[0.6]).unwrap_err();
        assert!(matches!(e, FitError::NotIdentifiable(_)), "{e}");
        assert!(
            e.to_string().contains("P_idle base i0") && e.to_string().contains("P_core base a0"),
            "{e}"
        );
    }
}
