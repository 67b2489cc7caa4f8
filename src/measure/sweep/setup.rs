//! Everything before the first run: checks, launchers, backends, the points, the runs still to
//! make.

use super::file::*;
use super::frequency::*;
use super::host::*;
use super::options::*;
use crate::measure::Backend;
use crate::measure::counters::PerfCounters;
use crate::measure::cpu;
use crate::measure::cpufreq::Control;
use crate::measure::energy::RaplEnergy;
use crate::measure::gpu_clock_set;
use crate::measure::mpi::MpiProfiler;
use crate::measure::nvml::NvmlGpus;
use crate::measure::placement::{self, Placement};
use crate::measure::record::{self, Missing, Planned, SweepRecord};
use crate::measure::slurm::SlurmEnergy;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

pub(super) fn backends(o: &Options) -> Vec<Box<dyn Backend>> {
    let mut v: Vec<Box<dyn Backend>> = vec![
        Box::new(PerfCounters::new(o.stall_override)),
        Box::new(RaplEnergy::new(&o.roots.powercap, &o.roots.event_source)),
        Box::new(NvmlGpus::with_interval(o.gpu_sample)),
        Box::new(SlurmEnergy::default()),
    ];
    if let Some(p) = o.mpi_profiler {
        v.push(Box::new(MpiProfiler::new(p)));
    }
    v
}

/// Checks, before anything runs, that the launcher (mpirun, srun, --launcher) and the
/// program can be found, naming what is missing.
pub(super) fn check_programs(o: &Options, launchers: &[&[String]]) -> anyhow::Result<()> {
    if let Some(l) = launchers
        .iter()
        .filter_map(|w| w.first())
        .find(|l| resolve_program(l).is_none())
    {
        return Err(crate::error::InputError::Mismatch(format!(
            "`{l}` (the launcher of --ranks {}) was not found on PATH: install an MPI \
             (Debian: openmpi-bin), run inside a Slurm job for srun, or give --launcher",
            o.ranks
        ))
        .into());
    }
    let Some(program) = o.command.first() else {
        return Ok(());
    };
    if resolve_program(program).is_none() {
        return Err(crate::error::InputError::Mismatch(format!(
            "the command `{program}` was not found{}: nothing was run",
            if program.contains('/') {
                " or is not an executable file"
            } else {
                " on PATH"
            }
        ))
        .into());
    }
    Ok(())
}

/// The largest node count asked for.
pub(super) fn max_nodes(o: &Options) -> u32 {
    o.nodes.iter().copied().max().unwrap_or(1)
}

/// The launchers of a sweep: of the runs on one node, and of those on more.
pub(super) struct Launchers {
    pub(super) place: Placement,
    /// Runs on one node (the baseline, measured where jouleplan runs).
    pub(super) local: Vec<String>,
    /// Runs on more nodes (empty when the sweep has none).
    pub(super) nodes: Vec<String>,
}

/// Where the runs go and the launchers' words, checked: enough nodes, a way to spread. With
/// `steps` (the GPU clock set by Slurm) the runs on one node are Slurm steps too, on the node
/// jouleplan runs on.
pub(super) fn launchers(o: &Options, steps: bool) -> anyhow::Result<Launchers> {
    let place = placement::here(o.hostfile.as_deref())?;
    let (local, nodes) = match &o.launcher {
        Some(w) => (w.clone(), w.clone()),
        None if steps => (
            placement::step_here_words(&place)?,
            placement::default_words(&place),
        ),
        None => (
            placement::local_words(o.ranks),
            placement::default_words(&place),
        ),
    };
    // A launcher of the user's is both lists: one check covers it.
    placement::check(&place, &nodes, max_nodes(o), o.launcher.is_some())?;
    let nodes = if max_nodes(o) > 1 { nodes } else { Vec::new() };
    Ok(Launchers {
        place,
        local,
        nodes,
    })
}

