//! Slurm job scripts for one predicted configuration (FORMATS.md, Slurm).
//!
//! The user's command is given as words; each is written in single quotes where it is not
//! plain, so spaces, quotes, `$`, backticks and newlines reach the program literally (nothing
//! is expanded by the batch shell). A NUL byte cannot be passed to a program and is rejected.

use crate::error::{InputError, InputResult};
use crate::model::Prediction;
use crate::model::energy_scope::EnergyScope;
use crate::model::layout::Layout;
use crate::units::{Seconds, fmt_duration, fmt_energy};
use std::fmt::Write as _;

/// Where the prediction came from, for the script's header.
#[derive(Debug, Clone)]
pub struct Provenance {
    /// Machine name, file and SHA-256.
    pub machine: (String, String, String),
    /// Program name, profile file and SHA-256.
    pub profile: (String, String, String),
    /// The recommendation's reason, or how the configuration was chosen.
    pub reason: String,
    /// What the recommendation must warn of (another machine, model error, no message data).
    pub warnings: Vec<String>,
    /// Memory one node needs, GiB, when the profile states the footprint (`--mem`).
    pub mem_per_node_gib: Option<f64>,
    /// What the prediction rests on that was not measured: the machine file's illustrative or
    /// assumed values, the profile's assumptions.
    pub unmeasured: Vec<String>,
    /// How the measured runs laid ranks and threads on a node, when the profile says.
    pub layout: Option<Layout>,
    /// What the predicted energy covers (the profile's energy scope, or the node's where the
    /// machine adds the host's to GPU energy).
    pub energy_scope: EnergyScope,
    /// How that energy was come by.
    pub energy_read: crate::model::energy_scope::EnergyRead,
    /// The GPU clock the job sets and why, where the configuration has one.
    pub gpu_clock: Option<super::gpu_clock::GpuClockNote>,
    /// The deadline the plan was asked to meet (`--deadline`), for the header's risk warning.
    pub deadline: Option<Seconds>,
    /// Whether the machine file lists more than one CPU frequency: only then does the script
    /// set one (`srun --cpu-freq`); with one (a node without cpufreq, a placeholder host) the
    /// node runs at its own, and a cluster without cpufreq may refuse the option.
    pub cpu_freq_choice: bool,
}

/// Options of the job, validated.
#[derive(Debug, Clone)]
pub struct JobOptions {
    /// The program and its arguments, as words.
    pub app: Vec<String>,
    /// `--account`.
    pub account: Option<String>,
    /// `--partition`.
    pub partition: Option<String>,
    /// The time limit is the predicted time times `1 + time_margin`, rounded up to a minute.
    pub time_margin: f64,
    /// Job name.
    pub job_name: String,
    /// `--constraint`: node features the job needs (`h100&ib`).
    pub constraint: Option<String>,
    /// How the node's cores and GPUs are split into tasks (MPI ranks).
    pub tasks: TaskSplit,
}

/// `--ntasks-per-node`, `--cpus-per-task`, `--gpus-per-task` as asked; what is not asked
/// follows from the configuration (one task per node by default, every core to it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskSplit {
    /// MPI ranks per node.
    pub ntasks_per_node: Option<u32>,
    /// Cores (OpenMP threads) per rank.
    pub cpus_per_task: Option<u32>,
    /// GPUs per rank.
    pub gpus_per_task: Option<u32>,
}

/// The split of one configuration: ranks per node, cores per rank, GPUs per rank (`None`:
/// the node's GPUs are shared, `--gpus-per-node`), and whose layout it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tasks {
    /// MPI ranks per node.
    pub per_node: u32,
    /// Cores per rank.
    pub cpus: u32,
    /// GPUs per rank.
    pub gpus: Option<u32>,
    /// The layout in words, for the header: as measured, as asked, or assumed.
    pub said: String,
    /// Set when the asked layout is not the measured one: the prediction is for another job.
    pub differs: Option<String>,
    /// Set when the layout is assumed (the profile records none and none was asked): what was
    /// assumed and how to give the layout instead.
    pub assumed: Option<String>,
}

