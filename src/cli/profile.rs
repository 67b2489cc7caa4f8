//! `jouleplan profile`: flags -> validated sweep options -> the measure stage.

use crate::error::InputError;
use crate::measure::cpu;
use crate::measure::mpi::Profiler;
use crate::measure::record::Header;
use crate::measure::sweep::{self, Options, Roots};
use crate::model::workload::Growth;
use crate::values;
use clap::Args;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// `jouleplan profile`.
#[derive(Debug, Args, Default)]
pub struct ProfileArgs {
    /// Core counts to measure (1-4,8) [default: every count from 1 to the machine's cores].
    #[arg(long, value_name = "SPEC")]
    pub cores: Option<String>,
    /// Core frequencies in GHz (2.4,1.8); set through cpufreq or srun [default: the frequency
    /// the machine runs at].
    #[arg(long, value_name = "GHZ,...")]
    pub freqs: Option<String>,
    /// Where --freqs cannot be set (no cpufreq, no srun), measure every point at the node's
    /// own frequency instead of refusing (exit 2).
    #[arg(long)]
    pub at_node_frequency: bool,
    /// GPU counts (0,1,2): the first g GPUs are made visible [default: 0].
    #[arg(long, value_name = "SPEC")]
    pub gpus: Option<String>,
    /// GPU core clocks in MHz to measure each point with GPUs at (870,1305,1710; with
    /// --machine also `all` or ranges such as 900-1400 of its gpu_clocks_mhz): set as NVML
    /// application clocks where this process may (restored on every exit), else each run a
    /// Slurm step with srun --gpu-freq inside an allocation; refused before anything runs
    /// where neither works. --measured-out then records each run's gpu_clock_mhz and GPU
    /// energy for `fit`.
    #[arg(long, value_name = "SPEC")]
    pub gpu_clocks: Option<String>,
    /// Node counts to measure (1,2,4; must include 1, the baseline): runs on more nodes are
    /// srun steps of the Slurm allocation jouleplan runs in, or mpirun over the first hosts of
    /// --hostfile; --cores and --ranks are then per node. `auto`: a campaign that chooses the
    /// counts itself and launches them (with --machine and --measured-out; --replay takes the
    /// runs from a recording instead).
    #[arg(long, value_name = "SPEC", default_value = "1")]
    pub nodes: String,
    /// Hostfile (one host a line, Open MPI or MPICH style) whose first N hosts the runs on N
    /// nodes use, through mpirun.
    #[arg(long, value_name = "FILE")]
    pub hostfile: Option<PathBuf>,
    /// MPI ranks per node, through mpirun (srun inside a Slurm job) or --launcher.
    #[arg(long, value_name = "N", default_value = "1")]
    pub ranks: u32,
    /// Launcher before the command, one shell-quoted string with {ranks} (all ranks),
    /// {ranks_per_node}, {nodes}, {threads}, {khz} and {hostfile} placeholders
    /// ('mpiexec -n {ranks}').
    #[arg(long, value_name = "CMD")]
    pub launcher: Option<String>,
    /// The machine (file or bundled name) against which the runs on several nodes fit the
    /// node law into the profile (MODEL.md 6c); without it they are recorded only.
    #[arg(long, value_name = "FILE")]
    pub machine: Option<String>,
    /// Also write every run as a measured CSV (nodes, cores, freq_hz, gpus, time_s, energy_j,
    /// gpu_energy_j, ranks, energy_scope, and gpu_clock_mhz with --gpu-clocks) for `fit
    /// --measured` and `validate --measured`.
    #[arg(long, value_name = "CSV")]
    pub measured_out: Option<PathBuf>,
    /// The runs on several nodes are weak scaling (each rank keeps its work): the node law
    /// carries weak-scaling growth.
    #[arg(long)]
    pub weak: bool,
    /// Runs per point.
    #[arg(long, value_name = "K", default_value = "1")]
    pub repeat: u32,
    /// Unmeasured, unrecorded runs before each point's measured ones (caches, page faults and
    /// runtime start-up settle).
    #[arg(long, value_name = "N", default_value = "0")]
    pub warmup: u32,
    /// Show the program's output (its stdout; its stderr is echoed and still kept).
    #[arg(long)]
    pub show_output: bool,
    /// Set from the global `--quiet` (`-q`): errors only.
    #[arg(skip)]
    pub quiet: bool,
    /// Also print each run's command line and environment.
    #[arg(long)]
    pub verbose: bool,
    /// NVML utilisation sampling interval for GPU busy time (100ms; 10ms-10s). Its error is
    /// about one interval per busy/idle change a sample straddles.
    #[arg(long, value_name = "DURATION", default_value = "100ms")]
    pub gpu_sample: String,
    /// Iterations the measured run makes (S_s): with --target-iterations, predictions are
    /// scaled by S / S_s, so a short run measured here plans a longer production run.
    #[arg(long, value_name = "S_s", default_value = "1", value_parser = values::positive_number)]
    pub iterations: f64,
    /// Iterations of the run to plan (S): every prediction from the profile is for S
    /// iterations [default: S_s, the run as measured].
    #[arg(long, value_name = "S", value_parser = values::positive_number)]
    pub target_iterations: Option<f64>,
    /// How messages per rank grow with nodes: constant, log2, all_to_all, neighbours:K.
    #[arg(long, value_name = "LAW", default_value = "constant")]
    pub growth: String,
    /// Program name in the profile [default: the command's file name].
    #[arg(long, value_name = "NAME")]
    pub program: Option<String>,
    /// The profile to write.
    #[arg(short, long, value_name = "FILE", default_value = "profile.json")]
    pub output: PathBuf,
    /// Continue the sweep in --output: runs already there are skipped.
    #[arg(long)]
    pub resume: bool,
    /// Stop a run after this long (90s, 15m) and record it as failed.
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Seconds a stopped program (Ctrl-C, SIGTERM, SIGHUP) gets between SIGTERM and SIGKILL;
    /// keep it below the batch system's own grace (Slurm's KillWait, 30 s by default).
    #[arg(
        long,
        value_name = "SECONDS",
        default_value = "10",
        allow_hyphen_values = true
    )]
    pub grace: String,
    /// Total and memory stall events as perf raw codes (r04a3,r14a3) for CPUs jouleplan does
    /// not know.
    #[arg(long, value_name = "TOTAL,MEM")]
    pub stall_events: Option<String>,
    /// MPI profiler preloaded into the runs (mpip or talp) whose output gives eta and nu.
    #[arg(long, value_name = "mpip|talp")]
    pub mpi_profiler: Option<String>,
    /// Import a `perf stat -x,` capture from a cluster node as the point --cores/--freqs
    /// instead of running anything.
    #[arg(long, value_name = "FILE")]
    pub perf_stat: Option<PathBuf>,
    /// Wall time of the imported run when the capture has no duration_time (12.5s).
    #[arg(long, value_name = "DURATION", requires = "perf_stat")]
    pub wall_time: Option<String>,
    #[command(flatten)]
    pub roots: SysRoots,
    /// Attach a TALP output of DLB's GPU plugin to the point with CORES cores of the existing
    /// --output profile (repeat for each point; no command is run): its kernel, transfer and
    /// host-blocked times replace NVML's sampled ones.
    #[arg(long, value_name = "CORES=FILE")]
    pub talp: Vec<String>,
    /// Attach the efficiency tree of a Paraver trace of the baseline (.prv, .prv.gz) to the
    /// point with CORES cores and no GPUs of the existing --output profile: POP's load
    /// balance, communication, serialisation and transfer, carried into every prediction.
    #[arg(long, value_name = "CORES=FILE")]
    pub trace: Vec<String>,
    /// `--nodes auto`: the campaign's own flags.
    #[command(flatten)]
    pub campaign: CampaignArgs,
    /// The program and its arguments.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `profile --nodes auto`'s own flags.
