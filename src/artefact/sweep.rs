//! The sweep record (`sweep.record` of a profile written by `jouleplan profile`): every run as
//! measured, where and how, with what each run's backends read. `measure` writes it, `model`
//! reads the facts it holds (spread, energy domains, the machine), and `--resume` reads it back.

pub use super::readings::TalpAttachment;
use super::readings::{Readings, Unsupported};
use crate::limits::{self, Reading};
use crate::units::{Hertz, freq_key};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One run of the program at one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Nodes the run spread over (1 in files written before the node axis).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub nodes: u32,
    /// Cores in use on each node.
    pub cores: u32,
    /// Core frequency the point asked for (or ran at), Hz.
    pub freq_hz: f64,
    /// GPUs in use.
    pub gpus: u32,
    /// Repeat index, from 1.
    pub repeat: u32,
    /// Whether it exited with status 0 within the time limit.
    pub ok: bool,
    /// How it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// Wall time, seconds.
    pub wall_s: f64,
    /// What the backends measured.
    pub readings: Readings,
    /// The last lines of its stderr.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stderr_tail: String,
    /// When it finished (seconds since the Unix epoch).
    pub finished_unix: u64,
    /// MPI ranks on each node, and threads per rank (absent in files written before the node
    /// axis: the sweep's `ranks`, and `cores / ranks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<RankLayout>,
    /// The hosts the run was given, as files written before the table of host lists held
    /// them (read, never written: [`SweepRecord::intern_old_hosts`] moves them to the table).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// The hosts the run was given (a `--hostfile` run's first `nodes` hosts), as a part of
    /// one of the sweep's `host_lists`: see [`SweepRecord::hosts_of`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_list: Option<HostsRef>,
    /// The GPU core clock the run was set to, MHz (`profile --gpu-clocks`; absent: not set,
    /// the clock the GPU chose).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_clock_mhz: Option<u32>,
}

/// A run's hosts: the first `count` hosts of `sweep.record.host_lists[list]`, so that a host
/// list of 10,000 nodes is written once, not once per run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostsRef {
    /// Index into `host_lists`.
    pub list: usize,
    /// How many of its first hosts.
    pub count: usize,
}

/// How one run's ranks and threads were laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankLayout {
    /// MPI ranks on each node.
    pub ranks_per_node: u32,
    /// OpenMP threads per rank.
    pub threads_per_rank: u32,
}