impl TaskSplit {
    /// The split of `cores` cores and `gpus` GPUs per node: the flags where given, else the
    /// layout the profile measured, else one rank a node (said as assumed). Checked: ranks x
    /// cores per rank must be the node's cores, ranks x GPUs per rank its GPUs.
    pub fn of(&self, cores: u32, gpus: u32, measured: Option<Layout>) -> InputResult<Tasks> {
        let asked = self.ntasks_per_node.is_some() || self.cpus_per_task.is_some();
        let from_measured = measured.filter(|_| !asked);
        let (per_node, cpus) = match (self.ntasks_per_node, self.cpus_per_task, from_measured) {
            (None, None, Some(l)) => l.tasks(cores).ok_or_else(|| undivided(l, cores))?,
            (None, None, None) => (1, cores),
            (Some(n), None, _) => (n, cores.checked_div(n).unwrap_or(0)),
            (None, Some(c), _) => (cores.checked_div(c).unwrap_or(0), c),
            (Some(n), Some(c), _) => (n, c),
        };
        self.check_product(cores, per_node, cpus)?;
        let gpus_per_task = self.gpus_for(per_node, gpus)?;
        let words = |r: u32, t: u32| {
            format!(
                "{} a node x {} a rank",
                crate::units::count(r, "MPI rank", "MPI ranks"),
                crate::units::count(t, "thread", "threads")
            )
        };
        let (said, differs) =
            match measured {
                Some(l) if !asked => (
                    format!("{}, as measured ({})", words(per_node, cpus), l.describe()),
                    None,
                ),
                Some(l) => {
                    let same = l.tasks(cores) == Some((per_node, cpus));
                    let said = format!("{}, as asked", words(per_node, cpus));
                    let differs = (!same).then(|| {
                    let m = l.tasks(cores).map_or_else(|| l.describe(), |(r, t)| words(r, t));
                    format!(
                        "the layout asked ({}) is not the one measured ({m}): the prediction is \
                         for the measured layout, not for this job",
                        words(per_node, cpus)
                    )
                });
                    (said, differs)
                }
                None if asked => (
                    format!(
                        "{}, as asked (the profile records no layout)",
                        words(per_node, cpus)
                    ),
                    None,
                ),
                None => (
                    format!(
                        "{}, assumed: the profile records no layout (fit's ranks column, or \
                     `jouleplan profile`, gives one); give --ntasks-per-node and --cpus-per-task \
                     as the program was measured",
                        words(per_node, cpus)
                    ),
                    None,
                ),
            };
        let assumed = (measured.is_none() && !asked).then(|| {
            format!(
                "the job script's layout is assumed: {} (the profile records no layout); give \
                 the one the program was measured with, --ntasks-per-node N --cpus-per-task C \
                 (N x C = {cores}), or fit runs with a ranks column so the profile records it",
                words(per_node, cpus)
            )
        });
        Ok(Tasks {
            per_node,
            cpus,
            gpus: gpus_per_task,
            said,
            differs,
            assumed,
        })
    }

    /// Ranks x cores per rank must be the node's cores.
    fn check_product(&self, cores: u32, per_node: u32, cpus: u32) -> InputResult<()> {
        if per_node > 0 && cpus > 0 && per_node.checked_mul(cpus) == Some(cores) {
            return Ok(());
        }
        let (flag, got) = match self.ntasks_per_node {
            Some(n) => ("--ntasks-per-node", n),
            None => ("--cpus-per-task", self.cpus_per_task.unwrap_or(0)),
        };
        Err(InputError::Argument {
            flag: flag.into(),
            expected: format!(
                "tasks per node x cores per task = the configuration's {cores} cores per node (a \
                 divisor of {cores})"
            ),
            got: got.to_string(),
        })
    }

    /// `--gpus-per-task`, checked against the node's GPUs.
    fn gpus_for(&self, per_node: u32, gpus: u32) -> InputResult<Option<u32>> {
        match self.gpus_per_task {
            Some(g) if g == 0 || per_node.checked_mul(g) != Some(gpus) => {
                Err(InputError::Argument {
                    flag: "--gpus-per-task".into(),
                    expected: format!(
                        "tasks per node ({per_node}) x GPUs per task = the configuration's {gpus} \
                         GPUs per node"
                    ),
                    got: g.to_string(),
                })
            }
            other => Ok(other),
        }
    }
}

