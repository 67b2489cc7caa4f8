//! Numerical tools below every stage: weighted least squares with standard errors (nalgebra's
//! SVD), used by the fits of `calibrate` and the idle split of `model`; the normal quantile of
//! the intervals.

pub mod lsq;
pub mod normal;
