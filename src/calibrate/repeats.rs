//! Repeats of one configuration, told apart and averaged one way for `fit`, `validate`, both
//! `--loo`s and the node axis: a configuration's key ([`ConfigKey`]) and what its runs leave
//! once read ([`Repeats`]: their count, sums and spreads, never the runs themselves). Grouping
//! coarser than the key (the time split's core counts and frequencies, the node law's
//! configurations) merges these aggregates (`validate::merge_by`), so memory grows with the
//! configurations, not with the runs. What needs each run again (the error statistics, the
//! largest energy residual) reads them a second time through a [`Replay`].

use super::reproduce::EnergyScope;
use crate::error::InputResult;
use crate::units::freq_key;

/// What tells one measured configuration from another: nodes, cores per node, frequency (whole
/// kHz, [`freq_key`]), GPUs per node, total ranks where given, and the energy's scope where
/// energy was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConfigKey {
    /// Nodes.
    pub nodes: u32,
    /// Cores per node.
    pub cores: u32,
    /// Frequency, whole kHz.
    pub freq_khz: u64,
    /// GPUs per node.
    pub gpus: u32,
    /// Total MPI ranks, when given.
    pub ranks: Option<u32>,
    /// The measured energy's scope (its name), when energy was measured.
    pub scope: Option<&'static str>,
    /// The GPU core clock, whole MHz, when the row names one.
    pub gpu_clock_mhz: Option<u32>,
}

impl ConfigKey {
    /// The key of a configuration measured with `ranks` and energy of `scope`.
    pub fn of(
        config: crate::model::Config,
        ranks: Option<u32>,
        scope: Option<EnergyScope>,
    ) -> ConfigKey {
        ConfigKey {
            nodes: config.nodes,
            cores: config.cores,
            freq_khz: freq_key(config.freq),
            gpus: config.gpus,
            ranks,
            scope: scope.map(EnergyScope::name),
            gpu_clock_mhz: config.gpu_clock_mhz.map(|m| m.round() as u32),
        }
    }
}

/// Running mean and co-moments of a 2-vector (Welford's update; Chan's merge).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Moments2 {
    /// Points.
    pub n: usize,
    /// Mean of each coordinate.
    pub mean: [f64; 2],
    /// Sums of products of deviations from the mean: xx, xy, yy.
    pub co: [f64; 3],
}

impl Moments2 {
    /// Adds a point.
    pub fn add(&mut self, x: f64, y: f64) {
        self.merge(&Moments2 {
            n: 1,
            mean: [x, y],
            co: [0.0; 3],
        });
    }

    /// Adds another set of points.
    pub fn merge(&mut self, o: &Moments2) {
        if o.n == 0 {
            return;
        }
        let n = self.n + o.n;
        let (a, b) = (self.n as f64, o.n as f64);
        let d = [o.mean[0] - self.mean[0], o.mean[1] - self.mean[1]];
        let w = a * b / n as f64;
        self.co[0] += o.co[0] + d[0] * d[0] * w;
        self.co[1] += o.co[1] + d[0] * d[1] * w;
        self.co[2] += o.co[2] + d[1] * d[1] * w;
        self.mean[0] += d[0] * b / n as f64;
        self.mean[1] += d[1] * b / n as f64;
        self.n = n;
    }

    /// The moments of `(sx x, sy y)`.
    pub fn scaled(&self, sx: f64, sy: f64) -> Moments2 {
        Moments2 {
            n: self.n,
            mean: [self.mean[0] * sx, self.mean[1] * sy],
            co: [
                self.co[0] * sx * sx,
                self.co[1] * sx * sy,
                self.co[2] * sy * sy,
            ],
        }
    }

    /// As few points as give the same mean and covariance, so the same least-squares fit of
    /// any model linear in the two coordinates (and the same mean squared residual): the
    /// point itself for one, else the mean plus and minus `sqrt(2)` times each column of the
    /// covariance's Cholesky factor (four points, each a quarter of the weight).
    pub fn equivalent_points(&self) -> Vec<[f64; 2]> {
        if self.n <= 1 {
            return (self.n == 1).then_some(self.mean).into_iter().collect();
        }
        let n = self.n as f64;
        let (sxx, sxy, syy) = (self.co[0] / n, self.co[1] / n, self.co[2] / n);
        let l11 = sxx.max(0.0).sqrt();
        let l21 = if l11 > 0.0 { sxy / l11 } else { 0.0 };
        let l22 = (syy - l21 * l21).max(0.0).sqrt();
        let s = std::f64::consts::SQRT_2;
        let m = self.mean;
        vec![
            [m[0] + s * l11, m[1] + s * l21],
            [m[0] - s * l11, m[1] - s * l21],
            [m[0], m[1] + s * l22],
            [m[0], m[1] - s * l22],
        ]
    }

