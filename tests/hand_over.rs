//! What the user takes away matches what was measured: a job script launches the ranks and
//! threads the profile's runs used (or says loudly that it does not), and `fit` and
//! `machine check` print JSON on request. On the real Ice Lake runs of
//! the public data read from `../shared/fixtures`.

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
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
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
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
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
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
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

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn fit_json_carries_the_figures_the_text_prints() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, mach) = fit_fixture_code(d, "hpgmgfv", &[1, 2, 4, 8]);
    let prof = d.join("pj.json");
    let fit_csv = d.join("fit.csv");
    let args = |json: bool| {
        let mut a = vec![
            "fit",
            "--measured",
            s(&fit_csv),
            "--machine",
            s(&mach),
            "--profile-out",
            s(&prof),
            "--loo",
        ];
        if json {
            a.push("--json");
        }
        a.iter().map(|x| x.to_string()).collect::<Vec<_>>()
    };
    let run = |json: bool| {
        let a = args(json);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        jouleplan(&a)
    };
    let (rc, text, _) = run(false);
    assert_eq!(rc, 0);
    let (rc, out, err) = run(true);
    assert_eq!(rc, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(doc["format"], "jouleplan-fit/1");
    assert_eq!(doc["node_counts"], serde_json::json!([1, 2, 4, 8]));
    assert_eq!(doc["energy_scope"], "cpu");
    assert_eq!(doc["layout"]["threads_per_rank"], 1);
    let combined = doc["node_law"]["combined"].as_str().unwrap();
    assert!(text.contains(combined), "{combined} not in\n{text}");
    let weights: f64 = doc["node_law"]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["weight"].as_f64().unwrap())
        .sum();
    assert!((weights - 1.0).abs() < 1e-9, "{weights}");
    assert!(doc["power"][0]["idle_w"].as_f64().unwrap() > 0.0, "{doc}");
    assert_eq!(doc["wrote"], serde_json::json!([s(&prof)]));
    assert!(doc["leave_one_out"]["time"]["mape_pct"].as_f64().unwrap() < 20.0);
    assert!(!err.contains('{'), "stderr holds notes only: {err}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn machine_check_json_names_what_is_missing_and_init_keeps_stdout_empty() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = d.join("node.toml");
    let (rc, out, err) = jouleplan(&["machine", "init", "--output", s(&file)]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(out, "", "machine init --output prints nothing on stdout");
    assert!(err.contains("wrote"), "{err}");
    let (rc, out, err) = jouleplan(&["machine", "check", "--json", s(&file)]);
    assert_eq!(rc, 2, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(doc["complete"], false);
    let problems = doc["problems"].to_string();
    assert!(
        problems.contains("[network]") && problems.contains("[power]"),
        "{problems}"
    );
    assert!(doc["power"].is_null() && doc["network"].is_null(), "{doc}");
    // A complete file: exit 0, its values.
    let (_, mach) = fit_fixture_code(d, "hpgmgfv", &[1, 2, 4, 8]);
    let (rc, out, err) = jouleplan(&["machine", "check", "--json", s(&mach)]);
    assert_eq!(rc, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["complete"], true);
    assert_eq!(doc["cores_per_node"], 72);
    assert!(doc["power"]["idle_w"][0].as_f64().unwrap() > 0.0, "{doc}");
}

#[test]
fn small_things_read_as_a_user_expects() {
    // The flag of a missing file is named.
    let (rc, _, err) = jouleplan(&["plan", "--profile", "nothere.json"]);
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("--profile nothere.json: cannot read: No such file"),
        "{err}"
    );
    // --help ends with examples; the man page's NAME line does not repeat the name.
    let (_, help, _) = jouleplan(&["--help"]);
    assert!(help.contains("Examples:\n  jouleplan "), "{help}");
    let (_, man, _) = jouleplan(&["man"]);
    let name = man.lines().skip_while(|l| *l != ".SH NAME").nth(1).unwrap();
    assert!(name.starts_with("jouleplan \\- Energy"), "{name}");
    // A frequency in MHz gets a hint.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/machines/icelake-8360y.toml"),
    )
    .unwrap()
    .replace("frequencies_ghz = [2.4]", "frequencies_ghz = [2400]");
    let f = common::write(dir.path(), "mhz.toml", &text);
    let (rc, _, err) = jouleplan(&["machine", "check", "--json", s(&f)]);
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("2400 looks like MHz, which is 2.4 GHz"),
        "{err}"
    );
    // Counts of one in the singular.
    let (rc, out, err) = jouleplan(&[]);
    assert_eq!(rc, 0, "{err}");
    for wrong in ["1 cores", "1 GPU counts", "1 points", "1 runs"] {
        assert!(
            !out.contains(wrong) && !err.contains(wrong),
            "{wrong}:\n{out}\n{err}"
        );
    }
    assert!(out.contains("x 1 GPU count ="), "{out}");
    assert!(out.contains("measured on one H100 node"), "{out}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_closed_standard_error_loses_no_output() {
    // `fit ... 2>&1 | head -2`: the reader goes away while notes are still being said.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, _) = fit_fixture_code(d, "hpgmgfv", &[1, 2, 4, 8]);
    let (prof, mach) = (d.join("p2.json"), d.join("m2.toml"));
    let machine = Path::new(env!("CARGO_MANIFEST_DIR")).join(common::ICELAKE);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_jouleplan"))
        .args([
            "fit",
            "--measured",
            s(&d.join("fit.csv")),
            "--machine",
            s(&machine),
        ])
        .args(["--profile-out", s(&prof), "--machine-out", s(&mach)])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    assert_ne!(status.code(), Some(101), "no panic on a closed pipe");
    assert!(
        prof.is_file() && mach.is_file(),
        "both outputs written: {status}"
    );
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn too_few_runs_with_energy_are_not_called_a_missing_column() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = std::fs::read_to_string(common::multinode("hpgmgfv.csv")).unwrap();
    let two: String = text.lines().take(2).map(|l| format!("{l}\n")).collect();
    let csv = common::write(d, "one.csv", &two);
    let machine = Path::new(env!("CARGO_MANIFEST_DIR")).join(common::ICELAKE);
    let (rc, _, err) = jouleplan(&[
        "fit",
        "--measured",
        s(&csv),
        "--machine",
        s(&machine),
        "--profile-out",
        s(&d.join("p.json")),
    ]);
    assert_eq!(rc, 2, "{err}");
    assert!(!err.contains("no energy_j column"), "{err}");
    assert!(err.contains("1 run with energy"), "{err}");
}
