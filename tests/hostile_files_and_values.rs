//! Hostile files and values (each test named after the failure it pins): no write through a
//! planted link, in-place rewrites that keep the file's mode and its link, no output onto an
//! input, a closed stdout that only stops the printing, memory bounded by what is kept, and
//! impossible values refused (exit 2, naming the file, key or line).

mod common;

use common::{MACHINE, fit_into, fixture, jouleplan, profile_json, write};
use serde_json::Value;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn refused(args: &[&str], needles: &[&str]) -> String {
    let (code, out, err) = jouleplan(args);
    assert_eq!(code, 2, "{args:?}: {out}{err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: {n:?} not in {err}");
    }
    err
}

/// `calibrate network --machine M --from REC`.
fn network<'a>(m: &'a Path, rec: &'a Path) -> Vec<&'a str> {
    vec!["calibrate", "network", "--machine", s(m), "--from", s(rec)]
}

/// A machine file and a recorded real ping-pong sweep in a fresh folder.
fn machine_and_record(dir: &Path) -> (PathBuf, PathBuf) {
    let m = dir.join("m.toml");
    std::fs::copy(repo("models/xeon-e5-2603-cluster.toml"), &m).unwrap();
    let rec = dir.join("rec.json");
    std::fs::copy(repo("tests/data/pingpong/vm-shm-2ranks.json"), &rec).unwrap();
    (m, rec)
}

#[test]
fn a_link_planted_at_the_old_temporary_name_does_not_redirect_the_write() {
    let dir = tempfile::tempdir().unwrap();
    let (m, rec) = machine_and_record(dir.path());
    let victim = dir.path().join("bashrc");
    std::fs::write(&victim, "precious\n").unwrap();
    symlink(&victim, dir.path().join(".m.toml.jouleplan-tmp")).unwrap();
    let (code, _, err) = jouleplan(&network(&m, &rec));
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(std::fs::read_to_string(&m).unwrap().contains("[network]"));
    // The same for a job script and a new machine file.
    let job = dir.path().join("job.sh");
    symlink(&victim, dir.path().join(".job.sh.jouleplan-tmp")).unwrap();
    let (code, _, err) = jouleplan(&["plan", "--sbatch", s(&job), "--", "./app"]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read_to_string(&job).unwrap().starts_with("#!"));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
}

