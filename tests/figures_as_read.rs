//! Figures as a reader takes them: `validate` says which scored rows the fit saw and counts
//! runs and configurations alike in its table and its summary, and shows short times in ms;
//! node-hours are in a unit that shows them; counts of one are in the singular.

mod common;

use common::{jouleplan, repo, s, two_frequency_fit_inputs, write};
use std::path::{Path, PathBuf};

/// Fits `runs` on `machine` in `d`; returns (machine out, profile).
fn fit(d: &Path, runs: &Path, machine: &Path) -> (PathBuf, PathBuf) {
    let (p, m) = (d.join("p.json"), d.join("m.toml"));
    let (code, _, err) = common::fit_to(runs, machine, (&p, &m), &[]);
    assert_eq!(code, 0, "{err}");
    (m, p)
}

#[test]
fn validate_says_which_rows_the_fit_saw_and_counts_runs_and_configurations_alike() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (runs, machine) = two_frequency_fit_inputs(d);
    let (m, p) = fit(d, &runs, &machine);
    // Every run twice: 16 runs at the 8 configurations the table shows.
    let text = std::fs::read_to_string(&runs).unwrap();
    let body: String = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
    let twice = write(d, "twice.csv", &format!("{text}{body}"));
    let (code, out, err) = jouleplan(&[
        "validate",
        "--machine",
        s(&m),
        "--profile",
        s(&p),
        "--measured",
        s(&twice),
    ]);
    assert_eq!(code, 0, "{err}");
    let rows = out.lines().filter(|l| l.starts_with("      1 ")).count();
    assert_eq!(rows, 8, "{out}");
    assert!(out.contains("over 16 runs at 8 configurations"), "{out}");
    assert!(!out.contains("over 16 points"), "{out}");
    // The fit's own runs are scored, and the summary says they were not held out.
    assert!(
        out.contains("8 of 8 configurations are at what the profile was fitted on"),
        "{out}"
    );
    // Points held out of the fit are not the fit's own.
    let (code, out, err) = jouleplan(&[
        "validate",
        "--machine",
        s(&m),
        "--profile",
        s(&p),
        "--use-cores",
        "1,8",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("over 4 points"), "{out}");
    assert!(!out.contains("what the profile was fitted on"), "{out}");
    // The help says what is scored.
    let (_, help, _) = jouleplan(&["validate", "--help"]);
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(!flat.contains("did not see"), "{help}");
    assert!(
        flat.contains("runs the profile was fitted on are not held out"),
        "{help}"
    );
    assert!(!flat.contains("energy_j (whole node)"), "{help}");
}

#[test]
fn short_times_read_in_ms_and_node_time_in_a_unit_that_shows_it() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (_, machine) = two_frequency_fit_inputs(d);
    // Runs of tens of milliseconds (illustrative: time `0.1/c/f + 0.001` s, power
    // `100 + 3c` W).
    let mut csv = String::from("nodes,cores,freq_hz,gpus,time_s,energy_j,energy_scope\n");
    for f in [1e9, 2e9] {
        for c in [1.0, 2.0, 4.0, 8.0] {
            let t = 0.1 / c * (1e9 / f) + 0.001;
            csv += &format!("1,{c},{f},0,{t},{},node\n", (100.0 + 3.0 * c) * t);
        }
    }
    let runs = write(d, "short.csv", &csv);
    let (m, p) = fit(d, &runs, &machine);
    let (code, out, err) = jouleplan(&[
        "validate",
        "--machine",
        s(&m),
        "--profile",
        s(&p),
        "--measured",
        s(&runs),
    ]);
    assert_eq!(code, 0, "{err}");
    // 8 cores at 2 GHz: 7.25 ms, not 0.007s.
    assert!(out.contains("7.25 ms"), "{out}");
    assert!(!out.contains("0.007s"), "{out}");
    // A recorded profile of a 16-core node (tests/data/fixtures/README.md): a one-node run of
    // seconds is a few node-seconds, not 0.0009 node-hours.
    let machine = repo("models/h100-node.toml");
    let heat = repo("tests/data/fixtures/cpu-16core/heat_1024.json");
    let (code, out, err) = jouleplan(&[
        "predict",
        "--machine",
        s(&machine),
        "--profile",
        s(&heat),
        "--config",
        "1,16,2.1",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(" node-seconds "), "{out}");
    assert!(!out.contains("node-hours 0.0"), "{out}");
    // The report's recommendation: one node, in the singular.
    let dir = d.join("report");
    let (code, _, err) = jouleplan(&[
        "report",
        "--machine",
        s(&machine),
        "--profile",
        s(&heat),
        "-o",
        s(&dir),
    ]);
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(html.contains(": 1 node x "), "{html}");
    assert!(
        !html.contains("1 nodes") && !html.contains(" 1 GPUs"),
        "{html}"
    );
    assert!(html.contains(" node-seconds"), "{html}");
}

