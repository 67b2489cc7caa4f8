//! What a capture's counters leave unmeasured or make doubtful is said, never used silently: a
//! `perf stat` capture without task-clock imports with utilisation 1 said as assumed (at the
//! import and in every plan of it), and an IPC or a counted clock that no core gives is a note
//! naming the value and its likely cause. On the real Zen 3 capture of `tests/data/perfstat/`,
//! edited at test time as a capture would go wrong.

mod common;
use common::{jouleplan, write};
use std::path::{Path, PathBuf};

/// The real capture: cycles, instructions, two stall events, task-clock and duration_time.
fn capture() -> String {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perfstat/zen3-kvm-random-reads.csv");
    std::fs::read_to_string(path).unwrap()
}

/// `profile --perf-stat` of `text` at 1 core and `ghz`: (exit code, stderr, profile file).
fn import(d: &Path, name: &str, text: &str, ghz: &str) -> (i32, String, PathBuf) {
    let csv = write(d, &format!("{name}.csv"), text);
    let out = d.join(format!("{name}.json"));
    let (rc, stdout, err) = jouleplan(&[
        "profile",
        "--perf-stat",
        csv.to_str().unwrap(),
        "--cores",
        "1",
        "--freqs",
        ghz,
        "--output",
        out.to_str().unwrap(),
    ]);
    (rc, format!("{stdout}{err}"), out)
}

fn assumptions(profile: &Path) -> Vec<String> {
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(profile).unwrap()).unwrap();
    doc["assumptions"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str())
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// `plan` of `profile` on the bundled H100 node, whose CPU runs at 2.1 GHz, the clock the
/// capture counted: (exit code, stdout, stderr).
fn plan_of(profile: &Path, extra: &[&str]) -> (i32, String, String) {
    let node = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/h100-gpu.toml");
    let mut args = vec![
        "plan",
        "--machine",
        node.to_str().unwrap(),
        "--profile",
        profile.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    jouleplan(&args)
}

#[test]
fn a_capture_without_task_clock_says_utilisation_one_is_assumed_at_import_and_in_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let said = |text: &str| {
        text.contains("busy CPU time was not measured")
            && text.contains("utilisation U = 1 is assumed")
            && text.contains("count task-clock")
    };
    // With task-clock, utilisation is measured (0.995 of the wall time): nothing to say.
    let (rc, out, whole) = import(d, "whole", &capture(), "2.1");
    assert_eq!(rc, 0, "{out}");
    assert!(!said(&out), "{out}");
    assert!(!assumptions(&whole).iter().any(|a| said(a)));
    // Captured without task-clock, the utilisation of 1 it stands on is said.
    let text: String = capture()
        .lines()
        .filter(|l| !l.contains("task-clock"))
        .map(|l| format!("{l}\n"))
        .collect();
    let (rc, out, without) = import(d, "without", &text, "2.1");
    assert_eq!(rc, 0, "{out}");
    assert!(said(&out), "the import says it: {out}");
    assert!(assumptions(&without).iter().any(|a| said(a)));
    let (rc, plan, err) = plan_of(&without, &[]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        err.lines()
            .any(|l| l.starts_with("note: profile assumption") && said(l)),
        "{plan}{err}"
    );
}

#[test]
fn an_ipc_above_eight_or_a_clock_far_from_the_set_one_is_a_note_naming_the_value() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The capture as counted: IPC 1.39 at 2.14 GHz on a core set to 2.1 GHz.
    let (rc, out, whole) = import(d, "whole", &capture(), "2.1");
    assert_eq!(rc, 0, "{out}");
    assert!(!out.contains("implausible"), "{out}");
    // Said to be taken at 1.0 GHz, the 2.14 GHz it counts is more than twice that.
    let (rc, out, slow) = import(d, "slow", &capture(), "1.0");
    assert_eq!(rc, 0, "{out}");
    assert!(
        out.contains("implausible clock 2.14 GHz (cycles / busy CPU time)")
            && out.contains("the 1 GHz the run was set to")
            && out.contains("--freqs"),
        "{out}"
    );
    assert!(assumptions(&slow).iter().any(|a| a.contains("2.14 GHz")));
    assert!(
        !assumptions(&whole)
            .iter()
            .any(|a| a.contains("implausible"))
    );
    // Cycles counted a tenth of the time and not scaled up (a multiplexed counter): IPC 13.92
    // and 0.21 GHz, each named with its likely cause.
    let cut = capture().replace("7404605182,,cycles", "740460518,,cycles");
    let (rc, out, multiplexed) = import(d, "multiplexed", &cut, "2.1");
    assert_eq!(rc, 0, "{out}");
    assert!(
        out.contains("implausible IPC 13.92 (instructions / cycles)")
            && out.contains("multiplexed")
            && out.contains("implausible clock 0.21 GHz"),
        "{out}"
    );
    let (_, plan, err) = plan_of(&multiplexed, &["--accept-model-error"]);
    assert!(
        err.contains("profile assumption") && err.contains("implausible IPC 13.92"),
        "the plan says it too: {plan}{err}"
    );
}

#[test]
fn metrics_names_a_talp_regions_ipc_or_clock_that_no_core_gives() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // DLB's real send/recv run, 2.5 s of useful time; its counters were not read (0 and 0), so
    // they are given here as a capture could hold them.
    let real = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/fixtures/talp/test_mpi_sendrecv_profile_1_0.json"),
    )
    .unwrap();
    let counted = |cycles: &str, instructions: &str| {
        let text = real
            .replacen("\"cycles\": 0,", &format!("\"cycles\": {cycles},"), 1)
            .replacen(
                "\"instructions\": 0,",
                &format!("\"instructions\": {instructions},"),
                1,
            );
        let file = write(d, &format!("talp-{cycles}.json"), &text);
        let (rc, out, err) = jouleplan(&["metrics", file.to_str().unwrap()]);
        assert_eq!(rc, 0, "{err}");
        out
    };
    // 2 GHz at IPC 1.2: nothing to say.
    let out = counted("5000000000", "6000000000");
    assert!(
        out.contains("Counters: IPC 1.20, frequency 2.00 GHz"),
        "{out}"
    );
    assert!(!out.contains("implausible"), "{out}");
    // 10 GHz at IPC 12: both named, with their cause.
    let out = counted("25000000000", "300000000000");
    assert!(
        out.contains("note: implausible IPC 12.00 (instructions / cycles)")
            && out.contains("note: implausible clock 10.00 GHz (cycles / useful time)")
            && out.contains("multiplexed"),
        "{out}"
    );
}