/// The backends that work here, each with what it measures.
pub(super) type Working = Vec<(Box<dyn Backend>, String)>;

/// What the sweep set up before its first run.
pub(super) struct Setup {
    pub(super) rec: SweepRecord,
    pub(super) working: Working,
    pub(super) unsupported: Vec<Missing>,
    pub(super) control: Control,
    pub(super) words: Vec<String>,
    /// The launcher of the runs on more than one node.
    pub(super) node_words: Vec<String>,
    pub(super) cpus: Vec<usize>,
    pub(super) planned: Vec<Planned>,
    /// The hostfile of each node count, when the sweep places runs by a hostfile.
    pub(super) hostfiles: BTreeMap<u32, PathBuf>,
    /// The hosts of that hostfile.
    pub(super) hosts: Vec<String>,
    /// The GPUs a run with `g` GPUs is given: the first `g` of these.
    pub(super) gpu_ids: Vec<u32>,
    /// How the GPU clock is set (NVML's guard restores it on drop).
    pub(super) clock: super::clock::ClockControl,
}

/// Checks the options against this machine and the file to resume; returns the GPUs the runs
/// are given (see [`crate::measure::nvml::sweep_gpus`]).
pub(super) fn check(
    o: &Options,
    existing: Option<&SweepRecord>,
    (cpus, this_cpu): (&[usize], &str),
    launchers: &[&[String]],
) -> anyhow::Result<Vec<u32>> {
    if let Some(rec) = existing {
        // Before the GPUs are looked for: the file alone decides it.
        check_resumed(o, rec, this_cpu)?;
    }
    check_programs(o, launchers)?;
    let max_cores = o.cores.iter().copied().max().unwrap_or(1) as usize;
    if max_cores > cpus.len() {
        return Err(crate::error::InputError::Mismatch(format!(
            "--cores: this machine lets jouleplan use {} physical cores, {max_cores} were asked for",
            cpus.len()
        ))
        .into());
    }
    let mut gpu_ids = Vec::new();
    if let Some(&g) = o.gpus.iter().max().filter(|&&g| g > 0) {
        let seen = crate::measure::nvml::visible_gpus();
        if let Ok(n) = seen {
            let user = crate::measure::nvml::user_visible_devices();
            gpu_ids = crate::measure::nvml::sweep_gpus(user.as_deref(), n, g).map_err(|why| {
                crate::error::InputError::Argument {
                    flag: "--gpus".into(),
                    expected: why,
                    got: g.to_string(),
                }
            })?;
        }
        if seen.as_ref().map_or(true, |&n| n < g) {
            return Err(crate::error::InputError::Argument {
                flag: "--gpus".into(),
                expected: format!(
                    "GPU counts this node has: {}",
                    match &seen {
                        Ok(n) => format!("0 to {n} (NVML sees {n})"),
                        Err(why) => format!("0 only ({why})"),
                    }
                ),
                got: g.to_string(),
            }
            .into());
        }
    }
    if let Some(c) = o.cores.iter().find(|&&c| c % o.ranks != 0) {
        return Err(crate::error::InputError::Mismatch(format!(
            "--cores {c} is not a multiple of --ranks {}: each rank gets cores/ranks threads",
            o.ranks
        ))
        .into());
    }
    Ok(gpu_ids)
}

/// Refuses to resume the sweep of the record `rec` with other options: another command or
/// `--ranks`, GPU clocks left to the GPU where the record set them, or a node of another CPU
/// (`this_cpu`). A campaign resumed after its end checks its record with it too, as each of
/// its steps' sweeps does.
pub fn check_resumed(o: &Options, rec: &SweepRecord, this_cpu: &str) -> anyhow::Result<()> {
    if rec.command != o.command || rec.ranks != o.ranks {
        return Err(crate::error::InputError::Mismatch(format!(
            "{}: --resume needs the same command and --ranks as the file ({:?}, {} ranks)",
            o.output.display(),
            rec.command.join(" "),
            rec.ranks
        ))
        .into());
    }
    check_resumed_clocks(o, rec)?;
    check_resumed_cpu(o, rec, this_cpu)
}