#[derive(Debug, Args, Default, Clone)]
pub struct CampaignArgs {
    /// With --nodes auto: take each run from these recorded runs (a `fit`/`validate` CSV), in
    /// file order, instead of launching the program; a count not recorded is never invented.
    #[arg(long, value_name = "RUNS.csv")]
    pub replay: Option<PathBuf>,
    /// With --nodes auto: measure an unmeasured node count only where it could beat the best
    /// measured one by more than this at its interval's favourable end (0.05 or 5%)
    /// [default: 5%].
    #[arg(long, value_name = "FRACTION")]
    pub tolerance: Option<String>,
    /// With --nodes auto: the node-hours the campaign may spend (its start included).
    #[arg(long = "node-hours", value_name = "NODE-HOURS", value_parser = crate::values::positive_number)]
    pub node_hours: Option<f64>,
    /// With --nodes auto: the largest node count to plan and measure [default: the machine's].
    #[arg(long, value_name = "N")]
    pub max_nodes: Option<u32>,
    /// With --nodes auto: print the campaign's steps as JSON on standard output.
    #[arg(long)]
    pub json: bool,
    /// With --nodes auto: recommend, and decide what to measure, for the least energy within
    /// this time (as `plan --deadline`).
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub deadline: Option<String>,
    /// With --nodes auto: recommend, and decide what to measure, for the least time within
    /// this energy (as `plan --budget`).
    #[arg(long, value_name = "ENERGY", allow_hyphen_values = true)]
    pub budget: Option<String>,
    /// With --nodes auto: recommend, and decide what to measure, for the least energy within
    /// (1 + FRACTION) times the fastest configuration's time (as `plan --slowdown`).
    #[arg(
        long,
        value_name = "FRACTION",
        conflicts_with = "deadline",
        allow_hyphen_values = true
    )]
    pub slowdown: Option<String>,
}

