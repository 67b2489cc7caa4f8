//! `jouleplan calibrate network --from RECORD` on a recorded real ping-pong sweep
//! (`tests/data/pingpong/`): the fit, the rewritten `[network]` section and its refusals. The
//! live sweep under `mpirun -n 2` is `tests/mpi_real.rs`.

mod common;

use common::{jouleplan, repo, s, write};

#[test]
fn a_recorded_sweep_becomes_the_network_section_with_its_source() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("m.toml");
    std::fs::copy(repo("models/xeon-e5-2603-cluster.toml"), &m).unwrap();
    let rec = repo("tests/data/pingpong/vm-shm-2ranks.json");
    let (code, out, err) = jouleplan(&[
        "calibrate",
        "network",
        "--machine",
        s(&m),
        "--from",
        s(&rec),
    ]);
    assert_eq!(code, 0, "{err}");
    // Recorded on 2026-11-23: 0.195 us and 7.21 GB/s fitted, 9.46 GB/s saturated at 2 MiB.
    assert!(out.contains("latency L = 0.195 us"), "{out}");
    assert!(out.contains("throughput B = 7.213 GB/s"), "{out}");
    assert!(
        out.contains("saturated throughput (NetPIPE) 9.455 GB/s at 2097152 bytes"),
        "{out}"
    );
    assert!(
        out.matches(" us ").count() >= 25,
        "a residual per size: {out}"
    );
    let text = std::fs::read_to_string(&m).unwrap();
    assert!(text.contains("latency_s = 1.95473e-7"), "{text}");
    assert!(text.contains("bandwidth_bytes_per_s = 7.21255e9"), "{text}");
    assert!(
        text.contains("network = \"measured: `jouleplan calibrate network`"),
        "{text}"
    );
    assert!(
        !text.contains("\"network.latency_s\""),
        "stale per-key source kept: {text}"
    );
    // Everything else of the file is kept, comments included.
    let before = std::fs::read_to_string(repo("models/xeon-e5-2603-cluster.toml")).unwrap();
    for line in before.lines().filter(|l| l.starts_with('#')) {
        assert!(text.contains(line), "lost {line}");
    }
    let (code, _, err) = jouleplan(&["machine", "check", s(&m)]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_damaged_record_or_a_build_without_mpi_is_refused_with_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("m.toml");
    std::fs::copy(repo("models/xeon-e5-2603-cluster.toml"), &m).unwrap();
    let before = std::fs::read(&m).unwrap();
    let run = |extra: &[&str]| {
        jouleplan(&[&["calibrate", "network", "--machine", s(&m)][..], extra].concat())
    };
    let record = |name: &str, sizes: &str| {
        let text = format!(
            r#"{{"format":"jouleplan-pingpong/1","hosts":["a","b"],"date":"x","target_s":0.02,"sizes":[{sizes}]}}"#
        );
        write(tmp.path(), name, &text)
    };
    let two = record(
        "r.json",
        r#"{"bytes":1,"one_way_s":[1e-6]},{"bytes":2,"one_way_s":[1e-6]}"#,
    );
    let (code, _, err) = run(&["--from", s(&two)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("need at least 3"), "{err}");
    let neg = record("n.json", r#"{"bytes":1,"one_way_s":[-1e-6]}"#);
    let (code, _, err) = run(&["--from", s(&neg)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("sizes[0].one_way_s"), "{err}");
    let (code, _, err) = run(&["--max-bytes", "16 parsecs"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--max-bytes"), "{err}");
    // The test binary is built without the `mpi` feature: it says how to get one.
    let (code, _, err) = run(&[]);
    if !cfg!(feature = "mpi") {
        assert_ne!(code, 0);
        assert!(
            err.contains("--features mpi") && err.contains("--from RECORD"),
            "{err}"
        );
    }
    assert_eq!(
        std::fs::read(&m).unwrap(),
        before,
        "nothing written on refusal"
    );
}

/// The file `machine init` writes has neither `[network]` nor `[power]`: each calibration
/// writes its own section whatever the other holds, and the file plans after each.
#[test]
fn each_calibration_completes_a_machine_init_file_without_the_other_section() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("node.toml");
    let (code, _, err) = jouleplan(&["machine", "init", "-o", s(&m)]);
    assert_eq!(code, 0, "{err}");
    let init = std::fs::read_to_string(&m).unwrap();
    assert!(
        !init.contains("\n[network]") && !init.contains("\n[power]"),
        "{init}"
    );
    let rec = repo("tests/data/pingpong/vm-shm-2ranks.json");
    let args = [
        "calibrate",
        "network",
        "--machine",
        s(&m),
        "--from",
        s(&rec),
    ];
    let (code, _, err) = jouleplan(&args);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&m).unwrap();
    assert!(text.contains("latency_s = 1.95473e-7"), "{text}");
    assert!(!text.contains("\n[power]"), "no power invented: {text}");
    // `machine check` calls it incomplete for the power alone.
    let (code, _, err) = jouleplan(&["machine", "check", s(&m)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("a [power] section"), "{err}");
    assert!(!err.contains("a [network] section"), "{err}");
    // Power is next: refused here for want of an energy meter, not for the section.
    let no_network = write(tmp.path(), "cpu.toml", &init);
    let (code, _, err) = common::calibrate_power_without_a_meter(&no_network);
    if std::env::var_os("SLURM_JOB_ID").is_none() {
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("needs the node's energy"), "{err}");
        assert!(!err.contains("[network]"), "{err}");
    }
}
