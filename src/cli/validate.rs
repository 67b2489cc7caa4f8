//! `jouleplan validate`: flags -> held-out measurements -> predictions -> the error table.

use super::sources::SourceArgs;
use crate::calibrate::repeats::Replay;
use crate::calibrate::reproduce::EnergyScope;
use crate::calibrate::runs::{CsvFile, Measured};
use crate::calibrate::sacct_runs::SacctFile;
use crate::calibrate::trust;
use crate::calibrate::validate::{self, Compared};
use crate::error::InputError;
use crate::model::workload::{Profile, freq_key};
use crate::report::validation;
use crate::search::inputs::{load_machine_for_validate, load_profile};
use crate::values;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

/// `jouleplan validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Measured runs to predict: CSV with columns nodes,cores,freq_hz,gpus,time_s and
    /// optionally energy_j or gpu_energy_j, ranks, energy_scope (what energy_j covers: node,
    /// cpu or gpu; without the column, the whole node) and gpu_clock_mhz [default: the
    /// profile's own measured points, held out with --use-cores].
    #[arg(long, value_name = "CSV")]
    pub measured: Option<PathBuf>,
    /// Past Slurm jobs to predict: `sacct -P` output with the fields JobID, NNodes, NCPUS,
    /// Elapsed and ConsumedEnergyRaw (NTasks, State and ReqCPUFreq where known), one row per
    /// completed job step.
    #[arg(long, value_name = "FILE", conflicts_with = "measured")]
    pub sacct: Option<PathBuf>,
    /// What sacct's ConsumedEnergyRaw covers on this cluster: node (IPMI, a node's whole
    /// draw) or cpu (RAPL: packages and DRAM).
    #[arg(long, value_name = "SCOPE", default_value = "node", value_parser = ["node", "cpu"])]
    pub energy_scope: String,
    /// Fit on the profile's measured points at these core counts only (1,4,16); its other
    /// measured points are predicted as held-out measurements (not with --measured or --sacct,
    /// whose runs are predicted instead).
    #[arg(long, value_name = "SPEC", conflicts_with_all = ["measured", "sacct"])]
    pub use_cores: Option<String>,
    /// Fit on the profile's measured points at these frequencies only (GHz: 0.6,0.8,1.1); with
    /// --use-cores, at those core counts and these frequencies (not with --measured or
    /// --sacct).
    #[arg(long, value_name = "GHZ,...", conflicts_with_all = ["measured", "sacct"])]
    pub use_freqs: Option<String>,
    /// Also leave each measured core count strictly inside the measured range out in turn,
    /// and predict it from the others.
    #[arg(long)]
    pub loo: bool,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Draw predicted against measured (the first set of points: time, and energy when
    /// measured; log axes, y = x and a ±10% band) to FILE.svg or FILE.png.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
}

/// Where runs were given (`--measured`, `--sacct`) but the machine or the profile was not: a
/// refusal of the runs said with which bundled demo file stood in, and what to give instead
/// (`validate --measured ALL.csv` alone predicts them with the demo H100 profile). Other
/// errors, and every error where both were given, pass unchanged.
fn defaults_hint(args: &ValidateArgs) -> impl Fn(anyhow::Error) -> anyhow::Error {
    let given = args.measured.is_some() || args.sacct.is_some();
    let missing: Vec<&str> = [
        (
            args.source.machine.is_none(),
            "machine `h100-gpu` (no --machine)",
        ),
        (
            args.source.profile.is_none(),
            "profile `gpu-mix-h100` (no --profile)",
        ),
    ]
    .into_iter()
    .filter_map(|(absent, what)| absent.then_some(what))
    .collect();
    let hint = (given && !missing.is_empty()).then(|| {
        format!(
            " (validate read the bundled demo {}: give --machine and --profile, the files \
             the runs are to be predicted with, as plan was given them)",
            missing.join(" and ")
        )
    });
    // Bad input stays bad input (exit 2), the hint added to its message; a file that cannot
    // be read, or whose text is not the format, is the file's alone.
    move |e| match (&hint, e.downcast_ref::<InputError>()) {
        (Some(h), Some(input)) if about_inputs(input) => {
            InputError::Mismatch(format!("{input}{h}")).into()
        }
        _ => e,
    }
}

/// Whether a refusal of measured runs concerns the machine or the profile they were held
/// against (a clock the machine does not list, rows the profile cannot predict), not the
/// file's own form.
fn about_inputs(e: &InputError) -> bool {
    let said = e.to_string();
    !matches!(e, InputError::Read { .. } | InputError::Syntax { .. })
        && (said.contains("machine") || said.contains("profile"))
}

/// The note for a profile whose own measured energy is not scored: the machine has no
/// `[power]` to predict it from.
fn unscored_own_energy(profile: &Profile, machine: &crate::model::machine::Machine) -> String {
    format!(
        "{}: its measured energy is not scored: {} has no [power] section to predict it from; \
         time alone is scored",
        profile.file.display(),
        machine.file.display()
    )
}

