//! `scripts/public-data.sh --check DIR` against the public fixtures: its manifest's SHA-256 of
//! every public file matches the folder the tests read, and a copy with one byte changed is
//! refused, naming the file. And the build script that finds the fixtures: where they appear
//! beside the checkout after the first build, the next build finds them; where nothing is there,
//! builds are not rerun.
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

/// `cargo build -v` of the scratch crate at `krate`: its standard error.
fn build_scratch(krate: &Path, target: &Path) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["build", "-v", "--offline"])
        .current_dir(krate)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("JOULEPLAN_FIXTURES")
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    err
}

/// What this repository's build script said in the scratch crate's last build.
fn said(target: &Path) -> String {
    let build = target.join("debug/build");
    std::fs::read_dir(&build)
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.unwrap().path().join("output")).ok())
        .collect()
}

#[test]
fn the_build_finds_fixtures_that_appear_beside_the_checkout_and_is_not_rebuilt_without_them() {
    // A scratch crate with this repository's build.rs, in a folder with no `shared` beside it.
    let dir = tempfile::tempdir().unwrap();
    let (krate, target) = (dir.path().join("checkout"), dir.path().join("target"));
    std::fs::create_dir_all(krate.join("src")).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("build.rs"),
        krate.join("build.rs"),
    )
    .unwrap();
    std::fs::write(
        krate.join("Cargo.toml"),
        "[package]\nname = \"scratch\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(krate.join("src/lib.rs"), "").unwrap();
    build_scratch(&krate, &target);
    // Nothing to watch: the second build runs nothing again.
    let err = build_scratch(&krate, &target);
    assert!(err.contains("Fresh scratch"), "{err}");
    assert!(
        !said(&target).contains("rustc-cfg=public_fixtures"),
        "{}",
        said(&target)
    );
    // `../shared` appears: watched from then on, not rebuilt while it stays as it is.
    std::fs::create_dir(dir.path().join("shared")).unwrap();
    std::fs::write(
        krate.join("build.rs"),
        std::fs::read(krate.join("build.rs")).unwrap(),
    )
    .unwrap();
    build_scratch(&krate, &target);
    let err = build_scratch(&krate, &target);
    assert!(err.contains("Fresh scratch"), "{err}");
    // The fixtures appear in it: the next build finds them.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let fixtures = dir.path().join("shared/fixtures");
    for d in ["multinode", "paraver/epoch", "energy/xeon-phi-spmv"] {
        std::fs::create_dir_all(fixtures.join(d)).unwrap();
    }
    std::fs::write(fixtures.join("multinode/pmbs23-icelake.csv"), "").unwrap();
    build_scratch(&krate, &target);
    assert!(
        said(&target).contains("cargo::rustc-cfg=public_fixtures"),
        "{}",
        said(&target)
    );
}
