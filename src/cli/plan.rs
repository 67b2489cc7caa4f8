//! `jouleplan plan`: flags -> validated space and query ([`resolve`]) -> the search -> the front
//! and recommendation, with the chart and job script on request.

use super::*;
use crate::error::{InputError, InputResult};
use crate::model::machine::Machine;
use crate::model::workload::Profile;
use crate::model::{Config, Model};
use crate::report::Exporter;
use crate::report::csv::Csv;
use crate::report::plot;
use crate::report::slurm;
use crate::search::plan::{Plan, plan};
use crate::search::query::Query;
use crate::search::sample::sample;
use crate::search::space::Space;
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
}

/// What to recommend.
#[derive(Debug, Args, Default)]
pub struct QueryArgs {
    /// Least energy that finishes within this time (90s, 500ms, 15m, 1h30m, HH:MM:SS,
    /// D-HH:MM:SS).
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub deadline: Option<String>,
    /// Fastest within this energy (J, kJ, MJ, Wh, kWh).
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
    /// Reference of --slowdown: N,C,GHZ[,G] [default: the fastest configuration].
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
    /// The machine.
    pub machine: Machine,
    /// The workload.
    pub profile: Profile,
    /// The space.
    pub space: Space,
    /// The query.
    pub query: Query,
    /// The slowdown reference.
    pub reference: Option<Config>,
    /// What was assumed or left out while fitting the inputs together, for the user to see.
    pub notes: Vec<String>,
    /// The machine check so far (the model check follows once the model is built).
    pub trust: trust::Trust,
}

/// Second phase: raw flags and files become validated domain types.
pub fn resolve(src: &SourceArgs, sa: &SpaceArgs, qa: &QueryArgs) -> InputResult<PlanInputs> {
    let Loaded {
        machine,
        profile,
        mut notes,
        trust,
    } = load_sources(src)?;
    let mut space = Space::full(&machine, &profile);
    if let Some(s) = &sa.nodes {
        space.nodes = values::parse_int_spec("--nodes", s)?;
    }
    match &sa.cores {
        Some(s) => space.cores = values::parse_int_spec("--cores", s)?,
        None => {
            let have = profile.core_counts();
            let left_out: Vec<u64> = space
                .cores
                .iter()
                .filter(|c| !have.contains(c))
                .map(|&c| u64::from(c))
                .collect();
            if !left_out.is_empty() {
                space.cores.retain(|c| have.contains(c));
                notes.push(format!(
                    "cores {} left out: outside the core counts the profile measured, where \
                     nothing is extrapolated (measure them with `jouleplan profile --cores ...`)",
                    crate::model::workload::compact_list(&left_out)
                ));
            }
        }
    }
    if let Some(s) = &sa.freqs {
        space.freqs = values::parse_freq_spec(s, &machine)?;
    }
    if let Some(s) = &sa.gpus {
        space.gpus = values::parse_int_spec("--gpus", s)?;
    }
    space.validate(&machine)?;
    let most = space.nodes.iter().copied().max().unwrap_or(1);
    one_node_without_network(&machine, most)?;
    let query = query(qa)?;
    if machine.time_only() && query.budget.is_some() {
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
        .transpose()?;
    Ok(PlanInputs {
        machine,
        profile,
        space,
        query,
        reference,
        notes,
        trust,
    })
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

/// Binds and checks the model, searches, and gives the plan its notes and its recommendation's
/// warnings; returns the model, the plan and the trust figures (for job scripts of other front
/// points).
pub(crate) fn search_plan<'a>(
    inp: &'a PlanInputs,
    src: &SourceArgs,
) -> InputResult<(Model<'a>, Plan, trust::Trust)> {
    let (mut trust, mut notes) = (inp.trust.clone(), inp.notes.clone());
    let model = bind(&inp.machine, &inp.profile, src, &mut trust, &mut notes)?;
    let mut plan = plan(&model, &inp.space, inp.query, inp.reference)?;
    plan.notes.extend(notes);
    plan.warnings = plan
        .recommendation()
        .map(|r| warnings_for(&trust, r.prediction.config.nodes))
        .unwrap_or_default();
    if let Some(r) = &plan.risk {
        plan.warnings
            .push(crate::search::plan::describe_risk(r, model.coverage()));
    }
    Ok((model, plan, trust))
}

/// Runs `plan`; returns the plan for the caller to choose the exit code.
pub fn run_plan(args: &PlanArgs, out: &mut dyn Write) -> anyhow::Result<Plan> {
    let inp = resolve(&args.inputs.source, &args.space, &args.query)?;
    let outputs: Vec<&std::path::Path> = args
        .plot
        .iter()
        .chain(&args.sbatch)
        .map(|p| p.as_path())
        .collect();
    let _locks = super::outputs::lock(&outputs)?;
    if let Some(p) = &args.plot {
        check_plot_path(p)?;
    }
    // Job options are checked before the search, so a bad flag costs nothing.
    let job = match &args.sbatch {
        Some(_) => Some(args.job.options(&inp.profile.program)?),
        None => None,
    };
    let (model, plan, trust) = search_plan(&inp, &args.inputs.source)?;
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

/// `--sbatch`: the job script of the recommendation (or of `--pick`); none, said on standard
/// error, when no configuration meets the query.
fn write_job(
    args: &PlanArgs,
    inp: &PlanInputs,
    plan: &Plan,
    trust: &trust::Trust,
    (path, opts): (&Path, &slurm::JobOptions),
) -> anyhow::Result<()> {
    let (entry, reason) = match args.pick {
        Some(i) => {
            let e = plan.front.get(i).ok_or_else(|| InputError::Argument {
                flag: "--pick".into(),
                expected: format!(
                    "a front index from 0 to {}",
                    plan.front.len().saturating_sub(1)
                ),
                got: i.to_string(),
            })?;
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
    let mut prov = provenance(&inp.machine, &inp.profile, reason);
    prov.warnings = warnings_for(trust, entry.prediction.config.nodes);
    prov.mem_per_node_gib = inp
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
