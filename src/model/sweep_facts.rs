//! What a profile's sweep record (written by `jouleplan profile`) says beyond the baseline
//! means: the run-to-run spread of each point, which energy domains were measured, and the
//! machine the profile was measured on. Profiles from elsewhere have no record: then the
//! spread is unknown (the 2% floor of MODEL.md 6b applies) and the machine is not checked.

use crate::artefact::profile::RepeatSpreadFile;
use crate::artefact::sweep::{PointKey, RunRecord, SweepRecord, key, rel_spread};
use std::collections::{BTreeMap, HashMap};

/// Run-to-run spread of one baseline point.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PointSpread {
    /// Successful runs.
    pub runs: usize,
    /// Relative sample standard deviation of the wall time.
    pub wall_rel: f64,
    /// Relative sample standard deviation of the measured energy, when measured.
    pub energy_rel: Option<f64>,
    /// The energy domains summed into the point's `energy_j` (`gpu-0`, `package-0`, ...).
    pub energy_domains: Vec<String>,
}

/// The machine a profile was measured on, as its sweep recorded it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MeasuredOn {
    /// CPU model name.
    pub cpu: Option<String>,
    /// Physical cores available to the sweep.
    pub physical_cores: Option<u32>,
    /// GPU names as NVML reported them (`0: NVIDIA H100 80GB HBM3`), when NVML worked.
    pub gpus: Option<String>,
    /// Host name.
    pub hostname: Option<String>,
    /// The configurations measured more than once, and their spread (profiles `fit` wrote
    /// from measured runs; a sweep record has its own, [`SweepFacts::spread`]).
    pub repeats: Vec<RepeatSpread>,
}

/// The run-to-run spread of one configuration's repeated runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RepeatSpread {
    /// The configuration.
    pub config: super::Config,
    /// Runs averaged.
    pub runs: u64,
    /// Relative sample standard deviation of their wall time.
    pub wall_rel: f64,
}

impl RepeatSpread {
    /// From the profile's `measured_on.repeats` entry.
    pub fn from_file(f: &RepeatSpreadFile) -> RepeatSpread {
        RepeatSpread {
            config: super::Config {
                nodes: f.nodes,
                cores: f.cores,
                freq: crate::units::Hertz(f.freq_hz),
                gpus: f.gpus,
                gpu_clock_mhz: f.gpu_clock_mhz,
            },
            runs: f.runs,
            wall_rel: f.wall_rel_std,
        }
    }

    /// As the profile's `measured_on.repeats` entry.
    pub fn to_file(&self) -> RepeatSpreadFile {
        RepeatSpreadFile {
            nodes: self.config.nodes,
            cores: self.config.cores,
            freq_hz: self.config.freq.0,
            gpus: self.config.gpus,
            gpu_clock_mhz: self.config.gpu_clock_mhz,
            runs: self.runs,
            wall_rel_std: self.wall_rel,
        }
    }
}

/// Facts read from a sweep record.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SweepFacts {
    /// Spread per point key.
    pub spread: HashMap<PointKey, PointSpread>,
    /// The machine, when recorded.
    pub measured_on: Option<MeasuredOn>,
    /// Whether an MPI profiler measured messages in the sweep.
    pub messages_measured: bool,
    /// Whether the sweep ran one process without an MPI launcher: such a program cannot use
    /// a second node (MODEL.md 6c d).
    pub single_process: bool,
}

/// Reads the facts from a profile's sweep record.
pub fn read(rec: &SweepRecord) -> SweepFacts {
    let mut groups: BTreeMap<PointKey, Vec<&RunRecord>> = BTreeMap::new();
    let reference = rec.reference_clock();
    for r in rec.runs.iter().filter(|r| rec.in_baseline(r, reference)) {
        groups
            .entry(key(r.cores, r.freq_hz, r.gpus))
            .or_default()
            .push(r);
    }
    let spread = groups
        .into_iter()
        .map(|(k, runs)| {
            let walls: Vec<f64> = runs.iter().map(|r| r.wall_s).collect();
            let energies: Option<Vec<f64>> = runs
                .iter()
                .map(|r| r.readings.total_energy().map(|e| e.0))
                .collect();
            let domains = runs
                .first()
                .and_then(|r| r.readings.total_energy())
                .map(|e| e.1)
                .unwrap_or_default();
            let s = PointSpread {
                runs: runs.len(),
                wall_rel: rel_spread(&walls),
                energy_rel: energies.map(|e| rel_spread(&e)),
                energy_domains: domains,
            };
            (k, s)
        })
        .collect();
    let host = &rec.host;
    let measured_on = MeasuredOn {
        cpu: host.get("cpu").cloned(),
        physical_cores: host
            .get("physical cores available")
            .and_then(|c| c.trim().parse().ok()),
        gpus: rec.backends.get("nvml").cloned(),
        hostname: host.get("hostname").cloned(),
        repeats: Vec::new(),
    };
    let messages_measured = rec
        .runs
        .iter()
        .any(|r| r.ok && r.readings.mpi_messages_per_rank.is_some());
    SweepFacts {
        spread,
        measured_on: Some(measured_on),
        messages_measured,
        single_process: rec.ranks <= 1 && rec.launcher.is_empty() && rec.launcher_nodes.is_empty(),
    }
}