#[test]
fn an_output_that_is_a_link_is_refused_not_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("bashrc");
    std::fs::write(&victim, "precious\n").unwrap();
    let job = dir.path().join("job.sh");
    symlink(&victim, &job).unwrap();
    let (code, _, err) = jouleplan(&["plan", "--sbatch", s(&job), "--", "./app"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("job.sh") && err.contains("symbolic link"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
}

#[test]
fn an_in_place_rewrite_keeps_mode_0600_and_updates_a_links_target() {
    let dir = tempfile::tempdir().unwrap();
    let (real, rec) = machine_and_record(dir.path());
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = dir.path().join("current.toml");
    symlink(&real, &link).unwrap();
    let (code, _, err) = jouleplan(&network(&link, &rec));
    assert_eq!(code, 0, "{err}");
    let meta = std::fs::symlink_metadata(&link).unwrap();
    assert!(meta.file_type().is_symlink(), "the link stays a link");
    let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "0600 stays 0600");
    assert!(
        std::fs::read_to_string(&real)
            .unwrap()
            .contains("latency_s")
    );
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn outputs_onto_inputs_are_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let csv = d.join("runs.csv");
    std::fs::copy(common::xeon_phi("sparse.csv"), &csv).unwrap();
    let before = std::fs::read(&csv).unwrap();
    let dotted = d.join(".").join("runs.csv");
    refused(
        &["fit", "--measured", s(&csv), "--profile-out", s(&dotted)],
        &["--profile-out", "--measured", "nothing was written"],
    );
    assert_eq!(std::fs::read(&csv).unwrap(), before);
    let x = d.join("x");
    refused(
        &[
            "fit",
            "--measured",
            s(&csv),
            "--profile-out",
            s(&x),
            "--machine-out",
            s(&x),
        ],
        &["--machine-out", "--profile-out"],
    );
    assert!(!x.exists());
    let (m, rec) = machine_and_record(d);
    let rec_before = std::fs::read(&rec).unwrap();
    refused(
        &[network(&m, &rec).as_slice(), &["--output", s(&rec)]].concat(),
        &["--output", "--from"],
    );
    assert_eq!(std::fs::read(&rec).unwrap(), rec_before);
}

/// Runs `jouleplan ARGS | true` (a reader that closes at once); returns the exit code.
fn with_closed_stdout(args: &[&str]) -> i32 {
    let bin = assert_cmd::cargo::cargo_bin("jouleplan");
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    let script = format!(
        "'{}' {} | true; exit ${{PIPESTATUS[0]}}",
        bin.display(),
        quoted.join(" ")
    );
    std::process::Command::new("bash")
        .args(["-c", &script])
        .status()
        .unwrap()
        .code()
        .unwrap_or(-1)
}

#[test]
fn a_closed_stdout_still_writes_every_requested_file_with_the_same_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job.sh");
    assert_eq!(
        with_closed_stdout(&["plan", "--sbatch", s(&job), "--", "./app"]),
        0
    );
    assert!(job.exists(), "job.sh written with a closed stdout");
    let job3 = dir.path().join("late.sh");
    let code = with_closed_stdout(&[
        "plan",
        "--deadline",
        "1ms",
        "--sbatch",
        s(&job3),
        "--",
        "./app",
    ]);
    let (open_code, _, _) = jouleplan(&[
        "plan",
        "--deadline",
        "1ms",
        "--sbatch",
        s(&job3),
        "--",
        "./app",
    ]);
    assert_eq!(
        code, open_code,
        "the exit code does not depend on the reader"
    );
    let plot = dir.path().join("front.svg");
    assert_eq!(with_closed_stdout(&["plan", "--plot", s(&plot)]), 0);
    assert!(plot.exists());
    let (m, rec) = machine_and_record(dir.path());
    let code = with_closed_stdout(&network(&m, &rec));
    assert_eq!(code, 0);
    assert!(std::fs::read_to_string(&m).unwrap().contains("latency_s"));
    let report = dir.path().join("report");
    assert_eq!(with_closed_stdout(&["report", "--out", s(&report)]), 0);
    assert!(report.join("index.html").exists());
    assert_eq!(with_closed_stdout(&["completions", "bash"]), 0, "no panic");
    assert_eq!(with_closed_stdout(&["man"]), 0, "no panic");
}

#[test]
fn a_fifo_input_is_refused_at_once_and_a_huge_document_is_refused_by_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("m.toml");
    let c = std::ffi::CString::new(s(&fifo)).unwrap();
    // SAFETY: a plain mkfifo on a path in a fresh temporary folder.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    refused(
        &["machine", "check", s(&fifo)],
        &["m.toml", "not a regular file"],
    );
    let big = dir.path().join("big.toml");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(500 << 20).unwrap(); // sparse: 500 MB that take no disk
    refused(
        &["plan", "--machine", s(&big)],
        &["big.toml", "524288000 bytes", "16 MiB"],
    );
}

