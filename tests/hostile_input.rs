//! Hostile and broken input (the mutation campaign's findings, each as it was reported): an
//! error naming the file and key or flag, exit 2, nothing written and no allocation sized by a
//! header; never an abort, a hang, or a non-finite number in an output.

mod common;

use common::{MACHINE, fixture, jouleplan, profile_json, write};
use serde_json::Value;

fn bad_input(args: &[&str], needles: &[&str]) {
    let (code, out, err) = jouleplan(args);
    assert_eq!(code, 2, "{args:?}: {out}{err}");
    assert!(out.is_empty(), "{args:?}: no output on bad input: {out}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: {n:?} not in {err}");
    }
}

#[test]
fn extreme_machine_numbers_are_refused_with_their_range() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "p.json", &profile_json());
    for (from, to, key) in [
        (
            "bandwidth_bytes_per_s = 1.0e9",
            "bandwidth_bytes_per_s = 1e-320",
            "network.bandwidth_bytes_per_s",
        ),
        ("idle_w = 50.0", "idle_w = 1e308", "power.idle_w"),
        (
            "gpu_active_w = 300.0",
            "gpu_active_w = -1",
            "power.gpu_active_w",
        ),
    ] {
        let m = write(dir.path(), "m.toml", &MACHINE.replace(from, to));
        bad_input(
            &[
                "plan",
                "--machine",
                m.to_str().unwrap(),
                "--profile",
                p.to_str().unwrap(),
            ],
            &[key, "a finite number from"],
        );
    }
}

#[test]
fn extreme_profile_numbers_are_refused_naming_the_point() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(dir.path(), "m.toml", MACHINE);
    let mut v: Value = serde_json::from_str(&profile_json()).unwrap();
    v["baseline"][0]["cycles"] = serde_json::json!(1e308);
    let p = write(dir.path(), "p.json", &v.to_string());
    bad_input(
        &[
            "plan",
            "--machine",
            m.to_str().unwrap(),
            "--profile",
            p.to_str().unwrap(),
        ],
        &["p.json", "baseline[0].cycles"],
    );
    bad_input(
        &[
            "slurm",
            "--config",
            "1,1,1.0",
            "--time-margin",
            "1e308",
            "--",
            "x",
        ],
        &["--time-margin", "up to 10"],
    );
}

#[test]
fn negative_times_in_talp_and_mpip_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let talp = std::fs::read_to_string(fixture("talp/test_mpi_sendrecv_profile_1_0.json")).unwrap();
    let mut v: Value = serde_json::from_str(&talp).unwrap();
    v["Application"]["Global"]["usefulTime"] = serde_json::json!(-5_000_000);
    let f = write(dir.path(), "neg.json", &v.to_string());
    bad_input(
        &["metrics", f.to_str().unwrap()],
        &["neg.json", "usefulTime", ">= 0"],
    );
    v["Application"]["Global"]["usefulTime"] = serde_json::json!(5_000_000);
    v["Application"]["Global"]["elapsedTime"] = serde_json::json!(1e-308);
    let f = write(dir.path(), "tiny.json", &v.to_string());
    bad_input(
        &["metrics", f.to_str().unwrap()],
        &["tiny.json", "elapsedTime", "at least 1 ns"],
    );
    let mpip = std::fs::read_to_string(fixture("mpip/mpi_imbalance_2ranks.mpiP")).unwrap();
    let line = mpip
        .lines()
        .find(|l| l.trim_start().starts_with("0 ") && l.contains('.'))
        .unwrap();
    let cols: Vec<&str> = line.split_whitespace().collect();
    let broken = mpip.replacen(
        line,
        &line.replacen(cols[2], &format!("-{}", cols[2]), 1),
        1,
    );
    let f = write(dir.path(), "neg.mpiP", &broken);
    bad_input(&["metrics", f.to_str().unwrap()], &["neg.mpiP", ">= 0"]);
}

#[test]
fn a_perf_stat_capture_with_a_negative_counter_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cap = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/perfstat/zen3-kvm-random-reads.csv"),
    )
    .unwrap();
    let broken = cap.replacen("7404605182", "-7404605182", 1);
    assert_ne!(broken, cap);
    let f = write(dir.path(), "neg.csv", &broken);
    let out = dir.path().join("p.json");
    bad_input(
        &[
            "profile",
            "--perf-stat",
            f.to_str().unwrap(),
            "--cores",
            "1",
            "--freqs",
            "2.0",
            "--output",
            out.to_str().unwrap(),
        ],
        &["neg.csv", "a count from 0 to 1e21"],
    );
    assert!(!out.exists());
}

