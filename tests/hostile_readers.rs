//! Hostile inputs to the metric readers and the `perf stat` import: each bad file is refused
//! with exit 2, naming the file, the key or line and what was expected, where it used to be
//! read as some other number without a word.

mod common;

use common::{fixture, jouleplan, write};
use serde_json::Value;
use std::path::Path;

fn refused(args: &[&str], needles: &[&str]) {
    let (code, out, err) = jouleplan(args);
    assert_eq!(code, 2, "{args:?}: {out}{err}");
    assert!(out.is_empty(), "{args:?}: no output on bad input: {out}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: {n:?} not in {err}");
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The recorded TALP output of DLB's MPI send/recv test, parsed.
fn sendrecv() -> Value {
    let text = std::fs::read_to_string(fixture("talp/test_mpi_sendrecv_profile_1_0.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// `jouleplan profile --perf-stat FILE` into a new profile in `dir`.
fn import(dir: &Path, capture: &Path) -> (i32, String, String) {
    let out = dir.join("p.json");
    let _ = std::fs::remove_file(&out);
    jouleplan(&[
        "profile",
        "--perf-stat",
        s(capture),
        "--cores",
        "4",
        "--freqs",
        "2.1",
        "--wall-time",
        "3s",
        "-o",
        s(&out),
    ])
}

#[test]
fn a_talp_region_without_its_cpu_count_is_refused_not_taken_as_one_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = sendrecv();
    v["Application"]["Global"]
        .as_object_mut()
        .unwrap()
        .remove("numCpus");
    let f = write(dir.path(), "nocpu.json", &v.to_string());
    // One CPU in place of the two gave an MPI parallel efficiency of 0.25 for TALP's 0.63.
    refused(
        &["metrics", s(&f)],
        &["nocpu.json", "Application.Global.numCpus", "missing"],
    );
    v["Application"]["Global"]["numCpus"] = 0.into();
    let f = write(dir.path(), "zero.json", &v.to_string());
    refused(
        &["metrics", s(&f)],
        &["zero.json", "numCpus", "a whole number from 1", "got 0"],
    );
    v["Application"]["Global"]["numCpus"] = 2.into();
    let f = write(dir.path(), "ok.json", &v.to_string());
    let (code, out, err) = jouleplan(&["metrics", s(&f), "--json"]);
    assert_eq!(code, 0, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    let pe = r["runs"][0]["host"]["mpi_parallel_efficiency"]
        .as_f64()
        .unwrap();
    assert!((pe - 0.63).abs() < 0.01, "{pe}");
}

#[test]
fn a_talp_count_that_is_a_fraction_or_past_u32_is_refused_not_cut() {
    let dir = tempfile::tempdir().unwrap();
    for (key, bad, shown) in [
        ("numMpiRanks", serde_json::json!(2.7), "got 2.7"),
        ("numMpiRanks", serde_json::json!(1e12), "got 1e12"),
        ("numGpus", serde_json::json!(0.5), "got 0.5"),
    ] {
        let mut v = sendrecv();
        v["Application"]["Global"][key] = bad;
        let f = write(dir.path(), "count.json", &v.to_string());
        refused(
            &["metrics", s(&f)],
            &[
                "count.json",
                &format!("Application.Global.{key}"),
                "whole number",
                shown,
            ],
        );
    }
    let f = write(
        dir.path(),
        "frac-process.csv",
        "region,rank,pid,nodeId,hostname,numCpus,elapsedTime,usefulTime,mpiTime\n\
         Global,0,100,0,n0,1,2000000000,1500000000,500000000\n\
         Global,1.7,101,0,n0,1,2000000000,1000000000,1000000000\n",
    );
    refused(
        &["metrics", s(&f)],
        &["frac-process.csv", "line 3.rank", "whole number", "1.7"],
    );
}

#[test]
fn a_talp_json_without_regions_is_refused_not_an_empty_success() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = sendrecv();
    v["Application"] = serde_json::json!({});
    let f = write(dir.path(), "empty.json", &v.to_string());
    refused(
        &["metrics", s(&f), "--json"],
        &["empty.json", "Application", "at least one region"],
    );
}

#[test]
fn a_talp_process_section_with_a_rank_twice_missing_or_malformed_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let rank = |r: u32, useful: u64| {
        serde_json::json!({"rank": r, "nodeId": 0, "elapsedTime": 2000000000u64,
                           "usefulTime": useful, "mpiTime": 2000000000 - useful})
    };
    let with = |procs: Value| {
        let mut v = sendrecv();
        v["Process"] = serde_json::json!({ "Global": procs });
        v.to_string()
    };
    let two = serde_json::json!([rank(0, 1500000000), rank(1, 1000000000)]);
    let f = write(dir.path(), "two.json", &with(two));
    let (code, out, err) = jouleplan(&["metrics", s(&f), "--json"]);
    assert_eq!(code, 0, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    let lb = r["runs"][0]["pop"]["load_balance"].as_f64().unwrap();
    assert!((lb - 1.25 / 1.5).abs() < 1e-9, "{lb}");
    // Rank 0 again: read as a third rank, load balance 0.89 for the run's 0.83.
    let dup = serde_json::json!([
        rank(0, 1500000000),
        rank(1, 1000000000),
        rank(0, 1500000000)
    ]);
    let f = write(dir.path(), "dup.json", &with(dup));
    refused(
        &["metrics", s(&f)],
        &[
            "dup.json",
            "Process.Global[2].rank",
            "Process.Global[0] is rank 0 already",
        ],
    );
    // One of the region's two ranks: load balance 1.00.
    let one = serde_json::json!([rank(0, 1500000000)]);
    let f = write(dir.path(), "one.json", &with(one));
    refused(
        &["metrics", s(&f)],
        &[
            "one.json",
            "Process.Global",
            "numMpiRanks is 2",
            "1 entries",
        ],
    );
    let junk = serde_json::json!([rank(0, 1500000000), rank(1, 1000000000), 3]);
    let f = write(dir.path(), "junk.json", &with(junk));
    refused(
        &["metrics", s(&f)],
        &["junk.json", "Process.Global[2]", "a rank object"],
    );
    let f = write(dir.path(), "obj.json", &with(serde_json::json!({"a": 1})));
    refused(
        &["metrics", s(&f)],
        &["obj.json", "Process.Global", "a list of ranks"],
    );
}

#[test]
fn a_process_table_whose_regions_take_turns_gives_each_region_once() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "turns-process.csv",
        "region,rank,pid,nodeId,hostname,numCpus,elapsedTime,usefulTime,mpiTime\n\
         Global,0,100,0,n0,1,2000000000,1500000000,500000000\n\
         Work,0,100,0,n0,1,1000000000,900000000,100000000\n\
         Global,1,101,0,n0,1,2000000000,1000000000,1000000000\n\
         Work,1,101,0,n0,1,1000000000,500000000,500000000\n",
    );
    let (code, out, err) = jouleplan(&["metrics", s(&f), "--json"]);
    assert_eq!(code, 0, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    let regions: Vec<&str> = r["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["region"].as_str().unwrap())
        .collect();
    assert_eq!(regions, ["Global", "Work"], "{out}");
    assert_eq!(r["runs"][0]["ranks"], 2, "{out}");
}

#[test]
fn a_perf_stat_capture_with_decimal_commas_is_refused_not_read_without_its_cpu_time() {
    let dir = tempfile::tempdir().unwrap();
    // `perf stat -x,` under a de_DE locale: task-clock's 3462.54 msec reads 3462 of an event
    // `msec`, and the CPU time was lost (utilisation taken as 1 where it was 0.25).
    let f = write(
        dir.path(),
        "de.csv",
        "7404605182,,cycles,3462537228,100,00,2,138,GHz\n\
         3462,54,msec,task-clock,3462537228,100,00,0,995,CPUs utilized\n",
    );
    let (code, out, err) = import(dir.path(), &f);
    assert_eq!(code, 2, "{out}{err}");
    for n in ["de.csv", "line 2", "decimal commas", "LC_ALL=C"] {
        assert!(err.contains(n), "{n:?} not in {err}");
    }
    let c = write(
        dir.path(),
        "c.csv",
        "7404605182,,cycles,3462537228,100.00,2.138,GHz\n\
         3462.54,msec,task-clock,3462537228,100.00,0.995,CPUs utilized\n",
    );
    let (code, _, err) = import(dir.path(), &c);
    assert_eq!(code, 0, "{err}");
    let p: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("p.json")).unwrap()).unwrap();
    let util = p["baseline"][0]["utilisation"].as_f64().unwrap();
    assert!((util - 3.46254 / 12.0).abs() < 1e-6, "{util}");
}

#[test]
fn perf_stat_human_readable_output_is_refused_not_read_as_counts_of_seven() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "human.txt",
        "     7,404,605,182      cycles                    #    2.138 GHz\n\
             10,303,725,432      instructions              #    1.39  insn per cycle\n",
    );
    let (code, out, err) = import(dir.path(), &f);
    assert_eq!(code, 2, "{out}{err}");
    for n in ["human.txt", "line 1", "human-readable", "-x,"] {
        assert!(err.contains(n), "{n:?} not in {err}");
    }
}

