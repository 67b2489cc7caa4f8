//! The file a sweep writes: a workload profile that `plan` reads (`jouleplan-profile/1`), whose
//! `sweep` section keeps every run as measured (failed runs too) and where and how it was
//! measured. Each run is appended to a journal beside it as it finishes (`journal.rs` of the
//! sweep), and the whole file is rewritten atomically from time to time and at the end, so an
//! interruption loses at most the run in progress, and `--resume` continues from both.

use super::Readings;
use crate::artefact::profile::{
    CommunicationFile, DeviceFile, Growth, Iterations, PROFILE_FORMAT, PointFile, ProfileFile,
    SpreadFile, SweepSection, TreeFile, freq_key,
};
use crate::artefact::sweep::mean;
pub use crate::artefact::sweep::{
    HostsRef, Missing, Planned, PlannedKey, PointKey, RankLayout, RunRecord, SweepRecord,
    TalpAttachment, key, rel_spread,
};
use crate::error::{InputError, InputResult};
use crate::units::Hertz;
use std::collections::BTreeMap;
use std::path::Path;

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

impl Header {
    /// The header a profile file was written with: its names, iterations and growth, and the
    /// provenance notes that the sweep did not derive.
    pub fn of(doc: &ProfileFile) -> Header {
        let derived = ["host.", "measured.", "not measured.", "frequency"];
        let notes = doc
            .provenance
            .iter()
            .filter(|(k, _)| !derived.iter().any(|d| k.starts_with(d)))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Header {
            program: doc.program.clone(),
            description: doc.description.clone(),
            baseline_iterations: doc.iterations.baseline,
            target_iterations: doc.iterations.target,
            growth: doc
                .communication
                .as_ref()
                .map_or(Growth::Constant, CommunicationFile::growth),
            notes,
        }
    }
}

