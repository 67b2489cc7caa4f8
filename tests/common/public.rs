//! Public data the tests read but the repository never holds: the folder `build.rs` found
//! (`JOULEPLAN_FIXTURES`, else `../shared/fixtures`). A test that needs it carries
//! `#[cfg_attr(not(public_fixtures), ignore = "needs the public fixtures: ...")]` (the text of
//! [`PUBLIC_IGNORE`]), so a clone without the data reports it as ignored with the reason.
//! Files derived from it (the per-code measured CSVs) are made at test time, once a process.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The reason every test that needs the public data gives when it is missing (the attribute's
/// text must be a literal, so tests repeat it; keep them equal).
pub const PUBLIC_IGNORE: &str = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release";

/// The public fixtures folder; panics with the fetch command where the build found none (a
/// test that calls this must carry the ignore attribute above).
pub fn public_root() -> PathBuf {
    match option_env!("JOULEPLAN_PUBLIC_FIXTURES") {
        Some(p) => PathBuf::from(p),
        None => panic!("{PUBLIC_IGNORE}"),
    }
}

/// A file of the public fixtures, e.g. `multinode/pmbs23-icelake.csv`.
pub fn public_fixture(rel: &str) -> PathBuf {
    let p = public_root().join(rel);
    assert!(p.exists(), "{} is missing from the public fixtures", p.display());
    p
}

/// The folder of measured-run CSVs made from the Ice Lake fixture, one a code
/// (`hpgmgfv.csv`, ..., `lulesh-60.csv`, ...), as `scripts/multinode_csv.sh` makes them.
pub fn multinode_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        write_multinode_csvs(&public_root().join("multinode"), dir.path());
        dir
    })
    .path()
}

/// One code's measured-run CSV made from the Ice Lake fixture (see [`multinode_dir`]).
pub fn multinode(file: &str) -> PathBuf {
    let p = multinode_dir().join(file);
    assert!(p.exists(), "no {file} among the Ice Lake codes");
    p
}

const HEADER: &str = "nodes,cores,freq_hz,gpus,time_s,energy_j,ranks,energy_scope\n";

/// The Rust twin of `scripts/multinode_csv.sh`: SPEChpc `small` runs per code (cores = most
/// ranks on one node, energy = package + DRAM) and LULESH's cluster runs per size.
pub fn write_multinode_csvs(src: &Path, out: &Path) {
    let mut files: std::collections::BTreeMap<String, String> = Default::default();
    for f in rows(&src.join("pmbs23-icelake.csv")) {
        if f[1] == "small" {
            let energy = sig7(num(&f[7]) + num(&f[8]));
            let line = format!("{},{},{},0,{},{energy},{},cpu\n", f[2], f[4], f[5], f[6], f[3]);
            files.entry(format!("{}.csv", f[0])).or_insert_with(|| HEADER.into()).push_str(&line);
        }
    }
    for f in rows(&src.join("lulesh-icelake.csv")) {
        if f[0] == "5-MPI-ICL-cluster" {
            let (nodes, tasks) = (num(&f[2]), num(&f[3]));
            let cores = ((tasks + nodes - 1.0) / nodes).floor();
            let energy = sig7(num(&f[10]) + num(&f[11]));
            let freq = num(&f[1]) * 1000.0;
            let line = format!("{},{cores},{freq},0,{},{energy},{},cpu\n", f[2], f[9], f[3]);
            files.entry(format!("lulesh-{}.csv", f[5])).or_insert_with(|| HEADER.into()).push_str(&line);
        }
    }
    assert!(!files.is_empty(), "no runs read from {}", src.display());
    for (name, text) in files {
        std::fs::write(out.join(name), text).unwrap();
    }
}

fn rows(path: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().skip(1).filter(|l| !l.is_empty()).map(|l| l.split(',').map(String::from).collect()).collect()
}

fn num(s: &str) -> f64 {
    s.trim().parse().unwrap_or_else(|_| panic!("not a number: {s:?}"))
}

/// `printf %.7g`'s value: 7 significant digits.
fn sig7(x: f64) -> String {
    let v: f64 = format!("{x:.6e}").parse().unwrap();
    format!("{v}")
}
