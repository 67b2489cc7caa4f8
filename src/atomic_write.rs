//! Atomic writes of every file jouleplan produces (profiles, job scripts, reports, machine
//! files): a temporary sibling with a random name, created exclusively (so nothing planted at
//! that name, a symbolic link included, is ever opened), then a rename, so an interruption never
//! leaves a half-written file and a reader sees the old file or the new one. Below both
//! `measure` and `report`. Unix only, as the rest of jouleplan (modes, perf, powercap).

mod folder;
mod stale;

pub use folder::{Written, write_folder};
pub use stale::clean as clean_stale;

use std::fs::{self, Permissions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The working folder of an output: its file name with `.runs` appended (`p.json` ->
/// `p.json.runs`), so that it is never the output itself, whatever the output is called.
pub fn runs_dir(output: &Path) -> PathBuf {
    let mut name = output
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".runs");
    output.with_file_name(name)
}

/// One writer per output: an advisory lock (`flock`) on a hidden file beside the output,
/// `.NAME.jouleplan-lock`, held for the whole command and removed when it ends. A second
/// command onto the same output is refused at once, naming the process that holds it. Taking
/// it removes what a killed writer of the output left ([`clean_stale`]).
#[derive(Debug)]
pub struct OutputLock {
    file: fs::File,
    path: PathBuf,
}

impl OutputLock {
    /// Takes the lock of `output`, or says who holds it.
    pub fn take(output: &Path) -> io::Result<OutputLock> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        let name = output
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        let path = folder_of(output).join(format!(".{name}.jouleplan-lock"));
        for _ in 0..3 {
            let file = fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(&path)
                .map_err(|e| named(output, e))?;
            // SAFETY: flock on a descriptor we own.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
                let holder = fs::read_to_string(&path).unwrap_or_default();
                return Err(io::Error::other(format!(
                    "{} is being written by another jouleplan (process {}): one writer per \
                     output; wait for it, or stop it",
                    output.display(),
                    holder.trim()
                )));
            }
            // The file may have been removed by the holder between our open and our lock:
            // locked, it must still be the file at the path.
            let same = fs::symlink_metadata(&path)
                .is_ok_and(|m| m.ino() == file.metadata().map(|f| f.ino()).unwrap_or(0));
            if same {
                // Held: what a killed writer of this output left can go.
                stale::clean(output);
                let mut f = &file;
                f.set_len(0)
                    .and_then(|()| write!(f, "{}", std::process::id()))
                    .map_err(|e| named(output, e))?;
                return Ok(OutputLock { file, path });
            }
        }
        Err(io::Error::other(format!(
            "{}: its lock file kept changing under us; try again",
            output.display()
        )))
    }
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
        let _ = &self.file;
    }
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
    shown: PathBuf,
    /// The file to replace (`shown`, or what the link at `shown` points to).
    target: PathBuf,
    tmp: tempfile::NamedTempFile,
}

/// Outputs written as a set: every new content staged (written and fsynced beside its
/// output), not yet in place. [`StagedSet::commit`] puts them in place, all or none.
#[derive(Debug)]
pub struct StagedSet {
    files: Vec<Staged>,
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

impl StagedSet {
    /// Puts every staged file in place. The old content of each output is kept (a hard link,
    /// or a copy where links cannot be made) until all are in place; where one cannot be put
    /// in place, those already put are given their old content back (or removed, where they
    /// are new), and the error names what was and was not written.
    pub fn commit(self) -> io::Result<()> {
        let mut kept = Vec::with_capacity(self.files.len());
        for f in &self.files {
            let old = keep_old(&f.target).map_err(|e| {
                let e = named(&f.shown, e);
                io::Error::new(e.kind(), format!("{e}; nothing was written"))
            })?;
            kept.push(old);
        }
        let mut placed: Vec<(&Path, &Path, Option<tempfile::NamedTempFile<()>>)> = Vec::new();
        for (f, old) in self.files.iter().zip(kept) {
            if let Err(e) = fs::rename(f.tmp.path(), &f.target) {
                let failed = named(&f.shown, e);
                return Err(undo(failed, placed));
            }
            placed.push((&f.shown, &f.target, old));
        }
        Ok(())
    }
}

/// A hidden second name for the current content of `target` (none where it does not exist),
/// removed when dropped.
fn keep_old(target: &Path) -> io::Result<Option<tempfile::NamedTempFile<()>>> {
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
fn undo(
    failed: io::Error,
    placed: Vec<(&Path, &Path, Option<tempfile::NamedTempFile<()>>)>,
) -> io::Error {
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
