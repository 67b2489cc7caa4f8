//! The flags that name the machine and the workload, and what every command that reads them
//! shares (exporters, job-script provenance, output files).

use super::say;
use crate::calibrate::trust::{Accept, Checks, Trust, bind};
use crate::error::InputResult;
use crate::model::Model;
use crate::model::machine::Machine;
use crate::model::workload::Profile;
use crate::report::Exporter;
use crate::report::json::Json;
use crate::report::slurm;
use crate::report::text::Text;
use crate::search::inputs::Loaded;
use clap::Args;
use std::path::Path;

/// Where the machine and the workload come from.
#[derive(Debug, Args, Default, Clone)]
pub struct SourceArgs {
    /// Machine description (TOML) or the name of a bundled one [default: h100-gpu].
    #[arg(long, value_name = "FILE")]
    pub machine: Option<String>,
    /// Workload profile (JSON) or the name of a bundled one [default: gpu-mix-h100].
    #[arg(long, value_name = "FILE")]
    pub profile: Option<String>,
    /// Use a profile with a machine file that does not describe the node it was measured on
    /// (a warning then says so, on standard error, in `--json` and in the job script).
    #[arg(long)]
    pub other_machine: bool,
    /// Go on even where the model cannot reproduce the profile's own measured points or most
    /// of a point's time is unexplained (a warning then says so, on standard error, in
    /// `--json` and in the job script).
    #[arg(long)]
    pub accept_model_error: bool,
    /// Weak scaling: each rank keeps the profile's work per core, so the problem grows with
    /// the nodes (a profile whose node law was fitted with `fit --weak` is weak without it).
    #[arg(long)]
    pub weak: bool,
    /// Nominal coverage of the intervals at node counts not measured: 0.8 (the default) holds
    /// the measured time in 4 of 5 cases where the errors behave as on the held-out data.
    #[arg(long, value_name = "FRACTION", value_parser = crate::values::parse_coverage)]
    pub coverage: Option<f64>,
}

impl SourceArgs {
    /// What the flags accept, weak scaling and the coverage, as the stages take them.
    pub(crate) fn checks(&self) -> Checks {
        Checks {
            accept: Accept {
                other_machine: self.other_machine,
                model_error: self.accept_model_error,
            },
            weak: self.weak,
            coverage: self.coverage,
        }
    }

    /// The machine and profile files the flags name (a bundled name is no file), each with its
    /// flag: the inputs no output of the command may be.
    pub(crate) fn files(&self) -> Vec<(&'static str, &Path)> {
        [("--machine", &self.machine), ("--profile", &self.profile)]
            .into_iter()
            .filter_map(|(flag, p)| Some((flag, Path::new(p.as_deref()?))))
            .collect()
    }

    /// Loads the machine and the profile the flags name, checked and fitted together.
    pub(crate) fn load(&self) -> InputResult<Loaded> {
        Loaded::read(
            self.machine.as_deref(),
            self.profile.as_deref(),
            self.checks().accept,
        )
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

pub(crate) fn provenance(
    machine: &Machine,
    profile: &Profile,
    reason: String,
) -> slurm::Provenance {
    let (energy_scope, energy_read) = profile.planned_energy(machine);
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
        energy_scope,
        energy_read,
        gpu_clock: None,
        deadline: None,
        cpu_freq_choice: machine.frequencies.len() > 1,
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
            .assumptions_said(machine.time_only())
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
    f: impl FnOnce(&Model<'_>, &Trust) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let Loaded {
        machine,
        profile,
        mut notes,
        mut trust,
    } = src.load()?;
    let model = bind(&machine, &profile, &src.checks(), &mut trust, &mut notes)?;
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
