//! What the user takes away matches what was measured: a job script launches the ranks and
//! threads the profile's runs used (or says loudly that it does not), and `fit` and
//! `machine check` print JSON on request. On the real Ice Lake runs of
//! `tests/data/multinode/`.

mod common;

use common::{fit_fixture_code, jouleplan};
use serde_json::Value;
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `plan --sbatch` on `(profile, machine)` with `extra` flags: (exit code, stderr, script).
fn job(d: &Path, (prof, mach): (&Path, &Path), extra: &[&str]) -> (i32, String, String) {
    let script = d.join("job.sh");
    let _ = std::fs::remove_file(&script);
    let mut args = vec![
        "plan",
        "--machine",
        s(mach),
        "--profile",
        s(prof),
        "--nodes",
        "1-16",
        "--cores",
        "72",
        "--sbatch",
        s(&script),
        "--app",
        "./hpgmgfv",
    ];
    args.extend(extra);
    let (rc, _, err) = jouleplan(&args);
    let text = std::fs::read_to_string(&script).unwrap_or_default();
    (rc, err, text)
}

fn line_value(script: &str, key: &str) -> String {
    script
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .unwrap_or_else(|| panic!("no {key} in\n{script}"))
        .trim()
        .to_string()
}

#[test]
fn a_job_script_for_mpi_only_runs_launches_one_rank_a_core() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (prof, mach) = fit_fixture_code(d, "hpgmgfv", &[1, 2, 4, 8]);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&prof).unwrap()).unwrap();
    assert_eq!(doc["layout"]["threads_per_rank"], 1, "{}", doc["layout"]);
    let (rc, err, script) = job(d, (&prof, &mach), &[]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(line_value(&script, "#SBATCH --ntasks-per-node="), "72");
    assert_eq!(line_value(&script, "#SBATCH --cpus-per-task="), "1");
    assert_eq!(line_value(&script, "export OMP_NUM_THREADS="), "1");
    assert!(
        script.contains("# Layout: 72 MPI ranks a node x 1 thread a rank, as measured"),
        "{script}"
    );
    assert!(!script.contains("WARNING: the layout asked"), "{script}");
}

#[test]
fn a_layout_asked_that_differs_from_the_measured_one_is_said_loudly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (prof, mach) = fit_fixture_code(d, "hpgmgfv", &[1, 2, 4, 8]);
    let (rc, err, script) = job(d, (&prof, &mach), &["--ntasks-per-node", "1"]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(line_value(&script, "#SBATCH --cpus-per-task="), "72");
    let said = "is not the one measured (72 MPI ranks a node x 1 thread a rank)";
    assert!(err.contains(said), "{err}");
    assert!(script.contains("# WARNING: the layout asked"), "{script}");
    assert!(script.contains(said), "{script}");
    // Asking for the measured layout is no warning.
    let (rc, err, script) = job(d, (&prof, &mach), &["--cpus-per-task", "1"]);
    assert_eq!(rc, 0, "{err}");
    assert!(!err.contains("is not the one measured"), "{err}");
    assert_eq!(line_value(&script, "#SBATCH --ntasks-per-node="), "72");
}

#[test]
fn runs_without_ranks_give_a_job_script_that_says_its_layout_is_assumed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (prof, mach) = fit_fixture_code(d, "hpgmgfv", &[1, 2, 4, 8]);
    // The same runs without their ranks column.
    let text = std::fs::read_to_string(d.join("fit.csv")).unwrap();
    let cut: String = text
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            format!("{},{}\n", f[..6].join(","), f[7])
        })
        .collect();
    let csv = common::write(d, "noranks.csv", &cut);
    let prof2 = d.join("p2.json");
    let (rc, out, err) = jouleplan(&[
        "fit",
        "--measured",
        s(&csv),
        "--machine",
        s(&mach),
        "--profile-out",
        s(&prof2),
    ]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("layout: not recorded"), "{out}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&prof2).unwrap()).unwrap();
    assert!(doc.get("layout").is_none(), "{doc}");
    let (rc, err, script) = job(d, (&prof2, &mach), &[]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        script.contains("assumed: the profile records no layout"),
        "{script}"
    );
    drop(prof);
}
