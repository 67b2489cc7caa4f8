//! The command line: clap structs become validated domain types in one step
//! ([`Inputs::resolve`]); the model and the search never see clap.

pub mod calibrate;
pub mod calibrate_power;
pub mod campaign;
pub mod completions;
pub mod fit;
pub mod fit_json;
pub mod fit_nodes;
pub mod job;
pub mod machine;
pub mod metrics;
pub mod node_chart;
pub mod outputs;
pub mod plan;
pub mod predict;
pub mod profile;
pub mod profile_nodes;
pub mod report;
pub mod say;
pub mod sources;
pub mod trust;
pub mod validate;
pub mod values;

pub use job::*;
pub use metrics::*;
pub use plan::*;
pub use predict::*;
pub use report::*;
pub use sources::*;

use crate::error::InputError;

use clap::{Parser, Subcommand};
use std::io::Write;

/// The first line of `jouleplan` without a command.
pub const DEMO: &str = "jouleplan with no command: planning the bundled demo (SpMV on a Xeon Phi \
                        cluster); `jouleplan --help` lists the commands.\nThe demo profile was \
                        measured on one node: counts above one rest on the network model alone, \
                        hence the wide intervals and the counts to measure next at the end";

/// Exit code for bad input (files, flags).
pub const EXIT_BAD_INPUT: i32 = 2;
/// Exit code for a query that no configuration satisfies.
pub const EXIT_INFEASIBLE: i32 = 3;

/// The exit-code table's text (a macro, so `concat!` can join it to the examples).
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

/// The exit codes, in every `--help` and the man page.
pub const EXIT_CODES: &str = exit_codes!();

pub mod examples;

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
    /// The result and errors only: no notes, warnings or progress on standard error.
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Search every configuration for the exact time-energy Pareto front and recommend one.
    #[command(after_help = examples::PLAN)]
    Plan(PlanArgs),
    /// Predict one configuration with its full time and energy breakdown.
    #[command(after_help = examples::PREDICT)]
    Predict(PredictArgs),
    /// Write a Slurm job script for any configuration.
    #[command(after_help = examples::SLURM)]
    Slurm(SlurmArgs),
    /// Write a self-contained report: charts (SVG, PNG), the front (JSON, CSV) and index.html.
    #[command(after_help = examples::REPORT)]
    Report(ReportArgs),
    /// Efficiency metrics from TALP outputs, Paraver traces and mpiP reports.
    #[command(after_help = examples::METRICS)]
    Metrics(MetricsArgs),
    /// Measure the program on this node at each (cores, frequency, GPUs) point and write the
    /// workload profile that `plan` reads.
    #[command(after_help = examples::PROFILE)]
    Profile(profile::ProfileArgs),
    /// Predictions against measurements the model did not see: held-out profile points,
    /// leave-one-out over core counts, or a CSV of measured runs.
    #[command(after_help = examples::VALIDATE)]
    Validate(validate::ValidateArgs),
    /// Measure this machine and write its [network] (MPI ping-pong) or [power] section.
    #[command(after_help = examples::CALIBRATE)]
    Calibrate(calibrate::CalibrateArgs),
    /// Fit a profile and the machine's power from measured time and energy alone (no counters).
    #[command(after_help = examples::FIT)]
    Fit(fit::FitArgs),
    /// Write a machine file from this node (`init`), or check one (`check`).
    #[command(after_help = examples::MACHINE)]
    Machine(machine::MachineArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_help = examples::COMPLETIONS)]
    Completions(completions::CompletionsArgs),
    /// Print the man page (roff; `jouleplan man | man -l -`).
    #[command(after_help = examples::MAN)]
    Man,
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

/// Standard output where a closed reader (`jouleplan plan --sbatch job.sh | true`) only stops
/// the printing: a write after the pipe closed succeeds and prints nothing, so the command goes
/// on to write every file it was asked for and returns the exit code it would with an open
/// stdout (STYLE.md item 1). Other write errors (a full disk) are still errors.
pub struct ClosedStdoutStopsPrinting<W: Write> {
    inner: W,
    closed: bool,
}

impl<W: Write> ClosedStdoutStopsPrinting<W> {
    /// Wraps a writer.
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            closed: false,
        }
    }

    fn absorb(&mut self, r: std::io::Result<usize>, len: usize) -> std::io::Result<usize> {
        match r {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(len)
            }
            other => other,
        }
    }
}

impl<W: Write> Write for ClosedStdoutStopsPrinting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        let r = self.inner.write(buf);
        self.absorb(r, buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let r = self.inner.flush().map(|()| 0);
        self.absorb(r, 0).map(|_| ())
    }
}

/// The whole program: parse, run, and return the exit code.
pub fn main_with(args: impl IntoIterator<Item = std::ffi::OsString>) -> i32 {
    // A write past `ulimit -f` is an error with a message naming the output, not a silent
    // death by SIGXFSZ that leaves temporary files.
    // SAFETY: ignoring a signal has no preconditions.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { EXIT_BAD_INPUT } else { 0 };
        }
    };
    say::set_quiet(cli.quiet);
    let stdout = std::io::stdout();
    let mut out = ClosedStdoutStopsPrinting::new(stdout.lock());
    let command = match cli.command {
        Some(c) => c,
        None => {
            let _ = writeln!(out, "{DEMO}");
            Command::Plan(PlanArgs::default())
        }
    };
    let result = match command {
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
        Command::Profile(mut a) => {
            a.quiet = cli.quiet;
            profile::run_profile(&a, &mut out)
        }
        Command::Validate(a) => validate::run_validate(&a, &mut out).map(|()| 0),
        Command::Calibrate(a) => calibrate::run_calibrate(&a, &mut out),
        Command::Fit(a) => fit::run_fit(&a, &mut out).map(|()| 0),
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
            say::line(&format!("Error: {e:#}"));
            exit_code(&e)
        }
    }
}
