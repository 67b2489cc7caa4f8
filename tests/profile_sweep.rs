//! `jouleplan profile` end to end on this machine: real runs of the bundled heat example, failed
//! and timed-out runs, Ctrl-C and `--resume`, frequency control on a cpufreq fixture tree.

mod common;

use common::jouleplan;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The heat example, which `cargo test` builds next to the binary.
fn heat() -> PathBuf {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_jouleplan"));
    let p = bin
        .parent()
        .expect("binary folder")
        .join("examples")
        .join("heat");
    assert!(
        p.exists(),
        "{} missing: `cargo test` builds examples",
        p.display()
    );
    p
}

fn read(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).expect("profile written")).expect("JSON")
}

fn runs(doc: &Value) -> Vec<Value> {
    doc["sweep"]["record"]["runs"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_real_sweep_of_the_heat_example_gives_a_profile_that_plan_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("heat.json");
    let heat = heat();
    let (code, stdout, stderr) = jouleplan(&[
        "profile",
        "--cores",
        "1,2",
        "--repeat",
        "2",
        "--iterations",
        "60",
        "--output",
        out.to_str().unwrap(),
        "--",
        heat.to_str().unwrap(),
        "384",
        "60",
    ]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("4 runs made"), "{stdout}");
    let doc = read(&out);
    let base = doc["baseline"].as_array().unwrap();
    assert_eq!(base.len(), 2);
    for (p, c) in base.iter().zip([1.0, 2.0]) {
        assert_eq!(p["cores"].as_f64(), Some(c));
        let u = p["utilisation"].as_f64().unwrap();
        assert!(u > 0.05 && u <= 1.0, "utilisation {u}");
        assert!(p["wall_time_s"].as_f64().unwrap() > 0.0);
        assert!(p["cycles"].as_f64().unwrap() > 1e6);
    }
    let rs = runs(&doc);
    assert_eq!(rs.len(), 4);
    assert!(rs.iter().all(|r| r["ok"] == Value::Bool(true)));
    assert_eq!(doc["sweep"]["record"]["complete"], Value::Bool(true));
    assert!(doc["provenance"]["host.kernel"].as_str().is_some());
    // Whatever this machine lacks is said, and the assumption made for it is in the profile.
    let assumptions = doc["assumptions"].to_string();
    let counted = rs.iter().all(|r| r["readings"]["cycles"].is_number());
    if !counted {
        assert!(
            assumptions.contains("cycles were not counted"),
            "{assumptions}"
        );
    }
    if !Path::new("/sys/class/powercap/intel-rapl:0").exists() {
        // Said once, on standard error, as the sweep began.
        assert_eq!(stderr.matches("CPU energy (RAPL)").count(), 1, "{stderr}");
        assert!(!stdout.contains("CPU energy (RAPL)"), "{stdout}");
        assert!(assumptions.contains("no energy was measured"));
    }
    // The profile records this machine: planning it against the bundled Xeon Phi is refused,
    // naming both; --other-machine plans it and the recommendation says so.
    let (code, _, plan_err) = jouleplan(&["plan", "--profile", out.to_str().unwrap()]);
    assert_eq!(code, 2, "{plan_err}");
    assert!(plan_err.contains("not on machine `h100-gpu`"), "{plan_err}");
    assert!(
        plan_err.contains("2 physical cores where the machine file has 16"),
        "{plan_err}"
    );
    let (code, plan_out, plan_err) = jouleplan(&[
        "plan",
        "--profile",
        out.to_str().unwrap(),
        "--other-machine",
        "--accept-model-error",
    ]);
    assert_eq!(code, 0, "{plan_out}\n{plan_err}");
    assert!(
        plan_err.contains("warning: planned on another machine"),
        "{plan_err}"
    );
    assert!(plan_err.contains("profile assumption"), "{plan_err}");
    assert!(plan_err.contains("cores 3-16 left out"), "{plan_err}");
    assert!(plan_out.contains("Recommendation"), "{plan_out}");
}

#[test]
fn a_failed_run_is_recorded_with_its_stderr_and_the_sweep_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    let (code, stdout, stderr) = jouleplan(&[
        "profile",
        "--cores",
        "1,2",
        "--output",
        out.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        "if [ \"$OMP_NUM_THREADS\" = 2 ]; then echo boom on two >&2; exit 3; fi",
    ]);
    assert_eq!(code, 4, "{stdout}");
    assert!(
        stderr.contains("exit status 3") && stderr.contains("boom on two"),
        "{stderr}"
    );
    let doc = read(&out);
    let rs = runs(&doc);
    assert_eq!(rs.len(), 2);
    assert_eq!(rs[1]["ok"], Value::Bool(false));
    assert!(
        rs[1]["stderr_tail"]
            .as_str()
            .unwrap()
            .contains("boom on two")
    );
    assert_eq!(doc["baseline"].as_array().unwrap().len(), 1);
}