impl CampaignArgs {
    /// The campaign flags given, by name: refused without `--nodes auto`.
    fn given(&self) -> Vec<&'static str> {
        [
            ("--replay", self.replay.is_some()),
            ("--tolerance", self.tolerance.is_some()),
            ("--node-hours", self.node_hours.is_some()),
            ("--max-nodes", self.max_nodes.is_some()),
            ("--json", self.json),
            ("--deadline", self.deadline.is_some()),
            ("--budget", self.budget.is_some()),
            ("--slowdown", self.slowdown.is_some()),
        ]
        .into_iter()
        .filter(|(_, on)| *on)
        .map(|(flag, _)| flag)
        .collect()
    }
}

fn parse_growth(s: &str) -> Result<Growth, InputError> {
    let bad = || values::bad("--growth", "constant, log2, all_to_all or neighbours:K", s);
    Ok(match s {
        "constant" => Growth::Constant,
        "log2" => Growth::Log2,
        "all_to_all" => Growth::AllToAll,
        _ => match s.strip_prefix("neighbours:") {
            Some(k) => Growth::Neighbours(k.parse().ok().filter(|&k| k > 0).ok_or_else(bad)?),
            None => return Err(bad()),
        },
    })
}

/// The node counts of `--nodes`, sorted; 1 must be among them.
fn nodes_spec(spec: &str) -> Result<Vec<u32>, InputError> {
    let mut v = values::parse_int_spec("--nodes", spec)?;
    v.sort_unstable();
    v.dedup();
    if v.first() != Some(&1) {
        return Err(values::bad(
            "--nodes",
            "node counts that include 1 (1,2,4): the runs on one node are the profile's \
             baseline, those on more the node law's",
            spec,
        ));
    }
    Ok(v)
}

/// The points of the sweep: core, frequency, node and GPU counts.
struct Points {
    cores: Vec<u32>,
    freqs: Option<Vec<f64>>,
    nodes: Vec<u32>,
    gpus: Vec<u32>,
}

fn points(a: &ProfileArgs, nodes: &str) -> Result<Points, InputError> {
    let cores = match &a.cores {
        Some(s) => values::parse_int_spec("--cores", s)?,
        None => {
            let n = sweep::core_cpus(&a.roots.cpu_root).len().max(1) as u32;
            (1..=n).collect()
        }
    };
    if cores.contains(&0) {
        return Err(values::bad("--cores", "core counts of at least 1", "0"));
    }
    let freqs = a
        .freqs
        .as_deref()
        .map(|s| values::parse_ghz_values("--freqs", s))
        .transpose()?;
    let gpus = match &a.gpus {
        Some(s) => {
            let mut v = values::parse_int_spec("--gpus", s)?;
            v.sort_unstable();
            v
        }
        None => vec![0],
    };
    Ok(Points {
        cores,
        freqs,
        nodes: nodes_spec(nodes)?,
        gpus,
    })
}

