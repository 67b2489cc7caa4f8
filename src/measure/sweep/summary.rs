//! Each point's wall time, hyperfine style.

use crate::measure::record::{self, Planned, SweepRecord};
use std::collections::BTreeMap;

/// Mean, standard deviation and range of each point's wall time, hyperfine style, with a
/// warning where the spread exceeds 10%.
pub fn summarise(rec: &SweepRecord) -> Vec<String> {
    let mut groups: BTreeMap<record::PlannedKey, Vec<f64>> = BTreeMap::new();
    for r in rec.runs.iter().filter(|r| r.ok) {
        groups.entry(r.planned().key()).or_default().push(r.wall_s);
    }
    let mut lines = Vec::new();
    for ((nodes, (c, khz, g), mhz), w) in groups {
        let n = w.len() as f64;
        let mean = w.iter().sum::<f64>() / n;
        let rel = record::rel_spread(&w);
        let (lo, hi) = w
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
        let point = Planned {
            nodes,
            cores: c,
            freq_hz: khz as f64 * 1e3,
            gpus: g,
            gpu_clock_mhz: (mhz > 0).then_some(mhz),
        };
        lines.push(format!(
            "{}: {mean:.3} s ± {:.3} s (min {lo:.3} … max {hi:.3}, {} runs){}",
            point.describe(),
            rel * mean,
            w.len(),
            if rel > crate::artefact::sweep::NOISY_SPREAD {
                format!(
                    "\n  warning: run-to-run spread {:.1}% (> 10%): the time there is uncertain by \
                     about as much, which plan notes but no interval carries; add --repeat, \
                     --warmup, or measure on a quieter node",
                    100.0 * rel
                )
            } else {
                String::new()
            }
        ));
    }
    lines
}
