//! The file a sweep writes: a workload profile that `plan` reads (`jouleplan-profile/1`), whose
//! `sweep` section keeps every run as measured (failed runs too) and where and how it was
//! measured. After each run the whole file is rewritten atomically, so an interruption loses at
//! most the run in progress, and `--resume` continues from it.

use super::{Readings, Unsupported};
use crate::model::workload::{Growth, PROFILE_FORMAT, freq_key};
use crate::units::Hertz;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
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
    /// The hosts the run was given (a `--hostfile` run's first `nodes` hosts; a Slurm step's
    /// node list where sacct gave it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
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
        }
    }
}

/// A point of the sweep: nodes, cores per node, frequency (Hz) and GPUs. Written as
/// `[cores, freq_hz, gpus]` on one node (as before the node axis) and
/// `[nodes, cores, freq_hz, gpus]` on more.
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
}

impl Planned {
    /// The key that tells two points apart (the frequency to the kHz).
    pub fn key(&self) -> (u32, PointKey) {
        (self.nodes, key(self.cores, self.freq_hz, self.gpus))
    }

    /// `2 nodes x 64 cores, 2.400 GHz, 0 GPUs` (`64 cores, ...` on one node).
    pub fn describe(&self) -> String {
        let nodes = if self.nodes == 1 {
            String::new()
        } else {
            format!("{} nodes x ", self.nodes)
        };
        format!(
            "{nodes}{} cores, {:.3} GHz, {} GPUs",
            self.cores,
            self.freq_hz / 1e9,
            self.gpus
        )
    }
}

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum PlannedRepr {
    One(u32, f64, u32),
    Many(u32, u32, f64, u32),
}

impl From<PlannedRepr> for Planned {
    fn from(r: PlannedRepr) -> Self {
        let (nodes, cores, freq_hz, gpus) = match r {
            PlannedRepr::One(c, f, g) => (1, c, f, g),
            PlannedRepr::Many(n, c, f, g) => (n, c, f, g),
        };
        Planned {
            nodes,
            cores,
            freq_hz,
            gpus,
        }
    }
}

