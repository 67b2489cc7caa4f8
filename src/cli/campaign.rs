//! `profile --nodes auto`: the campaign's flags become its settings and its source of runs
//! (`--replay`, or the program launched), checked before anything is measured; the
//! [`crate::campaign`] stage runs; its runs go to `--measured-out` as they come, its profile
//! to `-o`, its steps to standard error and its end to standard output.

use super::profile::{EXIT_INTERRUPTED, EXIT_RUNS_FAILED, ProfileArgs};
use super::say;
use crate::artefact::measured::{self, MEASURED_HEADER};
use crate::atomic_write::{Links, SetFile, write_set};
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
    no_gpu_flags(a)?;
    let tolerance = tolerance(c.tolerance.as_deref())?;
    let (csv, machine_arg) = needed_files(a)?;
    let (file, text) = crate::search::inputs::machine_text(Some(machine_arg))?;
    let machine = MachineDoc::new(&file, text)?;
    let files = Files::beside(&a.output, csv.clone());
    if super::outputs::same_file(&file, &files.machine) {
        return Err(InputError::Mismatch(format!(
            "--machine {}: the campaign writes the machine file with the power it fits beside \
             -o, {}, which is this file: give the campaign another -o",
            file.display(),
            files.machine.display()
        ))
        .into());
    }
    let outputs = outputs_apart(a, &file, &files)?;
    let _locks = super::outputs::lock(&outputs)?;
    let mut settings = settings(a, (tolerance, csv.clone()), machine.machine.max_nodes)?;
    let mut saver = Saver { csv: &csv };
    match &c.replay {
        Some(r) => {
            outputs_free(a, &files, false)?;
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
            same_cores(&saved, &settings, &csv)?;
            within_max_nodes(&saved, settings.max_nodes, &csv)?;
            let mut k = Campaign::new(machine, settings, recorded)?;
            k.resume_with(saved);
            let outcome = k.run(&mut saver)?;
            let wrote = write_fitted(&k, &a.output, &files.machine)?;
            finish(a, (&files, machine_arg, wrote), outcome, out)?;
            Ok(0)
        }
        None => {
            outputs_free(a, &files, true)?;
            let (launch, max) = launch(a, &machine, &files.record)?;
            settings.max_nodes = max;
            let mut k = Campaign::new(machine, settings, launch)?;
            if a.resume {
                let saved = k.source_mut().resume(&csv)?;
                same_cores(&saved, k.settings(), &csv)?;
                within_max_nodes(&saved, k.settings().max_nodes, &csv)?;
                k.resume_with(saved);
            }
            let outcome = k.run(&mut saver)?;
            let wrote = write_fitted(&k, &a.output, &files.machine)?;
            finish(a, (&files, machine_arg, wrote), outcome, out)?;
            Ok(exit_code(k.source()))
        }
    }
}

/// `--gpu-clocks` is refused (a campaign's runs are at the clock the GPU chooses, launched or
/// replayed alike), and `--gpus` with `--replay` (a replay takes the recording's CPU runs).
fn no_gpu_flags(a: &ProfileArgs) -> anyhow::Result<()> {
    if let Some(spec) = &a.gpu_clocks {
        return Err(super::profile_clocks::in_campaign(spec).into());
    }
    let gpus_asked = a
        .gpus
        .as_deref()
        .filter(|g| g.split(',').any(|t| t.trim() != "0"));
    if let (Some(_), Some(g)) = (&a.campaign.replay, gpus_asked) {
        let expected = "no --gpus with --replay: a replayed campaign takes the recording's CPU \
                        runs (gpus 0)";
        return Err(values::bad("--gpus", expected, g).into());
    }
    Ok(())
}

/// `--measured-out` and `--machine`, which a campaign needs.
fn needed_files(a: &ProfileArgs) -> anyhow::Result<(PathBuf, &str)> {
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
    Ok((csv, machine_arg))
}

/// The files a campaign writes besides its profile (`-o`): the runs (`--measured-out`), the
/// record of every launched run that `--resume` goes on from (`P.sweep.json` beside `P.json`),
/// and the machine file with the power fitted from the runs' energy (`P.machine.toml`).
pub(crate) struct Files {
    /// `--measured-out`.
    pub(crate) runs: PathBuf,
    /// The sweep's record of every launched run.
    pub(crate) record: PathBuf,
    /// The machine file with the fitted power.
    pub(crate) machine: PathBuf,
}

