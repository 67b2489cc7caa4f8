//! `profile --nodes auto`: the campaign's flags become its settings and its source of runs
//! (`--replay`, or the program launched), checked before anything is measured; the
//! [`crate::campaign`] stage runs; its runs go to `--measured-out` as they come, its profile
//! to `-o`, its steps to standard error and its end to standard output.

use super::profile::{EXIT_INTERRUPTED, EXIT_RUNS_FAILED, ProfileArgs};
use super::say;
use crate::artefact::measured::{self, MEASURED_HEADER};
use crate::calibrate::fit::MachineDoc;
use crate::campaign::launch::{Launch, Said};
use crate::campaign::replay::{Filter, Recorded};
use crate::campaign::report::{Report, summary};
use crate::campaign::step::Step;
use crate::campaign::{Campaign, Observer, Outcome, RunSource, Settings, Taken};
use crate::error::InputError;
use crate::values;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Runs `profile --nodes auto`; returns the exit code (as `profile`'s: 128 + the signal when
/// stopped, 4 when runs failed).
pub(crate) fn run(a: &ProfileArgs, out: &mut dyn Write) -> anyhow::Result<i32> {
    let c = &a.campaign;
    let tolerance = tolerance(c.tolerance.as_deref())?;
    let Some(csv) = a.measured_out.clone() else {
        return Err(values::bad(
            "--measured-out",
            "a CSV for the campaign's runs (fit reads it)",
            "nothing",
        )
        .into());
    };
    let Some(machine_arg) = a.machine.as_deref() else {
        return Err(values::bad(
            "--machine",
            "the machine file the campaign fits against (as `fit --machine`)",
            "nothing",
        )
        .into());
    };
    let (file, text) = crate::search::inputs::machine_text(Some(machine_arg))?;
    let machine = MachineDoc::new(&file, text)?;
    let _locks = super::outputs::lock(&[
        ("--output", a.output.as_path()),
        ("--measured-out", csv.as_path()),
    ])?;
    let mut settings = settings(a, (tolerance, csv.clone()), machine.machine.max_nodes)?;
    let mut saver = Saver { csv: &csv };
    match &c.replay {
        Some(r) => {
            replay_outputs(a, &csv)?;
            settings.max_nodes = max_nodes(c.max_nodes, machine.machine.max_nodes, &file)?;
            let filter = Filter {
                cores: settings.cores.clone(),
                freqs_hz: settings.freqs_hz.clone(),
            };
            let mut recorded = Recorded::read(r, &filter)?;
            let saved = match a.resume && csv.exists() {
                true => recorded.resume(&csv, &measured::read_lines(&csv)?)?,
                false => Vec::new(),
            };
            let mut k = Campaign::new(machine, settings, recorded)?;
            k.resume_with(saved);
            let outcome = k.run(&mut saver)?;
            write_fitted_profile(&k, &a.output)?;
            crate::campaign::order::record(&a.output, k.runs())?;
            finish(a, (&csv, machine_arg), outcome, out)?;
            Ok(0)
        }
        None => {
            let (launch, max) = launch(a, &machine)?;
            settings.max_nodes = max;
            let mut k = Campaign::new(machine.clone(), settings, launch)?;
            if a.resume {
                let saved = k.source_mut().resume(&csv)?;
                k.resume_with(saved);
            }
            let outcome = k.run(&mut saver)?;
            k.source().finish(&machine, a.weak)?;
            if k.source().interrupted().is_none() {
                crate::campaign::order::record(&a.output, k.runs())?;
            }
            finish(a, (&csv, machine_arg), outcome, out)?;
            Ok(exit_code(k.source()))
        }
    }
}

/// The campaign's settings from the flags.
fn settings(
    a: &ProfileArgs,
    (tolerance, runs_file): (f64, PathBuf),
    machine_nodes: u32,
) -> anyhow::Result<Settings> {
    let program = a.program.clone().unwrap_or_else(|| {
        runs_file
            .file_stem()
            .map_or("program".into(), |s| s.to_string_lossy().into_owned())
    });
    let mut s = Settings::new(machine_nodes, &program, runs_file);
    s.tolerance = tolerance;
    s.node_hours = a.campaign.node_hours;
    s.repeat = a.repeat.max(1);
    s.weak = a.weak;
    s.cores = a
        .cores
        .as_deref()
        .map(|v| values::parse_int_spec("--cores", v))
        .transpose()?;
    s.freqs_hz = a
        .freqs
        .as_deref()
        .map(|v| values::parse_ghz_values("--freqs", v))
        .transpose()?;
    s.query = query(&a.campaign)?;
    Ok(s)
}

/// `--deadline`, `--budget` and `--slowdown`, parsed as `plan` parses them.
fn query(c: &super::profile::CampaignArgs) -> anyhow::Result<crate::search::query::Query> {
    Ok(crate::search::query::Query {
        deadline: c
            .deadline
            .as_deref()
            .map(|d| values::parse_duration("--deadline", d))
            .transpose()?,
        budget: c
            .budget
            .as_deref()
            .map(|b| values::parse_energy("--budget", b))
            .transpose()?,
        slowdown: c
            .slowdown
            .as_deref()
            .map(|s| values::parse_slowdown("--slowdown", s))
            .transpose()?,
        min_efficiency: None,
    })
}

/// The launch of the program, and the largest count it can place.
fn launch(a: &ProfileArgs, machine: &MachineDoc) -> anyhow::Result<(Launch, u32)> {
    let opts = super::profile::options(a, "1")?;
    super::profile::check_outputs(a)?;
    fewer_cores(&opts, machine);
    let machine_nodes = machine.machine.max_nodes;
    let quiet = a.quiet;
    let log = Box::new(move |l: Said<'_>| match l {
        Said::Run(l) if !quiet => say::line(l),
        Said::Run(_) => {}
        Said::Failed(f) => say::line(&format!("failed: {f}")),
        Said::Note(n) => say::note(n),
    });
    Launch::new(opts, (a.campaign.max_nodes, machine_nodes), log)
}

