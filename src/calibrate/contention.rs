//! The memory-contention curve of MODEL.md section 5. Each of `c` cores makes `1/c` of the
//! program's memory accesses, and each access waits like the response time of a queue whose
//! utilisation grows with the cores sharing the memory system, so the per-core stall cycles are
//! ```text
//! m_s(c) / c = m_0 / (c (1 - u c))   <=>   1 / m_s(c) = alpha - beta c   (alpha = 1/m_0, beta = u/m_0)
//! ```
//! fitted by weighted least squares on `1/m_s` (weights `m_s`, so residuals are relative), with
//! `u >= 0` (stalls that fall with `c` are no queue: `u = 0`, no contention). Derived core counts
//! take the curve corrected by its ratio to the measured neighbours, interpolated linearly in
//! `c`, so derived points join the measured ones.

use crate::model::workload::BaselinePoint;
use crate::numeric::lsq;

/// A fitted contention curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Contention {
    /// `alpha = 1 / m_0`.
    pub alpha: f64,
    /// `beta = u / m_0` (0: no contention).
    pub beta: f64,
    /// Each measured core count with its relative residual `(curve - m_s) / m_s`.
    pub residuals: Vec<(u32, f64)>,
}

impl Contention {
    /// `m_s(c)`, memory stall cycles summed over the cores; `None` past the curve's pole.
    pub fn total(&self, c: u32) -> Option<f64> {
        let d = self.alpha - self.beta * f64::from(c);
        (d > 0.0).then(|| 1.0 / d)
    }

    /// `m_s` at `c` between the measured points `lo` and `hi`, corrected by the curve's
    /// ratios there, interpolated linearly in `c`; `None` when the curve cannot give it.
    pub fn between(&self, c: u32, lo: &BaselinePoint, hi: &BaselinePoint) -> Option<f64> {
        let ratio = |p: &BaselinePoint| Some(p.mem_stall_cycles / self.total(p.cores)?);
        let (rl, rh) = (ratio(lo)?, ratio(hi)?);
        let x = f64::from(c - lo.cores) / f64::from(hi.cores - lo.cores);
        Some(self.total(c)? * (rl + x * (rh - rl)))
    }

    /// The largest |relative residual|.
    pub fn residual_max(&self) -> f64 {
        self.residuals
            .iter()
            .fold(0.0, |m, r| f64::max(m, r.1.abs()))
    }
}

/// Fits the curve to the measured points (sorted by cores); `None` with fewer than two points
/// with memory stalls, or where the fitted curve has its pole inside the measured range.
pub fn fit(points: &[&BaselinePoint]) -> Option<Contention> {
    let pts: Vec<(u32, f64)> = points
        .iter()
        .filter(|p| p.mem_stall_cycles > 0.0)
        .map(|p| (p.cores, p.mem_stall_cycles))
        .collect();
    if pts.len() < 2 || pts.len() < points.len() {
        return None;
    }
    let y: Vec<f64> = pts.iter().map(|p| 1.0 / p.1).collect();
    let w: Vec<f64> = pts.iter().map(|p| p.1).collect();
    let rows: Vec<Vec<f64>> = pts.iter().map(|p| vec![1.0, -f64::from(p.0)]).collect();
    let (alpha, beta) = match lsq::fit(&rows, &y, &w) {
        Some(f) if f.params[1] >= 0.0 => (f.params[0], f.params[1]),
        _ => {
            let rows: Vec<Vec<f64>> = pts.iter().map(|_| vec![1.0]).collect();
            (lsq::fit(&rows, &y, &w)?.params[0], 0.0)
        }
    };
    let mut c = Contention {
        alpha,
        beta,
        residuals: Vec::new(),
    };
    c.residuals = pts
        .iter()
        .map(|&(k, m)| Some((k, c.total(k)? / m - 1.0)))
        .collect::<Option<Vec<_>>>()?;
    Some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(c: u32, m: f64) -> BaselinePoint {
        BaselinePoint {
            cores: c,
            freq: crate::units::Hertz(1e9),
            gpus: 0,
            cycles: 10.0 * m,
            stall_cycles: m,
            mem_stall_cycles: m,
            instructions: None,
            utilisation: 1.0,
            wall_time: crate::units::Seconds(1.0),
            energy: None,
            device: None,
            measured: true,
            extra: Default::default(),
            measured_tree: None,
        }
    }

    #[test]
    fn recovers_a_queueing_curve_and_meets_the_measured_points() {
        // m_s(c) = 100 / (1 - 0.02 c).
        let mu = |c: u32| 100.0 / (1.0 - 0.02 * f64::from(c));
        let pts: Vec<BaselinePoint> = [1, 4, 16, 32].iter().map(|&c| point(c, mu(c))).collect();
        let refs: Vec<&BaselinePoint> = pts.iter().collect();
        let k = fit(&refs).unwrap();
        assert!(k.residual_max() < 1e-12, "{k:?}");
        let m8 = k.between(8, &pts[1], &pts[2]).unwrap();
        assert!((m8 / mu(8) - 1.0).abs() < 1e-12);
        // Stalls that fall with c are no queue: u = 0.
        let falling: Vec<BaselinePoint> = [1, 8]
            .iter()
            .map(|&c| point(c, 100.0 / f64::from(c)))
            .collect();
        let k = fit(&falling.iter().collect::<Vec<_>>()).unwrap();
        assert_eq!(k.beta, 0.0);
        // A measured point off the curve is met exactly at its own count.
        let mut off = pts.clone();
        off[2].mem_stall_cycles *= 1.1;
        let refs: Vec<&BaselinePoint> = off.iter().collect();
        let k = fit(&refs).unwrap();
        let at16 = k.between(16, &off[2], &off[3]).unwrap();
        assert!((at16 / off[2].mem_stall_cycles - 1.0).abs() < 1e-12);
        // No memory stalls: no curve.
        let flat: Vec<BaselinePoint> = [1, 2].iter().map(|&c| point(c, 0.0)).collect();
        assert!(fit(&flat.iter().collect::<Vec<_>>()).is_none());
    }
}