/// Discovers the backends, logging what each can and cannot measure.
pub(super) fn discover_backends(o: &Options, log: &mut dyn FnMut(&str)) -> (Working, Vec<Missing>) {
    let found = crate::measure::discover(backends(o));
    let unsupported: Vec<Missing> = found
        .unsupported
        .into_iter()
        .map(|(b, u)| Missing {
            backend: b.to_string(),
            reason: u,
        })
        .collect();
    for (b, what) in &found.working {
        log(&format!("measuring with {}: {what}", b.name()));
    }
    for m in &unsupported {
        log(&format!("[{}] {}", m.backend, m.reason));
    }
    (found.working, unsupported)
}

/// Everything before the first run: checks, backends, frequency control, the record.
pub(super) fn setup(o: &Options, log: &mut dyn FnMut(&str)) -> anyhow::Result<Setup> {
    let method = super::clock::method(o)?;
    let existing = load_existing(o, log)?;
    let cpu_id = cpu::this_cpu();
    let cpus = core_cpus(&o.roots.cpu);
    let Launchers {
        place,
        local: words,
        nodes: node_words,
    } = launchers(o, method == Some(gpu_clock_set::Method::Slurm))?;
    let this_cpu = cpu_id.to_string();
    let gpu_ids = check(
        o,
        existing.as_ref(),
        (&cpus, &this_cpu),
        &[&words, &node_words],
    )?;
    let clock = super::clock::take(o, method, (&gpu_ids, [&words, &node_words]), log)?;
    let (working, mut unsupported) = discover_backends(o, log);
    if max_nodes(o) > 1 {
        let m = one_node_only(&working);
        log(&format!("[{}] {}", m.backend, m.reason));
        unsupported.push(m);
    }
    let mut backend_notes: BTreeMap<String, String> = working
        .iter()
        .map(|(b, w)| (b.name().to_string(), w.clone()))
        .collect();
    for (b, _) in &working {
        for (k, v) in b.describe() {
            backend_notes.insert(format!("{}.{k}", b.name()), v);
        }
    }
    let (control, freqs, freq_note) = frequency_control(o, &words, &cpu_id.mhz, log)?;
    let mut rec = existing.unwrap_or_else(|| new_record(o, &words, host_info(&cpu_id, cpus.len())));
    rec.id
        .get_or_insert_with(|| super::journal::new_sweep_id(&o.output));
    if let Some(note) = clock.note(o) {
        backend_notes.insert("gpu-clock".into(), note);
    }
    rec.backends = backend_notes;
    rec.unsupported = unsupported.clone();
    rec.frequency = freq_note;
    if !node_words.is_empty() {
        rec.launcher_nodes = node_words.clone();
    }
    rec.repeat = rec.repeat.max(o.repeat);
    let planned = points(o, &freqs);
    for p in &planned {
        if !rec.planned.iter().any(|q| q.key() == p.key()) {
            rec.planned.push(*p);
        }
    }
    let hosts = match &place {
        Placement::Hosts { hosts, .. } => hosts.clone(),
        _ => Vec::new(),
    };
    if max_nodes(o) > 1 {
        // Written once, before any run refers to it (the runs on n nodes: its first n hosts).
        rec.intern_hosts(&hosts);
    }
    Ok(Setup {
        rec,
        working,
        unsupported,
        control,
        words,
        node_words,
        cpus,
        planned,
        gpu_ids,
        hostfiles: BTreeMap::new(),
        hosts,
        clock,
    })
}