#[test]
fn a_perf_stat_time_in_an_unknown_unit_is_refused_and_known_units_are_scaled() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "unit.csv",
        "3462.54,parsecs,task-clock,3462537228,100.00,,\n",
    );
    let (code, out, err) = import(dir.path(), &f);
    assert_eq!(code, 2, "{out}{err}");
    for n in ["unit.csv", "line 1", "a time unit for task-clock"] {
        assert!(err.contains(n), "{n:?} not in {err}");
    }
    // duration_time in microseconds was read as seconds: a wall time of 110 years.
    let f = write(
        dir.path(),
        "us.csv",
        "3462.54,msec,task-clock,3462537228,100.00,,\n\
         3480501780,us,duration_time,3480501780,100.00,,\n",
    );
    let (code, out, err) = import(dir.path(), &f);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("(3480.502 s)") || err.contains("(3480.502 s)"),
        "{out}{err}"
    );
    // A wall time past the range of a run's time is refused, naming the line's event.
    let f = write(
        dir.path(),
        "long.csv",
        "3462.54,msec,task-clock,3462537228,100.00,,\n\
         3480501780,s,duration_time,3480501780,100.00,,\n",
    );
    let (code, out, err) = import(dir.path(), &f);
    assert_eq!(code, 2, "{out}{err}");
    for n in ["long.csv", "duration_time", "a year"] {
        assert!(err.contains(n), "{n:?} not in {err}");
    }
}

