//! `jouleplan plan`: flags -> validated space and query ([`resolve`]) -> the search -> the front
//! and recommendation, with the chart and job script on request.

use super::job::JobArgs;
use super::say;
use super::sources::{InputArgs, SourceArgs, exporter, provenance, save};
use crate::calibrate::trust::{Trust, warnings_for};
use crate::error::{InputError, InputResult};
use crate::report::Exporter;
use crate::report::csv::Csv;
use crate::report::plot;
use crate::report::slurm;
use crate::search::inputs::{Loaded, SpaceRequest};
use crate::search::plan::Plan;
use crate::search::planner::{self, Planned, Request};
use crate::search::query::Query;
use crate::search::sample::sample;
use crate::search::space::Space;
use crate::values;
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The space to search.
#[derive(Debug, Args, Default)]
pub struct SpaceArgs {
    /// Node counts: values and inclusive ranges, like 1-8,16,32 [default: 1-N, N the machine
    /// file's nodes].
    #[arg(long, value_name = "SPEC")]
    pub nodes: Option<String>,
    /// Cores per node, like 1-4,8 [default: 1-C, C the machine file's cores per node].
    #[arg(long, value_name = "SPEC")]
    pub cores: Option<String>,
    /// Frequencies in GHz, from the machine's set [default: all].
    #[arg(long, value_name = "SPEC")]
    pub freqs: Option<String>,
    /// GPUs per node [default: those the profile has baselines for].
    #[arg(long, value_name = "SPEC")]
    pub gpus: Option<String>,
    /// GPU core clocks in MHz from the machine's gpu_clocks_mhz (870,1305 or 900-1400), or
    /// `all`: every supported clock within the profile's measured range [default: the clock
    /// the profile was measured at].
    #[arg(long, value_name = "SPEC|all")]
    pub gpu_clocks: Option<String>,
}

/// What to recommend.
#[derive(Debug, Args, Default)]
pub struct QueryArgs {
    /// Least energy that finishes within this time (90s, 500ms, 15m, 1h30m, or Slurm's MM:SS,
    /// HH:MM:SS, D-HH:MM:SS; a bare number is refused: give its unit).
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub deadline: Option<String>,
    /// Fastest within this energy (mJ, J, kJ, MJ, Wh, kWh).
    #[arg(long, value_name = "ENERGY", allow_hyphen_values = true)]
    pub budget: Option<String>,
    /// Least energy within (1 + FRACTION) times the reference time (0.1 or 10%).
    #[arg(
        long,
        value_name = "FRACTION",
        conflicts_with = "deadline",
        allow_hyphen_values = true
    )]
    pub slowdown: Option<String>,
    /// Only configurations whose predicted host parallel efficiency is at least this (0.8 or
    /// 80%); combines with the other queries; exit 3 naming the nearest when none qualifies.
    #[arg(long, value_name = "EFFICIENCY", allow_hyphen_values = true)]
    pub min_efficiency: Option<String>,
    /// Reference of --slowdown: N,C,GHZ[,G[,MHZ]] (MHZ: the GPU clock) [default: the fastest
    /// configuration].
    #[arg(long, value_name = "CONFIG", requires = "slowdown")]
    pub reference: Option<String>,
}

/// `jouleplan plan`.
#[derive(Debug, Args, Default)]
pub struct PlanArgs {
    #[command(flatten)]
    pub inputs: InputArgs,
    #[command(flatten)]
    pub space: SpaceArgs,
    #[command(flatten)]
    pub query: QueryArgs,
    /// Print the front as CSV (columns named as the JSON keys, units in the names).
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// Print every front point (the text table shows 40 by default).
    #[arg(long)]
    pub full: bool,
    /// Draw the time-energy chart to FILE.svg or FILE.png.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// Write a Slurm job script for the recommendation (or --pick) to FILE.
    #[arg(long, value_name = "FILE")]
    pub sbatch: Option<PathBuf>,
    /// Front point for --sbatch instead of the recommendation: its index, 0 = fastest.
    #[arg(long, value_name = "INDEX", requires = "sbatch")]
    pub pick: Option<usize>,
    #[command(flatten)]
    pub job: JobArgs,
}

/// Validated inputs of `plan`.
pub struct PlanInputs {
    /// The machine and the profile fitted to it, with the notes and the machine check.
    pub inputs: Loaded,
    /// The space.
    pub space: Space,
    /// The query, its reference and the checks.
    pub request: Request,
}

