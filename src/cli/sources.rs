//! Where the machine and the workload come from: bundled inputs, loading, the machine check,
//! fitting the profile to the machine, binding and checking the model, and what every command
//! that reads them shares (output paths, exporters, job-script provenance).

use super::*;
use crate::error::{InputError, InputResult};
use crate::model::Model;
use crate::model::machine::Machine;
use crate::model::workload::Profile;
use crate::report::Exporter;
use crate::report::json::Json;
use crate::report::slurm;
use crate::report::text::Text;
use clap::Args;
use std::path::{Path, PathBuf};

/// Machines bundled in the binary: name, file name, TOML text.
pub const BUNDLED_MACHINES: &[(&str, &str, &str)] = &[
    (
        "xeon-phi-57c",
        "models/xeon-phi-57c.toml",
        include_str!("../../models/xeon-phi-57c.toml"),
    ),
    (
        "xeon-e5-2603-cluster",
        "models/xeon-e5-2603-cluster.toml",
        include_str!("../../models/xeon-e5-2603-cluster.toml"),
    ),
];

/// Profiles bundled in the binary: name, file name, JSON text.
pub const BUNDLED_PROFILES: &[(&str, &str, &str)] = &[(
    "spmv-xeon-phi",
    "examples/profiles/spmv-xeon-phi.json",
    include_str!("../../examples/profiles/spmv-xeon-phi.json"),
)];

/// Where the machine and the workload come from.
#[derive(Debug, Args, Default, Clone)]
pub struct SourceArgs {
    /// Machine description (TOML) or the name of a bundled one [default: xeon-phi-57c].
    #[arg(long, value_name = "FILE")]
    pub machine: Option<String>,
    /// Workload profile (JSON) or the name of a bundled one [default: spmv-xeon-phi].
    #[arg(long, value_name = "FILE")]
    pub profile: Option<String>,
    /// Plan a profile against a machine file that does not describe the node it was measured
    /// on (the recommendation then says so).
    #[arg(long)]
    pub other_machine: bool,
    /// Plan even where the model cannot reproduce the profile's own measured points or most of
    /// a point's time is unexplained (the recommendation then says so).
    #[arg(long)]
    pub accept_model_error: bool,
    /// Weak scaling: each rank keeps the profile's work per core, so the problem grows with
    /// the nodes (a profile whose node law was fitted with `fit --weak` is weak without it).
    #[arg(long)]
    pub weak: bool,
    /// Nominal coverage of the intervals at node counts not measured: 0.8 (the default) holds
    /// the measured time in 4 of 5 cases where the errors behave as on the held-out data.
    #[arg(long, value_name = "FRACTION", value_parser = super::values::parse_coverage)]
    pub coverage: Option<f64>,
}

impl SourceArgs {
    pub(crate) fn accept(&self) -> trust::Accept {
        trust::Accept {
            other_machine: self.other_machine,
            model_error: self.accept_model_error,
        }
    }
}

/// The inputs and the output format.
#[derive(Debug, Args, Default)]
pub struct InputArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Loads a machine from a file, or a bundled one by name; the default is the first bundled.
pub fn load_machine(arg: Option<&str>) -> InputResult<Machine> {
    load_bundled(arg, BUNDLED_MACHINES, "--machine", Machine::from_toml)
}

/// Loads a profile from a file, or a bundled one by name; the default is the first bundled.
pub fn load_profile(arg: Option<&str>) -> InputResult<Profile> {
    load_bundled(arg, BUNDLED_PROFILES, "--profile", Profile::from_json)
}

pub(crate) fn load_bundled<T>(
    arg: Option<&str>,
    bundled: &[(&str, &str, &str)],
    flag: &str,
    parse: fn(&Path, &str) -> InputResult<T>,
) -> InputResult<T> {
    let (path, text) = bundled_text(arg, bundled, flag)?;
    parse(&path, &text)
}

/// A machine file's path and text (a file, or a bundled one by name), for commands that
/// rewrite it.
pub fn machine_text(arg: Option<&str>) -> InputResult<(PathBuf, String)> {
    bundled_text(arg, BUNDLED_MACHINES, "--machine")
}

