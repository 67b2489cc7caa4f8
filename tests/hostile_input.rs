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
        &["neg.json", "usefulTime", "0, or from 1"],
    );
    v["Application"]["Global"]["usefulTime"] = serde_json::json!(5_000_000);
    v["Application"]["Global"]["elapsedTime"] = serde_json::json!(1e-308);
    let f = write(dir.path(), "tiny.json", &v.to_string());
    bad_input(
        &["metrics", f.to_str().unwrap()],
        &["tiny.json", "elapsedTime", "in ns: from 1 to 3.2e16"],
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
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_trace_with_duplicated_state_records_is_flagged_not_silent() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(
        std::fs::File::open(common::public_fixture("paraver/epoch/epoch_2proc.prv.gz")).unwrap(),
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
            common::public_fixture(&format!("paraver/epoch/epoch_2proc.{ext}")),
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
            "baseline[0].energy_j",
            "from 0.001",
        ],
    );
    assert!(started.elapsed().as_secs() < 60);
}

#[test]
fn a_tiny_window_over_a_long_trace_cannot_size_a_huge_grid() {
    // tests/data/hostile/README.md: the shape of the fuzzer's input that took over 2 GB.
    let f = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/hostile/paraver-huge-window-grid.prv");
    bad_input(
        &["metrics", f.to_str().unwrap(), "--window", "1us"],
        &[
            "paraver-huge-window-grid.prv",
            "at most 65536 windows",
            "21900000 windows",
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

/// The hostile values every reader of a time or an energy refuses, as they are written in a
/// cell: subnormal, zero, negative, beyond any run, not finite.
const HOSTILE_READINGS: [&str; 7] = ["1e-320", "0", "-1", "-0.0", "1e13", "1e400", "NaN"];

fn refusal(r: jouleplan::error::InputResult<impl std::fmt::Debug>, cell: &str) -> String {
    match r {
        Ok(v) => panic!("{cell}: read as {v:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn measured_csv_and_sacct_refuse_hostile_times_naming_line_and_column() {
    use jouleplan::calibrate::{reproduce::EnergyScope, runs::read_csv, sacct_runs};
    use std::path::Path;
    let machine = jouleplan::model::machine::Machine::from_toml(Path::new("m.toml"), MACHINE)
        .expect("the test machine");
    for v in HOSTILE_READINGS {
        let csv = format!(
            "nodes,cores,freq_hz,gpus,time_s,energy_j\n1,8,2e9,0,100,5000\n1,8,2e9,0,{v},5000\n"
        );
        let err = refusal(read_csv(Path::new("m.csv"), &csv), v);
        assert!(
            err.contains("m.csv") && err.contains("line 3, column time_s"),
            "{v}: {err}"
        );
        let csv = format!("nodes,cores,freq_hz,gpus,time_s,energy_j\n1,8,2e9,0,100,{v}\n");
        let err = refusal(read_csv(Path::new("m.csv"), &csv), v);
        assert!(err.contains("line 2, column energy_j"), "{v}: {err}");
        // sacct's Elapsed: seconds as a number past the minutes.
        let text = format!(
            "JobID|State|NNodes|NCPUS|Elapsed|ConsumedEnergyRaw|ReqCPUFreq\n\
             9.0|COMPLETED|1|8|00:01:40|5000|2000000\n\
             9.1|COMPLETED|1|8|00:00:{v}|5000|2000000\n"
        );
        let r = sacct_runs::read(Path::new("s.txt"), &text, &machine, EnergyScope::Node);
        let err = refusal(r, v);
        assert!(
            err.contains("s.txt") && err.contains("line 3, field Elapsed"),
            "{v}: {err}"
        );
    }
    // A sub-microsecond step is no run either (it was taken as one above 0).
    let text = "JobID|NNodes|NCPUS|Elapsed|ReqCPUFreq\n9.0|1|8|00:00:0.0000001|2000000\n";
    let r = sacct_runs::read(Path::new("s.txt"), text, &machine, EnergyScope::Node);
    assert!(refusal(r, "1e-7 s").contains("a microsecond to a year"));
}

#[test]
fn sacct_energies_out_of_range_are_no_reading_in_both_readers() {
    use jouleplan::calibrate::{reproduce::EnergyScope, sacct_runs};
    use std::path::Path;
    let machine = jouleplan::model::machine::Machine::from_toml(Path::new("m.toml"), MACHINE)
        .expect("the test machine");
    for v in HOSTILE_READINGS
        .iter()
        .chain(&["18446744073709551614", "18446744073709551615", ""])
    {
        let text = format!("9|COMPLETED\n9.0|{v}\n9.1|5000\n");
        let rows = jouleplan::measure::slurm::parse_sacct(&text);
        assert_eq!(rows[1], ("9.0".to_string(), None), "{v}");
        assert_eq!(rows[2], ("9.1".to_string(), Some(5000.0)), "{v}");
        let text = format!(
            "JobID|NNodes|NCPUS|Elapsed|ConsumedEnergyRaw|ReqCPUFreq\n\
             9.0|1|8|00:01:40|{v}|2000000\n"
        );
        let rows = sacct_runs::read(Path::new("s.txt"), &text, &machine, EnergyScope::Node)
            .unwrap_or_else(|e| panic!("{v}: {e}"));
        assert_eq!((rows[0].time_s, rows[0].energy), (100.0, None), "{v}");
    }
}

#[test]
fn talp_times_out_of_range_are_refused_naming_the_key() {
    use jouleplan::metrics::talp;
    use std::path::Path;
    let text = std::fs::read_to_string(fixture("talp/test_mpi_sendrecv_profile_1_0.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    for key in ["elapsedTime", "usefulTime", "mpiTime"] {
        // As numbers where JSON holds them, and as strings (which the reader also takes) for
        // the ones JSON cannot: 1e400, NaN.
        for v in HOSTILE_READINGS {
            if matches!(v, "0" | "-0.0") && key != "elapsedTime" {
                continue; // no useful or MPI time is a reading
            }
            let mut d = doc.clone();
            let value = serde_json::from_str::<Value>(v)
                .ok()
                .filter(Value::is_number)
                .unwrap_or_else(|| Value::String(v.to_string()));
            // 1e13 ns is under three hours: times in ns beyond a year are refused.
            let value = if v == "1e13" {
                serde_json::json!(1e17)
            } else {
                value
            };
            d["Application"]["Global"][key] = value;
            let err = refusal(talp::from_json(Path::new("t.json"), &d.to_string()), v);
            assert!(
                err.contains("t.json") && err.contains(&format!("Application.Global.{key}")),
                "{key} = {v}: {err}"
            );
            assert!(err.contains("in ns:"), "{key} = {v}: {err}");
        }
    }
    // A bare 1e400 is no JSON number: refused where it stands.
    let err = refusal(
        talp::from_json(
            Path::new("t.json"),
            &text.replacen("\"elapsedTime\": ", "\"elapsedTime\": 1e400, \"x\": ", 1),
        ),
        "1e400",
    );
    assert!(err.contains("t.json") && err.contains("line"), "{err}");
    // TALP's CSV: the row's line and the column.
    let csv = "name,numCpus,numMpiRanks,numNodes,elapsedTime,usefulTime,mpiTime\n\
               Global,2,2,1,1e-320,500,0\n";
    let err = refusal(talp::from_csv(Path::new("t.csv"), csv), "1e-320");
    assert!(err.contains("line 2.elapsedTime"), "{err}");
}

#[test]
fn profile_times_and_energies_share_the_readers_range() {
    use jouleplan::artefact::profile::ProfileFile;
    use std::path::Path;
    let doc: Value = serde_json::from_str(&profile_json()).unwrap();
    for (key, v) in [
        ("wall_time_s", 1e-320),
        ("wall_time_s", 1e-7),
        ("wall_time_s", 0.0),
        ("wall_time_s", 1e9),
        ("energy_j", 1e-320),
        ("energy_j", 0.0),
        ("energy_j", 1e13),
    ] {
        let mut d = doc.clone();
        d["baseline"][0][key] = serde_json::json!(v);
        let err = refusal(ProfileFile::read(Path::new("p.json"), &d.to_string()), key);
        assert!(
            err.contains("p.json") && err.contains(&format!("baseline[0].{key}")),
            "{key} = {v}: {err}"
        );
        assert!(
            err.contains("to a year") || err.contains("millijoule"),
            "{err}"
        );
    }
}

#[test]
fn a_crlf_measured_csv_names_the_line_of_the_bad_row_not_the_header() {
    use jouleplan::artefact::measured::read_rows;
    use jouleplan::calibrate::runs::read_csv;
    use std::path::Path;
    // tests/data/hostile/README.md: found by the measured_csv fuzz target.
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/hostile/measured-crlf-header-line-numbers.csv");
    let bytes = std::fs::read(&file).unwrap();
    let mut lines = Vec::new();
    read_rows(&file, bytes.as_slice(), |row, line| {
        lines.push((line, row.nodes));
        Ok(())
    })
    .unwrap();
    assert_eq!(lines, [(2, 2)]);
    for (text, line) in [
        ("nodes,cores,freq_hz,gpus,time_s\r\n1,8,2e9,0,1e-320\r\n", 2),
        (
            "nodes,cores,freq_hz,gpus,time_s\r\n\r\n1,8,2e9,0,5\r\n1,8,2e9,0,-1\r\n",
            4,
        ),
        (
            "nodes,cores,freq_hz,gpus,time_s\n1,8,2e9,0,5\r\n1,8,2e9,0,-1\n",
            3,
        ),
    ] {
        let err = refusal(read_csv(Path::new("w.csv"), text), text);
        assert!(
            err.contains(&format!("line {line}, column time_s")),
            "{text:?}: {err}"
        );
    }
    let ok = "nodes,cores,freq_hz,gpus,time_s,energy_j\r\n1,8,2e9,0,5,500\r\n\r\n";
    let rows = read_csv(Path::new("w.csv"), ok).unwrap();
    assert_eq!((rows.len(), rows[0].energy.map(|e| e.0)), (1, Some(500.0)));
}

#[test]
fn an_mpip_report_cut_short_or_listing_a_task_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let real = std::fs::read_to_string(fixture("mpip/mpi_imbalance_2ranks.mpiP")).unwrap();
    let rows: Vec<&str> = real.lines().collect();
    let at = |prefix: &str| rows.iter().position(|l| l.starts_with(prefix)).unwrap();
    let (task0, total) = (at("   0 "), at("   * "));
    // Cut after task 0 (a copy stopped mid-table): one rank instead of two, and an efficiency
    // of 1.00 instead of 0.75, were it read.
    let cut = rows[..=task0].join("\n") + "\n";
    let f = write(dir.path(), "cut.mpiP", &cut);
    bad_input(
        &["metrics", f.to_str().unwrap()],
        &["cut.mpiP", "cut short", "End of Report"],
    );
    // Cut after the task table: the message statistics would be lost without a word.
    let cut = rows[..=total].join("\n") + "\n";
    let f = write(dir.path(), "cut2.mpiP", &cut);
    bad_input(
        &["metrics", f.to_str().unwrap()],
        &["cut2.mpiP", "cut short"],
    );
    // Task 0 listed twice: three ranks of a two-rank run.
    let mut twice = rows.clone();
    twice.insert(task0 + 1, rows[task0]);
    let f = write(dir.path(), "twice.mpiP", &(twice.join("\n") + "\n"));
    bad_input(
        &["metrics", f.to_str().unwrap()],
        &[
            "twice.mpiP",
            &format!("line {}", task0 + 2),
            "task 0 (listed twice",
        ],
    );
    // The whole report still reads.
    let (code, out, err) = jouleplan(&[
        "metrics",
        fixture("mpip/mpi_imbalance_2ranks.mpiP").to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("2 ranks"), "{out}");
}

#[test]
fn a_perf_stat_capture_counting_an_event_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cap = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/perfstat/zen3-kvm-random-reads.csv"),
    )
    .unwrap();
    // Two runs in one file, as `perf stat --append -o` leaves them: the second's cycles would
    // replace the first's and no longer match its stall counts.
    let f = write(dir.path(), "two.csv", &format!("{cap}{cap}"));
    let out = dir.path().join("p.json");
    let args = [
        "profile",
        "--perf-stat",
        f.to_str().unwrap(),
        "--cores",
        "1",
        "--freqs",
        "2.0",
    ];
    bad_input(
        &[args.as_slice(), &["--output", out.to_str().unwrap()]].concat(),
        &["two.csv", "line 11", "line 3 counts `cycles` already"],
    );
    assert!(!out.exists());
}

/// `text` behind a UTF-8 byte-order mark, as a Windows editor saves it, in `dir/name`.
fn with_bom(dir: &std::path::Path, name: &str, text: &str) -> String {
    let f = dir.join(name);
    std::fs::write(&f, [b"\xef\xbb\xbf".as_slice(), text.as_bytes()].concat()).unwrap();
    f.to_str().unwrap().to_string()
}

#[test]
fn tool_outputs_behind_a_byte_order_mark_read_as_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let read = |p: std::path::PathBuf| std::fs::read_to_string(p).unwrap();
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let talp = read(fixture("talp/test_mpi_sendrecv_profile_2_0.json"));
    let mpip = read(fixture("mpip/mpi_imbalance_2ranks.mpiP"));
    let trace = read(repo.join("tests/data/hostile/paraver-huge-window-grid.prv"));
    for (name, text) in [("t.json", &talp), ("r.mpiP", &mpip), ("t.prv", &trace)] {
        let f = with_bom(d, name, text);
        let (code, out, err) = jouleplan(&["metrics", &f]);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(out.contains(name), "{name}: {out}");
    }
    let cap = read(repo.join("tests/data/perfstat/zen3-kvm-random-reads.csv"));
    let f = with_bom(d, "cap.csv", &cap);
    let p = d.join("p.json");
    let args = [
        "profile",
        "--perf-stat",
        &f,
        "--cores",
        "1",
        "--freqs",
        "2.0",
        "-o",
    ];
    let (code, _, err) = jouleplan(&[args.as_slice(), &[p.to_str().unwrap()]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(p.exists());
    // sacct's header is read as its fields (the rows then fail on the profile, not the header).
    let sacct = read(repo.join("tests/data/sacct/localhost-sleep.txt"));
    let f = with_bom(d, "sacct.txt", &sacct);
    let (_, _, err) = jouleplan(&["validate", "--sacct", &f]);
    assert!(!err.contains("line 1, field"), "{err}");
    assert!(
        err.contains("sacct.txt: none of its 2 configurations"),
        "{err}"
    );
}

#[test]
fn a_json_key_given_twice_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let talp = std::fs::read_to_string(fixture("talp/test_mpi_sendrecv_profile_2_0.json")).unwrap();
    // A second `usefulTime` after the first: serde_json alone keeps the last one silently.
    let twice = talp.replacen("\"usefulTime\":", "\"usefulTime\": 1, \"usefulTime\":", 1);
    assert_ne!(twice, talp);
    let f = write(dir.path(), "twice.json", &twice);
    bad_input(
        &["metrics", f.to_str().unwrap()],
        &["twice.json", "key `usefulTime` given twice", "line "],
    );
    // The profile reader is the same.
    let prof = profile_json().replacen('{', "{\"program\": \"x\",", 1);
    let f = write(dir.path(), "p.json", &prof);
    let m = write(dir.path(), "m.toml", MACHINE);
    bad_input(
        &[
            "plan",
            "--machine",
            m.to_str().unwrap(),
            "--profile",
            f.to_str().unwrap(),
        ],
        &["p.json", "key `program` given twice"],
    );
    // An empty `.json` is said to be empty JSON, not a file of no known kind.
    let f = write(dir.path(), "empty.json", "");
    bad_input(
        &["metrics", f.to_str().unwrap()],
        &["empty.json", "not valid JSON"],
    );
}

#[test]
fn a_talp_csv_naming_a_column_or_a_rank_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    // DLB 3.7's process table (the header of its camelCase spelling), two ranks.
    let head = "region,rank,pid,nodeId,hostname,numCpus,elapsedTime,usefulTime,mpiTime";
    let rows = "Global,0,100,0,n0,1,2000000000,1500000000,500000000\n\
                Global,1,101,0,n0,1,2000000000,1000000000,1000000000\n";
    // A second `usefulTime` column (a table pasted together): its cells would replace the first's.
    let twice = format!("{head},UsefulTime\n{}", rows.replace('\n', ",1\n"));
    let f = write(dir.path(), "col-process.csv", &twice);
    bad_input(
        &["metrics", f.to_str().unwrap()],
        &["col-process.csv", "line 1", "`UsefulTime` is there twice"],
    );
    // A second run appended to the file (TALP appends to a CSV that exists): rank 0 again was
    // read as a third rank of one run.
    let appended = format!("{head}\n{rows}{}", rows.lines().next().unwrap());
    let f = write(dir.path(), "two-process.csv", &appended);
    bad_input(
        &["metrics", f.to_str().unwrap()],
        &[
            "two-process.csv",
            "line 4",
            "line 2 holds rank 0 of Global already",
        ],
    );
    let f = write(dir.path(), "one-process.csv", &format!("{head}\n{rows}"));
    let (code, out, err) = jouleplan(&["metrics", f.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("2 ranks"), "{out}");
}

#[test]
fn a_talp_pop_csv_holding_a_region_twice_is_refused_naming_both_lines() {
    let dir = tempfile::tempdir().unwrap();
    // The pop-metrics header and two regions of one run (constructed values, not a measurement).
    let head = "name,numCpus,numMpiRanks,numNodes,elapsedTime,usefulTime,mpiTime";
    let rows = "Global,2,2,1,2000000000,1500000000,500000000\n\
                solve,2,2,1,1000000000,800000000,200000000\n";
    // A second run appended (TALP appends to a CSV that exists): read as two runs of one file.
    let appended = format!("{head}\n{rows}{rows}");
    let f = write(dir.path(), "two-pop.csv", &appended);
    bad_input(
        &["metrics", f.to_str().unwrap()],
        &[
            "two-pop.csv",
            "line 4",
            "line 2 holds region Global already",
            "give each run's file on its own",
        ],
    );
    let f = write(dir.path(), "one-pop.csv", &format!("{head}\n{rows}"));
    let (code, out, err) = jouleplan(&["metrics", f.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("solve"), "{out}");
}