/// A measured layout that does not divide the configuration's cores.
fn undivided(l: Layout, cores: u32) -> InputError {
    InputError::Argument {
        flag: "--ntasks-per-node".into(),
        expected: format!(
            "ranks per node for {cores} cores: the measured layout ({}) does not divide them; \
             give --ntasks-per-node and --cpus-per-task",
            l.describe()
        ),
        got: "nothing".into(),
    }
}

fn plain_word(w: &str) -> bool {
    !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:=,+@%".contains(c))
}

/// One word for a POSIX shell, literal whatever it holds.
pub fn shell_quote(w: &str) -> String {
    if plain_word(w) {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// Splits `--app 'COMMAND ...'` into words with POSIX shell rules (quotes group words; nothing
/// is expanded).
pub fn split_app(flag: &str, s: &str) -> InputResult<Vec<String>> {
    let words = shlex::split(s).ok_or_else(|| InputError::Argument {
        flag: flag.into(),
        expected: "a command line with balanced quotes".into(),
        got: s.into(),
    })?;
    if words.is_empty() {
        return Err(InputError::Argument {
            flag: flag.into(),
            expected: "the program to run and its arguments".into(),
            got: s.into(),
        });
    }
    Ok(words)
}

impl JobOptions {
    /// Checks the options that go into `#SBATCH` lines unquoted.
    pub fn validate(&self) -> InputResult<()> {
        let name_ok = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
        };
        for (flag, v) in [
            ("--account", &self.account),
            ("--partition", &self.partition),
        ] {
            if let Some(v) = v
                && !name_ok(v)
            {
                return Err(InputError::Argument {
                    flag: flag.into(),
                    expected: "a Slurm name: letters, digits, '_', '-', '.'".into(),
                    got: v.clone(),
                });
            }
        }
        if let Some(c) = &self.constraint
            && (c.is_empty()
                || !c
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || "_-.&|[]*:,".contains(ch)))
        {
            return Err(InputError::Argument {
                flag: "--constraint".into(),
                expected: "Slurm node features: letters, digits and & | [ ] * : , _ - .".into(),
                got: c.clone(),
            });
        }
        if !name_ok(&self.job_name) {
            return Err(InputError::Argument {
                flag: "--job-name".into(),
                expected: "letters, digits, '_', '-', '.'".into(),
                got: self.job_name.clone(),
            });
        }
        if !(self.time_margin.is_finite() && self.time_margin >= 0.0) {
            return Err(InputError::Argument {
                flag: "--time-margin".into(),
                expected: "a fraction >= 0".into(),
                got: self.time_margin.to_string(),
            });
        }
        if self.app.is_empty() {
            return Err(InputError::Argument {
                flag: "--app".into(),
                expected: "the program to run and its arguments".into(),
                got: "nothing".into(),
            });
        }
        if let Some(w) = self.app.iter().find(|w| w.contains('\0')) {
            return Err(InputError::Argument {
                flag: "--app".into(),
                expected: "words without NUL bytes (a program cannot receive them)".into(),
                got: w.escape_debug().to_string(),
            });
        }
        Ok(())
    }
}

/// Slurm's `[D-]HH:MM:SS` for a whole number of minutes.
pub fn slurm_time(minutes: u64) -> String {
    let (d, h, m) = (minutes / 1440, (minutes % 1440) / 60, minutes % 60);
    if d > 0 {
        format!("{d}-{h:02}:{m:02}:00")
    } else {
        format!("{h:02}:{m:02}:00")
    }
}

/// The time limit for a predicted time: `T (1 + margin)`, rounded up to a whole minute, at
/// least one minute.
pub fn time_limit_minutes(t: Seconds, margin: f64) -> u64 {
    ((t.0 * (1.0 + margin)) / 60.0).ceil().max(1.0) as u64
}

/// A text for a `#` comment line: control characters (a newline would end the comment)
/// escaped, everything else as it is.
fn comment(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let v: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            v
        })
        .collect()
}

