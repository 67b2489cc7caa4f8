//! The GPU clock law a profile carries (MODEL.md section 6e): the workload's wall time and GPU
//! power in kernels over the GPU core clock, fitted by `fit` on 3 or more measured clocks.

use serde::{Deserialize, Serialize};

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
}
