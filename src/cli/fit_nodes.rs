//! `jouleplan fit` on runs over several nodes: the node law and node power as printed, and the
//! machine file with the fitted node power.

use crate::calibrate::from_measured::{FitOutcome, FittedPower};
use crate::calibrate::machine_edit;
use crate::calibrate::multi_node::NodePowerFit;
use crate::model::machine::Machine;
use crate::model::node_law::{NodeFit, sig};
use std::io::Write;
use std::path::Path;

/// Prints the node law (terms, parameters, residuals, leave-one-out error) and node power.
pub fn report(f: &FitOutcome, out: &mut dyn Write) -> std::io::Result<()> {
    for d in &f.derived {
        writeln!(out, "derived for the multi-node layouts: {d}")?;
    }
    if let Some(law) = &f.profile.node_law {
        report_law(law, out)?;
    }
    report_power(f, out)
}

/// Prints the node law: the candidates with their weights and out-of-sample errors, the
/// combined law and its own leave-one-out error, and the residuals.
pub fn report_law(law: &NodeFit, out: &mut dyn Write) -> std::io::Result<()> {
    let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
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
            .map(|(n, e)| format!("{n}: {:+.1}%", 100.0 * e))
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
        "  intervals: run-to-run {:.1}%, between counts {:.1}%, {:.1}% per doubling beyond",
        100.0 * law.spread.repeat_rel,
        100.0 * law.spread.within_rel,
        100.0 * law.spread.per_doubling_rel
    )?;
    for line in law.energy.iter().flat_map(|e| e.describe()) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

fn report_power(f: &FitOutcome, out: &mut dyn Write) -> std::io::Result<()> {
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
            "  {:>5.2} GHz: P_idle {} W per node, P_core {} W per busy core ({runs} runs; \
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
            "  {:>5.2} GHz: not fitted (no energy measured there): kept from the machine file",
            fr.ghz()
        )?;
    }
    Ok(())
}

/// The machine file's text with the fitted node power, checked by reading it back.
pub fn machine_with_node_power(
    path: &Path,
    text: &str,
    machine: &Machine,
    np: &NodePowerFit,
    csv: &Path,
) -> anyhow::Result<String> {
    let power = &np.power;
    let kept = if np.kept.is_empty() {
        String::new()
    } else {
        format!(
            "; kept from the file at {} GHz (no energy measured there)",
            np.kept
                .iter()
                .map(|f| format!("{:.2}", f.ghz()))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let source = format!(
        "measured: `jouleplan fit` on {} ({} runs, {}, {}): E = P_idle n T + P_core x busy \
         core-seconds, bounded at 0, at {} GHz{kept}; largest energy residual {:.2}%; \
         core_stall_w = core_active_w and memory_w = 0 (time and energy alone cannot separate \
         them)",
        csv.display(),
        np.fitted.iter().map(|x| x.2).sum::<usize>(),
        np.scope.name(),
        machine_edit::today_utc(),
        np.fitted
            .iter()
            .map(|x| format!("{:.2}", x.0.ghz()))
            .collect::<Vec<_>>()
            .join(", "),
        100.0 * power.fit_residual_rel.unwrap_or(0.0)
    );
    Ok(machine_edit::write_power(
        path,
        text,
        machine,
        power,
        (
            power.fit_residual_rel.unwrap_or(0.0),
            power.fit_residual_rms,
        ),
        &source,
    )?)
}
