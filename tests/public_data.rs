//! `scripts/public-data.sh --check DIR` against the public fixtures: its manifest's SHA-256 of
//! every public file matches the folder the tests read, and a copy with one byte changed is
//! refused, naming the file.
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The folders of the fixtures that come from public repositories (what the script writes).
const PUBLIC_FOLDERS: [&str; 4] = ["paraver", "energy", "gpu-clocks", "multinode"];

fn check(dir: &Path) -> Output {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/public-data.sh");
    Command::new("bash")
        .arg(script)
        .arg("--check")
        .arg(dir)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn the_manifest_matches_every_public_fixture() {
    let out = check(&common::public_root());
    assert!(
        out.status.success(),
        "--check failed on {}:\n{}",
        common::public_root().display(),
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains("match scripts/public-data.manifest"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_copy_with_one_byte_changed_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    for folder in PUBLIC_FOLDERS {
        copy_tree(
            &common::public_root().join(folder),
            &dir.path().join(folder),
        );
    }
    let whole = check(dir.path());
    assert!(
        whole.status.success(),
        "the untouched copy fails:\n{}",
        text(&whole.stderr)
    );

    let changed = "multinode/lulesh-icelake.csv";
    let path = dir.path().join(changed);
    let mut bytes = std::fs::read(&path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    // The copy keeps the fixtures' read-only mode: make it writable (root writes regardless).
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o644);
    std::fs::set_permissions(&path, perms).unwrap();
    std::fs::write(&path, bytes).unwrap();

    let out = check(dir.path());
    let err = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "stdout: {}\nstderr: {err}",
        text(&out.stdout)
    );
    assert!(err.contains(&format!("{changed} has SHA-256")), "{err}");
    assert!(
        err.contains("1 of 31 files"),
        "only the changed file is named:\n{err}"
    );
    assert!(
        !err.contains("paraver/"),
        "an untouched file is named:\n{err}"
    );
}
