//! The GPU clock law evaluated (MODEL.md section 6e): the wall time at a clock, the factor
//! `kappa` on the baseline's kernel times, and the GPU's power in kernels.

use super::baseline::BaselinePoint;
pub use crate::artefact::gpu_clock::{ClockInterval, ClockPower, ClockTime, GpuClockLaw};
use crate::units::Seconds;

/// The point `p` with every kernel time multiplied by `kappa(mhz)` (transfers unchanged).
pub fn at_clock(p: &BaselinePoint, law: &GpuClockLaw, mhz: f64) -> BaselinePoint {
    let kappa = law.kappa(mhz);
    let mut q = p.clone();
    if let Some(d) = q.device.as_mut() {
        for k in &mut d.kernel {
            *k = Seconds(k.0 * kappa);
        }
    }
    q
}

impl ClockTime {
    /// `L(fg) = a/fg + m`.
    pub fn law(&self, mhz: f64) -> f64 {
        self.a_s_mhz / mhz + self.m_s
    }
}

impl ClockPower {
    /// `P_act(fg)`, W per GPU.
    pub fn at(&self, mhz: f64) -> f64 {
        self.p0_w + self.k_w * (mhz / 1000.0).powf(self.alpha)
    }
}

impl GpuClockLaw {
    /// `T(fg)`: the law plus its residuals, linear in `1/fg` between the measured clocks and
    /// constant beyond them.
    pub fn time_at(&self, mhz: f64) -> f64 {
        let f = &self.measured_mhz;
        let r = &self.time.residuals_s;
        let law = self.time.law(mhz);
        let (Some(&lo), Some(&hi)) = (f.first(), f.last()) else {
            return law;
        };
        if mhz <= lo {
            return law + r[0];
        }
        if mhz >= hi {
            return law + r[r.len() - 1];
        }
        for j in 0..f.len() - 1 {
            if mhz <= f[j + 1] {
                let w = (1.0 / mhz - 1.0 / f[j]) / (1.0 / f[j + 1] - 1.0 / f[j]);
                return law + r[j] + (r[j + 1] - r[j]) * w;
            }
        }
        law
    }

    /// `kappa(fg) = 1 + (T(fg) - T(f_ref)) / K_max,s`: the factor on every kernel time.
    pub fn kappa(&self, mhz: f64) -> f64 {
        if self.kernel_max_s <= 0.0 {
            return 1.0;
        }
        1.0 + (self.time_at(mhz) - self.time_at(self.reference_mhz)) / self.kernel_max_s
    }

    /// The relative half-widths `(time, energy)` of the interval at `mhz` (MODEL.md 6e): the
    /// law's [`ClockInterval`] times `sqrt(4 u (1 - u))`, `u` the clock's place in `1/fg`
    /// between its measured neighbours: 0 at a measured clock, growing with the distance from
    /// them to the full width halfway between. `(0, 0)` without an interval or outside the range.
    pub fn half_width(&self, mhz: f64) -> (f64, f64) {
        let Some(i) = self.interval else {
            return (0.0, 0.0);
        };
        if self.measured(mhz) {
            return (0.0, 0.0);
        }
        let shape = self.measured_mhz.windows(2).find_map(|w| {
            (mhz > w[0] && mhz < w[1]).then(|| {
                let u = (1.0 / w[0] - 1.0 / mhz) / (1.0 / w[0] - 1.0 / w[1]);
                (4.0 * u * (1.0 - u)).max(0.0).sqrt()
            })
        });
        shape.map_or((0.0, 0.0), |s| (s * i.time_rel, s * i.energy_rel))
    }

    /// Whether `mhz` is within the measured range (nothing is extrapolated).
    pub fn covers(&self, mhz: f64) -> bool {
        let f = &self.measured_mhz;
        matches!((f.first(), f.last()), (Some(&lo), Some(&hi)) if mhz >= lo - 0.5 && mhz <= hi + 0.5)
    }

    /// Whether `mhz` is one of the measured clocks.
    pub fn measured(&self, mhz: f64) -> bool {
        self.measured_mhz.iter().any(|m| (m - mhz).abs() < 0.5)
    }

    /// The measured range, for messages: `633-1164 MHz (measured: 633, 975, 1164)`.
    pub fn range_text(&self) -> String {
        let list: Vec<String> = self.measured_mhz.iter().map(|m| format!("{m}")).collect();
        format!(
            "{}-{} MHz (measured: {})",
            self.measured_mhz.first().unwrap_or(&0.0),
            self.measured_mhz.last().unwrap_or(&0.0),
            list.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn law(residuals: Vec<f64>) -> GpuClockLaw {
        GpuClockLaw {
            memory_clock_mhz: None,
            reference_mhz: 1200.0,
            measured_mhz: vec![600.0, 900.0, 1200.0],
            kernel_max_s: 10.0,
            time: ClockTime {
                a_s_mhz: 6000.0,
                m_s: 5.0,
                residuals_s: residuals,
                law_residual_max: 0.0,
            },
            power: None,
            source: "test".into(),
            interval: Some(ClockInterval {
                time_rel: 0.04,
                energy_rel: 0.06,
            }),
        }
    }

    #[test]
    fn the_time_reproduces_every_measured_clock_and_interpolates_in_one_over_f() {
        let l = law(vec![0.3, -0.2, 0.1]);
        assert!((l.time_at(600.0) - (15.0 + 0.3)).abs() < 1e-12);
        assert!((l.time_at(900.0) - (6000.0 / 900.0 + 5.0 - 0.2)).abs() < 1e-12);
        assert!((l.time_at(1200.0) - 10.1).abs() < 1e-12);
        // Halfway in 1/f between 900 and 1200 MHz: 1/f = (1/900 + 1/1200) / 2.
        let mid = 2.0 / (1.0 / 900.0 + 1.0 / 1200.0);
        assert!((l.time_at(mid) - (6000.0 / mid + 5.0 - 0.05)).abs() < 1e-9);
        // Constant residual beyond the measured range.
        assert!((l.time_at(1500.0) - (4.0 + 5.0 + 0.1)).abs() < 1e-12);
    }

    #[test]
    fn the_interval_grows_from_nothing_at_a_measured_clock_to_its_width_halfway() {
        let l = law(vec![0.0; 3]);
        assert_eq!(l.half_width(900.0), (0.0, 0.0));
        let mid = 2.0 / (1.0 / 900.0 + 1.0 / 1200.0);
        let (t, e) = l.half_width(mid);
        assert!((t - 0.04).abs() < 1e-12 && (e - 0.06).abs() < 1e-12);
        let near = l.half_width(1150.0).0;
        let nearer = l.half_width(1190.0).0;
        assert!(
            nearer < near && near < t && nearer > 0.0,
            "{nearer} {near} {t}"
        );
        assert_eq!(l.half_width(1300.0), (0.0, 0.0));
    }

    #[test]
    fn kappa_is_one_at_the_reference_and_grows_with_the_time_lost() {
        let l = law(vec![0.0; 3]);
        assert!((l.kappa(1200.0) - 1.0).abs() < 1e-12);
        // T(600) - T(1200) = 10 - 5 = 5 s over 10 s of kernels.
        assert!((l.kappa(600.0) - 1.5).abs() < 1e-12);
        assert!(l.covers(600.0) && l.covers(1200.0) && !l.covers(550.0));
    }
}
