//! The result of `jouleplan metrics` for one input: one run per TALP region, mpiP report or
//! trace, with the host tree, device tree, POP metrics, counters and windows where the input
//! allows them.

use super::mpip::MpipReport;
use super::talp::{HostSource, TalpFile, TalpRegion};
use super::tree::{DeviceTree, HostTree, device_tree, host_tree, legacy_host_tree, ratio};
use serde::Serialize;

/// POP metrics (METRICS.md section 3). Serialisation and transfer need a trace.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Pop {
    /// `mean_i U_i / max_i U_i`.
    pub load_balance: f64,
    /// `max_i U_i / T`.
    pub communication: f64,
    /// `max_i U_i / T_ideal`.
    pub serialisation: Option<f64>,
    /// `T_ideal / T`.
    pub transfer: Option<f64>,
    /// `LB x Comm`.
    pub parallel_efficiency: f64,
}

impl Pop {
    /// From per-rank useful times and the runtime; `ideal` is the ideal-network runtime.
    pub fn from_useful(useful: &[f64], runtime: f64, ideal: Option<f64>) -> Pop {
        let max = useful.iter().copied().fold(0.0, f64::max);
        let mean = if useful.is_empty() {
            0.0
        } else {
            useful.iter().sum::<f64>() / useful.len() as f64
        };
        let lb = ratio(mean, max);
        let comm = ratio(max, runtime);
        Pop {
            load_balance: lb,
            communication: comm,
            serialisation: ideal.map(|i| ratio(max, i)),
            transfer: ideal.map(|i| ratio(i, runtime)),
            parallel_efficiency: lb * comm,
        }
    }
}

/// Hardware counters over useful time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Counters {
    /// Instructions.
    pub instructions: f64,
    /// Cycles.
    pub cycles: f64,
    /// Useful time summed over ranks, seconds.
    pub useful_s: f64,
    /// `instructions / cycles`.
    pub ipc: f64,
    /// `cycles / useful time`, GHz.
    pub frequency_ghz: f64,
}

impl Counters {
    /// `None` when nothing was counted.
    pub fn new(instructions: f64, cycles: f64, useful_s: f64) -> Option<Counters> {
        (instructions > 0.0 && cycles > 0.0).then(|| Counters {
            instructions,
            cycles,
            useful_s,
            ipc: ratio(instructions, cycles),
            frequency_ghz: ratio(cycles, useful_s) / 1e9,
        })
    }
}

/// A printed TALP efficiency that differs from the recomputation by more than 0.01.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Disagreement {
    /// TALP's name.
    pub metric: String,
    /// What TALP printed.
    pub printed: f64,
    /// What the raw times give.
    pub recomputed: f64,
}

/// One analysed run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Run {
    /// The input file.
    pub source: String,
    /// TALP region, where the input has regions.
    pub region: Option<String>,
    /// `talp`, `mpip` or `paraver`.
    pub kind: &'static str,
    /// MPI ranks.
    pub ranks: u32,
    /// Elapsed (runtime), seconds.
    pub elapsed_s: f64,
    /// Useful time summed over ranks (and threads), seconds.
    pub useful_s: f64,
    /// Host tree.
    pub host: Option<HostTree>,
    /// Device tree.
    pub device: Option<DeviceTree>,
    /// POP metrics.
    pub pop: Option<Pop>,
    /// Counters.
    pub counters: Option<Counters>,
    /// Time-resolved windows.
    pub windows: Option<Vec<super::windows::Window>>,
    /// Where the file's own printed efficiencies disagree with the recomputation (> 0.01).
    pub talp_disagreements: Vec<Disagreement>,
    /// Notes on what was skipped, assumed or detected.
    pub notes: Vec<String>,
}