/// The record of a new sweep, with no run yet.
fn new_record(o: &Options, words: &[String], host: BTreeMap<String, String>) -> SweepRecord {
    SweepRecord {
        id: None,
        command: o.command.clone(),
        ranks: o.ranks,
        launcher: words.to_vec(),
        launcher_nodes: Vec::new(),
        repeat: o.repeat,
        host,
        backends: BTreeMap::new(),
        unsupported: Vec::new(),
        frequency: String::new(),
        planned: Vec::new(),
        runs: Vec::new(),
        complete: false,
        talp: Vec::new(),
        host_lists: Vec::new(),
    }
}

/// Every point of the sweep: node counts, then cores, frequencies and GPUs, a point with GPUs
/// once per GPU clock of `--gpu-clocks`; ordered so that each clock is set once
/// ([`gpu_clock_set::order_by_clock`]).
pub(super) fn points(o: &Options, freqs: &[f64]) -> Vec<Planned> {
    let mut planned = Vec::new();
    for &nodes in &o.nodes {
        for &cores in &o.cores {
            for &freq_hz in freqs {
                for &gpus in &o.gpus {
                    let clocks: Vec<Option<u32>> = match gpus {
                        0 => vec![None],
                        _ if o.gpu_clocks.is_empty() => vec![None],
                        _ => o.gpu_clocks.iter().map(|&m| Some(m)).collect(),
                    };
                    planned.extend(clocks.into_iter().map(|gpu_clock_mhz| Planned {
                        nodes,
                        cores,
                        freq_hz,
                        gpus,
                        gpu_clock_mhz,
                    }));
                }
            }
        }
    }
    gpu_clock_set::order_by_clock(&mut planned, |p| p.gpu_clock_mhz);
    planned
}

/// What the node-local backends cannot give on runs over several nodes.
pub(super) fn one_node_only(working: &Working) -> Missing {
    let every: Vec<&str> = working
        .iter()
        .filter(|(b, _)| b.every_node())
        .map(|(b, _)| b.name())
        .collect();
    Missing {
        backend: "nodes".into(),
        reason: crate::measure::Unsupported::new(
            "counters, RAPL energy and GPU activity of runs on more than one node",
            format!(
                "perf, RAPL and NVML see only the node jouleplan runs on; runs on more nodes \
                 record their wall time{}",
                if every.is_empty() {
                    String::new()
                } else {
                    format!(" and what {} measure over every node", every.join(", "))
                }
            ),
            "node energy of multi-node runs comes from Slurm (a cluster with \
             AcctGatherEnergyType, runs as srun steps); the one-node runs give the baseline",
        ),
    }
}

/// Writes the hostfile of the runs on `nodes` nodes (their first `nodes` hosts) beside the
/// profile when the sweep places runs by a hostfile, as the first of those runs starts, and
/// removes the previous point's: one hostfile at a time, however many node counts.
pub(super) fn point_hostfile(o: &Options, s: &mut Setup, nodes: u32) -> anyhow::Result<()> {
    if s.hosts.is_empty() || s.hostfiles.contains_key(&nodes) {
        return Ok(());
    }
    remove_hostfiles(s);
    let dir = crate::atomic_write::runs_dir(&o.output);
    crate::atomic_write::create_dir_safely(&dir)
        .map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
    // Absolute: the launcher may start the ranks elsewhere.
    let dir = dir.canonicalize().unwrap_or(dir);
    let sub = dir.join(format!("{nodes}-nodes"));
    crate::atomic_write::create_dir_safely(&sub)
        .map_err(|e| anyhow::anyhow!("{}: {e}", sub.display()))?;
    let f = placement::write_point_hostfile(&sub, &s.hosts, nodes, o.ranks)
        .map_err(|e| anyhow::anyhow!("{}: {e}", sub.display()))?;
    s.hostfiles.insert(nodes, f);
    Ok(())
}