#[test]
fn validate_with_a_million_rows_keeps_one_row_per_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(dir.path(), "m.toml", MACHINE);
    let p = write(dir.path(), "p.json", &profile_json());
    let mut csv = String::from("nodes,cores,freq_hz,gpus,time_s,energy_j\n");
    for i in 0..1_000_000u32 {
        let c = 1 + i % 8;
        csv.push_str(&format!(
            "1,{c},2e9,0,{},{}\n",
            12.0 + f64::from(i % 3),
            900.0
        ));
    }
    let rows = write(dir.path(), "rows.csv", &csv);
    let (code, out, err) = jouleplan(&[
        "validate",
        "--machine",
        s(&m),
        "--profile",
        s(&p),
        "--measured",
        s(&rows),
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let b = &v["validations"][0];
    assert_eq!(
        b["points"].as_array().unwrap().len(),
        8,
        "one row per configuration"
    );
    assert_eq!(
        b["time"]["points"], 1_000_000,
        "every run counts in the statistics"
    );
    assert_eq!(b["points"][0]["runs"], 125_000);
}

#[test]
fn zero_energy_and_nothing_predicted_are_refused_not_printed_as_inf_or_zero() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(dir.path(), "m.toml", MACHINE);
    let p = write(dir.path(), "p.json", &profile_json());
    let zero = write(
        dir.path(),
        "z.csv",
        "nodes,cores,freq_hz,gpus,time_s,energy_j\n1,4,2e9,0,12,0\n",
    );
    let base = [
        "validate",
        "--machine",
        s(&m),
        "--profile",
        s(&p),
        "--measured",
    ];
    let mut args = base.to_vec();
    args.push(s(&zero));
    refused(
        &args,
        &[
            "z.csv",
            "line 2, column energy_j",
            "a run that took time used energy",
        ],
    );
    let outside = write(
        dir.path(),
        "o.csv",
        "nodes,cores,freq_hz,gpus,time_s\n1,64,2e9,0,12\n1,32,2e9,0,12\n",
    );
    let mut args = base.to_vec();
    args.push(s(&outside));
    refused(&args, &["o.csv", "none of its 2 configurations", "1 x"]);
    // One row out of range beside predicted ones: counted and named, in text and JSON.
    let mixed = write(
        dir.path(),
        "x.csv",
        "nodes,cores,freq_hz,gpus,time_s\n1,4,2e9,0,12\n1,64,2e9,0,12\n",
    );
    let mut args = base.to_vec();
    args.push(s(&mixed));
    let (code, out, err) = jouleplan(&args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("1 of 2 points not predicted"), "{out}");
    args.push("--json");
    let (_, out, _) = jouleplan(&args);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["validations"][0]["not_predicted"]["points"], 1);
    assert!(!out.contains("NaN") && !out.contains("inf"));
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn fit_refuses_what_its_points_cannot_identify_and_cores_the_machine_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("p.json");
    let two = write(
        d,
        "two.csv",
        "nodes,cores,freq_hz,gpus,time_s,energy_j\n1,1,6e8,0,100,10000\n1,8,6e8,0,14,2000\n",
    );
    let fit = |csv: &Path| {
        vec![
            "fit".to_string(),
            "--measured".into(),
            s(csv).into(),
            "--machine".into(),
            s(&common::xeon_phi_fitted().1).into(),
            "--profile-out".into(),
            s(&out).into(),
        ]
    };
    // Energy at one frequency of a many-frequency machine: the time is fitted and the power
    // named as not identified; a machine file asked for from it is refused. The measured
    // energy disagrees with the bundled machine's power, which `plan` would refuse: `fit`
    // refuses too, naming the point, and writes only when told to accept it.
    let args = fit(&two);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    refused(
        &args,
        &["refused by `plan`", "(8 cores, 0.6 GHz, 0 GPUs)", "-28.4%"],
    );
    assert!(!out.exists());
    let mut args = fit(&two);
    args.push("--accept-model-error".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, said, err) = jouleplan(&args);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("written although `plan` refuses it"), "{err}");
    assert!(
        said.contains("power: not fitted") && said.contains("0.60 GHz only"),
        "{said}"
    );
    std::fs::remove_file(&out).unwrap();
    let m_out = d.join("m.toml");
    let mut args = fit(&two);
    args.extend(["--machine-out".to_string(), s(&m_out).to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    refused(&args, &["--machine-out", "energy_j", "0.60 GHz only"]);
    assert!(!m_out.exists());
    let many = write(
        d,
        "many.csv",
        "nodes,cores,freq_hz,gpus,time_s\n1,1,6e8,0,100\n1,99,6e8,0,2\n",
    );
    let args = fit(&many);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    refused(
        &args,
        &["many.csv", "line 3, column cores", "57 cores per node"],
    );
    assert!(!out.exists());
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_profile_fitted_for_one_machine_is_not_planned_silently_on_another() {
    let dir = tempfile::tempdir().unwrap();
    let prof = dir.path().join("fit.json");
    let (code, _, err) = jouleplan(&[
        "fit",
        "--measured",
        s(&common::xeon_phi("sparse.csv")),
        "--machine",
        s(&common::xeon_phi("machine.toml")),
        "--profile-out",
        s(&prof),
    ]);
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&prof).unwrap()).unwrap();
    assert_eq!(doc["measured_on"]["physical_cores"], 57);
    let err = refused(
        &[
            "plan",
            "--profile",
            s(&prof),
            "--machine",
            s(&repo("models/h100-node.toml")),
        ],
        &["fit.json", "--other-machine"],
    );
    assert!(err.contains("57") || err.contains("GHz"), "{err}");
    // A profile that records nothing is checked by its frequencies.
    let m = write(
        dir.path(),
        "fast.toml",
        &MACHINE.replace("[1.0, 2.0]", "[1.0, 2.0, 3.0]").replace(
            "core_active_w = [5.0, 10.0]\ncore_stall_w = [2.0, 4.0]",
            "core_active_w = [5.0, 10.0, 15.0]\ncore_stall_w = [2.0, 4.0, 6.0]",
        ),
    );
    let p = write(dir.path(), "p.json", &profile_json());
    refused(
        &["plan", "--machine", s(&m), "--profile", s(&p)],
        &["3.00", "outside the measured 1.00-2.00 GHz"],
    );
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_power_fit_worse_than_ten_percent_is_refused_by_plan() {
    let dir = tempfile::tempdir().unwrap();
    let (profile, machine) = common::xeon_phi_fitted();
    let text = std::fs::read_to_string(machine).unwrap();
    let bad: String = text
        .lines()
        .filter(|l| !l.starts_with("fit_residual_rms"))
        .map(|l| match l.starts_with("fit_residual_rel") {
            true => "fit_residual_rel = 0.5\n".to_string(),
            false => format!("{l}\n"),
        })
        .collect();
    assert_ne!(bad, text);
    let m = write(dir.path(), "m.toml", &bad);
    let p = s(&profile);
    refused(
        &["plan", "--machine", s(&m), "--profile", p],
        &["fit_residual_rel", "50.0%", "--accept-model-error"],
    );
    let (code, out, err) = jouleplan(&[
        "plan",
        "--machine",
        s(&m),
        "--profile",
        p,
        "--accept-model-error",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("power fit") || err.contains("power fit"),
        "{out}{err}"
    );
}

#[test]
fn extreme_ping_pong_times_are_refused_not_a_panic_in_the_svd() {
    let dir = tempfile::tempdir().unwrap();
    let (m, _) = machine_and_record(dir.path());
    for t in ["6.49e147", "1e308", "1.32e-308"] {
        let rec = write(
            dir.path(),
            "r.json",
            &format!(
                r#"{{"format":"jouleplan-pingpong/1","hosts":["a","b"],"date":"x","target_s":0.02,"sizes":[{{"bytes":1,"one_way_s":[{t}]}},{{"bytes":1024,"one_way_s":[{t}]}},{{"bytes":16777216,"one_way_s":[{t}]}}]}}"#
            ),
        );
        refused(&network(&m, &rec), &["r.json", "one_way_s", "a nanosecond"]);
    }
}

#[test]
fn impossible_mpip_and_talp_times_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let real = std::fs::read_to_string(fixture("mpip/mpi_imbalance_2ranks.mpiP")).unwrap();
    let line = real
        .lines()
        .skip_while(|l| !l.contains("MPI Time (seconds)"))
        .find(|l| l.trim_start().starts_with("0 "))
        .unwrap()
        .to_string();
    let app = line.split_whitespace().nth(1).unwrap().to_string();
    for v in ["0", "-0", "1e308"] {
        let bad = real.replacen(&line, &line.replacen(&app, v, 1), 1);
        let f = write(dir.path(), "x.mpiP", &bad);
        refused(&["metrics", s(&f)], &["x.mpiP", "AppTime"]);
    }
    let talp = std::fs::read_to_string(fixture("talp/test_mpi_sendrecv_profile_1_0.json")).unwrap();
    let mut v: Value = serde_json::from_str(&talp).unwrap();
    let app = v["Application"].as_object_mut().unwrap();
    let region = app.values_mut().next().unwrap();
    region["elapsedTime"] = serde_json::json!(1e308);
    let f = write(dir.path(), "t.json", &v.to_string());
    refused(&["metrics", s(&f)], &["t.json", "elapsedTime", "to a year"]);
}

#[test]
fn a_dlb_3_7_process_csv_with_a_camel_case_header_is_read() {
    let dir = tempfile::tempdir().unwrap();
    // The header and one row in DLB 3.7's camelCase spelling of the process table.
    let f = write(
        dir.path(),
        "talp-process.csv",
        "region,rank,pid,nodeId,hostname,numCpus,elapsedTime,usefulTime,mpiTime\n\
         Global,0,100,0,n0,1,2000000000,1500000000,500000000\n\
         Global,1,101,0,n0,1,2000000000,1000000000,1000000000\n",
    );
    let (code, out, err) = jouleplan(&["metrics", s(&f), "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Global"), "{out}");
}

#[test]
fn a_resume_file_with_bad_utf8_and_a_capture_without_duration_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    std::fs::write(&out, b"{\"format\": \"\xff\xfe\"}").unwrap();
    refused(
        &[
            "profile",
            "--cores",
            "1",
            "--output",
            s(&out),
            "--resume",
            "--",
            "true",
        ],
        &["p.json", "UTF-8"],
    );
    let cap = write(dir.path(), "perf.csv", "1000,,cycles,1000,100.00,,\n");
    let out2 = dir.path().join("q.json");
    refused(
        &[
            "profile",
            "--cores",
            "4",
            "--freqs",
            "2.0",
            "--perf-stat",
            s(&cap),
            "--output",
            s(&out2),
            "--",
            "x",
        ],
        &["perf.csv", "duration_time"],
    );
}
#[test]
fn outputs_of_plan_slurm_validate_and_report_onto_their_inputs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let m = write(d, "m.toml", MACHINE);
    let p = write(d, "p.json", &profile_json());
    let runs = write(
        d,
        "front.csv",
        "nodes,cores,freq_hz,gpus,time_s\n1,4,2.4e9,0,10\n",
    );
    let kept = |f: &Path, was: &str| assert_eq!(std::fs::read_to_string(f).unwrap(), was);
    let (mt, pt, rt) = (
        MACHINE.to_string(),
        profile_json(),
        std::fs::read_to_string(&runs).unwrap(),
    );
    let both = ["--machine", s(&m), "--profile", s(&p)];
    let dotted = d.join(".").join("m.toml");
    refused(
        &[
            &["plan"],
            both.as_slice(),
            &["--sbatch", s(&dotted), "--", "./app"],
        ]
        .concat(),
        &["--sbatch", "the input of --machine", "nothing was written"],
    );
    kept(&m, &mt);
    refused(
        &[
            &["slurm", "--config", "1,4,2.4"],
            both.as_slice(),
            &["--sbatch", s(&p), "--", "./app"],
        ]
        .concat(),
        &["--sbatch", "the input of --profile"],
    );
    kept(&p, &pt);
    // A link to the machine file is the machine file.
    let link = d.join("link.svg");
    symlink(&m, &link).unwrap();
    refused(
        &[&["plan"], both.as_slice(), &["--plot", s(&link)]].concat(),
        &["--plot", "the input of --machine"],
    );
    kept(&m, &mt);
    // The report's folder is swapped in whole: runs at the name of one of its files would go.
    refused(
        &[
            &["report"],
            both.as_slice(),
            &["--measured", s(&runs), "--out", s(d)],
        ]
        .concat(),
        &["--out", "the input of --measured"],
    );
    kept(&runs, &rt);
    let png = d.join("r.png");
    std::fs::copy(&runs, &png).unwrap();
    refused(
        &[
            &["validate"],
            both.as_slice(),
            &["--measured", s(&png), "--plot", s(&png)],
        ]
        .concat(),
        &["--plot", "the input of --measured"],
    );
    kept(&png, &rt);
}

