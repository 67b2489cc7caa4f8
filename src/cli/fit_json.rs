//! `fit --json`: the figures `fit` prints, as one JSON object ([`FitOut`]).

use crate::artefact::fit::{
    CandidateOut, FIT_FORMAT, FitOut, FoldOut, NodeLawOut, PowerOut, SplitOut,
};
use crate::calibrate::from_measured::{FitOutcome, FittedPower};
use crate::calibrate::validate::Measured;
use crate::model::machine::Machine;
use crate::model::node_law::NodeFit;
use std::path::Path;

/// Distinct configurations (energy scopes aside), runs and node counts of the rows.
pub fn counts(rows: &[Measured]) -> (usize, usize, Vec<u32>) {
    let mut configs: Vec<_> = rows.iter().map(|r| r.key()).collect();
    configs.iter_mut().for_each(|k| k.scope = None);
    configs.sort_unstable();
    configs.dedup();
    let mut nodes: Vec<u32> = rows.iter().map(|r| r.config.nodes).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let runs = rows.iter().map(|r| r.runs.count).sum();
    (configs.len(), runs, nodes)
}

/// The whole fit as JSON; `wrote`, `notes` and the leave-one-out block are the caller's.
pub fn fit_json(
    f: &FitOutcome,
    (machine, rows): (&Machine, &[Measured]),
    (measured, program): (&Path, &str),
) -> FitOut {
    let (configurations, runs, node_counts) = counts(rows);
    FitOut {
        format: FIT_FORMAT.into(),
        measured: measured.display().to_string(),
        program: program.into(),
        configurations,
        runs,
        node_counts,
        layout: f.profile.layout.map(crate::model::layout::Layout::to_file),
        time_split: f
            .splits
            .iter()
            .map(|s| SplitOut {
                cores: s.cores,
                frequencies: s.frequencies,
                compute_s_at_1ghz: s.compute_s_at_1ghz,
                memory_s: s.memory_s,
                max_rel_residual: s.max_rel_residual,
                how: s.how.into(),
            })
            .collect(),
        node_law: f.profile.node_law.as_ref().map(node_law),
        power: power(f, machine),
        energy_scope: energy_scope(f, rows),
        power_not_fitted: f.power.not_fitted(),
        wrote: Vec::new(),
        notes: Vec::new(),
        leave_one_out: None,
    }
}

fn folds(v: &[(u32, f64)]) -> Vec<FoldOut> {
    v.iter()
        .map(|&(nodes, rel)| FoldOut { nodes, rel })
        .collect()
}

fn node_law(law: &NodeFit) -> NodeLawOut {
    NodeLawOut {
        measured_nodes: law.measured_nodes.clone(),
        rule: law.rule.clone(),
        candidates: law
            .candidates
            .iter()
            .map(|c| CandidateOut {
                form: c.form.clone(),
                weight: c.weight,
                law: c.law.describe(),
                folds: folds(&c.folds),
            })
            .collect(),
        combined: law.law().describe(),
        folds: folds(&law.folds),
        loo_rel: law.loo_rel(),
        residuals: folds(&law.residuals),
        repeat_rel: law.spread.repeat_rel,
        within_rel: law.spread.within_rel,
        per_doubling_rel: law.spread.per_doubling_rel,
    }
}

/// The energy scope of the rows with energy (`node`, `cpu`, `gpu`).
fn energy_scope(f: &FitOutcome, rows: &[Measured]) -> Option<String> {
    if let FittedPower::Nodes { fit, .. } = &f.power {
        return Some(fit.scope.csv_name().into());
    }
    rows.iter()
        .find_map(|r| r.energy.map(|e| e.1.csv_name().to_string()))
}

/// The power per frequency: node power where fitted over several nodes, else the one-node
/// power laws at the machine's frequencies.
fn power(f: &FitOutcome, machine: &Machine) -> Vec<PowerOut> {
    if let FittedPower::Nodes { fit: np, .. } = &f.power {
        let mut v: Vec<PowerOut> = np
            .fitted
            .iter()
            .map(|(fr, p, runs)| PowerOut {
                freq_hz: fr.0,
                idle_w: p.idle,
                core_w: p.core,
                runs: Some(*runs),
                residual_max: Some(p.residual_max),
                how: "fitted".into(),
            })
            .collect();
        v.extend(np.kept.iter().filter_map(|fr| {
            let i = machine.frequency_index(*fr)?;
            Some(PowerOut {
                freq_hz: fr.0,
                idle_w: np.power.idle[i].0,
                core_w: np.power.core_active[i].0,
                runs: None,
                residual_max: None,
                how: "kept".into(),
            })
        }));
        return v;
    }
    let FittedPower::Laws(laws, power) = &f.power else {
        return Vec::new();
    };
    let (lo, hi) = f.samples.iter().fold((f64::MAX, 0.0f64), |(l, h), s| {
        (l.min(s.freq), h.max(s.freq))
    });
    machine
        .frequencies
        .iter()
        .enumerate()
        .map(|(i, fr)| PowerOut {
            freq_hz: fr.0,
            idle_w: power.idle[i].0,
            core_w: power.core_active[i].0,
            runs: None,
            residual_max: Some(laws.max_residual()),
            how: if fr.0 < lo * 0.999 || fr.0 > hi * 1.001 {
                "extrapolated"
            } else {
                "fitted"
            }
            .into(),
        })
        .collect()
}
