//! The journal of a sweep: each finished run appended to `OUTPUT.journal` as one JSON line and
//! fsynced, so that saving a run costs the same at run 10 and at run 10,000 (rewriting the
//! whole profile after every run grew with the runs). The profile is rewritten from the runs
//! (compacted) when the journal holds as many runs as the profile did at its last rewrite, at
//! the end of the sweep and on `--resume`, which reads the journal first: a SIGKILL at any
//! moment loses no finished run.

use crate::measure::record::{RunRecord, SweepRecord};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

pub use crate::atomic_write::journal_path;

/// One line of the journal: the run, its index in `sweep.record.runs` and the sweep it belongs
/// to (the profile's `sweep.record.id`; none in a sweep begun before sweeps had one).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    index: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sweep: Option<String>,
    run: RunRecord,
}

/// The most a journal may hold: compacted whenever it holds as many runs as the profile, it
/// stays below the profile's own cap.
const MAX_JOURNAL_BYTES: u64 = 2 * crate::input::MAX_DOCUMENT_BYTES;

/// A new sweep's identity, written in its record and on each of its journal lines: this
/// process, this moment and the output, hashed.
pub fn new_sweep_id(output: &Path) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let seed = format!("{} {nanos} {}", std::process::id(), output.display());
    crate::input::sha256_hex(&seed)[..16].to_string()
}

/// The journal open for appending.
#[derive(Debug)]
pub struct Journal {
    file: fs::File,
    path: PathBuf,
    /// The sweep's identity, on every line.
    sweep: Option<String>,
    /// Runs appended since the profile was last rewritten.
    pub since_compaction: usize,
}

impl Journal {
    /// Opens (or creates) the journal of `output` for appending the lines of the sweep
    /// `sweep`; never through a link, never a pipe or device (without blocking on one), never
    /// a file with another name (emptying it would empty that file).
    pub fn open(output: &Path, sweep: Option<String>) -> io::Result<Journal> {
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        let path = journal_path(output);
        let file = fs::OpenOptions::new()
            .append(true)
            .create(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(&path)
            .map_err(|e| named(&path, e))?;
        let meta = file.metadata().map_err(|e| named(&path, e))?;
        if !meta.is_file() || meta.nlink() > 1 {
            return Err(named(
                &path,
                io::Error::other(
                    "not a journal jouleplan made (a pipe, device, or a file with more than one name): move it away",
                ),
            ));
        }
        crate::atomic_write::sync_dir(crate::atomic_write::folder_of(&path));
        Ok(Journal {
            file,
            path,
            sweep,
            since_compaction: 0,
        })
    }

    /// Appends run number `index` of the record (from 0) and waits until it is on disk.
    pub fn append(&mut self, index: usize, run: &RunRecord) -> io::Result<()> {
        let mut text = serde_json::to_string(&Line {
            index,
            sweep: self.sweep.clone(),
            run: run.clone(),
        })
        .map_err(io::Error::other)?;
        text.push('\n');
        self.file
            .write_all(text.as_bytes())
            .and_then(|()| self.file.sync_data())
            .map_err(|e| named(&self.path, e))?;
        self.since_compaction += 1;
        Ok(())
    }

    /// Empties the journal once the profile holds every run in it.
    pub fn clear(&mut self) -> io::Result<()> {
        self.file
            .set_len(0)
            .and_then(|()| self.file.sync_all())
            .map_err(|e| named(&self.path, e))?;
        self.since_compaction = 0;
        Ok(())
    }

    /// Removes the journal (the profile holds every run).
    pub fn remove(self) -> io::Result<()> {
        fs::remove_file(&self.path).map_err(|e| named(&self.path, e))
    }
}

fn named(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// The runs of the journal of `output` that come after the runs of its profile's record `rec`,
/// and a note where its last line was torn (a kill in the middle of an append: that run is
/// lost, and made again). The journal is read as an input (a plain file, no link, capped); a
/// damaged line before the last, a line of another sweep or of a point the sweep never asked
/// for is refused, naming the line.
pub fn read(output: &Path, rec: &SweepRecord) -> anyhow::Result<(Vec<RunRecord>, Option<String>)> {
    let path = journal_path(output);
    let Some(bytes) = crate::input::read_own(&path, MAX_JOURNAL_BYTES, "a sweep's journal")? else {
        return Ok((Vec::new(), None));
    };
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let (mut runs, mut note) = (Vec::new(), None);
    let have = rec.runs.len();
    for (i, l) in lines.iter().enumerate() {
        let parsed = serde_json::from_str::<Line>(l.trim_end());
        let line = match parsed {
            Ok(line) if l.ends_with('\n') => line,
            Err(e) if i + 1 < lines.len() => anyhow::bail!(
                "{}: line {} is not a run jouleplan wrote ({e}); move the file away to resume \
                 from the profile alone",
                path.display(),
                i + 1
            ),
            _ => {
                note = Some(format!(
                    "{}: its last line is torn (the sweep was killed while saving a run): that \
                     run is left out and made again",
                    path.display()
                ));
                break;
            }
        };
        belongs(&path, i + 1, &line, rec)?;
        let next = have + runs.len();
        if line.index < next {
            continue; // already in the profile (killed after the rewrite, before the clear)
        }
        if line.index > next {
            anyhow::bail!(
                "{}: line {} holds run {} but the profile and the lines before it end at run \
                 {next}; move the file away to resume from the profile alone",
                path.display(),
                i + 1,
                line.index
            );
        }
        runs.push(line.run);
    }
    Ok((runs, note))
}

/// Refuses a journal line of another sweep, or of a point its profile never asked for.
fn belongs(path: &Path, n: usize, line: &Line, rec: &SweepRecord) -> anyhow::Result<()> {
    if line.sweep != rec.id {
        let shown = |s: &Option<String>| s.clone().unwrap_or_else(|| "none".into());
        anyhow::bail!(
            "{}: line {n} holds a run of another sweep (sweep {}; the profile's is {}): it is \
             not this profile's journal; move it away to resume from the profile alone",
            path.display(),
            shown(&line.sweep),
            shown(&rec.id)
        );
    }
    let point = line.run.planned();
    if !rec.planned.iter().any(|p| p.key() == point.key()) {
        anyhow::bail!(
            "{}: line {n} holds a run on {}, a point the profile's sweep never asked for; \
             move it away to resume from the profile alone",
            path.display(),
            point.describe()
        );
    }
    Ok(())
}
