//! Output paths checked against the inputs before anything is written: an output that is one of
//! the command's inputs, or two outputs that are one file, are refused (the same device and
//! inode, not the same string: `./a`, `a` and a link to `a` are one file).

use crate::error::{InputError, InputResult};
use std::path::{Path, PathBuf};

/// A file's identity: device and inode where it exists, else its folder's real path and its name.
#[derive(Debug, PartialEq, Eq)]
enum Identity {
    Inode(u64, u64),
    Named(PathBuf),
}

fn identity(path: &Path) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt;
    if let Ok(meta) = std::fs::metadata(path) {
        return Some(Identity::Inode(meta.dev(), meta.ino()));
    }
    let dir = std::fs::canonicalize(crate::atomic_write::folder_of(path)).ok()?;
    Some(Identity::Named(dir.join(path.file_name()?)))
}

/// Whether two paths name one file (both must exist, or name one place).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (identity(a), identity(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// Refuses, before anything is written, an output that is one of `inputs`, or two `outputs`
/// that are one file. Each path comes with the flag that named it.
pub fn check_distinct(inputs: &[(&str, &Path)], outputs: &[(&str, &Path)]) -> InputResult<()> {
    for (i, (oflag, out)) in outputs.iter().enumerate() {
        for (iflag, input) in inputs {
            if same_file(out, input) {
                return Err(clash(oflag, out, &format!("the input of {iflag}"), input));
            }
        }
        for (flag2, out2) in &outputs[i + 1..] {
            if same_file(out, out2) {
                return Err(clash(oflag, out, &format!("the output of {flag2}"), out2));
            }
        }
    }
    Ok(())
}

fn clash(flag: &str, out: &Path, what: &str, other: &Path) -> InputError {
    InputError::Argument {
        flag: flag.into(),
        expected: format!(
            "a file that is not {what} ({}): writing it would destroy that file; nothing was \
             written",
            other.display()
        ),
        got: out.display().to_string(),
    }
}

/// The one-writer locks of every output of a command (each with the flag that named it),
/// taken before anything is read or written and held until the command ends (exit 1, naming
/// the holder, when one is held). First, an output named like a file jouleplan keeps beside
/// an output (see [`check_names`]) is refused.
pub fn lock(outputs: &[(&str, &Path)]) -> anyhow::Result<Vec<crate::atomic_write::OutputLock>> {
    lock_beside(outputs, None)
}

/// [`lock`] for a command that may rewrite the machine file `machine` in place: an output
/// that is that file may be a symbolic link (followed, as [`write_machine`] writes it).
pub fn lock_beside(
    outputs: &[(&str, &Path)],
    machine: Option<&Path>,
) -> anyhow::Result<Vec<crate::atomic_write::OutputLock>> {
    not_folders(outputs)?;
    // Refused now, not by the writer at the end: a sweep had measured every run, and a fit
    // or a plan printed all it found, before an output that is a link was refused.
    for (_, p) in outputs {
        if machine.is_none_or(|m| !same_file(m, p)) {
            crate::atomic_write::refuse_link(p)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{e}; nothing was written")))?;
        }
    }
    lock_any(outputs)
}

/// [`lock`] for a folder of outputs (`report --out DIR`): a folder there is the output.
pub fn lock_folder(flag: &str, dir: &Path) -> anyhow::Result<crate::atomic_write::OutputLock> {
    let mut locks = lock_any(&[(flag, dir)])?;
    locks
        .pop()
        .ok_or_else(|| anyhow::anyhow!("{}: no lock was taken", dir.display()))
}

fn lock_any(outputs: &[(&str, &Path)]) -> anyhow::Result<Vec<crate::atomic_write::OutputLock>> {
    check_names(outputs)?;
    outputs
        .iter()
        // A device or pipe is refused by the writer, naming it; no lock file beside it.
        .filter(|(_, p)| !is_special(p))
        .map(|(_, p)| crate::atomic_write::OutputLock::take(p).map_err(anyhow::Error::from))
        .collect()
}

/// Refuses an output that is one of `inputs` (the same file, however named), as
/// [`check_distinct`] does; an input that does not exist (a bundled name) is no file an output
/// could destroy.
pub fn not_inputs(inputs: &[(&str, &Path)], outputs: &[(&str, &Path)]) -> InputResult<()> {
    let existing: Vec<(&str, &Path)> = inputs.iter().copied().filter(|(_, p)| p.exists()).collect();
    check_distinct(&existing, outputs)
}

/// [`lock`] for a command that reads `inputs`: an output that is one of them is refused first
/// ([`not_inputs`]), before any lock is taken or anything is written.
pub fn guard(
    inputs: &[(&str, &Path)],
    outputs: &[(&str, &Path)],
) -> anyhow::Result<Vec<crate::atomic_write::OutputLock>> {
    not_inputs(inputs, outputs)?;
    lock(outputs)
}

