//! `jouleplan machine init` and `jouleplan machine check`: a machine file from the node it
//! runs on, and what a machine file will be used as.

use crate::measure::node;
use crate::model::machine::Machine;
use clap::{Args, Subcommand};
use std::io::Write;
use std::path::PathBuf;

/// `jouleplan machine`.
#[derive(Debug, Args)]
pub struct MachineArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: MachineAction,
}

/// `jouleplan machine` subcommands.
#[derive(Debug, Subcommand)]
pub enum MachineAction {
    /// Write a machine file from this node: physical cores, frequencies, memory, CPU and GPU
    /// models, with where each came from; network and power are left to be measured.
    #[command(after_help = super::examples::MACHINE_INIT)]
    Init {
        /// Write here (refused if it exists) instead of standard output.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Root of the cpufreq/topology tree (tests, containers).
        #[arg(
            long,
            value_name = "DIR",
            default_value = "/sys/devices/system/cpu",
            hide = true
        )]
        cpu_root: PathBuf,
        /// Root of /proc (tests, containers).
        #[arg(long, value_name = "DIR", default_value = "/proc", hide = true)]
        proc_root: PathBuf,
    },
    /// Validate a machine file and print what plan will use from it; exit 2 naming what is
    /// missing or wrong.
    #[command(after_help = super::examples::MACHINE_CHECK)]
    Check {
        /// The machine file (TOML) or the name of a bundled one.
        #[arg(value_name = "FILE")]
        file: String,
        /// Print what the file holds and what is missing as JSON (exit 2 all the same when it
        /// is incomplete or implausible).
        #[arg(long)]
        json: bool,
    },
}

/// Runs `machine`.
pub fn run_machine(a: &MachineArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    match &a.action {
        MachineAction::Init {
            output,
            cpu_root,
            proc_root,
        } => {
            let facts = node::read(&node::NodeRoots {
                cpu: cpu_root.clone(),
                proc: proc_root.clone(),
            });
            let text = node::machine_toml(&facts);
            // One writer: a second `machine init` onto the same file is refused, not raced.
            let _lock = super::outputs::lock(
                &output
                    .iter()
                    .map(|p| ("--output", p.as_path()))
                    .collect::<Vec<_>>(),
            )?;
            match output {
                Some(p) if p.exists() => Err(crate::values::bad(
                    "--output",
                    "a file that does not exist yet (machine init never overwrites)",
                    p.display().to_string(),
                )
                .into()),
                Some(p) => {
                    crate::atomic_write::write_atomic(p, text.as_bytes(), false)?;
                    super::say::progress(&format!(
                        "wrote {}: {} core{}, {} GHz, {}; network and power still to measure \
                         (jouleplan machine check {} lists them)",
                        p.display(),
                        facts.cores.value,
                        if facts.cores.value == 1 { "" } else { "s" },
                        facts
                            .frequencies_ghz
                            .value
                            .iter()
                            .map(|g| g.to_string())
                            .collect::<Vec<_>>()
                            .join(", "),
                        facts
                            .gpus
                            .as_ref()
                            .map_or("no GPU".to_string(), |(n, m)| format!("{} x {m}", n.value)),
                        p.display()
                    ));
                    if let Some(Err(why)) = &facts.gpu_clocks {
                        super::say::warning(&format!(
                            "GPU clocks not read ({why}): no gpu_clocks_mhz written, so plan has \
                             no GPU clock axis; add the supported clocks by hand"
                        ));
                    }
                    Ok(())
                }
                None => Ok(out.write_all(text.as_bytes())?),
            }
        }
        MachineAction::Check { file, json: true } => check_json(file, out),
        MachineAction::Check { file, json: false } => {
            missing_sections(file)?;
            let m = crate::search::inputs::load_machine(Some(file))?;
            let odd = crate::model::plausible::implausible(&m);
            if !odd.is_empty() {
                return Err(crate::error::InputError::Mismatch(format!(
                    "{}: implausible, not complete (a unit slip?):\n  - {}",
                    m.file.display(),
                    odd.join("\n  - ")
                ))
                .into());
            }
            describe(&m, out)?;
            Ok(())
        }
    }
}

