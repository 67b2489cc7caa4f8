//! The command line as a newcomer meets it: values in every usual spelling, errors that say
//! what was meant, one error line per failure, `slurm --json`, and the job script's resource
//! lines.

mod common;

use common::{inputs, jouleplan};
use serde_json::Value;

#[test]
fn durations_and_energies_in_the_usual_spellings_plan() {
    for (flag, v) in [
        ("--deadline", "500 ms"),
        ("--deadline", "00:10:00"),
        ("--deadline", "1-00:00:00"),
        ("--deadline", "2H"),
        ("--budget", "500 J"),
        ("--budget", "0.5kwh"),
        ("--budget", "500j"),
    ] {
        let (code, _, err) = jouleplan(&["plan", "--json", flag, v]);
        assert!(code == 0 || code == 3, "{flag} {v}: {err}");
        assert!(!err.contains("expected"), "{flag} {v}: {err}");
    }
}

#[test]
fn a_budget_in_scientific_notation_is_read_whatever_its_unit() {
    // `2.5e3kJ` was read and `1e3J` refused as "an energy with units".
    for v in ["1e3J", "5e-1kJ", "2.5e3kJ"] {
        let (code, out, err) = jouleplan(&["plan", "--json", "--budget", v]);
        assert!(code == 0 || code == 3, "{v}: {err}");
        let budget =
            serde_json::from_str::<serde_json::Value>(&out).unwrap()["query"]["budget_j"].as_f64();
        let want = [1e3, 500.0, 2.5e6][["1e3J", "5e-1kJ", "2.5e3kJ"]
            .iter()
            .position(|x| *x == v)
            .unwrap()];
        assert_eq!(budget, Some(want), "{v}: {out}");
    }
}

#[test]
fn a_limit_missed_by_less_than_the_printed_digits_says_both_to_the_digit() {
    // The bundled plan's fastest point takes 7.0885 s and its least energy is 2545.265 J: a
    // deadline of 7.088 s was "infeasible: no configuration finishes within 7.09 s; the
    // nearest front point is the fastest, ... (7.09 s, ...)".
    let (code, out, err) = jouleplan(&["plan", "--deadline", "7.088s"]);
    assert_eq!(code, 3, "{err}");
    assert!(
        out.contains("within 7.09 s") && out.contains("its 7.089 s is above the limit's 7.088 s"),
        "{out}"
    );
    let (code, out, err) = jouleplan(&["plan", "--budget", "2545.2J"]);
    assert_eq!(code, 3, "{err}");
    assert!(
        out.contains("its 2545.3 J is above the budget's 2545.2 J"),
        "{out}"
    );
    // Where the digits already tell them apart, nothing is added.
    let (code, out, err) = jouleplan(&["plan", "--deadline", "7s"]);
    assert_eq!(code, 3, "{err}");
    assert!(
        out.contains("within 7.00 s") && !out.contains("is above the limit's"),
        "{out}"
    );
}

