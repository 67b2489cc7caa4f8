//! The journal of a sweep: each finished run appended to `OUTPUT.journal` as one JSON line and
//! fsynced, so that saving a run costs the same at run 10 and at run 10,000 (rewriting the
//! whole profile after every run grew with the runs). The profile is rewritten from the runs
//! (compacted) when the journal holds as many runs as the profile did at its last rewrite, at
//! the end of the sweep and on `--resume`, which reads the journal first: a SIGKILL at any
//! moment loses no finished run.

use crate::measure::record::RunRecord;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The journal of the profile `output`: its file name with `.journal` appended.
pub fn journal_path(output: &Path) -> PathBuf {
    let mut name = output
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".journal");
    output.with_file_name(name)
}

/// One line of the journal: the run and its index in `sweep.record.runs`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    index: usize,
    run: RunRecord,
}

/// The journal open for appending.
#[derive(Debug)]
pub struct Journal {
    file: fs::File,
    path: PathBuf,
    /// Runs appended since the profile was last rewritten.
    pub since_compaction: usize,
}

impl Journal {
    /// Opens (or creates) the journal of `output` for appending; never through a link.
    pub fn open(output: &Path) -> io::Result<Journal> {
        use std::os::unix::fs::OpenOptionsExt;
        let path = journal_path(output);
        let file = fs::OpenOptions::new()
            .append(true)
            .create(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .map_err(|e| named(&path, e))?;
        if !file.metadata().map_err(|e| named(&path, e))?.is_file() {
            return Err(named(&path, io::Error::other("not a regular file")));
        }
        crate::atomic_write::sync_dir(crate::atomic_write::folder_of(&path));
        Ok(Journal {
            file,
            path,
            since_compaction: 0,
        })
    }

    /// Appends run number `index` of the record (from 0) and waits until it is on disk.
    pub fn append(&mut self, index: usize, run: &RunRecord) -> io::Result<()> {
        let mut text = serde_json::to_string(&Line {
            index,
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

/// The runs of the journal of `output` that come after the `have` runs of its profile, and a
/// note where its last line was torn (a kill in the middle of an append: that run is lost,
/// and made again). A damaged line before the last is refused, naming the line.
pub fn read(output: &Path, have: usize) -> anyhow::Result<(Vec<RunRecord>, Option<String>)> {
    let path = journal_path(output);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((Vec::new(), None)),
        Err(e) => return Err(named(&path, e).into()),
    };
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let (mut runs, mut note) = (Vec::new(), None);
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