fn one() -> u32 {
    1
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_one(n: &u32) -> bool {
    *n == 1
}

impl RunRecord {
    /// `(cores, kHz, gpus)`: the single-node point it belongs to (see [`RunRecord::planned`]
    /// for the node count too).
    pub fn key(&self) -> PointKey {
        key(self.cores, self.freq_hz, self.gpus)
    }

    /// The planned point it belongs to, node count included.
    pub fn planned(&self) -> Planned {
        Planned {
            nodes: self.nodes,
            cores: self.cores,
            freq_hz: self.freq_hz,
            gpus: self.gpus,
            gpu_clock_mhz: self.gpu_clock_mhz,
        }
    }
}

/// A point of the sweep: nodes, cores per node, frequency (Hz), GPUs and the GPU clock.
/// Written as `[cores, freq_hz, gpus]` on one node (as before the node axis),
/// `[nodes, cores, freq_hz, gpus]` on more, and `[nodes, cores, freq_hz, gpus, gpu_clock_mhz]`
/// where the sweep sets the GPU clock.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(from = "PlannedRepr", into = "PlannedRepr")]
pub struct Planned {
    /// Nodes.
    pub nodes: u32,
    /// Cores per node.
    pub cores: u32,
    /// Frequency, Hz.
    pub freq_hz: f64,
    /// GPUs per node.
    pub gpus: u32,
    /// The GPU core clock the point's runs are set to, MHz (`None`: not set).
    pub gpu_clock_mhz: Option<u32>,
}

/// What tells two planned points apart: nodes, the single-node point, and the GPU clock in
/// MHz (0: not set).
pub type PlannedKey = (u32, PointKey, u32);

impl Planned {
    /// The key that tells two points apart (the frequency to the kHz, the GPU clock to the MHz).
    pub fn key(&self) -> PlannedKey {
        (
            self.nodes,
            key(self.cores, self.freq_hz, self.gpus),
            self.gpu_clock_mhz.unwrap_or(0),
        )
    }

    /// `2 nodes x 64 cores, 2.400 GHz, 0 GPUs` (`64 cores, ...` on one node).
    pub fn describe(&self) -> String {
        let nodes = if self.nodes == 1 {
            String::new()
        } else {
            format!("{} nodes x ", self.nodes)
        };
        let clock = self
            .gpu_clock_mhz
            .map(|m| format!(" at {m} MHz"))
            .unwrap_or_default();
        format!(
            "{nodes}{}, {:.3} GHz, {}{clock}",
            crate::units::count(self.cores, "core", "cores"),
            self.freq_hz / 1e9,
            crate::units::count(self.gpus, "GPU", "GPUs")
        )
    }
}

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum PlannedRepr {
    One(u32, f64, u32),
    Many(u32, u32, f64, u32),
    Clocked(u32, u32, f64, u32, u32),
}

impl From<PlannedRepr> for Planned {
    fn from(r: PlannedRepr) -> Self {
        let (nodes, cores, freq_hz, gpus, gpu_clock_mhz) = match r {
            PlannedRepr::One(c, f, g) => (1, c, f, g, None),
            PlannedRepr::Many(n, c, f, g) => (n, c, f, g, None),
            PlannedRepr::Clocked(n, c, f, g, m) => (n, c, f, g, Some(m)),
        };
        Planned {
            nodes,
            cores,
            freq_hz,
            gpus,
            gpu_clock_mhz,
        }
    }
}

impl From<Planned> for PlannedRepr {
    fn from(p: Planned) -> Self {
        if let Some(m) = p.gpu_clock_mhz {
            PlannedRepr::Clocked(p.nodes, p.cores, p.freq_hz, p.gpus, m)
        } else if p.nodes == 1 {
            PlannedRepr::One(p.cores, p.freq_hz, p.gpus)
        } else {
            PlannedRepr::Many(p.nodes, p.cores, p.freq_hz, p.gpus)
        }
    }
}

/// A point: cores, frequency in kHz, GPUs.
pub type PointKey = (u32, u64, u32);

/// The key of a point.
pub fn key(cores: u32, freq_hz: f64, gpus: u32) -> PointKey {
    (cores, freq_key(Hertz(freq_hz)), gpus)
}

/// A backend that could not measure, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Missing {
    /// The backend.
    pub backend: String,
    /// What, why and what to do.
    #[serde(flatten)]
    pub reason: Unsupported,
}

/// The `sweep` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepRecord {
    /// The sweep's identity, also on each line of its journal (absent in a file written
    /// before sweeps had one; given one when such a sweep is resumed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The command measured, word by word.
    pub command: Vec<String>,
    /// MPI ranks per node.
    pub ranks: u32,
    /// The launcher words before the command (empty: none); on more than one node, see
    /// `launcher_nodes`.
    pub launcher: Vec<String>,
    /// The launcher words of the runs on more than one node (empty: the sweep has none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub launcher_nodes: Vec<String>,
    /// Runs per point.
    pub repeat: u32,
    /// Where it ran: hostname, kernel, CPU, cores.
    pub host: BTreeMap<String, String>,
    /// Working backends and what each measured.
    pub backends: BTreeMap<String, String>,
    /// What could not be measured, and why.
    pub unsupported: Vec<Missing>,
    /// How the frequency was set, or why it was not.
    pub frequency: String,
    /// Points asked for.
    pub planned: Vec<Planned>,
    /// Every run so far, in the order they finished.
    pub runs: Vec<RunRecord>,
    /// Whether every planned run has been made.
    pub complete: bool,
    /// TALP outputs (DLB's GPU plugin) attached to points with `profile --talp`: their device
    /// and host-runtime times replace NVML's sampled ones in the baseline.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub talp: Vec<TalpAttachment>,
    /// Each distinct list of hosts the runs were given, once (runs refer to them by index).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_lists: Vec<Vec<String>>,
}