/// Second phase: raw flags and files become validated domain types.
pub fn resolve(src: &SourceArgs, sa: &SpaceArgs, qa: &QueryArgs) -> InputResult<PlanInputs> {
    let mut inputs = src.load()?;
    let machine = &inputs.machine;
    let request = SpaceRequest {
        nodes: sa
            .nodes
            .as_deref()
            .map(|s| values::parse_int_spec("--nodes", s))
            .transpose()?,
        cores: sa
            .cores
            .as_deref()
            .map(|s| values::parse_int_spec("--cores", s))
            .transpose()?,
        freqs: sa
            .freqs
            .as_deref()
            .map(|s| values::parse_freq_spec(s, machine))
            .transpose()?,
        gpus: sa
            .gpus
            .as_deref()
            .map(|s| values::parse_int_spec("--gpus", s))
            .transpose()?,
        gpu_clocks: sa.gpu_clocks.clone(),
    };
    let space = inputs.space(&request)?;
    let query = query(qa)?;
    if inputs.machine.time_only() && query.budget.is_some() {
        return Err(InputError::Argument {
            flag: "--budget".into(),
            expected: "no energy budget: the machine file has no [power], so energy is \
                       unavailable (plan with --deadline or --slowdown)"
                .into(),
            got: qa.budget.clone().unwrap_or_default(),
        });
    }
    let reference = qa
        .reference
        .as_deref()
        .map(|r| values::parse_config("--reference", r))
        .transpose()?
        .map(|c| values::config_as_shown(&inputs.machine, c))
        .map(|c| at_law_clock(c, &inputs.profile));
    if let Some(c) = &reference {
        crate::search::gpu_clocks::check_config(
            "--reference",
            &inputs.machine,
            &inputs.profile,
            c,
        )?;
    }
    Ok(PlanInputs {
        inputs,
        space,
        request: Request {
            query,
            reference,
            checks: src.checks(),
        },
    })
}

/// A configuration with GPUs named without a clock, on a profile with a clock law: at the
/// law's reference clock, where the model evaluates it, so that its label says so.
fn at_law_clock(
    mut c: crate::model::Config,
    profile: &crate::model::workload::Profile,
) -> crate::model::Config {
    if let (Some(law), None, true) = (&profile.gpu_clock, c.gpu_clock_mhz, c.gpus > 0) {
        c.gpu_clock_mhz = Some(law.reference_mhz);
    }
    c
}

/// The query: deadline, budget, slowdown and least efficiency, each parsed and checked.
fn query(qa: &QueryArgs) -> InputResult<Query> {
    Ok(Query {
        deadline: qa
            .deadline
            .as_deref()
            .map(|d| values::parse_duration("--deadline", d))
            .transpose()?,
        budget: qa
            .budget
            .as_deref()
            .map(|b| values::parse_energy("--budget", b))
            .transpose()?,
        slowdown: qa
            .slowdown
            .as_deref()
            .map(|s| values::parse_slowdown("--slowdown", s))
            .transpose()?,
        min_efficiency: qa
            .min_efficiency
            .as_deref()
            .map(|s| {
                values::parse_fraction("--min-efficiency", s).and_then(|v| {
                    if v <= 1.0 {
                        Ok(v)
                    } else {
                        Err(values::bad(
                            "--min-efficiency",
                            "an efficiency from 0 to 1 (0.8 or 80%)",
                            s,
                        ))
                    }
                })
            })
            .transpose()?,
    })
}

/// Refuses a job-script flag (or a command after `--`) without `--sbatch`: `plan` writes no
/// script then, and the flag would be dropped without a word.
fn job_flags_need_sbatch(job: &JobArgs) -> InputResult<()> {
    let given = [
        ("--app", job.app.clone()),
        (
            "-- COMMAND",
            (!job.command.is_empty()).then(|| job.command.join(" ")),
        ),
        ("--account", job.account.clone()),
        ("--partition", job.partition.clone()),
        ("--job-name", job.job_name.clone()),
        ("--constraint", job.constraint.clone()),
        (
            "--ntasks-per-node",
            job.ntasks_per_node.map(|n| n.to_string()),
        ),
        ("--cpus-per-task", job.cpus_per_task.map(|n| n.to_string())),
        ("--gpus-per-task", job.gpus_per_task.map(|n| n.to_string())),
        (
            "--time-margin",
            // Clap's default, or empty where the bare command builds the flags by default.
            (!matches!(job.time_margin.as_str(), "" | "0.25")).then(|| job.time_margin.clone()),
        ),
    ];
    match given.into_iter().find_map(|(flag, v)| Some((flag, v?))) {
        Some((flag, got)) => Err(values::bad(
            flag,
            "--sbatch FILE with it: it is used only in the job script, which plan writes with \
             --sbatch (or use `jouleplan slurm --config ...`)",
            got,
        )),
        None => Ok(()),
    }
}

