//! The command line: clap structs become validated domain types in one step
//! ([`Inputs::resolve`]); the model and the search never see clap.

pub mod completions;
pub mod machine;
pub mod profile;
pub mod trust;
pub mod validate;
pub mod values;

use crate::error::{InputError, InputResult};
use crate::model::machine::Machine;
use crate::model::workload::Profile;
use crate::model::{Config, Model, Outcome};
use crate::report::csv::Csv;
use crate::report::json::Json;
use crate::report::slurm::{self, JobOptions};
use crate::report::text::Text;
use crate::report::{Exporter, PredictionView};
use crate::report::{html, plot};
use crate::search::plan::{Plan, plan};
use crate::search::query::Query;
use crate::search::sample::sample;
use crate::search::space::Space;
use clap::{Args, Parser, Subcommand};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Machines bundled in the binary: name, file name, TOML text.
pub const BUNDLED_MACHINES: &[(&str, &str, &str)] = &[
    (
        "xeon-phi-57c",
        "models/xeon-phi-57c.toml",
        include_str!("../../models/xeon-phi-57c.toml"),
    ),
    (
        "xeon-e5-2603-cluster",
        "models/xeon-e5-2603-cluster.toml",
        include_str!("../../models/xeon-e5-2603-cluster.toml"),
    ),
];

/// Profiles bundled in the binary: name, file name, JSON text.
pub const BUNDLED_PROFILES: &[(&str, &str, &str)] = &[(
    "spmv-xeon-phi",
    "examples/profiles/spmv-xeon-phi.json",
    include_str!("../../examples/profiles/spmv-xeon-phi.json"),
)];

/// Exit code for bad input (files, flags).
pub const EXIT_BAD_INPUT: i32 = 2;
/// Exit code for a query that no configuration satisfies.
pub const EXIT_INFEASIBLE: i32 = 3;

/// jouleplan: energy-aware configuration planner for MPI+OpenMP (and GPU) jobs.
#[derive(Debug, Parser)]
#[command(name = "jouleplan", version, about, long_about = None)]
pub struct Cli {
    /// What to do; with none, `plan` runs on the bundled default machine and workload.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Search every configuration for the exact time-energy Pareto front and recommend one.
    Plan(PlanArgs),
    /// Predict one configuration with its full time and energy breakdown.
    Predict(PredictArgs),
    /// Write a Slurm job script for any configuration.
    Slurm(SlurmArgs),
    /// Write a self-contained report: charts (SVG, PNG), the front (JSON, CSV) and index.html.
    Report(ReportArgs),
    /// Efficiency metrics from TALP outputs, Paraver traces and mpiP reports.
    Metrics(MetricsArgs),
    /// Measure the program on this node at each (cores, frequency, GPUs) point and write the
    /// workload profile that `plan` reads.
    Profile(profile::ProfileArgs),
    /// Predictions against measurements the model did not see: held-out profile points,
    /// leave-one-out over core counts, or a CSV of measured runs.
    Validate(validate::ValidateArgs),
    /// Write a machine file from this node (`init`), or check one (`check`).
    Machine(machine::MachineArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(completions::CompletionsArgs),
    /// Print the man page (roff; `jouleplan man | man -l -`).
    Man,
}

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

/// What a job script needs beyond the configuration.
#[derive(Debug, Args, Default)]
pub struct JobArgs {
    /// The program and its arguments as one shell-quoted string ('./app --in "my file"');
    /// or give them after `--`.
    #[arg(long, value_name = "COMMAND")]
    pub app: Option<String>,
    /// Slurm account.
    #[arg(long, value_name = "A")]
    pub account: Option<String>,
    /// Slurm partition.
    #[arg(long, value_name = "P")]
    pub partition: Option<String>,
    /// Time limit = predicted time x (1 + FRACTION), rounded up to a minute.
    #[arg(
        long,
        value_name = "FRACTION",
        default_value = "0.25",
        allow_hyphen_values = true
    )]
    pub time_margin: String,
    /// Job name [default: jouleplan-<program>].
    #[arg(long, value_name = "NAME")]
    pub job_name: Option<String>,
    /// Slurm node features the job needs (`--constraint` in the script: h100, 'skylake&ib').
    #[arg(long, value_name = "FEATURES")]
    pub constraint: Option<String>,
    /// The program and its arguments, word by word (instead of --app).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