/// Runs `jouleplan ARGS > /dev/full`: (exit code, stderr).
fn onto_a_full_disk(args: &[&str]) -> (i32, String) {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_jouleplan"))
        .args(args)
        .stdout(full)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), err)
}

#[test]
fn a_full_standard_output_is_an_error_naming_it_never_exit_0_or_a_panic() {
    for args in [
        &["completions", "bash"][..],
        &["--help"],
        &["--version"],
        &["plan", "--help"],
        &["man"],
        &["plan", "--json"],
        &["metrics", s(&fixture("mpip/mpi_imbalance_2ranks.mpiP"))],
    ] {
        let (code, err) = onto_a_full_disk(args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(
            err.contains("cannot write standard output"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn a_fifo_given_as_a_trace_is_refused_at_once_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["t.prv", "t.prv.gz"] {
        let fifo = dir.path().join(name);
        let c = std::ffi::CString::new(s(&fifo)).unwrap();
        // SAFETY: a plain mkfifo on a path in a fresh temporary folder; nothing ever writes it.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let started = std::time::Instant::now();
        refused(&["metrics", s(&fifo)], &[name, "not a regular file"]);
        assert!(
            started.elapsed().as_secs() < 60,
            "{name}: waited on the pipe"
        );
    }
}

#[test]
fn validate_sacct_streams_a_million_steps_keeping_one_row_per_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(dir.path(), "m.toml", MACHINE);
    let p = write(dir.path(), "p.json", &profile_json());
    let mut sacct = String::from("JobID|State|NNodes|NCPUS|Elapsed|ConsumedEnergyRaw|ReqCPUFreq\n");
    for i in 0..1_000_000u32 {
        let c = 1 + i % 8;
        let t = 12 + i % 3;
        sacct.push_str(&format!("{i}.0|COMPLETED|1|{c}|00:00:{t}|900|2000000\n"));
    }
    let file = write(dir.path(), "sacct.txt", &sacct);
    drop(sacct);
    let out = dir.path().join("out.json");
    let args = [
        "validate",
        "--machine",
        s(&m),
        "--profile",
        s(&p),
        "--sacct",
        s(&file),
        "--json",
    ];
    let (code, err, kib) = common::run_peak(&args, &out);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let b = &v["validations"][0];
    assert_eq!(
        b["points"].as_array().unwrap().len(),
        8,
        "one row per configuration"
    );
    assert_eq!(
        b["time"]["points"], 1_000_000,
        "every step counts in the statistics"
    );
    assert_eq!(b["points"][0]["runs"], 125_000);
    // The 45 MB file was once held whole with a vector per line: about 17 times its size.
    assert!(kib < 150 * 1024, "peak {kib} KiB for a 45 MB sacct file");
}

/// Stderr of a refusal holds no raw control byte, and shows each escaped as `\u{..}`.
fn escaped_in(err: &str, shown: &[&str]) {
    assert!(
        !err.chars().any(|c| c.is_control() && c != '\n'),
        "a raw control byte reached stderr: {err:?}"
    );
    for s in shown {
        assert!(err.contains(s), "{s:?} not in {err}");
    }
}

#[test]
fn control_bytes_of_an_input_are_shown_escaped_in_errors() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(dir.path(), "m.toml", MACHINE);
    // A CSV header and a cell carrying a terminal escape sequence and a NUL.
    let header = "nodes,cores,fr\u{1b}[31meq_hz,gpus,time_s\n1,4,2e9,0,10\n";
    let f = write(dir.path(), "head.csv", header);
    let args = [
        "fit",
        "--measured",
        s(&f),
        "--machine",
        s(&m),
        "--profile-out",
    ];
    let p = dir.path().join("p.json");
    let err = refused(&[&args[..], &[s(&p)]].concat(), &["head.csv", "line 1"]);
    escaped_in(&err, &["fr\\u{1b}[31meq_hz"]);
    let f = write(
        dir.path(),
        "cell.csv",
        "nodes,cores,freq_hz,gpus,time_s\n1,4,2e9,0,1\u{0}2\n",
    );
    let args = [
        "fit",
        "--measured",
        s(&f),
        "--machine",
        s(&m),
        "--profile-out",
    ];
    let err = refused(&[&args[..], &[s(&p)]].concat(), &["cell.csv", "line 2"]);
    escaped_in(&err, &["1\\u{0}2"]);
    // A TOML string (the machine's name) quoted back in a mismatch.
    let named = MACHINE.replacen(
        "name = \"worked-example\"",
        "name = \"a\\u0000b\\u001b]0;t\\u0007\"",
        1,
    );
    let m2 = write(dir.path(), "named.toml", &named);
    let (code, _, err) = jouleplan(&["plan", "--machine", s(&m2)]);
    assert_ne!(code, 0, "{err}");
    escaped_in(&err, &["a\\u{0}b\\u{1b}]0;t\\u{7}"]);
    // A command-line value, checked by jouleplan and by the argument parser.
    let err = refused(&["plan", "--nodes", "\u{1b}[2J4"], &["--nodes"]);
    escaped_in(&err, &["\\u{1b}[2J4"]);
    let err = refused(&["pl\u{7}an"], &["unrecognized subcommand"]);
    escaped_in(&err, &[]);
}

#[test]
fn an_output_file_that_is_a_folder_is_refused_as_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("out");
    std::fs::create_dir(&folder).unwrap();
    let err = refused(
        &["profile", "--cores", "1", "-o", s(&folder), "--", "true"],
        &["--output", "is a folder", "takes a file path"],
    );
    assert!(!err.contains("--resume"), "{err}");
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);
    refused(
        &["plan", "--sbatch", s(&folder)],
        &["--sbatch", "is a folder", "takes a file path"],
    );
}

