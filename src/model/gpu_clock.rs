//! The GPU clock law evaluated (MODEL.md section 6e): the wall time at a clock, the factor
//! `kappa` on the baseline's kernel times, and the GPU's power in kernels.

use super::baseline::BaselinePoint;
pub use crate::artefact::gpu_clock::{ClockInterval, ClockPower, ClockTime, GpuClockLaw};
use crate::units::Seconds;

/// How far from the chord towards the corner the time is taken between two measured clocks
/// where it bends ([`GpuClockLaw::bent`]): chosen by leave-one-kernel-group-out on the public
/// GTX Titan X sweeps from 0 (the chord), 0.25, 0.5, 0.75 and 1 (the corner), 13 of 14 folds
/// (docs/GPU_CLOCK.md, "Coarser lists and the chooser").
pub const BEND_SHARE: f64 = 0.25;

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
    /// constant beyond them; where the time falls less steeply (in `1/fg`) between two measured
    /// clocks than below them, [`GpuClockLaw::bent`] instead (MODEL.md 6e).
    pub fn time_at(&self, mhz: f64) -> f64 {
        let chord = self.time.law(mhz) + self.residual_at(&self.time.residuals_s, mhz);
        let f = &self.measured_mhz;
        match f.windows(2).position(|w| mhz > w[0] && mhz < w[1]) {
            Some(j) => self.bent(j, mhz).unwrap_or(chord),
            None => chord,
        }
    }

    /// `P_act(fg)`, W per GPU, where the law has a power: `P0 + k fg^alpha` plus its residuals
    /// at the measured clocks, linear in `1/fg` between them and constant beyond (as the
    /// time's), so that each measured clock's GPU energy is reproduced.
    pub fn power_at(&self, mhz: f64) -> Option<f64> {
        let p = self.power.as_ref()?;
        Some(p.at(mhz) + self.residual_at(&p.residuals_w, mhz))
    }

    /// The residuals `r` (one a measured clock; none: 0) at `mhz`: linear in `1/fg` between
    /// the measured clocks either side, the end's beyond the range.
    fn residual_at(&self, r: &[f64], mhz: f64) -> f64 {
        let f = &self.measured_mhz;
        let (Some(&first), Some(&last), true) = (r.first(), r.last(), r.len() == f.len()) else {
            return 0.0;
        };
        if mhz <= f[0] {
            return first;
        }
        match f.windows(2).position(|w| mhz <= w[1]) {
            Some(j) => {
                let w = (1.0 / mhz - 1.0 / f[j]) / (1.0 / f[j + 1] - 1.0 / f[j]);
                r[j] + (r[j + 1] - r[j]) * w
            }
            None => last,
        }
    }

    /// The time at `mhz` between the measured clocks `f_j` and `f_j+1` (`j >= 1`) where it falls
    /// more steeply in `1/fg` below `f_j` (slope `s_below`) than between them (`s_here`): a
    /// kernel whose time stops following the clock somewhere between them (a roofline corner,
    /// a top clock that delivers less than its nominal speed). The chord would over-predict the
    /// time there, the corner (the slope below continued from `f_j` until it reaches
    /// `T(f_j+1)`) under-predict it; the slope is taken [`BEND_SHARE`] of the way from the
    /// chord's to the one below: `max(T_j+1, T_j + s (1/fg - 1/f_j))`, `s = s_here + share
    /// (s_below - s_here)`. `None` where the time does not bend that way.
    fn bent(&self, j: usize, mhz: f64) -> Option<f64> {
        if j == 0 {
            return None;
        }
        let f = &self.measured_mhz;
        let t = |i: usize| self.time.law(f[i]) + self.time.residuals_s[i];
        let slope = |a: usize, b: usize| (t(a) - t(b)) / (1.0 / f[a] - 1.0 / f[b]);
        let (below, here) = (slope(j - 1, j), slope(j, j + 1));
        (below > here).then(|| {
            let s = here + BEND_SHARE * (below - here);
            (t(j) + s * (1.0 / mhz - 1.0 / f[j])).max(t(j + 1))
        })
    }

    /// `kappa(fg) = 1 + (T(fg) - T(f_ref)) / K_max,s`: the factor on every kernel time.
    pub fn kappa(&self, mhz: f64) -> f64 {
        if self.kernel_max_s <= 0.0 {
            return 1.0;
        }
        1.0 + (self.time_at(mhz) - self.time_at(self.reference_mhz)) / self.kernel_max_s
    }

    /// The relative half-widths `(time, energy)` of the interval at `mhz` (MODEL.md 6e): the
    /// law's [`ClockInterval`] times `sqrt(4 d1 d2) / D`, `d1`, `d2` the distances in `1/fg`
    /// to the two measured clocks nearest on the clock's side and `D` the gap between those
    /// two: between measured neighbours `sqrt(4 u (1 - u))`, 0 at a measured clock and the full
    /// width halfway; beyond the range (only `validate` goes there) `sqrt(4 u (1 + u))`, `u`
    /// the distance beyond the end in units of the end's gap, growing without bound. `(0, 0)`
    /// without an interval or with fewer than two measured clocks.
    pub fn half_width(&self, mhz: f64) -> (f64, f64) {
        let Some(i) = self.interval else {
            return (0.0, 0.0);
        };
        let x: Vec<f64> = self.measured_mhz.iter().map(|m| 1.0 / m).collect();
        if self.measured(mhz) || x.len() < 2 {
            return (0.0, 0.0);
        }
        let at = 1.0 / mhz;
        // x is descending (clocks ascending): the pair around `at`, or the end pair beyond.
        let j = x.windows(2).position(|w| at <= w[0] && at >= w[1]);
        let (a, b) = match j {
            Some(j) => (x[j], x[j + 1]),
            None if at > x[0] => (x[0], x[1]),
            None => (x[x.len() - 1], x[x.len() - 2]),
        };
        let shape = (4.0 * (at - a).abs() * (at - b).abs()).sqrt() / (a - b).abs();
        (shape * i.time_rel, shape * i.energy_rel)
    }

    /// Whether `mhz` is within the measured range (nothing is extrapolated): no tolerance, a
    /// clock a fraction of a MHz below the lowest measured is outside.
    pub fn covers(&self, mhz: f64) -> bool {
        let f = &self.measured_mhz;
        matches!((f.first(), f.last()), (Some(&lo), Some(&hi)) if mhz >= lo && mhz <= hi)
    }

    /// Whether `mhz` is one of the measured clocks.
    pub fn measured(&self, mhz: f64) -> bool {
        self.measured_mhz.iter().any(|m| (m - mhz).abs() < 0.5)
    }

    /// The measured range, for messages: `633-1164 MHz (measured: 633, 975, 1164)`.
    pub fn range_text(&self) -> String {
        format!(
            "{}-{} MHz (measured: {})",
            self.measured_mhz.first().unwrap_or(&0.0),
            self.measured_mhz.last().unwrap_or(&0.0),
            mhz_list(&self.measured_mhz)
        )
    }
}