impl SweepRecord {
    /// The reference of `hosts` in the table of host lists: a list that begins with them, or a
    /// new list; `None` for no hosts.
    pub fn intern_hosts(&mut self, hosts: &[String]) -> Option<HostsRef> {
        if hosts.is_empty() {
            return None;
        }
        let count = hosts.len();
        let found = self
            .host_lists
            .iter()
            .position(|l| l.len() >= count && l[..count] == *hosts);
        let list = found.unwrap_or_else(|| {
            self.host_lists.push(hosts.to_vec());
            self.host_lists.len() - 1
        });
        Some(HostsRef { list, count })
    }

    /// Moves the per-run host lists of an older file into the table, so that the file is
    /// written again in the table's form.
    pub fn intern_old_hosts(&mut self) {
        for i in 0..self.runs.len() {
            if self.runs[i].hosts.is_empty() {
                continue;
            }
            let hosts = std::mem::take(&mut self.runs[i].hosts);
            self.runs[i].host_list = self.intern_hosts(&hosts);
        }
    }

    /// The hosts a run was given (empty where none were recorded).
    pub fn hosts_of<'a>(&'a self, run: &'a RunRecord) -> &'a [String] {
        match run.host_list {
            Some(r) => self
                .host_lists
                .get(r.list)
                .and_then(|l| l.get(..r.count))
                .unwrap_or(&[]),
            None => &run.hosts,
        }
    }
}

/// Checks one recorded run's readings: its times and energies through the range every reader
/// shares ([`Reading`]), its counts finite and from 0 to 1e21; names the run and the key.
fn check_readings(i: usize, r: &RunRecord) -> Result<(), String> {
    let bad = |what: &str, v: f64, expected: &str| {
        format!(
            "sweep.record.runs[{i}].{what}: {}, which no run can have (expected {expected})",
            limits::shown(v)
        )
    };
    let x = &r.readings;
    let counts = [
        ("readings.cycles", x.cycles),
        ("readings.instructions", x.instructions),
        ("readings.stall_cycles", x.stall_cycles),
        ("readings.mem_stall_cycles", x.mem_stall_cycles),
        ("readings.mpi_messages_per_rank", x.mpi_messages_per_rank),
        ("readings.mpi_bytes_per_rank", x.mpi_bytes_per_rank),
    ];
    for (what, v) in counts {
        if let Some(v) = v
            && !(v.is_finite() && (0.0..=1e21).contains(&v))
        {
            return Err(bad(what, v, "a count from 0 to 1e21"));
        }
    }
    // A run that failed to start may have taken no time.
    let wall = if r.ok {
        Reading::RunTime
    } else {
        Reading::PartTime
    };
    let mut times = vec![
        ("wall_s".to_string(), r.wall_s, wall),
        (
            "readings.cpu_time_s".to_string(),
            x.cpu_time_s.unwrap_or(0.0),
            Reading::PartTime,
        ),
    ];
    times.extend(
        x.gpu_busy_s
            .iter()
            .enumerate()
            .map(|(g, &v)| (format!("readings.gpu_busy_s[{g}]"), v, Reading::PartTime)),
    );
    let energies = x
        .energy_j
        .iter()
        .map(|(d, &v)| (format!("readings.energy_j.{d}"), v, Reading::PartEnergy));
    for (what, v, kind) in times.into_iter().chain(energies) {
        if let Err(expected) = kind.check(v) {
            return Err(bad(&what, v, &expected));
        }
    }
    Ok(())
}

/// The mean of some values (0 for none).
pub fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// Run-to-run spread above which a measured point's time is called uncertain: the sweep warns
/// as it measures, and `plan` notes it.
pub const NOISY_SPREAD: f64 = 0.10;

/// Relative sample standard deviation (0 for one value).
pub fn rel_spread(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let m = mean(v);
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64;
    if m == 0.0 { 0.0 } else { var.sqrt() / m }
}

impl SweepRecord {
    /// The GPU clock the profile's baseline is measured at: the highest clock a successful
    /// run was set to (MODEL.md 6e's `f_ref`); `None` where no run's clock was set.
    pub fn reference_clock(&self) -> Option<u32> {
        self.runs
            .iter()
            .filter(|r| r.ok)
            .filter_map(|r| r.gpu_clock_mhz)
            .max()
    }