/// Refuses an output file that is an existing folder (a link to one included), or a path that
/// can only name a folder (`runs/`, `out/.`), naming the flag: a folder is no file to write,
/// and none is written into it. Refused before anything runs: a campaign or a sweep would
/// otherwise measure everything first and fail at its first write.
pub fn not_folders(outputs: &[(&str, &Path)]) -> InputResult<()> {
    match outputs
        .iter()
        .find(|(_, p)| p.is_dir() || names_a_folder(p))
    {
        Some((flag, out)) => Err(InputError::Argument {
            flag: (*flag).into(),
            expected: format!(
                "the path of a file to write ({flag} takes a file path): {} {}; give a file \
                 path, new or in that folder; nothing was written",
                out.display(),
                match out.is_dir() {
                    true => "is a folder",
                    false => "names a folder (it ends in /)",
                }
            ),
            got: out.display().to_string(),
        }),
        None => Ok(()),
    }
}

/// Whether `p` is spelt as a folder, existing or not: it ends in `/`, `/.` or `/..`, or is
/// `.`, `..` or the root.
fn names_a_folder(p: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let b = p.as_os_str().as_bytes();
    b.ends_with(b"/")
        || b.ends_with(b"/.")
        || b.ends_with(b"/..")
        || b == b"."
        || b == b".."
        || p.file_name().is_none()
}

/// Refuses, before anything runs, an output named like a file jouleplan keeps for itself
/// (a lock, a set marker or a temporary, wherever it lies), or like the lock, set marker,
/// journal or working folder of another output of the same command, which jouleplan
/// overwrites or removes while it writes that output. Names the flag and both files.
pub fn check_names(outputs: &[(&str, &Path)]) -> InputResult<()> {
    use crate::atomic_write::{companions, is_reserved_name};
    for (flag, out) in outputs {
        if out.as_os_str() == "-" {
            // Standard output by the usual convention; written, it was a file named `-`.
            return Err(InputError::Argument {
                flag: (*flag).into(),
                expected: "a path to write: jouleplan writes this output to the file \
                           system, never to standard output (`plan`, `fit` and `validate` print \
                           there with --json or --csv, `slurm --config` prints its job script); \
                           name the file or folder, ./- for one called `-`; nothing was written"
                    .into(),
                got: "-".into(),
            });
        }
        let name = out.file_name().unwrap_or_default().to_string_lossy();
        if is_reserved_name(&name) {
            return Err(InputError::Argument {
                flag: (*flag).into(),
                expected: "a file name jouleplan does not keep for itself (names ending in \
                           .jouleplan-lock, .jouleplan-set or .jouleplan-tmp are the locks, set \
                           markers and temporaries it makes and removes beside an output); \
                           nothing was written"
                    .into(),
                got: out.display().to_string(),
            });
        }
        for (flag2, other) in outputs {
            for (kind, c) in companions(other) {
                if place(out) == place(&c) {
                    return Err(clash(
                        flag,
                        out,
                        &format!(
                            "the {kind} of {flag2} {}, which jouleplan writes and removes while it writes that output",
                            other.display()
                        ),
                        &c,
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Where a path lies: its folder's real path and its name (the path as given where the
/// folder cannot be resolved).
fn place(p: &Path) -> PathBuf {
    let dir = std::fs::canonicalize(crate::atomic_write::folder_of(p));
    match (dir, p.file_name()) {
        (Ok(d), Some(n)) => d.join(n),
        _ => p.to_path_buf(),
    }
}

/// Whether `p` exists and is neither a regular file, a folder nor a link.
fn is_special(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| {
        let t = m.file_type();
        !(t.is_file() || t.is_dir() || t.is_symlink())
    })
}

/// How a machine file output treats a link: followed (rewritten in place, keeping its mode)
/// when `output` is the machine file that was read, else refused as for every new output.
pub fn machine_links(machine: &Path, output: &Path) -> crate::atomic_write::Links {
    if same_file(machine, output) {
        crate::atomic_write::Links::Follow
    } else {
        crate::atomic_write::Links::Refuse
    }
}

/// Writes a machine file: in place (through a link, keeping its mode) when `output` is the
/// machine file that was read, else as a new output.
pub fn write_machine(machine: &Path, output: &Path, bytes: &[u8]) -> std::io::Result<()> {
    crate::atomic_write::write_with(output, bytes, false, machine_links(machine, output))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_file_under_two_spellings_is_caught() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.csv");
        std::fs::write(&a, "x").unwrap();
        let spelled = dir.path().join(".").join("a.csv");
        let err = check_distinct(&[("--measured", &a)], &[("--profile-out", &spelled)]);
        assert!(err.unwrap_err().to_string().contains("--measured"));
        let new = dir.path().join("new.json");
        let err = check_distinct(&[], &[("--profile-out", &new), ("--machine-out", &new)]);
        assert!(err.unwrap_err().to_string().contains("--machine-out"));
        assert!(check_distinct(&[("--measured", &a)], &[("--profile-out", &new)]).is_ok());
    }
}
