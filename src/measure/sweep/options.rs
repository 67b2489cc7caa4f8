//! What a sweep is asked to do (validated options), how it ended, and the Ctrl-C flag.

use crate::measure::cpu::StallEvents;
use crate::measure::launch::{self};
use crate::measure::mpi::Profiler;
use crate::measure::record::{Header, Missing, Planned};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Set by Ctrl-C: the sweep stops after saving what it has.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Sysfs roots (injectable for tests).
#[derive(Debug, Clone)]
pub struct Roots {
    /// `/sys/class/powercap`.
    pub powercap: PathBuf,
    /// `/sys/bus/event_source/devices`.
    pub event_source: PathBuf,
    /// `/sys/devices/system/cpu`.
    pub cpu: PathBuf,
}

impl Default for Roots {
    fn default() -> Self {
        Roots {
            powercap: "/sys/class/powercap".into(),
            event_source: "/sys/bus/event_source/devices".into(),
            cpu: "/sys/devices/system/cpu".into(),
        }
    }
}

/// Everything a sweep needs, validated.
#[derive(Debug, Clone)]
pub struct Options {
    /// The program and its arguments.
    pub command: Vec<String>,
    /// Core counts.
    pub cores: Vec<u32>,
    /// Frequencies in Hz; `None`: the frequency the machine runs at.
    pub freqs: Option<Vec<f64>>,
    /// GPU counts.
    pub gpus: Vec<u32>,
    /// Node counts (1 for the baseline; more under Slurm or with a hostfile).
    pub nodes: Vec<u32>,
    /// The hostfile whose first hosts runs on several nodes use (mpirun).
    pub hostfile: Option<PathBuf>,
    /// MPI ranks per node.
    pub ranks: u32,
    /// Launcher words with the placeholders of [`placement::fill`]; `None`: see
    /// [`placement::default_words`].
    pub launcher: Option<Vec<String>>,
    /// Runs per point.
    pub repeat: u32,
    /// Time limit per run.
    pub timeout: Option<Duration>,
    /// How long a stopped run gets between SIGTERM and SIGKILL (`--grace`).
    pub grace: Duration,
    /// The profile to write.
    pub output: PathBuf,
    /// Continue an existing file.
    pub resume: bool,
    /// Names, iterations, growth.
    pub header: Header,
    /// Stall events replacing the built-in table.
    pub stall_override: Option<StallEvents>,
    /// MPI profiler preloaded into the runs.
    pub mpi_profiler: Option<Profiler>,
    /// Sysfs roots.
    pub roots: Roots,
    /// Draw a progress bar (stderr is a terminal).
    pub progress_bar: bool,
    /// Unmeasured, unrecorded runs before each point's first measured one.
    pub warmup: u32,
    /// Let the program's output through instead of discarding its stdout.
    pub show_output: bool,
    /// No line per run (the summary and errors only).
    pub quiet: bool,
    /// Also log each run's command line and environment.
    pub verbose: bool,
    /// NVML utilisation sampling interval.
    pub gpu_sample: Duration,
    /// Run at the node's own frequency when `freqs` cannot be set (instead of refusing).
    pub at_node_frequency: bool,
    /// GPU core clocks each point with GPUs is measured at, MHz (empty: the clock is not set).
    pub gpu_clocks: Vec<u32>,
    /// The memory clock they are set with, MHz (the machine's `gpu_memory_clock_mhz`; `None`:
    /// the one in force).
    pub gpu_memory_mhz: Option<u32>,
}

/// How a sweep ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Runs made by this invocation.
    pub runs_made: usize,
    /// Runs skipped because the file already had them.
    pub runs_skipped: usize,
    /// Failed runs of this invocation: one line each.
    pub failed: Vec<String>,
    /// Whether Ctrl-C stopped it.
    pub interrupted: bool,
    /// Whether every planned run is in the file.
    pub complete: bool,
    /// What could not be measured.
    pub unsupported: Vec<Missing>,
    /// One line per point: mean ± sd, min … max of its wall time.
    pub summary: Vec<String>,
    /// Where a measuring budget ended the sweep ([`super::run_within`]).
    pub budget_stop: Option<super::BudgetStop>,
}

pub(super) fn install_interrupt_handler() {
    launch::install_stop_handler();
}

/// Whether a stop signal came (Ctrl-C, SIGTERM, SIGHUP) or [`INTERRUPTED`] was set.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst) || launch::STOP_SIGNAL.load(Ordering::SeqCst) != 0
}

/// A point to run and its repeat index.
pub(super) type Todo = (Planned, u32);
