//! MODEL.md sections 5 and 6b (c): core counts the baseline did not measure. For each
//! `(f, g)` group with two or more measured core counts, the wall time follows a law fitted
//! over them, and every count strictly between the smallest and the largest measured one gets
//! a derived point: `T_s(c)` from the law plus its residuals at the two measured neighbours
//! interpolated linearly in `1/c` (so derived times meet the measured ones), cycle counts, busy core-time and device times
//! interpolated linearly in `c` between the neighbouring measured points, `U_s = busy / (c T_s)`,
//! and the extra terms of 6b from `T_s - T_paper` split with the group's idle-time split.
//! Nothing is extrapolated beyond the measured range.
//!
//! Laws, fitted by least squares on relative residuals (weights `1/T_s`):
//! - `amdahl`: `T(c) = a/c + s` (a parallel part and a serial part), used unless
//! - the data demand an overhead that grows with `c` (Amdahl leaves a residual beyond a point's
//!   bound: its run-to-run spread or 2%) and three or more core counts were measured:
//!   `amdahl+c`: `T(c) = a/c + s + h c` or `amdahl+c2`: `T(c) = a/c + s + h c^2`, whichever
//!   leaves the smaller largest residual, among those whose overhead `h` is not negative.

use super::contention::{self, Contention};
use super::reproduce::bound_of;
use crate::model::overhead::{self, Extra};
use crate::model::workload::{BaselinePoint, DeviceBaseline, Profile, freq_key, measured_groups};
use crate::numeric::lsq;
use crate::units::Seconds;

/// A wall-time law over core counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Law {
    /// `a/c + s`.
    Amdahl,
    /// `a/c + s + h c`.
    OverheadLinear,
    /// `a/c + s + h c^2`.
    OverheadQuadratic,
}

impl Law {
    /// The law's name in notes and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Law::Amdahl => "amdahl: T(c) = a/c + s",
            Law::OverheadLinear => "amdahl+c: T(c) = a/c + s + h c",
            Law::OverheadQuadratic => "amdahl+c2: T(c) = a/c + s + h c^2",
        }
    }

    fn row(self, c: f64) -> Vec<f64> {
        match self {
            Law::Amdahl => vec![1.0 / c, 1.0],
            Law::OverheadLinear => vec![1.0 / c, 1.0, c],
            Law::OverheadQuadratic => vec![1.0 / c, 1.0, c * c],
        }
    }
}

/// A law fitted to one `(f, g)` group.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreLaw {
    /// Frequency key (kHz) of the group.
    pub freq_khz: u64,
    /// GPUs of the group.
    pub gpus: u32,
    /// The law.
    pub law: Law,
    /// Its parameters (`a`, `s`, then `h`), seconds.
    pub params: Vec<f64>,
    /// Each measured core count with its relative residual `(law - T_s) / T_s`.
    pub residuals: Vec<(u32, f64)>,
    /// The memory-contention curve of the group's memory stall cycles, when they have one.
    pub contention: Option<Contention>,
}

impl CoreLaw {
    /// The law's time at `c` cores.
    pub fn time(&self, c: u32) -> f64 {
        let row = self.law.row(f64::from(c));
        row.iter().zip(&self.params).map(|(x, p)| x * p).sum()
    }

    /// The law's time at `c` corrected by its residuals at the measured neighbours `lo` and
    /// `hi`, interpolated linearly in `1/c` (the law's own coordinate): the derived times join
    /// the measured ones without a step, so no derived count looks better than its measured
    /// neighbour only because the law misses that neighbour.
    pub fn time_between(&self, c: u32, lo: &BaselinePoint, hi: &BaselinePoint) -> f64 {
        let r = |p: &BaselinePoint| p.wall_time.0 - self.time(p.cores);
        let x = |c: u32| 1.0 / f64::from(c);
        let w = (x(c) - x(lo.cores)) / (x(hi.cores) - x(lo.cores));
        self.time(c) + r(lo) + w * (r(hi) - r(lo))
    }

    /// The largest absolute relative residual.
    pub fn residual_max(&self) -> f64 {
        self.residuals.iter().map(|r| r.1.abs()).fold(0.0, f64::max)
    }
}

