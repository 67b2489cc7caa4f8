//! The `jouleplan` binary: the command line ([`cli`]) over the library's stages. Flags become
//! typed requests, the stages run, the results are printed; nothing here is part of the
//! library.

mod cli;

// The library's modules under the names the command line uses (`crate::search`, ...).
use jouleplan::{
    artefact, atomic_write, calibrate, campaign, error, input, limits, measure, metrics, model,
    report, search, units, values,
};

fn main() {
    std::process::exit(cli::main_with(std::env::args_os()));
}
