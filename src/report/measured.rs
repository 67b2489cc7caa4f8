//! Measured runs shown beside the predictions (`report --measured`): each run's measured time
//! and energy next to the model's at the same configuration, and the runs the time-energy
//! chart can mark (those whose energy is of the plan's scope).

use super::markup::{config_cells, esc};
use crate::model::Config;
use crate::model::energy_scope::EnergyScope;
use crate::units::{Joules, Seconds, fmt_duration, fmt_energy};
use std::fmt::Write as _;

/// One measured configuration (the mean of its repeats) and the model's prediction there.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredRun {
    /// The configuration.
    pub config: Config,
    /// Total MPI ranks, when the runs give them.
    pub ranks: Option<u32>,
    /// How many runs the means are of.
    pub runs: usize,
    /// Measured wall time, s.
    pub time_s: f64,
    /// Measured energy, J, and what it covers.
    pub energy: Option<(f64, EnergyScope)>,
    /// Predicted time, s, where the model predicts the configuration.
    pub predicted_time_s: Option<f64>,
    /// Predicted energy of the measured scope, J.
    pub predicted_energy_j: Option<f64>,
    /// Why nothing was predicted, when so.
    pub not_predicted: Option<String>,
}

/// The runs the time-energy chart marks: `(time s, energy J)` of those whose energy is of
/// `scope`, the scope of every prediction on it.
pub fn drawable(runs: &[MeasuredRun], scope: EnergyScope) -> Vec<(f64, f64)> {
    runs.iter()
        .filter_map(|r| match r.energy {
            Some((e, s)) if s == scope => Some((r.time_s, e)),
            _ => None,
        })
        .collect()
}

/// A relative error cell: `+1.2%`, or `-` without both numbers.
fn error_cell(predicted: Option<f64>, measured: Option<f64>) -> String {
    match (predicted, measured) {
        (Some(p), Some(m)) if m > 0.0 => crate::units::signed_percent(p / m - 1.0, 1),
        _ => "-".into(),
    }
}

/// The section: what the chart marks, and one row a measured configuration.
pub fn section(w: &mut String, runs: &[MeasuredRun], file: &str, scope: EnergyScope) {
    let _ = writeln!(
        w,
        "<h2 id=\"measured-runs\">Measured runs beside the predictions</h2>"
    );
    let drawn = drawable(runs, scope).len();
    let other: Vec<&str> = runs
        .iter()
        .filter_map(|r| r.energy.map(|e| e.1))
        .filter(|s| *s != scope)
        .map(EnergyScope::name)
        .collect();
    let mut note = format!(
        "{} measured configurations from <code>{}</code>; the time-energy chart marks the {drawn} \
         with {} as orange triangles.",
        runs.len(),
        esc(file),
        scope.name()
    );
    if !other.is_empty() {
        let _ = write!(
            note,
            " {} measured {} are not drawn: the predictions are {}, not comparable directly.",
            other.len(),
            esc(other[0]),
            scope.name()
        );
    }
    let without = runs.iter().filter(|r| r.energy.is_none()).count();
    if without > 0 {
        let _ = write!(note, " {without} measured no energy and are not drawn.");
    }
    let _ = writeln!(w, "<p>{note}</p>");
    // Runs at several GPU clocks are told apart by a clock column, as the front's rows are.
    let clocked = runs.iter().any(|r| r.config.gpu_clock_mhz.is_some());
    let _ = writeln!(
        w,
        "<table id=\"measured\"><tr><th>nodes</th><th>cores</th><th>GHz</th><th>GPUs</th>{}\
         <th>ranks</th><th>runs</th><th>time measured</th><th>time predicted</th><th>error</th>\
         <th class=\"l\">energy scope</th><th>energy measured</th><th>energy predicted</th>\
         <th>error</th></tr>",
        if clocked { "<th>GPU MHz</th>" } else { "" }
    );
    for r in runs {
        row(w, r, clocked);
    }
    let _ = writeln!(w, "</table>");
}

/// One measured configuration as a table row (with its GPU clock where `clocked`).
fn row(w: &mut String, r: &MeasuredRun, clocked: bool) {
    let c = &r.config;
    let t = |v: Option<f64>| v.map_or("-".to_string(), |s| fmt_duration(Seconds(s)));
    let e = |v: Option<f64>| v.map_or("-".to_string(), |j| fmt_energy(Joules(j)));
    let predicted_time = match (&r.not_predicted, r.predicted_time_s) {
        (Some(why), _) => format!("not predicted: {why}"),
        (None, p) => t(p),
    };
    let _ = writeln!(
        w,
        "<tr>{}{}<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td>\
         <td>{}</td><td>{}</td><td>{}</td></tr>",
        config_cells(c),
        match (clocked, c.gpu_clock_mhz) {
            (false, _) => String::new(),
            (true, Some(m)) => format!("<td>{m}</td>"),
            (true, None) => "<td>-</td>".into(),
        },
        r.ranks.map_or_else(
            || (u64::from(c.nodes) * u64::from(c.cores)).to_string(),
            |n| n.to_string()
        ),
        r.runs,
        esc(&t(Some(r.time_s))),
        esc(&predicted_time),
        error_cell(r.predicted_time_s, Some(r.time_s)),
        r.energy.map_or("-", |x| x.1.name()),
        esc(&e(r.energy.map(|x| x.0))),
        esc(&e(r.predicted_energy_j)),
        error_cell(r.predicted_energy_j, r.energy.map(|x| x.0)),
    );
}
