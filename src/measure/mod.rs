//! Stage 1, measure: run the program on one node at each requested point and record what the
//! machine can measure (hardware counters, energy, MPI messages, GPU activity).
//!
//! Every source is a [`Backend`] that first discovers what it can measure here and otherwise
//! says [`Unsupported`] with what, why and what the user can do. Nothing is ever guessed: a
//! quantity no backend measured stays absent, and the profile says which assumption `plan` makes
//! in its place.

pub mod counters;
pub mod cpu;
pub mod cpufreq;
pub mod energy;
pub mod launch;
pub mod mpi;
pub mod node;
pub mod nvml;
pub mod perfstat;
pub mod pingpong;
pub mod placement;
pub mod record;
pub mod slurm;
pub mod sweep;
pub mod talp_attach;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A background thread that updates a state every `every` while a run goes on (energy counters
/// that wrap, GPU utilisation).
pub struct Sampler<T> {
    stop: Arc<AtomicBool>,
    state: Arc<Mutex<T>>,
    handle: JoinHandle<()>,
}

impl<T: Send + 'static> Sampler<T> {
    /// Starts calling `tick(state, seconds since the last call)` every `every`.
    pub fn start(
        state: T,
        every: Duration,
        mut tick: impl FnMut(&mut T, f64) + Send + 'static,
    ) -> Self {
        let state = Arc::new(Mutex::new(state));
        let stop = Arc::new(AtomicBool::new(false));
        let (st, sp) = (state.clone(), stop.clone());
        let handle = std::thread::spawn(move || {
            let mut last = Instant::now();
            while !sp.load(Ordering::Relaxed) {
                std::thread::sleep(every.min(Duration::from_millis(50)));
                let dt = last.elapsed();
                if dt >= every {
                    last = Instant::now();
                    if let Ok(mut g) = st.lock() {
                        tick(&mut g, dt.as_secs_f64());
                    }
                }
            }
        });
        Sampler {
            stop,
            state,
            handle,
        }
    }

    /// Stops the thread and hands the state back.
    pub fn stop(self) -> Option<T> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().ok()?;
        Arc::try_unwrap(self.state).ok()?.into_inner().ok()
    }
}

/// A quantity that cannot be measured here: what, why, and what the user can do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("{what}: not measured: {why}. {hint}")]
pub struct Unsupported {
    /// The quantity (`hardware counters (cycles, instructions, stalls)`).
    pub what: String,
    /// Why it cannot be measured here.
    pub why: String,
    /// What the user can do.
    pub hint: String,
}

impl Unsupported {
    /// Builds one from three texts.
    pub fn new(what: impl Into<String>, why: impl Into<String>, hint: impl Into<String>) -> Self {
        Unsupported {
            what: what.into(),
            why: why.into(),
            hint: hint.into(),
        }
    }
}

/// What one run yielded. Every field is a measurement, or absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Readings {
    /// Core cycles summed over the process tree.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cycles: Option<f64>,
    /// Instructions retired.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub instructions: Option<f64>,
    /// Total stall cycles.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stall_cycles: Option<f64>,
    /// Memory-related stall cycles.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mem_stall_cycles: Option<f64>,
    /// Busy CPU time of the process tree (task-clock or rusage), seconds.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cpu_time_s: Option<f64>,
    /// Where `cpu_time_s` came from (`perf task-clock`, `rusage`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cpu_time_source: Option<String>,
    /// Energy per domain (`package-0`, `dram-0`, `gpu-0`, `slurm-node`), joules.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", default)]
    pub energy_j: BTreeMap<String, f64>,
    /// Kernel-busy time per GPU (NVML utilisation x wall time), seconds.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub gpu_busy_s: Vec<f64>,
    /// Sampling error bound of `gpu_busy_s` per GPU, seconds (NVML sampling).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub gpu_busy_err_s: Vec<f64>,
    /// Mean SM clock per GPU over the samples in which it was busy, MHz.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub gpu_sm_mhz: Vec<f64>,
    /// Mean memory clock per GPU over the samples in which it was busy, MHz.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub gpu_mem_mhz: Vec<f64>,
    /// MPI messages sent per rank over the run.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mpi_messages_per_rank: Option<f64>,
    /// MPI bytes sent per rank over the run.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mpi_bytes_per_rank: Option<f64>,
    /// What TALP measured of this run when it was preloaded during the sweep
    /// (`--mpi-profiler talp`): its printed trees, and device times with DLB's GPU plugin.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub talp: Option<record::TalpAttachment>,
    /// Problems met while reading (a counter that did not run, a wrap that could not be told).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub warnings: Vec<String>,
}

