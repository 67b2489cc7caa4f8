//! Atomic writes of every file jouleplan produces (profiles, job scripts, reports, machine
//! files): a temporary sibling with a random name, created exclusively (so nothing planted at
//! that name, a symbolic link included, is ever opened), then a rename, so an interruption never
//! leaves a half-written file and a reader sees the old file or the new one. Also the one
//! writer per output ([`OutputLock`]), sets of outputs written all or none ([`StagedSet`]) and
//! the names jouleplan keeps for itself beside an output ([`companions`]). Below both
//! `measure` and `report`. Unix only, as the rest of jouleplan (modes, perf, powercap).

mod folder;
mod lock;
mod on_stop;
mod set;
mod stale;

pub use folder::{Written, write_folder};
pub use lock::{LOCK_SUFFIX, OutputLock, lock_path};
pub use set::{SET_SUFFIX, StagedSet, marker_path, settle_inputs};
pub use stale::clean as clean_stale;

use std::fs::{self, Permissions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The working folder of an output: its file name with `.runs` appended (`p.json` ->
/// `p.json.runs`), so that it is never the output itself, whatever the output is called.
pub fn runs_dir(output: &Path) -> PathBuf {
    beside(output, ".runs")
}

/// The journal of a sweep's profile `output`: its file name with `.journal` appended.
pub fn journal_path(output: &Path) -> PathBuf {
    beside(output, ".journal")
}

/// `output` with `suffix` appended to its file name.
fn beside(output: &Path, suffix: &str) -> PathBuf {
    let mut name = output
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(suffix);
    output.with_file_name(name)
}

/// Whether `name` is a file name jouleplan keeps for itself beside an output: a lock, a set
/// marker or a temporary. No output may be given such a name.
pub fn is_reserved_name(name: &str) -> bool {
    [LOCK_SUFFIX, SET_SUFFIX, TMP_SUFFIX]
        .iter()
        .any(|s| name.ends_with(s))
}

/// What jouleplan makes beside `output` while it writes it, by kind: its lock, its set marker,
/// its journal and its working folder. Another output of the same command named like one of
/// them would be overwritten or removed.
pub fn companions(output: &Path) -> [(&'static str, PathBuf); 4] {
    [
        ("lock", lock_path(output)),
        ("set marker", marker_path(output)),
        ("journal", journal_path(output)),
        ("working folder", runs_dir(output)),
    ]
}

/// Creates the folder `dir` (its parent must exist), or accepts it where it already is a
/// folder: never a symbolic link, which would send what jouleplan writes and later removes
/// there to a place it did not choose, and never a file. Returns whether it was created.
pub fn create_dir_safely(dir: &Path) -> io::Result<bool> {
    match std::fs::create_dir(dir) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            let m = std::fs::symlink_metadata(dir)?;
            if m.file_type().is_symlink() {
                Err(io::Error::other(format!(
                    "{} is a symbolic link: jouleplan writes only into folders it can see are \
                     folders (remove the link)",
                    dir.display()
                )))
            } else if !m.is_dir() {
                Err(io::Error::other(format!(
                    "{} exists and is not a folder (remove it or choose another output)",
                    dir.display()
                )))
            } else {
                Ok(false)
            }
        }
        Err(e) => Err(e),
    }
}

/// How a symbolic link at the output path is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Refuse it: an output the command did not read is never written through a link (a link
    /// planted in a shared folder would redirect the write anywhere the user can write).
    Refuse,
    /// Update the file it points to, keeping the link (in-place rewrites of a file the command
    /// has just read through that link, such as `calibrate network --machine F`).
    Follow,
}

/// Writes `bytes` to `path` atomically; `executable` makes it runnable (job scripts). A path
/// that exists and is not a regular file (a device, a directory, a FIFO) or is a symbolic link
/// is refused. An existing file keeps its permissions (0600 stays 0600); a new one gets the
/// usual 0666 (0777 when executable) less the umask.
pub fn write_atomic(path: &Path, bytes: &[u8], executable: bool) -> io::Result<()> {
    write_with(path, bytes, executable, Links::Refuse)
}

/// Rewrites a file the command has read, in place and atomically: where `path` is a symbolic
/// link, the file it points to is rewritten and the link stays; the file's permissions stay.
pub fn rewrite_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_with(path, bytes, false, Links::Follow)
}