impl Files {
    /// The files of a campaign whose profile is `output` and runs `runs`.
    fn beside(output: &Path, runs: PathBuf) -> Files {
        let name = output.file_name().unwrap_or_default();
        let stem = match output.extension() {
            Some(e) if e == "json" => output.file_stem().unwrap_or(name),
            _ => name,
        };
        let with = |suffix: &str| {
            let mut n = stem.to_os_string();
            n.push(suffix);
            output.with_file_name(n)
        };
        Files {
            runs,
            record: with(".sweep.json"),
            machine: with(".machine.toml"),
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
    if a.repeat == 0 {
        // A replay would take 0 runs a count; never read as 1 behind the user's back.
        return Err(values::bad("--repeat", "at least 1 run a count", "0").into());
    }
    s.repeat = a.repeat;
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
fn launch(a: &ProfileArgs, machine: &MachineDoc, record: &Path) -> anyhow::Result<(Launch, u32)> {
    if let (Some(h), 1..) = (a.campaign.node_hours, a.warmup) {
        let expected = format!(
            "no --warmup with --node-hours {h}: warm-up runs are not recorded, so the \
             node-hours they spend would escape the budget"
        );
        return Err(values::bad("--warmup", expected, a.warmup.to_string()).into());
    }
    let mut opts = super::profile::options(a, "1")?;
    super::profile::check_outputs(a)?;
    opts.output = record.to_path_buf();
    // The campaign says its own progress, a line a run: a bar would start again each step.
    opts.progress_bar = false;
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

/// What a campaign wrote of its last fit: the profile, and the machine file with the power
/// fitted; whether `plan` needs `--accept-model-error` to plan them as the campaign did.
#[derive(Debug, Clone, Copy, Default)]
struct Wrote {
    profile: bool,
    machine: bool,
    accept_model_error: bool,
}

/// `-o`: the profile of the campaign's last fit (the one its last step planned on), with the
/// order its counts were measured in, checked as `plan` reads it; with the machine file of
/// the power fitted from the runs' energy where there is one (`machine`), one fit id in both
/// as `fit --profile-out --machine-out` writes them, both written or neither.
fn write_fitted<S: RunSource>(
    k: &Campaign<S>,
    output: &Path,
    machine: &Path,
) -> anyhow::Result<Wrote> {
    let Some(last) = k.last() else {
        return Ok(Wrote::default());
    };
    let mut file = last.fitted.profile().to_file();
    crate::campaign::order::record(&mut file, k.runs(), k.settings().repeat);
    file.validate(output)?;
    let machine_text = match &last.fitted.machine_text {
        Some(text) => Some(crate::calibrate::machine_edit::stamp_pair(
            &mut file, machine, text,
        )?),
        None => None,
    };
    let text = file.to_text()? + "\n";
    let mut set = vec![SetFile {
        path: output,
        bytes: text.as_bytes(),
        links: Links::Refuse,
    }];
    if let Some(m) = &machine_text {
        set.push(SetFile {
            path: machine,
            bytes: m.as_bytes(),
            links: Links::Refuse,
        });
    }
    write_set(&set)?;
    Ok(Wrote {
        profile: true,
        machine: machine_text.is_some(),
        accept_model_error: !last.fitted.problems.is_empty(),
    })
}

/// The end as the steps on standard error close: the rule that stopped the campaign (`stable`,
/// `budget`, `interrupted (SIGTERM) after 3 runs`), pointing to the verdict in full, which
/// the summary (or the JSON) on standard output holds: said once, not twice.
fn ended(stopped: &str, json: bool) -> String {
    let head = stopped
        .split_once(": ")
        .map_or(stopped, |(h, _)| h)
        .trim_end_matches(';');
    let short = head.split_whitespace().count() <= 8 && !head.contains('/');
    let whole = match json {
        true => "`stopped` in the JSON on standard output",
        false => "`stopped:` in the summary on standard output",
    };
    match short {
        true => format!("campaign ended: {head} (why: {whole})"),
        false => format!("campaign ended (why: {whole})"),
    }
}

/// Says the end, and prints the summary (or the JSON).
fn finish(
    a: &ProfileArgs,
    (files, machine, wrote): (&Files, &str, Wrote),
    outcome: Outcome,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    say::progress(&ended(&outcome.stopped, a.campaign.json));
    let power = outcome.power();
    if !wrote.profile {
        say::note(&format!(
            "{} was not written: the campaign fitted no profile",
            a.output.display()
        ));
    }
    let shown = |p: &Path| p.display().to_string();
    let report = Report::new(
        outcome,
        &shown(&files.runs),
        (
            wrote.profile.then(|| shown(&a.output)),
            wrote.machine.then(|| shown(&files.machine)),
            a.campaign.replay.is_none().then(|| shown(&files.record)),
        ),
    );
    if a.campaign.json {
        crate::artefact::write_sorted(&report, out)?;
        return Ok(());
    }
    let mut flags = plan_flags(a);
    if wrote.accept_model_error {
        flags.push(("--accept-model-error", String::new()));
    }
    summary(&report, (machine, power, &flags), out)?;
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

/// The campaign's outputs (the record of its runs only when it launches them), checked before
/// anything runs: none is one of its inputs (the machine file, the recording it replays) or
/// another output, and none is a link, which the writers would refuse only after the runs.
fn outputs_apart<'a>(
    a: &'a ProfileArgs,
    machine: &'a Path,
    files: &'a Files,
) -> anyhow::Result<Vec<(&'static str, &'a Path)>> {
    let mut outputs = vec![
        ("--output", a.output.as_path()),
        ("--measured-out", files.runs.as_path()),
        ("the campaign's machine file", files.machine.as_path()),
    ];
    let mut inputs = vec![("--machine", machine)];
    match &a.campaign.replay {
        Some(r) => inputs.push(("--replay", r.as_path())),
        None => outputs.push(("the campaign's record of its runs", files.record.as_path())),
    }
    super::outputs::check_distinct(&inputs, &outputs)?;
    for (_, p) in &outputs {
        crate::atomic_write::refuse_link(p).map_err(|e| InputError::Mismatch(e.to_string()))?;
    }
    Ok(outputs)
}

/// A resumed campaign's saved runs are at the cores it measures: `--resume` with other
/// `--cores` is refused, naming both, before anything runs (the runs would mix).
fn same_cores(
    saved: &[crate::campaign::source::Taken],
    settings: &crate::campaign::settings::Settings,
    csv: &Path,
) -> anyhow::Result<()> {
    let Some(cores) = &settings.cores else {
        return Ok(());
    };
    match saved.iter().find(|t| !cores.contains(&t.row.cores)) {
        Some(t) => Err(InputError::Mismatch(format!(
            "--resume: {} holds runs on {} a node ({}), and this campaign measures at \
             --cores {}: resume with the --cores it started with, or give another \
             --measured-out and -o",
            csv.display(),
            crate::units::count(t.row.cores, "core", "cores"),
            t.from,
            crate::model::workload::compact_list(
                &cores.iter().map(|&c| u64::from(c)).collect::<Vec<_>>()
            )
        ))
        .into()),
        None => Ok(()),
    }
}

/// A resumed campaign's saved runs are on counts up to the largest it may plan and measure:
/// runs above it (a smaller `--max-nodes`, or allocation, than the campaign began with) are
/// refused, naming the first, before anything runs; the campaign would recommend a count
/// above the limit it was given.
fn within_max_nodes(
    saved: &[crate::campaign::source::Taken],
    max_nodes: u32,
    csv: &Path,
) -> anyhow::Result<()> {
    match saved.iter().find(|t| t.row.nodes > max_nodes) {
        Some(t) => Err(InputError::Mismatch(format!(
            "--resume: {} holds runs on {} ({}), above the {} this campaign may plan and \
             measure (--max-nodes, else the hostfile's, allocation's or machine file's nodes): \
             resume with --max-nodes {} or more, or give another --measured-out and -o",
            csv.display(),
            crate::units::count(t.row.nodes, "node", "nodes"),
            t.from,
            crate::units::count(max_nodes, "node", "nodes"),
            t.row.nodes
        ))
        .into()),
        None => Ok(()),
    }
}

/// A campaign onto an existing `-o`, `--measured-out` or file beside `-o` without `--resume`
/// is refused: nothing measured is replaced by accident. A launched campaign resumed from the
/// `-o` an earlier jouleplan kept its runs in is told where they now belong.
fn outputs_free(a: &ProfileArgs, files: &Files, launched: bool) -> anyhow::Result<()> {
    if a.resume {
        let sweep_record = is_sweep_record(&a.output);
        if launched && !files.record.exists() && sweep_record {
            return Err(InputError::Mismatch(format!(
                "--resume: {} holds the runs of a launched campaign as an earlier jouleplan \
                 kept them; a campaign now keeps them in {} and writes its fitted profile to \
                 -o: move {} to {} and resume",
                a.output.display(),
                files.record.display(),
                a.output.display(),
                files.record.display()
            ))
            .into());
        }
        if a.output.exists() && !sweep_record && !is_profile(&a.output) {
            return Err(InputError::Mismatch(format!(
                "--resume: {} holds no campaign's profile, and a campaign writes its profile \
                 there: give the -o of the campaign to resume",
                a.output.display()
            ))
            .into());
        }
        return Ok(());
    }
    let mut mine = vec![
        a.output.as_path(),
        files.runs.as_path(),
        files.machine.as_path(),
    ];
    if launched {
        mine.push(files.record.as_path());
    }
    match mine.into_iter().find(|p| p.exists()) {
        Some(p) => Err(InputError::Mismatch(format!(
            "{} exists: add --resume to go on with the campaign it holds, or remove it",
            p.display()
        ))
        .into()),
        None => Ok(()),
    }
}

/// Whether `path` holds a profile, as a campaign writes it to `-o`.
fn is_profile(path: &Path) -> bool {
    crate::input::read_file(path)
        .ok()
        .is_some_and(|text| crate::model::workload::Profile::from_json(path, &text).is_ok())
}

/// Whether `path` is a profile a sweep wrote (it holds the record of its runs).
fn is_sweep_record(path: &Path) -> bool {
    crate::input::read_file(path)
        .ok()
        .is_some_and(|text| crate::measure::record::read_written(path, &text).is_ok())
}