/// Fits the law of one group's measured points; `bounds` is each point's reproduction bound.
/// `None` with fewer than two core counts.
pub fn fit_group(points: &[&BaselinePoint], bounds: &[f64]) -> Option<CoreLaw> {
    if points.len() < 2 {
        return None;
    }
    let amdahl = fit_law(points, Law::Amdahl)?;
    let demanded = amdahl
        .residuals
        .iter()
        .zip(bounds)
        .any(|(r, b)| r.1.abs() > *b);
    if !demanded || points.len() < 3 {
        return Some(amdahl);
    }
    let best = [Law::OverheadLinear, Law::OverheadQuadratic]
        .into_iter()
        .filter_map(|l| fit_law(points, l))
        // An overhead that shrinks as cores are added (h < 0) is noise fitted, not a law: it
        // would make every extrapolation and interpolation faster than the data say.
        .filter(|f| f.params.get(2).is_some_and(|&h| h >= 0.0))
        .min_by(|a, b| a.residual_max().total_cmp(&b.residual_max()));
    match best {
        Some(b) if b.residual_max() < amdahl.residual_max() => Some(b),
        _ => Some(amdahl),
    }
}

fn fit_law(points: &[&BaselinePoint], law: Law) -> Option<CoreLaw> {
    let rows: Vec<Vec<f64>> = points.iter().map(|p| law.row(f64::from(p.cores))).collect();
    let y: Vec<f64> = points.iter().map(|p| p.wall_time.0).collect();
    let w: Vec<f64> = y.iter().map(|t| 1.0 / t).collect();
    let fit = lsq::fit(&rows, &y, &w)?;
    let first = points.first()?;
    Some(CoreLaw {
        freq_khz: freq_key(first.freq),
        gpus: first.gpus,
        law,
        residuals: points
            .iter()
            .zip(&fit.residuals)
            .map(|(p, r)| (p.cores, -r / p.wall_time.0))
            .collect(),
        params: fit.params,
        contention: None,
    })
}

/// Fits a profile to a machine: derived points for the machine's core counts inside the
/// measured range, then for its frequencies. Returns what was done.
pub fn fit_to_machine(
    profile: &mut Profile,
    machine: &crate::model::machine::Machine,
) -> Vec<String> {
    let wanted: Vec<u32> = (1..=machine.cores_per_node).collect();
    let mut notes = fill_cores(profile, &wanted).1;
    notes.extend(profile.fill_frequencies(&machine.frequencies));
    notes
}

/// Fills the core counts of `wanted` that lie inside each group's measured range; returns the
/// laws that derived points (with their residuals) and what was done, for the user to see.
pub fn fill_cores(profile: &mut Profile, wanted: &[u32]) -> (Vec<CoreLaw>, Vec<String>) {
    let mut laws = Vec::new();
    let mut derived = Vec::new();
    for (fk, g) in measured_groups(&profile.baseline) {
        let mut members: Vec<&BaselinePoint> = profile
            .baseline
            .iter()
            .filter(|p| p.measured && freq_key(p.freq) == fk && p.gpus == g)
            .collect();
        members.sort_by_key(|p| p.cores);
        let bounds: Vec<f64> = members.iter().map(|p| bound_of(profile, p)).collect();
        let Some(mut law) = fit_group(&members, &bounds) else {
            continue;
        };
        law.contention = contention::fit(&members);
        let wait = profile
            .splits
            .iter()
            .find(|s| freq_key(s.freq) == fk && s.gpus == g)
            .map_or(0.0, |s| s.wait);
        let before = derived.len();
        for &c in wanted {
            let have = |p: &&BaselinePoint| p.cores == c;
            if members.iter().any(have) {
                continue;
            }
            let lo = members.iter().rev().find(|p| p.cores < c);
            let hi = members.iter().find(|p| p.cores > c);
            if let (Some(lo), Some(hi)) = (lo, hi) {
                let t = law.time_between(c, lo, hi);
                derived.push(derive(lo, hi, c, t, wait, law.contention.as_ref()));
            }
        }
        if derived.len() > before {
            laws.push(law);
        }
    }
    let mut notes = Vec::new();
    for l in &laws {
        if let Some(k) = &l.contention {
            notes.push(format!(
                "memory contention at {} GHz, {}: m_s(c) = 1/({:.4e} - {:.4e} c) \
                 (largest residual {:.1}%)",
                l.freq_khz as f64 / 1e6,
                crate::units::count(l.gpus, "GPU", "GPUs"),
                k.alpha,
                k.beta,
                100.0 * k.residual_max()
            ));
        }
        notes.push(format!(
            "core law at {} GHz, {}: {} with {} (largest residual {:.1}% over cores {})",
            l.freq_khz as f64 / 1e6,
            crate::units::count(l.gpus, "GPU", "GPUs"),
            l.law.name(),
            params_text(l),
            100.0 * l.residual_max(),
            l.residuals
                .iter()
                .map(|r| r.0.to_string())
                .collect::<Vec<_>>()
                .join(",")
        ));
    }
    if !derived.is_empty() {
        let mut cores: Vec<u64> = derived.iter().map(|p| u64::from(p.cores)).collect();
        cores.sort_unstable();
        cores.dedup();
        notes.push(format!(
            "{} baseline points derived for cores {} that the profile did not measure (MODEL.md \
             section 5: the core law above; cycles interpolated between measured counts)",
            derived.len(),
            crate::model::workload::compact_list(&cores)
        ));
    }
    profile.baseline.extend(derived);
    profile.reindex();
    (laws, notes)
}