/// The iteration counts `S_s` and `S`, checked positive.
fn iterations(a: &ProfileArgs) -> Result<(f64, f64), InputError> {
    let positive = |flag: &str, v: f64| -> Result<f64, InputError> {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(values::bad(flag, "a positive number", v.to_string()))
        }
    };
    let baseline = positive("--iterations", a.iterations)?;
    let target = positive(
        "--target-iterations",
        a.target_iterations.unwrap_or(baseline),
    )?;
    Ok((baseline, target))
}

/// The launcher words, the time limit, the stall events and the MPI profiler.
type Running = (
    Option<Vec<String>>,
    Option<std::time::Duration>,
    Option<cpu::StallEvents>,
    Option<Profiler>,
);

fn running(a: &ProfileArgs) -> Result<Running, InputError> {
    let launcher = a
        .launcher
        .as_deref()
        .map(|s| {
            shlex::split(s).ok_or_else(|| values::bad("--launcher", "a shell-quoted command", s))
        })
        .transpose()?;
    let timeout = a
        .timeout
        .as_deref()
        .map(|t| values::parse_duration("--timeout", t))
        .transpose()?
        .map(|s| std::time::Duration::from_secs_f64(s.0));
    let stall_override = a
        .stall_events
        .as_deref()
        .map(|s| cpu::parse_stall_override(s).map_err(|e| values::bad("--stall-events", e, s)))
        .transpose()?;
    let mpi_profiler = match a.mpi_profiler.as_deref() {
        None => None,
        Some("mpip") => Some(Profiler::Mpip),
        Some("talp") => Some(Profiler::Talp),
        Some(other) => return Err(values::bad("--mpi-profiler", "mpip or talp", other)),
    };
    Ok((launcher, timeout, stall_override, mpi_profiler))
}

/// The profile's header: program name, description, iterations, growth and where each came
/// from.
fn header(a: &ProfileArgs) -> Result<Header, InputError> {
    let (baseline_iterations, target_iterations) = iterations(a)?;
    let program = a.program.clone().unwrap_or_else(|| {
        a.command
            .first()
            .and_then(|c| std::path::Path::new(c).file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "imported".into())
    });
    let iterations_note = match a.target_iterations {
        Some(_) => "baseline and target iterations from --iterations / --target-iterations",
        None => "target iterations = baseline iterations (no --target-iterations)",
    };
    Ok(Header {
        program,
        description: format!("measured by `jouleplan profile` ({})", a.command.join(" ")),
        baseline_iterations,
        target_iterations,
        growth: parse_growth(&a.growth)?,
        notes: vec![
            ("iterations".to_string(), iterations_note.to_string()),
            (
                "communication.growth".into(),
                format!("--growth {} (not measured)", a.growth),
            ),
        ],
    })
}

/// The NVML sampling interval, 10 ms to 10 s.
fn gpu_sample(a: &ProfileArgs) -> Result<std::time::Duration, InputError> {
    let d = values::parse_duration("--gpu-sample", &a.gpu_sample)?.0;
    if !(0.01..=10.0).contains(&d) {
        return Err(values::bad(
            "--gpu-sample",
            "an interval from 10ms to 10s",
            &a.gpu_sample,
        ));
    }
    Ok(std::time::Duration::from_secs_f64(d))
}

/// `--grace`: seconds, more than 0 and at most a day.
fn grace(a: &ProfileArgs) -> Result<std::time::Duration, InputError> {
    let expected = "seconds between SIGTERM and SIGKILL: a number above 0, at most 86400 (10, 2.5)";
    let s = values::number(
        &a.grace,
        crate::limits::Bound::Within(f64::MIN_POSITIVE, 86_400.0),
    )
    .map_err(|_| values::bad("--grace", expected, &a.grace))?;
    Ok(std::time::Duration::from_secs_f64(s))
}