impl From<Planned> for PlannedRepr {
    fn from(p: Planned) -> Self {
        if p.nodes == 1 {
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
}

/// The device times of one TALP output, attached to one point (seconds, whole run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TalpAttachment {
    /// Cores of the point.
    pub cores: u32,
    /// Frequency of the point, Hz.
    pub freq_hz: f64,
    /// GPUs of the point.
    pub gpus: u32,
    /// The TALP file, as given.
    pub file: String,
    /// `gpuUsefulTime`: kernel time summed over the GPUs.
    pub gpu_useful_s: f64,
    /// `maxGpuUsefulTime`: the busiest GPU's kernel time.
    pub max_gpu_useful_s: f64,
    /// `maxGpuActiveTime`: the busiest GPU's kernel plus transfer time.
    pub max_gpu_active_s: f64,
    /// `gpuRuntimeTime`: host time blocked in the GPU runtime.
    pub gpu_runtime_s: f64,
    /// `elapsedTime` of the TALP run (its own run, beside the sweep's).
    pub elapsed_s: f64,
    /// The efficiencies TALP printed for the run (its host and device trees), by JSON name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub printed: BTreeMap<String, f64>,
}

impl TalpAttachment {
    /// Per-GPU kernel and transfer times: the busiest GPU at TALP's maxima, the others sharing
    /// the rest of the kernel time evenly (sum and maximum kept, so the load balance is TALP's).
    pub fn per_gpu(&self) -> (Vec<f64>, Vec<f64>) {
        let g = self.gpus.max(1) as usize;
        let transfer = (self.max_gpu_active_s - self.max_gpu_useful_s).max(0.0);
        let rest = if g > 1 {
            ((self.gpu_useful_s - self.max_gpu_useful_s) / (g - 1) as f64).max(0.0)
        } else {
            0.0
        };
        let kernel = (0..g)
            .map(|i| if i == 0 { self.max_gpu_useful_s } else { rest })
            .collect();
        (kernel, vec![transfer; g])
    }
}

/// What the profile says besides the measurements.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// Program name.
    pub program: String,
    /// Description.
    pub description: String,
    /// `S_s`: iterations of each baseline run.
    pub baseline_iterations: f64,
    /// `S`: iterations of the target run.
    pub target_iterations: f64,
    /// How messages grow with the node count.
    pub growth: Growth,
    /// Where the header values came from (for provenance).
    pub notes: Vec<(String, String)>,
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// Relative sample standard deviation (0 for one value).
pub fn rel_spread(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let m = mean(v);
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64;
    if m == 0.0 { 0.0 } else { var.sqrt() / m }
}

/// All values of one field, when every run has it.
fn all<F: Fn(&RunRecord) -> Option<f64>>(runs: &[&RunRecord], f: F) -> Option<Vec<f64>> {
    runs.iter().map(|r| f(r)).collect()
}

/// What TALP measured during the sweep's own runs of a point (preloaded with
/// `--mpi-profiler talp`): the mean over the runs that have it, named after them.
fn during_sweep(runs: &[&RunRecord]) -> Option<TalpAttachment> {
    let t: Vec<&TalpAttachment> = runs
        .iter()
        .filter_map(|r| r.readings.talp.as_ref())
        .collect();
    let first = *t.first()?;
    let m = |f: fn(&TalpAttachment) -> f64| mean(&t.iter().map(|a| f(a)).collect::<Vec<_>>());
    let mut printed = BTreeMap::new();
    for k in first.printed.keys() {
        let v: Vec<f64> = t.iter().filter_map(|a| a.printed.get(k).copied()).collect();
        printed.insert(k.clone(), mean(&v));
    }
    Some(TalpAttachment {
        file: format!("preloaded during the sweep, mean of {} runs", t.len()),
        gpu_useful_s: m(|a| a.gpu_useful_s),
        max_gpu_useful_s: m(|a| a.max_gpu_useful_s),
        max_gpu_active_s: m(|a| a.max_gpu_active_s),
        gpu_runtime_s: m(|a| a.gpu_runtime_s),
        elapsed_s: m(|a| a.elapsed_s),
        printed,
        ..first.clone()
    })
}

/// Builds the profile document from the header and the sweep so far. Returns it with the
/// assumptions `plan` must show for what was not measured.
pub fn profile_json(h: &Header, s: &SweepRecord) -> Value {
    // The baseline is the runs on one node; runs on more are the node law's (MODEL.md 6c).
    let mut groups: BTreeMap<PointKey, Vec<&RunRecord>> = BTreeMap::new();
    for r in s.runs.iter().filter(|r| r.ok && r.nodes == 1) {
        groups.entry(r.key()).or_default().push(r);
    }
    let mut points = Vec::new();
    let mut spread = Vec::new();
    let (mut no_cycles, mut no_stalls, mut no_energy, mut gpu_guess) = (false, false, false, false);
    for (&(cores, _, gpus), runs) in &groups {
        let f = runs[0].freq_hz;
        let walls: Vec<f64> = runs.iter().map(|r| r.wall_s).collect();
        let wall = mean(&walls);
        let cpu = all(runs, |r| r.readings.cpu_time_s).map(|v| mean(&v));
        let busy = cpu.unwrap_or(wall * f64::from(cores));
        let util = (busy / (f64::from(cores) * wall)).clamp(1e-9, 1.0);
        let cycles = match all(runs, |r| r.readings.cycles) {
            Some(v) => mean(&v),
            None => {
                no_cycles = true;
                busy * f
            }
        };
        let (stall, mem) = match (
            all(runs, |r| r.readings.stall_cycles),
            all(runs, |r| r.readings.mem_stall_cycles),
        ) {
            (Some(a), Some(b)) => {
                let st = mean(&a).min(cycles * (1.0 - 1e-9));
                (st, mean(&b).min(st))
            }
            _ => {
                no_stalls = true;
                (0.0, 0.0)
            }
        };
        let mut p = json!({
            "cores": cores,
            "freq_hz": f,
            "gpus": gpus,
            "cycles": cycles,
            "stall_cycles": stall,
            "mem_stall_cycles": mem,
            "utilisation": util,
            "wall_time_s": wall,
            "measured": true,
        });
        if let Some(v) = all(runs, |r| r.readings.instructions) {
            p["instructions"] = json!(mean(&v));
        }
        match all(runs, |r| r.readings.total_energy().map(|e| e.0)) {
            Some(v) => p["energy_j"] = json!(mean(&v)),
            None => no_energy = true,
        }
        let attached = s
            .talp
            .iter()
            .find(|t| key(t.cores, t.freq_hz, t.gpus) == (cores, freq_key(Hertz(f)), gpus))
            .cloned();
        let talp = attached.or_else(|| during_sweep(runs));
        if let Some(t) = talp.as_ref().filter(|t| !t.printed.is_empty()) {
            p["measured_tree"] = json!({
                "source": format!("TALP ({})", t.file),
                "efficiencies": t.printed,
            });
        }
        if let Some(t) = talp.filter(|t| t.gpus > 0 && gpus > 0) {
            let (kernel, transfer) = t.per_gpu();
            p["device"] = json!({
                "kernel_s": kernel,
                "transfer_s": transfer,
                "host_runtime_s": t.gpu_runtime_s,
                "source": format!("TALP ({})", t.file),
            });
        } else if gpus > 0 {
            gpu_guess = true;
            let busy: Vec<f64> = (0..gpus as usize)
                .map(|i| {
                    mean(
                        &runs
                            .iter()
                            .map(|r| r.readings.gpu_busy_s.get(i).copied().unwrap_or(0.0))
                            .collect::<Vec<_>>(),
                    )
                })
                .collect();
            p["device"] = json!({
                "kernel_s": busy,
                "transfer_s": vec![0.0; gpus as usize],
                "host_runtime_s": 0.0,
                "source": nvml_source(runs),
            });
        }
        points.push(p);
        spread.push(json!({
            "cores": cores, "freq_hz": f, "gpus": gpus, "runs": runs.len(),
            "wall_s_min": walls.iter().cloned().fold(f64::INFINITY, f64::min),
            "wall_s_max": walls.iter().cloned().fold(0.0, f64::max),
            "wall_rel_std": rel_spread(&walls),
        }));
    }
    let mut assumptions = Vec::new();
    let why = |needle: &str| {
        s.unsupported
            .iter()
            .find(|m| m.reason.what.contains(needle))
            .map(|m| format!(" ({})", m.reason.why))
            .unwrap_or_default()
    };
    if no_cycles {
        assumptions.push(format!(
            "cycles were not counted{}: C_s = busy CPU time x f, so predicted CPU time scales as 1/f",
            why("hardware counters")
        ));
    }
    if no_stalls {
        assumptions.push(format!(
            "stall cycles were not counted{}: all cycles are taken as work (st_s = m_s = 0), so \
             memory-bound slowdowns are not predicted",
            why("stall")
        ));
    }
    if no_energy {
        assumptions.push(
            "no energy was measured on the baseline: predictions use the machine model's power only"
                .into(),
        );
    }
    if gpu_guess {
        assumptions.push(
            "GPU kernel time is NVML utilisation x wall time; transfer time was not measured (0) \
             and host time blocked in the GPU runtime is estimated from the core-count series \
             (attach TALP outputs of DLB's GPU plugin with `profile --talp CORES=FILE` to measure \
             them)"
                .into(),
        );
    }
    // Communication: messages per rank per iteration from the profiler, when there was one.
    let msgs: Vec<f64> = s
        .runs
        .iter()
        .filter(|r| r.ok && r.nodes == 1)
        .filter_map(|r| r.readings.mpi_messages_per_rank)
        .collect();
    let bytes: Vec<f64> = s
        .runs
        .iter()
        .filter(|r| r.ok && r.nodes == 1)
        .filter_map(|r| r.readings.mpi_bytes_per_rank)
        .collect();
    let mut comm =
        json!({"messages_per_iteration": 0.0, "bytes_per_message": 0.0, "growth": h.growth.name()});
    if let Growth::Neighbours(k) = h.growth {
        comm["neighbours"] = json!(k);
    }
    if msgs.is_empty() {
        assumptions.push(
            "MPI messages were not measured (no --mpi-profiler): the profile assumes no \
             inter-node messages (eta = 0), so multi-node runs are predicted without message \
             time (T_w,net = 0; T_s,net keeps only the non-overlapped (1 - U) T_CPU)"
                .into(),
        );
    } else {
        let eta = mean(&msgs) / h.baseline_iterations;
        comm["messages_per_iteration"] = json!(eta);
        if bytes.is_empty() {
            assumptions.push(
                "bytes per message were not measured (TALP counts calls only): nu = 0".into(),
            );
        } else if mean(&msgs) > 0.0 {
            comm["bytes_per_message"] = json!(mean(&bytes) / mean(&msgs));
        }
    }
    let mut prov: serde_json::Map<String, Value> = h
        .notes
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    for (k, v) in &s.host {
        prov.insert(format!("host.{k}"), Value::String(v.clone()));
    }
    for (k, v) in &s.backends {
        prov.insert(format!("measured.{k}"), Value::String(v.clone()));
    }
    for m in &s.unsupported {
        prov.insert(
            format!("not measured.{}", m.reason.what),
            Value::String(format!("{}. {}", m.reason.why, m.reason.hint)),
        );
    }
    prov.insert("frequency".into(), Value::String(s.frequency.clone()));
    json!({
        "format": PROFILE_FORMAT,
        "program": h.program,
        "description": h.description,
        "iterations": {"baseline": h.baseline_iterations, "target": h.target_iterations},
        "communication": comm,
        "baseline": points,
        "assumptions": assumptions,
        "provenance": prov,
        "sweep": {
            "record": s,
            "spread": spread,
        },
    })
}

impl SweepRecord {
    /// Checks every recorded run: its point within bounds (cores, GPUs, frequency) and its
    /// readings finite and non-negative, so that a damaged `--resume` file is refused, not
    /// carried into the profile. Names the run.
    pub fn validate(&self) -> Result<(), String> {
        for (i, r) in self.runs.iter().enumerate() {
            let bad = |what: &str, v: f64| {
                format!("sweep.record.runs[{i}]: {what} is {v}, which no run can have")
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
            if !(1e7..=2e10).contains(&r.freq_hz) {
                return Err(bad("freq_hz", r.freq_hz));
            }
            let x = &r.readings;
            let values = [
                ("wall_s", Some(r.wall_s)),
                ("readings.cycles", x.cycles),
                ("readings.instructions", x.instructions),
                ("readings.stall_cycles", x.stall_cycles),
                ("readings.mem_stall_cycles", x.mem_stall_cycles),
                ("readings.cpu_time_s", x.cpu_time_s),
                ("readings.mpi_messages_per_rank", x.mpi_messages_per_rank),
                ("readings.mpi_bytes_per_rank", x.mpi_bytes_per_rank),
            ];
            let extra = x
                .energy_j
                .values()
                .chain(x.gpu_busy_s.iter())
                .map(|&v| ("readings.energy_j / gpu_busy_s", Some(v)));
            for (what, v) in values.into_iter().chain(extra) {
                if let Some(v) = v
                    && !(v.is_finite() && (0.0..=1e21).contains(&v))
                {
                    return Err(bad(what, v));
                }
            }
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

/// Reads the sweep record back from a file written by [`profile_json`].
pub fn read_sweep(doc: &Value) -> Result<SweepRecord, String> {
    let rec = doc
        .get("sweep")
        .and_then(|s| s.get("record"))
        .ok_or("no `sweep.record` section: the file was not written by `jouleplan profile`")?;
    let rec: SweepRecord =
        serde_json::from_value(rec.clone()).map_err(|e| format!("`sweep.record`: {e}"))?;
    rec.validate()?;
    Ok(rec)
}

/// The device table's source for NVML-sampled points: the busy time's sampling error and the
/// clocks seen while busy (means over the point's runs and GPUs), where the runs recorded them.
fn nvml_source(runs: &[&RunRecord]) -> String {
    let avg = |f: &dyn Fn(&Readings) -> &Vec<f64>| {
        let v: Vec<f64> = runs
            .iter()
            .flat_map(|r| f(&r.readings).iter().copied())
            .collect();
        (!v.is_empty()).then(|| mean(&v))
    };
    let mut s = "NVML utilisation sampling".to_string();
    if let Some(e) = avg(&|r| &r.gpu_busy_err_s) {
        s += &format!(" (busy time +-{e:.2} s per run from sampling, one standard error)");
    }
    if let (Some(sm), Some(mem)) = (avg(&|r| &r.gpu_sm_mhz), avg(&|r| &r.gpu_mem_mhz)) {
        s += &format!("; while busy: SM clock {sm:.0} MHz, memory clock {mem:.0} MHz");
    }
    s
}
