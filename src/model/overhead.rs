//! MODEL.md section 6b, every measured second: the time of a baseline point that the paper's
//! terms do not hold, split into a serial term (one thread busy: start-up, serial sections,
//! thread management) and a waiting term (no thread busy, and no measurement says on what).
//! `docs/MODEL.md` section 6b writes the equations; this file is their only implementation.

use super::baseline::BaselinePoint;
use crate::numeric::lsq;
use crate::units::Hertz;

pub use super::baseline::Extra;

impl Extra {
    /// `X_ser + X_wait`.
    pub fn total(&self) -> f64 {
        self.serial + self.wait
    }

    /// The terms carried from frequency `from` to `to` (serial time scales as `from / to`).
    pub fn at_frequency(&self, from: Hertz, to: Hertz) -> Extra {
        Extra {
            serial: self.serial * from.0 / to.0,
            wait: self.wait,
            excess: 0.0,
        }
    }
}

/// The idle-time split of one `(f, g)` group, fitted over its measured core counts:
/// `I(c) = (1 - U_s) T_s = sigma (1 - 1/c) + omega` (an Amdahl split of the time not covered by
/// evenly spread busy time: `sigma` serial seconds, `omega` seconds with no thread busy).
#[derive(Debug, Clone, PartialEq)]
pub struct IdleSplit {
    /// Frequency of the group.
    pub freq: Hertz,
    /// GPUs of the group.
    pub gpus: u32,
    /// Measured core counts it was fitted on.
    pub cores: Vec<u32>,
    /// `sigma`, seconds.
    pub serial: f64,
    /// `omega`, seconds.
    pub wait: f64,
    /// Largest absolute residual of the fit over its points, relative to their wall time.
    pub residual_max: f64,
    /// Whether serial time could be told from waiting (core count 1 and another were measured,
    /// or several core counts above 1); if not, all idle time is taken as waiting.
    pub identifiable: bool,
    /// `(cores, seconds)` of the points whose host time blocked in the GPU runtime was
    /// estimated (no TALP data): `R = min(sigma + omega, A_max)`.
    pub host_runtime_estimated: Vec<(u32, f64)>,
}

/// The time the paper's terms (sections 3 and 6) give a baseline point at `n = 1`, `S = S_s`:
/// `T_CPU (2 - U) + T_mem + T_gpu` (at one node `T_s,net = (1 - U) T_CPU` and `T_w,net = 0`).
pub fn paper_time(p: &BaselinePoint) -> f64 {
    let cf = f64::from(p.cores) * p.freq.0;
    let t_cpu = (p.work_cycles() + p.other_stall_cycles()) / cf;
    let t_mem = p.mem_stall_cycles / cf;
    let t_gpu = super::device::device_scaling(p, 1.0, p.gpus, t_cpu + t_mem).host_blocked;
    host_time(p) + t_gpu
}

/// The host's part of [`paper_time`]: `T_CPU (2 - U) + T_mem`.
pub fn host_time(p: &BaselinePoint) -> f64 {
    let cf = f64::from(p.cores) * p.freq.0;
    (p.work_cycles() + p.other_stall_cycles()) / cf * (2.0 - p.utilisation)
        + p.mem_stall_cycles / cf
}

/// Fits the idle-time split over the measured points of one `(f, g)` group.
pub fn split_idle(points: &[&BaselinePoint]) -> IdleSplit {
    let idle: Vec<f64> = points
        .iter()
        .map(|p| (1.0 - p.utilisation) * p.wall_time.0)
        .collect();
    let x: Vec<f64> = points
        .iter()
        .map(|p| 1.0 - 1.0 / f64::from(p.cores))
        .collect();
    let mut cores: Vec<u32> = points.iter().map(|p| p.cores).collect();
    cores.sort_unstable();
    cores.dedup();
    let identifiable = cores.len() >= 2;
    let (serial, wait) = if identifiable {
        nonnegative_line(&x, &idle)
    } else {
        (0.0, mean(&idle))
    };
    let residual_max = points
        .iter()
        .zip(&x)
        .zip(&idle)
        .map(|((p, xi), i)| (i - serial * xi - wait).abs() / p.wall_time.0)
        .fold(0.0, f64::max);
    IdleSplit {
        freq: points.first().map_or(Hertz(0.0), |p| p.freq),
        gpus: points.first().map_or(0, |p| p.gpus),
        cores,
        serial,
        wait,
        residual_max,
        identifiable,
        host_runtime_estimated: Vec::new(),
    }
}