/// The sweep's validated options from the flags, with `nodes` as the node counts (`--nodes`,
/// or the campaign's baseline).
pub(super) fn options(a: &ProfileArgs, nodes: &str) -> anyhow::Result<Options> {
    let import = a.perf_stat.is_some();
    if a.command.is_empty() && !import {
        return Err(values::bad(
            "COMMAND",
            "the program to measure after `--` (jouleplan profile --cores 1,2 -- ./app)",
            "nothing",
        )
        .into());
    }
    if a.ranks == 0 || a.repeat == 0 {
        let flag = if a.ranks == 0 { "--ranks" } else { "--repeat" };
        return Err(values::bad(flag, "at least 1", "0").into());
    }
    let pts = points(a, nodes)?;
    let flags = super::profile_clocks::ClockFlags {
        spec: a.gpu_clocks.as_deref(),
        nodes: &a.nodes,
        machine: a.machine.as_deref(),
    };
    let (gpu_clocks, gpu_memory_mhz) = super::profile_clocks::gpu_clocks(&flags, &pts.gpus)?;
    let (launcher, timeout, stall_override, mpi_profiler) = running(a)?;
    let command = if import {
        vec![format!("(perf stat capture) {}", a.command.join(" "))]
    } else {
        a.command.clone()
    };
    Ok(Options {
        command,
        cores: pts.cores,
        freqs: pts.freqs,
        gpus: pts.gpus,
        nodes: pts.nodes,
        hostfile: a.hostfile.clone(),
        ranks: a.ranks,
        launcher,
        repeat: a.repeat,
        timeout,
        output: a.output.clone(),
        resume: a.resume,
        header: header(a)?,
        stall_override,
        mpi_profiler,
        roots: Roots {
            powercap: a.roots.powercap_root.clone(),
            event_source: a.roots.event_source_root.clone(),
            cpu: a.roots.cpu_root.clone(),
        },
        progress_bar: std::io::stderr().is_terminal() && !a.quiet && !a.verbose,
        warmup: a.warmup,
        show_output: a.show_output,
        quiet: a.quiet,
        verbose: a.verbose,
        at_node_frequency: a.at_node_frequency,
        gpu_sample: gpu_sample(a)?,
        grace: grace(a)?,
        gpu_clocks,
        gpu_memory_mhz,
    })
}

/// Refuses a measured CSV onto the profile or the hostfile.
pub(super) fn check_outputs(a: &ProfileArgs) -> anyhow::Result<()> {
    let Some(csv) = &a.measured_out else {
        return Ok(());
    };
    let inputs: Vec<(&str, &std::path::Path)> = a
        .hostfile
        .iter()
        .map(|h| ("--hostfile", h.as_path()))
        .collect();
    super::outputs::check_distinct(
        &inputs,
        &[("--output", a.output.as_path()), ("--measured-out", csv)],
    )?;
    Ok(())
}

/// An existing `--measured-out` is refused without `--resume`, as an existing `--output` is:
/// the sweep rewrites it with its own runs, and the runs it held (another sweep's, or the
/// user's) would be lost. With `--resume` it is rewritten from the sweep's record.
fn measured_out_free(a: &ProfileArgs) -> anyhow::Result<()> {
    match &a.measured_out {
        Some(csv) if !a.resume && csv.exists() => Err(crate::error::InputError::Mismatch(format!(
            "{} exists: a sweep writes every run of its own there, and the rows it holds \
                 would be lost; add --resume to continue the sweep it holds the runs of, or \
                 choose another --measured-out",
            csv.display()
        ))
        .into()),
        _ => Ok(()),
    }
}

/// Exit code when Ctrl-C stopped the sweep (what was measured is saved); SIGTERM gives 143 and
/// SIGHUP 129 (128 + the signal).
pub const EXIT_INTERRUPTED: i32 = 130;
/// Exit code when some runs failed (the others are saved).
pub const EXIT_RUNS_FAILED: i32 = 4;

