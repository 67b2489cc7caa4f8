//! `jouleplan fit`: measured time (and energy) CSV -> a profile and the machine's `[power]`
//! section, with the fits' residuals and uncertainties, and optionally each point predicted
//! from the others (`--loo`).

use super::validate::{Block, write_block};
use super::{SourceArgs, bind, fit_to_machine, trust};
use crate::atomic_write::{Links, SetFile, write_set};
use crate::calibrate::from_measured::{self, FitOutcome, FittedPower};
use crate::calibrate::machine_edit;
use crate::calibrate::node_fit::Rule;
use crate::calibrate::repeats::{Replay, Without};
use crate::calibrate::validate::{self as cv, CsvFile, Measured};
use crate::error::InputError;
use crate::model::machine::Machine;
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `jouleplan fit`.
#[derive(Debug, Args)]
pub struct FitArgs {
    /// Measured runs: CSV with columns nodes,cores,freq_hz,gpus,time_s and optionally
    /// energy_j, ranks (total MPI ranks; cores is then the most on one node) and energy_scope
    /// (node or cpu); repeats of a configuration are averaged. Runs on one node give the
    /// profile; runs on more nodes, the node law and node power.
    #[arg(long, value_name = "CSV")]
    pub measured: PathBuf,
    /// The machine whose `[power]` section the fit replaces (file or bundled name)
    /// [default: xeon-phi-57c].
    #[arg(long, value_name = "FILE")]
    pub machine: Option<String>,
    /// Write the fitted profile (JSON) here.
    #[arg(long, value_name = "FILE")]
    pub profile_out: PathBuf,
    /// Write the machine file with the fitted `[power]` section here (needs energy_j); every
    /// other line of the machine file is kept.
    #[arg(long, value_name = "FILE")]
    pub machine_out: Option<PathBuf>,
    /// The program's name in the profile [default: the CSV's file name].
    #[arg(long)]
    pub program: Option<String>,
    /// Also leave each measured configuration out in turn, refit on the others and predict it.
    #[arg(long)]
    pub loo: bool,
    /// Write the outputs even where `plan` would refuse them (the model does not reproduce the
    /// measured runs within their bounds, or the fitted power is implausible); said on stderr.
    #[arg(long)]
    pub accept_model_error: bool,
    /// The runs are weak scaling: each rank keeps its work (the problem grows with the ranks);
    /// the node law then carries weak-scaling growth, and plans from the profile are weak.
    #[arg(long)]
    pub weak: bool,
    /// The node law's rule for the design study (`docs/NODE_AXIS.md`), as
    /// `floor=0.03|best,serial=free|nonneg,repeat=0.03,doubling=0.05,unvalidated=0.1`; each key
    /// optional.
    #[arg(long, hide = true, value_name = "RULE", value_parser = parse_rule)]
    pub design: Option<Rule>,
    /// Print the fit as JSON (the same figures as the text) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Draw the node law: each measured run's time (and energy) per node count, the fitted
    /// model and its interval band, as FILE.svg or FILE.png.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
}

/// Parses `--design`.
fn parse_rule(s: &str) -> Result<Rule, String> {
    let mut r = Rule::default();
    for kv in s.split(',').filter(|x| !x.is_empty()) {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("KEY=VALUE pairs, not `{kv}`"))?;
        let num = || -> Result<f64, String> {
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| format!("{k}: a number >= 0, not `{v}`"))
        };
        match (k, v) {
            ("floor", "best") => r.floor = None,
            ("floor", _) => r.floor = Some(num()?),
            ("serial", "free") => r.serial_nonneg = false,
            ("serial", "nonneg") => r.serial_nonneg = true,
            ("repeat", _) => r.repeat_prior = num()?,
            ("doubling", _) => r.per_doubling_prior = num()?,
            ("unvalidated", _) => r.unvalidated_per_doubling = num()?,
            _ => return Err(format!("unknown key or value `{kv}`")),
        }
    }
    Ok(r)
}

