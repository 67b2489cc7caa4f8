//! The GPU clock law a profile carries (MODEL.md section 6e): the workload's wall time and GPU
//! power in kernels over the GPU core clock, fitted by `fit` on 3 or more measured clocks.

use crate::error::InputResult;
use crate::input::Check;
use crate::limits::Bound;
use serde::{Deserialize, Serialize};

/// The largest relative residual of the time law at a measured clock that `fit` keeps (above
/// it the kernel's time does not follow the clock, and the law is refused).
pub const TIME_RESIDUAL_MAX: f64 = 0.10;
/// The largest relative residual of the power law at a measured clock that `fit` keeps.
pub const POWER_RESIDUAL_MAX: f64 = 0.05;
/// A measured clock below the top may not run more than this share faster than the top one
/// (the bound `plan` reproduces a profile's own points within): the host and every GPU are
/// taken busy for the whole run at the top clock, so no clock is predicted faster.
pub const FASTER_THAN_TOP_MAX: f64 = 0.02;

/// The `gpu_clock` block of a profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuClockLaw {
    /// The memory clock the law belongs to, MHz, when the machine names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_clock_mhz: Option<f64>,
    /// `f_ref`: the clock of the profile's baseline point (the highest measured), MHz.
    pub reference_mhz: f64,
    /// The measured clocks `f_1 < ... < f_k`, MHz.
    pub measured_mhz: Vec<f64>,
    /// `K_max,s`: the reference point's busiest GPU's kernel time, s (the wall time where no
    /// device time was measured: the device taken as busy for the whole run).
    pub kernel_max_s: f64,
    /// The wall time over the clock.
    pub time: ClockTime,
    /// The GPU's power in kernels over the clock, where GPU energy was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<ClockPower>,
    /// Where the law comes from (`fit`, and the file).
    pub source: String,
    /// The half-widths of the interval at clocks not measured (MODEL.md 6e), where `fit` wrote
    /// them; a profile without them carries no clock interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<ClockInterval>,
}

/// The relative half-widths of the interval at the clock halfway (in `1/fg`) between two
/// measured clocks: the largest left-out error of the interior measured clocks, each predicted
/// from the others, at least [`ClockInterval::TIME_FLOOR`] and [`ClockInterval::ENERGY_FLOOR`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockInterval {
    /// Time, relative.
    pub time_rel: f64,
    /// GPU energy, relative (the time's where no GPU energy was measured).
    pub energy_rel: f64,
}

impl ClockInterval {
    /// The least time half-width (docs/GPU_CLOCK.md, "Intervals at clocks not measured").
    pub const TIME_FLOOR: f64 = 0.01;
    /// The least energy half-width.
    pub const ENERGY_FLOOR: f64 = 0.02;
}

/// `T(fg) = a/fg + m` plus the residuals at the measured clocks, interpolated linearly in
/// `1/fg` between them (so every measured clock's time is reproduced).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockTime {
    /// `a`, s x MHz.
    pub a_s_mhz: f64,
    /// `m`, s.
    pub m_s: f64,
    /// `T_j - L(f_j)` at each measured clock, s.
    pub residuals_s: Vec<f64>,
    /// The largest `|T_j - L(f_j)| / T_j`.
    pub law_residual_max: f64,
}

/// `P_act(fg) = P0 + k (fg / 1 GHz)^alpha` per GPU in kernels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockPower {
    /// `P0`, W.
    pub p0_w: f64,
    /// `k`, W.
    pub k_w: f64,
    /// `alpha`.
    pub alpha: f64,
    /// The largest relative residual at a measured clock.
    pub residual_max: f64,
    /// The residuals at the measured clocks, W (measured minus the law), kept so that each
    /// measured clock's GPU energy is reproduced, as its time is; empty in a profile written
    /// before they were kept (the law alone there).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub residuals_w: Vec<f64>,
    /// Where `alpha` was set when it was not fitted: the machine file whose `[power]
    /// gpu_clock_exponent` `fit` took it from. Absent: chosen by least residual.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha_from: Option<String>,
}