/// Runs `profile`; returns the exit code.
pub fn run_profile(a: &ProfileArgs, out: &mut dyn Write) -> anyhow::Result<i32> {
    if let Some(flag) = a.campaign.given().first() {
        return Err(values::bad(
            flag,
            "--nodes auto as well (it is a flag of the measurement campaign)",
            format!("--nodes {}", a.nodes),
        )
        .into());
    }
    if !a.talp.is_empty() || !a.trace.is_empty() {
        return attach_trees(a, out);
    }
    if a.perf_stat.is_some() {
        import_flags(a)?;
    }
    let o = options(a, &a.nodes)?;
    if let Some(capture) = &a.perf_stat {
        return import_capture(a, &o, capture, out);
    }
    check_outputs(a)?;
    super::profile_nodes::machine_for_nodes(a.machine.as_deref(), &o.nodes)?;
    let mut outputs = vec![("--output", o.output.as_path())];
    outputs.extend(a.measured_out.as_deref().map(|p| ("--measured-out", p)));
    let _locks = super::outputs::lock(&outputs)?;
    measured_out_free(a)?;
    let quiet = a.quiet;
    let mut log = |l: &str| {
        if !quiet {
            super::say::line(l);
        }
    };
    let res = sweep::run(&o, &mut log)?;
    // --quiet: errors only (what could not be measured was said once, as the sweep began).
    let mut sink = std::io::sink();
    let out: &mut dyn Write = if quiet { &mut sink } else { out };
    summarise(&o, &res, out)?;
    if res.runs_made + res.runs_skipped > 0 {
        after_sweep(a, &o, out)?;
    }
    if res.interrupted {
        let sig = crate::measure::launch::STOP_SIGNAL.load(std::sync::atomic::Ordering::SeqCst);
        super::say::line(&format!(
            "interrupted ({}): every finished run is saved{}; continue with --resume",
            crate::measure::launch::signal_name(sig),
            if a.measured_out.is_some() {
                " and in --measured-out"
            } else {
                ""
            }
        ));
        return Ok(if sig > 0 { 128 + sig } else { EXIT_INTERRUPTED });
    }
    Ok(if res.failed.is_empty() {
        0
    } else {
        EXIT_RUNS_FAILED
    })
}

/// `--talp` and `--trace`: measured trees attached to the points of an existing profile.
fn attach_trees(a: &ProfileArgs, out: &mut dyn Write) -> anyhow::Result<i32> {
    use crate::measure::talp_attach;
    if !a.command.is_empty() || a.perf_stat.is_some() {
        return Err(values::bad(
            "--talp/--trace",
            "no command and no --perf-stat: --talp and --trace attach measured trees to an \
             existing profile",
            a.command.join(" "),
        )
        .into());
    }
    let mut specs = a
        .talp
        .iter()
        .map(|s| talp_attach::parse_spec(s))
        .collect::<Result<Vec<_>, _>>()?;
    for t in &a.trace {
        let spec = talp_attach::parse_spec(t)?;
        if !talp_attach::is_trace(&spec.file) {
            return Err(
                values::bad("--trace", "CORES=FILE.prv or CORES=FILE.prv.gz", t.clone()).into(),
            );
        }
        specs.push(spec);
    }
    for line in talp_attach::attach(&a.output, &specs)? {
        writeln!(out, "{line}")?;
    }
    Ok(0)
}

/// The sweep's flags a `--perf-stat` import cannot honour, refused naming the flag: the
/// capture is one CPU point on one node, so `--gpus 1` was imported as a point without GPUs,
/// `--gpu-clocks` and `--nodes 1,2` were dropped, and `--measured-out` was never written.
fn import_flags(a: &ProfileArgs) -> Result<(), InputError> {
    let gpus = a.gpus.as_deref().filter(|g| g.trim() != "0");
    let nodes = Some(a.nodes.as_str()).filter(|n| n.trim() != "1");
    let given = [
        ("--gpus", gpus),
        ("--gpu-clocks", a.gpu_clocks.as_deref()),
        ("--nodes", nodes),
        (
            "--measured-out",
            a.measured_out.as_deref().and_then(|p| p.to_str()),
        ),
        ("--mpi-profiler", a.mpi_profiler.as_deref()),
    ];
    match given.iter().find_map(|(flag, v)| v.map(|v| (flag, v))) {
        Some((flag, v)) => Err(values::bad(
            flag,
            "no such flag with --perf-stat: the capture is one point of CPU counters on one \
             node (--cores C --freqs GHZ), with no GPU, node count, messages or runs to write; \
             measure those with a sweep (jouleplan profile ... -- ./app)",
            v,
        )),
        None => Ok(()),
    }
}