fn params_text(l: &CoreLaw) -> String {
    ["a", "s", "h"]
        .iter()
        .zip(&l.params)
        .map(|(n, v)| format!("{n} = {v:.4}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The point at `c` between measured `lo` and `hi`, with wall time `t` from the law.
fn derive(
    lo: &BaselinePoint,
    hi: &BaselinePoint,
    c: u32,
    t: f64,
    wait: f64,
    contention: Option<&Contention>,
) -> BaselinePoint {
    let x = f64::from(c - lo.cores) / f64::from(hi.cores - lo.cores);
    let mix = |a: f64, b: f64| a + x * (b - a);
    let busy = |p: &BaselinePoint| p.utilisation * f64::from(p.cores) * p.wall_time.0;
    // w + b and b interpolated; m from the contention curve (linear without one).
    let wb = mix(
        lo.work_cycles() + lo.other_stall_cycles(),
        hi.work_cycles() + hi.other_stall_cycles(),
    );
    let other = mix(lo.other_stall_cycles(), hi.other_stall_cycles());
    let mem = contention
        .and_then(|k| k.between(c, lo, hi))
        .unwrap_or_else(|| mix(lo.mem_stall_cycles, hi.mem_stall_cycles));
    let cycles = wb + mem;
    let stall = (other + mem).min(cycles);
    let mem = mem.min(stall);
    let device = match (&lo.device, &hi.device) {
        (Some(a), Some(b)) => Some(DeviceBaseline {
            kernel: a
                .kernel
                .iter()
                .zip(&b.kernel)
                .map(|(p, q)| Seconds(mix(p.0, q.0)))
                .collect(),
            transfer: a
                .transfer
                .iter()
                .zip(&b.transfer)
                .map(|(p, q)| Seconds(mix(p.0, q.0)))
                .collect(),
            host_runtime: Seconds(mix(a.host_runtime.0, b.host_runtime.0)),
            host_runtime_raw: Seconds(mix(a.host_runtime_raw.0, b.host_runtime_raw.0)),
            source: a.source.clone(),
            host_runtime_estimated: a.host_runtime_estimated || b.host_runtime_estimated,
        }),
        _ => None,
    };
    let mut p = BaselinePoint {
        cores: c,
        freq: lo.freq,
        gpus: lo.gpus,
        cycles,
        stall_cycles: stall,
        mem_stall_cycles: mem,
        instructions: lo.instructions.zip(hi.instructions).map(|(a, b)| mix(a, b)),
        utilisation: (mix(busy(lo), busy(hi)) / (f64::from(c) * t)).clamp(1e-9, 1.0),
        wall_time: Seconds(t),
        energy: None,
        device,
        measured: false,
        extra: Extra::default(),
        measured_tree: None,
    };
    device_within(&mut p, t);
    if overhead::paper_time(&p) > t {
        cycles_within(&mut p, t);
    }
    let x_extra = t - overhead::paper_time(&p);
    if x_extra > 0.0 {
        let w = x_extra.min(wait);
        p.extra = Extra {
            serial: x_extra - w,
            wait: w,
            excess: 0.0,
        };
    }
    p
}

/// A GPU busy longer than the run is none the model can reproduce: where the device times
/// interpolated in `c` put a GPU's kernel and transfer time above the law's `t` (a core law
/// more convex than their straight line; a fit whose GPUs are taken busy for the whole run),
/// that GPU's times are scaled down together to `t`.
fn device_within(p: &mut BaselinePoint, t: f64) {
    let Some(d) = p.device.as_mut() else {
        return;
    };
    for (k, x) in d.kernel.iter_mut().zip(d.transfer.iter_mut()) {
        let active = k.0 + x.0;
        if active > t {
            k.0 *= t / active;
            x.0 *= t / active;
        }
    }
}

/// Where the cycles interpolated in `c` give more time than the law's `t` (a core law more
/// convex than their straight line), scales the cycle counts down together, their mix kept,
/// until the paper's terms give `t`: a derived point is what the model reproduces, and no
/// derived point over-explains its own wall time (MODEL.md section 5). The host time the GPU
/// runtime blocks follows the host's, hence a few rounds.
fn cycles_within(p: &mut BaselinePoint, t: f64) {
    for _ in 0..8 {
        let paper = overhead::paper_time(p);
        if paper <= t * (1.0 + 1e-9) {
            return;
        }
        let host = overhead::host_time(p);
        let device = paper - host;
        let k = ((t - device) / host).clamp(0.0, 1.0);
        p.cycles *= k;
        p.stall_cycles *= k;
        p.mem_stall_cycles *= k;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::workload::Communication;
    use crate::units::Hertz;

    #[test]
    fn no_derived_point_over_explains_the_wall_time_its_core_law_gives() {
        // Measured at 1, 2, 4 and 8 cores, every cycle busy (U = 1, no stalls), the wall time
        // `40/c + 1 + c/2` (an overhead growing with the cores): the cycles interpolated
        // linearly between 4 and 8 cores give more time than the core law there.
        let point = |c: u32, wall: f64| BaselinePoint {
            cores: c,
            freq: Hertz(1e9),
            gpus: 0,
            cycles: wall * f64::from(c) * 1e9,
            stall_cycles: 0.0,
            mem_stall_cycles: 0.0,
            instructions: None,
            utilisation: 1.0,
            wall_time: Seconds(wall),
            energy: None,
            device: None,
            measured: true,
            extra: Extra::default(),
            measured_tree: None,
        };
        let law = |c: f64| 40.0 / c + 1.0 + 0.5 * c;
        let pts: Vec<BaselinePoint> = [1u32, 2, 4, 8]
            .iter()
            .map(|&c| point(c, law(f64::from(c))))
            .collect();
        let (lo, hi) = (pts[2].clone(), pts[3].clone());
        let mut p =
            Profile::from_parts("q", "queue", (1.0, 1.0), Communication::none(), pts, vec![])
                .unwrap();
        let (laws, _) = fill_cores(&mut p, &[5, 6, 7]);
        let mut over = 0;
        for c in 5..=7u32 {
            let t = laws[0].time_between(c, &lo, &hi);
            let x = f64::from(c - 4) / 4.0;
            let linear = lo.cycles + x * (hi.cycles - lo.cycles);
            over += usize::from(linear / (f64::from(c) * 1e9) > t * 1.001);
            let q = p.baseline.iter().find(|q| q.cores == c).unwrap();
            assert!((q.wall_time.0 / t - 1.0).abs() < 1e-12);
            let paper = overhead::paper_time(q);
            assert!(
                (paper / t - 1.0).abs() < 1e-9,
                "{c} cores: {paper} s against {t} s"
            );
        }
        assert!(
            over > 0,
            "no derived point would have over-explained its time"
        );
    }

    #[test]
    fn derived_memory_stalls_follow_the_contention_curve() {
        // m_s(c) = 1 / (alpha - beta c): 1e10 cycles at c -> 0, rising to 5e10 at c = 16.
        let (alpha, beta) = (1e-10, 5e-12);
        let m = |c: u32| 1.0 / (alpha - beta * f64::from(c));
        let pts: Vec<BaselinePoint> = [1u32, 4, 16]
            .iter()
            .map(|&c| {
                let (cf, wb) = (f64::from(c) * 1e9, 4e10);
                let mem = m(c);
                BaselinePoint {
                    cores: c,
                    freq: Hertz(1e9),
                    gpus: 0,
                    cycles: wb + mem,
                    stall_cycles: mem,
                    mem_stall_cycles: mem,
                    instructions: None,
                    utilisation: 1.0,
                    wall_time: Seconds((wb + mem) / cf),
                    energy: None,
                    device: None,
                    measured: true,
                    extra: Extra::default(),
                    measured_tree: None,
                }
            })
            .collect();
        let mut p =
            Profile::from_parts("q", "queue", (1.0, 1.0), Communication::none(), pts, vec![])
                .unwrap();
        let (laws, notes) = fill_cores(&mut p, &[8]);
        let k = laws[0].contention.as_ref().unwrap();
        assert!((k.beta / beta - 1.0).abs() < 1e-9, "{k:?}");
        assert!(
            notes
                .iter()
                .any(|n| n.contains("memory contention at 1 GHz")),
            "{notes:?}"
        );
        let eight = p.baseline.iter().find(|q| q.cores == 8).unwrap();
        assert!(!eight.measured);
        assert!((eight.mem_stall_cycles / m(8) - 1.0).abs() < 1e-9);
        // Linear interpolation between 4 and 16 cores would have given more.
        let linear = m(4) + (m(16) - m(4)) * 4.0 / 12.0;
        assert!(linear > 1.1 * eight.mem_stall_cycles);
        assert!((eight.cycles - (4e10 + m(8))).abs() < 1.0);
    }
}
