//! After a `profile --nodes` sweep: the node law fitted on its runs over several nodes into
//! the profile (MODEL.md 6c b, with `--machine`), and every run as a measured CSV
//! (`--measured-out`) for `fit` and `validate`.

use crate::artefact::measured::{self, MeasuredRow};
use crate::artefact::profile::ProfileFile;
use crate::atomic_write::write_atomic;
use crate::calibrate::multi_node;
use crate::calibrate::reproduce::EnergyScope;
use crate::calibrate::validate::Measured;
use crate::measure::record::{RunRecord, SweepRecord};
use crate::model::Config;
use crate::model::machine::Machine;
use crate::model::workload::Profile;
use crate::units::Hertz;
use std::io::Write;
use std::path::Path;

/// The energy of a run and the scope it covers (Slurm: the node; RAPL: CPU packages and DRAM).
fn energy(r: &RunRecord) -> Option<(f64, EnergyScope)> {
    let (e, domains) = r.readings.total_energy()?;
    Some((e, EnergyScope::of(&domains)))
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
                runs: crate::calibrate::repeats::Repeats::one(r.wall_s, energy.map(|e| e.0)),
            }
        })
        .collect()
}

/// The profile a sweep just wrote: its text and its file, read once for the measured CSV
/// and the node law.
pub struct Written {
    text: String,
    doc: ProfileFile,
    rec: SweepRecord,
}

/// Reads the profile just written (its baseline may be empty: every run may have failed).
pub fn read_written(output: &Path) -> anyhow::Result<Written> {
    let text = crate::input::read_file(output)?;
    let (doc, rec) = crate::measure::record::read_written(output, &text)?;
    Ok(Written { text, doc, rec })
}

/// Fits the node law on the profile's runs over several nodes against `machine` and writes it
/// into the profile; says what it did, or why there is no law.
pub fn fit_into_profile(
    output: &Path,
    written: Written,
    machine: Option<&str>,
    weak: bool,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let Written { text, mut doc, rec } = written;
    let multi = multi_node_rows(output, &rec);
    if multi.is_empty() {
        return Ok(());
    }
    let counts: std::collections::BTreeSet<u32> = multi.iter().map(|m| m.config.nodes).collect();
    let list = crate::units::count_ranges(counts);
    let Some(machine) = machine else {
        let why = format!(
            "runs on {list} nodes are recorded but no node law was fitted (no --machine): \
             predictions beyond one node use the model's terms alone; add --resume --machine M \
             to fit it without running anything"
        );
        writeln!(out, "{why}")?;
        push_assumption(&mut doc, why);
        return write_doc(output, &doc);
    };
    let (file, machine_text) = super::sources::machine_text(Some(machine))?;
    let (machine, lacks) = Machine::from_toml_for_fit(&file, &machine_text)?;
    if lacks.network {
        return Err(crate::error::InputError::Mismatch(format!(
            "{}: the machine file has no [network] section, which the node law over several \
             nodes needs; give it {}",
            file.display(),
            crate::model::machine::NETWORK_HINT
        ))
        .into());
    }
    // The file was read once already: checked as `plan` checks it, not parsed again.
    doc.validate(output)?;
    let profile = Profile::from_file(doc.clone(), output, crate::input::sha256_hex(&text));
    let rule = crate::calibrate::node_fit::Rule::default();
    let law = multi_node::fit_law(output, &profile, &machine, &multi, (true, weak), &rule)?;
    match law {
        Some(law) => {
            doc.node_law = Some(law.to_file());
            if let Err(why) = readable(output, &doc, &list) {
                // Never written where `plan` would refuse it: said, and kept in the profile.
                doc.node_law = None;
                super::say::warning(&why);
                push_assumption(&mut doc, why);
                return write_doc(output, &doc);
            }
            super::fit_nodes::report_law(&law, out)?;
        }
        None => {
            let why = format!(
                "the node law could not be fitted on the runs on {list} nodes against {}: \
                 predictions beyond one node use the model's terms alone",
                file.display()
            );
            writeln!(out, "{why}")?;
            push_assumption(&mut doc, why);
        }
    }
    write_doc(output, &doc)
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

fn push_assumption(doc: &mut ProfileFile, what: String) {
    doc.assumptions.get_or_insert_default().push(what);
}

fn write_doc(output: &Path, doc: &ProfileFile) -> anyhow::Result<()> {
    let text = doc.to_text()?;
    write_atomic(output, text.as_bytes(), false).map_err(anyhow::Error::from)
}

/// The header of a measured CSV, in the columns [`measured_row`] fills.
pub const MEASURED_HEADER: &str =
    "nodes,cores,freq_hz,gpus,time_s,energy_j,gpu_energy_j,ranks,energy_scope";

/// A successful run as a row of the measured CSV.
pub fn measured_row(r: &RunRecord) -> MeasuredRow {
    let energy = energy(r);
    MeasuredRow {
        nodes: r.nodes,
        cores: r.cores,
        freq_hz: r.freq_hz,
        gpus: r.gpus,
        time_s: r.wall_s,
        energy_j: energy.map(|e| e.0),
        gpu_energy_j: None,
        ranks: None,
        energy_scope: energy.map(|e| e.1.csv_name().to_string()),
    }
}

impl Written {
    /// Every run of the record (failed ones included), in the order they were made.
    pub fn runs(&self) -> &[RunRecord] {
        &self.rec.runs
    }
}

/// Writes every successful run of the profile at `output` as a measured CSV at `csv`, in the
/// columns `fit --measured` and `validate --measured` read; returns the rows written. With no
/// successful run nothing replaces an existing file (`None`), and a new one gets the header.
pub fn write_measured_csv(written: &Written, csv: &Path) -> anyhow::Result<Option<usize>> {
    let rows: Vec<MeasuredRow> = written
        .rec
        .runs
        .iter()
        .filter(|r| r.ok)
        .map(measured_row)
        .collect();
    if rows.is_empty() && std::fs::symlink_metadata(csv).is_ok() {
        return Ok(None);
    }
    let text = if rows.is_empty() {
        format!("{MEASURED_HEADER}\n")
    } else {
        measured::to_csv(&rows)?
    };
    write_atomic(csv, text.as_bytes(), false)?;
    Ok(Some(rows.len()))
}
