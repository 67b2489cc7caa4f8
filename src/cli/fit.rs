//! `jouleplan fit`: measured time (and energy) CSV -> a profile and the machine's `[power]`
//! section, with the fits' residuals and uncertainties, and optionally each point predicted
//! from the others (`--loo`).

use crate::atomic_write::{Links, SetFile, write_set};
use crate::calibrate::fit::{self, FitOptions, Fitted, MachineDoc};
use crate::calibrate::node_fit::Rule;
use crate::calibrate::runs::Runs;
use crate::error::{InputError, InputResult};
use crate::report::fit::{fit_json, write_fit};
use crate::report::validation::{block_json, write_block};
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `jouleplan fit`.
#[derive(Debug, Args)]
pub struct FitArgs {
    /// Measured runs: CSV with columns nodes,cores,freq_hz,gpus,time_s and optionally
    /// energy_j or gpu_energy_j, ranks (total MPI ranks; cores is then the most on one node),
    /// energy_scope (what energy_j covers: node, cpu or gpu; without the column, the whole
    /// node) and gpu_clock_mhz (GPU runs at 3 or more clocks give the GPU clock law); repeats
    /// of a configuration are averaged. Runs on one node give the profile; runs on more
    /// nodes, the node law and node power.
    #[arg(long, value_name = "CSV")]
    pub measured: PathBuf,
    /// The machine whose `[power]` section the fit replaces (file or bundled name)
    /// [default: h100-gpu].
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
    /// `weigh=evidence:2,power=on,growth=1,span=0.05,repeat=0.03,doubling=0.05,...`
    /// ([`Rule::parse`] lists the keys); each key optional.
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

/// Parses `--design` ([`Rule::parse`]).
fn parse_rule(s: &str) -> Result<Rule, String> {
    Rule::parse(s)
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
    // `--machine-out` may rewrite the machine file in place; nothing else may.
    let mut onto_machine = vec![("--profile-out", args.profile_out.as_path())];
    onto_machine.extend(args.plot.as_deref().map(|p| ("--plot", p)));
    super::outputs::check_distinct(&[("--machine", machine_file)], &onto_machine)?;
    Ok(())
}

/// Refuses, before anything is written, the flags that a fit on GPU runs (one node, the GPU
/// clock law) has no use for: `--loo` (it refits the CPU time split, and left every clock of a
/// configuration out at once), `--weak` (runs on one node) and, on runs at several clocks,
/// `--plot` (the node chart drew the clocks' spread as the runs' range at one node).
fn gpu_runs_take_no_cpu_flags(args: &FitArgs, runs: &Runs) -> InputResult<()> {
    if !runs.rows().iter().any(|r| r.config.gpus > 0) {
        return Ok(());
    }
    let clocked = runs.rows().iter().any(|r| r.config.gpu_clock_mhz.is_some());
    let (flag, why) = match (args.loo, args.weak) {
        (false, false) if clocked && args.plot.is_some() => (
            "--plot",
            "runs over several node counts: the chart draws time against the node count, and \
             runs at several GPU clocks on one node would show their clocks' spread as one \
             count's run-to-run range; `jouleplan report --gpu-clocks all` draws time and \
             energy against the clock",
        ),
        (true, _) => (
            "--loo",
            "runs without GPUs: leave-one-out refits the CPU runs' time split; a GPU clock law \
             is scored on clocks held out of the fit (fit on 3 clocks, then `jouleplan validate \
             --measured` on every clock)",
        ),
        (_, true) => (
            "--weak",
            "runs over several nodes: GPU runs are fitted on one node, where weak and strong \
             scaling are one",
        ),
        _ => return Ok(()),
    };
    Err(InputError::Argument {
        flag: flag.into(),
        expected: why.into(),
        got: format!("GPU runs in {}", args.measured.display()),
    })
}

/// Runs `fit`: read the machine and the runs, fit (time split, node law, power), print, check
/// the outputs as `plan` would, write them, and optionally leave each configuration out.
pub fn run_fit(args: &FitArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let (machine_file, machine_text) =
        crate::search::inputs::machine_text(args.machine.as_deref())?;
    let machine = MachineDoc::new(&machine_file, machine_text)?;
    check_outputs(args, &machine_file)?;
    let mut outputs = vec![("--profile-out", args.profile_out.as_path())];
    outputs.extend(args.machine_out.as_deref().map(|p| ("--machine-out", p)));
    outputs.extend(args.plot.as_deref().map(|p| ("--plot", p)));
    let _locks = super::outputs::lock_beside(&outputs, Some(&machine_file))?;
    let runs = Runs::read(&args.measured)?;
    gpu_runs_take_no_cpu_flags(args, &runs)?;
    said_of_the_rows(args, &runs, &machine.machine)?;
    let options = FitOptions {
        program: program_name(args),
        weak: args.weak,
        rule: args.design.unwrap_or_default(),
        machine_out: args.machine_out.clone(),
    };
    let memory = crate::calibrate::validate::check_memory_clock(
        (&args.measured, runs.rows()),
        &machine.machine,
        None,
    )?;
    let mut fitted = fit::fit(&runs, &machine, &options)?;
    // Where the machine file names no memory clock, the runs' is the law's.
    if let Some(law) = fitted.outcome.profile.gpu_clock.as_mut() {
        law.memory_clock_mhz = law.memory_clock_mhz.or(memory);
    }
    let time_only = check_power(args, &fitted)?;
    let rows = runs.rows();
    let program = &options.program;
    let mut json = args.json.then(|| {
        fit_json(
            &fitted.outcome,
            (&machine.machine, rows),
            (&args.measured, program),
        )
    });
    if json.is_none() {
        write_fit(&fitted.outcome, (&machine.machine, rows), out)?;
    }
    if let Some(why) = &time_only {
        super::say::note(why);
        json.iter_mut().for_each(|j| j.notes.push(why.clone()));
    }
    if let Some(hint) = crate::calibrate::multi_node::scaling_hint(rows, args.weak) {
        super::say::note(&hint);
        json.iter_mut().for_each(|j| j.notes.push(hint.clone()));
    }
    // Repeats averaged into one point: say where they disagree, and where they are copies.
    let copies = crate::calibrate::trust::repeated_rows_note(&args.measured)?;
    for note in crate::calibrate::trust::noisy_configurations(rows)
        .into_iter()
        .chain(copies)
    {
        super::say::note(&note);
        json.iter_mut().for_each(|j| j.notes.push(note.clone()));
    }
    let wrote = write_outputs(args, &fitted, &machine)?;
    let loo = match args.loo {
        true => Some(fit::leave_one_out(&runs, &machine.machine, &options)?),
        false => None,
    };
    match (json, loo) {
        (Some(mut j), loo) => {
            j.wrote = wrote;
            j.leave_one_out = loo.as_ref().map(block_json);
            crate::artefact::write_sorted(&j, out)?;
        }
        (None, Some(b)) => write_block(&b, out)?,
        (None, None) => {}
    }
    Ok(())
}

/// The notes on how the rows were read: an energy scope taken by default, GPU clocks read as
/// the listed clock within half a MHz.
fn said_of_the_rows(
    args: &FitArgs,
    runs: &Runs,
    machine: &crate::model::machine::Machine,
) -> anyhow::Result<()> {
    if runs.rows().iter().any(|r| r.energy.is_some())
        && let Some(note) = crate::artefact::measured::default_scope_note(&args.measured)?
    {
        super::say::note(&note);
    }
    if let Some(note) =
        crate::calibrate::gpu_fit::snapped_note(&args.measured, runs.rows(), machine)
    {
        super::say::note(&note);
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

/// The profile and the machine file fitted with it, checked as `plan` would check them and
/// written (both, or neither); returns the files written.
fn write_outputs(
    args: &FitArgs,
    fitted: &Fitted,
    machine: &MachineDoc,
) -> anyhow::Result<Vec<String>> {
    let mut profile_file = fitted.profile().to_file();
    // What `plan` checks when it reads the profile, checked before it is written.
    profile_file.validate(&args.profile_out).map_err(|e| {
        anyhow::anyhow!(
            "{}: the fitted profile would be refused when read (nothing written): {e}",
            args.measured.display()
        )
    })?;
    // One fit id in both, so that `plan` refuses a pair from two different fits.
    let mut machine_text = fitted.machine_text.clone();
    if let (Some(path), Some(text)) = (&args.machine_out, &mut machine_text) {
        *text = crate::calibrate::machine_edit::stamp_pair(&mut profile_file, path, text)?;
    }
    let profile_json = profile_file.to_text()? + "\n";
    refuse_or_warn(args, &fitted.problems)?;
    let mut set = vec![SetFile {
        path: &args.profile_out,
        bytes: profile_json.as_bytes(),
        links: Links::Refuse,
    }];
    if let (Some(path), Some(text)) = (&args.machine_out, &machine_text) {
        set.push(SetFile {
            path,
            bytes: text.as_bytes(),
            links: super::outputs::machine_links(&machine.file, path),
        });
    }
    let chart = match &args.plot {
        Some(p) => Some(chart_bytes(
            args,
            machine,
            machine_text.as_deref(),
            &profile_json,
            p,
        )?),
        None => None,
    };
    if let (Some(path), Some(bytes)) = (&args.plot, &chart) {
        set.push(SetFile {
            path,
            bytes,
            links: Links::Refuse,
        });
    }
    write_set(&set)?;
    let wrote: Vec<String> = set.iter().map(|f| f.path.display().to_string()).collect();
    for w in &wrote {
        super::say::progress(&format!("wrote {w}"));
    }
    Ok(wrote)
}

/// `--plot`'s chart of the pair about to be written: the profile planned against the machine
/// file written (`written`), or the one read where none is.
fn chart_bytes(
    args: &FitArgs,
    machine: &MachineDoc,
    written: Option<&str>,
    profile_json: &str,
    path: &Path,
) -> anyhow::Result<Vec<u8>> {
    let machine_pair = match (&args.machine_out, written) {
        (Some(p), Some(text)) => (p.as_path(), text),
        _ => (machine.file.as_path(), machine.text.as_str()),
    };
    let accept = crate::calibrate::trust::Accept {
        other_machine: false,
        model_error: true,
    };
    let profile_pair = (args.profile_out.as_path(), profile_json);
    let loaded = crate::search::inputs::Loaded::from_texts(machine_pair, profile_pair, accept)?;
    super::node_chart::fit_plot_bytes(&args.measured, loaded, path)
}

/// Whether the fit has power to write. Time-only runs (no energy measured) against a machine
/// file without `[power]` give a time-only profile: `Some(why)`, said, and nothing else
/// refused. Energy measured but not enough to identify power, or `--machine-out` without
/// power, is refused.
fn check_power(args: &FitArgs, fitted: &Fitted) -> anyhow::Result<Option<String>> {
    let Some(why) = fitted.power_gap.clone() else {
        return Ok(None);
    };
    if args.machine_out.is_some() {
        return Err(InputError::Argument {
            flag: "--machine-out".into(),
            expected: "measured energy that identifies the power laws".into(),
            got: why,
        }
        .into());
    }
    if fitted.unpowered && fitted.measured_energy {
        return Err(InputError::Mismatch(format!(
            "{}: the machine file has no [power] section and the measured energy cannot give \
             one ({why}); measure energy at two or more core counts or over several nodes, or \
             give a machine file with {}",
            args.measured.display(),
            crate::model::machine::POWER_HINT
        ))
        .into());
    }
    Ok(fitted.unpowered.then(|| {
        format!(
            "energy unavailable: {} measured no energy and the machine file has no [power] \
             section, so the profile holds time only (its node law included); plan it with a \
             machine file that has [power], or measure energy (RAPL, Slurm's \
             ConsumedEnergyRaw) and fit again",
            args.measured.display()
        )
    }))
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