/// The host time blocked in the GPU runtime that the model holds as `T_gpu` at a GPU point.
/// Where the device times did not measure it (NVML records 0), it is first estimated from the
/// core-count series as `R = min(sigma + omega, A_max)`: a host thread waiting on the device is
/// either spinning (one thread busy: in `sigma`) or blocked (none busy: in `omega`), and it
/// can wait only while the device is active (for a program that synchronises after its
/// device work this is its blocked time; with host and device overlapping, an upper bound).
/// A spinning wait is also busy CPU time, which the paper's terms already hold; so the model
/// takes only the part of `R` those terms leave: `R_model = min(R, max(0, T_s - T_CPU (2 - U)
/// - T_mem))`. Sets the point's `host_runtime` to `R_model` (keeping `R` in
/// `host_runtime_raw`) and returns `R` when it was estimated.
pub fn settle_host_runtime(p: &mut BaselinePoint, split: &IdleSplit) -> Option<f64> {
    let left = (p.wall_time.0 - host_time(p)).max(0.0);
    let d = p.device.as_mut()?;
    // Host time blocked in the runtime is measured by TALP, and lies inside a whole run.
    let measured_elsewhere =
        d.whole_run() || d.source.as_deref().is_some_and(|s| s.starts_with("TALP"));
    let mut estimated = None;
    if d.host_runtime_raw.0 <= 0.0 && !measured_elsewhere {
        let active_max = d
            .kernel
            .iter()
            .zip(&d.transfer)
            .map(|(k, m)| k.0 + m.0)
            .fold(0.0, f64::max);
        let r = (split.serial + split.wait).min(active_max);
        d.host_runtime_raw = crate::units::Seconds(r);
        d.host_runtime_estimated = true;
        estimated = Some(r);
    }
    d.host_runtime = crate::units::Seconds(d.host_runtime_raw.0.min(left));
    estimated
}
/// The extra terms of one point from its wall time and its group's split: `X = T_s - T_paper`
/// when positive; its waiting part is at most the group's `omega`, the rest is serial.
pub fn extra_of(p: &BaselinePoint, split: &IdleSplit) -> Extra {
    let x = p.wall_time.0 - paper_time(p);
    if x <= 0.0 {
        return Extra {
            excess: -x,
            ..Extra::default()
        };
    }
    let wait = x.min(split.wait);
    Extra {
        serial: x - wait,
        wait,
        excess: 0.0,
    }
}

/// Least squares `y = a x + b` with `a, b >= 0` (two parameters: the constrained optimum lies
/// on a boundary when the free one does not).
fn nonnegative_line(x: &[f64], y: &[f64]) -> (f64, f64) {
    let rows: Vec<Vec<f64>> = x.iter().map(|&xi| vec![xi, 1.0]).collect();
    if let Some(f) = lsq::fit(&rows, y, &vec![1.0; x.len()])
        && f.params[0] >= 0.0
        && f.params[1] >= 0.0
    {
        return (f.params[0], f.params[1]);
    }
    let through_origin = {
        let sxx: f64 = x.iter().map(|v| v * v).sum();
        let sxy: f64 = x.iter().zip(y).map(|(a, b)| a * b).sum();
        if sxx > 0.0 { (sxy / sxx).max(0.0) } else { 0.0 }
    };
    let sse = |a: f64, b: f64| -> f64 {
        x.iter()
            .zip(y)
            .map(|(xi, yi)| (yi - a * xi - b).powi(2))
            .sum()
    };
    let flat = mean(y).max(0.0);
    if sse(through_origin, 0.0) <= sse(0.0, flat) {
        (through_origin, 0.0)
    } else {
        (0.0, flat)
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}
