//! The profile a sweep writes (atomically, from its runs and its journal's), the one
//! `--resume` reads with the runs its journal holds beyond it, and the size it may reach: never
//! more than jouleplan reads back.

use super::journal::{self, Journal};
use super::options::*;
use crate::input::MAX_DOCUMENT_BYTES;
use crate::measure::Readings;
use crate::measure::record::{self, RunRecord, SweepRecord};

/// Loads the file to resume, with the runs its journal holds beyond it, or checks that a fresh
/// sweep overwrites nothing.
pub(super) fn load_existing(
    o: &Options,
    log: &mut dyn FnMut(&str),
) -> anyhow::Result<Option<SweepRecord>> {
    let jpath = journal::journal_path(&o.output);
    if !o.output.exists() {
        if std::fs::symlink_metadata(&jpath).is_ok() {
            return Err(crate::error::InputError::Mismatch(format!(
                "{} exists but {} does not: it holds the runs of a sweep whose profile is gone; \
                 move it away, or choose another --output",
                jpath.display(),
                o.output.display()
            ))
            .into());
        }
        return Ok(None);
    }
    if !o.resume {
        return Err(crate::error::InputError::Mismatch(format!(
            "{} exists: add --resume to continue it, or choose another --output",
            o.output.display()
        ))
        .into());
    }
    let text = crate::input::read_file(&o.output)?;
    let (_, mut rec) = record::read_written(&o.output, &text)?;
    let (runs, note) = journal::read(&o.output, &rec)?;
    if let Some(n) = note {
        log(&n);
    }
    if !runs.is_empty() {
        log(&format!(
            "{} read from {}",
            crate::units::count(runs.len() as u64, "finished run", "finished runs"),
            jpath.display()
        ));
    }
    rec.runs.extend(runs);
    rec.validate()
        .map_err(|e| anyhow::anyhow!("{} with its journal: {e}", o.output.display()))?;
    Ok(Some(rec))
}

/// Writes the profile from every run so far, when it stays within what jouleplan reads back;
/// returns its size in bytes.
pub(super) fn save(o: &Options, rec: &SweepRecord) -> anyhow::Result<usize> {
    let text = record::profile_file(&o.header, rec).to_text()?;
    if text.len() as u64 > MAX_DOCUMENT_BYTES {
        anyhow::bail!(
            "{}: with {} runs the profile would be {}, over the {} jouleplan reads back, so it \
             was not rewritten (every run is kept in {}); measure further runs into another \
             --output",
            o.output.display(),
            rec.runs.len(),
            mib(text.len()),
            mib(MAX_DOCUMENT_BYTES as usize),
            journal::journal_path(&o.output).display()
        );
    }
    crate::atomic_write::write_atomic(&o.output, text.as_bytes(), false)?;
    crate::atomic_write::sync_dir(crate::atomic_write::folder_of(&o.output));
    Ok(text.len())
}

/// Rewrites the profile from the record (the journal's runs included), then empties the
/// journal; returns the profile's size.
pub(super) fn compact(o: &Options, rec: &SweepRecord, j: &mut Journal) -> anyhow::Result<usize> {
    let bytes = save(o, rec)?;
    j.clear()?;
    Ok(bytes)
}

fn mib(bytes: usize) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
}

/// The bytes a run takes in the profile: its pretty JSON, indented as `sweep.record.runs[i]`
/// (8 spaces more a line), and the separator.
pub(super) fn bytes_in_profile(run: &RunRecord) -> usize {
    let text = serde_json::to_string_pretty(run).unwrap_or_default();
    text.len() + 8 * text.lines().count() + 2
}

/// Before anything runs: refuses a sweep whose profile would be over what jouleplan reads back
/// even if each run kept nothing but its point, wall time and layout (exit 2, naming what to
/// change). What a run's readings add is watched as the sweep goes ([`room_for_a_run`]).
pub(super) fn check_size(o: &Options, rec: &SweepRecord, todo: &[Todo]) -> anyhow::Result<()> {
    let base = record::profile_file(&o.header, rec).to_text()?.len();
    let least: usize = todo
        .iter()
        .map(|&t| bytes_in_profile(&skeleton(o, t)))
        .sum();
    let total = base + least;
    if total as u64 <= MAX_DOCUMENT_BYTES {
        return Ok(());
    }
    Err(crate::error::InputError::Mismatch(format!(
        "{}: {} runs would make a profile of at least {} (the runs' points and times alone), \
         over the {} jouleplan reads back; nothing was run: ask for fewer runs (a smaller \
         --repeat, fewer --nodes, --cores, --freqs or --gpus values), or split the sweep over \
         several --output files",
        o.output.display(),
        todo.len(),
        mib(total),
        mib(MAX_DOCUMENT_BYTES as usize)
    ))
    .into())
}

/// The least a run of `t` records: its point, a wall time and end time with every digit, its
/// layout and host list.
fn skeleton(o: &Options, (p, k): Todo) -> RunRecord {
    RunRecord {
        nodes: p.nodes,
        cores: p.cores,
        freq_hz: p.freq_hz,
        gpus: p.gpus,
        repeat: k,
        ok: true,
        failure: None,
        wall_s: 1.234_567_890_123_456_7,
        readings: Readings::default(),
        stderr_tail: String::new(),
        finished_unix: 1_700_000_000,
        layout: Some(record::RankLayout {
            ranks_per_node: o.ranks,
            threads_per_rank: p.cores / o.ranks.max(1),
        }),
        hosts: Vec::new(),
        host_list: (p.nodes > 1).then_some(record::HostsRef {
            list: 0,
            count: p.nodes as usize,
        }),
        gpu_clock_mhz: p.gpu_clock_mhz,
    }
}

/// Room kept below the cap for the next run and the baseline points it may add: a failed run
/// keeps up to 16 KiB of stderr, which JSON escapes may make six times longer.
const RESERVE: usize = 1 << 20;

/// Whether a profile of `bytes` has room for one more run below what jouleplan reads back.
pub(super) fn room_for_a_run(bytes: usize) -> bool {
    (bytes + RESERVE) as u64 <= MAX_DOCUMENT_BYTES
}
