//! The command line: clap structs become validated domain types in one step
//! ([`Inputs::resolve`]); the model and the search never see clap.

pub mod values;

use crate::error::{InputError, InputResult};
use crate::model::machine::Machine;
use crate::model::workload::Profile;
use crate::model::{Config, Model, Outcome};
use crate::report::json::Json;
use crate::report::text::Text;
use crate::report::{Exporter, PredictionView};
use crate::search::plan::{Plan, plan};
use crate::search::query::Query;
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
}

/// Where the machine and the workload come from.
#[derive(Debug, Args, Default)]
pub struct InputArgs {
    /// Machine description (TOML) or the name of a bundled one [default: xeon-phi-57c].
    #[arg(long, value_name = "FILE")]
    pub machine: Option<String>,
    /// Workload profile (JSON) or the name of a bundled one [default: spmv-xeon-phi].
    #[arg(long, value_name = "FILE")]
    pub profile: Option<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `jouleplan plan`.
#[derive(Debug, Args, Default)]
pub struct PlanArgs {
    #[command(flatten)]
    pub inputs: InputArgs,
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
    /// Least energy that finishes within this time (90s, 15m, 2h, 1h30m).
    #[arg(long, value_name = "DURATION")]
    pub deadline: Option<String>,
    /// Fastest within this energy (J, kJ, MJ, kWh).
    #[arg(long, value_name = "ENERGY")]
    pub budget: Option<String>,
    /// Least energy within (1 + FRACTION) times the reference time (0.1 or 10%).
    #[arg(long, value_name = "FRACTION", conflicts_with = "deadline")]
    pub slowdown: Option<String>,
    /// Reference of --slowdown: N,C,GHZ[,G] [default: the fastest configuration].
    #[arg(long, value_name = "CONFIG", requires = "slowdown")]
    pub reference: Option<String>,
    /// Print every front point (the text table shows 40 by default).
    #[arg(long)]
    pub full: bool,
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
}

impl PlanArgs {
    /// Second phase: raw flags and files become validated domain types.
    pub fn resolve(&self) -> InputResult<PlanInputs> {
        let machine = load_machine(self.inputs.machine.as_deref())?;
        let profile = load_profile(self.inputs.profile.as_deref())?;
        let mut space = Space::full(&machine, &profile);
        if let Some(s) = &self.nodes {
            space.nodes = values::parse_int_spec("--nodes", s)?;
        }
        if let Some(s) = &self.cores {
            space.cores = values::parse_int_spec("--cores", s)?;
        }
        if let Some(s) = &self.freqs {
            space.freqs = values::parse_freq_spec(s, &machine)?;
        }
        if let Some(s) = &self.gpus {
            space.gpus = values::parse_int_spec("--gpus", s)?;
        }
        space.validate(&machine)?;
        let query = Query {
            deadline: self
                .deadline
                .as_deref()
                .map(|d| values::parse_duration("--deadline", d))
                .transpose()?,
            budget: self
                .budget
                .as_deref()
                .map(|b| values::parse_energy("--budget", b))
                .transpose()?,
            slowdown: self
                .slowdown
                .as_deref()
                .map(|s| values::parse_fraction("--slowdown", s))
                .transpose()?,
        };
        let reference = self
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
        })
    }
}

/// Runs `plan`; returns the plan for the caller to choose the exit code.
pub fn run_plan(args: &PlanArgs, out: &mut dyn Write) -> anyhow::Result<Plan> {
    let inp = args.resolve()?;
    let model = Model::new(&inp.machine, &inp.profile)?;
    let plan = plan(&model, &inp.space, inp.query, inp.reference)?;
    exporter(args.inputs.json, (!args.full).then_some(40)).plan(&plan, out)?;
    Ok(plan)
}

/// Runs `predict`.
pub fn run_predict(args: &PredictArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let machine = load_machine(args.inputs.machine.as_deref())?;
    let profile = load_profile(args.inputs.profile.as_deref())?;
    let config = values::parse_config("--config", &args.config)?;
    let model = Model::new(&machine, &profile)?;
    let view = model.predict(config)?;
    let exp = exporter(args.inputs.json, None);
    match &view {
        Outcome::Finite(p) => exp.prediction(PredictionView::Finite(p), out)?,
        Outcome::Saturated { config, rho } => {
            exp.prediction(PredictionView::Saturated { config, rho: *rho }, out)?
        }
    }
    Ok(())
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