/// A fitted profile and machine (with room for `nodes` nodes) of illustrative runs of a made-up
/// law (not a measurement): a serial share of 2%, so every node count is a point of the front.
fn amdahl(dir: &Path, nodes: u32) -> (PathBuf, PathBuf) {
    let m = write(
        dir,
        "m.toml",
        &MACHINE.replacen("nodes = 16", &format!("nodes = {nodes}"), 1),
    );
    let mut rows = String::from("nodes,cores,freq_hz,gpus,time_s,energy_j\n");
    for n in [1u32, 2, 4, 8, 16] {
        for c in 1..=8u32 {
            for f in [1.0, 2.0] {
                let t = 100.0 * (0.02 + 0.98 / (f64::from(n * c) * f / 2.0));
                let e = (50.0 + 10.0 * f64::from(c) * f) * f64::from(n) * t;
                rows += &format!("{n},{c},{},0,{t:.6},{e:.3}\n", f * 1e9);
            }
        }
    }
    let runs = write(dir, "runs.csv", &rows);
    let f = fit_into(dir, &runs, &m, "m2.toml", &["--accept-model-error"]);
    (f.profile, f.machine)
}

#[test]
fn plan_json_of_a_front_of_fifty_thousand_points_stays_within_twice_the_csvs_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (p, m2) = amdahl(dir.path(), 50_000);
    let plan = [
        "plan",
        "--profile",
        s(&p),
        "--machine",
        s(&m2),
        "--accept-model-error",
    ];
    let plan = [&plan[..], &["--nodes", "1-50000", "--full"]].concat();
    let out = dir.path().join("front.csv");
    let (code, err, csv_kib) = common::run_peak(&[&plan[..], &["--csv"]].concat(), &out);
    assert_eq!(code, 0, "{err}");
    let out = dir.path().join("front.json");
    let (code, err, json_kib) = common::run_peak(&[&plan[..], &["--json"]].concat(), &out);
    assert_eq!(code, 0, "{err}");
    // Counted line by line: the whole JSON read here would swell this test process, whose
    // memory a child spawned beside it starts with (the peaks other tests measure).
    use std::io::BufRead;
    let lines = std::io::BufReader::new(std::fs::File::open(&out).unwrap()).lines();
    let points = lines
        .filter(|l| l.as_ref().unwrap().trim().starts_with("\"ties\":"))
        .count();
    assert!(points >= 50_000, "{points} front points");
    // The front is held once, as the CSV holds it; its JSON is made a point at a time (it was
    // built whole as JSON values, eight times the CSV's memory).
    assert!(
        json_kib < 2 * csv_kib,
        "json {json_kib} KiB, csv {csv_kib} KiB"
    );
}

