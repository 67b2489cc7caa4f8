//! A `profile --nodes` sweep's runs as the other stages take them: each successful run as a
//! row of the measured CSV ([`measured_row`]), and the node law fitted on its runs over several
//! nodes into its profile (MODEL.md 6c b, [`fit_into`]).

use super::fit::MachineDoc;
use super::multi_node;
use super::repeats::Repeats;
use super::reproduce::EnergyScope;
use super::runs::Measured;
use crate::artefact::measured::MeasuredRow;
use crate::artefact::profile::ProfileFile;
use crate::artefact::sweep::{RunRecord, SweepRecord};
use crate::error::{InputError, InputResult};
use crate::model::Config;
use crate::model::node_law::NodeFit;
use crate::model::workload::Profile;
use crate::units::Hertz;
use std::path::Path;

/// The energy of a run and the scope it covers (Slurm: the node; RAPL: CPU packages and DRAM).
fn energy(r: &RunRecord) -> Option<(f64, EnergyScope)> {
    let (e, domains) = r.readings.total_energy()?;
    Some((e, EnergyScope::of(&domains)))
}

/// The GPU energy of a run whose GPU clock was set: the sum of its NVML domains, the energy
/// the clock law is fitted on (MODEL.md 6e); `None` where NVML measured none.
fn gpu_energy(r: &RunRecord) -> Option<(f64, EnergyScope)> {
    r.gpu_clock_mhz?;
    let gpu = r
        .readings
        .energy_j
        .iter()
        .filter(|(d, _)| d.starts_with("gpu-"));
    let (n, sum) = gpu.fold((0, 0.0), |(n, s), (_, e)| (n + 1, s + e));
    (n > 0).then_some((sum, EnergyScope::Gpu))
}

/// A successful run as a row of the measured CSV: at a set GPU clock, with that clock and its
/// GPU energy (where NVML measured it).
pub fn measured_row(r: &RunRecord) -> MeasuredRow {
    let energy = gpu_energy(r).or_else(|| energy(r));
    MeasuredRow {
        nodes: r.nodes,
        cores: r.cores,
        freq_hz: r.freq_hz,
        gpus: r.gpus,
        time_s: r.wall_s,
        energy_j: energy.map(|e| e.0),
        gpu_energy_j: None,
        ranks: None,
        gpu_clock_mhz: r.gpu_clock_mhz.map(f64::from),
        gpu_mem_clock_mhz: None,
        energy_scope: energy.map(|e| e.1.csv_name().to_string()),
    }
}

/// The record's successful runs on more than one node, as measured rows.
fn multi_node_rows(output: &Path, rec: &SweepRecord) -> Vec<Measured> {
    rec.runs
        .iter()
        .filter(|r| r.ok && r.nodes > 1)
        .map(|r| {
            let energy = energy(r);
            Measured {
                config: Config {
                    nodes: r.nodes,
                    cores: r.cores,
                    freq: Hertz(r.freq_hz),
                    gpus: r.gpus,
                    gpu_clock_mhz: None,
                },
                time_s: r.wall_s,
                energy,
                ranks: None,
                source: format!(
                    "{}: run {} of {}",
                    output.display(),
                    r.repeat,
                    r.planned().describe()
                ),
                runs: Repeats::one(r.wall_s, energy.map(|e| e.0)),
            }
        })
        .collect()
}

/// What fitting the node law of a sweep did.
#[derive(Debug, Clone)]
pub enum SweepLaw {
    /// No successful run over several nodes: nothing to fit, the profile is unchanged.
    OneNode,
    /// The law, written into the profile.
    Fitted(Box<NodeFit>),
    /// Why there is no law (said in the profile's assumptions too).
    NotFitted(String),
    /// A law was fitted but not written: `plan` would refuse it when it reads the profile;
    /// why, and what to do (said in the profile's assumptions too).
    Refused(String),
}

/// Fits the node law on the runs over several nodes of `rec` (the sweep of `doc`, read from
/// `output` with text digest `digest`) against `machine`, and writes it into `doc`; where
/// there is no machine or no law, says why in `doc`'s assumptions.
pub fn fit_into(
    (output, digest): (&Path, String),
    (doc, rec): (&mut ProfileFile, &SweepRecord),
    machine: Option<&MachineDoc>,
    weak: bool,
) -> InputResult<SweepLaw> {
    let multi = multi_node_rows(output, rec);
    if multi.is_empty() {
        return Ok(SweepLaw::OneNode);
    }
    let counts: std::collections::BTreeSet<u32> = multi.iter().map(|m| m.config.nodes).collect();
    let list = crate::units::count_ranges(counts);
    let Some(machine) = machine else {
        let why = format!(
            "runs on {list} nodes are recorded but no node law was fitted (no --machine): \
             predictions beyond one node use the model's terms alone; run the same command again \
             with --resume --machine M to fit it (no run is made again)"
        );
        doc.assumptions.get_or_insert_default().push(why.clone());
        return Ok(SweepLaw::NotFitted(why));
    };
    network_for_nodes(machine)?;
    // The file was read once already: checked as `plan` checks it, not parsed again.
    doc.validate(output)?;
    let profile = Profile::from_file(doc.clone(), output, digest);
    let rule = super::node_fit::Rule::default();
    let law = multi_node::fit_law(
        output,
        &profile,
        &machine.machine,
        &multi,
        (true, weak),
        &rule,
    )?;
    match law {
        Some(law) => {
            doc.node_law = Some(law.to_file());
            if let Err(why) = readable(output, doc, &list) {
                // Never written where `plan` would refuse it: said, and kept in the profile.
                doc.node_law = None;
                doc.assumptions.get_or_insert_default().push(why.clone());
                return Ok(SweepLaw::Refused(why));
            }
            Ok(SweepLaw::Fitted(Box::new(law)))
        }
        None => {
            let why = format!(
                "the node law could not be fitted on the runs on {list} nodes against {}: \
                 predictions beyond one node use the model's terms alone",
                machine.file.display()
            );
            doc.assumptions.get_or_insert_default().push(why.clone());
            Ok(SweepLaw::NotFitted(why))
        }
    }
}

/// Whether the profile with its node law is one that `plan`, `slurm`, `validate` and
/// `--resume` read: the same check they run, before anything is written; else why not, and
/// what to do.
fn readable(output: &Path, doc: &ProfileFile, list: &str) -> Result<(), String> {
    let text = doc.to_text().map_err(|e| e.to_string())?;
    ProfileFile::read(output, &text).map(|_| ()).map_err(|e| {
        format!(
            "the node law fitted on the runs on {list} nodes was not written: `plan` would \
             refuse it when it reads the profile ({e}); predictions beyond one node use the \
             model's terms alone. The times over nodes are too erratic for a law: measure each \
             node count again with a larger --repeat on a quieter machine (or leave out the \
             counts that disagree), then fit with --resume"
        )
    })
}

/// Refuses a machine file without `[network]` for runs over several nodes: the node law over
/// them needs it (a sweep checks this before it runs anything).
pub fn network_for_nodes(machine: &MachineDoc) -> InputResult<()> {
    if !machine.lacks.network {
        return Ok(());
    }
    Err(InputError::Mismatch(format!(
        "{}: the machine file has no [network] section, which the node law over several nodes \
         needs; give it {}",
        machine.file.display(),
        crate::model::machine::NETWORK_HINT
    )))
}
