//! Non-linear least squares, implemented once behind argmin's `Operator` and `Jacobian` traits
//! (Gauss-Newton on nalgebra), with what a fit must report: residuals, the standard error of
//! each parameter, and which parameters the samples cannot identify.

use argmin::core::{Executor, Jacobian, Operator, State};
use argmin::solver::gaussnewton::GaussNewton;
use nalgebra::{DMatrix, DVector};

/// A model whose parameters a least-squares fit can find: weighted residuals and their
/// Jacobian (rows: samples, columns: parameters).
pub trait Residuals {
    /// The parameters' names, in order (for reports and identifiability errors).
    fn names(&self) -> Vec<String>;
    /// Weighted residuals at `p` (model - measured, already divided by the sample's scale).
    fn residuals(&self, p: &DVector<f64>) -> DVector<f64>;
    /// `d residuals / d p` at `p`.
    fn jacobian(&self, p: &DVector<f64>) -> DMatrix<f64>;
    /// Whether `p` is inside the parameters' admissible bounds.
    fn admissible(&self, p: &DVector<f64>) -> bool;
}

/// The argmin problem wrapping any [`Residuals`].
struct Problem<'a, M: Residuals>(&'a M);

impl<M: Residuals> Operator for Problem<'_, M> {
    type Param = DVector<f64>;
    type Output = DVector<f64>;
    fn apply(&self, p: &Self::Param) -> Result<Self::Output, argmin::core::Error> {
        Ok(self.0.residuals(p))
    }
}

impl<M: Residuals> Jacobian for Problem<'_, M> {
    type Param = DVector<f64>;
    type Jacobian = DMatrix<f64>;
    fn jacobian(&self, p: &Self::Param) -> Result<Self::Jacobian, argmin::core::Error> {
        Ok(self.0.jacobian(p))
    }
}

/// A converged fit.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    /// The parameters.
    pub params: DVector<f64>,
    /// Standard error of each parameter from `s^2 (J^T J)^-1` (NaN without degrees of freedom).
    pub std_err: Vec<f64>,
    /// Weighted residuals at the solution.
    pub residuals: DVector<f64>,
    /// Which solver gave the result: `Gauss-Newton` or the caller's bounded start.
    pub method: &'static str,
    /// Gauss-Newton iterations run.
    pub iterations: u64,
}

/// Why a fit has no answer.
#[derive(Debug, Clone, PartialEq)]
pub enum FitError {
    /// Fewer samples than parameters.
    TooFewSamples {
        /// Samples given.
        samples: usize,
        /// Parameters to fit.
        params: usize,
    },
    /// The samples do not determine these parameters (a near-singular `J^T J`), named by the
    /// combination they cannot separate.
    NotIdentifiable(Vec<String>),
    /// The best fit leaves a parameter outside its physical bounds (a negative power): what.
    OutOfBounds(String),
}

impl std::fmt::Display for FitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FitError::TooFewSamples { samples, params } => write!(
                f,
                "{samples} samples for {params} parameters: at least {params} are needed"
            ),
            FitError::NotIdentifiable(names) => {
                write!(f, "these points cannot separate {}", names.join(", "))
            }
            FitError::OutOfBounds(what) => write!(f, "these points cannot separate {what}"),
        }
    }
}

/// Relative singular-value floor below which a direction of `J` counts as unidentifiable.
const RANK_FLOOR: f64 = 1e-8;

/// Names the parameters that carry the weakest direction of `J`, when `J` is rank-deficient.
fn unidentifiable(j: &DMatrix<f64>, names: &[String]) -> Option<Vec<String>> {
    // Scale columns so the check does not depend on the parameters' units.
    let norms: Vec<f64> = j.column_iter().map(|c| c.norm()).collect();
    if let Some(i) = norms.iter().position(|n| *n == 0.0 || !n.is_finite()) {
        return Some(vec![names[i].clone()]);
    }
    let scaled = DMatrix::from_fn(j.nrows(), j.ncols(), |r, c| j[(r, c)] / norms[c]);
    let svd = scaled.svd(false, true);
    let s = &svd.singular_values;
    let (imin, smin) = s.iter().enumerate().fold(
        (0, f64::MAX),
        |a, (i, v)| {
            if *v < a.1 { (i, *v) } else { a }
        },
    );
    if smin > RANK_FLOOR * s.max() {
        return None;
    }
    let v_t = svd.v_t?;
    let dir = v_t.row(imin);
    let big = dir.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    Some(
        dir.iter()
            .zip(names)
            .filter(|(x, _)| x.abs() >= 0.2 * big)
            .map(|(_, n)| n.clone())
            .collect(),
    )
}

