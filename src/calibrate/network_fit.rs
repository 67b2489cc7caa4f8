//! The network from a ping-pong sweep (`jouleplan calibrate network`): one-way time
//! `T(m) = L + m / B` by weighted least squares (relative residuals, so small messages count as
//! much as large ones) on nalgebra, with 95% confidence intervals, and the saturated throughput
//! as NetPIPE reports it (the largest `m / T(m)` measured).

use crate::numeric::lsq;

pub use crate::artefact::pingpong::SizeSample;

/// The fitted network.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkFit {
    /// Latency `L`, s.
    pub latency_s: f64,
    /// Half-width of its 95% confidence interval, s.
    pub latency_ci_s: f64,
    /// Throughput `B`, bytes/s.
    pub bandwidth: f64,
    /// Half-width of its 95% confidence interval, bytes/s (delta method on `1/B`).
    pub bandwidth_ci: f64,
    /// The largest measured `m / T(m)`, bytes/s (NetPIPE's saturated throughput), and at
    /// which size.
    pub saturated: (f64, u64),
    /// `(bytes, median one-way s, fitted / measured - 1)` per size.
    pub residuals: Vec<(u64, f64, f64)>,
}

/// Why there is no fit.
#[derive(Debug, Clone, PartialEq)]
pub enum NetworkFitError {
    /// Fewer than three sizes.
    TooFewSizes(usize),
    /// The sizes do not determine both parameters, or the slope is not positive.
    NotIdentifiable(String),
}

impl std::fmt::Display for NetworkFitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NetworkFitError::TooFewSizes(n) => write!(
                f,
                "{n} message sizes measured: latency and throughput need at least 3 (with a \
                 residual left to judge the fit)"
            ),
            NetworkFitError::NotIdentifiable(why) => write!(f, "{why}"),
        }
    }
}

/// Fits `T(m) = L + m/B` to the medians of `samples`.
pub fn fit(samples: &[SizeSample]) -> Result<NetworkFit, NetworkFitError> {
    let pts: Vec<(f64, f64, u64)> = samples
        .iter()
        .map(|s| (s.bytes as f64, s.median(), s.bytes))
        .filter(|p| p.1.is_finite() && p.1 > 0.0)
        .collect();
    if pts.len() < 3 {
        return Err(NetworkFitError::TooFewSizes(pts.len()));
    }
    let rows: Vec<Vec<f64>> = pts.iter().map(|p| vec![1.0, p.0]).collect();
    let y: Vec<f64> = pts.iter().map(|p| p.1).collect();
    let w: Vec<f64> = y.iter().map(|t| 1.0 / t).collect();
    let f = lsq::fit(&rows, &y, &w).ok_or_else(|| {
        NetworkFitError::NotIdentifiable(
            "the message sizes cannot separate latency from throughput (measure sizes from 1 \
             byte to at least 16 MiB)"
                .into(),
        )
    })?;
    let (l, inv_b) = (f.params[0], f.params[1]);
    let (m_max, t_max) = pts
        .iter()
        .fold((0.0, 0.0), |a, p| if p.0 > a.0 { (p.0, p.1) } else { a });
    if inv_b <= 0.0 || inv_b * m_max < 1e-3 * t_max {
        return Err(NetworkFitError::NotIdentifiable(format!(
            "the time does not grow with the message size (slope {inv_b:.3e} s/byte): the \
             largest message is too small or the timer too coarse"
        )));
    }
    // 95%: Student's t for the degrees of freedom left (1.96 beyond 30).
    let z = t95(pts.len() - 2);
    let b = 1.0 / inv_b;
    let saturated = pts
        .iter()
        .map(|p| (p.0 / p.1, p.2))
        .fold((0.0, 0), |a, x| if x.0 > a.0 { x } else { a });
    Ok(NetworkFit {
        latency_s: l,
        latency_ci_s: z * f.std_err[0],
        bandwidth: b,
        bandwidth_ci: z * f.std_err[1] * b * b,
        saturated,
        residuals: pts
            .iter()
            .map(|p| (p.2, p.1, (l + p.0 * inv_b) / p.1 - 1.0))
            .collect(),
    })
}

/// Two-sided 95% quantile of Student's t with `dof` degrees of freedom.
fn t95(dof: usize) -> f64 {
    const T: [f64; 10] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    ];
    match dof {
        0 => f64::NAN,
        1..=10 => T[dof - 1],
        11..=20 => 2.086,
        21..=30 => 2.042,
        _ => 1.96,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_latency_and_throughput_and_refuses_flat_times() {
        let s: Vec<SizeSample> = (0..25)
            .map(|k| {
                let m = 1u64 << k;
                SizeSample {
                    bytes: m,
                    one_way_s: vec![2e-6 + m as f64 / 5e9; 3],
                }
            })
            .collect();
        let f = fit(&s).unwrap();
        assert!((f.latency_s - 2e-6).abs() < 1e-12, "{f:?}");
        assert!((f.bandwidth / 5e9 - 1.0).abs() < 1e-9);
        assert_eq!(f.saturated.1, 1 << 24);
        let flat: Vec<SizeSample> = (0..5)
            .map(|k| SizeSample {
                bytes: 1 << k,
                one_way_s: vec![1e-6],
            })
            .collect();
        assert!(matches!(
            fit(&flat),
            Err(NetworkFitError::NotIdentifiable(_))
        ));
        assert_eq!(fit(&s[..2]), Err(NetworkFitError::TooFewSizes(2)));
    }
}