/// Writes to `path` a Paraver trace of `iters` iterations of 4 ranks, each computing, then
/// sending 64 bytes to the next rank, whose receive is recorded at `recv(t)`. Streamed to the
/// file: the tests measuring the binary's peak memory share this process's (`wait4` counts
/// the memory of the process that started the binary).
fn ring_trace(path: &Path, iters: u64, recv: impl Fn(u64) -> u64) {
    use std::io::Write;
    let (n, step) = (4u64, 1000u64);
    let end = iters * step + 10;
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(
        w,
        "#Paraver (01/01/2026 at 00:00):{end}_ns:1(4):1:4(1:1,1:1,1:1,1:1),1"
    )
    .unwrap();
    writeln!(w, "c:1:1:4:1:2:3:4").unwrap();
    for it in 0..iters {
        let t0 = it * step;
        for r in 1..=n {
            let (u, dst, rt) = (t0 + 600 + (r * 37) % 300, r % n + 1, recv(t0));
            write!(
                w,
                "1:{r}:1:{r}:1:{t0}:{u}:1\n2:{r}:1:{r}:1:{u}:50000001:3\n\
                 3:{r}:1:{r}:1:{u}:{u}:{dst}:1:{dst}:1:{rt}:{rt}:64:7\n\
                 2:{r}:1:{r}:1:{}:50000001:0\n",
                t0 + step - 1
            )
            .unwrap();
        }
    }
    w.flush().unwrap();
}