/// Without `[power]` the interval's other end is node-hours, in the unit that shows them, as
/// the single figures are.
#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_time_only_interval_gives_its_node_hours_in_a_unit_that_shows_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let all = std::fs::read_to_string(common::multinode("hpgmgfv.csv")).unwrap();
    let kept: String = all
        .lines()
        .enumerate()
        .filter(|(i, l)| *i == 0 || ["1,", "2,", "4,", "8,"].iter().any(|n| l.starts_with(n)))
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    let runs = write(d, "runs.csv", &kept);
    let machine = repo("tests/data/machines/icelake-8360y.toml");
    let p = d.join("p.json");
    let args = [
        "fit",
        "--measured",
        s(&runs),
        "--machine",
        s(&machine),
        "--profile-out",
        s(&p),
    ];
    let (code, _, err) = jouleplan(&args);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&machine).unwrap();
    // The machine file has no [power]: plans are by time and node-hours.
    assert!(!text.lines().any(|l| l.trim() == "[power]"), "{text}");
    let args = [
        "plan",
        "--machine",
        s(&machine),
        "--profile",
        s(&p),
        "--nodes",
        "9-16",
    ];
    let (code, out, err) = jouleplan(&[&args[..], &["--cores", "72"]].concat());
    assert_eq!(code, 0, "{err}");
    let line = out
        .lines()
        .find(|l| l.contains("interval at a node count not measured"))
        .unwrap_or_else(|| panic!("{out}"));
    let (_, ends) = line.rsplit_once(", ").unwrap();
    let (lo, hi) = ends.split_once(" to ").unwrap();
    for end in [lo, hi] {
        let (v, unit) = end.trim().split_once(' ').unwrap();
        assert_eq!(unit, "node-hours", "{line}");
        assert!(v.parse::<f64>().unwrap() >= 0.1, "{line}");
    }
}

#[test]
fn the_front_keeps_its_columns_under_their_heads_at_a_million_nodes() {
    // A count of seven digits was once printed past the six-wide nodes column, pushing every
    // column after it out from under its head.
    let d = tempfile::tempdir().unwrap();
    let machine = common::MACHINE.replacen("nodes = 16", "nodes = 4000000", 1);
    assert_ne!(
        machine,
        common::MACHINE,
        "the worked example's machine names its nodes"
    );
    let m = write(d.path(), "machine.toml", &machine);
    // No messages: the worked example's 4 an iteration saturate any switch at a million nodes.
    let profile = common::profile_json().replacen(
        "\"messages_per_iteration\":4",
        "\"messages_per_iteration\":0",
        1,
    );
    assert_ne!(profile, common::profile_json());
    let p = write(d.path(), "profile.json", &profile);
    let (rc, out, err) = jouleplan(&[
        "plan",
        "--machine",
        s(&m),
        "--profile",
        s(&p),
        "--nodes",
        "1000000",
        "--cores",
        "4",
    ]);
    assert_eq!(rc, 0, "{err}\n{out}");
    let head = out
        .lines()
        .find(|l| l.contains("nodes") && l.contains("cores") && l.contains("GHz"));
    let head = head.unwrap_or_else(|| panic!("no front head in {out}"));
    let row = out
        .lines()
        .find(|l| l.contains("1000000") && l.contains(" 4 "));
    let row = row.unwrap_or_else(|| panic!("no front row in {out}"));
    let end = |line: &str, word: &str| line.find(word).map(|i| i + word.len());
    assert_eq!(end(head, "nodes"), end(row, "1000000"), "\n{head}\n{row}");
    // Every later column ends under its head too: the cores column is the next one.
    let cores_end = end(head, "cores").unwrap();
    assert_eq!(&row[cores_end - 1..cores_end], "4", "\n{head}\n{row}");
}
