//! Weighted linear least squares with the figures a fit must report: residuals and the
//! standard error of each parameter (nalgebra's SVD, so rank-deficient designs are detected
//! instead of producing huge numbers).

use nalgebra::{DMatrix, DVector};

/// A fitted linear model `y ~ X beta`.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearFit {
    /// The parameters, in the order of the design's columns.
    pub params: Vec<f64>,
    /// Standard error of each parameter (NaN when there are no degrees of freedom left).
    pub std_err: Vec<f64>,
    /// `y - X beta` at each sample, unweighted.
    pub residuals: Vec<f64>,
}

/// Fits `y ~ X beta` minimising `sum (w_i (y_i - x_i beta))^2`. `rows` are the design's rows.
/// `None` when the design is rank-deficient (a parameter the samples cannot identify) or has
/// more columns than rows.
pub fn fit(rows: &[Vec<f64>], y: &[f64], w: &[f64]) -> Option<LinearFit> {
    let (n, p) = (rows.len(), rows.first().map_or(0, Vec::len));
    if n < p || p == 0 || y.len() != n || w.len() != n {
        return None;
    }
    // nalgebra's SVD may not terminate on non-finite input.
    let finite = |v: &f64| v.is_finite();
    if !(y.iter().all(finite) && w.iter().all(finite) && rows.iter().flatten().all(finite)) {
        return None;
    }
    let x = DMatrix::from_fn(n, p, |i, j| rows[i][j] * w[i]);
    let b = DVector::from_fn(n, |i, _| y[i] * w[i]);
    // The decomposition sees only finite numbers of order one: each column and the right-hand
    // side are divided by their largest magnitude (extreme inputs such as 1e-308 s times 1e7
    // bytes overflow here and are refused, instead of reaching the SVD as inf or NaN).
    let col: Vec<f64> = (0..p).map(|j| x.column(j).amax()).collect();
    // An all-zero right-hand side is fitted as it is (every parameter 0).
    let sb = Some(b.amax()).filter(|&v| v != 0.0).unwrap_or(1.0);
    let usable = |v: f64| v.is_finite() && v > 0.0;
    if !(col.iter().all(|&c| usable(c)) && usable(sb) && x.iter().all(|v| v.is_finite())) {
        return None;
    }
    let xs = DMatrix::from_fn(n, p, |i, j| x[(i, j)] / col[j]);
    let bs = &b / sb;
    let svd = xs.clone().svd(true, true);
    let smax = svd.singular_values.max();
    if !smax.is_finite() || smax <= 0.0 || svd.singular_values.min() <= smax * 1e-10 {
        return None;
    }
    let beta_s = svd.solve(&bs, smax * 1e-12).ok()?;
    let wres = &bs - &xs * &beta_s;
    let dof = n - p;
    let s2 = if dof > 0 {
        wres.norm_squared() / dof as f64
    } else {
        f64::NAN
    };
    let cov = (xs.transpose() * &xs).try_inverse()?;
    let params: Vec<f64> = (0..p).map(|j| beta_s[j] * sb / col[j]).collect();
    if !params.iter().all(|v| v.is_finite()) {
        return None;
    }
    Some(LinearFit {
        std_err: (0..p)
            .map(|j| (s2 * cov[(j, j)]).sqrt() * sb / col[j])
            .collect(),
        residuals: rows
            .iter()
            .zip(y)
            .map(|(r, yi)| yi - r.iter().zip(&params).map(|(a, b)| a * b).sum::<f64>())
            .collect(),
        params,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_exact_parameters_and_refuses_a_rank_deficient_design() {
        let rows: Vec<Vec<f64>> = [1.0, 2.0, 4.0]
            .iter()
            .map(|&c| vec![1.0 / c, 1.0])
            .collect();
        let y: Vec<f64> = [1.0, 2.0, 4.0].iter().map(|&c| 3.0 / c + 0.5).collect();
        let f = fit(&rows, &y, &[1.0; 3]).unwrap();
        assert!((f.params[0] - 3.0).abs() < 1e-12 && (f.params[1] - 0.5).abs() < 1e-12);
        assert!(f.residuals.iter().all(|r| r.abs() < 1e-12));
        let same: Vec<Vec<f64>> = vec![vec![1.0, 1.0], vec![2.0, 2.0], vec![3.0, 3.0]];
        assert!(fit(&same, &y, &[1.0; 3]).is_none());
        assert!(fit(&rows[..1], &y[..1], &[1.0]).is_none());
        assert!(fit(&rows, &y, &[1.0, f64::INFINITY, 1.0]).is_none());
    }

    #[test]
    fn extreme_finite_numbers_end_in_a_fit_or_none_never_a_panic() {
        // The ping-pong times that made nalgebra's SVD panic ("Singular value was NaN").
        let bytes = [1.0, 1024.0, 1.6e7];
        for t in [6.49e147, 1e308, 1.32e-308] {
            let rows: Vec<Vec<f64>> = bytes.iter().map(|&m| vec![1.0, m]).collect();
            let y = [t, 2.0 * t, 3.0 * t];
            let w: Vec<f64> = y.iter().map(|v| 1.0 / v).collect();
            if let Some(f) = fit(&rows, &y, &w) {
                assert!(f.params.iter().all(|v| v.is_finite()));
            }
        }
        // Scaling changes nothing for ordinary numbers.
        let rows: Vec<Vec<f64>> = bytes.iter().map(|&m| vec![1.0, m]).collect();
        let y: Vec<f64> = bytes.iter().map(|m| 2e-6 + m / 1e10).collect();
        let f = fit(&rows, &y, &[1.0; 3]).unwrap();
        assert!((f.params[0] - 2e-6).abs() < 1e-15 && (f.params[1] - 1e-10).abs() < 1e-20);
    }
}