/// Refuses outputs onto the inputs (the measured CSV; the machine file except as the
/// `--machine-out` that rewrites it in place) and two outputs that are one file.
fn check_outputs(args: &FitArgs, machine_file: &Path) -> anyhow::Result<()> {
    let mut outputs = vec![("--profile-out", args.profile_out.as_path())];
    outputs.extend(args.machine_out.as_deref().map(|p| ("--machine-out", p)));
    if let Some(p) = &args.plot {
        super::plan::check_plot_path(p)?;
        outputs.push(("--plot", p));
    }
    // Written as a pair: a folder that is not there fails before either is written.
    for (flag, p) in &outputs {
        let dir = crate::atomic_write::folder_of(p);
        if !dir.is_dir() {
            return Err(InputError::Argument {
                flag: (*flag).into(),
                expected: "a file in a folder that exists".into(),
                got: format!("{} (no folder {})", p.display(), dir.display()),
            }
            .into());
        }
    }
    super::outputs::check_distinct(&[("--measured", &args.measured)], &outputs)?;
    super::outputs::check_distinct(
        &[("--machine", machine_file)],
        &[("--profile-out", &args.profile_out)],
    )?;
    Ok(())
}

/// Runs `fit`: read the machine and the runs, fit (time split, node law, power), print, compose
/// the outputs, check them as `plan` would, write them, and optionally leave each
/// configuration out.
pub fn run_fit(args: &FitArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let (machine_file, machine_text) = super::sources::machine_text(args.machine.as_deref())?;
    let (machine, lacks) = Machine::from_toml_for_fit(&machine_file, &machine_text)?;
    check_outputs(args, &machine_file)?;
    let mut outputs = vec![args.profile_out.as_path()];
    outputs.extend(args.machine_out.as_deref());
    outputs.extend(args.plot.as_deref());
    let _locks = super::outputs::lock(&outputs)?;
    let rows = cv::read_csv_file(&args.measured)?;
    let runs = CsvFile(&args.measured);
    if lacks.network && rows.iter().any(|r| r.config.nodes > 1) {
        return Err(InputError::Mismatch(format!(
            "{}: the machine file has no [network] section, which runs over several nodes \
             need; give it {}",
            machine_file.display(),
            crate::model::machine::NETWORK_HINT
        ))
        .into());
    }
    let program = program_name(args);
    let rule = args.design.unwrap_or_default();
    let mut fitted = from_measured::fit_with_rule(
        &args.measured,
        (&rows, &runs),
        &machine,
        &program,
        (args.weak, &rule),
    )?;
    fitted.profile.layout = layout_of(&rows);
    let time_only = check_power(args, &fitted, lacks.power)?;
    let mut json = args
        .json
        .then(|| super::fit_json::fit_json(&fitted, (&machine, &rows), (&args.measured, &program)));
    if json.is_none() {
        report(&fitted, (&machine, &rows), out)?;
    }
    if let Some(why) = &time_only {
        super::say::note(why);
        json.iter_mut().for_each(|j| j.notes.push(why.clone()));
    }
    let mut wrote = write_outputs(
        args,
        &fitted,
        (&machine, &machine_file, &machine_text),
        (&time_only, lacks.power),
    )?;
    if let Some(p) = &args.plot {
        wrote.push(super::node_chart::write_fit_plot(args, p)?);
    }
    let loo = match args.loo {
        true => Some(leave_one_out(
            &args.measured,
            (&rows, &runs),
            &machine,
            &program,
            (args.weak, &rule),
        )?),
        false => None,
    };
    match (json, loo) {
        (Some(mut j), loo) => {
            j.wrote = wrote;
            j.leave_one_out = loo.as_ref().map(super::validate::block_json);
            crate::artefact::write_sorted(&j, out)?;
        }
        (None, Some(b)) => write_block(&b, out)?,
        (None, None) => {}
    }
    Ok(())
}

