//! A careful but hostile user against the campaign (`profile --nodes auto`), the sweep's
//! outputs, `calibrate network` and `calibrate power` records, and the Paraver replay: outputs
//! spelt as folders refused before anything is measured, a `--repeat` never read as another,
//! a record folder `--resume` can go on in, a ping-pong record that names a size twice, and
//! a trace whose receives never come, refused at a bounded memory. Real binary, temp dirs.

mod common;

use common::{VM, jouleplan, jouleplan_in, repo, s};
use std::path::{Path, PathBuf};

/// A launched campaign in `d` of a program that takes 0.02 + 0.2 / n s on n nodes.
fn launched(d: &Path, out: &str, runs: &str) -> (i32, String, String) {
    launched_with(d, out, runs, &[])
}

fn launched_with(d: &Path, out: &str, runs: &str, extra: &[&str]) -> (i32, String, String) {
    let sleep = "exec sleep $(awk \"BEGIN{print 0.02 + 0.2 / $JP_NODES}\")";
    launched_program(d, (out, runs), extra, &["/bin/sh", "-c", sleep])
}

/// A launched campaign in `d` of `program`, its profile `out` and runs `runs`.
fn launched_program(
    d: &Path,
    (out, runs): (&str, &str),
    extra: &[&str],
    program: &[&str],
) -> (i32, String, String) {
    let m = common::this_node_times_8(d);
    let flags = [
        "profile",
        "--nodes",
        "auto",
        "--cores",
        "1",
        "--hostfile",
        "hosts",
        "--launcher",
        "env JP_NODES={nodes}",
        "--machine",
        s(&m),
        "--measured-out",
        runs,
        "-o",
        out,
    ];
    jouleplan_in(d, &[&flags[..], extra, &["--"], program].concat())
}

#[test]
fn a_campaign_resumed_after_its_end_with_another_command_is_refused() {
    // Resumed once ended, a campaign made no step, so no sweep checked its command: another
    // program's resume rewrote the profile and runs as if they were its own.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (rc, out, err) = launched(d, "p.json", "runs.csv");
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("stopped:"), "{out}");
    let files = ["p.json", "runs.csv", "p.sweep.json"];
    let before: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(d.join(f)).unwrap())
        .collect();
    let other = ["/bin/sh", "-c", "exec sleep 0.01"];
    let (rc, out, err) = launched_program(d, ("p.json", "runs.csv"), &["--resume"], &other);
    assert_eq!(rc, 2, "{out}{err}");
    assert!(
        err.contains("p.sweep.json")
            && err.contains("--resume needs the same command")
            && err.contains("BEGIN"),
        "{err}"
    );
    assert!(!out.contains("recommendation"), "{out}");
    for (f, b) in files.iter().zip(&before) {
        assert_eq!(&std::fs::read(d.join(f)).unwrap(), b, "{f} changed");
    }
    // The same command resumed ends as it did, nothing measured again.
    let (rc, out, err) = launched_with(d, "p.json", "runs.csv", &["--resume"]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("no new step"), "{out}");
}

#[test]
fn a_campaign_resumed_under_a_smaller_max_nodes_than_its_runs_is_refused() {
    // Resumed with --max-nodes 2 onto runs up to 8 nodes, it recommended 8 nodes, a count
    // above the limit it was given, and said the model's pick "over 1-2".
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (rc, _, err) = launched(d, "p.json", "runs.csv");
    assert_eq!(rc, 0, "{err}");
    let runs = std::fs::read_to_string(d.join("runs.csv")).unwrap();
    assert!(runs.lines().any(|l| l.starts_with("8,")), "{runs}");
    let before = std::fs::read(d.join("p.sweep.json")).unwrap();
    let (rc, out, err) = launched_with(d, "p.json", "runs.csv", &["--resume", "--max-nodes", "2"]);
    assert_eq!(rc, 2, "{out}{err}");
    assert!(
        err.contains("runs.csv holds runs on 4 nodes")
            && err.contains("above the 2 nodes")
            && err.contains("--max-nodes 4 or more"),
        "{err}"
    );
    assert!(!err.contains("campaign run"), "a run was made: {err}");
    assert_eq!(std::fs::read(d.join("p.sweep.json")).unwrap(), before);
}

