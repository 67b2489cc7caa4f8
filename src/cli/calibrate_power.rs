//! `jouleplan calibrate power`: the micro-benchmarks of `calibration/` (idle, compute-bound,
//! memory-bound) run at each `(c, f)` through the profile's sweep and energy backends, or
//! recorded profiles (`--from KIND=PROFILE`), -> node power per run -> `P_idle(f)`,
//! `P_act(f)`, `P_stall(f)`, `P_mem` ([`crate::calibrate::power_fit`]) -> the machine file's
//! `[power]` section. Where energy cannot be measured it says what, why and what to do, and
//! exits non-zero.

use crate::calibrate::kernels::{self, Kernel};
use crate::calibrate::machine_edit::{self, Number};
use crate::calibrate::power_fit::{self, Kind, Law, PowerLaws, PowerSample};
use crate::error::InputError;
use crate::measure::record::Header;
use crate::measure::sweep::{self, Options, Roots};
use crate::measure::{self, Backend};
use crate::model::machine::Machine;
use crate::model::workload::{Growth, Profile};
use crate::values;
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `jouleplan calibrate power`.
#[derive(Debug, Args)]
pub struct PowerArgs {
    /// The machine file to update (its `[power]` section; everything else kept).
    #[arg(long, value_name = "FILE")]
    pub machine: PathBuf,
    /// Write the updated machine file here [default: update --machine in place].
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Core counts to run the busy kernels on [default: 1, half and all of the machine's].
    #[arg(long, value_name = "SPEC")]
    pub cores: Option<String>,
    /// Frequencies in GHz [default: the machine's].
    #[arg(long, value_name = "GHZ,...")]
    pub freqs: Option<String>,
    /// Seconds each kernel run lasts.
    #[arg(long, default_value_t = 10.0, value_parser = values::positive_number)]
    pub seconds: f64,
    /// Runs per point.
    #[arg(long, default_value_t = 2)]
    pub repeat: u32,
    /// Folder of the kernels' profiles, written as they are measured [default: OUTPUT.power/].
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// Continue the profiles in --record (runs already there are kept).
    #[arg(long)]
    pub resume: bool,
    /// Fit recorded profiles instead of measuring: KIND=PROFILE with KIND idle, compute,
    /// memory, or program (one program's runs: P_idle + c P_core); repeatable.
    #[arg(long, value_name = "KIND=PROFILE")]
    pub from: Vec<String>,
    #[command(flatten)]
    pub roots: super::profile::SysRoots,
}

/// `jouleplan calibrate kernel KIND --seconds S`: one micro-benchmark run (what the sweep runs).
#[derive(Debug, Args)]
pub struct KernelArgs {
    /// compute, memory or idle.
    pub kind: String,
    /// How long it runs.
    #[arg(long, default_value_t = 10.0, value_parser = values::positive_number)]
    pub seconds: f64,
}

/// Runs one kernel with `OMP_NUM_THREADS` threads.
pub fn run_kernel(a: &KernelArgs, out: &mut dyn Write) -> anyhow::Result<i32> {
    let kernel = Kernel::from_name(&a.kind)
        .ok_or_else(|| values::bad("KIND", "compute, memory or idle", a.kind.clone()))?;
    if !(0.01..=3600.0).contains(&a.seconds) {
        return Err(values::bad("--seconds", "0.01 to 3600", a.seconds.to_string()).into());
    }
    let threads = std::env::var("OMP_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1)
        .clamp(1, 4096);
    let sum = kernels::run(kernel, threads, a.seconds);
    writeln!(
        out,
        "{} x {threads} threads, {} s: {sum:.6e}",
        a.kind, a.seconds
    )?;
    Ok(0)
}

/// Runs `calibrate power`.
pub fn run_power(a: &PowerArgs, out: &mut dyn Write) -> anyhow::Result<i32> {
    let text = crate::input::read_file(&a.machine)?;
    // The file may lack [network] (and [power], which this writes); no power is read here.
    let (machine, _) = Machine::from_toml_for_fit(&a.machine, &text)?;
    let output = a.output.clone().unwrap_or_else(|| a.machine.clone());
    let _lock = super::outputs::lock_beside(&[("--output", output.as_path())], Some(&a.machine))?;
    // The record is a folder (`--resume` goes on in it): locked as one, as `report -o`.
    let _record_lock = a
        .record
        .as_deref()
        .map(|p| super::outputs::lock_folder("--record", p))
        .transpose()?;
    let sources: Vec<(Kind, PathBuf)> = if a.from.is_empty() {
        measure_kernels(a, &machine, &output)?
    } else {
        a.from
            .iter()
            .map(|s| parse_from(s))
            .collect::<Result<_, _>>()?
    };
    once_each(&a.from, &sources)?;
    let mut samples = Vec::new();
    for (kind, path) in &sources {
        samples.extend(samples_of(*kind, path)?);
    }
    let laws = laws_for(&sources);
    let ghz: Vec<f64> = machine.frequencies.iter().map(|f| f.ghz()).collect();
    let fit = power_fit::fit(&samples, &laws, &ghz).map_err(|e| InputError::Key {
        file: sources[0].1.clone(),
        key: "baseline".into(),
        expected: "runs from which the power laws can be fitted: two or more core counts, \
                   with idle runs to separate P_mem"
            .into(),
        got: e.to_string(),
    })?;
    report(&fit, &samples, &machine, out)?;
    let new = write_power(&output, &text, &machine, &fit, &sources)?;
    let inputs: Vec<(&str, &Path)> = sources
        .iter()
        .map(|(_, p)| ("--from", p.as_path()))
        .collect();
    super::outputs::check_distinct(&inputs, &[("--output", &output)])?;
    super::outputs::write_machine(&a.machine, &output, new.as_bytes())?;
    super::say::progress(&format!("wrote [power] to {}", output.display()));
    Ok(0)
}

/// Each `--from` profile once: one given twice (under one kind or two, however spelt) would
/// count every run of it twice in the fit and in the `[sources]` line.
fn once_each(given: &[String], sources: &[(Kind, PathBuf)]) -> Result<(), InputError> {
    for (j, (_, b)) in sources.iter().enumerate() {
        if let Some(i) = (0..j).find(|&i| super::outputs::same_file(&sources[i].1, b)) {
            return Err(values::bad(
                "--from",
                format!(
                    "each recorded profile once: `--from {}` and `--from {}` are one file, \
                     and its runs would count twice",
                    given[i], given[j]
                ),
                given[j].as_str(),
            ));
        }
    }
    Ok(())
}

fn parse_from(s: &str) -> Result<(Kind, PathBuf), InputError> {
    let expected = "KIND=PROFILE with KIND idle, compute, memory or program";
    let (k, p) = s
        .split_once('=')
        .ok_or_else(|| values::bad("--from", expected, s))?;
    let kind = match k {
        "idle" => Kind::Idle,
        "compute" => Kind::Compute,
        "memory" => Kind::Memory,
        "program" => Kind::Program,
        _ => return Err(values::bad("--from", expected, s)),
    };
    Ok((kind, PathBuf::from(p)))
}

/// Mean node power of each measured point of a profile.
fn samples_of(kind: Kind, path: &Path) -> anyhow::Result<Vec<PowerSample>> {
    let text = crate::input::read_file(path)?;
    let p = Profile::from_json(path, &text)?;
    let v: Vec<PowerSample> = p
        .baseline
        .iter()
        .filter(|b| b.measured)
        .filter_map(|b| {
            b.energy.map(|e| PowerSample {
                kind,
                cores: if kind == Kind::Idle {
                    0.0
                } else {
                    f64::from(b.cores)
                },
                ghz: b.freq.ghz(),
                watts: e.0 / b.wall_time.0,
            })
        })
        .collect();
    if let Some(b) = v.iter().find(|s| !(s.watts.is_finite() && s.watts > 0.0)) {
        return Err(InputError::Key {
            file: path.to_path_buf(),
            key: "baseline[].energy_j".into(),
            expected: "positive energy at every point (the energy counters must move during a run)"
                .into(),
            got: format!(
                "{} W mean power at {} cores, {} GHz",
                b.watts, b.cores, b.ghz
            ),
        }
        .into());
    }
    if v.is_empty() {
        return Err(InputError::Key {
            file: path.to_path_buf(),
            key: "baseline[].energy_j".into(),
            expected: "measured points with energy (the energy counters must move during a \
                       run: a run that read 0 J has no energy)"
                .into(),
            got: "no point has energy".into(),
        }
        .into());
    }
    Ok(v)
}

/// The laws the given kinds of run can identify.
fn laws_for(sources: &[(Kind, PathBuf)]) -> Vec<Law> {
    let has = |k: Kind| sources.iter().any(|s| s.0 == k);
    const ALL: &[Kind] = &[Kind::Idle, Kind::Compute, Kind::Memory, Kind::Program];
    let mut laws = vec![Law {
        name: "P_idle",
        kinds: ALL,
        per_core: false,
        by_frequency: true,
    }];
    if has(Kind::Compute) {
        laws.push(Law {
            name: "P_act",
            kinds: &[Kind::Compute],
            per_core: true,
            by_frequency: true,
        });
    }
    if has(Kind::Memory) {
        laws.push(Law {
            name: "P_stall",
            kinds: &[Kind::Memory],
            per_core: true,
            by_frequency: true,
        });
        if has(Kind::Idle) {
            laws.push(Law {
                name: "P_mem",
                kinds: &[Kind::Memory],
                per_core: false,
                by_frequency: false,
            });
        }
    }
    if has(Kind::Program) {
        laws.push(Law {
            name: "P_core",
            kinds: &[Kind::Program],
            per_core: true,
            by_frequency: true,
        });
    }
    laws
}

/// The energy backends that can measure node or CPU energy here, or why none can.
fn energy_backend(a: &PowerArgs) -> Result<String, String> {
    let mut why = Vec::new();
    let backends: Vec<Box<dyn Backend>> = vec![
        Box::new(measure::energy::RaplEnergy::new(
            &a.roots.powercap_root,
            &a.roots.event_source_root,
        )),
        Box::new(measure::slurm::SlurmEnergy::default()),
    ];
    for mut b in backends {
        match b.discover() {
            Ok(what) => return Ok(what),
            Err(u) => why.push(format!("{}: {u}", b.name())),
        }
    }
    Err(why.join("; "))
}

/// Runs the three kernels through the sweep; returns their profiles.
fn measure_kernels(
    a: &PowerArgs,
    machine: &Machine,
    output: &Path,
) -> anyhow::Result<Vec<(Kind, PathBuf)>> {
    if let Err(why) = energy_backend(a) {
        anyhow::bail!(
            "calibrate power needs the node's energy, and nothing here can measure it ({why}). \
             Run it on the node itself with RAPL readable (/sys/class/powercap/intel-rapl:*/energy_uj: \
             root, or `chmod a+r` on them), or inside a Slurm job on a cluster with energy \
             accounting (AcctGatherEnergyType), or fit profiles measured elsewhere with \
             --from idle=P.json --from compute=P.json --from memory=P.json"
        );
    }
    if !(0.5..=3600.0).contains(&a.seconds) {
        return Err(values::bad("--seconds", "0.5 to 3600", a.seconds.to_string()).into());
    }
    let cmax = machine.cores_per_node;
    let cores = match &a.cores {
        Some(s) => values::parse_int_spec("--cores", s)?,
        None => {
            let mut v = vec![1, (cmax / 2).max(1), cmax];
            v.dedup();
            v
        }
    };
    let freqs = match &a.freqs {
        Some(s) => Some(values::parse_ghz_values("--freqs", s)?),
        None if machine.frequencies.len() > 1 => {
            Some(machine.frequencies.iter().map(|f| f.0).collect())
        }
        None => None,
    };
    let dir = a.record.clone().unwrap_or_else(|| {
        let mut p = output.to_path_buf().into_os_string();
        p.push(".power");
        PathBuf::from(p)
    });
    std::fs::create_dir_all(&dir)?;
    let exe = std::env::current_exe()?;
    let mut out = Vec::new();
    for (kind, name) in [
        (Kind::Idle, "idle"),
        (Kind::Compute, "compute"),
        (Kind::Memory, "memory"),
    ] {
        let path = dir.join(format!("{name}.json"));
        let kernel_cores = if kind == Kind::Idle {
            vec![1]
        } else {
            cores.clone()
        };
        let o = kernel_options(a, (name, &exe, &path), kernel_cores, freqs.clone());
        let done = sweep::run(&o, &mut |l| super::say::line(l))?;
        if !done.complete {
            anyhow::bail!(
                "the {name} kernel's sweep did not complete ({} failed runs; {}): what was measured is in {}; rerun with --resume",
                done.failed.len(),
                done.failed.first().map_or("interrupted", String::as_str),
                path.display()
            );
        }
        out.push((kind, path));
    }
    Ok(out)
}

/// The sweep of one calibration kernel (`jouleplan calibrate kernel NAME`), its profile at
/// `path`.
fn kernel_options(
    a: &PowerArgs,
    (name, exe, path): (&str, &Path, &Path),
    cores: Vec<u32>,
    freqs: Option<Vec<f64>>,
) -> Options {
    Options {
        command: vec![
            exe.display().to_string(),
            "calibrate".into(),
            "kernel".into(),
            name.into(),
            "--seconds".into(),
            a.seconds.to_string(),
        ],
        cores,
        freqs,
        gpus: vec![0],
        nodes: vec![1],
        hostfile: None,
        at_node_frequency: false,
        ranks: 1,
        launcher: None,
        repeat: a.repeat,
        timeout: Some(Duration::from_secs_f64(a.seconds * 3.0 + 60.0)),
        output: path.to_path_buf(),
        resume: a.resume,
        header: Header {
            program: format!("calibration-{name}"),
            description: format!(
                "jouleplan calibrate power: the {name} kernel of calibration/kernels.rs"
            ),
            baseline_iterations: 1.0,
            target_iterations: 1.0,
            growth: Growth::Constant,
            notes: Vec::new(),
        },
        stall_override: None,
        mpi_profiler: None,
        roots: Roots {
            powercap: a.roots.powercap_root.clone(),
            event_source: a.roots.event_source_root.clone(),
            cpu: a.roots.cpu_root.clone(),
        },
        progress_bar: false,
        warmup: 1,
        show_output: false,
        quiet: false,
        verbose: false,
        gpu_sample: Duration::from_millis(100),
        grace: crate::measure::launch::DEFAULT_GRACE,
        gpu_clocks: Vec::new(),
        gpu_memory_mhz: None,
    }
}

/// Prints the laws, the residuals and the power per machine frequency.
fn report(
    f: &PowerLaws,
    samples: &[PowerSample],
    machine: &Machine,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(out, "power from {} runs ({}):", samples.len(), f.method)?;
    for line in power_fit::describe_lines(f) {
        writeln!(out, "  {line}")?;
    }
    let rms =
        (f.residuals.iter().map(|r| r * r).sum::<f64>() / f.residuals.len().max(1) as f64).sqrt();
    writeln!(
        out,
        "  power residual rms {:.2}%, largest {:.2}%",
        100.0 * rms,
        100.0 * f.max_residual()
    )?;
    let d = machine.ghz_decimals();
    for fr in &machine.frequencies {
        let g = fr.ghz();
        let v: Vec<String> = f
            .laws
            .iter()
            .filter_map(|l| f.at(l.name, g).map(|w| format!("{} {w:.4} W", l.name)))
            .collect();
        writeln!(out, "  {g:>5.d$} GHz: {}", v.join(", "))?;
    }
    Ok(())
}

/// The machine file with the fitted `[power]` keys and their sources, checked by reading back.
fn write_power(
    output: &Path,
    text: &str,
    machine: &Machine,
    f: &PowerLaws,
    sources: &[(Kind, PathBuf)],
) -> anyhow::Result<String> {
    let per_f = |law: &str| -> Option<Number> {
        f.laws.iter().any(|l| l.name == law).then(|| {
            Number::PerFrequency(
                machine
                    .frequencies
                    .iter()
                    .map(|x| f.at(law, x.ghz()).unwrap_or(f64::NAN))
                    .collect(),
            )
        })
    };
    let (act, stall) = match (per_f("P_act"), per_f("P_stall"), per_f("P_core")) {
        (Some(a), Some(s), _) => (a, s),
        (Some(a), None, _) => (a.clone(), a),
        (None, Some(s), _) => (s.clone(), s),
        (None, None, Some(c)) => (c.clone(), c),
        (None, None, None) => {
            anyhow::bail!("no busy-core runs: give compute, memory or program runs")
        }
    };
    let mut keys = vec![
        ("idle_w", per_f("P_idle").unwrap_or(Number::One(f64::NAN))),
        ("core_active_w", act),
        ("core_stall_w", stall),
        ("fit_residual_rel", Number::One(f.residual_bound())),
        ("fit_residual_rms", Number::One(f.residual_bound())),
    ];
    // A file without [power] gets every key the section needs: what these runs cannot
    // separate is 0 and said so (a file with [power] keeps its own).
    let (_, lacks) = Machine::from_toml_for_fit(output, text)?;
    let mut unmeasured = Vec::new();
    match f.at("P_mem", 1.0) {
        Some(m) => keys.push(("memory_w", Number::One(m))),
        None if lacks.power => {
            keys.push(("memory_w", Number::One(0.0)));
            unmeasured
                .push("memory_w 0 (no memory runs to separate it: carried in the core power)");
        }
        None => {}
    }
    if lacks.power {
        keys.push(("network_w", Number::One(0.0)));
        unmeasured.push("network_w 0 (not measured)");
    }
    let from: Vec<String> = sources
        .iter()
        .map(|(k, p)| format!("{}={}", format!("{k:?}").to_lowercase(), p.display()))
        .collect();
    let source = format!(
        "measured: `jouleplan calibrate power` on {} from {}: {}{}",
        machine_edit::today_utc(),
        from.join(", "),
        power_fit::describe(f),
        match unmeasured.is_empty() {
            true => String::new(),
            false => format!("; {}", unmeasured.join(", ")),
        }
    );
    let new = machine_edit::update(output, text, "power", &keys, &source, false)?;
    Machine::from_toml_for_plan(output, &new)?;
    Ok(new)
}