/// Clocks as messages list them: `595, 975, 1164` (MHz, whole as the machine file holds them).
pub fn mhz_list(mhz: &[f64]) -> String {
    let v: Vec<String> = mhz.iter().map(|m| format!("{m}")).collect();
    v.join(", ")
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
        // Residuals that make the time fall more steeply between 900 and 1200 MHz than below
        // (it does not bend): linear in 1/f between the measured clocks.
        let l = law(vec![-0.3, 0.2, -0.1]);
        assert!((l.time_at(600.0) - (15.0 - 0.3)).abs() < 1e-12);
        assert!((l.time_at(900.0) - (6000.0 / 900.0 + 5.0 + 0.2)).abs() < 1e-12);
        assert!((l.time_at(1200.0) - 9.9).abs() < 1e-12);
        // Halfway in 1/f between 900 and 1200 MHz: 1/f = (1/900 + 1/1200) / 2.
        let mid = 2.0 / (1.0 / 900.0 + 1.0 / 1200.0);
        assert!((l.time_at(mid) - (6000.0 / mid + 5.0 + 0.05)).abs() < 1e-9);
        // Constant residual beyond the measured range.
        assert!((l.time_at(1500.0) - (4.0 + 5.0 - 0.1)).abs() < 1e-12);
    }

    #[test]
    fn where_the_time_stops_following_the_clock_it_bends_a_quarter_of_the_way_to_the_corner() {
        // Measured 15.3 s at 600 MHz, 11.4667 s at 900, 10.1 s at 1200: the slope in 1/f is
        // 6900 s MHz below 900 MHz and 4920 s MHz above it.
        let l = law(vec![0.3, -0.2, 0.1]);
        let t = |f: f64| {
            6000.0 / f
                + 5.0
                + [0.3, -0.2, 0.1][[600.0, 900.0, 1200.0].iter().position(|&x| x == f).unwrap()]
        };
        let below = (t(600.0) - t(900.0)) / (1.0 / 600.0 - 1.0 / 900.0);
        let here = (t(900.0) - t(1200.0)) / (1.0 / 900.0 - 1.0 / 1200.0);
        assert!(below > here);
        let s = here + 0.25 * (below - here);
        let mid = 2.0 / (1.0 / 900.0 + 1.0 / 1200.0);
        let bent = t(900.0) + s * (1.0 / mid - 1.0 / 900.0);
        assert!(
            (l.time_at(mid) - bent).abs() < 1e-9,
            "{} {bent}",
            l.time_at(mid)
        );
        // Below the chord, above the corner, and the measured clocks unchanged.
        let chord = (t(900.0) + t(1200.0)) / 2.0;
        assert!(l.time_at(mid) < chord && l.time_at(mid) > t(1200.0));
        assert!((l.time_at(1200.0) - t(1200.0)).abs() < 1e-12);
        assert!((l.time_at(1199.0) - t(1200.0)).abs() < 0.01);
        // The lowest segment has nothing below it: the chord.
        let low = 2.0 / (1.0 / 600.0 + 1.0 / 900.0);
        assert!((l.time_at(low) - (t(600.0) + t(900.0)) / 2.0).abs() < 1e-9);
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
        // Beyond the range (validate's extrapolation): from nothing at the end, past the full
        // width a gap beyond it.
        let beyond = |mhz: f64| l.half_width(mhz).0;
        assert!(beyond(1210.0) > 0.0 && beyond(1210.0) < beyond(1300.0));
        let gap_beyond = 1.0 / (2.0 / 1200.0 - 1.0 / 900.0);
        assert!((beyond(gap_beyond) - 0.04 * 8f64.sqrt()).abs() < 1e-9);
        assert!(beyond(550.0) > 0.0 && beyond(500.0) > beyond(550.0));
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