/// Writes the job script for `p`.
pub fn job_script(p: &Prediction, prov: &Provenance, opts: &JobOptions) -> InputResult<String> {
    opts.validate()?;
    let tasks = opts.tasks.of(p.config.cores, p.config.gpus, prov.layout)?;
    let mut s = String::new();
    header(&mut s, p, prov);
    let _ = writeln!(s, "# Layout: {}.", comment(&tasks.said));
    if let Some(d) = &tasks.differs {
        let _ = writeln!(s, "# WARNING: {}", comment(d));
    }
    inputs(&mut s, p, prov, opts);
    sbatch(&mut s, p, prov, opts, &tasks);
    body(&mut s, p, (opts, prov.cpu_freq_choice), &tasks);
    comparison(&mut s, p, prov);
    Ok(s)
}

/// What the job script of `p` must warn of on standard error: a layout asked that is not
/// the measured one, or a layout assumed because the profile records none.
pub fn layout_warning(p: &Prediction, prov: &Provenance, opts: &JobOptions) -> Option<String> {
    let t = opts
        .tasks
        .of(p.config.cores, p.config.gpus, prov.layout)
        .ok()?;
    t.differs.or(t.assumed)
}

/// The deadline risk of a job's prediction, with its figures: the predicted time, or the high
/// end of its interval or bounds, past the deadline. `None` without a deadline, or where even
/// the high end meets it.
pub fn deadline_risk(p: &Prediction, deadline: Option<Seconds>) -> Option<String> {
    let d = deadline?.0;
    let t = p.time.0;
    let (lo, hi) = p.interval.map_or((t, t), |i| i.time_s);
    if hi <= d {
        return None;
    }
    let f = |s: f64| fmt_duration(Seconds(s));
    let what = p.interval.map_or_else(String::new, |i| i.what());
    let meets = match p.interval {
        None => "predicted within the deadline".to_string(),
        Some(_) => format!("that meets the deadline at the high end of its {what}"),
    };
    let said = match p.interval {
        None => format!(
            "the predicted time {} is past the deadline of {}",
            f(t),
            f(d)
        ),
        Some(_) if lo > d => format!(
            "the predicted time {} and its whole {what}, {} to {}, are past the deadline of {}",
            f(t),
            f(lo),
            f(hi),
            f(d)
        ),
        Some(_) => format!(
            "the deadline of {} lies inside the {what} of the predicted time {}, {} to {}",
            f(d),
            f(t),
            f(lo),
            f(hi)
        ),
    };
    Some(format!(
        "deadline at risk: {said}, so the job may not finish in time; pick a configuration \
         {meets} (`plan --deadline ... --pick INDEX`), measure this configuration first, or \
         allow more time"
    ))
}

/// The time limit in minutes: the prediction with its margin, and beyond the measured node
/// counts also the interval's high end.
fn limit_minutes(p: &Prediction, opts: &JobOptions) -> u64 {
    let high = p.interval.map_or(0.0, |i| i.time_s.1);
    time_limit_minutes(p.time, opts.time_margin).max(time_limit_minutes(Seconds(high), 0.0))
}

