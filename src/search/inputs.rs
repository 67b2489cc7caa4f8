//! A plan's inputs: the machine and the workload profile (a file, or one bundled in the
//! binary by name), checked against each other and fitted together ([`Loaded`]), and the
//! space to search ([`SpaceRequest`]).

use crate::calibrate::core_fill::fit_to_machine;
use crate::calibrate::trust::{self, Accept, Trust};
use crate::error::{InputError, InputResult};
use crate::model::machine::Machine;
use crate::model::workload::Profile;
use crate::search::space::Space;
use std::path::PathBuf;

/// Machines bundled in the binary: name, file name, TOML text.
pub const BUNDLED_MACHINES: &[(&str, &str, &str)] = &[
    (
        "h100-gpu",
        "models/h100-gpu.toml",
        include_str!("../../models/h100-gpu.toml"),
    ),
    (
        "h100-node",
        "models/h100-node.toml",
        include_str!("../../models/h100-node.toml"),
    ),
    (
        "xeon-e5-2603-cluster",
        "models/xeon-e5-2603-cluster.toml",
        include_str!("../../models/xeon-e5-2603-cluster.toml"),
    ),
];

/// Profiles bundled in the binary: name, file name, JSON text.
pub const BUNDLED_PROFILES: &[(&str, &str, &str)] = &[(
    "gpu-mix-h100",
    "examples/profiles/gpu-mix-h100.json",
    include_str!("../../examples/profiles/gpu-mix-h100.json"),
)];

/// Loads a machine from a file, or a bundled one by name; the default is the first bundled.
pub fn load_machine(arg: Option<&str>) -> InputResult<Machine> {
    let (path, text) = bundled_text(arg, BUNDLED_MACHINES, "--machine")?;
    Machine::from_toml(&path, &text)
}

/// Reads the machine as `validate` reads it: as `plan` does (without `[power]` or `[network]`);
/// [`validate_reaches`] then refuses runs over several nodes without `[network]`.
pub fn load_machine_for_validate(arg: Option<&str>) -> InputResult<Machine> {
    let (path, text) = machine_text(arg)?;
    Ok(Machine::from_toml_for_plan(&path, &text)?.0)
}

/// Where `machine` has no `[power]` but `profile`'s energy is the GPU's alone and it has no
/// point without GPUs: measured at three or more GPU clocks (its clock law carries the GPU's
/// power), or at one clock with energy at every measured GPU point (the GPUs taken to draw
/// what the runs drew, all run long: [`crate::model::gpu_power::fit_drawn`]). The machine's
/// power is then read as 0, as `fit` read it ([`Machine::read_power_as_zero`]), so GPU energy
/// is planned and scored. Returns the note.
pub fn gpu_energy_without_power(machine: &mut Machine, profile: &Profile) -> Option<String> {
    let law_power = profile.gpu_clock.as_ref().and_then(|l| l.power.as_ref());
    let gpu_only = profile.energy_scope() == crate::model::energy_scope::EnergyScope::Gpu
        && !profile.has_cpu_points();
    let measured: Vec<_> = profile.baseline.iter().filter(|p| p.measured).collect();
    let one_clock = profile.gpu_clock.is_none()
        && !measured.is_empty()
        && measured.iter().all(|p| p.energy.is_some());
    if !machine.time_only() || !gpu_only || (law_power.is_none() && !one_clock) {
        return None;
    }
    machine.read_power_as_zero();
    let from = match law_power {
        Some(_) => format!("{}'s GPU clock law", profile.file.display()),
        None => format!(
            "the power {}'s runs drew (GPU energy over GPUs x time at each measured point, \
             interpolated in cores between them; the GPUs taken to draw it all run long), at \
             the GPU clock they ran at",
            profile.file.display()
        ),
    };
    Some(format!(
        "energy: the GPU's alone, from {from} ({} has no [power], read as 0 as `fit` read it: \
         the host is outside the GPU's scope, and the GPU's time outside kernels is folded \
         into its power)",
        machine.file.display()
    ))
}

/// Clears the profile's measured energies where `machine` has no `[power]`: they cannot be
/// compared with the model's node-seconds, so its checks and scores are in time only.
/// Returns whether it cleared any.
pub fn time_only_profile(machine: &Machine, profile: &mut Profile) -> bool {
    let mut cleared = false;
    if machine.time_only() {
        for p in &mut profile.baseline {
            cleared |= p.energy.take().is_some();
        }
    }
    cleared
}

