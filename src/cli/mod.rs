//! The command line: [`main_with`] parses the flags (clap, the only place an argument string is
//! parsed), each subcommand's file turns them into the stages' typed inputs, calls the stages
//! and prints; the stages never see clap.

// `#[macro_use]`: `exit_codes!` joins the examples of every `--help` to the exit codes.
#[macro_use]
pub mod args;
pub mod calibrate;
pub mod calibrate_power;
pub mod campaign;
pub mod completions;
pub mod examples;
pub mod fit;
pub mod job;
pub mod machine;
pub mod metrics;
pub mod node_chart;
pub mod outputs;
pub mod plan;
pub mod predict;
pub mod profile;
pub mod profile_clocks;
pub mod profile_nodes;
pub mod report;
pub mod say;
pub mod sources;
pub mod validate;

use crate::error::InputError;
use args::{Cli, Command};
use clap::Parser;
use std::io::Write;

/// The first line of `jouleplan` without a command.
pub const DEMO: &str = "jouleplan with no command: planning the bundled demo, a GPU job this \
                        project measured on one H100 node (examples/gpu/gpu_mix.py: matrix products \
                        on the host cores, then on the GPU), over the host core counts; \
                        `jouleplan --help` lists the commands.\nFor node counts, fit runs \
                        measured on a few of them: the README's \"How many nodes?\"";

/// Exit code for bad input (files, flags).
pub const EXIT_BAD_INPUT: i32 = 2;
/// Exit code for a query that no configuration satisfies.
pub const EXIT_INFEASIBLE: i32 = 3;

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
/// On a terminal, a control byte of an input (a name holding ESC) is written escaped
/// ([`crate::error::shown`]), never raw.
pub struct ClosedStdoutStopsPrinting<W: Write> {
    inner: W,
    closed: bool,
    terminal: bool,
}

impl<W: Write> ClosedStdoutStopsPrinting<W> {
    /// Wraps a writer; `terminal` where it is a terminal.
    pub fn new(inner: W, terminal: bool) -> Self {
        Self {
            inner,
            closed: false,
            terminal,
        }
    }

    fn absorb(&mut self, r: std::io::Result<usize>, len: usize) -> std::io::Result<usize> {
        match r {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(len)
            }
            // A full disk or a device that refuses the write: an error naming the output.
            Err(e) => Err(std::io::Error::new(
                e.kind(),
                format!("cannot write standard output: {e}"),
            )),
            ok => ok,
        }
    }
}

/// The exit code of a command line clap did not run: `--help` and `--version` print to
/// standard output and exit 0 only where that text was written (a full disk is an error, a
/// closed pipe is not); anything else is bad input.
fn parse_error(e: &clap::Error) -> i32 {
    if e.use_stderr() {
        // Plain text (clap's colours would pass a value's own escape sequence on to a
        // terminal), any other control byte quoted back escaped.
        say::line(e.render().to_string().trim_end());
        return EXIT_BAD_INPUT;
    }
    let printed = e.print();
    match printed.and_then(|()| std::io::Write::flush(&mut std::io::stdout())) {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => {
            say::line(&format!("Error: cannot write standard output: {err}"));
            1
        }
        _ => 0,
    }
}

impl<W: Write> Write for ClosedStdoutStopsPrinting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        let text = std::str::from_utf8(buf).ok().filter(|_| self.terminal);
        let r = match text.map(crate::error::shown) {
            Some(std::borrow::Cow::Owned(escaped)) => {
                self.inner.write_all(escaped.as_bytes()).map(|()| buf.len())
            }
            _ => self.inner.write(buf),
        };
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
        Err(e) => return parse_error(&e),
    };
    say::set_quiet(cli.quiet);
    let stdout = std::io::stdout();
    let terminal = std::io::IsTerminal::is_terminal(&stdout);
    let mut out = ClosedStdoutStopsPrinting::new(stdout.lock(), terminal);
    let command = match cli.command {
        Some(c) => c,
        None => {
            let _ = writeln!(out, "{DEMO}");
            Command::Plan(Box::default())
        }
    };
    let result = match command {
        Command::Plan(a) => plan::run_plan(&a, &mut out).map(|p| {
            if p.answer.feasible {
                0
            } else {
                EXIT_INFEASIBLE
            }
        }),
        Command::Predict(a) => predict::run_predict(&a, &mut out).map(|()| 0),
        Command::Slurm(a) => job::run_slurm(&a, &mut out).map(|()| 0),
        Command::Metrics(a) => metrics::run_metrics(&a, &mut out).map(|()| 0),
        Command::Profile(mut a) => {
            a.quiet = cli.quiet;
            match a.nodes.trim() {
                "auto" => campaign::run(&a, &mut out),
                _ => profile::run_profile(&a, &mut out),
            }
        }
        Command::Validate(a) => validate::run_validate(&a, &mut out).map(|()| 0),
        Command::Calibrate(a) => calibrate::run_calibrate(&a, &mut out),
        Command::Fit(a) => fit::run_fit(&a, &mut out).map(|()| 0),
        Command::Completions(a) => completions::run_completions(&a, &mut out).map(|()| 0),
        Command::Man => completions::run_man(&mut out).map(|()| 0),
        Command::Machine(a) => machine::run_machine(&a, &mut out).map(|()| 0),
        Command::Report(a) => report::run_report(&a, &mut out).map(|p| {
            if p.answer.feasible {
                0
            } else {
                EXIT_INFEASIBLE
            }
        }),
    };
    // What stayed buffered is written now: a failure then is the command's error too.
    let result = result.and_then(|code| out.flush().map(|()| code).map_err(Into::into));
    match result {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => 0,
        Err(e) => {
            say::line(&format!("Error: {e:#}"));
            exit_code(&e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ClosedStdoutStopsPrinting;
    use std::io::Write;

    #[test]
    fn a_terminal_gets_an_inputs_escape_sequence_escaped_and_a_pipe_gets_it_as_it_is() {
        let text = "machine a\u{1b}]0;title\u{7}b\n";
        let mut tty = ClosedStdoutStopsPrinting::new(Vec::new(), true);
        write!(tty, "{text}").unwrap();
        let shown = String::from_utf8(tty.inner).unwrap();
        assert_eq!(shown, "machine a\\u{1b}]0;title\\u{7}b\n");
        let mut pipe = ClosedStdoutStopsPrinting::new(Vec::new(), false);
        write!(pipe, "{text}").unwrap();
        assert_eq!(pipe.inner, text.as_bytes());
    }
}
