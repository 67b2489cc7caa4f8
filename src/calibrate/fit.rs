//! `fit` as a function: measured runs ([`Runs`]) and a machine file ([`MachineDoc`]) in; the
//! fitted profile, the machine file with the fitted `[power]` (comments kept) and what `plan`
//! would refuse in them out ([`Fitted`]), with what the fit did and why ([`FitOutcome`]).
//! Nothing is read or written here: the caller reads the files and writes the outputs.

use super::from_measured::{self, FitOutcome, FittedPower};
use super::machine_edit;
use super::multi_node::NodePowerFit;
use super::node_fit::Rule;
use super::power_fit::PowerLaws;
use super::repeats::{ConfigKey, Without};
use super::runs::{Measured, Runs};
use super::trust::{self, Accept, Checks, Trust};
use super::validate::{self, Validation};
use crate::error::{InputError, InputResult};
use crate::model::machine::{Lacks, Machine, Power};
use crate::model::workload::Profile;
use std::path::{Path, PathBuf};

/// A machine file as `fit` reads it: a file without `[power]` or `[network]` is taken, and
/// [`Lacks`] says which is missing; its text is kept for the rewrite with the fitted power.
#[derive(Debug, Clone)]
pub struct MachineDoc {
    /// The file it was read from (or a bundled name), named in messages.
    pub file: PathBuf,
    /// Its text.
    pub text: String,
    /// The machine (zero power where it has no `[power]`).
    pub machine: Machine,
    /// What the file lacks.
    pub lacks: Lacks,
}

impl MachineDoc {
    /// Reads a machine file's text.
    pub fn new(file: &Path, text: String) -> InputResult<MachineDoc> {
        let (machine, lacks) = Machine::from_toml_for_fit(file, &text)?;
        Ok(MachineDoc {
            file: file.to_path_buf(),
            text,
            machine,
            lacks,
        })
    }

    /// The machine as `plan` reads this file: without `[power]` it plans by time and
    /// node-hours.
    pub fn for_plan(&self) -> InputResult<Machine> {
        Ok(Machine::from_toml_for_plan(&self.file, &self.text)?.0)
    }
}

/// How to fit.
#[derive(Debug, Clone, Default)]
pub struct FitOptions {
    /// The program's name in the profile.
    pub program: String,
    /// The runs over several nodes are weak scaling (each rank keeps its work).
    pub weak: bool,
    /// The node law's rule (the design study sets others than the default).
    pub rule: Rule,
    /// Where the machine file with the fitted power goes, named in its messages: the checks
    /// then plan against the fitted power. `None`: the machine is planned as given.
    pub machine_out: Option<PathBuf>,
}

/// What `fit` produced, and what `plan` would say of it.
#[derive(Debug, Clone)]
pub struct Fitted {
    /// The fits: samples, time splits, the profile (with its layout and node law) and power.
    pub outcome: FitOutcome,
    /// The machine file with the fitted `[power]`, where power was fitted and
    /// [`FitOptions::machine_out`] asked for it.
    pub machine_text: Option<String>,
    /// Why no power was fitted (`None`: it was).
    pub power_gap: Option<String>,
    /// Whether any run measured energy.
    pub measured_energy: bool,
    /// Whether the machine file has no `[power]`: without fitted power, plans are by time.
    pub unpowered: bool,
    /// What `plan` would refuse in the profile against the machine it is planned on (none
    /// where the plan is time only).
    pub problems: Vec<String>,
}

impl Fitted {
    /// The fitted profile.
    pub fn profile(&self) -> &Profile {
        &self.outcome.profile
    }

    /// Whether the profile is planned by time and node-hours only: no power fitted, and the
    /// machine file has none.
    pub fn time_only(&self) -> bool {
        self.unpowered && self.power_gap.is_some()
    }
}

/// Fits `runs` against `machine`: the time split, the node law, the power; the machine file
/// rewritten with the power where asked; and what `plan` would refuse in them.
pub fn fit(runs: &Runs, machine: &MachineDoc, options: &FitOptions) -> InputResult<Fitted> {
    if machine.lacks.network && runs.rows().iter().any(|r| r.config.nodes > 1) {
        return Err(InputError::Mismatch(format!(
            "{}: the machine file has no [network] section, which runs over several nodes \
             need; give it {}",
            machine.file.display(),
            crate::model::machine::NETWORK_HINT
        )));
    }
    if runs.rows().iter().any(|r| r.config.gpus > 0) {
        return fit_gpu(runs, machine, options);
    }
    let mut outcome = from_measured::fit_with_rule(
        runs.file(),
        (runs.rows(), runs),
        &machine.machine,
        &options.program,
        (options.weak, &options.rule),
    )?;
    outcome.profile.layout = layout_of(runs.rows());
    let power_gap = power_gap(&outcome.power, runs.file());
    let measured_energy = !matches!(outcome.power, FittedPower::NoEnergy);
    let machine_text = match &options.machine_out {
        Some(out) => machine_output(out, &outcome, machine, runs.file())?,
        None => None,
    };
    let mut fitted = Fitted {
        outcome,
        machine_text,
        power_gap,
        measured_energy,
        unpowered: machine.lacks.power,
        problems: Vec::new(),
    };
    if !fitted.time_only() {
        fitted.problems = planner_checks(&fitted, machine, options.machine_out.as_deref())?;
    }
    Ok(fitted)
}