/// Reads a profile that `jouleplan profile` wrote, for `--resume`, `--talp` and the node law:
/// the file (its baseline may still be empty) and its checked sweep record.
pub fn read_written(path: &Path, text: &str) -> InputResult<(ProfileFile, SweepRecord)> {
    let mut doc = ProfileFile::parse(path, text)?;
    if let Some(s) = &mut doc.sweep {
        // Older files list each run's hosts in the run: written again, in the table.
        s.record.intern_old_hosts();
    }
    let rec = match &doc.sweep {
        None => {
            return Err(InputError::Mismatch(format!(
                "{}: no `sweep.record` section: the file was not written by `jouleplan profile`",
                path.display()
            )));
        }
        Some(s) => s.record.clone(),
    };
    rec.validate()
        .map_err(|e| InputError::Mismatch(format!("{}: {e}", path.display())))?;
    Ok((doc, rec))
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

/// What the sweep could not measure, found while building the points.
#[derive(Default)]
struct Gaps {
    no_cycles: bool,
    no_stalls: bool,
    no_energy: bool,
    gpu_guess: bool,
    no_cpu_time: bool,
    doubtful: Vec<String>,
}

/// Builds the profile file from the header and the sweep so far, with the assumptions
/// `plan` must show for what was not measured.
pub fn profile_file(h: &Header, s: &SweepRecord) -> ProfileFile {
    // The baseline is the runs on one node; runs on more are the node law's (MODEL.md 6c).
    let mut groups: BTreeMap<PointKey, Vec<&RunRecord>> = BTreeMap::new();
    let reference = s.reference_clock();
    for r in s.runs.iter().filter(|r| s.in_baseline(r, reference)) {
        groups.entry(r.key()).or_default().push(r);
    }
    let mut gaps = Gaps::default();
    let (mut points, mut spread) = (Vec::new(), Vec::new());
    for (&(cores, _, gpus), runs) in &groups {
        points.push(point_file(s, (cores, gpus), runs, &mut gaps));
        spread.push(spread_file((cores, gpus), runs));
    }
    let mut assumptions = gap_assumptions(s, &gaps);
    let comm = communication(h, s, &mut assumptions);
    ProfileFile {
        format: PROFILE_FORMAT.into(),
        program: h.program.clone(),
        description: h.description.clone(),
        iterations: Iterations {
            baseline: h.baseline_iterations,
            target: h.target_iterations,
        },
        memory_footprint_gib: None,
        communication: Some(comm),
        baseline: points,
        assumptions: Some(assumptions),
        provenance: provenance(h, s),
        sweep: Some(SweepSection {
            record: s.clone(),
            spread,
        }),
        node_law: None,
        gpu_clock: None,
        measured_gpu_clock_mhz: None,
        measured_on: None,
        layout: sweep_layout(s).map(crate::model::layout::Layout::to_file),
        energy_scope: None,
        fit_id: None,
    }
}

/// The layout rule the sweep's successful runs followed (each run's own, else the sweep's
/// ranks per node).
fn sweep_layout(s: &SweepRecord) -> Option<crate::model::layout::Layout> {
    let pairs: Vec<(u32, u32)> = s
        .runs
        .iter()
        .filter(|r| r.ok)
        .map(|r| (r.cores, r.layout.map_or(s.ranks, |l| l.ranks_per_node)))
        .collect();
    crate::model::layout::Layout::infer(&pairs)
}

/// One baseline point: the means of its runs, what is derived where a counter is missing,
/// and its device times.
fn point_file(
    s: &SweepRecord,
    (cores, gpus): (u32, u32),
    runs: &[&RunRecord],
    gaps: &mut Gaps,
) -> PointFile {
    let f = runs[0].freq_hz;
    let walls: Vec<f64> = runs.iter().map(|r| r.wall_s).collect();
    let wall = mean(&walls);
    let cpu = all(runs, |r| r.readings.cpu_time_s).map(|v| mean(&v));
    gaps.no_cpu_time |= cpu.is_none();
    let busy = cpu.unwrap_or(wall * f64::from(cores));
    let util = (busy / (f64::from(cores) * wall)).clamp(1e-9, 1.0);
    let (cycles, stall, mem) = cycle_counts(runs, busy * f, gaps);
    // A mean energy outside a run's range (every domain read 0 J) is no reading: a profile
    // never holds an energy its reader refuses.
    let energy = all(runs, |r| r.readings.total_energy().map(|e| e.0))
        .map(|v| mean(&v))
        .filter(|&e| crate::limits::Reading::RunEnergy.ok(e));
    gaps.no_energy |= energy.is_none();
    let counted = super::counter_notes::PointCounts {
        cores,
        freq_hz: f,
        wall_s: wall,
        cycles: all(runs, |r| r.readings.cycles).map(|v| mean(&v)),
        instructions: all(runs, |r| r.readings.instructions).map(|v| mean(&v)),
        cpu_time_s: cpu,
    };
    gaps.doubtful.extend(counted.doubtful());
    let mut p = PointFile {
        cores,
        freq_hz: f,
        gpus,
        cycles,
        stall_cycles: stall,
        mem_stall_cycles: mem,
        instructions: all(runs, |r| r.readings.instructions).map(|v| mean(&v)),
        utilisation: util,
        wall_time_s: wall,
        energy_j: energy,
        measured: true,
        measured_tree: None,
        device: None,
    };
    device(&mut p, s, (cores, gpus, f), runs, gaps);
    p
}

/// Cycles, stall cycles and memory stall cycles: the counters' means, or `busy x f` cycles
/// and no stalls where they were not counted.
fn cycle_counts(runs: &[&RunRecord], busy_cycles: f64, gaps: &mut Gaps) -> (f64, f64, f64) {
    let cycles = match all(runs, |r| r.readings.cycles) {
        Some(v) => mean(&v),
        None => {
            gaps.no_cycles = true;
            busy_cycles
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
            gaps.no_stalls = true;
            (0.0, 0.0)
        }
    };
    (cycles, stall, mem)
}

/// The point's measured tree and device times: TALP's where attached or preloaded, else
/// NVML's sampled busy time.
fn device(
    p: &mut PointFile,
    s: &SweepRecord,
    (cores, gpus, f): (u32, u32, f64),
    runs: &[&RunRecord],
    gaps: &mut Gaps,
) {
    let attached = s
        .talp
        .iter()
        .find(|t| key(t.cores, t.freq_hz, t.gpus) == (cores, freq_key(Hertz(f)), gpus))
        .cloned();
    let talp = attached.or_else(|| during_sweep(runs));
    if let Some(t) = talp.as_ref().filter(|t| !t.printed.is_empty()) {
        p.measured_tree = Some(TreeFile {
            source: format!("TALP ({})", t.file),
            efficiencies: t.printed.clone(),
        });
    }
    if let Some(t) = talp.filter(|t| t.gpus > 0 && gpus > 0) {
        let (kernel, transfer) = t.per_gpu();
        p.device = Some(DeviceFile {
            kernel_s: kernel,
            transfer_s: transfer,
            host_runtime_s: t.gpu_runtime_s,
            source: Some(format!("TALP ({})", t.file)),
        });
    } else if gpus > 0 {
        gaps.gpu_guess = true;
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
        p.device = Some(DeviceFile {
            kernel_s: busy,
            transfer_s: vec![0.0; gpus as usize],
            host_runtime_s: 0.0,
            source: Some(nvml_source(runs)),
        });
    }
}

/// The run-to-run spread of a point's wall time.
fn spread_file((cores, gpus): (u32, u32), runs: &[&RunRecord]) -> SpreadFile {
    let walls: Vec<f64> = runs.iter().map(|r| r.wall_s).collect();
    SpreadFile {
        cores,
        freq_hz: runs[0].freq_hz,
        gpus,
        runs: runs.len(),
        wall_s_min: walls.iter().cloned().fold(f64::INFINITY, f64::min),
        wall_s_max: walls.iter().cloned().fold(0.0, f64::max),
        wall_rel_std: rel_spread(&walls),
    }
}

/// The assumptions that stand in for what was not measured.
fn gap_assumptions(s: &SweepRecord, gaps: &Gaps) -> Vec<String> {
    let mut assumptions = Vec::new();
    let why = |needle: &str| {
        s.unsupported
            .iter()
            .find(|m| m.reason.what.contains(needle))
            .map(|m| format!(" ({})", m.reason.why))
            .unwrap_or_default()
    };
    if gaps.no_cycles {
        assumptions.push(format!(
            "cycles were not counted{}: C_s = busy CPU time x f, so predicted CPU time scales as 1/f",
            why("hardware counters")
        ));
    }
    if gaps.no_stalls {
        assumptions.push(format!(
            "stall cycles were not counted{}: all cycles are taken as work (st_s = m_s = 0), so \
             memory-bound slowdowns are not predicted",
            why("stall")
        ));
    }
    if gaps.no_cpu_time {
        assumptions.push(super::counter_notes::NO_CPU_TIME.into());
    }
    assumptions.extend(gaps.doubtful.iter().cloned());
    if gaps.no_energy {
        assumptions.push(crate::model::workload::NO_ENERGY.into());
    }
    if gaps.gpu_guess {
        assumptions.push(
            "GPU kernel time is NVML utilisation x wall time; transfer time was not measured (0) \
             and host time blocked in the GPU runtime is estimated from the core-count series \
             (attach TALP outputs of DLB's GPU plugin with `profile --talp CORES=FILE` to measure \
             them)"
                .into(),
        );
    }
    assumptions
}

/// The communication section: messages per rank per iteration from the profiler, or the
/// assumption of none.
fn communication(h: &Header, s: &SweepRecord, assumptions: &mut Vec<String>) -> CommunicationFile {
    let one_node = || s.runs.iter().filter(|r| r.ok && r.nodes == 1);
    let msgs: Vec<f64> = one_node()
        .filter_map(|r| r.readings.mpi_messages_per_rank)
        .collect();
    let bytes: Vec<f64> = one_node()
        .filter_map(|r| r.readings.mpi_bytes_per_rank)
        .collect();
    let mut comm = CommunicationFile {
        messages_per_iteration: 0.0,
        bytes_per_message: 0.0,
        growth: Some(h.growth.name().into()),
        neighbours: match h.growth {
            Growth::Neighbours(k) => Some(k),
            _ => None,
        },
    };
    if msgs.is_empty() {
        assumptions.push(
            "MPI messages were not measured (no --mpi-profiler): the profile assumes no \
             inter-node messages (eta = 0), so multi-node runs are predicted without message \
             time (T_w,net = 0; T_s,net keeps only the non-overlapped (1 - U) T_CPU)"
                .into(),
        );
    } else {
        comm.messages_per_iteration = mean(&msgs) / h.baseline_iterations;
        if bytes.is_empty() {
            assumptions.push(
                "bytes per message were not measured (TALP counts calls only): nu = 0".into(),
            );
        } else if mean(&msgs) > 0.0 {
            comm.bytes_per_message = mean(&bytes) / mean(&msgs);
        }
    }
    comm
}

/// Where each value came from: the header's notes, the host, the backends, what was not
/// measured and how the frequency was set.
fn provenance(h: &Header, s: &SweepRecord) -> BTreeMap<String, String> {
    let mut prov: BTreeMap<String, String> = h.notes.iter().cloned().collect();
    for (k, v) in &s.host {
        prov.insert(format!("host.{k}"), v.clone());
    }
    for (k, v) in &s.backends {
        prov.insert(format!("measured.{k}"), v.clone());
    }
    for m in &s.unsupported {
        let why = format!("{}. {}", m.reason.why, m.reason.hint);
        prov.insert(format!("not measured.{}", m.reason.what), why);
    }
    prov.insert("frequency".into(), s.frequency.clone());
    prov
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