impl JobArgs {
    fn options(&self, program: &str) -> InputResult<JobOptions> {
        let app = match (&self.app, self.command.is_empty()) {
            (Some(_), false) => {
                return Err(InputError::Argument {
                    flag: "--app".into(),
                    expected: "the command either in --app or after --, not both".into(),
                    got: "both".into(),
                });
            }
            (Some(a), true) => slurm::split_app("--app", a)?,
            (None, false) => self.command.clone(),
            (None, true) => {
                return Err(InputError::Argument {
                    flag: "--app".into(),
                    expected: "the program the job runs: --app './app args' or -- ./app args"
                        .into(),
                    got: "nothing".into(),
                });
            }
        };
        let job_name = self.job_name.clone().unwrap_or_else(|| {
            let clean: String = program
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || "_-.".contains(c) {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            format!("jouleplan-{clean}")
        });
        let opts = JobOptions {
            app,
            account: self.account.clone(),
            partition: self.partition.clone(),
            time_margin: values::parse_fraction("--time-margin", &self.time_margin)?,
            job_name,
            constraint: self.constraint.clone(),
        };
        opts.validate()?;
        Ok(opts)
    }
}

/// `jouleplan slurm`.
#[derive(Debug, Args)]
pub struct SlurmArgs {
    /// The configuration: nodes,cores,GHz[,gpus].
    #[arg(long, value_name = "N,C,GHZ[,G]")]
    pub config: String,
    /// Write the script here (atomically, executable) instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub sbatch: Option<PathBuf>,
    #[command(flatten)]
    pub inputs: InputArgs,
    #[command(flatten)]
    pub job: JobArgs,
}

/// Where the machine and the workload come from.
#[derive(Debug, Args, Default, Clone)]
pub struct SourceArgs {
    /// Machine description (TOML) or the name of a bundled one [default: xeon-phi-57c].
    #[arg(long, value_name = "FILE")]
    pub machine: Option<String>,
    /// Workload profile (JSON) or the name of a bundled one [default: spmv-xeon-phi].
    #[arg(long, value_name = "FILE")]
    pub profile: Option<String>,
    /// Plan a profile against a machine file that does not describe the node it was measured
    /// on (the recommendation then says so).
    #[arg(long)]
    pub other_machine: bool,
    /// Plan even where the model cannot reproduce the profile's own measured points or most of
    /// a point's time is unexplained (the recommendation then says so).
    #[arg(long)]
    pub accept_model_error: bool,
}

impl SourceArgs {
    fn accept(&self) -> trust::Accept {
        trust::Accept {
            other_machine: self.other_machine,
            model_error: self.accept_model_error,
        }
    }
}

/// The inputs and the output format.
#[derive(Debug, Args, Default)]
pub struct InputArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The space to search.
#[derive(Debug, Args, Default)]
pub struct SpaceArgs {
    /// Node counts: values and inclusive ranges, like 1-8,16,32 [default: 1..=n_max].
    #[arg(long, value_name = "SPEC")]
    pub nodes: Option<String>,
    /// Cores per node [default: 1..=c_max].
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
    /// Fastest within this energy (J, kJ, MJ, kWh).
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

/// `jouleplan report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub space: SpaceArgs,
    #[command(flatten)]
    pub query: QueryArgs,
    /// Folder for index.html, pareto.svg, pareto.png, breakdown.svg, front.json, front.csv.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// `jouleplan predict`.
#[derive(Debug, Args)]
pub struct PredictArgs {
    /// The configuration: nodes,cores,GHz[,gpus].
    #[arg(long, value_name = "N,C,GHZ[,G]")]
    pub config: String,
    #[command(flatten)]
    pub inputs: InputArgs,
}

/// Loads a machine from a file, or a bundled one by name; the default is the first bundled.
pub fn load_machine(arg: Option<&str>) -> InputResult<Machine> {
    load_bundled(arg, BUNDLED_MACHINES, "--machine", Machine::from_toml)
}

/// Loads a profile from a file, or a bundled one by name; the default is the first bundled.
pub fn load_profile(arg: Option<&str>) -> InputResult<Profile> {
    load_bundled(arg, BUNDLED_PROFILES, "--profile", Profile::from_json)
}

fn load_bundled<T>(
    arg: Option<&str>,
    bundled: &[(&str, &str, &str)],
    flag: &str,
    parse: fn(&Path, &str) -> InputResult<T>,
) -> InputResult<T> {
    let name = arg.unwrap_or(bundled[0].0);
    let path = PathBuf::from(name);
    if path.exists() || arg.is_some_and(|a| a.contains('/') || a.contains('.')) {
        let text = crate::input::read_file(&path)?;
        return parse(&path, &text);
    }
    match bundled.iter().find(|b| b.0 == name) {
        Some((_, file, text)) => parse(&PathBuf::from(format!("{file} (bundled)")), text),
        None => Err(InputError::Argument {
            flag: flag.into(),
            expected: format!(
                "a file, or a bundled name: {}",
                bundled.iter().map(|b| b.0).collect::<Vec<_>>().join(", ")
            ),
            got: name.into(),
        }),
    }
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
    let query = Query {
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
    };
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

/// A machine and a profile fitted to it.
pub struct Loaded {
    /// The machine.
    pub machine: Machine,
    /// The profile, with derived points.
    pub profile: Profile,
    /// What the user must be told.
    pub notes: Vec<String>,
    /// The machine check (the model check follows in [`bind`]).
    pub trust: trust::Trust,
}

/// Loads the machine and the profile, checks that the profile was measured on that machine,
/// and fits the profile to the machine's core counts ([`crate::calibrate::core_fill`]) and
/// frequencies ([`Profile::fill_frequencies`]). The notes say what the profile could not
/// measure and which points were derived.
pub fn load_sources(src: &SourceArgs) -> InputResult<Loaded> {
    let machine = load_machine(src.machine.as_deref())?;
    let mut profile = load_profile(src.profile.as_deref())?;
    let trust = trust::machine_matches(&machine, &profile, src.accept())?;
    let mut notes: Vec<String> = profile
        .assumptions
        .iter()
        .map(|a| format!("profile assumption: {a}"))
        .collect();
    notes.extend(trust.notes.iter().cloned());
    notes.extend(trust::estimates(&profile));
    notes.extend(fit_to_machine(&mut profile, &machine));
    Ok(Loaded {
        machine,
        profile,
        notes,
        trust: trust::Trust {
            notes: Vec::new(),
            ..trust
        },
    })
}

/// Fits a profile to a machine: derived points for the machine's core counts inside the
/// measured range, then for its frequencies. Returns what was done.
pub fn fit_to_machine(profile: &mut Profile, machine: &Machine) -> Vec<String> {
    let wanted: Vec<u32> = (1..=machine.cores_per_node).collect();
    let mut notes = crate::calibrate::core_fill::fill_cores(profile, &wanted).1;
    notes.extend(profile.fill_frequencies(&machine.frequencies));
    notes
}

/// Binds the model and checks it against the profile's own measurements (MODEL.md 6b);
/// appends what the user must be told to `notes`.
pub fn bind<'a>(
    machine: &'a Machine,
    profile: &'a Profile,
    src: &SourceArgs,
    trust: &mut trust::Trust,
    notes: &mut Vec<String>,
) -> InputResult<Model<'a>> {
    let model = Model::new(machine, profile)?;
    trust::check_model(&model, src.accept(), trust)?;
    notes.append(&mut trust.notes);
    Ok(model)
}

/// The warnings a recommendation at `nodes` nodes carries.
fn warnings_for(trust: &trust::Trust, nodes: u32) -> Vec<String> {
    let mut w = trust.warnings.clone();
    if nodes > 1 {
        w.extend(trust.multi_node_warnings.iter().cloned());
    }
    w
}

/// Runs `plan`; returns the plan for the caller to choose the exit code.
pub fn run_plan(args: &PlanArgs, out: &mut dyn Write) -> anyhow::Result<Plan> {
    let mut inp = resolve(&args.inputs.source, &args.space, &args.query)?;
    if let Some(p) = &args.plot {
        check_plot_path(p)?;
    }
    // Job options are checked before the search, so a bad flag costs nothing.
    let job = match &args.sbatch {
        Some(_) => Some(args.job.options(&inp.profile.program)?),
        None => None,
    };
    let model = bind(
        &inp.machine,
        &inp.profile,
        &args.inputs.source,
        &mut inp.trust,
        &mut inp.notes,
    )?;
    let mut plan = plan(&model, &inp.space, inp.query, inp.reference)?;
    plan.notes.extend(inp.notes.iter().cloned());
    plan.warnings = plan
        .recommendation()
        .map(|r| warnings_for(&inp.trust, r.prediction.config.nodes))
        .unwrap_or_default();
    let exp: Box<dyn Exporter> = if args.csv {
        Box::new(Csv)
    } else {
        exporter(args.inputs.json, (!args.full).then_some(40))
    };
    exp.plan(&plan, out)?;
    if let Some(path) = &args.plot {
        let sample = sample(&model, &plan.space, SAMPLE_MAX)?;
        plot::write_pareto(path, &plan, &sample).map_err(anyhow::Error::msg)?;
        eprintln!("wrote {}", path.display());
    }
    if let (Some(path), Some(opts)) = (&args.sbatch, job) {
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
        prov.warnings = warnings_for(&inp.trust, entry.prediction.config.nodes);
        prov.mem_per_node_gib = inp
            .profile
            .memory_footprint_gib
            .map(|m| m / f64::from(entry.prediction.config.nodes));
        let script = slurm::job_script(&entry.prediction, &prov, &opts)?;
        save(path, script.as_bytes(), true)?;
        eprintln!(
            "wrote job script {} for {}",
            path.display(),
            crate::search::plan::label(&entry.prediction.config)
        );
    }
    Ok(plan)
}

fn provenance(machine: &Machine, profile: &Profile, reason: String) -> slurm::Provenance {
    slurm::Provenance {
        machine: (
            machine.name.clone(),
            machine.file.display().to_string(),
            machine.digest.clone(),
        ),
        profile: (
            profile.program.clone(),
            profile.file.display().to_string(),
            profile.digest.clone(),
        ),
        reason,
        warnings: Vec::new(),
        mem_per_node_gib: None,
    }
}

/// Runs `metrics`.
pub fn run_metrics(args: &MetricsArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    use crate::metrics::{mpip, run, scaling, talp};
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
    if let Some(p) = &args.plot {
        if args.window.is_none() && args.adaptive.is_none() {
            return Err(InputError::Argument {
                flag: "--plot".into(),
                expected: "windows to draw: add --window DURATION or --adaptive N".into(),
                got: p.display().to_string(),
            }
            .into());
        }
        if p.extension().and_then(|e| e.to_str()) != Some("svg") {
            return Err(InputError::Argument {
                flag: "--plot".into(),
                expected: "a file ending in .svg".into(),
                got: p.display().to_string(),
            }
            .into());
        }
    }
    let mut runs = Vec::new();
    for f in &args.files {
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
            runs.push(crate::metrics::paraver::analyse(f, &opts)?);
            continue;
        }
        if name.ends_with(".pcf") || name.ends_with(".row") {
            return Err(InputError::Argument {
                flag: "FILE".into(),
                expected:
                    "the trace itself (.prv or .prv.gz): its .pcf and .row are read beside it"
                        .into(),
                got: name.into_owned(),
            }
            .into());
        }
        let text = crate::input::read_file(f)?;
        if text.starts_with("@ mpiP") || name.ends_with(".mpiP") {
            runs.push(run::from_mpip(&mpip::parse(f, &text)?));
        } else if name.ends_with(".csv") || text.trim_start().starts_with('{') {
            runs.extend(run::from_talp(&talp::read(f, &text)?));
        } else {
            return Err(InputError::Argument {
                flag: "FILE".into(),
                expected: "a TALP output (.json, -pop.csv, -process.csv), a Paraver trace (.prv, \
                           .prv.gz) or an mpiP report (.mpiP)"
                    .into(),
                got: format!("{name}, which is none of these"),
            }
            .into());
        }
    }
    if !args.region.is_empty() {
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
            }
            .into());
        }
    }
    let report = crate::report::metrics::MetricsReport {
        scaling: scaling::scaling(&runs, forced),
        runs,
    };
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &crate::report::metrics::to_json(&report))?;
        writeln!(out)?;
    } else if args.csv {
        crate::report::metrics::write_csv(&report, out)?;
    } else {
        crate::report::metrics::write_text(&report, out)?;
    }
    if let Some(p) = &args.plot {
        crate::report::metrics::write_plot(p, &report).map_err(anyhow::Error::msg)?;
        eprintln!("wrote {}", p.display());
    }
    Ok(())
}