/// `validate --sacct` of the job steps `steps` (lines after the header) against the test
/// machine and profile: (exit code, stdout, stderr).
fn validate_sacct(dir: &Path, steps: &str) -> (i32, String, String) {
    let m = write(dir, "m.toml", MACHINE);
    let p = write(dir, "p.json", &profile_json());
    let header = "JobID|State|NNodes|NCPUS|Elapsed|ConsumedEnergyRaw|ReqCPUFreq\n";
    let sacct = write(dir, "sacct.txt", &format!("{header}{steps}"));
    jouleplan(&[
        "validate",
        "--machine",
        s(&m),
        "--profile",
        s(&p),
        "--sacct",
        s(&sacct),
    ])
}

#[test]
fn a_sacct_elapsed_time_no_clock_shows_is_refused_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    // 99 minutes and 99 seconds were read as 100h40m; a 25th hour after a day, a 60th second.
    for elapsed in ["99:99:99", "1-24:00:00", "00:00:60", "00:61.5"] {
        let steps = format!(
            "1.0|COMPLETED|1|4|00:00:12|900|2000000\n2.0|COMPLETED|1|4|{elapsed}|900|2000000\n"
        );
        let (code, out, err) = validate_sacct(dir.path(), &steps);
        assert_eq!(code, 2, "{elapsed}: {out}{err}");
        for needle in ["sacct.txt", "line 3, field Elapsed", elapsed] {
            assert!(err.contains(needle), "{elapsed}: {needle:?} not in {err}");
        }
    }
}

#[test]
fn sacct_energies_taken_as_no_reading_are_said_with_the_first_line() {
    let dir = tempfile::tempdir().unwrap();
    // A negative and a wrapped counter: no reading, left out with a note (they were left out
    // without a word); an empty cell and Slurm's marker say nothing was gathered: no note.
    let (code, _, err) = validate_sacct(
        dir.path(),
        "1.0|COMPLETED|1|4|00:00:12||2000000\n\
         2.0|COMPLETED|1|4|00:00:12|18446744073709551614|2000000\n\
         3.0|COMPLETED|1|4|00:00:12|-5|2000000\n\
         4.0|COMPLETED|1|4|00:00:12|1e15|2000000\n",
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("ConsumedEnergyRaw of 2 job steps is no reading (line 4: -5"),
        "{err}"
    );
    let (code, _, err) = validate_sacct(
        dir.path(),
        "1.0|COMPLETED|1|4|00:00:12||2000000\n2.0|COMPLETED|1|4|00:00:12|0|2000000\n",
    );
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("ConsumedEnergyRaw"), "{err}");
}