impl GpuClockLaw {
    /// Checks the block of a profile: 3 or more ascending clocks, one residual each, the
    /// reference among them, and every number in range.
    pub fn validate(&self, c: &Check) -> InputResult<()> {
        use super::machine::whole_gpu_clock;
        let f = &self.measured_mhz;
        if f.len() < 3 || f.windows(2).any(|w| w[0] >= w[1]) {
            return Err(c.fail(
                "gpu_clock.measured_mhz",
                "3 or more distinct clocks in MHz, ascending",
                format!("{f:?}"),
            ));
        }
        for (i, &v) in f.iter().enumerate() {
            whole_gpu_clock(c, &format!("gpu_clock.measured_mhz[{i}]"), v)?;
        }
        whole_gpu_clock(c, "gpu_clock.reference_mhz", self.reference_mhz)?;
        if self.time.residuals_s.len() != f.len() {
            return Err(c.fail(
                "gpu_clock.time.residuals_s",
                format!("one residual per measured clock ({})", f.len()),
                format!("{}", self.time.residuals_s.len()),
            ));
        }
        if !f.iter().any(|&m| (m - self.reference_mhz).abs() < 0.5) {
            return Err(c.fail(
                "gpu_clock.reference_mhz",
                "one of the measured clocks",
                self.reference_mhz.to_string(),
            ));
        }
        if let Some(mhz) = self.memory_clock_mhz {
            whole_gpu_clock(c, "gpu_clock.memory_clock_mhz", mhz)?;
        }
        let nonneg = Bound::Within(0.0, 1e12);
        // The kernel time every clock's slowdown is a share of: 0 made every clock as fast as
        // the reference (the law read as no law).
        let run = Bound::Within(crate::units::MIN_RUN_SECONDS, crate::units::MAX_RUN_SECONDS);
        c.num("gpu_clock.kernel_max_s", self.kernel_max_s, run)?;
        c.num("gpu_clock.time.a_s_mhz", self.time.a_s_mhz, nonneg)?;
        c.num("gpu_clock.time.m_s", self.time.m_s, nonneg)?;
        self.validate_residuals(c)?;
        if let Some(i) = &self.interval {
            let rel = Bound::Within(0.0, 10.0);
            c.num("gpu_clock.interval.time_rel", i.time_rel, rel)?;
            c.num("gpu_clock.interval.energy_rel", i.energy_rel, rel)?;
        }
        if let Some(p) = &self.power {
            c.num("gpu_clock.power.p0_w", p.p0_w, crate::limits::POWER_W)?;
            c.num("gpu_clock.power.k_w", p.k_w, crate::limits::POWER_W)?;
            c.num("gpu_clock.power.alpha", p.alpha, Bound::Within(0.0, 16.0))?;
            self.validate_power_residuals(c, p)?;
        }
        Ok(())
    }

    /// Each power residual leaves its clock a measured power (`P0 + k f^alpha + r`) above 0
    /// and within [`POWER_RESIDUAL_MAX`] of the law, as `fit` kept it; one a measured clock,
    /// or none.
    fn validate_power_residuals(&self, c: &Check, p: &ClockPower) -> InputResult<()> {
        let r = &p.residuals_w;
        if r.is_empty() {
            return Ok(());
        }
        if r.len() != self.measured_mhz.len() {
            return Err(c.fail(
                "gpu_clock.power.residuals_w",
                format!(
                    "one residual per measured clock ({})",
                    self.measured_mhz.len()
                ),
                format!("{}", r.len()),
            ));
        }
        for (i, (&f, &w)) in self.measured_mhz.iter().zip(r).enumerate() {
            let measured = p.p0_w + p.k_w * (f / 1000.0).powf(p.alpha) + w;
            let within = w.is_finite()
                && measured > 0.0
                && w.abs() <= POWER_RESIDUAL_MAX * measured * (1.0 + 1e-9);
            if !within {
                return Err(c.fail(
                    &format!("gpu_clock.power.residuals_w[{i}]"),
                    format!(
                        "a residual that leaves {f} MHz a power above 0 within {:.0}% of the \
                         law, as fit kept it",
                        100.0 * POWER_RESIDUAL_MAX
                    ),
                    format!("{w} W"),
                ));
            }
        }
        Ok(())
    }

