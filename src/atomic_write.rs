//! Atomic writes of every file jouleplan produces (profiles, job scripts, reports, machine
//! files): a temporary sibling with a random name, created exclusively (so nothing planted at
//! that name, a symbolic link included, is ever opened), then a rename, so an interruption never
//! leaves a half-written file and a reader sees the old file or the new one. Below both
//! `measure` and `report`. Unix only, as the rest of jouleplan (modes, perf, powercap).

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
/// command onto the same output is refused at once, naming the process that holds it.
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
                .open(&path)?;
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
                let mut f = &file;
                f.set_len(0)?;
                write!(f, "{}", std::process::id())?;
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

/// Writes `bytes` to `path` atomically with the given treatment of a link at `path`.
pub fn write_with(path: &Path, bytes: &[u8], executable: bool, links: Links) -> io::Result<()> {
    let target = resolve(path, links)?;
    let existing = match fs::metadata(&target) {
        Ok(meta) if !meta.is_file() => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "exists and is not a regular file (a device, directory or pipe): choose a file path",
            ));
        }
        Ok(meta) => Some(meta.permissions()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let dir = folder_of(&target);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".jouleplan-tmp")
        .permissions(new_file_mode(executable))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    if let Some(perm) = existing {
        tmp.as_file().set_permissions(kept_mode(perm, executable))?;
    }
    tmp.persist(&target).map(|_| ()).map_err(|e| e.error)
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
