//! The sweep: run the program at every `(cores, frequency, GPUs)` point, `repeat` times, with
//! every working backend, and write each run to the profile as it completes.

use super::counters::PerfCounters;
use super::cpu::{self, StallEvents};
use super::cpufreq::{self, Control, FreqGuard};
use super::energy::RaplEnergy;
use super::launch::{self, Spec};
use super::mpi::{MpiProfiler, Profiler};
use super::nvml::NvmlGpus;
use super::perfstat;
use super::placement::{self, Placement};
use super::record::{self, Header, Missing, Planned, RankLayout, RunRecord, SweepRecord};
use super::slurm::SlurmEnergy;
use super::{Backend, Readings, RunContext};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn read_trim(p: &str) -> String {
    std::fs::read_to_string(p)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// One logical CPU per physical core, from the CPUs this process may use.
pub fn core_cpus(cpu_root: &Path) -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data filled by sched_getaffinity.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let ok =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) }
            == 0;
    let allowed: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| ok && unsafe { libc::CPU_ISSET(c, &set) })
        .collect();
    let mut seen = BTreeSet::new();
    allowed
        .into_iter()
        .filter(|&c| {
            let t = cpu_root.join(format!("cpu{c}/topology"));
            let pkg = read_trim(&t.join("physical_package_id").to_string_lossy());
            let core = read_trim(&t.join("core_id").to_string_lossy());
            if pkg.is_empty() && core.is_empty() {
                return true;
            }
            seen.insert((pkg, core))
        })
        .collect()
}

fn host_info(cpu: &cpu::CpuId, cores: usize) -> BTreeMap<String, String> {
    let mut h = BTreeMap::new();
    h.insert("hostname".into(), read_trim("/proc/sys/kernel/hostname"));
    h.insert("kernel".into(), read_trim("/proc/sys/kernel/osrelease"));
    h.insert("cpu".into(), cpu.to_string());
    h.insert("physical cores available".into(), cores.to_string());
    h
}

fn backends(o: &Options) -> Vec<Box<dyn Backend>> {
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

/// Finds `name` as the shell would: a path when it holds a `/`, else the first executable
/// file of that name on `PATH`.
pub fn resolve_program(name: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if name.contains('/') {
        let p = Path::new(name);
        return executable(p).then(|| p.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| executable(p))
    })
}

/// Checks, before anything runs, that the launcher (mpirun, srun, --launcher) and the
/// program can be found, naming what is missing.
fn check_programs(o: &Options, launcher: &[String]) -> anyhow::Result<()> {
    if let Some(l) = launcher.first()
        && resolve_program(l).is_none()
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
fn max_nodes(o: &Options) -> u32 {
    o.nodes.iter().copied().max().unwrap_or(1)
}

/// The launchers of a sweep: of the runs on one node, and of those on more.
struct Launchers {
    place: Placement,
    /// Runs on one node (the baseline, measured where jouleplan runs).
    local: Vec<String>,
    /// Runs on more nodes (empty when the sweep has none).
    nodes: Vec<String>,
}

/// Where the runs go and the launchers' words, checked: enough nodes, a way to spread.
fn launchers(o: &Options) -> anyhow::Result<Launchers> {
    let place = placement::here(o.hostfile.as_deref())?;
    let (local, nodes) = match &o.launcher {
        Some(w) => (w.clone(), w.clone()),
        None => (
            placement::local_words(o.ranks),
            placement::default_words(&place),
        ),
    };
    placement::check(&place, &nodes, max_nodes(o), o.launcher.is_some())?;
    if o.launcher.is_some() {
        placement::check(&place, &local, 1, true)?;
    }
    let nodes = if max_nodes(o) > 1 { nodes } else { Vec::new() };
    Ok(Launchers {
        place,
        local,
        nodes,
    })
}

/// Loads the file to resume, or checks that a fresh sweep overwrites nothing.
fn load_existing(o: &Options) -> anyhow::Result<Option<SweepRecord>> {
    if !o.output.exists() {
        return Ok(None);
    }
    if !o.resume {
        return Err(crate::error::InputError::Mismatch(format!(
            "{} exists: add --resume to continue it, or choose another --output",
            o.output.display()
        ))
        .into());
    }
    let text = crate::input::read_file(&o.output)?;
    let bad =
        |e: String| crate::error::InputError::Mismatch(format!("{}: {e}", o.output.display()));
    let doc: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    let rec = record::read_sweep(&doc).map_err(bad)?;
    Ok(Some(rec))
}

fn save(o: &Options, rec: &SweepRecord) -> anyhow::Result<()> {
    let doc = record::profile_json(&o.header, rec);
    let text = serde_json::to_string_pretty(&doc)?;
    crate::atomic_write::write_atomic(&o.output, text.as_bytes(), false)
        .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", o.output.display()))
}

fn install_interrupt_handler() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            INTERRUPTED.store(true, Ordering::SeqCst);
            let pg = launch::CURRENT_PGID.load(Ordering::SeqCst);
            if pg > 0 {
                // SAFETY: signals the measured program's own process group.
                unsafe { libc::kill(-pg, libc::SIGTERM) };
            }
        });
    });
}

