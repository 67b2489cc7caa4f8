//! A campaign's end as the user reads it: one JSON object ([`Report`],
//! `jouleplan-campaign/1`), or a few lines with the commands that reproduce its
//! recommendation ([`summary`]).

use super::run::Outcome;
use super::step::{Step, said};
use serde::Serialize;
use std::io::Write;

/// The campaign's JSON.
#[derive(Debug, Serialize)]
pub struct Report {
    format: &'static str,
    steps: Vec<Step>,
    /// The steps of the campaign this one resumed, before `steps` (0: not resumed).
    resumed_steps: usize,
    stopped: String,
    recommendation: Option<super::step::Rec>,
    model_pick: Option<super::step::Rec>,
    measured_best: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model_differs: Option<String>,
    #[serde(skip)]
    max_nodes: u32,
    #[serde(skip)]
    file_power: bool,
    measured_nodes: Vec<u32>,
    node_hours: f64,
    /// The node-hours of runs that gave no time (stopped at their budget limit; launched,
    /// failed), within `node_hours` (absent where none).
    #[serde(skip_serializing_if = "is_zero")]
    unmeasured_node_hours: f64,
    /// The run the budget stopped (absent where none did).
    #[serde(skip_serializing_if = "Option::is_none")]
    budget_stop: Option<super::source::Stopped>,
    node_runs: u32,
    runs_file: String,
    /// The profile of the last fit (null where there was none).
    profile_file: Option<String>,
    /// The machine file with the power fitted from the runs (null where none was fitted).
    machine_file: Option<String>,
    /// The record of every launched run, which `--resume` goes on from (null in a replay).
    #[serde(skip_serializing_if = "Option::is_none")]
    record_file: Option<String>,
}

impl Report {
    /// The report of `outcome`, whose runs are in `runs_file`, and whose last fit wrote
    /// `files`: the profile, the machine file with the fitted power, and the record of every
    /// launched run, where there are.
    pub fn new(
        outcome: Outcome,
        runs_file: &str,
        files: (Option<String>, Option<String>, Option<String>),
    ) -> Report {
        let (profile_file, machine_file, record_file) = files;
        Report {
            format: "jouleplan-campaign/1",
            steps: outcome.steps,
            resumed_steps: outcome.resumed_steps,
            stopped: outcome.stopped,
            recommendation: outcome.recommendation,
            model_pick: outcome.model_pick,
            measured_best: outcome.measured_best,
            model_differs: outcome.model_differs,
            max_nodes: outcome.max_nodes,
            file_power: outcome.file_power,
            measured_nodes: outcome.measured_nodes,
            node_hours: outcome.node_hours,
            unmeasured_node_hours: outcome.unmeasured_node_hours,
            budget_stop: outcome.budget_stop,
            node_runs: outcome.node_runs,
            runs_file: runs_file.into(),
            profile_file,
            machine_file,
            record_file,
        }
    }
}

/// Whether a figure is 0 (left out of the JSON).
fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// What the campaign's energy gave: power fitted (`Ok`), energy that gave none (`Err(why)`),
/// or no energy measured (`None`).
pub type Power = Option<Result<(), String>>;

impl Outcome {
    /// What its energy gave.
    pub fn power(&self) -> Power {
        match (self.energy, &self.power_gap) {
            (false, _) => None,
            (true, None) => Some(Ok(())),
            (true, Some(why)) => Some(Err(why.clone())),
        }
    }
}

/// ` after N resumed` where the campaign resumed one that had taken steps.
fn resumed(steps: usize) -> String {
    match steps {
        0 => String::new(),
        k => format!(
            " (after {} resumed)",
            crate::units::count(k as u64, "step", "steps")
        ),
    }
}

