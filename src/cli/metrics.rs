//! `jouleplan metrics`: TALP, Paraver and mpiP files -> runs -> the efficiency trees.

use crate::error::InputError;
use crate::values;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

/// `jouleplan metrics`.
#[derive(Debug, Args)]
pub struct MetricsArgs {
    /// TALP JSON/CSV outputs, Paraver traces (.prv, .prv.gz) or mpiP reports.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Print the runs as CSV.
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// Fixed-length windows over each trace (90s, 250ms, ...).
    #[arg(long, value_name = "DURATION", conflicts_with = "adaptive")]
    pub window: Option<String>,
    /// Adaptive windows: merge while some rank has fewer than N MPI events.
    #[arg(long, value_name = "N")]
    pub adaptive: Option<u32>,
    /// Sends below this many bytes do not wait for the receiver in the critical-path replay.
    #[arg(long, value_name = "BYTES", default_value = "32768")]
    pub eager_limit: u64,
    /// Skip the critical-path replay: aggregate metrics only (no serialisation, transfer, windows).
    #[arg(long)]
    pub no_critical_path: bool,
    /// Force the scaling mode instead of detecting it.
    #[arg(long, value_name = "strong|weak")]
    pub scaling: Option<String>,
    /// Draw the windowed metrics over time to FILE.svg.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// Only these TALP regions (repeat the flag for several; `Global` is the whole run).
    #[arg(long, value_name = "NAME")]
    pub region: Vec<String>,
}

/// Runs `metrics`.
pub fn run_metrics(args: &MetricsArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    use crate::metrics::scaling;
    let inputs: Vec<_> = args.files.iter().map(|f| ("FILE", f.as_path())).collect();
    let _lock = super::outputs::guard(
        &inputs,
        &args
            .plot
            .iter()
            .map(|p| ("--plot", p.as_path()))
            .collect::<Vec<_>>(),
    )?;
    let forced = match args.scaling.as_deref() {
        None => None,
        Some("strong") => Some(scaling::Mode::Strong),
        Some("weak") => Some(scaling::Mode::Weak),
        Some(other) => {
            return Err(InputError::Argument {
                flag: "--scaling".into(),
                expected: "strong or weak".into(),
                got: other.into(),
            }
            .into());
        }
    };
    check_plot(args)?;
    let mut runs = Vec::new();
    for f in &args.files {
        runs.extend(read_file(args, f)?);
    }
    for r in &mut runs {
        r.flag_implausible_pop();
        r.flag_implausible_counters();
    }
    keep_regions(args, &mut runs)?;
    let report = crate::report::metrics::MetricsReport {
        scaling: scaling::scaling(&runs, forced),
        runs,
    };
    if args.json {
        crate::artefact::write_sorted(&report, out)?;
    } else if args.csv {
        crate::report::metrics::write_csv(&report, out)?;
    } else {
        crate::report::metrics::write_text(&report, out)?;
    }
    if let Some(p) = &args.plot {
        crate::report::metrics::write_plot(p, &report).map_err(anyhow::Error::msg)?;
        super::say::progress(&format!("wrote {}", p.display()));
    }
    Ok(())
}

/// `--plot` needs windows to draw and an SVG file.
fn check_plot(args: &MetricsArgs) -> Result<(), InputError> {
    let Some(p) = &args.plot else {
        return Ok(());
    };
    if args.window.is_none() && args.adaptive.is_none() {
        return Err(InputError::Argument {
            flag: "--plot".into(),
            expected: "windows to draw: add --window DURATION or --adaptive N".into(),
            got: p.display().to_string(),
        });
    }
    if p.extension().and_then(|e| e.to_str()) != Some("svg") {
        return Err(InputError::Argument {
            flag: "--plot".into(),
            expected: "a file ending in .svg".into(),
            got: p.display().to_string(),
        });
    }
    Ok(())
}

/// The runs of one file: a Paraver trace, an mpiP report or a TALP output, told by name and
/// content.
fn read_file(
    args: &MetricsArgs,
    f: &std::path::Path,
) -> anyhow::Result<Vec<crate::metrics::run::Run>> {
    use crate::metrics::{mpip, run, talp};
    let name = f.to_string_lossy();
    if name.ends_with(".prv") || name.ends_with(".prv.gz") {
        let opts = crate::metrics::paraver::Options {
            eager_limit: args.eager_limit,
            window: args
                .window
                .as_deref()
                .map(|w| values::parse_duration("--window", w))
                .transpose()?,
            adaptive: args.adaptive,
            no_critical_path: args.no_critical_path,
        };
        return Ok(vec![crate::metrics::paraver::analyse(f, &opts)?]);
    }
    if name.ends_with(".pcf") || name.ends_with(".row") {
        return Err(InputError::Argument {
            flag: "FILE".into(),
            expected: "the trace itself (.prv or .prv.gz): its .pcf and .row are read beside it"
                .into(),
            got: name.into_owned(),
        }
        .into());
    }
    let text = crate::input::read_table(f)?;
    if text.starts_with("@ mpiP") || name.ends_with(".mpiP") {
        Ok(vec![run::from_mpip(&mpip::parse(f, &text)?)])
    } else if name.ends_with(".csv")
        || name.ends_with(".json")
        || text.trim_start().starts_with('{')
    {
        Ok(run::from_talp(&talp::read(f, &text)?))
    } else {
        Err(InputError::Argument {
            flag: "FILE".into(),
            expected: "a TALP output (.json, -pop.csv, -process.csv), a Paraver trace (.prv, \
                       .prv.gz) or an mpiP report (.mpiP)"
                .into(),
            got: format!("{name}, which is none of these"),
        }
        .into())
    }
}

/// `--region`: keeps the runs of the named regions, refusing names no file holds.
fn keep_regions(
    args: &MetricsArgs,
    runs: &mut Vec<crate::metrics::run::Run>,
) -> Result<(), InputError> {
    if args.region.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = runs.iter().filter_map(|r| r.region.clone()).collect();
    runs.retain(|r| r.region.as_ref().is_some_and(|g| args.region.contains(g)));
    if runs.is_empty() {
        let mut names = names;
        names.sort();
        names.dedup();
        return Err(InputError::Argument {
            flag: "--region".into(),
            expected: format!("a region the files hold: {}", names.join(", ")),
            got: args.region.join(", "),
        });
    }
    Ok(())
}