    /// The equivalent points as node-power points of the weighted design: each run's row is
    /// `(n T / E, busy / E)` against a right-hand side of 1 (so `energy` 1).
    pub fn power_points(&self) -> Vec<super::node_fit::PowerPoint> {
        self.equivalent_points()
            .iter()
            .map(|&[node_s, busy_core_s]| super::node_fit::PowerPoint {
                energy: 1.0,
                node_s,
                busy_core_s,
            })
            .collect()
    }
}

/// What the runs of one configuration leave once read.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Repeats {
    /// Runs.
    pub count: usize,
    /// Sum of their times, s (the mean is this over `count`).
    time_sum: f64,
    /// Their times' running mean and sum of squared deviations (the run-to-run spread).
    time_mean: f64,
    time_m2: f64,
    /// Runs with energy, and the sum of their energies, J.
    energy_count: usize,
    energy_sum: f64,
    /// Moments of `(T / E, 1 / E)` over the runs with energy: what node power's weighted
    /// least squares needs of them.
    power: Moments2,
}

impl Repeats {
    /// One run.
    pub fn one(time_s: f64, energy_j: Option<f64>) -> Repeats {
        let mut r = Repeats::default();
        r.add(time_s, energy_j);
        r
    }

    /// Adds a run.
    pub fn add(&mut self, time_s: f64, energy_j: Option<f64>) {
        self.count += 1;
        self.time_sum += time_s;
        let d = time_s - self.time_mean;
        self.time_mean += d / self.count as f64;
        self.time_m2 += d * (time_s - self.time_mean);
        if let Some(e) = energy_j {
            self.energy_count += 1;
            self.energy_sum += e;
            self.power.add(time_s / e, 1.0 / e);
        }
    }

    /// Adds the runs of another aggregate.
    pub fn merge(&mut self, o: &Repeats) {
        if o.count == 0 {
            return;
        }
        let n = self.count + o.count;
        let d = o.time_mean - self.time_mean;
        self.time_m2 += o.time_m2 + d * d * (self.count * o.count) as f64 / n as f64;
        self.time_mean += d * o.count as f64 / n as f64;
        self.count = n;
        self.time_sum += o.time_sum;
        self.energy_count += o.energy_count;
        self.energy_sum += o.energy_sum;
        self.power.merge(&o.power);
    }

    /// Mean time, s.
    pub fn time_mean(&self) -> f64 {
        self.time_sum / self.count as f64
    }

    /// Mean energy, J, when every run measured it.
    pub fn energy_mean(&self) -> Option<f64> {
        (self.count > 0 && self.energy_count == self.count)
            .then(|| self.energy_sum / self.count as f64)
    }

    /// Runs that measured energy.
    pub fn with_energy(&self) -> usize {
        self.energy_count
    }

    /// Sum of squared deviations of the times from their mean, s^2.
    pub fn time_sq_dev(&self) -> f64 {
        self.time_m2
    }

    /// Relative sample standard deviation of the times (0 for one run), as
    /// [`crate::artefact::sweep::rel_spread`] gives it of the times themselves.
    pub fn time_rel_spread(&self) -> f64 {
        if self.count < 2 || self.time_mean == 0.0 {
            return 0.0;
        }
        (self.time_m2 / (self.count - 1) as f64).sqrt() / self.time_mean
    }

    /// Moments of `(T / E, 1 / E)` over the runs with energy.
    pub fn power_moments(&self) -> Moments2 {
        self.power
    }

    /// The same runs with every time multiplied by `k` and no energy (a derived row).
    pub fn time_scaled(&self, k: f64) -> Repeats {
        Repeats {
            count: self.count,
            time_sum: self.time_sum * k,
            time_mean: self.time_mean * k,
            time_m2: self.time_m2 * k * k,
            ..Repeats::default()
        }
    }
}

/// One run read again: its configuration's key, time (s) and energy (J) where measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Run {
    /// Its configuration.
    pub key: ConfigKey,
    /// Wall time, s.
    pub time_s: f64,
    /// Energy, J.
    pub energy_j: Option<f64>,
}

