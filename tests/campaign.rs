//! The measurement campaign (`profile --nodes auto`, MODEL.md 6d) replayed on real recorded runs:
//! the nine SPEChpc 2021 codes on Ice Lake nodes (`tests/data/multinode/`, measured by Afzal,
//! Hager and Wellein, PMBS'23, GPL-3.0). Each campaign must end by itself, say every step, cost
//! no more than the fixed sweeps, and lead `fit` and `plan` to a count that wastes little energy
//! against the counts that were measured.

mod common;

use common::jouleplan;
use serde_json::Value;
use std::path::{Path, PathBuf};

const MACHINE: &str = "tests/data/multinode/icelake-8360y.toml";

/// Codes recorded at 72 ranks a node on most counts (the others: any layout).
const FULL: [&str; 5] = ["hpgmgfv", "lbm", "soma", "sweep", "weather"];

fn repo(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs the campaign of `code` in `d` with `extra` flags; returns (exit, JSON or stdout, stderr,
/// the runs file).
fn campaign(d: &Path, code: &str, extra: &[&str]) -> (i32, String, String, PathBuf) {
    let runs = d.join(format!("{code}-runs.csv"));
    let prof = d.join(format!("{code}.json"));
    let replay = repo(&format!("tests/data/multinode/{code}.csv"));
    let machine = repo(MACHINE);
    let mut args = vec![
        "profile",
        "--nodes",
        "auto",
        "--replay",
        &replay,
        "--machine",
        &machine,
        "--max-nodes",
        "16",
        "--measured-out",
        s(&runs),
        "-o",
        s(&prof),
    ];
    if FULL.contains(&code) {
        args.extend(["--cores", "72"]);
    }
    args.extend(extra);
    let (rc, out, err) = jouleplan(&args);
    (rc, out, err, runs)
}

/// `fit` on the campaign's runs, then `plan --nodes 1-16 --cores 72`: the recommended count.
fn recommended(d: &Path, runs: &Path) -> u32 {
    let (p, m) = (d.join("p.json"), d.join("m.toml"));
    let machine = repo(MACHINE);
    let fit = [
        "fit",
        "--measured",
        s(runs),
        "--machine",
        &machine,
        "--profile-out",
        s(&p),
        "--machine-out",
        s(&m),
    ];
    let (rc, _, err) = jouleplan(&fit);
    assert_eq!(rc, 0, "{err}");
    let plan = [
        "plan",
        "--machine",
        s(&m),
        "--profile",
        s(&p),
        "--nodes",
        "1-16",
        "--cores",
        "72",
        "--json",
    ];
    let (rc, out, err) = jouleplan(&plan);
    assert_eq!(rc, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    v["recommendation"]["nodes"].as_u64().unwrap() as u32
}

#[test]
fn every_code_s_campaign_ends_by_itself_cheaply_and_recommends_a_count_that_wastes_little() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let codes = [
        "clvleaf", "hpgmgfv", "lbm", "pot3d", "soma", "sph_exa", "sweep", "tealeaf", "weather",
    ];
    let mut costs = Vec::new();
    for code in codes {
        let (rc, out, err, runs) = campaign(d, code, &["--json"]);
        assert_eq!(rc, 0, "{code}: {err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        let steps = v["steps"].as_array().unwrap();
        assert!(steps.len() >= 2, "{code}: {v}");
        let mut sum = 0;
        for st in steps {
            assert!(!st["why"].as_str().unwrap().is_empty(), "{st}");
            assert!(st["node_hours"].as_f64().unwrap() > 0.0, "{st}");
            sum += st["node_runs"].as_u64().unwrap();
        }
        assert_eq!(v["node_runs"].as_u64().unwrap(), sum, "{code}");
        assert!(
            v["stopped"].as_str().unwrap().starts_with("stable"),
            "{code}: {}",
            v["stopped"]
        );
        // The fixed sweep 1, 2, 4, 8 with two runs each costs 30 node-runs; 1-16, 136.
        assert!(sum <= 45, "{code}: {sum} node-runs");
        costs.push(sum);
        if FULL.contains(&code) {
            let n = recommended(d, &runs);
            let w = common::waste_at_72(code, n);
            assert!(w <= 0.05, "{code}: {n} nodes waste {:.1}%", 100.0 * w);
        }
    }
    let mean = costs.iter().sum::<u64>() as f64 / costs.len() as f64;
    assert!(mean <= 30.0, "mean cost {mean} node-runs: {costs:?}");
}

#[test]
fn a_count_that_was_not_recorded_is_never_measured_and_every_run_is_a_recorded_one() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // sweep was recorded at 72 ranks a node on 2, 3, 4 and 5 nodes only.
    let (rc, out, err, runs) = campaign(d, "sweep", &["--json"]);
    assert_eq!(rc, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    for n in v["measured_nodes"].as_array().unwrap() {
        assert!((2..=5).contains(&n.as_u64().unwrap()), "{v}");
    }
    let recorded = std::fs::read_to_string(repo("tests/data/multinode/sweep.csv")).unwrap();
    let written = std::fs::read_to_string(&runs).unwrap();
    let mut lines = written.lines();
    assert_eq!(lines.next(), recorded.lines().next(), "the header");
    for l in lines {
        assert!(recorded.lines().any(|r| r == l), "{l} was not recorded");
        assert_eq!(l.split(',').nth(1), Some("72"), "{l}");
    }
}

#[test]
fn each_step_is_said_with_its_reason_cost_and_the_recommendation_before_and_after() {
    let dir = tempfile::tempdir().unwrap();
    let (rc, out, err, _) = campaign(dir.path(), "weather", &[]);
    assert_eq!(rc, 0, "{err}");
    for said in [
        "step 1: measured 1 node (1 run,",
        "start: the smallest recorded count at or above [1, 2, 4]",
        "the recommendation, 11 nodes, was not measured",
        "recommendation before: 11 nodes,",
        "after: 16 nodes,",
        "campaign ended: stable",
    ] {
        assert!(err.contains(said), "{said:?} in {err}");
    }
    assert!(
        out.contains("measured node counts 1, 2, 4, 11, 16"),
        "{out}"
    );
}

#[test]
fn a_campaign_stopped_by_its_budget_resumes_to_the_same_end_without_repeating_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let whole = tempfile::tempdir().unwrap();
    let (rc, all, err, _) = campaign(whole.path(), "weather", &["--json"]);
    assert_eq!(rc, 0, "{err}");
    let all: Value = serde_json::from_str(&all).unwrap();
    // The start costs about 1.2 node-hours; the next step could not be paid for.
    let (rc, out, err, runs) = campaign(d, "weather", &["--json", "--node-hours", "1.5"]);
    assert_eq!(rc, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v["stopped"].as_str().unwrap().starts_with("budget"), "{v}");
    assert_eq!(v["measured_nodes"], serde_json::json!([1, 2, 4]));
    let (rc, out, err, _) = campaign(d, "weather", &["--json", "--resume"]);
    assert_eq!(rc, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["measured_nodes"], all["measured_nodes"]);
    assert_eq!(v["recommendation"], all["recommendation"]);
    let text = std::fs::read_to_string(&runs).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for l in text.lines() {
        assert!(seen.insert(l), "{l} twice");
    }
}

#[test]
fn without_recorded_runs_the_campaign_says_what_to_give() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (rc, _, err) = jouleplan(&[
        "profile",
        "--nodes",
        "auto",
        "--machine",
        &repo(MACHINE),
        "--measured-out",
        s(&d.join("r.csv")),
        "--",
        "true",
    ]);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("--replay RUNS.csv"), "{err}");
    assert!(!d.join("r.csv").exists());
}