/// Runs `plan`; returns the plan for the caller to choose the exit code.
pub fn run_plan(args: &PlanArgs, out: &mut dyn Write) -> anyhow::Result<Plan> {
    let inp = resolve(&args.inputs.source, &args.space, &args.query)?;
    let outputs: Vec<_> = (args.plot.iter().map(|p| ("--plot", p.as_path())))
        .chain(args.sbatch.iter().map(|p| ("--sbatch", p.as_path())))
        .collect();
    let _locks = super::outputs::guard(&args.inputs.source.files(), &outputs)?;
    if let Some(p) = &args.plot {
        check_plot_path(p)?;
    }
    // Job options are checked before the search, so a bad flag costs nothing.
    let job = match &args.sbatch {
        Some(_) => Some(args.job.options(&inp.inputs.profile.program)?),
        None => {
            job_flags_need_sbatch(&args.job)?;
            None
        }
    };
    let Planned { model, plan, trust } = planner::plan(&inp.inputs, &inp.space, &inp.request)?;
    // A --pick past the front is refused before the plan is printed, as other bad flags are.
    if let Some(i) = args.pick {
        picked(&plan, i)?;
    }
    let exp: Box<dyn Exporter> = if args.csv {
        Box::new(Csv)
    } else {
        exporter(args.inputs.json, (!args.full).then_some(40))
    };
    for n in &plan.notes {
        say::note(n);
    }
    for w in &plan.warnings {
        say::warning(w);
    }
    exp.plan(&plan, out)?;
    // The CSV has no place for why no row is recommended: exit 3 says so on standard error,
    // as the text says it in its output and JSON in `query.reason`.
    if args.csv && !plan.answer.feasible {
        say::line(&format!("No recommendation: {}", plan.answer.reason));
    }
    if let Some(path) = &args.plot {
        let sample = sample(&model, &plan.space, SAMPLE_MAX)?;
        plot::write_pareto(path, &plan, &sample, &[]).map_err(anyhow::Error::msg)?;
        super::say::progress(&format!("wrote {}", path.display()));
    }
    if let (Some(path), Some(opts)) = (&args.sbatch, job) {
        write_job(args, &inp, &plan, &trust, (path, &opts))?;
    }
    Ok(plan)
}

/// The front point `--pick` names, or the error giving the front's indices.
fn picked(plan: &Plan, i: usize) -> InputResult<&crate::search::plan::FrontEntry> {
    plan.front.get(i).ok_or_else(|| InputError::Argument {
        flag: "--pick".into(),
        expected: format!(
            "a front index from 0 to {}",
            plan.front.len().saturating_sub(1)
        ),
        got: i.to_string(),
    })
}

/// `--sbatch`: the job script of the recommendation (or of `--pick`); none, said on standard
/// error, when no configuration meets the query.
fn write_job(
    args: &PlanArgs,
    inp: &PlanInputs,
    plan: &Plan,
    trust: &Trust,
    (path, opts): (&Path, &slurm::JobOptions),
) -> anyhow::Result<()> {
    let (entry, reason) = match args.pick {
        Some(i) => {
            let e = picked(plan, i)?;
            (
                e,
                format!(
                    "front point {i} of {} (picked with --pick)",
                    plan.front.len()
                ),
            )
        }
        None => match plan.recommendation() {
            Some(e) => (e, plan.answer.reason.clone()),
            // No configuration meets the query: exit 3 as for the plan, saying why.
            None if !plan.answer.feasible => {
                super::say::line(&format!(
                    "no job script written: {}; choose a front point with --pick INDEX",
                    plan.answer.reason
                ));
                return Ok(());
            }
            None => {
                return Err(InputError::Mismatch(format!(
                    "no job script written: {}; choose a front point with --pick INDEX",
                    plan.answer.reason
                ))
                .into());
            }
        },
    };
    let mut prov = provenance(&inp.inputs.machine, &inp.inputs.profile, reason);
    prov.gpu_clock =
        crate::report::gpu_clock::note(&inp.inputs.machine, &inp.inputs.profile, &entry.prediction);
    prov.warnings = warnings_for(trust, entry.prediction.config.nodes);
    prov.deadline = plan.query.deadline;
    // The recommendation's risk is among the plan's warnings already; a point picked is not.
    if let Some(risk) = slurm::deadline_risk(&entry.prediction, prov.deadline)
        && args.pick.is_some()
    {
        say::warning(&risk);
    }
    prov.mem_per_node_gib = inp
        .inputs
        .profile
        .memory_footprint_gib
        .map(|m| m / f64::from(entry.prediction.config.nodes));
    let script = slurm::job_script(&entry.prediction, &prov, opts)?;
    if let Some(w) = slurm::layout_warning(&entry.prediction, &prov, opts) {
        say::warning(&w);
    }
    save(path, script.as_bytes(), true)?;
    say::progress(&format!(
        "wrote job script {} for {}",
        path.display(),
        crate::search::plan::label(&entry.prediction.config)
    ));
    Ok(())
}

/// Most configurations drawn in a scatter.
pub const SAMPLE_MAX: u64 = 100_000;

pub(crate) fn check_plot_path(p: &Path) -> InputResult<()> {
    plot::format_of(p)
        .map(|_| ())
        .map_err(|_| InputError::Argument {
            flag: "--plot".into(),
            expected: "a file ending in .svg or .png".into(),
            got: p.display().to_string(),
        })
}
