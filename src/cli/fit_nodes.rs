//! `jouleplan fit` on runs over several nodes: the node law and node power as printed, and the
//! machine file with the fitted node power.

use crate::calibrate::from_measured::FitOutcome;
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

/// Prints the node law: its terms and parameters, the runners-up, the leave-one-out error and
/// the residuals.
pub fn report_law(law: &NodeFit, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "node law over nodes {} (X(n) = T(n) - T_model(n): waiting, 0 at one node), chosen \
             by leave-one-node-count-out cross-validation among {} laws:",
        law.measured_nodes
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        law.compared
    )?;
    for (i, c) in law.candidates.iter().enumerate() {
        let mark = if i == 0 { "chosen  " } else { "        " };
        let extra = c.extrapolation_rel.map_or(String::new(), |e| {
            format!(", {:.2}% at the largest count from the others", 100.0 * e)
        });
        writeln!(
            out,
            "  {mark}{}   leave-one-out error {:.2}%{extra}",
            c.law.describe(),
            100.0 * c.loo_rel
        )?;
    }
    let res: Vec<String> = law
        .residuals
        .iter()
        .map(|(n, r)| format!("{n}: {:.2}%", 100.0 * r))
        .collect();
    writeln!(out, "  mean residual by node count: {}", res.join(", "))?;
    if law.candidates.len() == 1 && law.candidates[0].extrapolation_rel.is_none() {
        writeln!(
            out,
            "  one node count to leave out: the law's form could not be chosen by \
                 cross-validation (c log2(n) fitted); measure another node count"
        )?;
    }
    Ok(())
}

fn report_power(f: &FitOutcome, out: &mut dyn Write) -> std::io::Result<()> {
    let Some(np) = &f.node_power else {
        return Ok(());
    };
    if let Some(why) = &f.power_unidentified {
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
         core-seconds, bounded at 0, at {} GHz{kept}; root-mean-square energy residual {:.2}%; \
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
        power.fit_residual_rel.unwrap_or(0.0),
        &source,
    )?)
}