/// Whether the machine read by [`load_machine_for_validate`] can score runs over at most
/// `nodes` nodes, `energy` whether any has measured energy: runs over several nodes need
/// `[network]`. Returns the note for time-only scoring of runs without energy (runs with
/// energy say in their validation that it was not scored).
pub fn validate_reaches(
    machine: &Machine,
    nodes: u32,
    energy: bool,
) -> InputResult<Option<String>> {
    one_node_without_network(machine, nodes)?;
    if !machine.time_only() {
        return Ok(None);
    }
    if energy {
        return Ok(None);
    }
    Ok(Some(format!(
        "{} has no [power] section and the runs measured no energy: time alone is scored",
        machine.file.display()
    )))
}

/// Loads a profile from a file, or a bundled one by name; the default is the first bundled.
pub fn load_profile(arg: Option<&str>) -> InputResult<Profile> {
    let (path, text) = bundled_text(arg, BUNDLED_PROFILES, "--profile")?;
    Profile::from_json(&path, &text)
}

/// A machine file's path and text (a file, or a bundled one by name), for what rewrites it or
/// reads it with sections missing.
pub fn machine_text(arg: Option<&str>) -> InputResult<(PathBuf, String)> {
    bundled_text(arg, BUNDLED_MACHINES, "--machine")
}

/// The path and text of a file, or of a bundled input by name; `flag` names it in errors.
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

/// A machine and a profile fitted to it, with what the user must be told.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The machine.
    pub machine: Machine,
    /// The profile, with derived points for the machine's core counts and frequencies.
    pub profile: Profile,
    /// What the user must be told.
    pub notes: Vec<String>,
    /// The machine check (the model check follows when the plan binds the model).
    pub trust: Trust,
}

impl Loaded {
    /// Checks that the profile was measured on the machine, and fits the profile to the
    /// machine's core counts ([`crate::calibrate::core_fill`]) and frequencies
    /// ([`Profile::fill_frequencies`]). The notes say what the profile could not measure and
    /// which points were derived.
    pub fn new(mut machine: Machine, mut profile: Profile, accept: Accept) -> InputResult<Loaded> {
        let gpu_energy = gpu_energy_without_power(&mut machine, &profile);
        let _ = time_only_profile(&machine, &mut profile);
        let trust = trust::machine_matches(&machine, &profile, accept)?;
        let mut notes: Vec<String> = profile
            .assumptions_said(machine.time_only())
            .iter()
            .map(|a| format!("profile assumption (recorded where it was measured): {a}"))
            .collect();
        notes.extend(trust.notes.iter().cloned());
        notes.extend(trust::estimates(&profile));
        notes.extend(trust::noisy_points(&profile));
        notes.extend(fit_to_machine(&mut profile, &machine));
        notes.extend(time_only_note(&machine));
        notes.extend(gpu_energy);
        Ok(Loaded {
            machine,
            profile,
            notes,
            trust: Trust {
                notes: Vec::new(),
                ..trust
            },
        })
    }

    /// Reads the machine (a file or a bundled name, read as `plan` reads it: without
    /// `[power]` it plans by time and node-hours) and the profile, then as [`Loaded::new`].
    pub fn read(
        machine: Option<&str>,
        profile: Option<&str>,
        accept: Accept,
    ) -> InputResult<Loaded> {
        let settled = settle_pair(machine, profile)?;
        let machine = machine_text(machine)?;
        let (path, text) = bundled_text(profile, BUNDLED_PROFILES, "--profile")?;
        let mut loaded = Loaded::from_texts((&machine.0, &machine.1), (&path, &text), accept)?;
        loaded.notes.splice(0..0, settled);
        Ok(loaded)
    }

    /// As [`Loaded::read`], from texts not yet written (`fit` draws its chart from the pair
    /// before it writes them); the paths name them in messages.
    pub fn from_texts(
        (machine_path, machine_text): (&std::path::Path, &str),
        (profile_path, profile_text): (&std::path::Path, &str),
        accept: Accept,
    ) -> InputResult<Loaded> {
        let (machine, _) = Machine::from_toml_for_plan(machine_path, machine_text)?;
        let profile = Profile::from_json(profile_path, profile_text)?;
        same_fit(&machine, &profile)?;
        Loaded::new(machine, profile, accept)
    }

