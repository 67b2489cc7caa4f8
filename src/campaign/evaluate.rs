//! A campaign step's refit and replan, in memory: the runs so far fitted as `fit` fits them
//! ([`crate::calibrate::fit::fit`]) and planned over `1..=max_nodes` as `plan` plans
//! ([`crate::search::planner::plan`]), with what the user should know ([`Evaluated::findings`]).
//! What a stage refuses is the step's finding, never an internal error.

use super::settings::Settings;
use super::source::Taken;
use crate::artefact::measured::MeasuredLine;
use crate::calibrate::fit::{self, FitOptions, Fitted, MachineDoc};
use crate::calibrate::runs::Runs;
use crate::calibrate::trust::{Accept, Checks};
use crate::model::machine::Machine;
use crate::search::inputs::{Loaded, SpaceRequest};
use crate::search::plan::Plan;
use crate::search::planner::{self, Request};

/// The runs so far, fitted and planned.
#[derive(Debug, Clone)]
pub struct Evaluated {
    /// The fit: the profile, the power, the machine file with it.
    pub fitted: Fitted,
    /// The plan over `1..=max_nodes`.
    pub plan: Plan,
    /// What the fit and the plan found that the user should know.
    pub findings: Vec<String>,
}

/// What the campaign fits the runs with: the model error accepted (a campaign goes on and the
/// final fit says it), the machine file given (its power, or the fitted one).
fn fit_options(settings: &Settings, machine: &MachineDoc) -> FitOptions {
    FitOptions {
        program: settings.program.clone(),
        weak: settings.weak,
        rule: Default::default(),
        machine_out: Some(machine.file.clone()),
    }
}

/// Fits `runs` (kept in `settings.runs_file`, a line each after the header) and plans them;
/// `Err` says why there is no plan (what the fit or the plan refused).
pub fn evaluate(
    runs: &[Taken],
    machine: &MachineDoc,
    settings: &Settings,
) -> Result<Evaluated, String> {
    let lines = runs
        .iter()
        .enumerate()
        .map(|(i, t)| MeasuredLine {
            line: i as u64 + 2,
            row: t.row.clone(),
        })
        .collect();
    let refused = |what: &str, e: &dyn std::fmt::Display| {
        format!(
            "{what} of the runs so far was refused ({} node counts in {}): {e}",
            distinct_counts(runs),
            settings.runs_file.display()
        )
    };
    let kept = Runs::kept(&settings.runs_file, lines).map_err(|e| refused("the reading", &e))?;
    let fitted = fit::fit(&kept, machine, &fit_options(settings, machine))
        .map_err(|e| refused("the fit", &e))?;
    let mut findings = fit_findings(&fitted, machine, runs);
    let nodes = (1..=settings.max_nodes).collect();
    let plan = plan(&fitted, machine, (settings, nodes), &mut findings)
        .map_err(|e| refused("the plan", &e))?;
    Ok(Evaluated {
        fitted,
        plan,
        findings,
    })
}

/// `evaluated`'s fit planned on `n` nodes alone (the other axes chosen there, as `plan
/// --nodes n` chooses them, a slowdown's reference among them too). `Err` says why there is no
/// plan.
pub fn plan_at(
    evaluated: &Evaluated,
    machine: &MachineDoc,
    settings: &Settings,
    n: u32,
) -> Result<Plan, String> {
    plan(
        &evaluated.fitted,
        machine,
        (settings, vec![n]),
        &mut Vec::new(),
    )
    .map_err(|e| {
        let on = crate::units::count(n, "node", "nodes");
        format!("the plan on {on} alone was refused: {e}")
    })
}

/// The node counts among `runs`.
fn distinct_counts(runs: &[Taken]) -> usize {
    let mut n: Vec<u32> = runs.iter().map(|t| t.row.nodes).collect();
    n.sort_unstable();
    n.dedup();
    n.len()
}

/// What the fit could not give: a node law over the counts measured, power from the energy.
fn fit_findings(fitted: &Fitted, machine: &MachineDoc, runs: &[Taken]) -> Vec<String> {
    let mut found = Vec::new();
    if fitted.profile().node_law.is_none() && runs.iter().any(|t| t.row.nodes > 1) {
        found.push(
            "no node law could be fitted on these counts: predictions beyond one node rest on \
             the model's terms alone; measure another count"
                .to_string(),
        );
    }
    match (
        &fitted.power_gap,
        fitted.measured_energy,
        machine.lacks.power,
    ) {
        (Some(gap), true, true) => found.push(format!(
            "power not fitted ({gap}), and {} has no [power]: planned by time and node-hours \
             until the energy measured can give power",
            machine.file.display()
        )),
        (Some(gap), true, false) => found.push(format!(
            "power not fitted ({gap}): energies predicted from the [power] of {}",
            machine.file.display()
        )),
        _ => {}
    }
    found
}

/// The fitted profile planned over `nodes` (the cores and frequencies asked for that the
/// profile measured), against the machine with the fitted power where there is one.
fn plan(
    fitted: &Fitted,
    machine: &MachineDoc,
    (settings, nodes): (&Settings, Vec<u32>),
    findings: &mut Vec<String>,
) -> crate::error::InputResult<Plan> {
    let planned_on = match &fitted.machine_text {
        Some(text) => Machine::from_toml_for_plan(&machine.file, text)?.0,
        None => machine.for_plan()?,
    };
    let accept = Accept {
        model_error: true,
        other_machine: false,
    };
    let mut profile = fitted.profile().clone();
    // Named in the plan's messages by the runs it was fitted on.
    profile.file = format!("the profile fitted on {}", settings.runs_file.display()).into();
    let mut inputs = Loaded::new(planned_on, profile, accept)?;
    if let (true, Some(b)) = (inputs.machine.time_only(), settings.query.budget) {
        return Err(crate::error::InputError::Argument {
            flag: "--budget".into(),
            expected: "no energy budget: the runs measured no energy that gave power and the \
                       machine file has no [power], so energy is unavailable (give --deadline \
                       or --slowdown)"
                .into(),
            got: crate::units::fmt_energy(b),
        });
    }
    let have = fitted.profile().core_counts();
    let cores = settings.cores.as_ref().map(|c| {
        let kept: Vec<u32> = c.iter().copied().filter(|c| have.contains(c)).collect();
        if kept.len() < c.len() {
            findings.push(format!(
                "planned at the cores a node measured ({}) of those asked for",
                crate::model::workload::compact_list(
                    &kept.iter().map(|&c| u64::from(c)).collect::<Vec<_>>()
                )
            ));
        }
        kept
    });
    let freqs = settings.freqs_hz.as_ref().map(|fs| {
        fs.iter()
            .filter_map(|f| inputs.machine.frequency_index(crate::units::Hertz(*f)))
            .collect()
    });
    let request = SpaceRequest {
        nodes: Some(nodes),
        cores: cores.filter(|c| !c.is_empty()),
        freqs,
        gpus: None,
        gpu_clocks: None,
    };
    let space = inputs.space(&request)?;
    let request = Request {
        query: settings.query,
        reference: None,
        checks: Checks {
            accept,
            ..Checks::default()
        },
    };
    Ok(planner::plan(&inputs, &space, &request)?.plan)
}