#[test]
fn a_campaign_output_spelt_as_a_folder_is_refused_before_any_run() {
    // `-o p.json/` ran the whole campaign and failed at its last write; `--measured-out
    // runs/` measured the start and failed at its first save: cluster hours spent on a typo.
    for (out, runs, flag) in [
        ("p.json/", "runs.csv", "--output"),
        ("p.json", "runs/", "--measured-out"),
        ("p.json", "runs/.", "--measured-out"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let (rc, _, err) = launched(d, out, runs);
        assert_eq!(rc, 2, "{out} {runs}: {err}");
        let shown = if flag == "--output" { out } else { runs };
        assert!(
            err.contains(flag) && err.contains(&format!("{shown} names a folder")),
            "{err}"
        );
        assert!(!err.contains("campaign run"), "a run was made: {err}");
        let left: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !["m.toml", "hosts"].contains(&n.as_str()))
            .collect();
        assert!(left.is_empty(), "{out} {runs}: left {left:?}");
    }
}

#[test]
fn a_sweep_or_fit_output_spelt_as_a_folder_names_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (rc, _, err) = jouleplan_in(d, &["profile", "--cores", "1", "-o", "p/", "--", "true"]);
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("--output") && err.contains("p/ names a folder"),
        "{err}"
    );
    let (rc, _, err) = jouleplan_in(
        d,
        &["fit", "--measured", "nothing.csv", "--profile-out", "f/"],
    );
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("f/ names a folder"), "{err}");
}

#[test]
fn a_replayed_campaign_refuses_a_repeat_of_zero_instead_of_taking_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let recording = d.join("recorded.csv");
    std::fs::write(&recording, "nodes,cores,freq_hz,gpus,time_s\n").unwrap();
    let (rc, _, err) = jouleplan_in(
        d,
        &[
            "profile",
            "--nodes",
            "auto",
            "--replay",
            s(&recording),
            "--machine",
            s(&repo("tests/data/machines/icelake-8360y.toml")),
            "--measured-out",
            "runs.csv",
            "-o",
            "p.json",
            "--repeat",
            "0",
        ],
    );
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("--repeat") && err.contains("got `0`"), "{err}");
    assert!(!d.join("runs.csv").exists() && !d.join("p.json").exists());
}

#[test]
fn calibrate_power_resumes_in_the_record_folder_it_was_given() {
    // `--record DIR` was locked as an output file: once the folder existed, `--resume` (what
    // the folder is for) was refused as "a folder; --record takes a file path".
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let m = d.join("m.toml");
    std::fs::write(&m, VM).unwrap();
    let record = d.join("kernels");
    let mut args = common::kernels_on_recorded_powercap(d, &m, "1");
    args.extend(["--record".to_string(), s(&record).to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, _, err) = jouleplan(&args);
    // The recorded counters do not move: refused after the kernels ran, their runs kept.
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("the energy counters must move"), "{err}");
    assert!(record.join("idle.json").is_file(), "{err}");
    let (code, _, err) = jouleplan(&[&args[..], &["--resume"]].concat());
    assert!(!err.contains("takes a file path"), "{err}");
    // Each sweep resumed (one core count: one run each) says the run it keeps and how many of
    // its planned runs it makes, in the singular.
    assert_eq!(err.matches("resuming: 1 run kept in ").count(), 3, "{err}");
    assert_eq!(
        err.matches("1 of 1 planned run done, 0 left to run")
            .count(),
        3,
        "{err}"
    );
    assert!(!err.contains("1 runs"), "{err}");
    assert_eq!(code, 2, "{err}");
    assert_eq!(std::fs::read_to_string(&m).unwrap(), VM, "nothing written");
}