#[test]
fn a_run_past_the_time_limit_is_stopped_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    let t = std::time::Instant::now();
    let (code, stdout, _) = jouleplan(&[
        "profile",
        "--cores",
        "1",
        "--timeout",
        "300ms",
        "--output",
        out.to_str().unwrap(),
        "--",
        "sleep",
        "20",
    ]);
    assert_eq!(code, 4, "{stdout}");
    assert!(t.elapsed() < Duration::from_secs(10));
    let rs = runs(&read(&out));
    assert_eq!(rs[0]["failure"], "stopped at the time limit");
    assert!(rs[0]["wall_s"].as_f64().unwrap() < 5.0);
}

#[test]
fn a_missing_command_and_an_unknown_program_are_clear_errors() {
    let (code, _, err) = jouleplan(&["profile", "--cores", "1"]);
    assert_eq!(code, 2);
    assert!(err.contains("COMMAND"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    let (code, _, err) = jouleplan(&[
        "profile",
        "--cores",
        "1",
        "--output",
        out.to_str().unwrap(),
        "--",
        "/no/such/program",
    ]);
    // Found missing before any run: named, exit 2, nothing written.
    assert_eq!(code, 2);
    assert!(err.contains("`/no/such/program` was not found"), "{err}");
    assert!(!out.exists());
}

#[test]
fn an_existing_profile_is_not_overwritten_and_resume_needs_the_same_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    let o = out.to_str().unwrap();
    let (code, ..) = jouleplan(&["profile", "--cores", "1", "--output", o, "--", "true"]);
    assert_eq!(code, 0);
    let before = std::fs::read_to_string(&out).unwrap();
    let (code, _, err) = jouleplan(&["profile", "--cores", "1", "--output", o, "--", "true"]);
    assert_eq!(code, 2, "bad input: the file exists");
    assert!(err.contains("--resume"), "{err}");
    let (code, _, err) = jouleplan(&[
        "profile", "--cores", "1", "--resume", "--output", o, "--", "false",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("same command"), "{err}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), before);
    // Resuming a complete sweep makes no run.
    let (code, stdout, _) = jouleplan(&[
        "profile", "--cores", "1", "--resume", "--output", o, "--", "true",
    ]);
    assert_eq!(code, 0);
    assert!(stdout.contains("0 runs made, 1 already there"), "{stdout}");
}

#[test]
fn ctrl_c_keeps_every_finished_run_and_resume_completes_the_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    let o = out.to_str().unwrap().to_string();
    let args = [
        "profile", "--cores", "1,2", "--repeat", "4", "--output", &o, "--", "sleep", "0.4",
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_jouleplan"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until at least two runs are on disk, then interrupt.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let done = std::fs::read_to_string(&out)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .map(|d| runs(&d).len())
            .unwrap_or(0);
        if done >= 2 || std::time::Instant::now() > deadline {
            break;
        }
    }
    // SAFETY: signals our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let first = read(&out);
    let kept: Vec<Value> = runs(&first)
        .into_iter()
        .filter(|r| r["ok"] == Value::Bool(true))
        .collect();
    assert!(kept.len() >= 2 && kept.len() < 8, "{} ok runs", kept.len());
    assert_eq!(first["sweep"]["record"]["complete"], Value::Bool(false));

    let (code, stdout, _) = jouleplan(&[
        "profile", "--cores", "1,2", "--repeat", "4", "--resume", "--output", &o, "--", "sleep",
        "0.4",
    ]);
    assert_eq!(code, 0, "{stdout}");
    let second = read(&out);
    let all_ok: Vec<Value> = runs(&second)
        .into_iter()
        .filter(|r| r["ok"] == Value::Bool(true))
        .collect();
    assert_eq!(all_ok.len(), 8);
    // The runs measured before the interruption are kept exactly.
    assert_eq!(&all_ok[..kept.len()], &kept[..]);
    assert_eq!(second["sweep"]["record"]["complete"], Value::Bool(true));
}

#[test]
fn frequencies_are_set_through_cpufreq_and_restored_afterwards() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("cpu");
    for c in 0..2 {
        let d = root.join(format!("cpu{c}/cpufreq"));
        std::fs::create_dir_all(&d).unwrap();
        for (f, v) in [
            (
                "scaling_available_governors",
                "performance powersave userspace",
            ),
            ("scaling_governor", "performance"),
            ("scaling_setspeed", "<unsupported>"),
            ("scaling_available_frequencies", "2400000 1800000 1200000"),
            ("scaling_cur_freq", "2400000"),
        ] {
            std::fs::write(d.join(f), format!("{v}\n")).unwrap();
        }
    }
    let out = dir.path().join("p.json");
    // The program records the setspeed it ran under.
    let probe = format!(
        "echo $(cat {}/cpu0/cpufreq/scaling_setspeed) >> {}/seen",
        root.display(),
        dir.path().display()
    );
    let (code, stdout, stderr) = jouleplan(&[
        "profile",
        "--cores",
        "1",
        "--freqs",
        "1.2,1.8",
        "--cpu-root",
        root.to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        &probe,
    ]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let seen = std::fs::read_to_string(dir.path().join("seen")).unwrap();
    assert_eq!(seen, "1200000\n1800000\n");
    let gov = std::fs::read_to_string(root.join("cpu1/cpufreq/scaling_governor")).unwrap();
    assert_eq!(gov.trim(), "performance", "governor restored");
    let doc = read(&out);
    let freqs: Vec<f64> = doc["baseline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["freq_hz"].as_f64().unwrap())
        .collect();
    assert_eq!(freqs, vec![1.2e9, 1.8e9]);
    // A frequency the driver does not offer is refused before anything runs.
    let (code, _, err) = jouleplan(&[
        "profile",
        "--cores",
        "1",
        "--freqs",
        "1.5",
        "--cpu-root",
        root.to_str().unwrap(),
        "--output",
        dir.path().join("q.json").to_str().unwrap(),
        "--",
        "true",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("not one the cpufreq driver offers"), "{err}");
}

/// `profile --perf-stat` of the recorded Zen 3 capture at 1 core and 1.0 GHz into `out`, with
/// `extra` flags: (exit code, stdout, stderr).
fn import_capture(out: &Path, extra: &[&str]) -> (i32, String, String) {
    let capture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perfstat/zen3-kvm-random-reads.csv");
    let mut args = vec!["profile", "--perf-stat", capture.to_str().unwrap()];
    args.extend([
        "--cores",
        "1",
        "--freqs",
        "1.0",
        "--output",
        out.to_str().unwrap(),
    ]);
    args.extend_from_slice(extra);
    jouleplan(&args)
}

#[test]
fn a_perf_stat_import_refuses_the_sweep_flags_it_cannot_honour() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("imported.json");
    let runs = dir.path().join("runs.csv");
    // Each was dropped without a word: --gpus 1 imported a point without GPUs, and no
    // --measured-out file was written.
    for (flag, value) in [
        ("--gpus", "1"),
        ("--gpu-clocks", "975"),
        ("--nodes", "1,2"),
        ("--measured-out", runs.to_str().unwrap()),
        ("--mpi-profiler", "mpip"),
    ] {
        let (code, _, err) = import_capture(&out, &[flag, value]);
        assert_eq!(code, 2, "{flag}: {err}");
        assert!(
            err.contains(flag) && err.contains("with --perf-stat"),
            "{err}"
        );
        assert!(!out.exists() && !runs.exists(), "{flag}: nothing written");
    }
}

#[test]
fn a_perf_stat_capture_from_a_cluster_node_becomes_a_point_plan_reads() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("imported.json");
    let (code, stdout, stderr) = import_capture(&out, &["--program", "random-reads"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let doc = read(&out);
    let p = &doc["baseline"][0];
    assert_eq!(p["cycles"].as_f64(), Some(7404605182.0));
    assert_eq!(p["stall_cycles"].as_f64(), Some(418262067.0));
    assert_eq!(p["mem_stall_cycles"].as_f64(), Some(352397497.0));
    assert!((p["wall_time_s"].as_f64().unwrap() - 3.48050178).abs() < 1e-9);
    // Said to be recorded at 1.0 GHz, 7.4e9 cycles cannot have run in 3.48 s on one core: the model
    // refuses to plan from it, and says which term is too large.
    // The bundled node at 1.0 GHz.
    let node =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("models/h100-gpu.toml"))
            .unwrap()
            .replace("frequencies_ghz = [2.1]", "frequencies_ghz = [1.0]");
    let node_file = dir.path().join("node.toml");
    std::fs::write(&node_file, node).unwrap();
    let m = node_file.to_str().unwrap();
    let (code, _, err) = jouleplan(&["plan", "--machine", m, "--profile", out.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("alone exceed the measured time"), "{err}");
    assert!(err.contains("(1 core, 1 GHz, 0 GPUs)"), "{err}");
    let (code, plan_out, err) = jouleplan(&[
        "plan",
        "--machine",
        m,
        "--profile",
        out.to_str().unwrap(),
        "--accept-model-error",
    ]);
    assert_eq!(code, 0, "{plan_out}{err}");
    assert!(err.contains("cores 2-16 left out"), "{err}");
    assert!(err.contains("warning: model error accepted"), "{err}");
}

#[test]
fn warmup_runs_are_not_recorded_and_the_summary_reads_like_hyperfine() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    let marker = dir.path().join("count");
    // Each run appends a line: warm-ups and measured runs alike reach the program.
    let script = format!("echo run >> {}; echo to-stdout", marker.display());
    let (code, stdout, stderr) = jouleplan(&[
        "profile",
        "--cores",
        "1",
        "--repeat",
        "2",
        "--warmup",
        "1",
        "--show-output",
        "--output",
        out.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        &script,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let lines = std::fs::read_to_string(&marker).unwrap().lines().count();
    assert_eq!(lines, 3, "1 warm-up + 2 measured runs");
    assert_eq!(runs(&read(&out)).len(), 2, "the warm-up is not recorded");
    assert!(stderr.contains("warm-up 1/1 at 1 core,"), "{stderr}");
    assert!(stderr.contains("eta "), "{stderr}");
    assert!(
        stdout.contains("to-stdout"),
        "--show-output lets stdout through: {stdout}"
    );
    assert!(
        stdout.contains(" s ± ") && stdout.contains("(min "),
        "{stdout}"
    );
    // --quiet: no line per run.
    let out2 = dir.path().join("q.json");
    let (code, _, stderr) = jouleplan(&[
        "profile",
        "--cores",
        "1",
        "--quiet",
        "--output",
        out2.to_str().unwrap(),
        "--",
        "true",
    ]);
    assert_eq!(code, 0);
    assert!(!stderr.contains("[1/1]"), "{stderr}");
}

#[test]
fn talp_preloaded_during_the_sweep_stores_each_points_measured_tree() {
    // The program stands in for one run under DLB: it writes the recorded TALP output of the
    // H100 node (tests/data/fixtures/gpu-h100/talp) where DLB_ARGS tells TALP to write.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("p.json");
    let talp = common::fixture("gpu-h100/talp/talp_sync_c1.json");
    let script = format!(
        "cp '{}' \"${{DLB_ARGS##*--talp-output-file=}}\"; sleep 0.1",
        talp.display()
    );
    let (code, _, err) = jouleplan(&[
        "profile",
        "--mpi-profiler",
        "talp",
        "--cores",
        "1",
        "--repeat",
        "2",
        "--output",
        out.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        &script,
    ]);
    assert_eq!(code, 0, "{err}");
    let p = read(&out);
    let tree = &p["baseline"][0]["measured_tree"];
    assert_eq!(
        tree["source"],
        "TALP (preloaded during the sweep, mean of 2 runs)"
    );
    assert_eq!(tree["efficiencies"]["parallelEfficiency"], 0.83);
    assert_eq!(tree["efficiencies"]["deviceOffloadEfficiency"], 0.83);
    // No MPI in that program: said per run, and the profile assumes no messages.
    let run = &p["sweep"]["record"]["runs"][0]["readings"];
    assert!(
        run["warnings"][0]
            .as_str()
            .unwrap()
            .contains("TALP saw no MPI rank")
    );
}