/// Most configurations drawn in a scatter.
pub const SAMPLE_MAX: u64 = 100_000;

fn check_plot_path(p: &Path) -> InputResult<()> {
    match p
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("svg" | "png") => Ok(()),
        _ => Err(InputError::Argument {
            flag: "--plot".into(),
            expected: "a file ending in .svg or .png".into(),
            got: p.display().to_string(),
        }),
    }
}

/// Runs `report`: writes the report folder and says what it wrote.
pub fn run_report(args: &ReportArgs, out: &mut dyn Write) -> anyhow::Result<Plan> {
    let mut inp = resolve(&args.source, &args.space, &args.query)?;
    let model = bind(
        &inp.machine,
        &inp.profile,
        &args.source,
        &mut inp.trust,
        &mut inp.notes,
    )?;
    let mut plan = plan(&model, &inp.space, inp.query, inp.reference)?;
    plan.notes.extend(inp.notes.iter().cloned());
    plan.warnings = plan
        .recommendation()
        .map(|r| warnings_for(&inp.trust, r.prediction.config.nodes))
        .unwrap_or_default();
    let sample = sample(&model, &plan.space, SAMPLE_MAX)?;
    let pareto = plot::pareto_svg(&plan, &sample).map_err(anyhow::Error::msg)?;
    let breakdown = plot::breakdown_svg(&plan).map_err(anyhow::Error::msg)?;
    let dir = &args.out;
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("{}: cannot create: {e}", dir.display()))?;
    let mut json = Vec::new();
    Json.plan(&plan, &mut json)?;
    let mut csv = Vec::new();
    Csv.plan(&plan, &mut csv)?;
    let html = html::index_html(
        &plan,
        &inp.machine,
        &inp.profile,
        &sample,
        &pareto,
        &breakdown,
    );
    let files: [(&str, &[u8]); 5] = [
        ("pareto.svg", pareto.as_bytes()),
        ("breakdown.svg", breakdown.as_bytes()),
        ("front.json", &json),
        ("front.csv", &csv),
        ("index.html", html.as_bytes()),
    ];
    for (name, bytes) in files {
        save(&dir.join(name), bytes, false)?;
        writeln!(out, "wrote {}", dir.join(name).display())?;
    }
    let png = dir.join("pareto.png");
    plot::write_pareto(&png, &plan, &sample).map_err(anyhow::Error::msg)?;
    writeln!(out, "wrote {}", png.display())?;
    Ok(plan)
}