/// The recorded ping-pong of `tests/data/pingpong` with `edit` applied to its JSON.
fn pingpong_like(d: &Path, edit: impl Fn(&mut serde_json::Value)) -> PathBuf {
    let text = std::fs::read_to_string(repo("tests/data/pingpong/vm-shm-2ranks.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    edit(&mut v);
    let p = d.join("record.json");
    std::fs::write(&p, v.to_string()).unwrap();
    p
}

fn calibrate_network(d: &Path, record: &Path) -> (i32, String, String, String) {
    let m = d.join("m.toml");
    std::fs::write(&m, VM).unwrap();
    let (rc, out, err) = jouleplan(&[
        "calibrate",
        "network",
        "--from",
        s(record),
        "--machine",
        s(&m),
    ]);
    (rc, out, err, std::fs::read_to_string(&m).unwrap())
}

#[test]
fn a_ping_pong_record_naming_a_size_twice_or_without_its_two_hosts_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A size appended again (two sweeps pasted together) was fitted twice over and the
    // machine file's source said "up to 8 bytes" of a 16 MiB sweep.
    let twice = pingpong_like(d, |v| {
        let sizes = v["sizes"].as_array_mut().unwrap();
        let again = sizes[3].clone();
        sizes.push(again);
    });
    let (rc, _, err, machine) = calibrate_network(d, &twice);
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("sizes[25].bytes") && err.contains("8 bytes again, first at sizes[3]"),
        "{err}"
    );
    assert_eq!(machine, VM, "nothing written");
    let no_hosts = pingpong_like(d, |v| v["hosts"] = serde_json::json!([]));
    let (rc, _, err, machine) = calibrate_network(d, &no_hosts);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("`hosts`") && err.contains("0 hosts"), "{err}");
    assert_eq!(machine, VM, "nothing written");
}

#[test]
fn a_ping_pong_record_in_another_order_is_fitted_and_sourced_as_measured() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let reversed = pingpong_like(d, |v| {
        v["sizes"].as_array_mut().unwrap().reverse();
    });
    let (rc, out, err, machine) = calibrate_network(d, &reversed);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("25 sizes, 1 to 16777216 bytes"), "{out}");
    assert!(
        machine.contains("25 sizes up to 16777216 bytes"),
        "{machine}"
    );
}

#[test]
fn a_trace_whose_receives_never_come_is_refused_at_a_bounded_memory_naming_the_line() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 4 million sends from task 1 whose receives are all recorded at the trace's end (0.3 MB
    // gzipped, 140 MB of text): the replay kept each message's operations until then, about
    // 200 bytes a line (0.8 GB for this one, 26 GB for 10 MB of it gzipped). It stops past
    // 2^23 waiting operations, at about 0.55 GB.
    let f = d.join("never.prv.gz");
    let file = std::fs::File::create(&f).unwrap();
    let mut w = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
    writeln!(
        w,
        "#Paraver (01/01/2026 at 00:00):100_ns:1(2):1:2(1:1,1:1),1\nc:1:1:2:1:2"
    )
    .unwrap();
    let line = b"3:1:1:1:1:10:10:1:1:2:1:99:99:64:7\n".repeat(1 << 16);
    for _ in 0..64 {
        w.write_all(&line).unwrap();
    }
    w.finish().unwrap();
    let (code, err, peak_kib) = common::run_peak(&["metrics", s(&f)], &d.join("peak.out"));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("never.prv.gz")
            && err.contains("line ")
            && err.contains("8388608 operations")
            && err.contains("--no-critical-path"),
        "{err}"
    );
    assert!(peak_kib < 800 * 1024, "peak {peak_kib} KiB");
    // What the error offers reads it: every metric but the replay's.
    let (code, err, peak_kib) = common::run_peak(
        &["metrics", s(&f), "--no-critical-path"],
        &d.join("peak.out"),
    );
    assert_eq!(code, 0, "{err}");
    assert!(peak_kib < 100 * 1024, "peak {peak_kib} KiB");
}