/// The program's name: `--program`, else the CSV's file name.
fn program_name(args: &FitArgs) -> String {
    args.program.clone().unwrap_or_else(|| {
        args.measured
            .file_stem()
            .map_or("program".into(), |s| s.to_string_lossy().into_owned())
    })
}

/// Composes the profile and machine file, checks them as `plan` would, and writes them;
/// returns the files written.
fn write_outputs(
    args: &FitArgs,
    fitted: &FitOutcome,
    (machine, machine_file, machine_text): (&Machine, &Path, &str),
    (time_only, unpowered): (&Option<String>, bool),
) -> anyhow::Result<Vec<String>> {
    let profile_file = fitted.profile.to_file();
    // What `plan` checks when it reads the profile, checked before it is written.
    profile_file.validate(&args.profile_out).map_err(|e| {
        anyhow::anyhow!(
            "{}: the fitted profile would be refused when read (nothing written): {e}",
            args.measured.display()
        )
    })?;
    let profile_json = profile_file.to_text()? + "\n";
    let machine_new =
        machine_output(args, fitted, machine, machine_text, unpowered).map_err(|e| {
            anyhow::anyhow!(
                "{}: the fitted [power] is not a machine file jouleplan reads (nothing written; \
                 energies in mJ or kJ rather than J give such powers): {e:#}",
                args.measured.display()
            )
        })?;
    if time_only.is_none() {
        let problems = planner_checks(&fitted.profile, machine, machine_new.as_ref())?;
        refuse_or_warn(args, &problems)?;
    }
    // The profile and the machine file fitted with it: both written, or neither.
    let mut set = vec![SetFile {
        path: &args.profile_out,
        bytes: profile_json.as_bytes(),
        links: Links::Refuse,
    }];
    if let Some((path, text)) = &machine_new {
        set.push(SetFile {
            path,
            bytes: text.as_bytes(),
            links: super::outputs::machine_links(machine_file, path),
        });
    }
    write_set(&set)?;
    let wrote: Vec<String> = set.iter().map(|f| f.path.display().to_string()).collect();
    for w in &wrote {
        super::say::progress(&format!("wrote {w}"));
    }
    Ok(wrote)
}

/// Whether the fit has power to write. Time-only runs (no energy measured) against a machine
/// file without `[power]` give a time-only profile: `Some(why)`, said, and nothing else
/// refused. Energy measured but not enough to identify power, or `--machine-out` without
/// power, is refused.
fn check_power(
    args: &FitArgs,
    fitted: &FitOutcome,
    unpowered: bool,
) -> anyhow::Result<Option<String>> {
    let why = match &fitted.power {
        FittedPower::Laws(..) | FittedPower::Nodes { .. } => return Ok(None),
        FittedPower::Unidentified(why) => why.clone(),
        FittedPower::TooFew(with_energy) => format!(
            "{} with energy in {}, too few to fit power, which needs two or more core counts on \
             one node or two or more runs over several nodes",
            crate::units::count(*with_energy as u64, "run", "runs"),
            args.measured.display()
        ),
        FittedPower::NoEnergy => format!("no energy_j column in {}", args.measured.display()),
    };
    let measured_energy = !matches!(fitted.power, FittedPower::NoEnergy);
    if args.machine_out.is_some() {
        return Err(InputError::Argument {
            flag: "--machine-out".into(),
            expected: "measured energy that identifies the power laws".into(),
            got: why,
        }
        .into());
    }
    if unpowered && measured_energy {
        return Err(InputError::Mismatch(format!(
            "{}: the machine file has no [power] section and the measured energy cannot give \
             one ({why}); measure energy at two or more core counts or over several nodes, or \
             give a machine file with {}",
            args.measured.display(),
            crate::model::machine::POWER_HINT
        ))
        .into());
    }
    Ok(unpowered.then(|| {
        format!(
            "energy unavailable: {} measured no energy and the machine file has no [power] \
             section, so the profile holds time only (its node law included); plan it with a \
             machine file that has [power], or measure energy (RAPL, Slurm's \
             ConsumedEnergyRaw) and fit again",
            args.measured.display()
        )
    }))
}

