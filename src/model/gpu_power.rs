//! GPU power between kernels (MODEL.md 6b with section 6). A GPU measured on a real node has
//! three states: no CUDA context (`gpu_nocontext_w`), a context with no kernel (`gpu_idle_w`)
//! and kernels running (`gpu_active_w`). While a program runs, the time between its kernels
//! is spent partly at the context-idle power and partly at a higher one (the clocks stay up
//! for a while after each kernel; on the H100 of the fixtures about 257 W inside the loop
//! against 119 W idle), so the power of a used GPU's non-kernel time is a property of the
//! program. Where a baseline point's GPU energy was measured, it gives that power directly:
//! `P_gap = (E_s - g0 P_gpu_act A_mean) / (g0 (T_s - A_mean))`. Other points take it
//! interpolated linearly in `c` between the measured points of the nearest measured frequency
//! with the same GPU count (held constant beyond them); without measured GPU energy,
//! `P_gap = P_gpu_idle`.

use super::machine::Machine;
use super::workload::{BaselinePoint, Profile, freq_key};

/// The power of a used GPU's non-kernel time, per measured point, and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct GapPower {
    /// `(cores, kHz, gpus, P_gap)` of every measured point with GPU energy.
    pub measured: Vec<(u32, u64, u32, f64)>,
    /// The machine's context-idle power, used where nothing was measured.
    pub fallback: f64,
}

impl GapPower {
    /// `P_gap` for a point (measured, or derived from measured ones).
    pub fn at(&self, p: &BaselinePoint) -> f64 {
        let fk = freq_key(p.freq);
        let same_g: Vec<&(u32, u64, u32, f64)> =
            self.measured.iter().filter(|m| m.2 == p.gpus).collect();
        let Some(nearest_f) = same_g.iter().map(|m| m.1).min_by_key(|k| k.abs_diff(fk)) else {
            return self.fallback;
        };
        let mut row: Vec<(u32, f64)> = same_g
            .iter()
            .filter(|m| m.1 == nearest_f)
            .map(|m| (m.0, m.3))
            .collect();
        row.sort_by_key(|r| r.0);
        interpolate(&row, p.cores)
    }

    /// A sentence for the user, or `None` when nothing was measured.
    pub fn note(&self, machine: &Machine) -> Option<String> {
        self.range().map(|(lo, hi, n)| {
            format!(
                "GPU power between kernels, from the baseline's measured GPU energy: {lo:.1} to \
                 {hi:.1} W per GPU over {} (the machine's context-idle power is {:.1} W, \
                 kernels {:.1} W); interpolated in cores between them",
                crate::units::count(n as u64, "point", "points"),
                machine.power.gpu_idle.0,
                machine.power.gpu_active.0
            )
        })
    }
}

impl GapPower {
    /// The least and greatest measured power and how many points gave one; `None` where
    /// nothing was measured.
    fn range(&self) -> Option<(f64, f64, usize)> {
        let w = self.measured.iter().map(|m| m.3);
        let lo = w.clone().fold(f64::INFINITY, f64::min);
        let hi = w.fold(f64::NEG_INFINITY, f64::max);
        (!self.measured.is_empty()).then_some((lo, hi, self.measured.len()))
    }

    /// The sentence for power the runs drew ([`fit_drawn`]), or `None` when nothing was
    /// measured.
    pub fn drawn_note(&self) -> Option<String> {
        self.range().map(|(lo, hi, n)| {
            format!(
                "GPU power drawn by the runs, from the baseline's measured GPU energy over GPUs \
                 x time: {lo:.1} to {hi:.1} W per GPU over {}, taken to be drawn all run long \
                 (kernels and between them); interpolated in cores between them",
                crate::units::count(n as u64, "point", "points"),
            )
        })
    }
}

fn interpolate(row: &[(u32, f64)], c: u32) -> f64 {
    let lo = row.iter().rev().find(|r| r.0 <= c);
    let hi = row.iter().find(|r| r.0 >= c);
    match (lo, hi) {
        (Some(a), Some(b)) if b.0 > a.0 => {
            a.1 + (b.1 - a.1) * f64::from(c - a.0) / f64::from(b.0 - a.0)
        }
        (Some(a), _) => a.1,
        (None, Some(b)) => b.1,
        (None, None) => 0.0,
    }
}

/// `P_gap` of every measured GPU point whose energy covers GPU domains only.
pub fn fit_gap(machine: &Machine, profile: &Profile) -> GapPower {
    let p_act = machine.power.gpu_active.0;
    let mut measured = Vec::new();
    for p in profile.baseline.iter().filter(|p| p.measured && p.gpus > 0) {
        let (Some(e), Some(d)) = (p.energy, p.device.as_ref()) else {
            continue;
        };
        let key = (p.cores, freq_key(p.freq), p.gpus);
        let gpu_only = profile.facts.spread.get(&key).is_some_and(|s| {
            !s.energy_domains.is_empty() && s.energy_domains.iter().all(|d| d.starts_with("gpu-"))
        });
        let g0 = f64::from(p.gpus);
        let active: f64 = d
            .kernel
            .iter()
            .zip(&d.transfer)
            .map(|(k, m)| k.0 + m.0)
            .sum();
        let a_mean = active / g0;
        let x = g0 * (p.wall_time.0 - a_mean);
        if gpu_only && x > 0.0 {
            let w = (e.0 - g0 * p_act * a_mean) / x;
            measured.push((key.0, key.1, key.2, w.max(0.0)));
        }
    }
    GapPower {
        measured,
        fallback: machine.power.gpu_idle.0,
    }
}

/// The power per GPU a workload's runs drew over their whole time, `E / (g0 T)`, at each
/// measured GPU point with energy: where the machine file gives no power and the workload's
/// energy is the GPU's alone, measured at one clock with no clock law to carry it
/// ([`Machine::read_power_as_zero`]), its GPUs are taken to draw that power all run long
/// (in kernels and between them alike). Interpolated in cores as [`GapPower`]; 0 where
/// nothing was measured.
pub fn fit_drawn(profile: &Profile) -> GapPower {
    let measured = profile
        .baseline
        .iter()
        .filter(|p| p.measured && p.gpus > 0 && p.wall_time.0 > 0.0)
        .filter_map(|p| {
            let w = p.energy?.0 / (f64::from(p.gpus) * p.wall_time.0);
            Some((p.cores, freq_key(p.freq), p.gpus, w))
        })
        .collect();
    GapPower {
        measured,
        fallback: 0.0,
    }
}