/// Waits (up to 20 s) until `path` holds `lines` lines.
fn wait_for_lines(path: &Path, lines: usize) {
    let start = std::time::Instant::now();
    while std::fs::read_to_string(path).map_or(0, |t| t.lines().count()) < lines {
        assert!(
            start.elapsed().as_secs() < 20,
            "{} never had {lines} lines",
            path.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_sigterm_during_a_warm_up_run_stops_the_sweep_without_starting_a_measured_run() {
    // The warm-up was stopped, then the measured run was started anyway and waited out to
    // its end (the whole program's time after scancel's SIGTERM), to be thrown away.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let starts = d.join("starts");
    let program = format!("echo started >> {}; exec sleep 5", s(&starts));
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_jouleplan"))
        .current_dir(d)
        .env_remove("SLURM_JOB_ID")
        .args(["profile", "--cores", "1", "--warmup", "1", "--repeat", "2"])
        .args(["-o", "p.json", "--measured-out", "m.csv", "--"])
        .args(["/bin/sh", "-c", &program])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_lines(&starts, 1);
    std::thread::sleep(std::time::Duration::from_millis(200));
    // SAFETY: signals our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let stopped = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    let took = stopped.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{err}");
    assert!(took < 3.0, "stopped {took:.1} s after SIGTERM: {err}");
    let started = std::fs::read_to_string(&starts).unwrap().lines().count();
    assert_eq!(started, 1, "a run was started after the SIGTERM: {err}");
    assert!(
        err.contains("warm-up 1/1") && err.contains("interrupted (SIGTERM"),
        "{err}"
    );
    assert!(err.contains("continue with --resume"), "{err}");
}

#[test]
fn calibrate_power_refuses_one_recorded_profile_given_twice() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let m = d.join("m.toml");
    std::fs::write(&m, VM).unwrap();
    let idle = repo("tests/data/hostile/calibrate-power-idle-zero-energy.json");
    let link = d.join("again.json");
    std::os::unix::fs::symlink(&idle, &link).unwrap();
    let (first, second) = (
        format!("idle={}", s(&idle)),
        format!("compute={}", s(&link)),
    );
    let (rc, _, err) = jouleplan(&[
        "calibrate",
        "power",
        "--machine",
        s(&m),
        "--from",
        &first,
        "--from",
        &second,
    ]);
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("--from") && err.contains(&second) && err.contains("count twice"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&m).unwrap(), VM, "nothing written");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn fit_json_gives_the_node_powers_residual_and_bound_its_text_gives() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let runs = common::multinode("weather.csv");
    let machine = repo("tests/data/machines/icelake-8360y.toml");
    let fit = |json: bool, tag: &str| {
        let (p, m) = (d.join(format!("{tag}.json")), d.join(format!("{tag}.toml")));
        let mut args = vec!["fit", "--measured", s(&runs), "--machine", s(&machine)];
        args.extend(["--profile-out", s(&p), "--machine-out", s(&m)]);
        if json {
            args.push("--json");
        }
        let (rc, out, err) = jouleplan(&args);
        assert_eq!(rc, 0, "{err}");
        out
    };
    let text = fit(false, "t");
    let v: serde_json::Value = serde_json::from_str(&fit(true, "j")).unwrap();
    // The text: `2.40 GHz: P_idle 0 W per node, P_core 7.435 W per busy core (36 runs; energy
    // residual 5.29% root-mean-square, 13.97% largest; P_idle = 0 (bound))`.
    let line = text
        .lines()
        .find(|l| l.contains("W per busy core"))
        .unwrap_or_else(|| panic!("{text}"));
    let p = &v["power"][0];
    let pct = |x: &serde_json::Value| format!("{:.2}%", 100.0 * x.as_f64().unwrap());
    assert!(
        line.contains(&format!("{} root-mean-square", pct(&p["residual_rms"]))),
        "{line} / {p}"
    );
    assert!(
        line.contains(&format!("{} largest", pct(&p["residual_max"]))),
        "{line} / {p}"
    );
    match p["bound"].as_str() {
        Some(b) => assert!(line.contains(b), "{line} / {p}"),
        None => assert!(!line.contains("(bound)"), "{line} / {p}"),
    }
}

#[test]
fn a_trace_whose_collectives_are_entered_and_never_left_is_refused_at_a_bounded_memory() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Every line enters a collective no exit event ever closes: each stayed open in the
    // replay, about 120 bytes a line (5 million lines, 0.3 MB gzipped: 0.6 GB). It stops
    // past 2^20 open collectives: while the trace is read (its time goes on), or where the
    // replay runs what is left at its end (every line at one time).
    for time_goes_on in [true, false] {
        let f = d.join("entered.prv.gz");
        let file = std::fs::File::create(&f).unwrap();
        let mut w = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
        writeln!(
            w,
            "#Paraver (01/01/2026 at 00:00):100_ns:1(2):1:2(1:1,1:1),1\nc:1:1:2:1:2"
        )
        .unwrap();
        for k in 0..24 {
            let t = if time_goes_on { 10 + k } else { 10 };
            let line = format!("2:1:1:1:1:{t}:50000002:10\n").repeat(1 << 16);
            w.write_all(line.as_bytes()).unwrap();
        }
        w.finish().unwrap();
        let (code, err, peak_kib) = common::run_peak(&["metrics", s(&f)], &d.join("peak.out"));
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("entered.prv.gz")
                && err.contains("line ")
                && err.contains("at most 1048576 collectives open")
                && err.contains("--no-critical-path"),
            "{err}"
        );
        assert!(peak_kib < 400 * 1024, "peak {peak_kib} KiB");
    }
}