#[test]
fn a_trace_whose_receives_all_come_late_is_replayed_in_about_linear_time() {
    let dir = tempfile::tempdir().unwrap();
    // Every receive recorded at the trace's end: each op of the replay was searched for from
    // the back of a queue holding every receive still ahead, and shifted past them (40 000
    // iterations, 28 MB, took 24 s; 500 000, 374 MB, over ten minutes).
    let iters = 40_000;
    let f = dir.path().join("late.prv");
    ring_trace(&f, iters, |_| iters * 1000 + 9);
    let start = std::time::Instant::now();
    let (code, out, err) = jouleplan(&["metrics", s(&f), "--json"]);
    let took = start.elapsed().as_secs_f64();
    assert_eq!(code, 0, "{err}");
    assert!(took < 6.0, "took {took:.1} s");
    let r: Value = serde_json::from_str(&out).unwrap();
    let lb = r["runs"][0]["pop"]["load_balance"].as_f64().unwrap();
    // Useful 637, 674, 711 and 748 ns an iteration: LB = mean / max.
    assert!((lb - 692.5 / 748.0).abs() < 1e-6, "{lb}");
    assert!(
        r["runs"][0]["pop"]["serialisation"].as_f64().is_some(),
        "{out}"
    );
}

#[test]
fn an_mpip_task_with_more_mpi_time_than_run_time_is_refused_not_a_low_load_balance() {
    let dir = tempfile::tempdir().unwrap();
    let real = std::fs::read_to_string(fixture("mpip/mpi_imbalance_2ranks.mpiP")).unwrap();
    let row = "   1        1.6      0.801    50.03";
    assert!(real.contains(row));
    // Task 1 in MPI for 2.8 s of a 1.6 s run: useful -1.2 s, shown as load balance 0.12.
    let f = write(
        dir.path(),
        "over.mpiP",
        &real.replace(row, "   1        1.6      2.801    50.03"),
    );
    refused(
        &["metrics", s(&f)],
        &[
            "over.mpiP",
            "line 21",
            "MPITime of at most the task's AppTime",
        ],
    );
    let f = write(dir.path(), "real.mpiP", &real);
    let (code, out, err) = jouleplan(&["metrics", s(&f), "--json"]);
    assert_eq!(code, 0, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    let lb = r["runs"][0]["pop"]["load_balance"].as_f64().unwrap();
    let want = (1.6 - 0.000934 + 1.6 - 0.801) / 2.0 / (1.6 - 0.000934);
    assert!((lb - want).abs() < 1e-9, "{lb}");
}

#[test]
fn an_eager_limit_of_zero_makes_every_send_wait_instead_of_the_default() {
    let dir = tempfile::tempdir().unwrap();
    // Rank 1 sends 64 bytes at 100 ns and computes on; rank 2 posts the receive at 900 ns.
    // Eager, rank 1 does not wait: ideal runtime 1000 ns (rank 2's useful). Rendezvous, rank 1
    // waits for the post: 900 + 800 = 1700 ns.
    let f = write(
        dir.path(),
        "rdv.prv",
        "#Paraver (01/01/2026 at 00:00):2000_ns:1(2):1:2(1:1,1:1),1\n\
         c:1:1:2:1:2\n\
         1:1:1:1:1:0:100:1\n\
         1:2:1:2:1:0:900:1\n\
         3:1:1:1:1:100:900:2:1:2:1:900:900:64:7\n\
         1:1:1:1:1:900:1700:1\n\
         1:2:1:2:1:900:1000:1\n",
    );
    let transfer = |limit: &str| {
        let (code, out, err) = jouleplan(&["metrics", s(&f), "--eager-limit", limit, "--json"]);
        assert_eq!(code, 0, "{err}");
        let r: Value = serde_json::from_str(&out).unwrap();
        r["runs"][0]["pop"]["transfer"].as_f64().unwrap()
    };
    // 0 was taken as the default 32 KiB: the 64-byte send did not wait.
    assert!((transfer("0") - 1700.0 / 2000.0).abs() < 1e-9);
    assert!((transfer("64") - 1700.0 / 2000.0).abs() < 1e-9);
    assert!((transfer("65") - 1000.0 / 2000.0).abs() < 1e-9);
    assert!((transfer("32768") - 1000.0 / 2000.0).abs() < 1e-9);
}

#[test]
fn communicator_lines_keep_a_count_not_their_task_lists() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    // 300 communicators each naming task 1 a hundred thousand times (60 MB): each list was kept
    // whole (2 bytes of file, 4 of memory per entry: 250 MB resident for 120 MB), and its
    // length taken as the collective's participants, so no collective ever filled.
    let f = dir.path().join("comms.prv");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&f).unwrap());
    writeln!(
        w,
        "#Paraver (01/01/2026 at 00:00):1000_ns:1(2):1:2(1:1,1:1),300"
    )
    .unwrap();
    let list = vec!["1"; 100_000].join(":");
    for id in 1..=300 {
        writeln!(w, "c:1:{id}:100000:{list}").unwrap();
    }
    writeln!(w, "c:1:301:4:1:2:1:2").unwrap();
    // Both ranks enter and leave a collective on communicator 301 (tasks 1 and 2, named twice).
    w.write_all(
        b"1:1:1:1:1:0:100:1\n1:2:1:2:1:0:500:1\n\
          2:1:1:1:1:100:50000002:10:50100004:301\n2:2:1:2:1:500:50000002:10:50100004:301\n\
          2:1:1:1:1:520:50000002:0\n2:2:1:2:1:520:50000002:0\n\
          1:1:1:1:1:520:1000:1\n1:2:1:2:1:520:1000:1\n",
    )
    .unwrap();
    drop(w);
    let stdout = dir.path().join("peak.out");
    let (code, _, kib) = common::run_peak(&["metrics", s(&f), "--json"], &stdout);
    let out = std::fs::read_to_string(&stdout).unwrap();
    assert_eq!(code, 0, "{out}");
    assert!(kib < 64 * 1024, "peak {kib} KiB for a 60 MB trace");
    let r: Value = serde_json::from_str(&out).unwrap();
    let notes = r["runs"][0]["notes"].to_string();
    assert!(!notes.contains("never matched"), "{notes}");
    // The collective synchronises: rank 1 waits to 500, then both compute 480 ns.
    let ser = r["runs"][0]["pop"]["serialisation"].as_f64().unwrap();
    assert!((ser - 980.0 / 980.0).abs() < 1e-9, "{ser}");
}

