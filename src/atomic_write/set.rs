//! Outputs written as a set, all or none (a profile and the machine file fitted with it). Every
//! new content is written and fsynced beside its output and every old content kept under a
//! second name; then a marker goes beside each output, `.NAME.jouleplan-set`, naming every
//! output of the set, its new content's temporary and its old content's second name; then the
//! renames; then the markers go. A kill in the middle leaves the markers: the next command that
//! takes one of the outputs' locks, or reads one of them ([`settle_inputs`]), completes the set
//! (every new content still there), or else puts every old content back, so no reader is ever
//! given a pair from two writes. A marker jouleplan did not write (a link, another owner's,
//! one naming files outside its outputs' folders) is refused, never acted on.

use super::stale::is_temporary;
use super::{OutputLock, Staged, TMP_SUFFIX, folder_of, named, sync_dir, why};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The suffix of the marker of a set being put in place.
pub const SET_SUFFIX: &str = ".jouleplan-set";

const SET_FORMAT: &str = "jouleplan-set/1";

/// The most a marker may hold (a set names a few files).
const MAX_MARKER_BYTES: u64 = 64 << 10;

/// The marker of a set beside `output`: `.NAME.jouleplan-set`.
pub fn marker_path(output: &Path) -> PathBuf {
    let name = output
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    output.with_file_name(format!(".{name}{SET_SUFFIX}"))
}

/// What a marker holds: every output of the set.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    format: String,
    files: Vec<Entry>,
}

/// One output of a set.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    /// The output, as an absolute path.
    target: PathBuf,
    /// The file name (beside it) of its new content's temporary, and that file's inode.
    new: String,
    new_inode: u64,
    /// The file name (beside it) of its old content's second name (none: it was new).
    old: Option<String>,
}

/// Outputs written as a set: every new content staged (written and fsynced beside its
/// output), not yet in place. [`StagedSet::commit`] puts them in place, all or none.
#[derive(Debug)]
pub struct StagedSet {
    pub(super) files: Vec<Staged>,
}

type Kept = Option<tempfile::NamedTempFile<()>>;

impl StagedSet {
    /// Puts every staged file in place. The old content of each output is kept (a hard link,
    /// or a copy where links cannot be made) until all are in place, and a marker beside each
    /// output says the set is being placed (see the module); where one cannot be put in place,
    /// those already put are given their old content back (or removed, where they are new),
    /// and the error names what was and was not written.
    pub fn commit(self) -> io::Result<()> {
        let nothing = |f: &Staged, e: io::Error| {
            let e = named(&f.shown, e);
            io::Error::new(e.kind(), format!("{e}; nothing was written"))
        };
        let mut kept: Vec<Kept> = Vec::with_capacity(self.files.len());
        let mut entries = Vec::with_capacity(self.files.len());
        for f in &self.files {
            let old = keep_old(&f.target).map_err(|e| nothing(f, e))?;
            entries.push(entry(f, old.as_ref()).map_err(|e| nothing(f, e))?);
            kept.push(old);
        }
        let markers = place_markers(&entries).map_err(|e| nothing(&self.files[0], e))?;
        let mut placed: Vec<(&Path, &Path, Kept)> = Vec::new();
        for (f, old) in self.files.iter().zip(kept) {
            if let Err(e) = fs::rename(f.tmp.path(), &f.target) {
                let failed = named(&f.shown, e);
                let err = undo(failed, placed);
                remove_all(&markers);
                return Err(err);
            }
            sync_dir(folder_of(&f.target));
            placed.push((&f.shown, &f.target, old));
        }
        remove_all(&markers);
        // The old contents' second names go as `placed` drops.
        Ok(())
    }
}

/// The marker's entry of a staged file.
fn entry(f: &Staged, old: Option<&tempfile::NamedTempFile<()>>) -> io::Result<Entry> {
    let name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    Ok(Entry {
        target: absolute(&f.target)?,
        new: name(f.tmp.path()),
        new_inode: f.tmp.as_file().metadata()?.ino(),
        old: old.map(|o| name(o.path())),
    })
}

/// `path` with its folder made absolute (links in the folder resolved), its name kept.
fn absolute(path: &Path) -> io::Result<PathBuf> {
    let dir = fs::canonicalize(folder_of(path))?;
    Ok(dir.join(path.file_name().unwrap_or_default()))
}