/// The host tree's value under TALP's printed name.
pub fn host_value(h: &HostTree, d: Option<&DeviceTree>, name: &str) -> Option<f64> {
    Some(match name {
        "parallelEfficiency" => h.parallel_efficiency,
        "mpiParallelEfficiency" => h.mpi_parallel_efficiency,
        "mpiCommunicationEfficiency" => h.mpi_communication_efficiency,
        "mpiLoadBalance" => h.mpi_load_balance,
        "mpiLoadBalanceIn" => h.mpi_load_balance_in,
        "mpiLoadBalanceOut" => h.mpi_load_balance_out,
        "ompParallelEfficiency" => h.omp_parallel_efficiency,
        "ompLoadBalance" => h.omp_load_balance,
        "ompSchedulingEfficiency" => h.omp_scheduling_efficiency,
        "ompSerializationEfficiency" => h.omp_serialization_efficiency,
        "deviceOffloadEfficiency" => h.device_offload_efficiency,
        "gpuParallelEfficiency" => d?.parallel_efficiency,
        "gpuLoadBalance" => d?.load_balance,
        "gpuCommunicationEfficiency" => d?.communication_efficiency,
        "gpuOrchestrationEfficiency" => d?.orchestration_efficiency,
        _ => return None,
    })
}

fn talp_region_run(file: &TalpFile, r: &TalpRegion) -> Run {
    let host = match &r.host {
        HostSource::Modern(h) => host_tree(h),
        HostSource::Legacy(h) => legacy_host_tree(h),
    };
    let device = r.device.as_ref().map(device_tree);
    let talp_disagreements = r
        .printed
        .iter()
        .filter_map(|(k, printed)| {
            let v = host_value(&host, device.as_ref(), k)?;
            ((v - printed).abs() > 0.01).then(|| Disagreement {
                metric: k.clone(),
                printed: *printed,
                recomputed: v,
            })
        })
        .collect();
    let procs: Vec<_> = file
        .processes
        .iter()
        .filter(|p| p.region == r.name)
        .collect();
    let pop = (!procs.is_empty()).then(|| {
        let useful: Vec<f64> = procs.iter().map(|p| p.useful).collect();
        let runtime = procs.iter().map(|p| p.elapsed).fold(r.elapsed, f64::max);
        Pop::from_useful(&useful, runtime, None)
    });
    let mut notes = implausible(file, r, &host, device.as_ref());
    if let HostSource::Legacy(_) = r.host {
        notes.push(
            "DLB 3.5 output: MPI metrics from normalised useful times; no OpenMP or device branch"
                .into(),
        );
    }
    Run {
        source: file.source.display().to_string(),
        region: Some(r.name.clone()),
        kind: "talp",
        ranks: r.ranks,
        elapsed_s: r.elapsed,
        useful_s: r.useful,
        host: Some(host),
        device,
        pop,
        counters: Counters::new(r.instructions, r.cycles, r.useful),
        windows: None,
        talp_disagreements,
        notes,
    }
}

impl Run {
    /// Flags POP efficiencies outside [0, 1] (a trace with duplicated or overlapping state
    /// records, a report whose times disagree): named in the run's notes, never silent.
    pub fn flag_implausible_pop(&mut self) {
        let Some(p) = &self.pop else { return };
        let values = [
            ("POP parallel efficiency", Some(p.parallel_efficiency)),
            ("POP load balance", Some(p.load_balance)),
            ("POP communication efficiency", Some(p.communication)),
            ("POP serialisation efficiency", p.serialisation),
            ("POP transfer efficiency", p.transfer),
        ];
        for (name, v) in values {
            if let Some(v) = v.filter(|v| !(-1e-9..=1.0 + 1e-9).contains(v)) {
                self.notes.push(format!(
                    "implausible: {name} = {v:.2}, outside [0, 1]: the input's times overlap or \
                     disagree (duplicated state records in a trace, for example)"
                ));
            }
        }
    }

    /// Flags an IPC or a clock from the counters that no real core gives (an IPC above 8, a
    /// clock above 7 GHz over the useful time): named in the run's notes with the likely cause.
    pub fn flag_implausible_counters(&mut self) {
        let Some(c) = &self.counters else { return };
        let clock = super::counter_sanity::CountedClock {
            ghz: c.frequency_ghz,
            how: "cycles / useful time",
        };
        let found = super::counter_sanity::notes(
            Some(c.ipc),
            Some(clock),
            None,
            "count again with fewer counters at once, so that none is multiplexed",
        );
        self.notes.extend(found);
    }
}

