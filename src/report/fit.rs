//! `fit`'s outputs: what it fitted, in text (the runs, the layout, the time split, the node
//! law, the power) or as one JSON object ([`FitOut`]) with the same figures.

use crate::artefact::fit::{
    CandidateOut, FIT_FORMAT, FitOut, FoldOut, NodeLawOut, PowerOut, SplitOut,
};
use crate::calibrate::from_measured::{FitOutcome, FittedPower};
use crate::calibrate::runs::Measured;
use crate::model::machine::Machine;
use crate::model::node_law::{NodeFit, sig};
use std::io::Write;
use std::path::Path;

/// `3 configurations from 6 runs on 2 node counts`, in the singular where it is one.
fn counted(rows: &[Measured]) -> String {
    let (configs, runs, nodes) = counts(rows);
    let n = |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    format!(
        "{} from {} on {}",
        n(configs, "configuration", "configurations"),
        n(runs, "run", "runs"),
        n(nodes.len(), "node count", "node counts")
    )
}

/// Prints the fit: its runs, layout, splits, node law, the power laws and the power per
/// frequency.
pub fn write_fit(
    f: &FitOutcome,
    (machine, rows): (&Machine, &[Measured]),
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(out, "fit: {}", counted(rows))?;
    if f.profile.uses_gpus() {
        return write_gpu_fit(f, out);
    }
    match f.profile.layout {
        Some(l) => writeln!(out, "layout: {} (from the ranks column)", l.describe())?,
        None => writeln!(
            out,
            "layout: not recorded (no ranks column, or no one rule): job scripts will name the \
             layout they assume"
        )?,
    }
    writeln!(out, "time split, T(f) = a/f + m at each core count:")?;
    writeln!(
        out,
        "  {:>5} {:>5} {:>14} {:>10} {:>9}  how",
        "cores", "freqs", "a (s at 1 GHz)", "m (s)", "residual"
    )?;
    for s in &f.splits {
        writeln!(
            out,
            "  {:>5} {:>5} {:>14.4} {:>10.4} {:>8.2}%  {}",
            s.cores,
            s.frequencies,
            s.compute_s_at_1ghz,
            s.memory_s,
            100.0 * s.max_rel_residual,
            s.how
        )?;
    }
    report_nodes(f, machine.ghz_decimals(), out)?;
    let (laws, power) = match &f.power {
        FittedPower::Laws(laws, power) => (laws, power),
        FittedPower::Nodes { .. } => return Ok(()),
        FittedPower::NoEnergy => return writeln!(out, "power: not fitted (no energy_j column)"),
        other => {
            let why = other.not_fitted().unwrap_or_default();
            return writeln!(out, "power: not fitted: {why}");
        }
    };
    writeln!(
        out,
        "power, P = P_idle(f) + c P_core(f) with x = f/GHz ({}, {}):",
        laws.method,
        crate::units::count(laws.residuals.len() as u64, "point", "points")
    )?;
    for line in crate::calibrate::power_fit::describe_lines(laws) {
        writeln!(out, "  {line}")?;
    }
    writeln!(
        out,
        "  largest power residual {:.2}%",
        100.0 * laws.max_residual()
    )?;
    let (lo, hi) = f.samples.iter().fold((f64::MAX, 0.0f64), |(l, h), s| {
        (l.min(s.freq), h.max(s.freq))
    });
    let d = machine.ghz_decimals();
    for (i, fr) in machine.frequencies.iter().enumerate() {
        let outside = if fr.0 < lo * 0.999 || fr.0 > hi * 1.001 {
            "  (extrapolated: outside the measured frequencies)"
        } else {
            ""
        };
        writeln!(
            out,
            "  {:>5.d$} GHz: P_idle {:>8.2} W, P_core {:>7.4} W{outside}",
            fr.ghz(),
            power.idle[i].0,
            power.core_active[i].0
        )?;
    }
    Ok(())
}

/// Prints the node law (terms, parameters, residuals, leave-one-out error) and node power.
fn report_nodes(f: &FitOutcome, d: usize, out: &mut dyn Write) -> std::io::Result<()> {
    for d in &f.derived {
        writeln!(out, "derived for the multi-node layouts: {d}")?;
    }
    if let Some(law) = &f.profile.node_law {
        report_law(law, out)?;
    }
    report_power(f, d, out)
}