/// Writes a file atomically, naming it when that fails.
fn save(path: &Path, bytes: &[u8], executable: bool) -> anyhow::Result<()> {
    crate::report::write_atomic(path, bytes, executable)
        .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", path.display()))
}

/// Loads the sources, binds and checks the model, prints the notes to standard error, and
/// runs `f` with the model and the trust figures (for the commands that print no plan).
fn with_model<T>(
    src: &SourceArgs,
    f: impl FnOnce(&Model<'_>, &trust::Trust) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let Loaded {
        machine,
        profile,
        mut notes,
        mut trust,
    } = load_sources(src)?;
    let model = bind(&machine, &profile, src, &mut trust, &mut notes)?;
    for n in &notes {
        eprintln!("note: {n}");
    }
    f(&model, &trust)
}

/// Runs `slurm`: a job script for one configuration.
pub fn run_slurm(args: &SlurmArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let config = values::parse_config("--config", &args.config)?;
    with_model(&args.inputs.source, |model, trust| {
        let opts = args.job.options(&model.profile.program)?;
        let p = match model.predict(config)? {
            Outcome::Finite(p) => p,
            Outcome::Saturated { rho, .. } => {
                return Err(InputError::Mismatch(format!(
                    "{}: the network is saturated there (rho = {rho:.3}): the model predicts no \
                     finite time, so no time limit can be set",
                    crate::search::plan::label(&config)
                ))
                .into());
            }
        };
        let mut prov = provenance(
            model.machine,
            model.profile,
            "configuration named with --config".into(),
        );
        prov.warnings = warnings_for(trust, config.nodes);
        prov.mem_per_node_gib = model
            .profile
            .memory_footprint_gib
            .map(|m| m / f64::from(config.nodes));
        let script = slurm::job_script(&p, &prov, &opts)?;
        if let Some(path) = &args.sbatch {
            save(path, script.as_bytes(), true)?;
            eprintln!("wrote job script {}", path.display());
        }
        if args.inputs.json {
            let minutes = slurm::time_limit_minutes(p.time, opts.time_margin);
            let v = serde_json::json!({
                "config": crate::report::json::config_json(&p),
                "time_limit": slurm::slurm_time(minutes),
                "time_limit_s": minutes * 60,
                "warnings": prov.warnings,
                "sbatch": args.sbatch,
                "script": script,
            });
            serde_json::to_writer_pretty(&mut *out, &v)?;
            writeln!(out)?;
        } else if args.sbatch.is_none() {
            out.write_all(script.as_bytes())?;
        }
        Ok(())
    })
}