/// The machine file to write (`--machine-out`) with the fitted power, when asked. A file
/// without `[power]` gets one; the network's own power is not separable from time and
/// energy, so it is 0 and said so (its idle draw is in idle_w).
fn machine_output<'a>(
    args: &'a FitArgs,
    fitted: &FitOutcome,
    machine: &Machine,
    machine_text: &str,
    unpowered: bool,
) -> anyhow::Result<Option<(&'a PathBuf, String)>> {
    let text = if unpowered {
        format!(
            "{machine_text}\n[power]\n# not measured: time and energy alone cannot separate the \
             network's power; its idle draw is in idle_w\nnetwork_w = 0.0\n"
        )
    } else {
        machine_text.to_string()
    };
    Ok(match (&args.machine_out, &fitted.power) {
        (Some(path), FittedPower::Laws(laws, power)) => Some((
            path,
            machine_with_power(path, &text, machine, laws, power, &args.measured)?,
        )),
        (Some(path), FittedPower::Nodes { fit, .. }) => Some((
            path,
            super::fit_nodes::machine_with_node_power(path, &text, machine, fit, &args.measured)?,
        )),
        _ => None,
    })
}

/// Refuses what `plan` would refuse, unless `--accept-model-error` (then said on stderr).
fn refuse_or_warn(args: &FitArgs, problems: &[String]) -> anyhow::Result<()> {
    if problems.is_empty() {
        return Ok(());
    }
    let list = problems.join("\n  - ");
    if !args.accept_model_error {
        return Err(InputError::Mismatch(format!(
            "{}: what this fit would write is refused by `plan` (nothing written):\n  - {list}\n\
             Measure the runs that disagree again, fit them apart (one-socket runs measure half \
             a node's RAPL idle power), or pass --accept-model-error to write it anyway (`plan` \
             and `predict` then need it too; `validate` always scores)",
            args.measured.display()
        ))
        .into());
    }
    super::say::warning(&format!(
        "written although `plan` refuses it without --accept-model-error:\n  - {list}"
    ));
    Ok(())
}