#[test]
fn a_damaged_resume_file_is_refused_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    let o = out.to_str().unwrap();
    let (code, _, err) = jouleplan(&["profile", "--cores", "1", "--output", o, "--", "true"]);
    assert_eq!(code, 0, "{err}");
    let good = std::fs::read_to_string(&out).unwrap();
    for (field, value) in [
        ("gpus", serde_json::json!(4_000_000_000u64)),
        ("wall_s", serde_json::json!(-1.0)),
    ] {
        let mut v: Value = serde_json::from_str(&good).unwrap();
        v["sweep"]["record"]["runs"][0][field] = value;
        std::fs::write(&out, v.to_string()).unwrap();
        bad_input(
            &[
                "profile", "--cores", "1", "--resume", "--output", o, "--", "true",
            ],
            &["p.json", "sweep.record.runs[0]", field],
        );
    }
}

#[test]
fn gpu_counts_the_node_lacks_and_huge_specs_are_refused_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    let o = out.to_str().unwrap();
    // This machine has no GPU (CI's neither): any GPU count is refused, naming why.
    bad_input(
        &[
            "profile", "--gpus", "5", "--cores", "1", "--output", o, "--", "true",
        ],
        &["--gpus", "got `5`"],
    );
    bad_input(
        &[
            "profile",
            "--gpus",
            "1-99999999",
            "--cores",
            "1",
            "--output",
            o,
            "--",
            "true",
        ],
        &["--gpus"],
    );
    assert!(!out.exists());
    bad_input(
        &["plan", "--nodes", "1-9000000,1-9000000,2-9000001"],
        &["--nodes", "at most 10^7 values"],
    );
}

#[test]
fn a_paraver_header_cannot_size_memory() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = write(
        dir.path(),
        "tasks.prv",
        "#Paraver (01/01/2024 at 00:00):1000_ns:1(1):1:2147483647(1:1)\n1:1:1:1:1:0:1000:1\n",
    );
    bad_input(
        &["metrics", tasks.to_str().unwrap()],
        &["tasks.prv", "tasks in the header"],
    );
    let end = write(
        dir.path(),
        "end.prv",
        "#Paraver (01/01/2024 at 00:00):18000000000000000000_ns:1(1):1:2(1:1,1:1)\n1:1:1:1:1:0:1000:1\n",
    );
    bad_input(
        &["metrics", end.to_str().unwrap(), "--window", "1us"],
        &["end.prv", "at most 65536 windows"],
    );
}

#[test]
fn a_trace_with_duplicated_state_records_is_flagged_not_silent() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(
        std::fs::File::open(fixture("paraver/epoch/epoch_2proc.prv.gz")).unwrap(),
    )
    .read_to_string(&mut text)
    .unwrap();
    let mut out = String::new();
    for l in text.lines() {
        out.push_str(l);
        out.push('\n');
        if l.starts_with("1:") {
            out.push_str(l);
            out.push('\n');
        }
    }
    let prv = write(dir.path(), "dup.prv", &out);
    for ext in ["pcf", "row"] {
        std::fs::copy(
            fixture(&format!("paraver/epoch/epoch_2proc.{ext}")),
            dir.path().join(format!("dup.{ext}")),
        )
        .unwrap();
    }
    let (code, out, err) = jouleplan(&["metrics", prv.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("implausible: POP transfer efficiency"),
        "{out}"
    );
}

#[test]
fn zero_energy_recordings_are_refused_at_once_instead_of_hanging_the_power_fit() {
    // tests/data/hostile/README.md: these made nalgebra's SVD spin forever.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hostile");
    let tmp = tempfile::tempdir().unwrap();
    let m = write(tmp.path(), "m.toml", MACHINE);
    let from = |k: &str| {
        format!(
            "{k}={}",
            dir.join(format!("calibrate-power-{k}-zero-energy.json"))
                .display()
        )
    };
    let started = std::time::Instant::now();
    bad_input(
        &[
            "calibrate",
            "power",
            "--machine",
            m.to_str().unwrap(),
            "--from",
            &from("idle"),
            "--from",
            &from("compute"),
        ],
        &[
            "calibrate-power-idle-zero-energy.json",
            "energy_j",
            "must move",
        ],
    );
    assert!(started.elapsed().as_secs() < 60);
}

#[test]
fn a_tiny_window_over_a_long_trace_cannot_size_a_huge_grid() {
    // tests/data/hostile/README.md: the fuzzer's input that took over 2 GB.
    let f = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/hostile/paraver-huge-window-grid.prv");
    bad_input(
        &["metrics", f.to_str().unwrap(), "--window", "1us"],
        &[
            "paraver-huge-window-grid.prv",
            "at most 65536 windows",
            "21898660 windows",
        ],
    );
}

#[test]
fn a_header_with_a_million_idle_tasks_does_not_make_the_replay_quadratic() {
    // tests/data/hostile/README.md: over 60 s before (the test helper kills the binary at 300 s).
    let f = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/hostile/paraver-unfilled-collectives-1m-tasks.prv.gz");
    let (code, out, err) = jouleplan(&["metrics", f.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("1048576 ranks"), "{out}");
    assert!(
        out.contains("20000 receives or collectives never matched"),
        "{out}"
    );
}