#[test]
fn a_sweep_measured_on_another_cpu_is_not_resumed_here() {
    // A job resubmitted with --resume onto a node of another CPU went on, and the profile
    // said every run was measured on the first CPU.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = ["profile", "--cores", "1", "--repeat", "2", "-o", "p.json"];
    let (rc, _, err) = jouleplan_in(d, &[&args[..], &["--", "true"]].concat());
    assert_eq!(rc, 0, "{err}");
    let p = d.join("p.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    let rec = &mut doc["sweep"]["record"];
    let here = rec["host"]["cpu"].as_str().unwrap().to_string();
    let other = "Intel(R) Xeon(R) Platinum 8360Y (GenuineIntel family 0x6 model 0x6a)";
    assert_ne!(here, other);
    rec["host"]["cpu"] = other.into();
    rec["host"]["hostname"] = "icx01".into();
    rec["runs"].as_array_mut().unwrap().truncate(1);
    rec["complete"] = false.into();
    std::fs::write(&p, doc.to_string()).unwrap();
    let before = std::fs::read(&p).unwrap();
    let (rc, _, err) = jouleplan_in(d, &[&args[..], &["--resume", "--", "true"]].concat());
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains(&format!("on icx01 with a {other} CPU")) && err.contains(&here),
        "{err}"
    );
    assert!(!err.contains("run 2/2"), "a run was made: {err}");
    assert_eq!(
        std::fs::read(&p).unwrap(),
        before,
        "the record is kept as it was"
    );
}