/// Values no real run can have, each named: an efficiency outside [0, 1] (printed by TALP or
/// recomputed from its times) and a region that lasted longer than the whole run.
fn implausible(
    file: &TalpFile,
    r: &TalpRegion,
    host: &HostTree,
    device: Option<&DeviceTree>,
) -> Vec<String> {
    let mut notes = Vec::new();
    let outside = |v: f64| !(-1e-9..=1.0 + 1e-9).contains(&v);
    for name in super::talp::PRINTED {
        if let Some(v) = host_value(host, device, name).filter(|v| outside(*v)) {
            notes.push(format!(
                "implausible: {name} = {v:.2} recomputed from the region's times (an efficiency \
                 lies in [0, 1]): the file's times are inconsistent"
            ));
        }
    }
    for (name, v) in r.printed.iter().filter(|(_, v)| outside(*v)) {
        notes.push(format!(
            "implausible: TALP printed {name} = {v:.2}, outside [0, 1]"
        ));
    }
    let run = file
        .regions
        .iter()
        .find(|g| g.name == "Global")
        .map_or(0.0, |g| g.elapsed);
    if r.name != "Global" && run > 0.0 && r.elapsed > run * 1.001 {
        notes.push(format!(
            "implausible: region {} lasted {:.3} s, longer than the whole run ({:.3} s, region \
             Global)",
            r.name, r.elapsed, run
        ));
    }
    notes
}

/// One run per region of a TALP file (a process-only CSV gives one run per region it names).
pub fn from_talp(file: &TalpFile) -> Vec<Run> {
    if file.regions.is_empty() {
        // Each region once, in the order of its first row: a table's rows need not be grouped
        // by region (rows of regions taking turns gave each region once per row group).
        let mut names: Vec<&str> = Vec::new();
        for p in &file.processes {
            if !names.contains(&p.region.as_str()) {
                names.push(&p.region);
            }
        }
        return names
            .into_iter()
            .map(|name| {
                let procs: Vec<_> = file.processes.iter().filter(|p| p.region == name).collect();
                let useful: Vec<f64> = procs.iter().map(|p| p.useful).collect();
                let runtime = procs.iter().map(|p| p.elapsed).fold(0.0, f64::max);
                from_ranks(
                    &file.source.display().to_string(),
                    Some(name),
                    "talp",
                    &useful,
                    runtime,
                    vec!["per-process table only: POP metrics from useful time per rank".into()],
                )
            })
            .collect();
    }
    file.regions
        .iter()
        .map(|r| talp_region_run(file, r))
        .collect()
}

/// The run of an mpiP report: POP load balance and communication from useful = AppTime - MPITime.
pub fn from_mpip(r: &MpipReport) -> Run {
    // MPITime may pass AppTime by the rounding of their printed digits (the reader refuses more).
    let useful: Vec<f64> = r.ranks.iter().map(|t| (t.app - t.mpi).max(0.0)).collect();
    let runtime = r.ranks.iter().map(|t| t.app).fold(0.0, f64::max);
    let per_rank = r.per_rank();
    let notes = per_rank
        .iter()
        .map(|(rank, (n, b))| {
            format!(
                "rank {rank}: {n} messages, {b} bytes sent ({} bytes per message)",
                if *n > 0.0 { (b / n).round() } else { 0.0 }
            )
        })
        .collect();
    from_ranks(
        &r.source.display().to_string(),
        None,
        "mpip",
        &useful,
        runtime,
        notes,
    )
}

/// A run known only by each rank's useful time and the runtime: POP load balance and
/// communication, nothing else.
fn from_ranks(
    source: &str,
    region: Option<&str>,
    kind: &'static str,
    useful: &[f64],
    runtime: f64,
    notes: Vec<String>,
) -> Run {
    Run {
        source: source.to_string(),
        region: region.map(String::from),
        kind,
        ranks: useful.len() as u32,
        elapsed_s: runtime,
        useful_s: useful.iter().sum(),
        host: None,
        device: None,
        pop: Some(Pop::from_useful(useful, runtime, None)),
        counters: None,
        windows: None,
        talp_disagreements: Vec::new(),
        notes,
    }
}