/// Standard errors `sqrt(diag(s^2 (J^T J)^-1))`, with `s^2 = RSS / (n - p)`.
fn std_errors(j: &DMatrix<f64>, r: &DVector<f64>) -> Vec<f64> {
    let (n, p) = (j.nrows(), j.ncols());
    let s2 = if n > p {
        r.norm_squared() / (n - p) as f64
    } else {
        f64::NAN
    };
    match (j.transpose() * j).try_inverse() {
        Some(cov) => (0..p).map(|i| (s2 * cov[(i, i)]).abs().sqrt()).collect(),
        None => vec![f64::NAN; p],
    }
}

/// Fits `model` from `start` by Gauss-Newton (argmin). `start` must be admissible (the
/// caller's bounded solution, e.g. a grid over the non-linear parameters): when Gauss-Newton
/// leaves the bounds, fails or ends with a larger cost, `start` is kept and reported as such.
pub fn fit<M: Residuals>(
    model: &M,
    start: DVector<f64>,
    start_method: &'static str,
) -> Result<Fitted, FitError> {
    let names = model.names();
    let r0 = model.residuals(&start);
    if r0.len() < names.len() {
        return Err(FitError::TooFewSamples {
            samples: r0.len(),
            params: names.len(),
        });
    }
    let j0 = model.jacobian(&start);
    // nalgebra's SVD may not terminate on non-finite input.
    if !(r0.iter().all(|v| v.is_finite()) && j0.iter().all(|v| v.is_finite())) {
        return Err(FitError::NotIdentifiable(vec![
            "any parameter (the samples give non-finite residuals)".into(),
        ]));
    }
    if let Some(bad) = unidentifiable(&j0, &names) {
        return Err(FitError::NotIdentifiable(bad));
    }
    let solver = GaussNewton::new().with_tolerance(1e-12);
    let run = solver.ok().and_then(|s| {
        Executor::new(Problem(model), s)
            .configure(|st| st.param(start.clone()).max_iters(50))
            .run()
            .ok()
    });
    let refined = run.and_then(|res| {
        let iters = res.state().get_iter();
        let p = res.state().get_best_param().cloned()?;
        let r = model.residuals(&p);
        (p.iter().all(|v| v.is_finite())
            && model.admissible(&p)
            && r.norm_squared() <= r0.norm_squared())
        .then_some((p, r, iters))
    });
    let (params, residuals, method, iterations) = match refined {
        Some((p, r, it)) => (p, r, "Gauss-Newton", it),
        None => (start, r0, start_method, 0),
    };
    let j = model.jacobian(&params);
    Ok(Fitted {
        std_err: std_errors(&j, &residuals),
        params,
        residuals,
        method,
        iterations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `y = a x^g` on exact samples.
    struct Power(Vec<(f64, f64)>);

    impl Residuals for Power {
        fn names(&self) -> Vec<String> {
            vec!["a".into(), "g".into()]
        }
        fn residuals(&self, p: &DVector<f64>) -> DVector<f64> {
            DVector::from_iterator(
                self.0.len(),
                self.0.iter().map(|(x, y)| p[0] * x.powf(p[1]) - y),
            )
        }
        fn jacobian(&self, p: &DVector<f64>) -> DMatrix<f64> {
            DMatrix::from_fn(self.0.len(), 2, |i, j| {
                let x = self.0[i].0;
                if j == 0 {
                    x.powf(p[1])
                } else {
                    p[0] * x.powf(p[1]) * x.ln()
                }
            })
        }
        fn admissible(&self, p: &DVector<f64>) -> bool {
            (0.0..=5.0).contains(&p[1])
        }
    }

    #[test]
    fn gauss_newton_recovers_a_power_law_and_names_what_it_cannot_identify() {
        let m = Power(
            [1.0, 2.0, 3.0, 4.0]
                .map(|x: f64| (x, 2.5 * x.powf(1.7)))
                .to_vec(),
        );
        let f = fit(&m, DVector::from_vec(vec![2.0, 1.5]), "start").unwrap();
        assert_eq!(f.method, "Gauss-Newton");
        assert!((f.params[0] - 2.5).abs() < 1e-8 && (f.params[1] - 1.7).abs() < 1e-8);
        // x = 1 everywhere: the exponent has no effect.
        let flat = Power(vec![(1.0, 2.0), (1.0, 2.1), (1.0, 1.9)]);
        let e = fit(&flat, DVector::from_vec(vec![2.0, 1.0]), "start").unwrap_err();
        assert_eq!(e, FitError::NotIdentifiable(vec!["g".into()]));
        let one = Power(vec![(2.0, 3.0)]);
        assert!(matches!(
            fit(&one, DVector::from_vec(vec![1.0, 1.0]), "start"),
            Err(FitError::TooFewSamples { .. })
        ));
    }
}