/// Writes `bytes` to `path` atomically with the given treatment of a link at `path`. Every
/// error names `path`, never the temporary file.
pub fn write_with(path: &Path, bytes: &[u8], executable: bool, links: Links) -> io::Result<()> {
    let staged = stage(path, bytes, executable, links)?;
    let Staged { shown, target, tmp } = staged;
    tmp.persist(&target)
        .map(|_| ())
        .map_err(|e| named(&shown, e.error))
}

/// One output of a set written together ([`write_set`]).
#[derive(Debug, Clone, Copy)]
pub struct SetFile<'a> {
    /// The output as the user named it.
    pub path: &'a Path,
    /// Its new content.
    pub bytes: &'a [u8],
    /// How a link at `path` is treated.
    pub links: Links,
}

/// A file's new content written and fsynced beside it, not yet in place.
#[derive(Debug)]
struct Staged {
    /// The path the user gave (errors name it).
    pub(super) shown: PathBuf,
    /// The file to replace (`shown`, or what the link at `shown` points to).
    pub(super) target: PathBuf,
    pub(super) tmp: tempfile::NamedTempFile,
}

/// Stages every file of a set; the first that cannot be staged is named, and nothing is
/// written (the temporaries of the others are removed).
pub fn stage_set(files: &[SetFile]) -> io::Result<StagedSet> {
    let staged = files
        .iter()
        .map(|f| stage(f.path, f.bytes, false, f.links))
        .collect::<io::Result<Vec<_>>>()
        .map_err(|e| io::Error::new(e.kind(), format!("{e}; nothing was written")))?;
    Ok(StagedSet { files: staged })
}

/// Writes several outputs as one: all of them or none (a profile and the machine file fitted
/// with it). See [`stage_set`] and [`StagedSet::commit`].
pub fn write_set(files: &[SetFile]) -> io::Result<()> {
    stage_set(files)?.commit()
}

/// The suffix of every temporary file jouleplan makes beside an output.
pub const TMP_SUFFIX: &str = ".jouleplan-tmp";

/// Writes `bytes` to a fresh temporary file beside the file `path` names (fsynced, with the
/// mode the output will have); errors name `path`.
fn stage(path: &Path, bytes: &[u8], executable: bool, links: Links) -> io::Result<Staged> {
    let shown = path.to_path_buf();
    let target = resolve(path, links).map_err(|e| named(path, e))?;
    let existing = match fs::metadata(&target) {
        Ok(meta) if !meta.is_file() => {
            return Err(named(
                path,
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "exists and is not a regular file (a device, directory or pipe): choose a \
                     file path",
                ),
            ));
        }
        Ok(meta) => Some(meta.permissions()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(named(path, e)),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let fill = |tmp: &mut tempfile::NamedTempFile| -> io::Result<()> {
        tmp.write_all(bytes)?;
        tmp.as_file().sync_all()?;
        if let Some(perm) = existing {
            tmp.as_file().set_permissions(kept_mode(perm, executable))?;
        }
        Ok(())
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(TMP_SUFFIX)
        .permissions(new_file_mode(executable))
        .tempfile_in(folder_of(&target))
        .map_err(|e| named(path, e))?;
    fill(&mut tmp).map_err(|e| named(path, e))?;
    Ok(Staged { shown, target, tmp })
}

/// An error of writing `path`, naming `path` and never the temporary file beside it (the
/// `tempfile` crate's errors carry the temporary's path).
fn named(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        format!("{}: cannot write: {}", path.display(), why(&e)),
    )
}

/// What went wrong, without any temporary file's name: the system's words for its error code.
fn why(e: &io::Error) -> String {
    let code = e.raw_os_error().or_else(|| {
        e.get_ref()
            .and_then(|inner| inner.source())
            .and_then(|s| s.downcast_ref::<io::Error>())
            .and_then(io::Error::raw_os_error)
    });
    match code {
        Some(c) => io::Error::from_raw_os_error(c).to_string(),
        None => {
            let text = e.to_string();
            if text.contains(TMP_SUFFIX) {
                e.kind().to_string()
            } else {
                text
            }
        }
    }
}

/// Flushes a folder's entries (a file created or renamed in it) to disk; best effort, as some
/// file systems refuse it.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Refuses, before a command runs anything, an output path that is a symbolic link: the
/// writer would refuse it only at the end ([`write_atomic`]).
pub fn refuse_link(path: &Path) -> io::Result<()> {
    resolve(path, Links::Refuse)
        .map(|_| ())
        .map_err(|e| named(path, e))
}

/// The folder a file path lies in (`.` for a bare name).
pub fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// The file to write: `path` itself, or what the link at `path` points to (`Links::Follow`).
fn resolve(path: &Path, links: Links) -> io::Result<PathBuf> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => match links {
            Links::Refuse => {
                let to = fs::read_link(path)
                    .map(|t| t.display().to_string())
                    .unwrap_or_default();
                Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "is a symbolic link (to {to}): jouleplan does not write an output through \
                         a link; name the file itself, or remove the link"
                    ),
                ))
            }
            Links::Follow => fs::canonicalize(path).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("is a symbolic link whose target cannot be resolved: {e}"),
                )
            }),
        },
        _ => Ok(path.to_path_buf()),
    }
}