/// Runs `validate`.
pub fn run_validate(args: &ValidateArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    if let Some(p) = &args.plot {
        super::plan::check_plot_path(p)?;
    }
    let plots: Vec<_> = args.plot.iter().map(|p| ("--plot", p.as_path())).collect();
    let mut inputs = args.source.files();
    inputs.extend(args.measured.iter().map(|p| ("--measured", p.as_path())));
    inputs.extend(args.sacct.iter().map(|p| ("--sacct", p.as_path())));
    let _lock = super::outputs::guard(&inputs, &plots)?;
    let (src_m, src_p) = (
        args.source.machine.as_deref(),
        args.source.profile.as_deref(),
    );
    for said in crate::search::inputs::settle_pair(src_m, src_p)? {
        super::say::note(&said);
    }
    let mut machine = load_machine_for_validate(src_m)?;
    let mut profile = load_profile(src_p)?;
    if let Some(note) = crate::search::inputs::gpu_energy_without_power(&mut machine, &profile) {
        super::say::note(&note);
    }
    let cleared = crate::search::inputs::time_only_profile(&machine, &mut profile);
    crate::search::inputs::same_fit(&machine, &profile)?;
    let checks = args.source.checks();
    trust::machine_matches(&machine, &profile, checks.accept)?;
    // Held-out profile points describe the baseline run itself: predict them with S = S_s.
    let given = args.measured.as_ref().or(args.sacct.as_ref());
    if given.is_none() {
        profile.target_iterations = profile.baseline_iterations;
    }
    let held_out = args.use_cores.is_some() || args.use_freqs.is_some();
    let hint = defaults_hint(args);
    let measured = measured_rows(args, &machine, &mut profile, held_out).map_err(&hint)?;
    let most = measured.iter().map(|r| r.config.nodes).max().unwrap_or(1);
    let energy = measured.iter().any(|r| r.energy.is_some());
    let reach = crate::search::inputs::validate_reaches(&machine, most, energy)?;
    let own = (cleared && given.is_none()).then(|| unscored_own_energy(&profile, &machine));
    if let Some(note) = own.or(reach) {
        super::say::note(&note);
    }
    let csv = args.measured.as_deref().map(CsvFile);
    let sacct = args.sacct.as_deref().map(|path| SacctFile {
        path,
        machine: &machine,
        scope: sacct_scope(args),
    });
    let predicted = given.map_or("the profile's own measured points".to_string(), |p| {
        p.display().to_string()
    });
    let runs = (csv.as_ref().map(|c| c as &dyn Replay))
        .or_else(|| sacct.as_ref().map(|c| c as &dyn Replay));
    let mut scored = validate::validate(&machine, &profile, (&measured, &predicted, runs), &checks)
        .map_err(|e| hint(e.into()))?;
    if let Some(path) = given {
        refuse_if_nothing_predicted(path, &scored.validation.rows).map_err(&hint)?;
    }
    let mut blocks = vec![scored.validation];
    if args.loo {
        leave_one_out(
            (&machine, &profile, &checks),
            &mut blocks,
            &mut scored.notes,
        )?;
    }
    if let Some(path) = &args.plot {
        plot(path, &blocks[0].rows)?;
        super::say::progress(&format!("wrote {}", path.display()));
    }
    write_blocks(args.json, &blocks, (&scored.notes, &scored.problems), out)
}

/// The blocks as one JSON object, or as text with the notes on standard error.
fn write_blocks(
    json: bool,
    blocks: &[crate::calibrate::validate::Validation],
    (notes, problems): (&[String], &[String]),
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    if json {
        let json = validation::to_json(blocks, notes, problems);
        crate::artefact::write_sorted(&json, out)?;
        return Ok(());
    }
    for n in notes {
        super::say::note(n);
    }
    for (i, b) in blocks.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        validation::write_block(b, out)?;
    }
    validation::write_problems(problems, out)?;
    Ok(())
}

/// `--loo`: the block of each interior core count predicted from the others, or, where the
/// profile has none to leave out, a note saying so (with a clock law's own left-out error).
fn leave_one_out(
    (machine, profile, checks): (&crate::model::machine::Machine, &Profile, &trust::Checks),
    blocks: &mut Vec<crate::calibrate::validate::Validation>,
    notes: &mut Vec<String>,
) -> anyhow::Result<()> {
    let left_out = validate::leave_cores_out(machine, profile, checks)?;
    match left_out.rows.is_empty() {
        true => notes.push(validate::nothing_left_out(profile)),
        false => blocks.push(left_out),
    }
    Ok(())
}

