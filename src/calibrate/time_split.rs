//! The work / memory split of measured wall times without counters (`jouleplan fit`): at each
//! core count measured at two or more frequencies, `T(f) = a/f + m` by least squares on relative
//! residuals (the time that scales with the clock, and the memory time that does not, MODEL.md
//! section 5). A core count measured at one frequency takes the memory share of its nearest
//! fitted neighbours at that frequency (interpolated in `c`). The split becomes profile points:
//! `C_s = c f T_s` (every core busy, `U_s = 1`), `m_s = st_s = c f m`.

use crate::model::workload::BaselinePoint;
use crate::numeric::lsq;
use crate::units::{Hertz, Joules, Seconds};
use std::collections::BTreeMap;

/// One measured single-node configuration (repeats averaged).
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Cores.
    pub cores: u32,
    /// Frequency, Hz.
    pub freq: f64,
    /// Mean wall time, s.
    pub time: f64,
    /// Mean node energy, J, when measured.
    pub energy: Option<f64>,
    /// Runs averaged into it.
    pub repeats: usize,
}

/// How one core count's time was split.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreSplit {
    /// Cores.
    pub cores: u32,
    /// `a`: the clock-bound time at 1 GHz, s.
    pub compute_s_at_1ghz: f64,
    /// `m`: memory time, s (frequency-independent).
    pub memory_s: f64,
    /// Frequencies measured at this count.
    pub frequencies: usize,
    /// Largest |fitted - measured| / measured over them.
    pub max_rel_residual: f64,
    /// How it was obtained.
    pub how: &'static str,
}

impl CoreSplit {
    /// Memory share of the time at `ghz`.
    fn memory_share(&self, ghz: f64) -> f64 {
        self.memory_s / (self.compute_s_at_1ghz / ghz + self.memory_s)
    }
}

/// Fits `T = a/f + m` at one core count (`pts`: (GHz, s)); `m < 0` refits with `m = 0`.
fn fit_count(cores: u32, pts: &[(f64, f64)]) -> Option<CoreSplit> {
    let w: Vec<f64> = pts.iter().map(|p| 1.0 / p.1).collect();
    let y: Vec<f64> = pts.iter().map(|p| p.1).collect();
    let rows: Vec<Vec<f64>> = pts.iter().map(|p| vec![1.0 / p.0, 1.0]).collect();
    let (a, m, how) = match lsq::fit(&rows, &y, &w) {
        Some(f) if f.params[1] >= 0.0 && f.params[0] > 0.0 => (f.params[0], f.params[1], "a/f + m"),
        _ => {
            let rows: Vec<Vec<f64>> = pts.iter().map(|p| vec![1.0 / p.0]).collect();
            let f = lsq::fit(&rows, &y, &w)?;
            (f.params[0], 0.0, "a/f (m < 0 fitted, set to 0)")
        }
    };
    let max_rel_residual = pts
        .iter()
        .map(|(g, t)| ((a / g + m) - t).abs() / t)
        .fold(0.0, f64::max);
    Some(CoreSplit {
        cores,
        compute_s_at_1ghz: a,
        memory_s: m,
        frequencies: pts.len(),
        max_rel_residual,
        how,
    })
}

/// Splits every core count of `samples`. Counts at one frequency borrow the memory share of
/// the fitted counts around them; with no count at two frequencies every second scales with
/// the clock (`m = 0`, said in `how`).
pub fn split(samples: &[Sample]) -> Vec<CoreSplit> {
    let mut by_cores: BTreeMap<u32, Vec<(f64, f64)>> = BTreeMap::new();
    for s in samples {
        by_cores
            .entry(s.cores)
            .or_default()
            .push((s.freq / 1e9, s.time));
    }
    let fitted: Vec<CoreSplit> = by_cores
        .iter()
        .filter(|(_, p)| p.len() >= 2)
        .filter_map(|(c, p)| fit_count(*c, p))
        .collect();
    by_cores
        .iter()
        .map(|(c, p)| {
            if let Some(f) = fitted.iter().find(|f| f.cores == *c) {
                return f.clone();
            }
            let (ghz, t) = p[0];
            let share = borrowed_share(&fitted, *c, ghz);
            CoreSplit {
                cores: *c,
                compute_s_at_1ghz: (1.0 - share) * t * ghz,
                memory_s: share * t,
                frequencies: 1,
                max_rel_residual: 0.0,
                how: if fitted.is_empty() {
                    "one frequency: all time scales with the clock (m = 0)"
                } else {
                    "one frequency: memory share interpolated from the fitted core counts"
                },
            }
        })
        .collect()
}

/// The memory share at `ghz` interpolated linearly in `c` between the fitted counts around
/// `c` (the nearest one beyond them); 0 with none.
fn borrowed_share(fitted: &[CoreSplit], c: u32, ghz: f64) -> f64 {
    let lo = fitted.iter().rev().find(|f| f.cores < c);
    let hi = fitted.iter().find(|f| f.cores > c);
    match (lo, hi) {
        (Some(l), Some(h)) => {
            let t = f64::from(c - l.cores) / f64::from(h.cores - l.cores);
            l.memory_share(ghz) + t * (h.memory_share(ghz) - l.memory_share(ghz))
        }
        (Some(x), None) | (None, Some(x)) => x.memory_share(ghz),
        (None, None) => 0.0,
    }
}

/// Profile points for `samples` from their core counts' splits (`U_s = 1`, `C_s = c f T_s`).
pub fn points(samples: &[Sample], splits: &[CoreSplit]) -> Vec<BaselinePoint> {
    samples
        .iter()
        .filter_map(|s| {
            let sp = splits.iter().find(|x| x.cores == s.cores)?;
            let cf = f64::from(s.cores) * s.freq;
            let mem_time = sp.memory_s.min(0.9 * s.time);
            let mem = cf * mem_time;
            Some(BaselinePoint {
                cores: s.cores,
                freq: Hertz(s.freq),
                gpus: 0,
                cycles: cf * s.time,
                stall_cycles: mem,
                mem_stall_cycles: mem,
                instructions: None,
                utilisation: 1.0,
                wall_time: Seconds(s.time),
                energy: s.energy.map(Joules),
                device: None,
                measured: true,
                extra: Default::default(),
                measured_tree: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(cores: u32, ghz: f64, time: f64) -> Sample {
        Sample {
            cores,
            freq: ghz * 1e9,
            time,
            energy: None,
            repeats: 1,
        }
    }

    #[test]
    fn splits_clock_and_memory_time_and_borrows_the_share_for_single_frequency_counts() {
        // 8 cores: 4 s at 1 GHz of clock-bound time plus 1 s of memory time.
        let mut s: Vec<Sample> = [0.5, 1.0, 2.0]
            .iter()
            .map(|g| sample(8, *g, 4.0 / g + 1.0))
            .collect();
        s.push(sample(16, 1.0, 3.0));
        let sp = split(&s);
        assert!(
            (sp[0].compute_s_at_1ghz - 4.0).abs() < 1e-9 && (sp[0].memory_s - 1.0).abs() < 1e-9
        );
        assert!(sp[0].max_rel_residual < 1e-12);
        // 16 cores at 1 GHz borrows 8's share there, 1/5.
        assert!((sp[1].memory_s - 0.6).abs() < 1e-9, "{:?}", sp[1]);
        let p = points(&s, &sp);
        let one = &p[1];
        assert!((one.mem_stall_cycles / (8.0 * 1e9) - 1.0).abs() < 1e-9);
        assert_eq!(one.cycles, 8.0 * 1e9 * 5.0);
    }
}
