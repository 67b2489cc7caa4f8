//! Power per active core: at each frequency, a least-squares line `P = P_0(f) + c P_core(f)`
//! through measured node power at `c` active cores. `P_0(f)` is the node's power with no core
//! busy at that frequency (the model's `P_idle`), `P_core(f)` the model's `P_act(f)`.

/// The fit at one frequency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineFit {
    /// Intercept: node power with no active core, W.
    pub intercept: f64,
    /// Slope: power per active core, W.
    pub slope: f64,
    /// Root-mean-square residual, W.
    pub rms: f64,
    /// Largest absolute residual, W.
    pub max_abs: f64,
    /// Samples used.
    pub samples: usize,
}

/// Least-squares line through `(x, y)` samples; `None` with fewer than two distinct `x`.
pub fn fit_line(samples: &[(f64, f64)]) -> Option<LineFit> {
    let n = samples.len() as f64;
    let mx = samples.iter().map(|s| s.0).sum::<f64>() / n;
    let my = samples.iter().map(|s| s.1).sum::<f64>() / n;
    let sxx: f64 = samples.iter().map(|s| (s.0 - mx).powi(2)).sum();
    if samples.len() < 2 || sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = samples.iter().map(|s| (s.0 - mx) * (s.1 - my)).sum();
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let res: Vec<f64> = samples
        .iter()
        .map(|s| s.1 - (intercept + slope * s.0))
        .collect();
    Some(LineFit {
        intercept,
        slope,
        rms: (res.iter().map(|r| r * r).sum::<f64>() / n).sqrt(),
        max_abs: res.iter().fold(0.0, |m, r| f64::max(m, r.abs())),
        samples: samples.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_an_exact_line_and_reports_residuals() {
        let f = fit_line(&[(1.0, 12.0), (2.0, 14.0), (3.0, 16.0)]).unwrap();
        assert!((f.intercept - 10.0).abs() < 1e-12 && (f.slope - 2.0).abs() < 1e-12);
        assert!(f.rms < 1e-12);
        let g = fit_line(&[(0.0, 0.0), (1.0, 2.0), (2.0, 2.0)]).unwrap();
        assert!(g.max_abs > 0.1);
        assert!(fit_line(&[(1.0, 1.0), (1.0, 2.0)]).is_none());
    }
}