/// The configuration, why, warnings, what was not measured, and the prediction's terms.
fn header(w: &mut String, p: &Prediction, prov: &Provenance) {
    let c = &p.config;
    let khz = (c.freq.0 / 1e3).round() as u64;
    let _ = writeln!(w, "#!/bin/bash");
    let _ = writeln!(w, "# Generated by jouleplan {}.", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(
        w,
        "# Configuration ({}, {}, {} GHz, {}{}): {} x {} at {} kHz, {}.",
        c.nodes,
        c.cores,
        c.freq.ghz(),
        c.gpus,
        c.gpu_clock_mhz
            .map_or(String::new(), |m| format!(", {m} MHz")),
        crate::units::count(c.nodes, "node", "nodes"),
        crate::units::count(c.cores, "core", "cores"),
        khz,
        crate::units::gpus_per_node(c.gpus, None)
            + &c.gpu_clock_mhz
                .filter(|_| c.gpus > 0)
                .map_or(String::new(), |m| format!(" at a {m} MHz GPU clock"))
    );
    let _ = writeln!(w, "# Why: {}", comment(&prov.reason));
    for line in prov.gpu_clock.iter().flat_map(|g| g.comment(p)) {
        let _ = writeln!(w, "# {}", comment(&line));
    }
    for warning in prov.warnings.iter().chain(&deadline_risk(p, prov.deadline)) {
        let _ = writeln!(w, "# WARNING: {}", comment(warning));
    }
    if !prov.unmeasured.is_empty() {
        let _ = writeln!(w, "# Rests on numbers that were not measured:");
        for u in &prov.unmeasured {
            let _ = writeln!(w, "#   - {}", comment(u));
        }
    }
    predicted_line(w, p, prov);
    let node_law = if p.t.nodes != 0.0 {
        format!(" + X(n) {:.6}", p.t.nodes)
    } else {
        String::new()
    };
    // From whole-run times alone, T_CPU is the run (host and GPUs together).
    let cpu = if p.whole_run { "T_run" } else { "T_CPU" };
    let _ = writeln!(
        w,
        "#   time = {cpu} {:.6} + T_mem {:.6} + T_w,net {:.6} + T_s,net {:.6} + T_gpu {:.6} + T_ser {:.6} + T_idle {:.6}{node_law} s",
        p.t.cpu, p.t.mem, p.t.wait_net, p.t.serv_net, p.t.gpu, p.t.serial, p.t.wait
    );
    if p.whole_run {
        let _ = writeln!(
            w,
            "#   (T_run: the run, host and GPUs together; T_gpu: what the GPU clock adds)"
        );
    }
    if let Some(note) = crate::model::TimeTerms::serv_net_at(c.nodes) {
        let _ = writeln!(w, "#   ({note})");
    }
    energy_lines(w, p, prov);
    terms(w, p);
}

/// The prediction's headline: time, energy (or node-hours without measured power), UCR.
fn predicted_line(w: &mut String, p: &Prediction, prov: &Provenance) {
    if p.time_only {
        let _ = writeln!(
            w,
            "# Predicted: time {} ({:.6} s), {} (energy unavailable: the machine file has no \
             [power]), UCR {:.3}, network headroom 1-rho {:.3}",
            fmt_duration(p.time),
            p.time.0,
            crate::units::fmt_node_hours(p.energy.0 / 3600.0),
            p.ucr,
            1.0 - p.rho
        );
        return;
    }
    let _ = writeln!(
        w,
        "# Predicted: time {} ({:.6} s), {} {} ({:.3} J), UCR {:.3}, network headroom 1-rho {:.3}",
        fmt_duration(p.time),
        p.time.0,
        prov.energy_scope.describe_read(prov.energy_read),
        fmt_energy(p.energy),
        p.energy.0,
        p.ucr,
        1.0 - p.rho
    );
}

/// The interval at the node counts not measured and the energy terms (node-hours only,
/// without measured power).
fn energy_lines(w: &mut String, p: &Prediction, prov: &Provenance) {
    if p.time_only {
        if let Some(i) = &p.interval {
            let _ = writeln!(
                w,
                "# {}: time {:.6} to {:.6} s, {} to {}.",
                crate::report::text::interval_head_capitalised(i),
                i.time_s.0,
                i.time_s.1,
                crate::units::fmt_node_hours(i.energy_j.0 / 3600.0),
                crate::units::fmt_node_hours(i.energy_j.1 / 3600.0)
            );
        }
        return;
    }
    if let Some(i) = &p.interval {
        let _ = writeln!(
            w,
            "# {}: time {:.6} to {:.6} s, {} {:.3} to {:.3} J.",
            crate::report::text::interval_head_capitalised(i),
            i.time_s.0,
            i.time_s.1,
            prov.energy_scope.name(),
            i.energy_j.0,
            i.energy_j.1
        );
    }
    let _ = writeln!(
        w,
        "#   energy = CPU {:.3} + memory {:.3} + network {:.3} + idle {:.3} + GPU {:.3} J",
        p.e.cpu, p.e.mem, p.e.net, p.e.idle, p.e.gpu
    );
}

/// The efficiency trees of the prediction.
fn terms(w: &mut String, p: &Prediction) {
    if p.whole_run {
        let _ = writeln!(
            w,
            "#   efficiency trees: not predicted (whole-run times only: nothing measured splits \
             host from device)"
        );
        return;
    }
    let h = crate::model::host_tree::HostTree::of(p);
    let _ = writeln!(
        w,
        "#   host parallel efficiency {:.3} = MPI {:.3} (communication {:.3}; load balance {}) x OpenMP {:.3} ({}) x device offload {:.3}",
        h.parallel_efficiency,
        h.mpi_parallel_efficiency,
        h.mpi_communication_efficiency,
        h.mpi_load_balance
            .map_or("not measured".to_string(), |v| format!(
                "{v:.3}, {}",
                crate::report::json::load_balance_source(&h)
            )),
        h.openmp_parallel_efficiency,
        crate::report::json::openmp_source(&h),
        h.device_offload_efficiency
    );
    if let Some(d) = &p.device {
        let _ = writeln!(
            w,
            "#   device parallel efficiency {:.3} = load balance {:.3} x communication {:.3} x orchestration {:.3}; offload {:.3}",
            d.parallel_efficiency,
            d.load_balance,
            d.communication_efficiency,
            d.orchestration_efficiency,
            d.offload_efficiency
        );
    }
}

/// The model's inputs (with their digests) and how the time limit was set.
fn inputs(w: &mut String, p: &Prediction, prov: &Provenance, opts: &JobOptions) {
    let _ = writeln!(w, "# Model inputs:");
    let _ = writeln!(
        w,
        "#   machine {} ({}), sha256 {}",
        comment(&prov.machine.0),
        comment(&prov.machine.1),
        prov.machine.2
    );
    let _ = writeln!(
        w,
        "#   profile {} ({}), sha256 {}",
        comment(&prov.profile.0),
        comment(&prov.profile.1),
        prov.profile.2
    );
    let _ = writeln!(
        w,
        "# Time limit: predicted time x {:.2}{}, rounded up to a minute.",
        1.0 + opts.time_margin,
        match p.interval {
            Some(i) => format!(", or the high end of its {} where longer", i.what()),
            None => String::new(),
        }
    );
}

/// The `#SBATCH` lines.
fn sbatch(w: &mut String, p: &Prediction, prov: &Provenance, opts: &JobOptions, t: &Tasks) {
    let c = &p.config;
    let _ = writeln!(w, "#SBATCH --job-name={}", opts.job_name);
    let _ = writeln!(w, "#SBATCH --nodes={}", c.nodes);
    let _ = writeln!(w, "#SBATCH --ntasks-per-node={}", t.per_node);
    let _ = writeln!(w, "#SBATCH --cpus-per-task={}", t.cpus);
    match t.gpus {
        Some(g) => {
            let _ = writeln!(w, "#SBATCH --gpus-per-task={g}");
        }
        None if c.gpus > 0 => {
            let _ = writeln!(w, "#SBATCH --gpus-per-node={}", c.gpus);
        }
        None => {}
    }
    if let Some(g) = &prov.gpu_clock {
        let _ = writeln!(w, "#SBATCH --gpu-freq={}", g.gpu_freq());
    }
    let _ = writeln!(w, "#SBATCH --exclusive");
    if let Some(g) = prov.mem_per_node_gib {
        // Whole MiB, rounded up: the profile's footprint over the nodes.
        let _ = writeln!(w, "#SBATCH --mem={}M", (g * 1024.0).ceil() as u64);
    }
    if let Some(c) = &opts.constraint {
        let _ = writeln!(w, "#SBATCH --constraint={c}");
    }
    let _ = writeln!(w, "#SBATCH --time={}", slurm_time(limit_minutes(p, opts)));
    if let Some(a) = &opts.account {
        let _ = writeln!(w, "#SBATCH --account={a}");
    }
    if let Some(pt) = &opts.partition {
        let _ = writeln!(w, "#SBATCH --partition={pt}");
    }
}

/// The environment, the run, and the prediction printed next to what Slurm measured.
fn body(w: &mut String, p: &Prediction, (opts, set_freq): (&JobOptions, bool), t: &Tasks) {
    let khz = (p.config.freq.0 / 1e3).round() as u64;
    let freq = match set_freq {
        true => format!(" --cpu-freq={khz}"),
        false => String::new(),
    };
    let command: Vec<String> = opts.app.iter().map(|w| shell_quote(w)).collect();
    let _ = writeln!(w);
    let _ = writeln!(w, "export OMP_NUM_THREADS={}", t.cpus);
    let _ = writeln!(w, "export OMP_PLACES=cores");
    let _ = writeln!(w, "export OMP_PROC_BIND=close");
    let _ = writeln!(w);
    if !set_freq {
        let _ = writeln!(
            w,
            "# No --cpu-freq: the machine file lists one CPU frequency ({} GHz), the node's own.",
            p.config.freq.ghz()
        );
    }
    let _ = writeln!(w, "srun --cpu-bind=cores{freq} -- {}", command.join(" "));
    let _ = writeln!(w, "status=$?");
    let _ = writeln!(w);
}

/// The prediction printed next to what Slurm measured, each energy named by its scope: what
/// Slurm's `ConsumedEnergyRaw` covers depends on the cluster's energy plugin (the whole node
/// with ipmi, CPU packages and DRAM with rapl), so the script says which plugin a prediction
/// of its scope compares with, and that a GPU-only prediction compares with neither.
fn comparison(w: &mut String, p: &Prediction, prov: &Provenance) {
    let scope = prov.energy_scope;
    // The GPU clock the prediction is at (the one `--gpu-freq` asks for).
    let clock = (p.config.gpu_clock_mhz)
        .filter(|_| p.config.gpus > 0)
        .map_or(String::new(), |m| format!(" at a {m} MHz GPU clock"));
    if p.time_only {
        let _ = writeln!(
            w,
            "# Prediction next to measurement (energy unavailable: no [power]):"
        );
        let _ = writeln!(
            w,
            "echo \"jouleplan predicted: Elapsed {} ({:.3} s){clock}\"",
            slurm_elapsed(p.time),
            p.time.0
        );
        let _ = writeln!(
            w,
            "sacct -j \"$SLURM_JOB_ID\" -o JobID,Elapsed || echo \"sacct: job accounting is not available here\""
        );
        let _ = writeln!(w, "exit $status");
        return;
    }
    let _ = writeln!(
        w,
        "# Prediction next to measurement. sacct's ConsumedEnergyRaw is what this cluster's \
         acct_gather_energy plugin measures: the whole node with ipmi or a node meter, CPU \
         packages and DRAM only with rapl (`scontrol show config | grep AcctGatherEnergyType` \
         says which); the prediction is {}.",
        scope.describe_read(prov.energy_read)
    );
    let caveat = match scope {
        EnergyScope::Node => "comparable where the plugin measures the whole node",
        EnergyScope::Cpu => "comparable where the plugin is rapl",
        EnergyScope::Gpu => {
            let _ = writeln!(
                w,
                "# The scopes differ: GPU energy alone is not comparable directly."
            );
            "not comparable directly with ConsumedEnergyRaw"
        }
    };
    let _ = writeln!(
        w,
        "echo \"jouleplan predicted: Elapsed {} ({:.3} s){clock}, {} {} ({caveat})\"",
        slurm_elapsed(p.time),
        p.time.0,
        scope.name(),
        fmt_energy(p.energy)
    );
    let _ = writeln!(
        w,
        "sacct -j \"$SLURM_JOB_ID\" -o JobID,Elapsed,ConsumedEnergyRaw || echo \"sacct: job accounting is not available here\""
    );
    let _ = writeln!(w, "exit $status");
}

fn slurm_elapsed(t: Seconds) -> String {
    let s = t.0.round() as u64;
    format!("{:02}:{:02}:{:02}", s / 3600, (s % 3600) / 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_keeps_every_character_literal() {
        assert_eq!(shell_quote("./a.out"), "./a.out");
        assert_eq!(shell_quote("my file"), "'my file'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote("$HOME"), "'$HOME'");
        assert_eq!(shell_quote("`id`"), "'`id`'");
        assert_eq!(shell_quote("a\nb"), "'a\nb'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn time_limits_round_up_to_minutes() {
        assert_eq!(time_limit_minutes(Seconds(10.0), 0.25), 1);
        assert_eq!(time_limit_minutes(Seconds(600.0), 0.25), 13);
        assert_eq!(slurm_time(13), "00:13:00");
        assert_eq!(slurm_time(1441), "1-00:01:00");
    }

    #[test]
    fn app_strings_split_like_a_shell_and_unbalanced_quotes_are_rejected() {
        assert_eq!(
            split_app("--app", "./a.out 'x y' \"z\"").unwrap(),
            vec!["./a.out", "x y", "z"]
        );
        assert!(split_app("--app", "./a.out 'x").is_err());
        assert!(split_app("--app", "   ").is_err());
    }
}