#[test]
fn a_slowdown_above_one_without_percent_suggests_the_percentage() {
    let (code, out, err) = jouleplan(&["plan", "--slowdown", "10"]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.contains("did you mean 10%?"), "{err}");
    // A negative number is taken as the flag's value, and refused as such.
    let (code, _, err) = jouleplan(&["plan", "--slowdown", "-0.1"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--slowdown: expected a fraction >= 0"),
        "{err}"
    );
    let (code, _, err) = jouleplan(&["plan", "--slowdown", "150%"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn an_os_error_is_printed_once() {
    let (code, _, err) = jouleplan(&["plan", "--machine", "models/no-such.toml"]);
    assert_eq!(code, 2);
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn metrics_names_the_formats_it_reads() {
    let (code, _, err) = jouleplan(&["metrics", "README.md"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("a TALP output") && err.contains("mpiP"),
        "{err}"
    );
    let pcf = common::public_fixture("paraver/epoch/epoch_1proc.pcf");
    let (code, _, err) = jouleplan(&["metrics", pcf.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains(".prv or .prv.gz"), "{err}");
}

#[test]
fn slurm_json_gives_the_script_and_its_figures() {
    let i = inputs();
    let (code, out, err) = i.run(
        "slurm",
        &[
            "--config",
            "2,4,2.0",
            "--json",
            "--constraint",
            "gpu&ib",
            "--",
            "./app",
            "in put",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("slurm --json prints JSON");
    assert_eq!(v["config"]["nodes"], 2);
    assert!(v["time_limit"].as_str().unwrap().contains(':'));
    let script = v["script"].as_str().unwrap();
    assert!(script.starts_with("#!/bin/bash"), "{script}");
    assert!(script.contains("#SBATCH --constraint=gpu&ib"), "{script}");
    assert!(script.contains("'in put'"), "{script}");
    let (code, _, err) = i.run(
        "slurm",
        &["--config", "2,4,2.0", "--constraint", "a b", "--", "x"],
    );
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_stated_memory_footprint_becomes_mem_per_node() {
    let dir = tempfile::tempdir().unwrap();
    let mut p: Value = serde_json::from_str(&common::profile_json()).unwrap();
    p["memory_footprint_gib"] = 10.0.into();
    let prof = common::write(dir.path(), "p.json", &p.to_string());
    let m = common::write(dir.path(), "m.toml", common::MACHINE);
    let (code, out, err) = jouleplan(&[
        "slurm",
        "--config",
        "4,4,2.0",
        "--machine",
        m.to_str().unwrap(),
        "--profile",
        prof.to_str().unwrap(),
        "--",
        "./app",
    ]);
    assert_eq!(code, 0, "{err}");
    // 10 GiB over 4 nodes = 2.5 GiB = 2560 MiB per node.
    assert!(out.contains("#SBATCH --mem=2560M"), "{out}");
}

#[test]
fn completions_and_the_man_page_come_from_the_parser() {
    let (code, out, _) = jouleplan(&["completions", "bash"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("_jouleplan()") && out.contains("validate"),
        "{out}"
    );
    let (code, out, _) = jouleplan(&["man"]);
    assert_eq!(code, 0);
    assert!(out.contains(".TH jouleplan 1"), "{out}");
    assert!(out.contains(".TH jouleplan-plan 1") && out.contains("\\-\\-deadline"));
    let (code, _, _) = jouleplan(&["completions", "tcsh"]);
    assert_eq!(code, 2);
}

#[test]
fn a_missing_command_is_named_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    for (cmd, needle) in [
        (
            "./does-not-exist",
            "`./does-not-exist` was not found or is not an executable file",
        ),
        (
            "no-such-program-here",
            "`no-such-program-here` was not found on PATH",
        ),
    ] {
        let (code, _, err) = jouleplan(&[
            "profile",
            "--cores",
            "1",
            "--output",
            out.to_str().unwrap(),
            "--",
            cmd,
        ]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(needle), "{err}");
        assert!(!out.exists(), "nothing written");
    }
}

#[test]
fn a_sweep_whose_every_run_failed_says_so_and_plan_explains() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    let (code, stdout, _) = jouleplan(&[
        "profile",
        "--cores",
        "1",
        "--output",
        out.to_str().unwrap(),
        "--",
        "false",
    ]);
    assert_eq!(code, 4);
    assert!(stdout.contains("every run failed"), "{stdout}");
    assert!(!stdout.contains("sweep complete"), "{stdout}");
    let (code, _, err) = jouleplan(&["plan", "--profile", out.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("no run of the sweep succeeded"), "{err}");
}

#[test]
fn metrics_reads_exact_mpip_bytes_names_processes_and_flags_implausible_talp_values() {
    let mpip = common::fixture("mpip/mpi_imbalance_2ranks.mpiP");
    let (code, out, err) = jouleplan(&["metrics", mpip.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("65536 bytes sent (8192 bytes per message)"),
        "{out}"
    );
    let omp = common::fixture("talp/test_omp_nested_profile_1_0.json");
    let (_, out, _) = jouleplan(&["metrics", omp.to_str().unwrap()]);
    assert!(
        out.contains("1 process, no MPI") && !out.contains("0 ranks"),
        "{out}"
    );
    // A region longer than the run and a useful time ten times the elapsed time, as a
    // corrupted file has them (negative times are refused outright).
    let hybrid = common::fixture("talp/test_hybrid_profile_1_0.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(hybrid).unwrap()).unwrap();
    let app = v["Application"].as_object_mut().unwrap();
    let other = app.keys().find(|k| *k != "Global").unwrap().clone();
    app[&other]["elapsedTime"] = serde_json::json!(25_082_000_000_000u64);
    let elapsed = app["Global"]["elapsedTime"].as_f64().unwrap();
    app["Global"]["usefulTime"] = serde_json::json!(10.0 * elapsed);
    let dir = tempfile::tempdir().unwrap();
    let bad = common::write(dir.path(), "bad.json", &v.to_string());
    let (code, out, err) = jouleplan(&["metrics", bad.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!("implausible: region {other} lasted 25082.000 s")),
        "{out}"
    );
    assert!(
        out.contains("recomputed from the region's times (an efficiency lies in [0, 1])"),
        "{out}"
    );
    let (code, out, _) = jouleplan(&["metrics", bad.to_str().unwrap(), "--region", "Global"]);
    assert_eq!(code, 0);
    assert!(!out.contains(&format!("region {other} (")), "{out}");
}

#[test]
fn an_output_path_that_is_a_device_is_refused_not_replaced() {
    let i = inputs();
    let (code, _, err) = i.run(
        "slurm",
        &[
            "--config",
            "1,4,2.0",
            "--sbatch",
            "/dev/null",
            "--",
            "./app",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("/dev/null: cannot write: exists and is not a regular file"),
        "{err}"
    );
    let meta = std::fs::metadata("/dev/null").unwrap();
    assert!(!meta.is_file(), "/dev/null is still a device");
}