/// `machine check --json`: the file's values, what is missing or implausible; exit 2 after
/// printing when anything is.
fn check_json(file: &str, out: &mut dyn Write) -> anyhow::Result<()> {
    let (path, text) = crate::search::inputs::machine_text(Some(file))?;
    let (m, lacks) = Machine::from_toml_for_fit(&path, &text)?;
    let mut problems: Vec<String> = lacking(lacks)
        .into_iter()
        .map(|hint| format!("missing: {hint}"))
        .collect();
    if !lacks.power && !lacks.network {
        problems.extend(
            crate::model::plausible::implausible(&m)
                .into_iter()
                .map(|p| format!("implausible: {p}")),
        );
    }
    let doc = check_out(&m, lacks, &problems);
    crate::artefact::write_sorted(&doc, out)?;
    if problems.is_empty() {
        return Ok(());
    }
    Err(crate::error::InputError::Mismatch(format!(
        "{}: not complete or not plausible:\n  - {}",
        path.display(),
        problems.join("\n  - ")
    ))
    .into())
}

/// The JSON of a machine read for `machine check --json`.
fn check_out(
    m: &Machine,
    lacks: crate::model::machine::Lacks,
    problems: &[String],
) -> crate::artefact::fit::MachineCheckOut {
    let w = |v: &[crate::units::Watts]| v.iter().map(|x| x.0).collect::<Vec<f64>>();
    let p = &m.power;
    let network = (!lacks.network).then(|| {
        [
            ("latency_s", m.network.latency.0),
            ("bandwidth_bytes_per_s", m.network.bandwidth_bytes_per_s),
            ("switch_bandwidth_bytes_per_s", m.network.switch_bytes_per_s),
            ("cv2", m.network.cv2),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    });
    let power = (!lacks.power).then(|| {
        let mut v: std::collections::BTreeMap<String, Vec<f64>> = [
            ("idle_w", w(&p.idle)),
            ("core_active_w", w(&p.core_active)),
            ("core_stall_w", w(&p.core_stall)),
            ("memory_w", vec![p.memory.0]),
            ("network_w", vec![p.network.0]),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        if m.gpus_per_node > 0 {
            v.insert("gpu_active_w".into(), vec![p.gpu_active.0]);
            v.insert("gpu_idle_w".into(), vec![p.gpu_idle.0]);
        }
        if let Some(a) = p.gpu_clock_exponent {
            v.insert("gpu_clock_exponent".into(), vec![a]);
        }
        v
    });
    crate::artefact::fit::MachineCheckOut {
        format: crate::artefact::fit::MACHINE_CHECK_FORMAT.into(),
        file: m.file.display().to_string(),
        name: m.name.clone(),
        complete: problems.is_empty(),
        problems: problems.to_vec(),
        nodes: m.max_nodes,
        cores_per_node: m.cores_per_node,
        frequencies_ghz: m.frequencies.iter().map(|f| f.ghz()).collect(),
        gpus_per_node: m.gpus_per_node,
        gpu_clocks_mhz: m.gpu_clocks_mhz.clone(),
        gpu_memory_clock_mhz: m.gpu_memory_clock_mhz,
        memory_per_node_gib: m.memory_per_node_gib,
        network,
        power,
        sources: m.sources.iter().cloned().collect(),
        unmeasured: m
            .sources
            .iter()
            .filter(|(_, s)| s.starts_with("illustrative") || s.starts_with("assumed"))
            .map(|(k, _)| k.clone())
            .collect(),
    }
}

/// What each missing section should hold, `[network]` first.
fn lacking(lacks: crate::model::machine::Lacks) -> Vec<&'static str> {
    [
        (lacks.network, crate::model::machine::NETWORK_HINT),
        (lacks.power, crate::model::machine::POWER_HINT),
    ]
    .into_iter()
    .filter(|(missing, _)| *missing)
    .map(|(_, hint)| hint)
    .collect()
}

/// Names every missing `[network]` and `[power]` section at once (a file from `machine init`
/// lacks both), with what each should hold: the same reading as `--json`'s.
fn missing_sections(file: &str) -> anyhow::Result<()> {
    if !std::path::Path::new(file).exists() {
        return Ok(()); // a bundled name, or an error load_machine will name
    }
    let (path, text) = crate::search::inputs::machine_text(Some(file))?;
    let (_, lacks) = Machine::from_toml_for_fit(&path, &text)?;
    let missing = lacking(lacks);
    if missing.is_empty() {
        return Ok(());
    }
    Err(crate::error::InputError::Mismatch(format!(
        "{}: incomplete (without [power] plans rank by time and node-hours, energy \
         unavailable, but for a profile whose energy is the GPUs' alone, planned as GPU energy; \
         without [network] they stay on one node); it lacks\n  - {}",
        path.display(),
        missing.join("\n  - ")
    ))
    .into())
}

/// The GPU clock axis in one line: the list's range and count, or that there is none.
pub fn gpu_clock_line(m: &Machine) -> String {
    let c = &m.gpu_clocks_mhz;
    match (c.first(), c.last()) {
        (Some(lo), Some(hi)) => format!(
            "GPU clocks: {} from {lo} to {hi} MHz{}",
            c.len(),
            m.gpu_memory_clock_mhz
                .map_or(String::new(), |mem| format!(" (memory {mem} MHz)"))
        ),
        _ => "GPU clocks: not given (no GPU clock axis: add gpu_clocks_mhz to [machine])".into(),
    }
}

/// Prints what plan will use from a machine.
fn describe(m: &Machine, out: &mut dyn Write) -> std::io::Result<()> {
    let ghz: Vec<String> = m.frequencies.iter().map(|f| f.ghz().to_string()).collect();
    writeln!(
        out,
        "{}: machine `{}` is complete",
        m.file.display(),
        m.name
    )?;
    writeln!(
        out,
        "  {} x {} at {} GHz, {} per node{}",
        crate::units::count(m.max_nodes, "node", "nodes"),
        crate::units::count(m.cores_per_node, "core", "cores"),
        ghz.join(", "),
        crate::units::count(m.gpus_per_node, "GPU", "GPUs"),
        m.memory_per_node_gib
            .map_or(String::new(), |g| format!(", {g} GiB per node"))
    )?;
    writeln!(
        out,
        "  network: latency {:.3e} s, bandwidth {:.3e} B/s, switch {:.3e} B/s, cv2 {}",
        m.network.latency.0,
        m.network.bandwidth_bytes_per_s,
        m.network.switch_bytes_per_s,
        m.network.cv2
    )?;
    let w = |v: &[crate::units::Watts]| {
        v.iter()
            .map(|x| format!("{}", x.0))
            .collect::<Vec<_>>()
            .join(", ")
    };
    writeln!(
        out,
        "  power: idle {} W, core active {} W, core stall {} W, memory {} W, network {} W",
        w(&m.power.idle),
        w(&m.power.core_active),
        w(&m.power.core_stall),
        m.power.memory.0,
        m.power.network.0
    )?;
    if m.gpus_per_node > 0 {
        writeln!(out, "  {}", gpu_clock_line(m))?;
        writeln!(
            out,
            "  GPU power: kernels {} W, context idle {} W, no context {}",
            m.power.gpu_active.0,
            m.power.gpu_idle.0,
            m.power.gpu_nocontext.map_or(
                "not given (unused GPUs not counted)".to_string(),
                |w| format!("{} W", w.0)
            )
        )?;
        if let Some(a) = m.power.gpu_clock_exponent {
            writeln!(
                out,
                "  GPU clock exponent: {a} (fit takes it for every GPU clock law's power)"
            )?;
        }
    }
    let mut illustrative = Vec::new();
    for (k, v) in &m.sources {
        writeln!(out, "  source {k}: {v}")?;
        if v.starts_with("illustrative") || v.starts_with("assumed") {
            illustrative.push(k.as_str());
        }
    }
    if !illustrative.is_empty() {
        writeln!(
            out,
            "  not measured (predictions that use them are illustrative): {}",
            illustrative.join(", ")
        )?;
    }
    Ok(())
}