    /// Whether a run belongs to the profile's baseline: on one node, and, with GPUs, at the
    /// reference clock (the other clocks are the clock law's, fitted by `fit` from the
    /// measured CSV; with no clock set anywhere every run is at the reference).
    pub fn in_baseline(&self, r: &RunRecord, reference: Option<u32>) -> bool {
        r.ok && r.nodes == 1 && (r.gpus == 0 || r.gpu_clock_mhz == reference)
    }

    /// Checks every recorded run: its point within bounds (cores, GPUs, frequency) and its
    /// readings finite and non-negative, so that a damaged `--resume` file is refused, not
    /// carried into the profile. Names the run.
    pub fn validate(&self) -> Result<(), String> {
        for (i, r) in self.runs.iter().enumerate() {
            let bad = |what: &str, v: f64| {
                format!(
                    "sweep.record.runs[{i}]: {what} is {}, which no run can have",
                    limits::shown(v)
                )
            };
            if r.cores == 0 || r.cores > 100_000 {
                return Err(bad("cores", f64::from(r.cores)));
            }
            if r.nodes == 0 || r.nodes > 1_000_000 {
                return Err(bad("nodes", f64::from(r.nodes)));
            }
            if let Some(l) = r.layout
                && (l.ranks_per_node == 0
                    || l.threads_per_rank == 0
                    || u64::from(l.ranks_per_node) * u64::from(l.threads_per_rank)
                        > u64::from(r.cores))
            {
                return Err(format!(
                    "sweep.record.runs[{i}]: layout of {} ranks x {} threads on {} cores, which \
                     no run can have",
                    l.ranks_per_node, l.threads_per_rank, r.cores
                ));
            }
            if r.gpus > 1024 {
                return Err(bad("gpus", f64::from(r.gpus)));
            }
            if let Some(m) = r.gpu_clock_mhz
                && (r.gpus == 0 || !(50..=5000).contains(&m))
            {
                return Err(bad("gpu_clock_mhz (MHz, on a run with GPUs)", f64::from(m)));
            }
            if !(1e7..=2e10).contains(&r.freq_hz) {
                return Err(bad("freq_hz", r.freq_hz));
            }
            if let Some(h) = r.host_list
                && self
                    .host_lists
                    .get(h.list)
                    .is_none_or(|l| h.count > l.len())
            {
                return Err(format!(
                    "sweep.record.runs[{i}].host_list: the first {} hosts of host list {}, but \
                     sweep.record.host_lists has {} lists{}",
                    h.count,
                    h.list,
                    self.host_lists.len(),
                    self.host_lists
                        .get(h.list)
                        .map(|l| format!(" and that one {} hosts", l.len()))
                        .unwrap_or_default()
                ));
            }
            check_readings(i, r)?;
            let x = &r.readings;
            if x.gpu_busy_s.len() > r.gpus as usize {
                return Err(bad(
                    "readings.gpu_busy_s (entries)",
                    x.gpu_busy_s.len() as f64,
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_at_a_set_clock_is_written_with_it_and_keyed_by_it() {
        let at = |m: Option<u32>| Planned {
            nodes: 1,
            cores: 4,
            freq_hz: 2.0e9,
            gpus: 1,
            gpu_clock_mhz: m,
        };
        let text = serde_json::to_string(&at(Some(1305))).unwrap();
        assert_eq!(text, "[1,4,2000000000.0,1,1305]");
        let back: Planned = serde_json::from_str(&text).unwrap();
        assert_eq!(back, at(Some(1305)));
        // Points written before the clock read as before, with none.
        let old: Planned = serde_json::from_str("[4,2e9,1]").unwrap();
        assert_eq!(old, at(None));
        assert_ne!(at(Some(1305)).key(), at(Some(870)).key());
        assert_ne!(at(Some(1305)).key(), at(None).key());
        assert!(at(Some(870)).describe().ends_with("1 GPU at 870 MHz"));
    }
}