/// The path and text of a file, or of a bundled input by name.
fn bundled_text(
    arg: Option<&str>,
    bundled: &[(&str, &str, &str)],
    flag: &str,
) -> InputResult<(PathBuf, String)> {
    let name = arg.unwrap_or(bundled[0].0);
    let path = PathBuf::from(name);
    let names = || bundled.iter().map(|b| b.0).collect::<Vec<_>>().join(", ");
    if path.exists() || arg.is_some_and(|a| a.contains('/') || a.contains('.')) {
        let text = crate::input::read_file(&path).map_err(|e| match e {
            InputError::Read { reason, .. } if reason.kind() == std::io::ErrorKind::NotFound => {
                InputError::Mismatch(format!(
                    "{flag} {name}: cannot read: {reason} (give an existing file, or a bundled \
                     name: {})",
                    names()
                ))
            }
            other => other,
        })?;
        return Ok((path, text));
    }
    match bundled.iter().find(|b| b.0 == name) {
        Some((_, file, text)) => Ok((PathBuf::from(format!("{file} (bundled)")), text.to_string())),
        None => Err(InputError::Argument {
            flag: flag.into(),
            expected: format!("a file, or a bundled name: {}", names()),
            got: name.into(),
        }),
    }
}

/// A machine and a profile fitted to it.
pub struct Loaded {
    /// The machine.
    pub machine: Machine,
    /// The profile, with derived points.
    pub profile: Profile,
    /// What the user must be told.
    pub notes: Vec<String>,
    /// The machine check (the model check follows in [`bind`]).
    pub trust: trust::Trust,
}

/// Loads the machine and the profile, checks that the profile was measured on that machine,
/// and fits the profile to the machine's core counts ([`crate::calibrate::core_fill`]) and
/// frequencies ([`Profile::fill_frequencies`]). The notes say what the profile could not
/// measure and which points were derived.
pub fn load_sources(src: &SourceArgs) -> InputResult<Loaded> {
    let (path, text) = machine_text(src.machine.as_deref())?;
    let (machine, _) = Machine::from_toml_for_plan(&path, &text)?;
    let mut profile = load_profile(src.profile.as_deref())?;
    if machine.time_only() {
        // Measured energies cannot be compared with node-seconds: time only.
        for p in &mut profile.baseline {
            p.energy = None;
        }
    }
    let trust = trust::machine_matches(&machine, &profile, src.accept())?;
    let mut notes: Vec<String> = profile
        .assumptions
        .iter()
        .map(|a| format!("profile assumption: {a}"))
        .collect();
    notes.extend(trust.notes.iter().cloned());
    notes.extend(trust::estimates(&profile));
    notes.extend(fit_to_machine(&mut profile, &machine));
    notes.extend(time_only_note(&machine));
    Ok(Loaded {
        machine,
        profile,
        notes,
        trust: trust::Trust {
            notes: Vec::new(),
            ..trust
        },
    })
}

/// What a machine without `[power]` means for the plan, said once.
fn time_only_note(machine: &Machine) -> Option<String> {
    machine.time_only().then(|| {
        format!(
            "energy unavailable: {} has no [power] section, so configurations are ranked by time \
             and node-hours (the front is time against node-hours; --budget cannot be used); {}",
            machine.file.display(),
            crate::model::machine::POWER_HINT
        )
    })
}

/// Refuses node counts above one when the machine file has no `[network]`.
pub fn one_node_without_network(machine: &Machine, nodes: u32) -> InputResult<()> {
    if !machine.lacks.network || nodes <= 1 {
        return Ok(());
    }
    Err(InputError::Mismatch(format!(
        "{}: no [network] section, which {nodes} nodes need (one node plans without it): give \
         it {}",
        machine.file.display(),
        crate::model::machine::NETWORK_HINT
    )))
}

/// Fits a profile to a machine: derived points for the machine's core counts inside the
/// measured range, then for its frequencies. Returns what was done.
pub fn fit_to_machine(profile: &mut Profile, machine: &Machine) -> Vec<String> {
    let wanted: Vec<u32> = (1..=machine.cores_per_node).collect();
    let mut notes = crate::calibrate::core_fill::fill_cores(profile, &wanted).1;
    notes.extend(profile.fill_frequencies(&machine.frequencies));
    notes
}

