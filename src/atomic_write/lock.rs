//! One writer per output: an advisory lock (`flock`) on a hidden file beside the output,
//! `.NAME.jouleplan-lock`, held for the whole command. A lock needs no content but the holder's
//! process number, and jouleplan writes and removes only a lock file it made itself: a fresh
//! one is created exclusively; one a killed command left is replaced by a fresh one (renamed
//! over it) only where it is a plain file with one name that holds nothing but a process
//! number. Anything else at the lock's name (a link, a hard link to another file, a folder, a
//! pipe, a file with other content) is refused, naming the lock file and what to do with it.

use super::{TMP_SUFFIX, folder_of, why};
use std::fs;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The suffix of every lock file.
pub const LOCK_SUFFIX: &str = ".jouleplan-lock";

/// The lock file of `output`: `.NAME.jouleplan-lock` beside it.
pub fn lock_path(output: &Path) -> PathBuf {
    let name = output
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    output.with_file_name(format!(".{name}{LOCK_SUFFIX}"))
}

/// The lock of one output, held until dropped. Taking it ([`OutputLock::take`]) completes or
/// puts back a set of outputs a killed writer left half in place, then removes what a killed
/// writer of the output left ([`super::clean_stale`]).
#[derive(Debug)]
pub struct OutputLock {
    file: fs::File,
    path: PathBuf,
    /// The lock file's device and inode where this lock made it (it is removed when the lock
    /// is dropped); none where a killed command's lock is held as it was (kept).
    made: Option<(u64, u64)>,
    /// Its slot among the locks a stop signal removes ([`super::on_stop`]), where it made one.
    on_stop: Option<usize>,
}

impl OutputLock {
    /// Takes the lock of `output`, or says who holds it (or what at the lock's name is not a
    /// lock); then settles a half-placed set and removes a killed writer's leftovers.
    pub fn take(output: &Path) -> io::Result<OutputLock> {
        let lock = OutputLock::take_bare(output)?;
        if let Some(said) = super::set::settle(output, true)? {
            eprintln!("note: {}", crate::error::shown(&said));
        }
        super::stale::clean(output);
        Ok(lock)
    }

    /// Takes the lock of `output` and nothing more.
    pub(super) fn take_bare(output: &Path) -> io::Result<OutputLock> {
        let path = lock_path(output);
        for _ in 0..3 {
            let fresh = fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(&path);
            let taken = match fresh {
                Ok(file) => take_fresh(output, &path, file)?,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => take_left(output, &path)?,
                Err(e) => return Err(cannot(output, &path, &e)),
            };
            if let Some(lock) = taken {
                return Ok(lock);
            }
        }
        Err(io::Error::other(format!(
            "{}: its lock file {} kept changing under us; try again",
            output.display(),
            path.display()
        )))
    }
}

/// A lock file this command has just made: locked, its process number written. `None` where
/// it was replaced between the creation and the lock (try again).
fn take_fresh(output: &Path, path: &Path, file: fs::File) -> io::Result<Option<OutputLock>> {
    if !flock_or_wait(&file) {
        return Err(held(output, path, &file));
    }
    let Some(id) = still_at(path, &file) else {
        return Ok(None);
    };
    let mut f = &file;
    write!(f, "{}", std::process::id()).map_err(|e| cannot(output, path, &e))?;
    Ok(Some(OutputLock {
        file,
        path: path.to_path_buf(),
        made: Some(id),
        on_stop: super::on_stop::hold(path),
    }))
}

/// A lock file that was there: refused where it is not a lock jouleplan made; said held where
/// a live command holds it; else (a killed command's) replaced by a fresh one, or held as it is
/// where the folder allows no new file. `None`: it changed under us (try again).
fn take_left(output: &Path, path: &Path) -> io::Result<Option<OutputLock>> {
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(cannot(output, path, &e)),
    };
    refuse_foreign(output, path, &meta)?;
    let file = match fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(cannot(output, path, &e)),
    };
    let opened = file.metadata().map_err(|e| cannot(output, path, &e))?;
    if (opened.dev(), opened.ino()) != (meta.dev(), meta.ino()) {
        return Ok(None);
    }
    refuse_foreign(output, path, &opened)?;
    if !flock_or_wait(&file) {
        return Err(held(output, path, &file));
    }
    if still_at(path, &file).is_none() {
        return Ok(None);
    }
    let content = holder(&file);
    if !content.bytes().all(|b| b.is_ascii_digit()) {
        return Err(foreign(
            output,
            path,
            "holds something other than a process number",
            "move it away",
        ));
    }
    // A killed command's lock: ours from now on. Replaced by one this command makes, so that
    // the lock file removed when it ends is one it made.
    match replace(output, path) {
        Some(lock) => Ok(Some(lock)),
        None => Ok(Some(OutputLock {
            file,
            path: path.to_path_buf(),
            made: None,
            on_stop: None,
        })),
    }
}

/// Refuses what at a lock's name is not a lock jouleplan made: a link, a folder, a pipe or
/// device, a file with more than one name.
fn refuse_foreign(output: &Path, path: &Path, meta: &fs::Metadata) -> io::Result<()> {
    let t = meta.file_type();
    let (what, todo) = if t.is_symlink() {
        let to = fs::read_link(path).unwrap_or_default();
        (
            format!("is a symbolic link (to {})", to.display()),
            "remove the link",
        )
    } else if t.is_dir() {
        ("is a folder".to_string(), "move the folder away")
    } else if !t.is_file() {
        ("is a pipe, socket or device".to_string(), "remove it")
    } else if meta.nlink() > 1 {
        (
            format!(
                "has {} names (a hard link to another file): jouleplan never writes or removes \
                 a file it did not make",
                meta.nlink()
            ),
            "remove this name (the file's other names keep it)",
        )
    } else {
        return Ok(());
    };
    Err(foreign(output, path, &what, todo))
}

