//! The command line's grammar: the subcommands and the flags every one takes (clap), with
//! the examples and exit codes of `--help`.

use clap::{Args, Parser, Subcommand};
use clap_complete::Shell;

/// The exit-code table's text (a macro, so `concat!` can join it to the examples of every
/// `--help`, [`super::examples`], and so to the man page).
macro_rules! exit_codes {
    () => {
        "Exit codes (the same in every subcommand):
  0    success
  1    a runtime failure: a file that cannot be written, a run that cannot be started
  2    bad input: the message names the file and key (or line), or the flag, and what was
       expected; also a profile the model cannot explain, one from another machine, a
       command or launcher that cannot be found
  3    a query that no configuration meets: the message names the nearest front points
  4    profile: some runs failed (the others are saved)
  130  profile stopped by Ctrl-C; 143 by SIGTERM (scancel, a time limit); 129 by SIGHUP
       (every finished run is saved; --resume continues)"
    };
}

/// The examples and exit codes at the end of `jouleplan --help`.
pub const MAIN_HELP: &str = concat!(
    "Examples:
  jouleplan                                  plan the bundled demo
  jouleplan machine init --output node.toml  describe this node (then add [network], [power])
  jouleplan profile --machine node.toml --cores 1,8,16 -o app.json -- ./app args
  jouleplan fit --measured runs.csv --machine node.toml --profile-out app.json \\
      --machine-out fitted.toml               fit measured runs (one or several nodes)
  jouleplan plan --machine fitted.toml --profile app.json --nodes 1-16 --deadline 1h \\
      --sbatch job.sh -- ./app args          plan, and write the job script
  jouleplan validate --machine fitted.toml --profile app.json --measured more.csv

",
    exit_codes!()
);

/// Energy-aware configuration planner for MPI+OpenMP (and GPU) jobs: measure, fit, plan the
/// time-energy front, hand over a Slurm job script.
#[derive(Debug, Parser)]
#[command(name = "jouleplan", version, about, long_about = None, after_help = MAIN_HELP)]
pub struct Cli {
    /// What to do; with none, `plan` runs on the bundled default machine and workload.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The result, warnings and errors only: no notes or progress on standard error (a warning,
    /// such as a recommendation's deadline or budget risk, is still said).
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Search every configuration for the exact time-energy Pareto front and recommend one.
    #[command(after_help = super::examples::PLAN)]
    Plan(Box<super::plan::PlanArgs>),
    /// Predict one configuration with its full time and energy breakdown.
    #[command(after_help = super::examples::PREDICT)]
    Predict(super::predict::PredictArgs),
    /// Write a Slurm job script for any configuration.
    #[command(after_help = super::examples::SLURM)]
    Slurm(super::job::SlurmArgs),
    /// Write a self-contained report: charts (SVG, PNG), the front (JSON, CSV) and index.html.
    #[command(after_help = super::examples::REPORT)]
    Report(super::report::ReportArgs),
    /// Efficiency metrics from TALP outputs, Paraver traces and mpiP reports.
    #[command(after_help = super::examples::METRICS)]
    Metrics(super::metrics::MetricsArgs),
    /// Measure the program on this node at each (cores, frequency, GPUs) point and write the
    /// workload profile that `plan` reads.
    #[command(after_help = super::examples::PROFILE)]
    Profile(Box<super::profile::ProfileArgs>),
    /// Score the model's predictions against measured runs: a CSV of runs, past Slurm jobs,
    /// the profile's points held out of its fit (--use-cores, --use-freqs) or leave-one-out
    /// over core counts. The rows given are scored as they are: runs the profile was fitted on
    /// are not held out (the summary counts them).
    #[command(after_help = super::examples::VALIDATE)]
    Validate(super::validate::ValidateArgs),
    /// Measure this machine and write its [network] (MPI ping-pong) or [power] section.
    #[command(after_help = super::examples::CALIBRATE)]
    Calibrate(super::calibrate::CalibrateArgs),
    /// Fit a profile and the machine's power from measured time and energy alone (no counters).
    #[command(after_help = super::examples::FIT)]
    Fit(super::fit::FitArgs),
    /// Write a machine file from this node (`init`), or check one (`check`).
    #[command(after_help = super::examples::MACHINE)]
    Machine(super::machine::MachineArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_help = super::examples::COMPLETIONS)]
    Completions(CompletionsArgs),
    /// Print the man page (roff; `jouleplan man | man -l -`).
    #[command(after_help = super::examples::MAN)]
    Man,
}

/// `jouleplan completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell.
    #[arg(value_name = "SHELL")]
    pub shell: Shell,
}