/// `--perf-stat`: one point imported from a capture made on a cluster node.
fn import_capture(
    a: &ProfileArgs,
    o: &Options,
    capture: &std::path::Path,
    out: &mut dyn Write,
) -> anyhow::Result<i32> {
    let wall = a
        .wall_time
        .as_deref()
        .map(|w| values::parse_duration("--wall-time", w))
        .transpose()?
        .map(|s| s.0);
    let r = sweep::import_perf_stat(o, capture, wall)?;
    for n in crate::measure::counter_notes::of_run(&r) {
        super::say::note(&n);
    }
    writeln!(
        out,
        "imported {} as {} at {:.3} GHz ({:.3} s) into {}",
        capture.display(),
        crate::units::count(r.cores, "core", "cores"),
        r.freq_hz / 1e9,
        r.wall_s,
        o.output.display()
    )?;
    Ok(0)
}

/// The sweep's outcome: runs made, each point's spread; failed runs on standard error.
fn summarise(o: &Options, res: &sweep::Outcome, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "{}: {} runs made, {} already there, {} failed{}",
        o.output.display(),
        res.runs_made,
        res.runs_skipped,
        res.failed.len(),
        if res.runs_made > 0 && res.failed.len() == res.runs_made {
            "; every run failed, so no point was measured"
        } else if !res.failed.is_empty() {
            "; sweep finished with failed points (they are left out of the profile)"
        } else if res.complete {
            "; sweep complete"
        } else {
            "; sweep not complete"
        }
    )?;
    for line in &res.summary {
        writeln!(out, "{line}")?;
    }
    for f in &res.failed {
        super::say::line(&format!("failed: {f}"));
    }
    Ok(())
}

/// After the runs: the measured CSV and the node law (MODEL.md 6c).
fn after_sweep(a: &ProfileArgs, o: &Options, out: &mut dyn Write) -> anyhow::Result<()> {
    let written = super::profile_nodes::read_written(&o.output)?;
    for n in crate::measure::counter_notes::in_profile(&written.doc) {
        super::say::note(n);
    }
    if let Some(csv) = &a.measured_out {
        match super::profile_nodes::write_measured_csv(&written, csv)? {
            Some(rows) => super::say::progress(&format!(
                "wrote {} to {}",
                crate::units::count(rows as u64, "run", "runs"),
                csv.display()
            )),
            None => super::say::note(&format!(
                "no run succeeded: {} is left as it was",
                csv.display()
            )),
        }
    }
    super::profile_nodes::fit_into_profile(&o.output, written, a.machine.as_deref(), a.weak, out)
        .map_err(|e| {
            e.context(format!(
                "every run is saved in {}, but the node law was not fitted (fix the cause and \
                 add --resume: nothing is run again)",
                o.output.display()
            ))
        })
}

/// The sysfs roots the measurement reads (hidden: for tests and containers).
#[derive(Debug, Args, Clone)]
pub struct SysRoots {
    /// Root of the powercap tree.
    #[arg(
        long,
        value_name = "DIR",
        default_value = "/sys/class/powercap",
        hide = true
    )]
    pub powercap_root: PathBuf,
    /// Root of the perf event sources (the RAPL power PMU).
    #[arg(
        long,
        value_name = "DIR",
        default_value = "/sys/bus/event_source/devices",
        hide = true
    )]
    pub event_source_root: PathBuf,
    /// Root of the cpufreq and topology tree.
    #[arg(
        long,
        value_name = "DIR",
        default_value = "/sys/devices/system/cpu",
        hide = true
    )]
    pub cpu_root: PathBuf,
}

impl Default for SysRoots {
    fn default() -> Self {
        SysRoots {
            powercap_root: "/sys/class/powercap".into(),
            event_source_root: "/sys/bus/event_source/devices".into(),
            cpu_root: "/sys/devices/system/cpu".into(),
        }
    }
}
