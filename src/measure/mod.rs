//! Stage 1, measure: run the program on one node at each requested point and record what the
//! machine can measure (hardware counters, energy, MPI messages, GPU activity).
//!
//! Every source is a [`Backend`] that first discovers what it can measure here and otherwise
//! says [`Unsupported`] with what, why and what the user can do. Nothing is ever guessed: a
//! quantity no backend measured stays absent, and the profile says which assumption `plan` makes
//! in its place.

pub mod counter_notes;
pub mod counters;
pub mod cpu;
pub mod cpufreq;
pub mod energy;
pub mod gpu_clock_nvml;
pub mod gpu_clock_set;
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

pub use crate::artefact::readings::{Readings, Unsupported};

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
    /// Whether it reads the launched process itself (its counters follow the process tree),
    /// so that a run launched as a Slurm step, whose program is not jouleplan's child, is
    /// not measured by it; node-wide and device-wide readings are.
    fn follows_the_process(&self) -> bool {
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