/// The mode a new file is created with, before the umask.
fn new_file_mode(executable: bool) -> Permissions {
    use std::os::unix::fs::PermissionsExt;
    Permissions::from_mode(if executable { 0o777 } else { 0o666 })
}

/// An existing file's permissions, with execute added where it can be read (job scripts).
fn kept_mode(perm: Permissions, executable: bool) -> Permissions {
    use std::os::unix::fs::PermissionsExt;
    let mode = perm.mode() & 0o7777;
    Permissions::from_mode(if executable {
        mode | ((mode & 0o444) >> 2)
    } else {
        mode
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    #[test]
    fn a_link_planted_at_the_old_temporary_name_is_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "precious").unwrap();
        symlink(&victim, dir.path().join(".m.toml.jouleplan-tmp")).unwrap();
        let out = dir.path().join("m.toml");
        write_atomic(&out, b"new", false).unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(fs::read_to_string(&out).unwrap(), "new");
        let left: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 3, "no temporary file is left behind");
    }

    #[test]
    fn a_write_error_names_the_output_and_never_the_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("missing").join("p.json");
        let err = write_atomic(&out, b"x", false).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("{}: cannot write", out.display())),
            "{err}"
        );
        assert!(!err.contains(TMP_SUFFIX), "{err}");
    }

    #[test]
    fn a_set_whose_second_file_cannot_be_put_in_place_leaves_the_first_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.json"), dir.path().join("b.toml"));
        fs::write(&a, "old a").unwrap();
        let set = [
            SetFile {
                path: &a,
                bytes: b"new a",
                links: Links::Refuse,
            },
            SetFile {
                path: &b,
                bytes: b"new b",
                links: Links::Refuse,
            },
        ];
        let staged = stage_set(&set).unwrap();
        // Between staging and the renames, b's temporary goes: a is put in place, b cannot be.
        for e in fs::read_dir(dir.path()).unwrap().flatten() {
            if e.file_name().to_string_lossy().starts_with(".b.toml.") {
                fs::remove_file(e.path()).unwrap();
            }
        }
        let err = staged.commit().unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("{}: cannot write", b.display())),
            "{err}"
        );
        assert!(err.contains("a.json left as it was"), "{err}");
        assert_eq!(fs::read_to_string(&a).unwrap(), "old a");
        let left: Vec<_> = fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(left.len(), 1, "no temporary or kept copy is left: {left:?}");
        assert!(!b.exists());
        write_set(&set).unwrap();
        assert_eq!(fs::read_to_string(&a).unwrap(), "new a");
        assert_eq!(fs::read_to_string(&b).unwrap(), "new b");
    }

    #[test]
    fn a_rewrite_keeps_the_mode_and_updates_a_links_target() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.toml");
        fs::write(&real, "old").unwrap();
        fs::set_permissions(&real, Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("m.toml");
        symlink(&real, &link).unwrap();
        rewrite_atomic(&link, b"new").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
        assert_eq!(
            fs::metadata(&real).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let err = write_atomic(&link, b"x", false).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
    }
}