/// The rows to score: the CSV's (`--measured`), the sacct jobs' (`--sacct`), the profile's
/// points held out of the fit (`--use-cores`, `--use-freqs`), or the profile's own points.
fn measured_rows(
    args: &ValidateArgs,
    machine: &crate::model::machine::Machine,
    profile: &mut Profile,
    held_out: bool,
) -> anyhow::Result<Vec<Measured>> {
    Ok(match (&args.measured, &args.sacct) {
        (Some(path), _) => {
            let mut rows = crate::calibrate::runs::read_csv_file(path)?;
            if let Some(note) = validate::check_gpu_clocks(path, machine, &mut rows)? {
                super::say::note(&note);
            }
            validate::check_memory_clock((path, &rows), machine, Some(profile))?;
            if rows.iter().any(|r| r.energy.is_some())
                && let Some(note) = crate::artefact::measured::default_scope_note(path)?
            {
                super::say::note(&note);
            }
            rows
        }
        (None, Some(path)) => {
            let scope = sacct_scope(args);
            let (rows, unread) = crate::calibrate::sacct_runs::read_file(path, machine, scope)?;
            if let Some(note) = unread {
                super::say::note(&note);
            }
            rows
        }
        (None, None) if held_out => hold_out(profile, machine, args)?,
        (None, None) => profile
            .baseline
            .iter()
            .filter(|p| p.measured)
            .map(|p| validate::as_measured(profile, p))
            .collect(),
    })
}

/// What `--sacct`'s energy covers (clap allows node and cpu only).
fn sacct_scope(args: &ValidateArgs) -> EnergyScope {
    EnergyScope::from_name(&args.energy_scope).unwrap_or(EnergyScope::Node)
}

/// A measured CSV none of whose rows the model can predict validates nothing: bad input.
fn refuse_if_nothing_predicted(path: &std::path::Path, rows: &[Compared]) -> anyhow::Result<()> {
    if rows.iter().any(|r| r.not_predicted.is_none()) {
        return Ok(());
    }
    let why: Vec<String> = validate::not_predicted_reasons(rows)
        .iter()
        .take(3)
        .map(|(w, n)| format!("{n} x {w}"))
        .collect();
    Err(InputError::Mismatch(format!(
        "{}: {} be predicted with this profile and machine ({}): measure inside the \
         profile's range, or fit a profile on these runs with `jouleplan fit`",
        path.display(),
        match rows.len() {
            1 => "its one configuration cannot".to_string(),
            n => format!("none of its {n} configurations can"),
        },
        why.join("; ")
    ))
    .into())
}

/// Draws the compared points of one block: time, and energy in its measured scope.
fn plot(path: &std::path::Path, rows: &[Compared]) -> anyhow::Result<()> {
    use crate::report::plot::chart_label;
    use crate::report::plot::validation::{Panel, write_validation};
    let (mut time, mut time_labels) = (Vec::new(), Vec::new());
    let (mut energy, mut energy_labels) = (Vec::new(), Vec::new());
    let mut scope = None;
    for r in rows {
        let name = chart_label(&r.measured.config);
        if let Some(p) = r.time_s {
            time.push((r.measured.time_s, p));
            time_labels.push(name.clone());
        }
        if let (Some(p), Some((m, s))) = (r.energy_j, r.measured.energy) {
            energy.push((m, p));
            energy_labels.push(name);
            scope = Some(s);
        }
    }
    let mut panels = vec![Panel {
        name: "time",
        pairs: time,
        labels: time_labels,
        label: crate::report::plot::time_label,
    }];
    if let Some(s) = scope {
        panels.push(Panel {
            name: s.name(),
            pairs: energy,
            labels: energy_labels,
            label: crate::report::plot::energy_label,
        });
    }
    write_validation(path, &panels).map_err(anyhow::Error::msg)
}

/// Removes the measured points outside `--use-cores`/`--use-freqs` from the profile and
/// returns them as held-out measurements.
fn hold_out(
    profile: &mut Profile,
    machine: &crate::model::machine::Machine,
    args: &ValidateArgs,
) -> anyhow::Result<Vec<Measured>> {
    let described = profile.describe_points();
    let cores = args
        .use_cores
        .as_deref()
        .map(|s| values::parse_int_spec("--use-cores", s))
        .transpose()?;
    let freqs: Option<Vec<u64>> = args
        .use_freqs
        .as_deref()
        .map(|s| values::parse_ghz_values("--use-freqs", s))
        .transpose()?
        .map(|v| {
            v.iter()
                .map(|&hz| {
                    let f = crate::units::Hertz(hz);
                    match machine.ambiguous_frequency(f) {
                        Some(why) => Err(values::bad(
                            "--use-freqs",
                            format!("one of {} GHz; {why}", machine.frequency_list_ghz()),
                            format!("{}", f.ghz()),
                        )),
                        None => Ok(freq_key(values::frequency_as_shown(machine, f))),
                    }
                })
                .collect::<Result<_, _>>()
        })
        .transpose()?;
    let held = profile.restrict(|p| {
        cores.as_ref().is_none_or(|c| c.contains(&p.cores))
            && freqs.as_ref().is_none_or(|f| f.contains(&freq_key(p.freq)))
    });
    if !profile.baseline.iter().any(|p| p.measured) {
        return Err(InputError::Argument {
            flag: "--use-cores/--use-freqs".into(),
            expected: format!("points the profile measured: {described}"),
            got: format!(
                "{} / {}",
                args.use_cores.as_deref().unwrap_or("all cores"),
                args.use_freqs.as_deref().unwrap_or("all frequencies")
            ),
        }
        .into());
    }
    Ok(held
        .iter()
        .map(|p| validate::as_measured(profile, p))
        .collect())
}
