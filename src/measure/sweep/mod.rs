//! The sweep: run the program at every `(nodes, cores, frequency, GPUs)` point, `repeat`
//! times, with every working backend, and save each run as it completes. One file per concern:
//! the options, the node, the profile file, its journal, the frequency, the set-up, one run, the
//! sweep's loop, the summary, and the import of a `perf stat` capture.

mod budget;
mod clock;
mod file;
mod frequency;
mod host;
mod import;
mod journal;
mod one_run;
mod options;
mod run;
mod setup;
mod summary;

pub use budget::{BUDGET_STOP, BudgetStop, KILL_ALLOWANCE_S, budget_limit_of, share_s};
pub use host::{core_cpus, resolve_program};
pub use import::import_perf_stat;
pub use journal::{Journal, journal_path};
pub use options::{INTERRUPTED, Options, Outcome, Roots, interrupted};
pub use run::{run, run_within};
pub use setup::check_resumed;
pub use summary::summarise;