/// `fit` on GPU runs ([`super::gpu_fit`]): the profile with its GPU clock law; the machine
/// file is written as given (the laws are the workload's, not the machine's).
fn fit_gpu(runs: &Runs, machine: &MachineDoc, options: &FitOptions) -> InputResult<Fitted> {
    let (profile, notes) =
        super::gpu_fit::gpu_profile(runs.file(), runs.rows(), &machine.machine, &options.program)?;
    let measured_energy = runs.rows().iter().any(|r| r.energy.is_some());
    Ok(Fitted {
        outcome: FitOutcome {
            samples: Vec::new(),
            splits: Vec::new(),
            profile,
            power: FittedPower::NoEnergy,
            derived: notes,
        },
        machine_text: options.machine_out.as_ref().map(|_| machine.text.clone()),
        power_gap: None,
        measured_energy,
        unpowered: machine.lacks.power,
        problems: Vec::new(),
    })
}

/// Why no power was fitted, in words naming the runs' file (`None` where it was).
fn power_gap(power: &FittedPower, file: &Path) -> Option<String> {
    match power {
        FittedPower::Laws(..) | FittedPower::Nodes { .. } => None,
        FittedPower::Unidentified(why) => Some(why.clone()),
        FittedPower::TooFew(with_energy) => Some(format!(
            "{} with energy in {}, too few to fit power, which needs two or more core counts on \
             one node or two or more runs over several nodes",
            crate::units::count(*with_energy as u64, "run", "runs"),
            file.display()
        )),
        FittedPower::NoEnergy => Some(format!("no energy_j column in {}", file.display())),
    }
}

/// The machine file's text with the fitted power, where power was fitted. A file without
/// `[power]` gets one; the network's own power is not separable from time and energy, so it
/// is 0 and said so (its idle draw is in idle_w).
fn machine_output(
    out: &Path,
    fitted: &FitOutcome,
    machine: &MachineDoc,
    csv: &Path,
) -> InputResult<Option<String>> {
    let text = if machine.lacks.power {
        format!(
            "{}\n[power]\n# not measured: time and energy alone cannot separate the network's \
             power; its idle draw is in idle_w\nnetwork_w = 0.0\n",
            machine.text
        )
    } else {
        machine.text.clone()
    };
    let m = &machine.machine;
    let new = match &fitted.power {
        FittedPower::Laws(laws, power) => machine_with_power(out, &text, m, (laws, power), csv),
        FittedPower::Nodes { fit, .. } => machine_with_node_power(out, &text, m, fit, csv),
        _ => return Ok(None),
    };
    new.map(Some).map_err(|e| {
        InputError::Mismatch(format!(
            "{}: the fitted [power] is not a machine file jouleplan reads (nothing written; \
             energies in mJ or kJ rather than J give such powers): {e}",
            csv.display()
        ))
    })
}

/// What `plan` would refuse in the fitted profile against the machine it will be planned on
/// (the rewritten machine file, else the one given): the same model checks `plan` makes, and
/// every value `machine check` calls implausible.
fn planner_checks(
    fitted: &Fitted,
    machine: &MachineDoc,
    out: Option<&Path>,
) -> InputResult<Vec<String>> {
    let (target, time_only) = match (out, &fitted.machine_text) {
        (Some(path), Some(text)) => {
            let target = Machine::from_toml_for_plan(path, text)?.0;
            let time_only = target.time_only();
            (target, time_only)
        }
        _ => (machine.machine.clone(), machine.lacks.power),
    };
    let mut problems = crate::model::plausible::implausible(&target);
    let mut profile = fitted.outcome.profile.clone();
    if time_only {
        // `plan` plans such a machine by time and node-hours, its measured energies set
        // aside, and still checks the model's times against the profile's own points.
        for p in &mut profile.baseline {
            p.energy = None;
        }
    }
    super::core_fill::fit_to_machine(&mut profile, &target);
    // The model takes weak scaling from the profile's node law, as `plan` does.
    let model = crate::model::Model::new(&target, &profile)?;
    let mut t = Trust::default();
    let accept = Accept {
        model_error: true,
        ..Accept::default()
    };
    trust::check_model(&model, accept, &mut t)?;
    problems.append(&mut t.problems);
    Ok(problems)
}

/// The machine file's text with the fitted `[power]` keys, checked by reading it back.
fn machine_with_power(
    path: &Path,
    text: &str,
    machine: &Machine,
    (laws, power): (&PowerLaws, &Power),
    csv: &Path,
) -> InputResult<String> {
    let source = format!(
        "measured: `jouleplan fit` on {} ({} points, {}): P = P_idle(f) + c P_core(f), {}; \
         largest energy residual {:.2}%; core_stall_w = core_active_w and memory_w = 0 (time and \
         energy alone cannot separate them)",
        csv.display(),
        laws.residuals.len(),
        machine_edit::today_utc(),
        super::power_fit::describe(laws),
        100.0 * laws.max_residual()
    );
    machine_edit::write_power(
        path,
        text,
        machine,
        power,
        (laws.residual_bound(), None),
        &source,
    )
}

