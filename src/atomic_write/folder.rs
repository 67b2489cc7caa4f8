//! A folder of outputs replaced whole (`report --out DIR`): its files are written into a
//! hidden sibling folder, fsynced, and the two folders are swapped in one step
//! (`renameat2(RENAME_EXCHANGE)`), so a reader, or a kill at any moment, finds the old folder
//! or the new one, never a mix of the two.

use super::{TMP_SUFFIX, create_dir_safely, folder_of, sync_dir};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// How a folder of outputs was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// Built beside it and swapped in whole.
    Swapped,
    /// File by file into a folder that holds other files too (each file atomically): the
    /// folder is the user's, and jouleplan does not move what it did not write.
    FileByFile,
}

/// A hidden folder beside the output, removed (with what is in it) unless put in place.
struct Sibling(Option<PathBuf>);

impl Drop for Sibling {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = fs::remove_dir_all(p);
        }
    }
}

/// Writes `files` (names and contents) as the folder `dir`: swapped in whole where `dir` does
/// not exist or holds only plain files of these names (or jouleplan's temporaries), else file
/// by file, where an entry of one of these names that is not a plain file (a folder of the
/// user's called `index.html`, a link) is refused before anything is written, naming it.
/// `dir`'s parent must exist; a link at `dir` is refused. Errors name `dir` or the file.
pub fn write_folder(dir: &Path, files: &[(&str, &[u8])]) -> io::Result<Written> {
    let fresh = create_dir_safely(dir).map_err(|e| in_dir(dir, e))?;
    let mut others = false;
    for e in fs::read_dir(dir).map_err(|e| in_dir(dir, e))?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let plain = e.file_type().is_ok_and(|t| t.is_file());
        let ours = files.iter().any(|(f, _)| *f == name);
        if ours && !plain {
            return Err(in_dir(
                &e.path(),
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "is not a plain file (a folder or link of the user's at the name of one of \
                     the report's files): jouleplan neither replaces nor moves it; move it away \
                     or choose another --out; nothing was written",
                ),
            ));
        }
        others |= !(plain && (ours || name.ends_with(TMP_SUFFIX)));
    }
    if others || dir.file_name().is_none() {
        for (name, bytes) in files {
            super::write_atomic(&dir.join(name), bytes, false)?;
        }
        return Ok(Written::FileByFile);
    }
    let sibling = build_sibling(dir, files)?;
    let Some(new) = sibling.0.as_deref() else {
        return Err(in_dir(dir, io::Error::other("no folder was built")));
    };
    let mode = fs::metadata(dir).map_err(|e| in_dir(dir, e))?.permissions();
    fs::set_permissions(new, mode).map_err(|e| in_dir(dir, e))?;
    if fresh {
        // The empty folder made above is replaced by the full one.
        fs::remove_dir(dir).map_err(|e| in_dir(dir, e))?;
        fs::rename(new, dir).map_err(|e| in_dir(dir, e))?;
    } else {
        exchange(new, dir).map_err(|e| in_dir(dir, e))?;
    }
    // `sibling` now holds the old folder, removed as it drops.
    sync_dir(folder_of(dir));
    drop(sibling);
    Ok(Written::Swapped)
}

/// Builds the new folder beside `dir`, each file written and fsynced, the folder fsynced.
fn build_sibling(dir: &Path, files: &[(&str, &[u8])]) -> io::Result<Sibling> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let made = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(TMP_SUFFIX)
        .make_in(folder_of(dir), |p| {
            fs::create_dir(p).map(|()| p.to_path_buf())
        })
        .map_err(|e| in_dir(dir, e))?;
    // The folder is ours from here: keep its path, not tempfile's guard (which removes files).
    let (path, guard) = made.into_parts();
    guard.keep().map_err(|e| in_dir(dir, e.error))?;
    let sibling = Sibling(Some(path.clone()));
    for (file, bytes) in files {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path.join(file))
            .map_err(|e| in_dir(&dir.join(file), e))?;
        f.write_all(bytes)
            .and_then(|()| f.sync_all())
            .map_err(|e| in_dir(&dir.join(file), e))?;
    }
    sync_dir(&path);
    Ok(sibling)
}

/// Swaps two paths in one step; where the file system cannot (`EINVAL`), moves the old one
/// aside first (a kill between the two renames then leaves the old folder under the hidden
/// name, which the next write onto `dir` removes).
fn exchange(new: &Path, dir: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(io::Error::other);
    let (a, b) = (c(new)?, c(dir)?);
    // SAFETY: two NUL-terminated paths relative to the working folder.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if r == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    if !matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) {
        return Err(e);
    }
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    let aside = folder_of(dir).join(format!(".{name}.aside{TMP_SUFFIX}"));
    let _ = fs::remove_dir_all(&aside);
    fs::rename(dir, &aside)?;
    fs::rename(new, dir)?;
    fs::rename(&aside, new)
}

fn in_dir(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        format!("{}: cannot write: {}", path.display(), super::why(&e)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_folder_is_swapped_whole_and_a_users_folder_is_not_moved() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("report");
        let files: [(&str, &[u8]); 2] = [("a.txt", b"one"), ("b.txt", b"two")];
        assert_eq!(write_folder(&out, &files).unwrap(), Written::Swapped);
        use std::os::unix::fs::MetadataExt;
        let first = fs::metadata(&out).unwrap().ino();
        fs::write(out.join(".a.txt.XYZ123.jouleplan-tmp"), "left by a kill").unwrap();
        let files2: [(&str, &[u8]); 2] = [("a.txt", b"new"), ("b.txt", b"two")];
        assert_eq!(write_folder(&out, &files2).unwrap(), Written::Swapped);
        // Swapped whole: a new folder, with the old one's leftovers gone with it.
        assert_ne!(fs::metadata(&out).unwrap().ino(), first);
        assert_eq!(fs::read_to_string(out.join("a.txt")).unwrap(), "new");
        assert_eq!(fs::read_dir(&out).unwrap().count(), 2);
        let left: Vec<_> = fs::read_dir(d.path()).unwrap().flatten().collect();
        assert_eq!(left.len(), 1, "no sibling is left: {left:?}");
        fs::write(out.join("mine.txt"), "user's").unwrap();
        assert_eq!(write_folder(&out, &files).unwrap(), Written::FileByFile);
        assert_eq!(fs::read_to_string(out.join("mine.txt")).unwrap(), "user's");
        assert_eq!(fs::read_to_string(out.join("b.txt")).unwrap(), "two");
    }

    #[test]
    fn a_users_folder_at_a_report_files_name_is_never_moved_nor_written_around() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("report");
        let files: [(&str, &[u8]); 2] = [("a.txt", b"one"), ("b.txt", b"two")];
        fs::create_dir_all(out.join("a.txt")).unwrap();
        fs::write(out.join("a.txt").join("notes"), "user's").unwrap();
        let err = write_folder(&out, &files).unwrap_err().to_string();
        assert!(
            err.contains("a.txt") && err.contains("not a plain file"),
            "{err}"
        );
        assert_eq!(
            fs::read_to_string(out.join("a.txt/notes")).unwrap(),
            "user's"
        );
        assert!(!out.join("b.txt").exists(), "nothing was written");
    }
}