/// A point to run and its repeat index.
type Todo = (Planned, u32);

/// The backends that work here, each with what it measures.
type Working = Vec<(Box<dyn Backend>, String)>;

/// What the sweep set up before its first run.
struct Setup {
    rec: SweepRecord,
    working: Working,
    unsupported: Vec<Missing>,
    control: Control,
    words: Vec<String>,
    /// The launcher of the runs on more than one node.
    node_words: Vec<String>,
    cpus: Vec<usize>,
    planned: Vec<Planned>,
    /// The hostfile of each node count, when the sweep places runs by a hostfile.
    hostfiles: BTreeMap<u32, PathBuf>,
    /// The hosts of that hostfile.
    hosts: Vec<String>,
    /// The GPUs a run with `g` GPUs is given: the first `g` of these.
    gpu_ids: Vec<u32>,
}

/// Checks the options against this machine and the file to resume; returns the GPUs the runs
/// are given (see [`super::nvml::sweep_gpus`]).
fn check(
    o: &Options,
    existing: Option<&SweepRecord>,
    cpus: &[usize],
    words: &[String],
) -> anyhow::Result<Vec<u32>> {
    if let Some(rec) = existing
        && (rec.command != o.command || rec.ranks != o.ranks)
    {
        return Err(crate::error::InputError::Mismatch(format!(
            "{}: --resume needs the same command and --ranks as the file ({:?}, {} ranks)",
            o.output.display(),
            rec.command.join(" "),
            rec.ranks
        ))
        .into());
    }
    check_programs(o, words)?;
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
        let seen = super::nvml::visible_gpus();
        if let Ok(n) = seen {
            let user = super::nvml::user_visible_devices();
            gpu_ids = super::nvml::sweep_gpus(user.as_deref(), n, g).map_err(|why| {
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

/// Discovers the backends, logging what each can and cannot measure.
fn discover_backends(o: &Options, log: &mut dyn FnMut(&str)) -> (Working, Vec<Missing>) {
    let found = super::discover(backends(o));
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

/// How the frequency is controlled, the frequencies to run at, and the note for the record.
fn frequency_control(
    o: &Options,
    words: &[String],
    cpu_mhz: &[f64],
    log: &mut dyn FnMut(&str),
) -> anyhow::Result<(Control, Vec<f64>, String)> {
    let srun = words.first().is_some_and(|w| w.ends_with("srun"));
    let control = if srun && o.freqs.is_some() {
        Control::Srun
    } else {
        let taken = match (FreqGuard::take(&o.roots.cpu), o.freqs.is_some()) {
            (Ok(g), true) => Ok(Control::Sysfs(g)),
            (Ok(_), false) => Err("no --freqs asked for".to_string()),
            (Err(e), _) => Err(e),
        };
        match taken {
            Ok(c) => c,
            Err(why) => {
                let hz = cpufreq::current_hz(&o.roots.cpu, cpu_mhz).ok_or_else(|| {
                    anyhow::anyhow!(
                        "the core frequency can neither be set ({why}) nor read (no cpufreq, no \
                         `cpu MHz` in /proc/cpuinfo)"
                    )
                })?;
                Control::Fixed { hz, why }
            }
        }
    };
    let (freqs, note) = match (&control, &o.freqs) {
        (Control::Fixed { hz, why }, asked) => {
            if asked.is_some() && !o.at_node_frequency {
                return Err(crate::error::InputError::Argument {
                    flag: "--freqs".into(),
                    expected: format!(
                        "frequencies this node can set, but it cannot set any ({why}): run where \
                         cpufreq or srun --cpu-freq works, drop --freqs, or add \
                         --at-node-frequency to measure every point at the node's {:.3} GHz",
                        hz / 1e9
                    ),
                    got: o
                        .freqs
                        .iter()
                        .flatten()
                        .map(|f| format!("{:.3} GHz", f / 1e9))
                        .collect::<Vec<_>>()
                        .join(", "),
                }
                .into());
            }
            if asked.is_some() {
                log(&format!(
                    "frequency sweep not done (--at-node-frequency): {why}; every run goes at \
                     the machine's {:.3} GHz",
                    hz / 1e9
                ));
            }
            (
                vec![*hz],
                format!(
                    "not set ({why}); runs at the machine's {:.3} GHz (cpufreq or /proc/cpuinfo)",
                    hz / 1e9
                ),
            )
        }
        (Control::Sysfs(g), Some(f)) => {
            if let Some(bad) = f.iter().find(|&&x| {
                !g.available.is_empty() && !g.available.iter().any(|&a| (a - x).abs() < 1e3)
            }) {
                return Err(crate::error::InputError::Mismatch(format!(
                    "--freqs: {:.3} GHz is not one the cpufreq driver offers ({} GHz)",
                    bad / 1e9,
                    g.available
                        .iter()
                        .map(|a| format!("{}", a / 1e9))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
                .into());
            }
            (
                f.clone(),
                format!("set with {}, restored after", g.describe()),
            )
        }
        (Control::Srun, Some(f)) => (f.clone(), "set with srun --cpu-freq".into()),
        (_, None) => unreachable!("a frequency list exists unless the control is Fixed"),
    };
    Ok((control, freqs, note))
}

/// Everything before the first run: checks, backends, frequency control, the record.
fn setup(o: &Options, log: &mut dyn FnMut(&str)) -> anyhow::Result<Setup> {
    let existing = load_existing(o)?;
    let cpu_id = cpu::this_cpu();
    let cpus = core_cpus(&o.roots.cpu);
    let Launchers {
        place,
        local: words,
        nodes: node_words,
    } = launchers(o)?;
    check_programs(o, &node_words)?;
    let gpu_ids = check(o, existing.as_ref(), &cpus, &words)?;
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
    let mut rec = existing.unwrap_or_else(|| SweepRecord {
        command: o.command.clone(),
        ranks: o.ranks,
        launcher: words.clone(),
        launcher_nodes: Vec::new(),
        repeat: o.repeat,
        host: host_info(&cpu_id, cpus.len()),
        backends: BTreeMap::new(),
        unsupported: Vec::new(),
        frequency: String::new(),
        planned: Vec::new(),
        runs: Vec::new(),
        complete: false,
        talp: Vec::new(),
    });
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
    let (hostfiles, hosts) = hostfiles(o, &place)?;
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
        hostfiles,
        hosts,
    })
}

/// Every point of the sweep: node counts, then cores, frequencies and GPUs.
fn points(o: &Options, freqs: &[f64]) -> Vec<Planned> {
    let mut planned = Vec::new();
    for &nodes in &o.nodes {
        for &cores in &o.cores {
            for &freq_hz in freqs {
                for &gpus in &o.gpus {
                    planned.push(Planned {
                        nodes,
                        cores,
                        freq_hz,
                        gpus,
                    });
                }
            }
        }
    }
    planned
}

/// What the node-local backends cannot give on runs over several nodes.
fn one_node_only(working: &Working) -> Missing {
    let every: Vec<&str> = working
        .iter()
        .filter(|(b, _)| b.every_node())
        .map(|(b, _)| b.name())
        .collect();
    Missing {
        backend: "nodes".into(),
        reason: super::Unsupported::new(
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

/// The hostfile of each node count above one (the first `n` hosts), written beside the
/// profile, and the hosts; empty without a hostfile.
fn hostfiles(
    o: &Options,
    place: &Placement,
) -> anyhow::Result<(BTreeMap<u32, PathBuf>, Vec<String>)> {
    let Placement::Hosts { hosts, .. } = place else {
        return Ok((BTreeMap::new(), Vec::new()));
    };
    let dir = o.output.with_extension("runs");
    std::fs::create_dir_all(&dir).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
    // Absolute: the launcher may start the ranks elsewhere.
    let dir = dir.canonicalize().unwrap_or(dir);
    let mut files = BTreeMap::new();
    for &n in &o.nodes {
        let sub = dir.join(format!("{n}-nodes"));
        std::fs::create_dir_all(&sub).map_err(|e| anyhow::anyhow!("{}: {e}", sub.display()))?;
        let f = placement::write_point_hostfile(&sub, hosts, n, o.ranks)
            .map_err(|e| anyhow::anyhow!("{}: {e}", sub.display()))?;
        files.insert(n, f);
    }
    Ok((files, hosts.clone()))
}

/// The runs still to make (resume skips those the file has).
fn todo_list(o: &Options, s: &Setup) -> Vec<Todo> {
    let done: BTreeSet<((u32, record::PointKey), u32)> = s
        .rec
        .runs
        .iter()
        .filter(|r| r.ok)
        .map(|r| (r.planned().key(), r.repeat))
        .collect();
    s.planned
        .iter()
        .flat_map(|&p| (1..=o.repeat).map(move |k| (p, k)))
        .filter(|&(p, k)| !done.contains(&(p.key(), k)))
        .collect()
}

/// The command line and environment of one run.
fn spec_for(o: &Options, s: &Setup, (p, _): Todo) -> Spec {
    let (c, g) = (p.cores, p.gpus);
    let threads = c / o.ranks;
    let khz = (p.freq_hz / 1e3).round() as u64;
    let words = if p.nodes > 1 { &s.node_words } else { &s.words };
    let mut argv = placement::fill(
        words,
        placement::Fill {
            nodes: p.nodes,
            ranks_per_node: o.ranks,
            threads,
            khz,
            hostfile: s.hostfiles.get(&p.nodes).map(PathBuf::as_path),
        },
    );
    // srun sets the frequency on every node of a step (cpufreq here sets only this one).
    let srun_steps = p.nodes > 1 && o.launcher.is_none() && matches!(s.control, Control::Sysfs(_));
    if matches!(s.control, Control::Srun) || (srun_steps && argv[0] == "srun") {
        argv.insert(1, format!("--cpu-freq={khz}"));
    }
    argv.extend(o.command.iter().cloned());
    let mut env = vec![
        ("OMP_NUM_THREADS".to_string(), threads.to_string()),
        ("OMP_PLACES".into(), "cores".into()),
        ("OMP_PROC_BIND".into(), "close".into()),
    ];
    if o.gpus.iter().any(|&g| g > 0) {
        env.push(("CUDA_DEVICE_ORDER".into(), "PCI_BUS_ID".into()));
        // The first g of the GPUs chosen and checked before the sweep.
        let list: Vec<String> = s
            .gpu_ids
            .iter()
            .take(g as usize)
            .map(u32::to_string)
            .collect();
        env.push(("CUDA_VISIBLE_DEVICES".into(), list.join(",")));
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 && argv.first().is_some_and(|a| a.ends_with("mpirun")) {
        env.push(("OMPI_ALLOW_RUN_AS_ROOT".into(), "1".into()));
        env.push(("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM".into(), "1".into()));
    }
    Spec {
        argv,
        env,
        cpus: s.cpus[..c as usize].to_vec(),
        show_output: o.show_output,
    }
}

/// One measured run: the backends attached before `exec`, read after the exit.
fn measure_once(
    o: &Options,
    s: &mut Setup,
    todo: Todo,
    run_dir: &Path,
) -> anyhow::Result<RunRecord> {
    let (p, k) = todo;
    let mut spec = spec_for(o, s, todo);
    // On several nodes, only what covers every node is read (see `one_node_only`).
    let mut backends: Vec<&mut Box<dyn Backend>> = s
        .working
        .iter_mut()
        .map(|(b, _)| b)
        .filter(|b| p.nodes == 1 || b.every_node())
        .collect();
    for b in backends.iter_mut() {
        b.prepare(&mut spec.env, run_dir);
    }
    let mut readings = Readings::default();
    let paused = launch::spawn_paused(&spec)
        .map_err(|e| anyhow::anyhow!("starting {:?}: {e}", spec.argv.join(" ")))?;
    for b in backends.iter_mut() {
        if let Err(e) = b.attach(paused.pid) {
            readings.warnings.push(format!("{}: {e}", b.name()));
        }
    }
    for b in backends.iter_mut() {
        if let Err(e) = b.begin() {
            readings.warnings.push(format!("{}: {e}", b.name()));
        }
    }
    let exit = paused.release_and_wait(o.timeout)?;
    let ctx = RunContext {
        wall_s: exit.wall_s,
        run_dir,
        cores: p.cores,
        ranks: p.nodes * o.ranks,
    };
    for b in backends.iter_mut() {
        if let Err(e) = b.end(&ctx, &mut readings) {
            readings.warnings.push(format!("{}: {e}", b.name()));
        }
    }
    if readings.cpu_time_s.is_none() && p.nodes == 1 {
        readings.cpu_time_s = Some(exit.rusage_cpu_s);
        readings.cpu_time_source = Some("rusage (user + system) of the process tree".into());
    }
    let interrupted = INTERRUPTED.load(Ordering::SeqCst);
    let ok = exit.ok() && !interrupted;
    Ok(RunRecord {
        nodes: p.nodes,
        cores: p.cores,
        freq_hz: p.freq_hz,
        gpus: p.gpus,
        repeat: k,
        ok,
        failure: (!ok).then(|| {
            if interrupted {
                "interrupted (Ctrl-C)".to_string()
            } else {
                exit.failure()
            }
        }),
        wall_s: exit.wall_s,
        readings,
        stderr_tail: if ok { String::new() } else { exit.stderr_tail },
        finished_unix: now_unix(),
        layout: Some(RankLayout {
            ranks_per_node: o.ranks,
            threads_per_rank: p.cores / o.ranks,
        }),
        hosts: if p.nodes > 1 {
            s.hosts.iter().take(p.nodes as usize).cloned().collect()
        } else {
            Vec::new()
        },
    })
}

/// Warm-up runs of a point: the same command, not measured and not recorded (caches, page
/// faults, JIT and runtime start-up settle, as hyperfine's `--warmup`).
fn warm_up(o: &Options, s: &Setup, todo: Todo, log: &mut dyn FnMut(&str)) -> anyhow::Result<()> {
    for w in 1..=o.warmup {
        let spec = spec_for(o, s, todo);
        let exit = launch::spawn_paused(&spec)
            .map_err(|e| anyhow::anyhow!("starting {:?}: {e}", spec.argv.join(" ")))?
            .release_and_wait(o.timeout)?;
        if !o.quiet {
            log(&format!(
                "warm-up {w}/{} at {}: {:.3} s (not recorded)",
                o.warmup,
                todo.0.describe(),
                exit.wall_s
            ));
        }
    }
    Ok(())
}

/// `1m20s`-style time left, from the mean wall time of the runs made so far.
fn eta(done_s: f64, made: usize, left: usize) -> String {
    if left == 0 {
        return "last run".into();
    }
    if made == 0 {
        return "eta unknown".into();
    }
    let secs = done_s / made as f64 * left as f64;
    format!(
        "eta {}",
        crate::units::fmt_duration(crate::units::Seconds(secs))
    )
}

/// The state of a sweep in progress.
struct Progress {
    failed: Vec<String>,
    made: usize,
    done_s: f64,
    last_freq: Option<f64>,
    warmed: BTreeSet<(u32, record::PointKey)>,
    bar: Option<indicatif::ProgressBar>,
}

fn progress_bar(o: &Options, runs: usize) -> Option<indicatif::ProgressBar> {
    o.progress_bar.then(|| {
        let b = indicatif::ProgressBar::new(runs as u64);
        if let Ok(st) = indicatif::ProgressStyle::with_template(
            "{bar:30} {pos}/{len} runs, {elapsed} elapsed, eta {eta} {msg}",
        ) {
            b.set_style(st);
        }
        b
    })
}

/// Makes run `i` of `total` (`t`): frequency, warm-up, the measured run, the saved record.
fn run_one(
    o: &Options,
    s: &mut Setup,
    (i, total): (usize, usize),
    t: Todo,
    p: &mut Progress,
    log: &mut dyn FnMut(&str),
) -> anyhow::Result<()> {
    let (pt, k) = t;
    let f = pt.freq_hz;
    if let Control::Sysfs(guard) = &s.control
        && p.last_freq != Some(f)
    {
        guard
            .set(f)
            .map_err(|e| anyhow::anyhow!("setting {:.3} GHz: {e}", f / 1e9))?;
        p.last_freq = Some(f);
    }
    if p.warmed.insert(pt.key()) {
        warm_up(o, s, t, log)?;
    }
    let khz = (f / 1e3).round() as u64;
    let run_dir = o.output.with_extension("runs").join(format!(
        "{}n-{}c-{khz}khz-{}g-r{k}",
        pt.nodes, pt.cores, pt.gpus
    ));
    std::fs::create_dir_all(&run_dir).map_err(|e| anyhow::anyhow!("{}: {e}", run_dir.display()))?;
    if o.verbose {
        let spec = spec_for(o, s, t);
        let env: Vec<String> = spec.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        log(&format!(
            "run: {} (env {})",
            spec.argv.join(" "),
            env.join(" ")
        ));
    }
    let r = measure_once(o, s, t, &run_dir)?;
    let _ = std::fs::remove_dir(&run_dir); // kept when a profiler wrote into it
    p.made += 1;
    p.done_s += r.wall_s;
    let line = format!(
        "[{}/{total}] {}, run {k}/{}: {:.3} s {}, {}",
        i + 1,
        pt.describe(),
        o.repeat,
        r.wall_s,
        r.failure.as_deref().unwrap_or("ok"),
        eta(p.done_s, p.made, total - i - 1)
    );
    if !r.ok && !INTERRUPTED.load(Ordering::SeqCst) {
        p.failed.push(format!("{line}\n{}", r.stderr_tail));
    }
    let wall = r.wall_s;
    s.rec.runs.push(r);
    save(o, &s.rec)?;
    match &p.bar {
        Some(b) => {
            b.set_message(format!("last: {} {wall:.2} s", pt.describe()));
            b.inc(1);
        }
        None if !o.quiet => log(&line),
        None => {}
    }
    Ok(())
}

/// Removes the sweep's working folder when nothing a profiler wrote is left in it.
fn clean_up(o: &Options, s: &Setup) {
    for f in s.hostfiles.values() {
        let _ = std::fs::remove_file(f);
        if let Some(d) = f.parent() {
            let _ = std::fs::remove_dir(d);
        }
    }
    let _ = std::fs::remove_dir(o.output.with_extension("runs"));
}

/// Runs the sweep. `log` receives one line per event (discovery, each run) when no bar is drawn.
pub fn run(o: &Options, log: &mut dyn FnMut(&str)) -> anyhow::Result<Outcome> {
    let mut s = setup(o, log)?;
    let todo = todo_list(o, &s);
    let skipped = s.planned.len() * o.repeat as usize - todo.len();
    if skipped > 0 {
        log(&format!(
            "resuming: {skipped} runs already in {}",
            o.output.display()
        ));
    }
    save(o, &s.rec)?;
    install_interrupt_handler();
    INTERRUPTED.store(false, Ordering::SeqCst);
    let mut p = Progress {
        failed: Vec::new(),
        made: 0,
        done_s: 0.0,
        last_freq: None,
        warmed: BTreeSet::new(),
        bar: progress_bar(o, todo.len()),
    };
    for (i, &t) in todo.iter().enumerate() {
        if INTERRUPTED.load(Ordering::SeqCst) {
            break;
        }
        run_one(o, &mut s, (i, todo.len()), t, &mut p, log)?;
    }
    if let Some(b) = p.bar.take() {
        b.finish_and_clear();
    }
    clean_up(o, &s);
    let interrupted = INTERRUPTED.load(Ordering::SeqCst);
    let have: BTreeSet<((u32, record::PointKey), u32)> = s
        .rec
        .runs
        .iter()
        .map(|r| (r.planned().key(), r.repeat))
        .collect();
    s.rec.complete = s
        .planned
        .iter()
        .all(|q| (1..=o.repeat).all(|k| have.contains(&(q.key(), k))));
    save(o, &s.rec)?;
    let complete = s.rec.complete && !interrupted;
    let summary = summarise(&s.rec);
    let unsupported = std::mem::take(&mut s.unsupported);
    drop(s); // restores the frequency
    Ok(Outcome {
        runs_made: p.made,
        runs_skipped: skipped,
        failed: p.failed,
        interrupted,
        complete,
        unsupported,
        summary,
    })
}

/// Mean, standard deviation and range of each point's wall time, hyperfine style, with a
/// warning where the spread exceeds 10%.
pub fn summarise(rec: &SweepRecord) -> Vec<String> {
    let mut groups: BTreeMap<(u32, record::PointKey), Vec<f64>> = BTreeMap::new();
    for r in rec.runs.iter().filter(|r| r.ok) {
        groups.entry(r.planned().key()).or_default().push(r.wall_s);
    }
    let mut lines = Vec::new();
    for ((nodes, (c, khz, g)), w) in groups {
        let n = w.len() as f64;
        let mean = w.iter().sum::<f64>() / n;
        let rel = record::rel_spread(&w);
        let (lo, hi) = w
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
        let point = Planned {
            nodes,
            cores: c,
            freq_hz: khz as f64 * 1e3,
            gpus: g,
        };
        lines.push(format!(
            "{}: {mean:.3} s ± {:.3} s (min {lo:.3} … max {hi:.3}, {} runs){}",
            point.describe(),
            rel * mean,
            w.len(),
            if rel > 0.10 {
                format!(
                    "\n  warning: run-to-run spread {:.1}% (> 10%): the model's bound there is as \
                     wide; add --repeat, --warmup, or measure on a quieter node",
                    100.0 * rel
                )
            } else {
                String::new()
            }
        ));
    }
    lines
}

/// Adds one point from a `perf stat -x,` capture made on a cluster node to the profile at
/// `o.output` (created, or extended with `--resume`). `wall_s` is needed when the capture has
/// no `duration_time`.
pub fn import_perf_stat(
    o: &Options,
    capture: &Path,
    wall_s: Option<f64>,
) -> anyhow::Result<RunRecord> {
    let text = crate::input::read_table(capture)?;
    let lines = perfstat::parse(capture, &text)?;
    let imp = perfstat::readings(&lines, o.stall_override);
    let wall = imp.wall_s.or(wall_s).ok_or_else(|| {
        crate::error::InputError::Mismatch(format!(
            "{}: no duration_time line; give the run's wall time with --wall-time",
            capture.display()
        ))
    })?;
    let (&[cores], Some([f])) = (o.cores.as_slice(), o.freqs.as_deref()) else {
        return Err(crate::error::InputError::Mismatch(
            "--perf-stat: name the one point the capture was taken at with --cores C --freqs GHZ"
                .into(),
        )
        .into());
    };
    let mut rec = load_existing(o)?.unwrap_or_else(|| SweepRecord {
        command: o.command.clone(),
        ranks: o.ranks,
        launcher: Vec::new(),
        launcher_nodes: Vec::new(),
        repeat: 1,
        host: BTreeMap::from([(
            "imported".to_string(),
            "perf stat -x, captures from another machine".to_string(),
        )]),
        backends: BTreeMap::new(),
        unsupported: Vec::new(),
        frequency: "as captured".into(),
        planned: Vec::new(),
        runs: Vec::new(),
        complete: true,
        talp: Vec::new(),
    });
    let mut readings = imp.readings;
    if readings.stall_cycles.is_none() {
        rec.unsupported.retain(|m| m.backend != "perf-stat");
        rec.unsupported.push(Missing {
            backend: "perf-stat".into(),
            reason: super::Unsupported::new(
                "stall cycles",
                format!("{} has no known total/memory stall event pair", capture.display()),
                "capture the events `jouleplan profile` lists for that CPU, or name them with --stall-events",
            ),
        });
    }
    if let Some(s) = imp.stall {
        rec.backends.insert(
            "perf-stat.stall events".into(),
            format!("{} ({} / {})", s.table, s.total.name, s.mem.name),
        );
    }
    readings
        .warnings
        .push(format!("imported from {}", capture.display()));
    let repeat = rec
        .runs
        .iter()
        .filter(|r| r.key() == record::key(cores, *f, 0))
        .count() as u32
        + 1;
    let r = RunRecord {
        nodes: 1,
        cores,
        freq_hz: *f,
        gpus: 0,
        repeat,
        ok: true,
        failure: None,
        wall_s: wall,
        readings,
        stderr_tail: String::new(),
        finished_unix: now_unix(),
        layout: None,
        hosts: Vec::new(),
    };
    rec.runs.push(r.clone());
    rec.planned.push(Planned {
        nodes: 1,
        cores,
        freq_hz: *f,
        gpus: 0,
    });
    rec.backends.insert(
        "perf-stat".into(),
        "counters imported from perf stat -x, captures".into(),
    );
    save(o, &rec)?;
    Ok(r)
}
