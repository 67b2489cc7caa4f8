//! Finds the public data the tests read (never part of this repository): the folder named by
//! `JOULEPLAN_FIXTURES`, else `../shared/fixtures` beside the checkout. Where it is found, the
//! tests are built with `cfg(public_fixtures)` and `JOULEPLAN_PUBLIC_FIXTURES` set to its path;
//! where it is not, the tests that need it are reported as ignored, with the reason.
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo::rustc-check-cfg=cfg(public_fixtures)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=JOULEPLAN_FIXTURES");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let (dir, named) = match std::env::var_os("JOULEPLAN_FIXTURES") {
        Some(d) if !d.is_empty() => (PathBuf::from(d), true),
        _ => (manifest.join("../shared/fixtures"), false),
    };
    if complete(&dir) {
        let dir = dir.canonicalize().unwrap_or(dir);
        println!("cargo::rerun-if-changed={}", dir.display());
        println!("cargo::rustc-cfg=public_fixtures");
        println!(
            "cargo::rustc-env=JOULEPLAN_PUBLIC_FIXTURES={}",
            dir.display()
        );
        return;
    }
    // Missing: setting JOULEPLAN_FIXTURES (scripts/public-data.sh prints how) makes cargo look
    // again, and so does the data appearing in the nearest folder of its path that exists (the
    // folder named, else `../shared/fixtures`, else `../shared`; never higher, never the
    // checkout's parent). Where none exists nothing more is watched: a path that does not
    // exist would make cargo rerun this script, and rebuild the crate, on every build.
    let watched = match named {
        true => vec![dir],
        false => vec![dir, manifest.join("../shared")],
    };
    if let Some(near) = watched.iter().find(|d| d.is_dir()) {
        println!("cargo::rerun-if-changed={}", near.display());
    }
}

/// Whether `dir` holds the three public sources the tests read; a folder without them is not
/// the fixtures.
fn complete(dir: &Path) -> bool {
    [
        "multinode/pmbs23-icelake.csv",
        "paraver/epoch",
        "energy/xeon-phi-spmv",
    ]
    .iter()
    .all(|rel| dir.join(rel).exists())
}