fn foreign(output: &Path, path: &Path, what: &str, todo: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{}: its lock file {} {what}, not a lock jouleplan made, and no command can write \
             {} while it is there: {todo} (`rm {}`) once no jouleplan is running, and run again",
            output.display(),
            path.display(),
            output.display(),
            path.display()
        ),
    )
}

/// A fresh lock file, locked and with this process's number, renamed over the killed
/// command's lock at `path`; `None` where the folder allows no new file.
fn replace(output: &Path, path: &Path) -> Option<OutputLock> {
    let name = output.file_name()?.to_string_lossy().into_owned();
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(TMP_SUFFIX)
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .tempfile_in(folder_of(path))
        .ok()?;
    if !flock(tmp.as_file()) {
        return None;
    }
    write!(tmp.as_file(), "{}", std::process::id()).ok()?;
    let file = tmp.persist(path).ok()?;
    let id = still_at(path, &file)?;
    Some(OutputLock {
        file,
        path: path.to_path_buf(),
        made: Some(id),
        on_stop: super::on_stop::hold(path),
    })
}

/// Takes the `flock` without waiting; false where another holds it.
fn flock(file: &fs::File) -> bool {
    // SAFETY: flock on a descriptor we own.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// Takes the `flock`, waiting up to [`ORPHAN_WAIT`] where the process the lock file names is
/// gone: a killed command's child caught between its fork and its exec still holds the
/// descriptor for that moment. False where a live command (or anything past the wait) holds it.
fn flock_or_wait(file: &fs::File) -> bool {
    let start = std::time::Instant::now();
    loop {
        if flock(file) {
            return true;
        }
        let named = holder(file).parse::<libc::pid_t>().ok();
        if named.is_none_or(alive) || start.elapsed() > ORPHAN_WAIT {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// How long a lock whose named holder is gone may stay held before it is said held.
const ORPHAN_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Whether process `pid` exists (signal 0 checks without sending).
fn alive(pid: libc::pid_t) -> bool {
    // SAFETY: kill with signal 0 sends nothing.
    pid > 0
        && (unsafe { libc::kill(pid, 0) } == 0
            || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH))
}

/// The device and inode of `file` where it is still the file at `path`.
fn still_at(path: &Path, file: &fs::File) -> Option<(u64, u64)> {
    let at = fs::symlink_metadata(path).ok()?;
    let f = file.metadata().ok()?;
    ((at.dev(), at.ino()) == (f.dev(), f.ino())).then_some((f.dev(), f.ino()))
}

/// The process number a lock file holds (its first 32 bytes, trimmed).
fn holder(file: &fs::File) -> String {
    let mut buf = [0u8; 32];
    let n = std::os::unix::fs::FileExt::read_at(file, &mut buf, 0).unwrap_or(0);
    String::from_utf8_lossy(&buf[..n]).trim().to_string()
}

fn held(output: &Path, path: &Path, file: &fs::File) -> io::Error {
    io::Error::other(format!(
        "{} is being written by another jouleplan (process {}; its lock {}): one writer per \
         output; wait for it, or stop it",
        output.display(),
        holder(file),
        path.display()
    ))
}

fn cannot(output: &Path, path: &Path, e: &io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        format!(
            "{}: cannot write: its lock file {}: {}",
            output.display(),
            path.display(),
            why(e)
        ),
    )
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        if let Some(slot) = self.on_stop {
            super::on_stop::release(slot);
        }
        // Only a lock file this command made, and only while it is still the one at the path.
        if let Some(id) = self.made
            && still_at(&self.path, &self.file) == Some(id)
        {
            let _ = fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hard_link_at_the_lock_name_is_refused_and_left_whole() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        fs::write(&victim, "precious").unwrap();
        let out = d.path().join("p.json");
        fs::hard_link(&victim, lock_path(&out)).unwrap();
        let err = OutputLock::take(&out).unwrap_err().to_string();
        assert!(
            err.contains(".p.json.jouleplan-lock") && err.contains("2 names"),
            "{err}"
        );
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        assert!(lock_path(&out).exists());
    }

    #[test]
    fn a_lock_held_by_a_gone_commands_child_is_waited_for_and_a_live_holder_is_not() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("p.json");
        // Past any pid_max: the named holder is gone, as a killed command is.
        fs::write(lock_path(&out), "2000000000").unwrap();
        let orphan = fs::File::open(lock_path(&out)).unwrap();
        assert!(flock(&orphan));
        let released = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            drop(orphan);
        });
        let lock = OutputLock::take(&out).expect("taken once the orphan lets go");
        released.join().unwrap();
        drop(lock);
        fs::write(lock_path(&out), std::process::id().to_string()).unwrap();
        let live = fs::File::open(lock_path(&out)).unwrap();
        assert!(flock(&live));
        let t = std::time::Instant::now();
        let err = OutputLock::take(&out).unwrap_err().to_string();
        assert!(err.contains("being written by another jouleplan"), "{err}");
        assert!(t.elapsed() < ORPHAN_WAIT, "a live holder is said at once");
    }

    #[test]
    fn a_killed_commands_lock_is_replaced_and_removed_when_done() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("p.json");
        fs::write(lock_path(&out), "12345").unwrap();
        let lock = OutputLock::take(&out).unwrap();
        let pid = fs::read_to_string(lock_path(&out)).unwrap();
        assert_eq!(pid, std::process::id().to_string());
        assert!(OutputLock::take(&out).is_err(), "held");
        drop(lock);
        assert!(!lock_path(&out).exists());
        let left: Vec<_> = fs::read_dir(d.path()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
