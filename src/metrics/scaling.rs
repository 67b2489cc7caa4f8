//! Scaling across runs of one program (METRICS.md section 3): computation, instruction, IPC and
//! frequency scaling, global efficiency and speedup against the run with the fewest processes.

use super::run::Run;
use super::tree::ratio;
use serde::Serialize;

/// Strong (same problem) or weak (problem grows with processes) scaling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Same total problem.
    Strong,
    /// Problem per process constant.
    Weak,
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mode::Strong => "strong",
            Mode::Weak => "weak",
        })
    }
}

/// One run in the scaling table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScalingPoint {
    /// The run's source.
    pub source: String,
    /// Processes.
    pub processes: u32,
    /// Parallel efficiency of the run.
    pub parallel_efficiency: f64,
    /// `sum U_ref / sum U` (x p / p_ref when weak).
    pub computation_scaling: f64,
    /// `sum I_ref / sum I` (x p / p_ref when weak), when counted.
    pub instruction_scaling: Option<f64>,
    /// `IPC / IPC_ref`.
    pub ipc_scaling: Option<f64>,
    /// `f / f_ref`.
    pub frequency_scaling: Option<f64>,
    /// `PE x computation scaling`.
    pub global_efficiency: f64,
    /// `T_ref / T` (x p / p_ref when weak).
    pub speedup: f64,
}

/// The scaling table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scaling {
    /// Strong or weak.
    pub mode: Mode,
    /// Whether the mode was detected (`false`: forced by the user).
    pub detected: bool,
    /// Processes of the reference run.
    pub reference_processes: u32,
    /// One per run, by processes.
    pub points: Vec<ScalingPoint>,
}

/// Runs that can enter a scaling table: one per source, with POP metrics and useful time.
pub fn scaling(runs: &[Run], forced: Option<Mode>) -> Option<Scaling> {
    let mut rs: Vec<&Run> = runs
        .iter()
        .filter(|r| r.pop.is_some() && r.region.as_deref().is_none_or(|g| g == "Global"))
        .collect();
    if rs.len() < 2 {
        return None;
    }
    rs.sort_by_key(|r| r.ranks);
    let reference = rs[0];
    let useful = |r: &Run| r.useful_s;
    // Detection: instructions (or useful time) per process roughly constant -> weak.
    let work = |r: &Run| {
        r.counters
            .map(|c| c.instructions)
            .unwrap_or_else(|| useful(r))
    };
    let last = rs[rs.len() - 1];
    let growth = ratio(work(last), work(reference));
    let procs = ratio(f64::from(last.ranks), f64::from(reference.ranks));
    let detected_mode = if growth > (1.0 + procs) / 2.0 {
        Mode::Weak
    } else {
        Mode::Strong
    };
    let mode = forced.unwrap_or(detected_mode);
    let points = rs
        .iter()
        .map(|r| {
            let weak = if mode == Mode::Weak {
                f64::from(r.ranks) / f64::from(reference.ranks)
            } else {
                1.0
            };
            let pe = r.pop.map(|p| p.parallel_efficiency).unwrap_or(0.0);
            let comp = ratio(useful(reference), useful(r)) * weak;
            let (ins, ipc, freq) = match (r.counters, reference.counters) {
                (Some(c), Some(c0)) => (
                    Some(ratio(c0.instructions, c.instructions) * weak),
                    Some(ratio(c.ipc, c0.ipc)),
                    Some(ratio(c.frequency_ghz, c0.frequency_ghz)),
                ),
                _ => (None, None, None),
            };
            ScalingPoint {
                source: r.source.clone(),
                processes: r.ranks,
                parallel_efficiency: pe,
                computation_scaling: comp,
                instruction_scaling: ins,
                ipc_scaling: ipc,
                frequency_scaling: freq,
                global_efficiency: pe * comp,
                speedup: ratio(reference.elapsed_s, r.elapsed_s) * weak,
            }
        })
        .collect();
    Some(Scaling {
        mode,
        detected: forced.is_none(),
        reference_processes: reference.ranks,
        points,
    })
}