/// Says, before anything runs, where this process may use fewer cores than a node of the
/// machine file has (a batch step given fewer CPUs): every run measures at most those, and
/// the machine's other cores are planned from the model alone.
fn fewer_cores(opts: &crate::measure::sweep::Options, machine: &MachineDoc) {
    let usable = crate::measure::sweep::core_cpus(&opts.roots.cpu).len() as u32;
    let per_node = machine.machine.cores_per_node;
    if usable == 0 || usable >= per_node {
        return;
    }
    say::note(&format!(
        "this process may use {usable} of the {per_node} cores a node of {} (its CPU set: a \
         batch step or taskset given fewer CPUs): the campaign measures at most {usable} cores a \
         node, and plans at more cores rest on the model alone; give the step every core \
         (sbatch --exclusive, or -c {per_node}), or a machine file of {usable} cores a node",
        machine.file.display()
    ));
}

/// The exit code of a launched campaign: 128 + the signal when interrupted, 4 when runs
/// failed, else 0.
fn exit_code(l: &Launch) -> i32 {
    match l.interrupted() {
        Some(s) if s > 0 => 128 + s,
        Some(_) => EXIT_INTERRUPTED,
        None if l.any_failed() => EXIT_RUNS_FAILED,
        None => 0,
    }
}

/// Keeps every run in `--measured-out` as it comes, and says each step.
struct Saver<'a> {
    csv: &'a Path,
}