    /// `kernel_max_s` is the busiest GPU's kernel time of one of the profile's GPU points
    /// (`kernels`: each point's kernel time per GPU), the one the law was fitted at: every
    /// clock's slowdown is a share of it, so edited to another it moved the predictions at the
    /// measured clocks off their times.
    pub fn validate_kernel<'a>(
        &self,
        c: &Check,
        kernels: impl Iterator<Item = &'a [f64]>,
    ) -> InputResult<()> {
        let busiest: Vec<f64> = kernels
            .map(|k| k.iter().copied().fold(0.0, f64::max))
            .collect();
        let k = self.kernel_max_s;
        if busiest.iter().any(|&b| (b - k).abs() <= 1e-9 * k.max(b)) {
            return Ok(());
        }
        Err(c.fail(
            "gpu_clock.kernel_max_s",
            format!(
                "the busiest GPU's kernel time of the point the law was fitted at (baseline \
                 device.kernel_s: {busiest:?} s), as fit wrote it"
            ),
            format!("{k} s"),
        ))
    }

    /// Each residual leaves its clock a measured time (`a/f + m + r`, a run's length) within
    /// [`TIME_RESIDUAL_MAX`] of the law, as `fit` kept it: edited to 1e300 or a few seconds
    /// on a 17 ms kernel, the interpolated times gave negative energies and an error that
    /// named neither the file nor the key.
    fn validate_residuals(&self, c: &Check) -> InputResult<()> {
        let t = &self.time;
        c.num(
            "gpu_clock.time.law_residual_max",
            t.law_residual_max,
            Bound::Within(0.0, TIME_RESIDUAL_MAX),
        )?;
        let measured_at = |f: f64, r: f64| t.a_s_mhz / f + t.m_s + r;
        // The top clock's measured time (the list and residuals are checked non-empty above).
        let top = match (self.measured_mhz.last(), t.residuals_s.last()) {
            (Some(&f), Some(&r)) => measured_at(f, r),
            _ => return Ok(()),
        };
        for (i, (&f, &r)) in self.measured_mhz.iter().zip(&t.residuals_s).enumerate() {
            let measured = measured_at(f, r);
            let runs = crate::units::MIN_RUN_SECONDS..=crate::units::MAX_RUN_SECONDS;
            let within =
                runs.contains(&measured) && r.abs() <= TIME_RESIDUAL_MAX * measured * (1.0 + 1e-9);
            if within && measured < top * (1.0 - FASTER_THAN_TOP_MAX) {
                return Err(c.fail(
                    &format!("gpu_clock.time.residuals_s[{i}]"),
                    format!(
                        "a measured time at {f} MHz no more than {:.0}% shorter than the top \
                         clock's, {top} s, as fit keeps it (no clock is predicted faster than \
                         the top)",
                        100.0 * FASTER_THAN_TOP_MAX
                    ),
                    format!("{r} s (a measured time of {measured} s)"),
                ));
            }
            if !within {
                return Err(c.fail(
                    &format!("gpu_clock.time.residuals_s[{i}]"),
                    format!(
                        "the measured time at {f} MHz less the law a/f + m: within {:.0}% of that \
                         time, as fit keeps it",
                        100.0 * TIME_RESIDUAL_MAX
                    ),
                    format!("{r} s (a measured time of {measured} s)"),
                ));
            }
        }
        Ok(())
    }
}