/// Runs `predict`.
pub fn run_predict(args: &PredictArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let config = values::parse_config("--config", &args.config)?;
    with_model(&args.inputs.source, |model, trust| {
        for w in warnings_for(trust, config.nodes) {
            eprintln!("warning: {w}");
        }
        let exp = exporter(args.inputs.json, None);
        match &model.predict(config)? {
            Outcome::Finite(p) => exp.prediction(PredictionView::Finite(p), out)?,
            Outcome::Saturated { config, rho } => {
                exp.prediction(PredictionView::Saturated { config, rho: *rho }, out)?
            }
        }
        Ok(())
    })
}

fn exporter(json: bool, max_rows: Option<usize>) -> Box<dyn Exporter> {
    if json {
        Box::new(Json)
    } else {
        Box::new(Text { max_rows })
    }
}

/// Exit code for an error: 2 for bad input, 1 otherwise.
pub fn exit_code(err: &anyhow::Error) -> i32 {
    if err.downcast_ref::<InputError>().is_some() || err.downcast_ref::<clap::Error>().is_some() {
        EXIT_BAD_INPUT
    } else {
        1
    }
}

/// Whether an error is a closed pipe on output (`jouleplan plan | head`), which is success.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The whole program: parse, run, and return the exit code.
pub fn main_with(args: impl IntoIterator<Item = std::ffi::OsString>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { EXIT_BAD_INPUT } else { 0 };
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = match cli.command.unwrap_or(Command::Plan(PlanArgs::default())) {
        Command::Plan(a) => run_plan(&a, &mut out).map(|p| {
            if p.answer.feasible {
                0
            } else {
                EXIT_INFEASIBLE
            }
        }),
        Command::Predict(a) => run_predict(&a, &mut out).map(|()| 0),
        Command::Slurm(a) => run_slurm(&a, &mut out).map(|()| 0),
        Command::Metrics(a) => run_metrics(&a, &mut out).map(|()| 0),
        Command::Profile(a) => profile::run_profile(&a, &mut out),
        Command::Validate(a) => validate::run_validate(&a, &mut out).map(|()| 0),
        Command::Completions(a) => completions::run_completions(&a, &mut out).map(|()| 0),
        Command::Man => completions::run_man(&mut out).map(|()| 0),
        Command::Machine(a) => machine::run_machine(&a, &mut out).map(|()| 0),
        Command::Report(a) => run_report(&a, &mut out).map(|p| {
            if p.answer.feasible {
                0
            } else {
                EXIT_INFEASIBLE
            }
        }),
    };
    let _ = out.flush();
    match result {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => 0,
        Err(e) => {
            eprintln!("Error: {e:#}");
            exit_code(&e)
        }
    }
}