impl Observer for Saver<'_> {
    fn runs(&mut self, runs: &[Taken]) -> anyhow::Result<()> {
        let rows: Vec<_> = runs.iter().map(|t| t.row.clone()).collect();
        let text = match rows.is_empty() {
            true => format!("{MEASURED_HEADER}\n"),
            false => measured::to_csv(&rows)?,
        };
        crate::atomic_write::write_atomic(self.csv, text.as_bytes(), false)?;
        Ok(())
    }

    fn step(&mut self, step: &Step) {
        say::progress(&step.said());
    }
}

/// A replay's `-o`: the profile of the campaign's last fit, checked as `plan` reads it.
fn write_fitted_profile<S: RunSource>(k: &Campaign<S>, output: &Path) -> anyhow::Result<()> {
    let Some(profile) = k.profile() else {
        return Ok(());
    };
    let file = profile.to_file();
    file.validate(output)?;
    let text = file.to_text()? + "\n";
    crate::atomic_write::write_atomic(output, text.as_bytes(), false)?;
    Ok(())
}

/// Says the end, and prints the summary (or the JSON).
fn finish(
    a: &ProfileArgs,
    (csv, machine): (&Path, &str),
    outcome: Outcome,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    say::progress(&format!("campaign ended: {}", outcome.stopped));
    let power = outcome.power();
    if !a.output.exists() {
        say::note(&format!(
            "{} was not written: the campaign fitted no profile",
            a.output.display()
        ));
    }
    let profile = a.output.display().to_string();
    let report = Report::new(outcome, &csv.display().to_string(), &profile);
    if a.campaign.json {
        crate::artefact::write_sorted(&report, out)?;
        return Ok(());
    }
    summary(&report, (machine, power, &plan_flags(a)), out)?;
    Ok(())
}

/// The campaign's flags that `plan` takes as they were given (the recommendation's command).
fn plan_flags(a: &ProfileArgs) -> Vec<(&'static str, String)> {
    let c = &a.campaign;
    [
        ("--cores", a.cores.clone()),
        ("--freqs", a.freqs.clone()),
        ("--deadline", c.deadline.clone()),
        ("--budget", c.budget.clone()),
        ("--slowdown", c.slowdown.clone()),
    ]
    .into_iter()
    .filter_map(|(f, v)| Some((f, v?)))
    .collect()
}

/// `--tolerance`: a fraction from 0 to 1 or a percentage; a bare number above 1 is refused
/// (5 would be 500%).
fn tolerance(t: Option<&str>) -> anyhow::Result<f64> {
    let Some(t) = t else {
        return Ok(crate::campaign::settings::DEFAULT_TOLERANCE);
    };
    let v = values::parse_fraction("--tolerance", t)?;
    if !t.trim().ends_with('%') && v > 1.0 {
        return Err(values::bad(
            "--tolerance",
            "a fraction from 0 to 1 (0.05) or a percentage (5%)",
            t,
        )
        .into());
    }
    Ok(v)
}

/// `--max-nodes` for a replay: from 1 to the machine's node count (`plan` plans no more).
fn max_nodes(given: Option<u32>, machine: u32, file: &Path) -> anyhow::Result<u32> {
    match given {
        None => Ok(machine.max(1)),
        Some(n) if (1..=machine).contains(&n) => Ok(n),
        Some(n) => Err(values::bad(
            "--max-nodes",
            format!(
                "a node count from 1 to {machine}, the nodes of {} (plan plans no more)",
                file.display()
            ),
            n.to_string(),
        )
        .into()),
    }
}

/// A replay onto an existing `-o` or `--measured-out` without `--resume` is refused, as a
/// launched campaign's is: nothing measured is replaced by accident.
fn replay_outputs(a: &ProfileArgs, csv: &Path) -> anyhow::Result<()> {
    if a.resume {
        return Ok(());
    }
    match [a.output.as_path(), csv].into_iter().find(|p| p.exists()) {
        Some(p) => Err(InputError::Mismatch(format!(
            "{} exists: add --resume to go on with the campaign it holds, or remove it",
            p.display()
        ))
        .into()),
        None => Ok(()),
    }
}