/// Every run of a measured source again, in order: the second pass of what needs each run.
pub trait Replay {
    /// Calls `f` on each run.
    fn replay(&self, f: &mut dyn FnMut(Run) -> InputResult<()>) -> InputResult<()>;
}

/// A replay without the runs whose key `skip` refuses (a configuration left out).
pub struct Without<'a> {
    /// The runs.
    pub replay: &'a dyn Replay,
    /// Whether a run's key is left out.
    pub skip: &'a dyn Fn(&ConfigKey) -> bool,
}

impl Replay for Without<'_> {
    fn replay(&self, f: &mut dyn FnMut(Run) -> InputResult<()>) -> InputResult<()> {
        self.replay.replay(&mut |r| match (self.skip)(&r.key) {
            true => Ok(()),
            false => f(r),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_repeats_are_the_repeats_of_every_run() {
        let runs = [(10.0, Some(100.0)), (11.0, Some(120.0)), (9.5, Some(90.0))];
        let mut all = Repeats::default();
        runs.iter().for_each(|r| all.add(r.0, r.1));
        let mut a = Repeats::one(runs[0].0, runs[0].1);
        let mut b = Repeats::one(runs[1].0, runs[1].1);
        b.add(runs[2].0, runs[2].1);
        a.merge(&b);
        assert_eq!(a.count, 3);
        assert!((a.time_mean() - 30.5 / 3.0).abs() < 1e-12);
        let mean = 30.5 / 3.0;
        let m2: f64 = runs.iter().map(|r| (r.0 - mean) * (r.0 - mean)).sum();
        assert!((a.time_sq_dev() - m2).abs() < 1e-12 && (all.time_sq_dev() - m2).abs() < 1e-12);
        assert_eq!(a.energy_mean(), Some(310.0 / 3.0));
        assert_eq!(a.power_moments().n, 3);
    }

    #[test]
    fn node_power_on_equivalent_points_is_node_power_on_every_run() {
        use crate::calibrate::node_fit::{PowerPoint, node_power};
        // Runs of two configurations at one frequency: (nodes, busy core-seconds per second,
        // time, energy), noisy. The fit on their moments is the fit on the runs.
        let runs = [
            (1.0, 70.0, 100.0, 30_000.0),
            (1.0, 70.0, 103.0, 30_500.0),
            (2.0, 140.0, 55.0, 33_000.0),
            (2.0, 140.0, 54.0, 32_100.0),
            (2.0, 140.0, 56.5, 33_900.0),
        ];
        let every: Vec<PowerPoint> = runs
            .iter()
            .map(|&(n, busy, t, e)| PowerPoint {
                energy: e,
                node_s: n * t,
                busy_core_s: busy * 50.0,
            })
            .collect();
        let mut m = Moments2::default();
        for &(n, busy, t, e) in &runs {
            let mut one = Repeats::default();
            one.add(t, Some(e));
            m.merge(&one.power_moments().scaled(n, busy * 50.0));
        }
        let eq = m.power_points();
        let (a, b) = (node_power(&every).unwrap(), node_power(&eq).unwrap());
        assert!((a.idle - b.idle).abs() < 1e-9 * a.idle.abs(), "{a:?} {b:?}");
        assert!(
            (a.core - b.core).abs() < 1e-9 * a.core.abs().max(1e-9),
            "{a:?} {b:?}"
        );
        assert!(
            (a.residual_rms - b.residual_rms).abs() < 1e-12,
            "{a:?} {b:?}"
        );
        assert_eq!(a.bound, b.bound);
    }

    #[test]
    fn equivalent_points_keep_the_mean_and_covariance() {
        let pts = [(1.0, 2.0), (2.0, 3.5), (4.0, 3.0), (3.0, 7.0), (0.5, 1.0)];
        let mut m = Moments2::default();
        pts.iter().for_each(|p| m.add(p.0, p.1));
        let eq = m.equivalent_points();
        let mut e = Moments2::default();
        eq.iter().for_each(|p| e.add(p[0], p[1]));
        let n = |x: &Moments2, i: usize| x.co[i] / x.n as f64;
        for i in 0..2 {
            assert!((e.mean[i] - m.mean[i]).abs() < 1e-12);
        }
        for i in 0..3 {
            assert!((n(&e, i) - n(&m, i)).abs() < 1e-12, "{e:?} {m:?}");
        }
    }
}
