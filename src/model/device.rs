//! A configuration's GPUs: the baseline's device times divided over the configuration's GPUs,
//! keeping their imbalance, and the host time they block (MODEL.md section 6).

use super::baseline::BaselinePoint;

/// The device part of a group, each time multiplied by `n` (MODEL.md section 6 as written in
/// `docs/MODEL.md`).
pub(crate) struct DeviceScaling {
    pub(crate) host_blocked: f64,
    /// Spin-wait inside the busy terms: `s (R_raw - R_model)` (device share `s`).
    pub(crate) host_spin: f64,
    pub(crate) kernel_max: f64,
    pub(crate) active_max: f64,
    pub(crate) active_mean: f64,
    pub(crate) load_balance: f64,
}

pub(crate) fn device_scaling(p: &BaselinePoint, k: f64, gpus: u32, host_n: f64) -> DeviceScaling {
    let none = DeviceScaling {
        host_blocked: 0.0,
        host_spin: 0.0,
        kernel_max: 0.0,
        active_max: 0.0,
        active_mean: 0.0,
        load_balance: 1.0,
    };
    let Some(d) = (gpus > 0).then_some(()).and(p.device.as_ref()) else {
        return none;
    };
    let g0 = d.kernel.len() as f64;
    let kernel_sum: f64 = d.kernel.iter().map(|s| s.0).sum();
    let kernel_max = d.kernel.iter().map(|s| s.0).fold(0.0, f64::max);
    let active: Vec<f64> = d
        .kernel
        .iter()
        .zip(&d.transfer)
        .map(|(a, b)| a.0 + b.0)
        .collect();
    let active_max = active.iter().copied().fold(0.0, f64::max);
    let active_sum: f64 = active.iter().sum();
    // Every GPU's work is divided over the configuration's n g GPUs, keeping its imbalance:
    // times scale by s = k g0 / (n g). Here everything is multiplied by n.
    let s = k * g0 / f64::from(gpus);
    // Host-device overlap: the share of host compute time during which the device ran without
    // blocking the host, measured on the baseline and clamped to [0, 1].
    let cf = f64::from(p.cores) * p.freq.0;
    let host_s = p.cycles / cf;
    let overlap = if host_s > 0.0 {
        ((active_max - d.host_runtime.0) / host_s).clamp(0.0, 1.0)
    } else {
        0.0
    };
    DeviceScaling {
        host_blocked: f64::max(0.0, s * active_max - overlap * host_n),
        host_spin: s * (d.host_runtime_raw.0 - d.host_runtime.0).max(0.0),
        kernel_max: s * kernel_max,
        active_max: s * active_max,
        active_mean: s * active_sum / g0,
        load_balance: if kernel_max > 0.0 {
            kernel_sum / (g0 * kernel_max)
        } else {
            1.0
        },
    }
}