#[test]
fn binary_bytes_after_a_paraver_header_are_refused_not_a_trace_of_zeros() {
    let dir = tempfile::tempdir().unwrap();
    let head = "#Paraver (01/01/2026 at 00:00):1000_ns:1(2):1:2(1:1,1:1),0\n";
    let body = "1:1:1:1:1:0:1000:1\n1:2:1:2:1:0:500:1\n";
    // Lines that start with no record type were counted as records of an unused type: every
    // efficiency printed as 0.00, exit 0.
    let mut bytes = head.as_bytes().to_vec();
    bytes.extend((0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8 | 0x80));
    bytes.extend_from_slice(b"\n");
    bytes.extend_from_slice(body.as_bytes());
    let f = dir.path().join("garbage.prv");
    std::fs::write(&f, &bytes).unwrap();
    refused(
        &["metrics", s(&f)],
        &["garbage.prv", "line 2", "colon-separated integers"],
    );
    // Blank lines (a CRLF file's, spaces) are no records and no harm.
    let f = write(
        dir.path(),
        "blank.prv",
        &format!("{head}\r\n  \n{body}\r\n"),
    );
    let (code, out, err) = jouleplan(&["metrics", s(&f), "--json"]);
    assert_eq!(code, 0, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    let lb = r["runs"][0]["pop"]["load_balance"].as_f64().unwrap();
    assert!((lb - 0.75).abs() < 1e-9, "{lb}");
    assert_eq!(r["runs"][0]["notes"].as_array().unwrap().len(), 0, "{out}");
}