/// The machine file's text with the fitted node power, checked by reading it back.
fn machine_with_node_power(
    path: &Path,
    text: &str,
    machine: &Machine,
    np: &NodePowerFit,
    csv: &Path,
) -> InputResult<String> {
    let power = &np.power;
    let d = machine.ghz_decimals();
    let ghz = |v: &[crate::units::Hertz]| {
        v.iter()
            .map(|f| format!("{:.d$}", f.ghz()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let kept = if np.kept.is_empty() {
        String::new()
    } else {
        format!(
            "; kept from the file at {} GHz (no energy measured there)",
            ghz(&np.kept)
        )
    };
    let fitted: Vec<crate::units::Hertz> = np.fitted.iter().map(|x| x.0).collect();
    let source = format!(
        "measured: `jouleplan fit` on {} ({} runs, {}, {}): E = P_idle n T + P_core x busy \
         core-seconds, bounded at 0, at {} GHz{kept}; largest energy residual {:.2}%; \
         core_stall_w = core_active_w and memory_w = 0 (time and energy alone cannot separate \
         them)",
        csv.display(),
        np.fitted.iter().map(|x| x.2).sum::<usize>(),
        np.scope.name(),
        machine_edit::today_utc(),
        ghz(&fitted),
        100.0 * power.fit_residual_rel.unwrap_or(0.0)
    );
    machine_edit::write_power(
        path,
        text,
        machine,
        power,
        (
            power.fit_residual_rel.unwrap_or(0.0),
            power.fit_residual_rms,
        ),
        &source,
    )
}

/// The layout rule of the rows that give their ranks (evenly over their nodes); none when
/// no row does, so a job script says the layout was not recorded.
fn layout_of(rows: &[Measured]) -> Option<crate::model::layout::Layout> {
    let pairs: Vec<(u32, u32)> = rows
        .iter()
        .filter_map(|r| {
            let ranks = r.ranks?;
            let n = r.config.nodes;
            (n > 0 && ranks % n == 0).then(|| (r.config.cores, ranks / n))
        })
        .collect();
    crate::model::layout::Layout::infer(&pairs)
}

/// Each configuration left out in turn, the rest refitted exactly as [`fit`] fits (the node
/// law, weak scaling and the rule included), the machine given the power that refit found
/// (one-node power laws or node power), and the left-out one predicted. Refits that fail are
/// counted and said, never skipped silently.
pub fn leave_one_out(
    runs: &Runs,
    machine: &Machine,
    options: &FitOptions,
) -> InputResult<Validation> {
    // A configuration is left out whole: every rank count and energy scope it was run with.
    let config = |k: &ConfigKey| (k.nodes, k.cores, k.freq_khz, k.gpus);
    let mut configs = Vec::new();
    for r in runs.rows() {
        if !configs.iter().any(|(k, _)| *k == config(&r.key())) {
            configs.push((config(&r.key()), r.config));
        }
    }
    let mut compared = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    for (key, c) in configs {
        let (held, rest): (Vec<Measured>, Vec<Measured>) = runs
            .rows()
            .iter()
            .cloned()
            .partition(|r| config(&r.key()) == key);
        let skip = |k: &ConfigKey| config(k) == key;
        let others = Without {
            replay: runs,
            skip: &skip,
        };
        let rule = (options.weak, &options.rule);
        let refit = from_measured::fit_with_rule(
            runs.file(),
            (&rest, &others),
            machine,
            &options.program,
            rule,
        );
        match refit {
            Ok(f) => compared.extend(predict_held(f, machine, options.weak, &held)?),
            Err(e) => failed.push(format!("{}: {e}", c.label())),
        }
    }
    let mut title =
        "leave-one-out: each configuration refitted without it and predicted".to_string();
    if !failed.is_empty() {
        title.push_str(&format!(
            "; {} not refitted without it (so not predicted): {}",
            failed.len(),
            failed.join("; ")
        ));
    }
    Validation::new(
        title,
        compared,
        crate::model::evidence::DEFAULT_COVERAGE,
        Some(runs),
    )
}

/// The held-out runs predicted from a refit (its power given to the machine).
fn predict_held(
    fitted: FitOutcome,
    machine: &Machine,
    weak: bool,
    held: &[Measured],
) -> InputResult<Vec<validate::Compared>> {
    let mut m = machine.clone();
    if let Some(power) = fitted.power.machine_power() {
        m.power = power.clone();
    }
    let mut profile = fitted.profile;
    super::core_fill::fit_to_machine(&mut profile, &m);
    let checks = Checks {
        accept: Accept {
            model_error: true,
            other_machine: true,
        },
        weak,
        coverage: None,
    };
    let model = trust::bind(
        &m,
        &profile,
        &checks,
        &mut Trust::default(),
        &mut Vec::new(),
    )?;
    validate::compare(&model, held)
}
