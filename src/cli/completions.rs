//! `jouleplan completions SHELL` and `jouleplan man`: shell completion scripts (clap_complete)
//! and the man page (clap_mangen), generated from the same clap definitions as the parser.

use super::args::{Cli, CompletionsArgs};
use clap::CommandFactory;
use std::io::Write;

/// Writes the completion script for a shell.
pub fn run_completions(a: &CompletionsArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut cmd = Cli::command();
    // Generated in memory: clap_complete panics on a write error, the writer below reports it.
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "jouleplan", &mut script);
    out.write_all(&script)?;
    Ok(())
}

/// Writes the man page (roff) for `jouleplan` and its subcommands.
pub fn run_man(out: &mut dyn Write) -> anyhow::Result<()> {
    let cmd = Cli::command();
    clap_mangen::Man::new(cmd.clone()).render(out)?;
    for sub in cmd.get_subcommands() {
        let name = format!("jouleplan-{}", sub.get_name());
        clap_mangen::Man::new(sub.clone().name(name)).render(out)?;
    }
    Ok(())
}