/// A marker beside every output of the set, each naming the whole set, fsynced; on failure
/// those placed are removed.
fn place_markers(entries: &[Entry]) -> io::Result<Vec<PathBuf>> {
    let text = serde_json::to_vec(&Manifest {
        format: SET_FORMAT.into(),
        files: entries.to_vec(),
    })
    .map_err(io::Error::other)?;
    let mut placed = Vec::new();
    for e in entries {
        match place_marker(&e.target, &text) {
            Ok(m) => placed.push(m),
            Err(err) => {
                remove_all(&placed);
                return Err(err);
            }
        }
    }
    Ok(placed)
}

fn place_marker(target: &Path, text: &[u8]) -> io::Result<PathBuf> {
    let marker = marker_path(target);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(TMP_SUFFIX)
        .tempfile_in(folder_of(target))?;
    tmp.write_all(text)?;
    tmp.as_file().sync_all()?;
    tmp.persist_noclobber(&marker).map_err(|e| e.error)?;
    sync_dir(folder_of(target));
    Ok(marker)
}

fn remove_all(markers: &[PathBuf]) {
    for m in markers {
        let _ = fs::remove_file(m);
        sync_dir(folder_of(m));
    }
}

/// A hidden second name for the current content of `target` (none where it does not exist),
/// removed when dropped.
fn keep_old(target: &Path) -> io::Result<Kept> {
    if fs::symlink_metadata(target).is_err() {
        return Ok(None);
    }
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(TMP_SUFFIX)
        .make_in(folder_of(target), |p| {
            fs::hard_link(target, p).or_else(|e| {
                if e.kind() == io::ErrorKind::AlreadyExists {
                    return Err(e);
                }
                let mut from = fs::File::open(target)?;
                let mut to = fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(p)?;
                io::copy(&mut from, &mut to)?;
                to.sync_all()
            })
        })
        .map(Some)
}

/// Gives the outputs already put in place their old content back after `failed`, and says
/// which were and were not restored.
fn undo(failed: io::Error, placed: Vec<(&Path, &Path, Kept)>) -> io::Error {
    let (mut back, mut written) = (Vec::new(), Vec::new());
    for (shown, target, old) in placed {
        let restored = match old {
            Some(old) => old.persist(target).map(|_| ()).map_err(|e| e.error),
            None => fs::remove_file(target),
        };
        match restored {
            Ok(()) => back.push(shown.display().to_string()),
            Err(e) => written.push(format!("{} ({})", shown.display(), why(&e))),
        }
    }
    let mut msg = format!("{failed}; nothing of this set was written");
    if !written.is_empty() {
        msg = format!(
            "{failed}; written all the same, their old content could not be put back: {}",
            written.join(", ")
        );
    }
    if !back.is_empty() {
        let verb = if back.len() == 1 {
            "it was"
        } else {
            "they were"
        };
        msg += &format!(" ({} left as {verb})", back.join(", "));
    }
    io::Error::new(failed.kind(), msg)
}

/// Settles the set a killed writer left half in place beside the inputs `paths` (each
/// checked once), before they are read: see [`settle`]. Returns what was done.
pub fn settle_inputs(paths: &[&Path]) -> io::Result<Vec<String>> {
    let mut said = Vec::new();
    for p in paths {
        said.extend(settle(p, false)?);
    }
    Ok(said)
}

/// Where a marker lies beside `output`: completes its set where every new content is still
/// there (in place or beside its output), else puts every old content back; then removes the
/// markers and the old contents' second names. The outputs' locks are taken for it (`holding`:
/// the caller holds `output`'s). Returns what was done; an error names the marker and what to
/// do where it is not one jouleplan wrote, or another command holds an output of the set.
pub(super) fn settle(output: &Path, holding: bool) -> io::Result<Option<String>> {
    let marker = marker_path(output);
    if fs::symlink_metadata(&marker).is_err() {
        return Ok(None);
    }
    let files = read_marker(&marker, output)?;
    let me = absolute(output).map_err(|e| refused(&marker, &why(&e)))?;
    let mut locks = Vec::new();
    for e in &files {
        if !(holding && e.target == me) {
            let lock = OutputLock::take_bare(&e.target).map_err(|err| {
                io::Error::other(format!(
                    "{} says a set of outputs a killed jouleplan began to replace is half in \
                     place, and it cannot be settled now: {err}",
                    marker.display()
                ))
            })?;
            locks.push(lock);
        }
    }
    let said = finish(&files).map_err(|e| refused(&marker, &e.to_string()))?;
    for e in &files {
        let _ = fs::remove_file(marker_path(&e.target));
        if let Some(old) = &e.old {
            let _ = fs::remove_file(folder_of(&e.target).join(old));
        }
        sync_dir(folder_of(&e.target));
    }
    drop(locks);
    Ok(Some(said))
}

