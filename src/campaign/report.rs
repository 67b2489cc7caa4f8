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
    node_runs: u32,
    runs_file: String,
    profile_file: String,
}

impl Report {
    /// The report of `outcome`, whose runs are in `runs_file` and profile in `profile_file`.
    pub fn new(outcome: Outcome, runs_file: &str, profile_file: &str) -> Report {
        Report {
            format: "jouleplan-campaign/1",
            steps: outcome.steps,
            stopped: outcome.stopped,
            recommendation: outcome.recommendation,
            model_pick: outcome.model_pick,
            measured_best: outcome.measured_best,
            model_differs: outcome.model_differs,
            max_nodes: outcome.max_nodes,
            file_power: outcome.file_power,
            measured_nodes: outcome.measured_nodes,
            node_hours: outcome.node_hours,
            node_runs: outcome.node_runs,
            runs_file: runs_file.into(),
            profile_file: profile_file.into(),
        }
    }
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
        (0, false) => {
            format!("no new step (resumed: nothing left to measure); measured node counts {counts}")
        }
        (1, false) => format!("1 step measured node counts {counts}"),
        (k, false) => format!("{k} steps measured node counts {counts}"),
    };
    writeln!(
        out,
        "campaign: {steps} at {:.3} node-hours ({} node-runs)",
        r.node_hours, r.node_runs
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
    let fit = format!(
        "jouleplan fit --measured {} --machine {} --profile-out P.json",
        shell_word(&r.runs_file),
        shell_word(machine)
    );
    let then = match &power {
        Some(Ok(())) => format!("the machine's power from them: {fit} --machine-out M.toml"),
        Some(Err(why)) => {
            format!("no power could be fitted from the energy measured ({why}): {fit}")
        }
        None if r.file_power => format!(
            "no energy was measured, so plans predict energy from the machine file's [power]: \
             {fit}"
        ),
        None => format!("no energy was measured, so plans rank by time and node-hours: {fit}"),
    };
    writeln!(
        out,
        "runs in {}; profile in {}; {then}",
        r.runs_file, r.profile_file
    )?;
    let planned_on = match power {
        Some(Ok(())) => "M.toml".to_string(),
        _ => shell_word(machine),
    };
    let nodes = match (&r.recommendation, &r.model_pick) {
        (Some(a), Some(b)) if a.nodes != b.nodes => a.nodes.to_string(),
        _ => format!("1-{}", r.max_nodes),
    };
    let words: String = flags
        .iter()
        .map(|(f, v)| {
            format!(
                " {f} {}",
                shlex::try_quote(v).map_or(v.clone(), |q| q.into())
            )
        })
        .collect();
    writeln!(
        out,
        "then the recommendation: jouleplan plan --machine {planned_on} --profile P.json --nodes \
         {nodes}{words}"
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