#[test]
fn plan_csv_gives_the_device_tree_that_json_and_text_give() {
    // The bundled GPU demo: its text prints `device: parallel efficiency 0.35 = load balance
    // 1.00 x communication 1.00 x orchestration 0.35` and its JSON the `device` object; the
    // CSV had no device column.
    let (rc, text, err) = jouleplan(&["plan"]);
    assert_eq!(rc, 0, "{err}");
    let (rc, json, err) = jouleplan(&["plan", "--json"]);
    assert_eq!(rc, 0, "{err}");
    let (rc, csv, err) = jouleplan(&["plan", "--csv"]);
    assert_eq!(rc, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let front = v["front"].as_array().unwrap();
    assert_eq!(rows.len(), front.len());
    for (row, obj) in rows.iter().zip(front) {
        for key in [
            "parallel_efficiency",
            "load_balance",
            "communication_efficiency",
            "orchestration_efficiency",
        ] {
            let at = header
                .iter()
                .position(|h| *h == format!("device_{key}"))
                .unwrap_or_else(|| panic!("no device_{key}: {header:?}"));
            let want = obj["device"][key].as_f64().unwrap();
            assert_eq!(row[at].parse::<f64>().unwrap(), want, "{key}");
            if key == "parallel_efficiency" {
                assert!(
                    text.contains(&format!("device: parallel efficiency {want:.2}")),
                    "{text}"
                );
            }
        }
    }
    // A plan without GPUs keeps the columns it always had.
    let (rc, csv, err) = common::inputs().run("plan", &["--csv"]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        !csv.lines().next().unwrap().contains("device_parallel"),
        "{csv}"
    );
}

#[test]
fn a_sweep_stopped_by_a_full_disk_says_its_finished_runs_are_saved_and_resumes() {
    // The error named the journal and no more ("q.json.journal: No space left on device"): a
    // user would take the runs for lost. A full disk is made by strace, failing every fsync
    // from the twelfth on.
    let traced = std::process::Command::new("strace")
        .args(["-f", "-o", "/dev/null", "true"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !traced {
        eprintln!("skipped: strace cannot run here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = ["profile", "--cores", "1", "--repeat", "30", "-o", "q.json"];
    let args = [&args[..], &["--measured-out", "m.csv", "--", "true"]].concat();
    let out = std::process::Command::new("strace")
        .current_dir(d)
        .env_remove("SLURM_JOB_ID")
        .args(["-f", "-o", "/dev/null", "-e", "trace=fsync,fdatasync"])
        .args(["-e", "inject=fsync,fdatasync:error=ENOSPC:when=12+"])
        .arg(env!("CARGO_BIN_EXE_jouleplan"))
        .args(&args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("q.json: the sweep stopped; the runs finished before are saved in it and in q.json.journal")
            && err.contains("--resume")
            && err.contains("No space left on device"),
        "{err}"
    );
    let resumed = [&args[..1], &["--resume"], &args[1..]].concat();
    let (rc, _, err) = jouleplan_in(d, &resumed);
    assert_eq!(rc, 0, "{err}");
    assert!(err.contains("resuming: "), "{err}");
    let rows = std::fs::read_to_string(d.join("m.csv"))
        .unwrap()
        .lines()
        .count();
    assert_eq!(rows, 31, "30 runs and the header");
}

#[test]
fn a_sweep_onto_an_existing_measured_csv_is_refused_without_resume() {
    // `-o` was refused where it existed, but `--measured-out` was rewritten with the new
    // sweep's runs, and the rows it held (an earlier sweep's, hand-collected ones) were lost.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let csv = d.join("runs.csv");
    let held = "nodes,cores,freq_hz,gpus,time_s\n1,1,2.6e9,0,99\n";
    std::fs::write(&csv, held).unwrap();
    let args = [
        "profile",
        "--cores",
        "1",
        "-o",
        "new.json",
        "--measured-out",
        "runs.csv",
    ];
    let (rc, _, err) = jouleplan_in(d, &[&args[..], &["--", "true"]].concat());
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("runs.csv exists")
            && err.contains("--resume")
            && err.contains("another --measured-out"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), held);
    assert!(!d.join("new.json").exists(), "nothing ran");
    // A sweep's own CSV is rewritten on --resume, from its record.
    std::fs::remove_file(&csv).unwrap();
    let (rc, _, err) = jouleplan_in(d, &[&args[..], &["--", "true"]].concat());
    assert_eq!(rc, 0, "{err}");
    let resumed = [
        &args[..1],
        &["--resume", "--repeat", "2"],
        &args[1..],
        &["--", "true"],
    ]
    .concat();
    let (rc, _, err) = jouleplan_in(d, &resumed);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(std::fs::read_to_string(&csv).unwrap().lines().count(), 3);
}
