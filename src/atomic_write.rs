//! Atomic writes of every file jouleplan produces (profiles, job scripts, reports, machine
//! files): a temporary sibling, then a rename, so an interruption never leaves a half-written
//! file and a reader sees the old file or the new one. Below both `measure` and `report`.

use std::io;
use std::path::Path;

/// Writes `bytes` to `path` atomically; `executable` makes it runnable (job scripts). A path
/// that exists and is not a regular file (a device, a directory, a FIFO) is refused: renaming
/// over it would replace it.
pub fn write_atomic(path: &Path, bytes: &[u8], executable: bool) -> io::Result<()> {
    if let Ok(meta) = std::fs::metadata(path)
        && !meta.is_file()
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "exists and is not a regular file (a device, directory or pipe): choose a file path",
        ));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.jouleplan-tmp"));
    std::fs::write(&tmp, bytes)?;
    #[cfg(unix)]
    if executable {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))?;
    }
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
