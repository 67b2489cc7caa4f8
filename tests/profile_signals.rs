//! `profile` stopped as a batch system stops it: SIGTERM (scancel, a time limit) and SIGHUP
//! end the measured program's process group (SIGKILL after a grace period for one that
//! ignores SIGTERM), save every finished run and the measured CSV, and exit 128 + the signal
//! with a message; a SIGKILLed `profile` leaves no measured program running. Real processes,
//! real signals.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn start(dir: &Path, program: &str, repeat: &str) -> Child {
    start_argv(dir, &["/bin/sh", "-c", program], repeat)
}

fn start_argv(dir: &Path, argv: &[&str], repeat: &str) -> Child {
    start_with(dir, &[], argv, repeat)
}

fn start_with(dir: &Path, flags: &[&str], argv: &[&str], repeat: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_jouleplan"))
        .current_dir(dir)
        .env_remove("SLURM_JOB_ID")
        .arg("profile")
        .args(flags)
        .args([
            "--cores",
            "1",
            "--repeat",
            repeat,
            "--output",
            "p.json",
            "--measured-out",
            "m.csv",
            "--",
        ])
        .args(argv)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(child: &Child, sig: libc::c_int) {
    // SAFETY: signals our own child process.
    unsafe { libc::kill(child.id() as libc::pid_t, sig) };
}

/// Whether `sleep SECONDS` (the measured program's own process) is running.
fn running(seconds: &str) -> bool {
    let want = format!("sleep\0{seconds}\0");
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline"))
            .map(|c| c == want.as_bytes())
            .unwrap_or(false)
    })
}

fn wait_for(path: &Path, lines: usize) {
    let t = Instant::now();
    while std::fs::read_to_string(path)
        .map(|s| s.matches("\"finished_unix\"").count() < lines)
        .unwrap_or(true)
    {
        assert!(t.elapsed() < Duration::from_secs(30), "no run saved");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn sigterm_saves_every_finished_run_and_exits_143() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let child = start(d, "sleep 0.7", "5");
    wait_for(&d.join("p.json"), 1);
    signal(&child, libc::SIGTERM);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{err}");
    assert!(err.contains("SIGTERM") && err.contains("saved"), "{err}");
    let csv = std::fs::read_to_string(d.join("m.csv")).unwrap();
    assert!(
        csv.lines().count() >= 2,
        "the finished run is in the CSV: {csv}"
    );
}

#[test]
fn a_program_that_ignores_sigterm_is_killed_after_the_grace_period() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let marker = "31.4159";
    let child = start(d, &format!("trap '' TERM; sleep {marker}"), "1");
    let t = Instant::now();
    while !running(marker) {
        assert!(t.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(20));
    }
    signal(&child, libc::SIGHUP);
    let t = Instant::now();
    let out = child.wait_with_output().unwrap();
    let waited = t.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(129), "{err}");
    assert!(waited < Duration::from_secs(20), "{waited:?}");
    assert!(!running(marker), "the program outlived profile");
}

#[test]
fn grace_sets_how_long_a_program_that_ignores_sigterm_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let marker = "33.1415";
    let program = format!("trap '' TERM; sleep {marker}");
    let child = start_with(d, &["--grace", "1"], &["/bin/sh", "-c", &program], "1");
    let t = Instant::now();
    while !running(marker) {
        assert!(t.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(20));
    }
    signal(&child, libc::SIGTERM);
    let t = Instant::now();
    let out = child.wait_with_output().unwrap();
    let waited = t.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{err}");
    // The default grace is 10 s: with --grace 1 the program is gone well before.
    assert!(waited < Duration::from_secs(8), "{waited:?}");
    assert!(!running(marker), "the program outlived profile");
}

#[test]
fn a_grace_that_is_not_a_positive_number_is_refused_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    for bad in ["0", "-1", "NaN", "inf", "ten"] {
        let out = start_with(dir.path(), &["--grace", bad], &["true"], "1")
            .wait_with_output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--grace {bad}: {err}");
        assert!(err.contains("--grace") && err.contains("above 0"), "{err}");
        assert!(!dir.path().join("p.json").exists(), "nothing ran for {bad}");
    }
}

#[test]
fn a_sigkilled_profile_leaves_no_measured_program_running() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The program itself dies with profile (PR_SET_PDEATHSIG); processes it starts are its
    // own to end.
    let marker = "27.1828";
    let mut child = start_argv(d, &["sleep", marker], "1");
    let t = Instant::now();
    while !running(marker) {
        assert!(t.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(20));
    }
    signal(&child, libc::SIGKILL);
    let _ = child.wait();
    let t = Instant::now();
    while running(marker) {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "the program outlived profile"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The runs of a profile and its journal as (repeat, wall time) pairs, the journal's after
/// the profile's (a torn last line left out).
fn saved_runs(d: &Path) -> Vec<(u64, f64)> {
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("p.json")).unwrap()).unwrap();
    let key =
        |r: &serde_json::Value| (r["repeat"].as_u64().unwrap(), r["wall_s"].as_f64().unwrap());
    let mut runs: Vec<(u64, f64)> = doc["sweep"]["record"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(key)
        .collect();
    let journal = std::fs::read_to_string(d.join("p.json.journal")).unwrap_or_default();
    for line in journal.split_inclusive('\n').filter(|l| l.ends_with('\n')) {
        let l: serde_json::Value = serde_json::from_str(line).unwrap();
        if l["index"].as_u64().unwrap() as usize >= runs.len() {
            runs.push(key(&l["run"]));
        }
    }
    runs
}

#[test]
fn a_sigkilled_sweep_loses_no_finished_run_and_resume_reads_its_journal() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let repeat = "1500";
    let mut child = start_argv(d, &["true"], repeat);
    let t = Instant::now();
    while std::fs::read_to_string(d.join("p.json.journal"))
        .map(|j| j.lines().count() < 5)
        .unwrap_or(true)
    {
        assert!(t.elapsed() < Duration::from_secs(30), "no run journalled");
        std::thread::sleep(Duration::from_millis(5));
    }
    signal(&child, libc::SIGKILL);
    let _ = child.wait();
    let before = saved_runs(d);
    assert!(before.len() < 1500, "killed mid-sweep: {}", before.len());
    // A kill in the middle of an append leaves a torn last line.
    let mut j = std::fs::OpenOptions::new()
        .append(true)
        .open(d.join("p.json.journal"))
        .unwrap();
    std::io::Write::write_all(&mut j, b"{\"index\":").unwrap();
    let out = start_with(d, &["--resume"], &["true"], repeat)
        .wait_with_output()
        .unwrap();
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{so}{se}");
    assert!(se.contains("torn"), "{se}");
    let made = format!(
        "{} runs made, {} already there",
        1500 - before.len(),
        before.len()
    );
    assert!(so.contains(&made), "{made}: {so}");
    let after = saved_runs(d);
    assert_eq!(after.len(), 1500);
    assert_eq!(
        after[..before.len()],
        before[..],
        "every finished run kept as measured"
    );
    assert!(
        !d.join("p.json.journal").exists(),
        "the journal is folded into the profile"
    );
}