/// Reads a marker: a plain file of this user's with one name, a set naming `output`, each
/// temporary a name of jouleplan's beside its output.
fn read_marker(marker: &Path, output: &Path) -> io::Result<Vec<Entry>> {
    let bytes = match crate::input::read_own(marker, MAX_MARKER_BYTES, "a set marker") {
        Ok(Some(b)) => b,
        Ok(None) => return Err(refused(marker, "it went while it was read")),
        Err(e) => return Err(refused(marker, &e.to_string())),
    };
    let meta = fs::symlink_metadata(marker)?;
    // SAFETY: geteuid has no preconditions.
    if meta.uid() != unsafe { libc::geteuid() } {
        return Err(refused(marker, "it belongs to another user"));
    }
    let m: Manifest =
        serde_json::from_slice(&bytes).map_err(|e| refused(marker, &format!("{e}")))?;
    if m.format != SET_FORMAT || m.files.is_empty() || m.files.len() > 16 {
        return Err(refused(marker, "not a set of outputs"));
    }
    let me = absolute(output).map_err(|e| refused(marker, &why(&e)))?;
    if !m.files.iter().any(|e| e.target == me) {
        return Err(refused(marker, "it does not name the output beside it"));
    }
    for e in &m.files {
        let name = e.target.file_name().unwrap_or_default().to_string_lossy();
        let ours = |n: &str| is_temporary(n, &name);
        if !e.target.is_absolute() || !ours(&e.new) || e.old.as_deref().is_some_and(|o| !ours(o)) {
            return Err(refused(marker, "it names files jouleplan does not make"));
        }
    }
    Ok(m.files)
}

fn refused(marker: &Path, why: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "{}: not a marker of a set jouleplan was writing ({why}); jouleplan leaves the \
             outputs beside it alone: remove it (`rm {}`) once no jouleplan is running",
            marker.display(),
            marker.display()
        ),
    )
}

/// Where an output of a set stands.
#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    /// Its new content is in place.
    Placed,
    /// Its new content is still beside it.
    Pending,
    /// Neither: its new content is gone.
    Lost,
}

fn state(e: &Entry) -> State {
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let inode = |p: &Path, own: bool| {
        fs::symlink_metadata(p)
            .ok()
            .filter(|m| m.is_file() && (!own || m.uid() == me))
            .map(|m| m.ino())
    };
    if inode(&e.target, false) == Some(e.new_inode) {
        State::Placed
    } else if inode(&folder_of(&e.target).join(&e.new), true) == Some(e.new_inode) {
        State::Pending
    } else {
        State::Lost
    }
}

/// Refuses a file that is not a plain file of this user's.
fn own_file(p: &Path) -> io::Result<()> {
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    match fs::symlink_metadata(p) {
        Ok(m) if m.is_file() && m.uid() == me => Ok(()),
        Ok(_) => Err(io::Error::other("not a plain file of this user's")),
        Err(e) => Err(e),
    }
}

/// Completes the set, or puts it back; says which.
fn finish(files: &[Entry]) -> io::Result<String> {
    let states: Vec<State> = files.iter().map(state).collect();
    let names = files
        .iter()
        .map(|e| e.target.display().to_string())
        .collect::<Vec<_>>()
        .join(" and ");
    if !states.contains(&State::Lost) {
        for (e, s) in files.iter().zip(&states) {
            if *s == State::Pending {
                fs::rename(folder_of(&e.target).join(&e.new), &e.target)?;
                sync_dir(folder_of(&e.target));
            }
        }
        return Ok(format!(
            "completed writing {names}, which a killed jouleplan left half written"
        ));
    }
    for (e, s) in files.iter().zip(&states) {
        let dir = folder_of(&e.target);
        match (s, &e.old) {
            (State::Placed, Some(old)) => own_file(&dir.join(old))
                .and_then(|()| fs::rename(dir.join(old), &e.target))
                .map_err(|err| {
                    io::Error::new(
                        err.kind(),
                        format!(
                            "{} holds the new content of a write that did not finish and its old \
                         content ({old}) cannot be put back: {}; write it again",
                            e.target.display(),
                            why(&err)
                        ),
                    )
                })?,
            (State::Placed, None) => fs::remove_file(&e.target)?,
            (State::Pending, _) => fs::remove_file(dir.join(&e.new))?,
            (State::Lost, _) => {}
        }
        sync_dir(dir);
    }
    Ok(format!(
        "put {names} back as they were before a killed jouleplan began to replace them"
    ))
}