/// Prints the node law: the candidates with their weights and out-of-sample errors, the
/// combined law and its own leave-one-out error, and the residuals.
pub fn report_law(law: &NodeFit, out: &mut dyn Write) -> std::io::Result<()> {
    let list = |v: &[u32]| crate::units::count_ranges(v.iter().copied());
    writeln!(
        out,
        "node law over nodes {} (X(n) = T(n) - T_model(n): waiting, 0 at {} node{}): {} \
         law{} the evidence allows, {}:",
        list(&law.measured_nodes),
        law.smallest(),
        if law.smallest() == 1 { "" } else { "s" },
        law.compared,
        if law.compared == 1 { "" } else { "s" },
        law.rule
    )?;
    let folds = |f: &[(u32, f64)]| -> String {
        f.iter()
            .map(|(n, e)| format!("{n}: {}", crate::units::signed_percent(*e, 1)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for c in &law.candidates {
        writeln!(
            out,
            "  weight {:>5.3}  {:<22} {}   left out {}",
            c.weight,
            c.form,
            c.law.describe(),
            if c.folds.is_empty() {
                "-".into()
            } else {
                folds(&c.folds)
            }
        )?;
    }
    writeln!(out, "  combined: {}", law.law().describe())?;
    if law.folds.is_empty() {
        writeln!(
            out,
            "  at most one node count beyond {}: no count to leave out, so the laws are weighed \
             alike and the intervals rest on the rule's priors; measure another node count",
            law.smallest()
        )?;
    } else {
        writeln!(
            out,
            "  combined law's leave-one-node-count-out error {:.2}% mean ({})",
            100.0 * law.loo_rel(),
            folds(&law.folds)
        )?;
    }
    let res: Vec<String> = law
        .residuals
        .iter()
        .map(|(n, r)| format!("{n}: {:.2}%", 100.0 * r))
        .collect();
    writeln!(out, "  mean residual by node count: {}", res.join(", "))?;
    writeln!(
        out,
        "  intervals: run-to-run {:.1}%, between counts {:.1}%, {:.1}% per doubling beyond{}",
        100.0 * law.spread.repeat_rel,
        100.0 * law.spread.within_rel,
        100.0 * law.spread.per_doubling_rel,
        no_interval(&law.spread)
    )?;
    for line in law.energy.iter().flat_map(|e| e.describe()) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// What an interval held at [`crate::limits::MOST_REL_SD`] means, or nothing: the repeats'
/// part (runs of one configuration that differ wildly) and the counts' part (a law that does
/// not carry from one count to the next) are said apart, each with what to check.
fn no_interval(s: &crate::model::node_law::Spread) -> String {
    let most = crate::limits::MOST_REL_SD;
    let mut said = Vec::new();
    if s.repeat_rel >= most {
        said.push(
            "the repeated runs of one configuration differ so much that no interval is left; \
             check them for a failed, mislabelled or disturbed run",
        );
    }
    if s.within_rel >= most || s.per_doubling_rel >= most {
        said.push(
            "the counts predict one another so badly that beyond them there is no interval; \
             measure the counts you plan, or check that the runs scale as fitted, strong or \
             --weak",
        );
    }
    match said.is_empty() {
        true => String::new(),
        false => format!(
            " (held at 1000%, the most a profile keeps: {})",
            said.join("; ")
        ),
    }
}

/// Node power per frequency, the frequencies printed with `d` decimals.
fn report_power(f: &FitOutcome, d: usize, out: &mut dyn Write) -> std::io::Result<()> {
    let FittedPower::Nodes {
        fit: np,
        laws_refused,
    } = &f.power
    else {
        return Ok(());
    };
    if let Some(why) = laws_refused {
        writeln!(
            out,
            "power laws across frequencies not fitted ({why}): node power fitted within bounds \
             at each frequency instead"
        )?;
    }
    writeln!(
        out,
        "node power, E = P_idle n T + P_core x busy core-seconds, bounded at 0 ({}):",
        np.scope.name()
    )?;
    for (fr, p, runs) in &np.fitted {
        writeln!(
            out,
            "  {:>5.d$} GHz: P_idle {} W per node, P_core {} W per busy core ({runs} runs; \
             energy residual {:.2}% root-mean-square, {:.2}% largest{})",
            fr.ghz(),
            sig(p.idle),
            sig(p.core),
            100.0 * p.residual_rms,
            100.0 * p.residual_max,
            p.bound.map_or(String::new(), |b| format!("; {b}"))
        )?;
    }
    for fr in &np.kept {
        writeln!(
            out,
            "  {:>5.d$} GHz: not fitted (no energy measured there): kept from the machine file",
            fr.ghz()
        )?;
    }
    Ok(())
}

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

/// What a fit of GPU runs says of power: the machine's `[power]` is kept.
const GPU_POWER: &str = "GPU runs: the GPU's power over the clock is the workload's clock law \
     (the profile's gpu_clock, where 3 or more clocks have GPU energy); the machine file's [power] \
     is not changed (--machine-out writes it as given)";

/// A fit of GPU runs: its clocks and the clock law.
fn write_gpu_fit(f: &FitOutcome, out: &mut dyn Write) -> std::io::Result<()> {
    let Some(p) = f.profile.baseline.first() else {
        return Ok(());
    };
    let Some(law) = &f.profile.gpu_clock else {
        let (others, each) = match f.profile.baseline.len() - 1 {
            0 => (String::new(), ""),
            n => (
                format!(
                    " and {}",
                    crate::units::count(n as u64, "other configuration", "other configurations")
                ),
                " each",
            ),
        };
        let (at, keep) = match f.profile.measured_gpu_clock_mhz {
            Some(m) => (
                format!(", {m} MHz"),
                "; the profile keeps the clock, and a job script asks for it",
            ),
            None => (String::new(), ""),
        };
        return writeln!(
            out,
            "GPU runs at one clock{at} ({}, {} GHz, {}{others}): a point at that clock{each}, \
             no GPU clock law (measure 3 or more clocks to plan the clock){keep}",
            crate::units::count(p.cores, "core", "cores"),
            p.freq.ghz(),
            crate::units::count(p.gpus, "GPU", "GPUs")
        );
    };
    writeln!(
        out,
        "GPU clock law ({}, {} GHz, {}) on {}; baseline at {} MHz",
        crate::units::count(p.cores, "core", "cores"),
        p.freq.ghz(),
        crate::units::count(p.gpus, "GPU", "GPUs"),
        law.range_text(),
        law.reference_mhz
    )?;
    writeln!(
        out,
        "  time T(fg) = a/fg + m: a = {:.6e} s MHz, m = {:.6e} s; largest residual {:.2}% (kept: \
         the measured clocks are reproduced)",
        law.time.a_s_mhz,
        law.time.m_s,
        100.0 * law.time.law_residual_max
    )?;
    match &law.power {
        Some(pw) => writeln!(
            out,
            "  GPU power in kernels P0 + k (fg / 1 GHz)^alpha: P0 = {:.2} W, k = {:.2} W, alpha = \
             {}{}; largest residual {:.2}%{}",
            pw.p0_w,
            pw.k_w,
            pw.alpha,
            pw.alpha_from
                .as_ref()
                .map_or(String::new(), |from| format!(" (set by {from})")),
            100.0 * pw.residual_max,
            match pw.residuals_w.is_empty() {
                true => "",
                false => " (kept: the measured clocks' GPU energy is reproduced)",
            }
        )?,
        None => writeln!(
            out,
            "  GPU power: no GPU energy measured, the time law alone"
        )?,
    }
    for line in &f.derived {
        writeln!(out, "  {line}")?;
    }
    writeln!(out, "power: {GPU_POWER}")
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
        power_not_fitted: match f.profile.uses_gpus() {
            true => Some(GPU_POWER.into()),
            false => f.power.not_fitted(),
        },
        gpu_clock: f.profile.gpu_clock.clone(),
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
                residual_rms: Some(p.residual_rms),
                bound: p.bound.map(String::from),
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
                residual_rms: None,
                bound: None,
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
            residual_rms: None,
            bound: None,
            how: if fr.0 < lo * 0.999 || fr.0 > hi * 1.001 {
                "extrapolated"
            } else {
                "fitted"
            }
            .into(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::node_law::Spread;

    #[test]
    fn an_interval_held_at_the_most_a_profile_keeps_is_said() {
        let most = crate::limits::MOST_REL_SD;
        let held = Spread {
            repeat_rel: 0.01,
            within_rel: 0.2,
            per_doubling_rel: most,
        };
        let said = no_interval(&held);
        assert!(said.contains("held at 1000%"), "{said}");
        assert!(
            said.contains("the counts predict") && !said.contains("repeated"),
            "{said}"
        );
        let fine = Spread {
            per_doubling_rel: 0.3,
            ..held
        };
        assert_eq!(no_interval(&fine), "");
        // Wild repeats are said as such, not blamed on the counts.
        let wild = Spread {
            repeat_rel: most,
            ..fine
        };
        let said = no_interval(&wild);
        assert!(
            said.contains("repeated runs") && !said.contains("the counts"),
            "{said}"
        );
    }
}
