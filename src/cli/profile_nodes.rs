//! After a `profile --nodes` sweep: every run as a measured CSV (`--measured-out`) for `fit`
//! and `validate`, and the node law fitted on its runs over several nodes into the profile
//! (with `--machine`), said.

use crate::artefact::measured::{self, MEASURED_HEADER, MeasuredRow};
use crate::artefact::profile::ProfileFile;
use crate::atomic_write::write_atomic;
use crate::calibrate::fit::MachineDoc;
use crate::calibrate::sweep_law::{self, SweepLaw, measured_row};
use crate::measure::record::SweepRecord;
use std::io::Write;
use std::path::Path;

/// The profile a sweep just wrote: its text and its file, read once for the measured CSV
/// and the node law.
pub(crate) struct Written {
    text: String,
    pub(crate) doc: ProfileFile,
    rec: SweepRecord,
}

/// Reads the profile just written (its baseline may be empty: every run may have failed).
pub(crate) fn read_written(output: &Path) -> anyhow::Result<Written> {
    let text = crate::input::read_file(output)?;
    let (doc, rec) = crate::measure::record::read_written(output, &text)?;
    Ok(Written { text, doc, rec })
}

/// Before anything runs: a sweep over several nodes with `--machine` needs the file's
/// `[network]` for the node law it fits after the runs, and as many nodes as it measures.
pub(crate) fn machine_for_nodes(machine: Option<&str>, nodes: &[u32]) -> anyhow::Result<()> {
    let (Some(m), Some(&most)) = (machine, nodes.iter().max()) else {
        return Ok(());
    };
    if most < 2 {
        return Ok(());
    }
    let (file, text) = crate::search::inputs::machine_text(Some(m))?;
    let doc = MachineDoc::new(&file, text)?;
    sweep_law::network_for_nodes(&doc)?;
    if most > doc.machine.max_nodes {
        return Err(crate::error::InputError::Key {
            file: doc.file.clone(),
            key: "machine.nodes".into(),
            expected: format!(
                "at least the {most} nodes --nodes measures: the node law fitted after the runs \
                 predicts up to the machine's nodes (set nodes to the cluster's)"
            ),
            got: doc.machine.max_nodes.to_string(),
        }
        .into());
    }
    Ok(())
}

/// Fits the node law on the profile's runs over several nodes against `machine` and writes it
/// into the profile; says what it did, or why there is no law.
pub(crate) fn fit_into_profile(
    output: &Path,
    written: Written,
    machine: Option<&str>,
    weak: bool,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let Written { text, mut doc, rec } = written;
    let machine = match machine {
        Some(m) => {
            let (file, text) = crate::search::inputs::machine_text(Some(m))?;
            Some(MachineDoc::new(&file, text)?)
        }
        None => None,
    };
    let digest = crate::input::sha256_hex(&text);
    let law = sweep_law::fit_into((output, digest), (&mut doc, &rec), machine.as_ref(), weak)?;
    match &law {
        SweepLaw::OneNode => return Ok(()),
        SweepLaw::Fitted(law) => crate::report::fit::report_law(law, out)?,
        SweepLaw::NotFitted(why) => writeln!(out, "{why}")?,
        SweepLaw::Refused(why) => super::say::warning(why),
    }
    let text = doc.to_text()?;
    write_atomic(output, text.as_bytes(), false).map_err(anyhow::Error::from)
}

/// Writes every successful run of the profile at `output` as a measured CSV at `csv`, in the
/// columns `fit --measured` and `validate --measured` read; returns the rows written. With no
/// successful run nothing replaces an existing file (`None`), and a new one gets the header.
pub(crate) fn write_measured_csv(written: &Written, csv: &Path) -> anyhow::Result<Option<usize>> {
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