/// Removes the hostfiles written so far, and their folders.
pub(super) fn remove_hostfiles(s: &mut Setup) {
    for f in std::mem::take(&mut s.hostfiles).values() {
        let _ = std::fs::remove_file(f);
        if let Some(d) = f.parent() {
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// The runs still to make (resume skips those the file has).
pub(super) fn todo_list(o: &Options, s: &Setup) -> Vec<Todo> {
    missing(&s.planned, &s.rec.runs, o.repeat)
}

/// The runs of `planned` (each `repeat` times) that `runs` does not hold: a point is its node
/// count, cores, frequency, GPUs and GPU clock ([`Planned::key`]), so a run at another clock
/// is another point's.
pub(super) fn missing(planned: &[Planned], runs: &[record::RunRecord], repeat: u32) -> Vec<Todo> {
    let done: BTreeSet<(record::PlannedKey, u32)> = runs
        .iter()
        .filter(|r| r.ok)
        .map(|r| (r.planned().key(), r.repeat))
        .collect();
    planned
        .iter()
        .flat_map(|&p| (1..=repeat).map(move |k| (p, k)))
        .filter(|&(p, k)| !done.contains(&(p.key(), k)))
        .collect()
}

/// Refuses to resume, on a node of another CPU, a sweep whose runs were measured on one
/// CPU (a job resubmitted onto another partition): the profile would hold the runs of two
/// machines under the first one's name. A record that names no CPU is not compared.
fn check_resumed_cpu(o: &Options, rec: &SweepRecord, this_cpu: &str) -> anyhow::Result<()> {
    let Some(recorded) = rec.host.get("cpu").filter(|c| !c.is_empty()) else {
        return Ok(());
    };
    if recorded == this_cpu {
        return Ok(());
    }
    let on = rec
        .host
        .get("hostname")
        .map_or(String::new(), |h| format!(" on {h}"));
    Err(crate::error::InputError::Mismatch(format!(
        "{}: its runs were measured{on} with a {recorded} CPU, and this node's is a {this_cpu}: \
         --resume would put runs of two machines in one profile; resume it on a node of that \
         CPU, or measure here into another --output",
        o.output.display()
    ))
    .into())
}

/// Refuses to resume a sweep that set GPU clocks without `--gpu-clocks` (its runs with GPUs
/// would go at the clock the GPU chooses, beside runs at set clocks).
pub(super) fn check_resumed_clocks(o: &Options, rec: &SweepRecord) -> anyhow::Result<()> {
    let mut set: Vec<u32> = rec.planned.iter().filter_map(|p| p.gpu_clock_mhz).collect();
    set.sort_unstable();
    set.dedup();
    if set.is_empty() || !o.gpu_clocks.is_empty() || o.gpus.iter().all(|&g| g == 0) {
        return Ok(());
    }
    let shown: Vec<String> = set.iter().map(u32::to_string).collect();
    Err(crate::error::InputError::Mismatch(format!(
        "{}: its sweep set the GPU clock ({} MHz): --resume it with --gpu-clocks {}, or choose another --output for runs at the clock the GPU chooses",
        o.output.display(),
        shown.join(", "),
        shown.join(",")
    ))
    .into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(gpu_clock_mhz: Option<u32>) -> Planned {
        Planned {
            nodes: 1,
            cores: 4,
            freq_hz: 2.0e9,
            gpus: 1,
            gpu_clock_mhz,
        }
    }

    #[test]
    fn resume_takes_a_run_at_another_clock_for_another_point() {
        let file = r#"{"nodes":1,"cores":4,"freq_hz":2e9,"gpus":1,"repeat":1,"ok":true,
            "wall_s":1.5,"readings":{},"finished_unix":1,"gpu_clock_mhz":1710}"#;
        let run: record::RunRecord = serde_json::from_str(file).unwrap();
        let planned = [point(Some(1710)), point(Some(870)), point(None)];
        let left = missing(&planned, &[run], 1);
        let clocks: Vec<Option<u32>> = left.iter().map(|(p, _)| p.gpu_clock_mhz).collect();
        assert_eq!(clocks, [Some(870), None]);
    }
}