/// What `plan` would refuse in the fitted profile against the machine it will be planned on
/// (the written machine file, else the one given): the same model checks `plan` makes, and
/// every value `machine check` calls implausible.
fn planner_checks(
    profile: &crate::model::workload::Profile,
    machine: &Machine,
    written: Option<&(&PathBuf, String)>,
) -> anyhow::Result<Vec<String>> {
    let target = match written {
        Some((path, text)) => Machine::from_toml(path, text)?,
        None => machine.clone(),
    };
    if written.is_none() && target.power.idle.iter().all(|w| w.0 == 0.0) {
        // No power to plan with: `plan` says so itself.
        return Ok(Vec::new());
    }
    let mut problems = crate::model::plausible::implausible(&target);
    let mut profile = profile.clone();
    fit_to_machine(&mut profile, &target);
    // The model takes weak scaling from the profile's node law, as `plan` does.
    let model = crate::model::Model::new(&target, &profile)?;
    let mut t = trust::Trust::default();
    let accept = trust::Accept {
        model_error: true,
        ..trust::Accept::default()
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
    laws: &crate::calibrate::power_fit::PowerLaws,
    power: &crate::model::machine::Power,
    csv: &Path,
) -> anyhow::Result<String> {
    let source = format!(
        "measured: `jouleplan fit` on {} ({} points, {}): P = P_idle(f) + c P_core(f), {}; \
         largest energy residual {:.2}%; core_stall_w = core_active_w and memory_w = 0 (time and \
         energy alone cannot separate them)",
        csv.display(),
        laws.residuals.len(),
        machine_edit::today_utc(),
        crate::calibrate::power_fit::describe(laws),
        100.0 * laws.max_residual()
    );
    Ok(machine_edit::write_power(
        path,
        text,
        machine,
        power,
        (laws.residual_bound(), None),
        &source,
    )?)
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

/// `3 configurations from 6 runs on 2 node counts`, in the singular where it is one.
fn counted(rows: &[Measured]) -> String {
    let (configs, runs, nodes) = super::fit_json::counts(rows);
    let n = |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    format!(
        "{} from {} on {}",
        n(configs, "configuration", "configurations"),
        n(runs, "run", "runs"),
        n(nodes.len(), "node count", "node counts")
    )
}

/// Prints the splits, the power laws and the power per frequency.
fn report(
    f: &FitOutcome,
    (machine, rows): (&Machine, &[Measured]),
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(out, "fit: {}", counted(rows))?;
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
    super::fit_nodes::report(f, out)?;
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
        "power, P = P_idle(f) + c P_core(f) with x = f/GHz ({}, {} points):",
        laws.method,
        laws.residuals.len()
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
    for (i, fr) in machine.frequencies.iter().enumerate() {
        let outside = if fr.0 < lo * 0.999 || fr.0 > hi * 1.001 {
            "  (extrapolated: outside the measured frequencies)"
        } else {
            ""
        };
        writeln!(
            out,
            "  {:>5.2} GHz: P_idle {:>8.2} W, P_core {:>7.4} W{outside}",
            fr.ghz(),
            power.idle[i].0,
            power.core_active[i].0
        )?;
    }
    Ok(())
}

/// Each configuration left out in turn, the rest refitted exactly as `fit` fits (the node law,
/// `--weak` and the rule included), the machine given the power that refit found (one-node
/// power laws or node power), and the left-out one predicted. Refits that fail are counted
/// and said, never skipped silently.
fn leave_one_out(
    file: &Path,
    (rows, runs): (&[Measured], &dyn Replay),
    machine: &Machine,
    program: &str,
    (weak, rule): (bool, &Rule),
) -> anyhow::Result<Block> {
    // A configuration is left out whole: every rank count and energy scope it was run with.
    let config = |k: &crate::calibrate::repeats::ConfigKey| (k.nodes, k.cores, k.freq_khz, k.gpus);
    let mut configs = Vec::new();
    for r in rows {
        if !configs.iter().any(|(k, _)| *k == config(&r.key())) {
            configs.push((config(&r.key()), r.config));
        }
    }
    let mut compared = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    for (key, c) in configs {
        let (held, rest): (Vec<Measured>, Vec<Measured>) =
            rows.iter().cloned().partition(|r| config(&r.key()) == key);
        let skip = |k: &crate::calibrate::repeats::ConfigKey| config(k) == key;
        let others = Without {
            replay: runs,
            skip: &skip,
        };
        let fitted = match from_measured::fit_with_rule(
            file,
            (&rest, &others),
            machine,
            program,
            (weak, rule),
        ) {
            Ok(f) => f,
            Err(e) => {
                failed.push(format!("{}: {e}", crate::search::plan::label(&c)));
                continue;
            }
        };
        let mut m = machine.clone();
        if let Some(power) = fitted.power.machine_power() {
            m.power = power.clone();
        }
        let mut profile = fitted.profile;
        fit_to_machine(&mut profile, &m);
        let src = SourceArgs {
            accept_model_error: true,
            other_machine: true,
            weak,
            ..SourceArgs::default()
        };
        let model = bind(
            &m,
            &profile,
            &src,
            &mut trust::Trust::default(),
            &mut Vec::new(),
        )?;
        compared.extend(cv::compare(&model, &held)?);
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
    Block::new(
        title,
        compared,
        crate::model::evidence::DEFAULT_COVERAGE,
        Some(runs),
    )
}