    /// The space to search: the machine's whole space, narrowed where `request` names a set.
    /// Without cores named, the core counts outside those the profile measured are left out
    /// (nothing is extrapolated), and a note says so.
    pub fn space(&mut self, request: &SpaceRequest) -> InputResult<Space> {
        let mut space = Space::full(&self.machine, &self.profile);
        if let Some(n) = &request.nodes {
            space.nodes.clone_from(n);
        }
        match &request.cores {
            Some(c) => space.cores.clone_from(c),
            None => self
                .notes
                .extend(measured_cores_only(&mut space, &self.profile)),
        }
        if let Some(f) = &request.freqs {
            space.freqs.clone_from(f);
        }
        match &request.gpus {
            Some(g) => space.gpus.clone_from(g),
            // Judged on the cores and frequencies searched, not the machine's: a profile
            // measured only with GPUs at some core counts plans with GPUs there.
            None => {
                space.gpus =
                    Space::default_gpus(&self.machine, &self.profile, &space.cores, &space.freqs)
            }
        }
        if let Some(spec) = &request.gpu_clocks {
            space.gpu_clocks = super::gpu_clocks::parse(spec, &self.machine, &self.profile)?;
        }
        space.validate(&self.machine)?;
        let most = space.nodes.iter().copied().max().unwrap_or(1);
        one_node_without_network(&self.machine, most)?;
        Ok(space)
    }
}

/// The sets of a space to search; `None`: the machine's (cores: those the profile measured).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpaceRequest {
    /// Node counts.
    pub nodes: Option<Vec<u32>>,
    /// Cores per node.
    pub cores: Option<Vec<u32>>,
    /// Indices into the machine's frequencies.
    pub freqs: Option<Vec<usize>>,
    /// GPUs per node.
    pub gpus: Option<Vec<u32>>,
    /// `--gpu-clocks`' spec (`all`, or MHz values and ranges); `None`: the profile's
    /// reference clock.
    pub gpu_clocks: Option<String>,
}

/// Leaves the core counts the profile has no point for out of `space`; says which.
fn measured_cores_only(space: &mut Space, profile: &Profile) -> Option<String> {
    let have = profile.core_counts();
    let left_out: Vec<u64> = space
        .cores
        .iter()
        .filter(|c| !have.contains(c))
        .map(|&c| u64::from(c))
        .collect();
    if left_out.is_empty() {
        return None;
    }
    space.cores.retain(|c| have.contains(c));
    Some(format!(
        "cores {} left out: outside the core counts the profile measured, where nothing is \
         extrapolated (measure them with `jouleplan profile --cores ...`)",
        crate::model::workload::compact_list(&left_out)
    ))
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

/// Before the machine file and the profile are read: a pair that a killed `fit` left half
/// written is completed (or put back) first, or refused where it cannot be now
/// ([`crate::atomic_write::settle_inputs`]). Returns what was done.
pub fn settle_pair(machine: Option<&str>, profile: Option<&str>) -> InputResult<Vec<String>> {
    let paths: Vec<&std::path::Path> = [machine, profile]
        .into_iter()
        .flatten()
        .map(std::path::Path::new)
        .collect();
    crate::atomic_write::settle_inputs(&paths).map_err(|e| InputError::Mismatch(e.to_string()))
}

/// Refuses a profile and a machine file that two different fits wrote (`fit --profile-out
/// --machine-out` gives both one id: the profile's `fit_id`, the machine file's `[sources]
/// fit_id`). A file without an id (older, or not written as a pair) is not compared.
pub fn same_fit(machine: &Machine, profile: &Profile) -> InputResult<()> {
    let key = crate::calibrate::machine_edit::FIT_ID_KEY;
    let theirs = machine.sources.iter().find(|(k, _)| k == key);
    match (&profile.fit_id, theirs) {
        (Some(p), Some((_, m))) if p != m => Err(InputError::Mismatch(format!(
            "{} and {} were written by two different fits (the profile's fit_id is {p}, the \
             machine file's [sources] fit_id is {m}): a fit stopped between writing them, or \
             the files of two fits put together; plan the profile with the machine file its \
             fit wrote, fit again with --profile-out and --machine-out, or remove fit_id from \
             the machine file's [sources] to plan with it all the same",
            profile.file.display(),
            machine.file.display()
        ))),
        _ => Ok(()),
    }
}