/// The campaign's end in a few lines, with the commands that reproduce its recommendation
/// (`machine` and the runs' file as the user would type them; `flags`, the plan's other flags
/// the campaign was given, with their values).
pub fn summary(
    r: &Report,
    (machine, power, flags): (&str, Power, &[(&str, String)]),
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let counts = crate::units::count_ranges(r.measured_nodes.iter().copied());
    let steps = match (r.steps.len(), counts.is_empty()) {
        (_, true) => "nothing measured".to_string(),
        // A resumed campaign that had already ended measures nothing new.
        (0, false) => format!(
            "no new step after {}; measured node counts {counts}",
            crate::units::count(r.resumed_steps as u64, "resumed step", "resumed steps")
        ),
        (k, false) => format!(
            "{}{} measured node counts {counts}",
            crate::units::count(k as u64, "step", "steps"),
            resumed(r.resumed_steps)
        ),
    };
    writeln!(
        out,
        "campaign: {steps} at {} ({} node-runs)",
        crate::units::fmt_node_hours(r.node_hours),
        r.node_runs
    )?;
    writeln!(out, "stopped: {}", r.stopped)?;
    writeln!(out, "recommendation: {}", said(&r.recommendation))?;
    if let Some(why) = &r.model_differs {
        writeln!(
            out,
            "the fitted model's pick over 1-{}: {}; {why}",
            r.max_nodes,
            said(&r.model_pick)
        )?;
    }
    writeln!(out, "{}", files_said(r, machine, &power))?;
    let Some(profile) = &r.profile_file else {
        return Ok(());
    };
    let planned_on = r.machine_file.as_deref().unwrap_or(machine);
    let nodes = match (&r.recommendation, &r.model_pick) {
        (Some(a), Some(b)) if a.nodes != b.nodes => a.nodes.to_string(),
        _ => format!("1-{}", r.max_nodes),
    };
    let words: String = flags
        .iter()
        .map(|(f, v)| match v.is_empty() {
            true => format!(" {f}"),
            false => format!(
                " {f} {}",
                shlex::try_quote(v).map_or(v.clone(), |q| q.into())
            ),
        })
        .collect();
    writeln!(
        out,
        "then the recommendation: jouleplan plan --machine {} --profile {} --nodes \
         {nodes}{words}",
        shell_word(planned_on),
        shell_word(profile)
    )
}

/// Where the runs, the record to resume from, the profile and the machine file are, and
/// what the energy gave.
fn files_said(r: &Report, machine: &str, power: &Power) -> String {
    let record = match &r.record_file {
        Some(f) => format!(" (every run's record, which --resume goes on from, in {f})"),
        None => String::new(),
    };
    let Some(profile) = &r.profile_file else {
        return format!("runs in {}{record}; no profile was fitted", r.runs_file);
    };
    let fit = format!(
        "jouleplan fit --measured {} --machine {}",
        shell_word(&r.runs_file),
        shell_word(machine)
    );
    let (files, energy) = match (power, &r.machine_file) {
        (Some(Ok(())), Some(m)) => (
            format!("{profile} and the machine's power fitted from their energy in {m}"),
            String::new(),
        ),
        (Some(Err(why)), _) => (
            profile.clone(),
            format!("; no power could be fitted from the energy measured ({why})"),
        ),
        (None, _) if r.file_power => (
            profile.clone(),
            "; no energy was measured, so plans predict energy from the machine file's [power]"
                .to_string(),
        ),
        (None, _) => (
            profile.clone(),
            "; no energy was measured, so plans rank by time and node-hours".to_string(),
        ),
        (Some(Ok(())), None) => (
            profile.clone(),
            "; power was fitted, but no machine file with it was written".to_string(),
        ),
    };
    format!(
        "runs in {}{record}; profile in {files}, as `{fit}` fits them{energy}",
        r.runs_file
    )
}

/// A path as a shell word: quoted where it needs it, and `./` before a relative path that
/// would read as a flag.
fn shell_word(p: &str) -> String {
    let p = match p.starts_with('-') {
        true => format!("./{p}"),
        false => p.to_string(),
    };
    shlex::try_quote(&p).map_or(p.clone(), |q| q.into_owned())
}