/// Binds the model and checks it against the profile's own measurements (MODEL.md 6b);
/// appends what the user must be told to `notes`.
pub fn bind<'a>(
    machine: &'a Machine,
    profile: &'a Profile,
    src: &SourceArgs,
    trust: &mut trust::Trust,
    notes: &mut Vec<String>,
) -> InputResult<Model<'a>> {
    let mut model = Model::new(machine, profile)?;
    if src.weak {
        model.set_weak(true)?;
    }
    if let Some(c) = src.coverage {
        model.set_coverage(c);
    }
    if let Some(law) = &profile.node_law {
        notes.push(format!(
            "node law fitted over nodes {}: {} (leave-one-out error {}); predictions at every \
             node count not measured carry an {:.0}% interval",
            law.measured_nodes
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            law.law().describe(),
            if law.folds.is_empty() {
                "none: no count to leave out".to_string()
            } else {
                format!("{:.2}%", 100.0 * law.loo_rel())
            },
            100.0 * model.coverage()
        ));
    }
    if model.is_weak() {
        notes.push(
            "weak scaling: each rank keeps the profile's work per core, so the problem grows \
             with the nodes"
                .into(),
        );
    }
    trust::check_model(&model, src.accept(), trust)?;
    notes.append(&mut trust.notes);
    Ok(model)
}

/// The warnings a recommendation at `nodes` nodes carries.
pub(crate) fn warnings_for(trust: &trust::Trust, nodes: u32) -> Vec<String> {
    let mut w = trust.warnings.clone();
    if nodes > 1 {
        w.extend(trust.multi_node_warnings.iter().cloned());
    }
    w
}

pub(crate) fn provenance(
    machine: &Machine,
    profile: &Profile,
    reason: String,
) -> slurm::Provenance {
    slurm::Provenance {
        machine: (
            machine.name.clone(),
            machine.file.display().to_string(),
            machine.digest.clone(),
        ),
        profile: (
            profile.program.clone(),
            profile.file.display().to_string(),
            profile.digest.clone(),
        ),
        reason,
        warnings: Vec::new(),
        mem_per_node_gib: None,
        unmeasured: unmeasured(machine, profile),
        layout: profile.layout,
        energy_scope: profile.energy_scope(),
    }
}

/// What a prediction rests on that was not measured: the machine file's values its
/// `[sources]` call illustrative or assumed, and the profile's assumptions.
fn unmeasured(machine: &Machine, profile: &Profile) -> Vec<String> {
    let mut v: Vec<String> = machine
        .sources
        .iter()
        .filter(|(_, s)| s.starts_with("illustrative") || s.starts_with("assumed"))
        .map(|(k, s)| format!("machine {k}: {s}"))
        .collect();
    v.extend(
        profile
            .assumptions
            .iter()
            .map(|a| format!("profile assumption: {a}")),
    );
    v
}

/// Writes a file atomically, naming it when that fails.
pub(crate) fn save(path: &Path, bytes: &[u8], executable: bool) -> anyhow::Result<()> {
    crate::atomic_write::write_atomic(path, bytes, executable).map_err(anyhow::Error::from)
}

/// Loads the sources, binds and checks the model, prints the notes to standard error, and
/// runs `f` with the model and the trust figures (for the commands that print no plan).
pub(crate) fn with_model<T>(
    src: &SourceArgs,
    f: impl FnOnce(&Model<'_>, &trust::Trust) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let Loaded {
        machine,
        profile,
        mut notes,
        mut trust,
    } = load_sources(src)?;
    let model = bind(&machine, &profile, src, &mut trust, &mut notes)?;
    for n in &notes {
        say::note(n);
    }
    f(&model, &trust)
}

pub(crate) fn exporter(json: bool, max_rows: Option<usize>) -> Box<dyn Exporter> {
    if json {
        Box::new(Json)
    } else {
        Box::new(Text { max_rows })
    }
}