impl Readings {
    /// Sum of the energy domains that do not overlap, and the names summed.
    pub fn total_energy(&self) -> Option<(f64, Vec<String>)> {
        // A node-level Slurm figure already holds the package, DRAM and GPU domains.
        if let Some(&e) = self.energy_j.get(slurm::DOMAIN) {
            return Some((e, vec![slurm::DOMAIN.to_string()]));
        }
        if self.energy_j.is_empty() {
            return None;
        }
        let names = self.energy_j.keys().cloned().collect();
        Some((self.energy_j.values().sum(), names))
    }
}

/// What a backend knows about the run being measured.
#[derive(Debug, Clone)]
pub struct RunContext<'a> {
    /// Wall time of the run.
    pub wall_s: f64,
    /// A folder private to this run (profiler outputs land there).
    pub run_dir: &'a Path,
    /// Cores in use.
    pub cores: u32,
    /// MPI ranks of the whole run, over every node (1 without a launcher).
    pub ranks: u32,
}

/// A measurement backend. The sweep calls, per run: [`Backend::prepare`] (environment),
/// [`Backend::attach`] (the child exists, paused before `exec`), [`Backend::begin`] (just before
/// the child is released), [`Backend::end`] (after it exited).
pub trait Backend {
    /// Short name for provenance (`perf-counters`, `rapl-powercap`).
    fn name(&self) -> &'static str;
    /// Finds out what this backend can measure on this machine: a line saying what, or why not.
    fn discover(&mut self) -> Result<String, Unsupported>;
    /// Parts it cannot measure although it works (hardware counters missing, task-clock there).
    fn missing(&self) -> Vec<Unsupported> {
        Vec::new()
    }
    /// Details for the profile's provenance (which events, which domains).
    fn describe(&self) -> Vec<(String, String)> {
        Vec::new()
    }
    /// Whether its readings cover every node of a run over several (Slurm's step energy, an
    /// MPI profiler's report) rather than only the node jouleplan runs on.
    fn every_node(&self) -> bool {
        false
    }
    /// Adds environment variables the child needs (profiler output folders).
    fn prepare(&mut self, _env: &mut Vec<(String, String)>, _run_dir: &Path) {}
    /// The child `pid` exists and has not called `exec` yet.
    fn attach(&mut self, _pid: i32) -> Result<(), String> {
        Ok(())
    }
    /// The child is about to be released.
    fn begin(&mut self) -> Result<(), String> {
        Ok(())
    }
    /// The child has exited: add this backend's readings.
    fn end(&mut self, ctx: &RunContext<'_>, out: &mut Readings) -> Result<(), String>;
}

/// The backends that answered `discover`, and the reasons of those that did not.
pub struct Discovered {
    /// Working backends with what each measures.
    pub working: Vec<(Box<dyn Backend>, String)>,
    /// Backends that cannot measure here.
    pub unsupported: Vec<(&'static str, Unsupported)>,
}

/// Asks every backend what it can measure here.
pub fn discover(backends: Vec<Box<dyn Backend>>) -> Discovered {
    let mut d = Discovered {
        working: Vec::new(),
        unsupported: Vec::new(),
    };
    for mut b in backends {
        match b.discover() {
            Ok(what) => {
                for u in b.missing() {
                    d.unsupported.push((b.name(), u));
                }
                d.working.push((b, what));
            }
            Err(u) => d.unsupported.push((b.name(), u)),
        }
    }
    d
}
