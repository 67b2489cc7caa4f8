//! `jouleplan fit`: measured time (and energy) CSV -> a profile and the machine's `[power]`
//! section, with the fits' residuals and uncertainties, and optionally each point predicted
//! from the others (`--loo`).

use super::validate::{Block, write_block};
use super::{SourceArgs, bind, fit_to_machine, trust};
use crate::atomic_write::write_atomic;
use crate::calibrate::from_measured::{self, FitOutcome};
use crate::calibrate::machine_edit;
use crate::calibrate::validate::{self as cv, Measured};
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
    /// The runs are weak scaling: each rank keeps its work (the problem grows with the ranks);
    /// the node law then carries weak-scaling growth, and plans from the profile are weak.
    #[arg(long)]
    pub weak: bool,
}

/// Refuses outputs onto the inputs (the measured CSV; the machine file except as the
/// `--machine-out` that rewrites it in place) and two outputs that are one file.
fn check_outputs(args: &FitArgs, machine_file: &Path) -> anyhow::Result<()> {
    let mut outputs = vec![("--profile-out", args.profile_out.as_path())];
    outputs.extend(args.machine_out.as_deref().map(|p| ("--machine-out", p)));
    super::outputs::check_distinct(&[("--measured", &args.measured)], &outputs)?;
    super::outputs::check_distinct(
        &[("--machine", machine_file)],
        &[("--profile-out", &args.profile_out)],
    )?;
    Ok(())
}

/// Runs `fit`.
pub fn run_fit(args: &FitArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let (machine_file, machine_text) = super::sources::machine_text(args.machine.as_deref())?;
    let (machine, unpowered) = Machine::from_toml_for_fit(&machine_file, &machine_text)?;
    check_outputs(args, &machine_file)?;
    let text = crate::input::read_table(&args.measured)?;
    let rows = cv::read_csv(&args.measured, &text)?;
    let program = args.program.clone().unwrap_or_else(|| {
        args.measured
            .file_stem()
            .map_or("program".into(), |s| s.to_string_lossy().into_owned())
    });
    let fitted = from_measured::fit_scaled(&args.measured, &rows, &machine, &program, args.weak)?;
    let no_power = fitted.power.is_none() && fitted.node_power.is_none();
    let why = fitted
        .power_unidentified
        .clone()
        .unwrap_or_else(|| format!("no energy_j column in {}", args.measured.display()));
    if unpowered && no_power {
        return Err(InputError::Mismatch(format!(
            "{}: the machine file has no [power] section and the measured energy cannot give \
             one ({why}); measure energy at two or more core counts or over several nodes, or \
             give a machine file with {}",
            machine_file.display(),
            crate::model::machine::POWER_HINT
        ))
        .into());
    }
    if args.machine_out.is_some() && no_power {
        return Err(InputError::Argument {
            flag: "--machine-out".into(),
            expected: "measured energy that identifies the power laws".into(),
            got: why,
        }
        .into());
    }
    report(&fitted, &machine, out)?;
    // A file without `[power]` gets one; the network's own power is not separable from time
    // and energy, so it is 0 and said so (its idle draw is in idle_w).
    let machine_text = if unpowered {
        format!(
            "{machine_text}\n[power]\n# not measured: time and energy alone cannot separate the \
             network's power; its idle draw is in idle_w\nnetwork_w = 0.0\n"
        )
    } else {
        machine_text
    };
    let profile_json = fitted.profile.to_file().to_text()? + "\n";
    let machine_new = match (&args.machine_out, &fitted.power, &fitted.node_power) {
        (Some(path), Some((laws, power)), _) => Some((
            path,
            machine_with_power(path, &machine_text, &machine, laws, power, &args.measured)?,
        )),
        (Some(path), None, Some(np)) => Some((
            path,
            super::fit_nodes::machine_with_node_power(
                path,
                &machine_text,
                &machine,
                np,
                &args.measured,
            )?,
        )),
        _ => None,
    };
    write_atomic(&args.profile_out, profile_json.as_bytes(), false)?;
    writeln!(out, "wrote {}", args.profile_out.display())?;
    if let Some((path, text)) = machine_new {
        super::outputs::write_machine(&machine_file, path, text.as_bytes())?;
        writeln!(out, "wrote {}", path.display())?;
    }
    if args.loo {
        write_block(
            &leave_one_out(&args.measured, &rows, &machine, &program)?,
            out,
        )?;
    }
    Ok(())
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
        laws.residual_bound(),
        &source,
    )?)
}

/// Prints the splits, the power laws and the power per frequency.
fn report(f: &FitOutcome, machine: &Machine, out: &mut dyn Write) -> std::io::Result<()> {
    let runs: usize = f.samples.iter().map(|s| s.repeats).sum();
    writeln!(
        out,
        "fit: {} configurations from {runs} runs",
        f.samples.len()
    )?;
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
    if f.node_power.is_some() {
        return Ok(());
    }
    let Some((laws, power)) = &f.power else {
        return match &f.power_unidentified {
            Some(why) => writeln!(out, "power: not fitted: {why}"),
            None => writeln!(out, "power: not fitted (no energy_j column)"),
        };
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

/// Each configuration left out in turn, the rest refitted, the left-out one predicted.
fn leave_one_out(
    file: &Path,
    rows: &[Measured],
    machine: &Machine,
    program: &str,
) -> anyhow::Result<Block> {
    let mut configs = Vec::new();
    for r in rows {
        if !configs.contains(&r.config) {
            configs.push(r.config);
        }
    }
    let mut compared = Vec::new();
    for c in configs {
        let (held, rest): (Vec<Measured>, Vec<Measured>) =
            rows.iter().cloned().partition(|r| r.config == c);
        let Ok(fitted) = from_measured::fit(file, &rest, machine, program) else {
            continue;
        };
        let mut m = machine.clone();
        if let Some((_, power)) = &fitted.power {
            m.power = power.clone();
        }
        let mut profile = fitted.profile;
        fit_to_machine(&mut profile, &m);
        let src = SourceArgs {
            accept_model_error: true,
            other_machine: true,
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
    Ok(Block {
        title: "leave-one-out: each configuration refitted without it and predicted".into(),
        rows: compared,
    })
}
