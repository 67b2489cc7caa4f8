//! The measurement campaign (`profile --nodes auto`, MODEL.md 6d) replayed on real recorded runs:
//! the nine SPEChpc 2021 codes on Ice Lake nodes (public data read from `../shared/fixtures`, measured by Afzal,
//! Hager and Wellein, PMBS'23, GPL-3.0). Each campaign must end by itself, say every step, cost
//! no more than the fixed sweeps, and lead `fit` and `plan` to a count that wastes little energy
//! against the counts that were measured. Launched (no `--replay`), it runs a real program
//! through a hostfile of fake hosts and a launcher that runs it here: time only (no RAPL
//! assumed), each chosen count measured once and the recommendation again, a failed count left
//! out, a SIGTERM resumed.
mod common;

use common::jouleplan;
use jouleplan::artefact::measured::read_lines;
use serde_json::Value;
use std::path::{Path, PathBuf};

const MACHINE: &str = "tests/data/machines/icelake-8360y.toml";

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
    let replay = common::multinode(&format!("{code}.csv"));
    let replay = replay.to_str().unwrap();
    let machine = repo(MACHINE);
    let mut args = vec![
        "profile",
        "--nodes",
        "auto",
        "--replay",
        replay,
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

/// `fit` on the campaign's runs, then `plan --nodes NODES --cores 72`: the recommended count.
fn recommended(d: &Path, runs: &Path, nodes: &str) -> u32 {
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
        nodes,
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
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
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
        // Exploring stops once the best measured count is settled, so no code costs more than
        // 45 (sph_exa 42).
        assert!(sum <= 45, "{code}: {sum} node-runs");
        costs.push(sum);
        if FULL.contains(&code) {
            let rec = v["recommendation"]["nodes"].as_u64().unwrap() as u32;
            let pick = v["model_pick"]["nodes"].as_u64().unwrap() as u32;
            // The recommendation is the best measured count; `fit` + `plan` reproduce it over
            // every count where the model picks it too, else on that count alone (as said).
            assert_eq!(
                v["measured_best"].as_u64(),
                Some(u64::from(rec)),
                "{code}: {v}"
            );
            let nodes = match rec == pick {
                true => "1-16".to_string(),
                false => {
                    assert!(v["model_differs"].as_str().is_some(), "{code}: {v}");
                    rec.to_string()
                }
            };
            assert_eq!(recommended(d, &runs, &nodes), rec, "{code}");
            let w = common::waste_at_72(code, rec);
            assert!(w <= 0.05, "{code}: {rec} nodes waste {:.1}%", 100.0 * w);
        }
    }
    let mean = costs.iter().sum::<u64>() as f64 / costs.len() as f64;
    assert!(mean <= 30.0, "mean cost {mean} node-runs: {costs:?}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
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
    // Read as fit reads them: each saved run is a recorded one at 72 cores, none taken twice.
    let recorded = read_lines(&common::multinode("sweep.csv")).unwrap();
    let written = read_lines(&runs).unwrap();
    let taken: u64 = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|st| st["runs"].as_u64().unwrap())
        .sum();
    assert_eq!(written.len() as u64, taken, "one saved row a run taken");
    for (i, w) in written.iter().enumerate() {
        assert!(
            recorded.iter().any(|r| r.row == w.row),
            "{:?} was not recorded",
            w.row
        );
        assert_eq!(w.row.cores, 72, "{:?}", w.row);
        assert!(!written[..i].contains(w), "{:?} twice", w.row);
    }
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn each_step_is_said_with_its_reason_cost_and_the_recommendation_before_and_after() {
    let dir = tempfile::tempdir().unwrap();
    let (rc, out, err, _) = campaign(dir.path(), "weather", &[]);
    assert_eq!(rc, 0, "{err}");
    for said in [
        "step 1: measured 1 node (1 run,",
        "start: the smallest recorded count at or above [1, 2, 4]",
        "the recommendation, 8 nodes, was not measured",
        "recommendation before: 8 nodes,",
        "after: 16 nodes,",
        "campaign ended: stable",
    ] {
        assert!(err.contains(said), "{said:?} in {err}");
    }
    assert!(
        out.contains("measured node counts 1, 2, 4, 8, 10, 16"),
        "{out}"
    );
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_campaign_says_one_node_in_the_singular_and_its_verdict_once() {
    // soma up to 2 nodes: 2 recommended, bracketed by the 1 node measured below.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let replay = common::multinode("soma.csv");
    let machine = repo(MACHINE);
    let (runs, prof) = (d.join("runs.csv"), d.join("soma.json"));
    let (rc, out, err) = jouleplan(&[
        "profile",
        "--nodes",
        "auto",
        "--replay",
        s(&replay),
        "--machine",
        &machine,
        "--max-nodes",
        "2",
        "--cores",
        "72",
        "--measured-out",
        s(&runs),
        "-o",
        s(&prof),
    ]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        out.contains("stopped: stable: the recommendation, 2 nodes, was measured 2 times, bracketed by 1 node measured below"),
        "{out}"
    );
    for said in [&out, &err] {
        assert!(!said.contains(" 1 nodes"), "{said}");
    }
    // The verdict in full on standard output; standard error closes the steps with its rule
    // and where to read it, not with the verdict again.
    assert!(
        err.contains("campaign ended: stable (why: `stopped:` in the summary on standard output)"),
        "{err}"
    );
    assert_eq!(
        format!("{out}{err}")
            .matches("was measured 2 times")
            .count(),
        1,
        "{out}{err}"
    );
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_step_names_the_fitted_models_pick_as_such_where_the_best_measured_count_is_another() {
    // soma: after 16 nodes the fitted model picks 8, measured once, while 4 measured best;
    // the campaign ends recommending 4, so the step measuring 8 again does not call 8 the
    // recommendation.
    let dir = tempfile::tempdir().unwrap();
    let (rc, out, err, _) = campaign(dir.path(), "soma", &[]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("the campaign recommends 4 nodes"), "{out}");
    assert!(
        err.contains("confirm: the fitted model's pick, 8 nodes, was measured once"),
        "{err}"
    );
    assert!(!err.contains("the recommendation, 8 nodes"), "{err}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_campaign_stopped_by_its_budget_resumes_to_the_same_end_without_repeating_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let whole = tempfile::tempdir().unwrap();
    let (rc, all, err, _) = campaign(whole.path(), "weather", &["--json"]);
    assert_eq!(rc, 0, "{err}");
    let all: Value = serde_json::from_str(&all).unwrap();
    // The start costs 4.60 node-hours; the next step could not be paid for.
    let (rc, out, err, runs) = campaign(d, "weather", &["--json", "--node-hours", "5"]);
    assert_eq!(rc, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v["stopped"].as_str().unwrap().starts_with("budget"), "{v}");
    assert_eq!(v["measured_nodes"], serde_json::json!([1, 2, 4]));
    let before = v["steps"].as_array().unwrap().len();
    let (rc, out, err, _) = campaign(d, "weather", &["--json", "--resume"]);
    assert_eq!(rc, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["measured_nodes"], all["measured_nodes"]);
    assert_eq!(v["recommendation"], all["recommendation"]);
    // The steps go on from the resumed campaign's, numbered as the whole campaign's were.
    assert_eq!(v["resumed_steps"], before, "{v}");
    let numbers = |v: &Value| -> Vec<u64> {
        let steps = v["steps"].as_array().unwrap();
        steps.iter().map(|s| s["step"].as_u64().unwrap()).collect()
    };
    let whole = numbers(&all);
    assert_eq!(numbers(&v), whole[before..].to_vec(), "{v}");
    let text = std::fs::read_to_string(&runs).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for l in text.lines() {
        assert!(seen.insert(l), "{l} twice");
    }
}

/// A program that takes 0.02 + 0.8 / n seconds on n nodes (the launcher says n), fails on
/// `fail` nodes, and while `d/block` exists waits on 4 nodes after touching `d/started`.
fn program(d: &Path, fail: u32) -> String {
    let d = s(d);
    format!(
        "if [ $JP_NODES = {fail} ]; then exit 1; fi; \
         if [ -e {d}/block ] && [ $JP_NODES = 4 ]; then touch {d}/started; exec sleep 30; fi; \
         exec sleep $(awk \"BEGIN{{print 0.02 + 0.8 / $JP_NODES}}\")"
    )
}

/// `profile --nodes auto` launching `program` through a hostfile of 8 fake hosts (the
/// launcher runs it here, telling it the point's node count).
fn launched(d: &Path, fail: u32, extra: &[&str]) -> std::process::Command {
    launching(d, &program(d, fail), extra)
}

/// `profile --nodes auto` launching the shell program `program` as [`launched`] does.
fn launching(d: &Path, program: &str, extra: &[&str]) -> std::process::Command {
    let m = common::this_node_times_8(d);
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_jouleplan"));
    c.current_dir(d).env_remove("SLURM_JOB_ID");
    c.args(["profile", "--nodes", "auto", "--cores", "1", "--json"]);
    c.args(["--hostfile", "hosts", "--launcher", "env JP_NODES={nodes}"]);
    c.args([
        "--machine",
        s(&m),
        "--measured-out",
        "runs.csv",
        "-o",
        "p.json",
    ]);
    c.args(["--grace", "1"]).args(extra);
    c.args(["--", "/bin/sh", "-c", program]);
    c.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    c
}

/// Exit code, JSON and stderr of a finished campaign.
fn ended(child: std::process::Child) -> (i32, Value, String) {
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), json, err)
}

/// The node counts of the rows of `--measured-out`, sorted.
fn rows(d: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string(d.join("runs.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("nodes,cores,freq_hz,gpus,time_s,energy_j,gpu_energy_j,ranks,energy_scope")
    );
    let mut v: Vec<u64> = lines
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    v.sort_unstable();
    v
}

/// The node counts of the successful runs in the campaign's record of them (beside `-o`),
/// sorted (a row a run).
fn profiled(d: &Path) -> Vec<u64> {
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("p.sweep.json")).unwrap()).unwrap();
    let mut v: Vec<u64> = doc["sweep"]["record"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["ok"] == true)
        .map(|r| r["nodes"].as_u64().unwrap_or(1))
        .collect();
    v.sort_unstable();
    v
}

/// The `measured_nodes` of a campaign's JSON.
fn measured_nodes(v: &Value) -> Vec<u64> {
    let nodes = v["measured_nodes"].as_array().unwrap();
    nodes.iter().map(|n| n.as_u64().unwrap()).collect()
}

#[test]
fn a_launched_campaign_measures_the_counts_it_chooses_and_ends_by_itself() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (rc, v, err) = ended(launched(d, 0, &[]).spawn().unwrap());
    assert_eq!(rc, 0, "{err}");
    assert!(err.contains("campaign ended: stable"), "{err}");
    assert!(v["stopped"].as_str().unwrap().starts_with("stable"), "{v}");
    let steps = v["steps"].as_array().unwrap();
    for st in steps {
        assert!(!st["why"].as_str().unwrap().is_empty(), "{st}");
        assert_eq!(st["runs"], 1, "{st}");
    }
    // Said once for the whole campaign: the backends; nothing is resumed in a fresh one.
    assert!(!err.contains("resuming:"), "{err}");
    let banner: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("measuring with "))
        .collect();
    assert_eq!(banner.len(), 1, "{err}");
    // One run counter for the whole campaign: 1, 2, ... across its steps.
    let numbered: Vec<usize> = err
        .lines()
        .filter_map(|l| l.strip_prefix("campaign run "))
        .map(|l| l.split(':').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(numbered, (1..=steps.len()).collect::<Vec<_>>(), "{err}");
    // The start, then at least one count it chose; each count measured once, in one row.
    let counts = measured_nodes(&v);
    assert!(
        [1, 2, 4].iter().all(|n| counts.contains(n)) && counts.len() > 3,
        "{v}"
    );
    let mut stepped: Vec<u64> = steps.iter().map(|s| s["nodes"].as_u64().unwrap()).collect();
    stepped.sort_unstable();
    assert_eq!(rows(d), stepped, "a row a run, each made once");
    stepped.dedup();
    assert_eq!(stepped, counts);
    assert_eq!(profiled(d), rows(d), "the record holds every run, once");
    // The recommendation was measured again before the end (a run on it is no outlier).
    let rec = v["recommendation"]["nodes"].as_u64().unwrap();
    assert!(
        rows(d).iter().filter(|&&n| n == rec).count() >= 2,
        "{rec} nodes measured once: {v}"
    );
    // The profile is the campaign's last fit, with its node law; plan on it recommends the
    // campaign's count.
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("p.json")).unwrap()).unwrap();
    assert!(
        doc["node_law"].is_object() && doc.get("sweep").is_none(),
        "{doc}"
    );
    assert!(v["recommendation"]["energy_j"].is_null(), "time only: {v}");
    assert_eq!(v["profile_file"], "p.json", "{v}");
    assert_eq!(v["record_file"], "p.sweep.json", "{v}");
    assert!(
        v["machine_file"].is_null(),
        "no power, no machine file: {v}"
    );
    assert_eq!(planned(d, &v), rec);
    // Each run after the start says the time left to the campaign's predicted end, and each
    // step that goes on what the last fit predicts after it.
    let after_start: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("campaign run "))
        .skip(3)
        .collect();
    assert!(!after_start.is_empty(), "{err}");
    for l in after_start {
        assert!(
            l.contains("; campaign eta ")
                || l.ends_with("; the campaign's last run, as the last fit predicts it"),
            "{l}"
        );
    }
    for st in &steps[2..steps.len() - 1] {
        assert!(st["ahead"]["steps"].is_u64(), "{st}");
    }
    // A campaign whose -o holds its runs' record, as campaigns kept it before, is told where
    // it belongs, and nothing is run.
    std::fs::rename(d.join("p.sweep.json"), d.join("p.json")).unwrap();
    let before = std::fs::read(d.join("p.json")).unwrap();
    let (rc, _, err) = ended(launched(d, 0, &["--resume"]).spawn().unwrap());
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("move p.json to p.sweep.json and resume"),
        "{err}"
    );
    assert_eq!(std::fs::read(d.join("p.json")).unwrap(), before);
}

/// `plan --profile p.json --machine m.toml --cores 1` in `d` as the campaign's end line (its
/// JSON `v`) says it: `--nodes 1-8`, or the recommended count where the fitted model picks
/// another. Its recommended count.
fn planned(d: &Path, v: &Value) -> u64 {
    let (rec, pick) = (&v["recommendation"]["nodes"], &v["model_pick"]["nodes"]);
    let nodes = match rec == pick {
        true => "1-8".to_string(),
        false => rec.to_string(),
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_jouleplan"))
        .current_dir(d)
        .args(["plan", "--machine", "m.toml", "--profile", "p.json"])
        .args(["--nodes", &nodes, "--cores", "1", "--json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["recommendation"]["nodes"].as_u64().unwrap()
}

#[test]
fn a_count_whose_runs_all_fail_is_said_left_out_and_never_invented() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (rc, v, err) = ended(launched(d, 2, &[]).spawn().unwrap());
    assert_eq!(rc, 4, "runs failed: {err}");
    assert!(
        err.contains("every run on 2 nodes failed") && err.contains("campaign ended:"),
        "{err}"
    );
    let counts = measured_nodes(&v);
    assert!(!counts.contains(&2) && counts.contains(&1), "{v}");
    let mut once = rows(d);
    once.dedup();
    assert_eq!(once, counts);
}

#[test]
fn a_launched_campaign_stopped_by_sigterm_keeps_its_runs_and_resumes_without_repeating_a_count() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("block"), "").unwrap();
    let child = launched(d, 0, &[]).spawn().unwrap();
    let t = std::time::Instant::now();
    while !d.join("started").exists() {
        assert!(
            t.elapsed().as_secs() < 60,
            "the run on 4 nodes never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // SAFETY: signals our own child process.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let (rc, v, err) = ended(child);
    assert_eq!(rc, 143, "{err}");
    assert!(
        err.contains("campaign ended: interrupted (SIGTERM"),
        "{err}"
    );
    assert!(v["stopped"].as_str().unwrap().contains("--resume"), "{v}");
    assert_eq!(rows(d), [1, 2], "the finished runs are in --measured-out");
    std::fs::remove_file(d.join("block")).unwrap();
    let (rc, v, err) = ended(launched(d, 0, &["--resume"]).spawn().unwrap());
    assert_eq!(rc, 0, "{err}");
    assert!(err.contains("campaign ended: stable"), "{err}");
    // The resume is said once, by the first step; later steps go on from its own runs.
    assert_eq!(err.matches("resuming: ").count(), 1, "{err}");
    // Its run counter goes on from the runs resumed.
    let first = err
        .lines()
        .find_map(|l| l.strip_prefix("campaign run "))
        .map(|l| l.split(':').next().unwrap().parse::<usize>().unwrap());
    assert!(first.is_some_and(|k| k > 1), "{err}");
    let counts = measured_nodes(&v);
    assert!([1, 2, 4].iter().all(|n| counts.contains(n)), "{v}");
    let stepped: Vec<u64> = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["nodes"].as_u64().unwrap())
        .collect();
    assert!(!stepped.contains(&1) && !stepped.contains(&2), "{v}");
    // Every run is a step's: none of the first campaign's was made again.
    let mut made: Vec<u64> = [1, 2].into_iter().chain(stepped).collect();
    made.sort_unstable();
    assert_eq!(rows(d), made, "a row a run, each made once");
    assert_eq!(profiled(d), made, "no run was made twice");
    let rec = v["recommendation"]["nodes"].as_u64().unwrap();
    assert_eq!(planned(d, &v), rec);
}

#[test]
fn a_launched_campaign_confirms_its_recommendation_and_resumes_an_interrupted_confirmation() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The second run on 8 nodes (the recommendation's confirmation) waits to be stopped. The
    // work divides well enough that 8 nodes stay the best count on a loaded machine.
    std::fs::write(d.join("block"), "").unwrap();
    let wait_on_second = format!(
        "if [ $JP_NODES = 8 ] && [ -e {0}/block ]; then \
           if [ -e {0}/ran8 ]; then touch {0}/started; exec sleep 30; fi; touch {0}/ran8; fi; \
         exec sleep $(awk \"BEGIN{{print 0.02 + 3.2 / $JP_NODES}}\")",
        s(d)
    );
    let child = launching(d, &wait_on_second, &[]).spawn().unwrap();
    let t = std::time::Instant::now();
    while !d.join("started").exists() {
        assert!(t.elapsed().as_secs() < 60, "8 nodes were never confirmed");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // SAFETY: signals our own child process.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let (rc, _, err) = ended(child);
    assert_eq!(rc, 143, "{err}");
    let before = rows(d);
    assert_eq!(before.iter().filter(|&&n| n == 8).count(), 1, "{before:?}");
    // The resumed campaign confirms 8 nodes with one more run, and nothing else is repeated.
    std::fs::remove_file(d.join("block")).unwrap();
    let mut resumed = launching(d, &wait_on_second, &["--resume"]);
    let (rc, v, err) = ended(resumed.spawn().unwrap());
    assert_eq!(rc, 0, "{err}");
    let first = &v["steps"][0];
    assert_eq!(first["nodes"], 8, "{v}");
    assert!(
        first["why"].as_str().unwrap().starts_with("confirm: "),
        "{v}"
    );
    let after = rows(d);
    assert!(after.iter().filter(|&&n| n == 8).count() >= 2, "{after:?}");
    let stepped = v["steps"].as_array().unwrap().len();
    assert_eq!(
        after.len(),
        before.len() + stepped,
        "a run a step: {after:?}"
    );
    assert_eq!(profiled(d), after, "the record holds every run once");
    assert_eq!(v["recommendation"]["nodes"], 8, "{v}");
    assert_eq!(planned(d, &v), 8);
}

/// `profile --nodes auto` launching a program that leaves `d/ran`, with `-o`, `--measured-out`
/// and further flags as given.
fn campaign_onto(d: &Path, out: &str, runs: &str, extra: &[&str]) -> (Option<i32>, String) {
    let m = common::this_node_times_8(d);
    let ran = format!("touch {}/ran", s(d));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_jouleplan"))
        .current_dir(d)
        .env_remove("SLURM_JOB_ID")
        .args(["profile", "--nodes", "auto", "--machine", s(&m)])
        .args(["--hostfile", "hosts", "--launcher", "env JP_NODES={nodes}"])
        .args(["--measured-out", runs, "-o", out])
        .args(extra)
        .args(["--", "/bin/sh", "-c", &ran])
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[cfg(unix)]
#[test]
fn a_campaign_never_writes_onto_its_inputs_or_through_a_link_and_says_so_before_running() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let machine = std::fs::read(common::this_node_times_8(d)).unwrap();
    // -o onto the machine file it reads, even with --resume.
    let (rc, err) = campaign_onto(d, "m.toml", "runs.csv", &["--cores", "1", "--resume"]);
    assert_eq!(rc, Some(2), "{err}");
    assert!(err.contains("not the input of --machine"), "{err}");
    assert_eq!(std::fs::read(d.join("m.toml")).unwrap(), machine);
    // -o and --measured-out one file: a usage error naming both, not another jouleplan.
    let (rc, err) = campaign_onto(d, "p.json", "p.json", &["--cores", "1"]);
    assert_eq!(rc, Some(2), "{err}");
    assert!(err.contains("not the output of --measured-out"), "{err}");
    // --resume onto a file that holds no campaign's profile.
    std::fs::write(d.join("notes.txt"), "mine\n").unwrap();
    let (rc, err) = campaign_onto(d, "notes.txt", "runs.csv", &["--cores", "1", "--resume"]);
    assert_eq!(rc, Some(2), "{err}");
    assert!(err.contains("holds no campaign's profile"), "{err}");
    assert_eq!(
        std::fs::read_to_string(d.join("notes.txt")).unwrap(),
        "mine\n"
    );
    // A campaign measures at the clock the GPU chooses.
    let (rc, err) = campaign_onto(
        d,
        "p.json",
        "runs.csv",
        &["--gpus", "1", "--gpu-clocks=595"],
    );
    assert_eq!(rc, Some(2), "{err}");
    assert!(
        err.contains("measures at the clock the GPU chooses"),
        "{err}"
    );
    // A link as an output is refused before the program runs, not after.
    std::os::unix::fs::symlink(d.join("nowhere.json"), d.join("link.json")).unwrap();
    let (rc, err) = campaign_onto(d, "link.json", "runs.csv", &["--cores", "1"]);
    assert_eq!(rc, Some(2), "{err}");
    assert!(err.contains("is a symbolic link"), "{err}");
    assert!(!d.join("ran").exists(), "the program ran before a refusal");
    assert!(!d.join("runs.csv").exists() && !d.join("link.sweep.json").exists());
    // A finished campaign resumed with other --cores is refused, its runs kept as they were.
    let (rc, err) = campaign_onto(d, "p.json", "runs.csv", &["--cores", "1"]);
    assert_eq!(rc, Some(0), "{err}");
    let runs = std::fs::read_to_string(d.join("runs.csv")).unwrap();
    let (rc, err) = campaign_onto(d, "p.json", "runs.csv", &["--cores", "2", "--resume"]);
    assert_eq!(rc, Some(2), "{err}");
    assert!(err.contains("holds runs on 1 core a node"), "{err}");
    assert_eq!(std::fs::read_to_string(d.join("runs.csv")).unwrap(), runs);
}

#[test]
fn a_launched_campaign_is_refused_before_anything_runs_where_it_cannot_place_its_counts() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (rc, _, err) = assert_cmd::Command::cargo_bin("jouleplan")
        .unwrap()
        .env_remove("SLURM_JOB_ID")
        .args(["profile", "--nodes", "auto", "--machine", &repo(MACHINE)])
        .args([
            "--measured-out",
            s(&d.join("r.csv")),
            "-o",
            s(&d.join("p.json")),
        ])
        .args(["--cores", "1", "--", "true"])
        .output()
        .map(|o| {
            let e = String::from_utf8_lossy(&o.stderr).into_owned();
            (o.status.code(), o.stdout, e)
        })
        .unwrap();
    assert_eq!(rc, Some(2), "{err}");
    assert!(
        err.contains("--nodes auto measures up to 64 nodes") && err.contains("--hostfile"),
        "{err}"
    );
    assert!(!d.join("r.csv").exists() && !d.join("p.json").exists());
    // A profile already there is continued only with --resume.
    std::fs::write(d.join("p.json"), "{}").unwrap();
    let out = launched(d, 0, &[]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("add --resume"), "{err}");
    assert!(!d.join("runs.csv").exists());
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn campaign_flags_are_checked_before_anything_is_measured() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let refused = |extra: &[&str], says: &str| {
        let (rc, _, err, runs) = campaign(d, "weather", extra);
        assert_eq!(rc, 2, "{extra:?}: {err}");
        assert!(err.contains(says), "{extra:?}: {err}");
        assert!(!runs.exists(), "{extra:?}: nothing measured");
    };
    // A bare 5 would be 500%.
    refused(&["--tolerance", "5"], "--tolerance");
    // The machine file has 64 nodes: plan would refuse 100 after the start was measured.
    refused(&["--max-nodes", "100"], "--max-nodes");
    refused(&["--max-nodes", "0"], "--max-nodes");
    // A replay takes the recording's CPU runs at the clock they were made at.
    refused(&["--gpus", "1"], "no --gpus with --replay");
    refused(
        &["--gpu-clocks=595"],
        "measures at the clock the GPU chooses",
    );
    // A campaign flag without --nodes auto would launch the program instead of replaying.
    let (rc, _, err) = jouleplan(&[
        "profile",
        "--replay",
        common::multinode("weather.csv").to_str().unwrap(),
        "-o",
        s(&d.join("x.json")),
        "--",
        "true",
    ]);
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("--replay") && err.contains("--nodes auto"),
        "{err}"
    );
    assert!(!d.join("x.json").exists());
    // A finished campaign is not replaced without --resume.
    let (rc, _, err, runs) = campaign(d, "weather", &[]);
    assert_eq!(rc, 0, "{err}");
    let before = std::fs::read_to_string(&runs).unwrap();
    let (rc, _, err, _) = campaign(d, "weather", &[]);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("add --resume"), "{err}");
    assert_eq!(std::fs::read_to_string(&runs).unwrap(), before);
    // Resumed when finished, it says the same recommendation again.
    let (rc, out, err, _) = campaign(d, "weather", &["--resume", "--json"]);
    assert_eq!(rc, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["recommendation"]["nodes"], 16, "{v}");
    assert_eq!(v["recommendation"]["measured"], true, "{v}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_recommended_layout_that_was_never_run_is_not_called_measured() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // LULESH at 120 elements a side, replayed in any layout: its one-node run used 1 core.
    let runs = d.join("r.csv");
    let (rc, out, err) = jouleplan(&[
        "profile",
        "--nodes",
        "auto",
        "--replay",
        common::multinode("lulesh-120.csv").to_str().unwrap(),
        "--machine",
        &repo(MACHINE),
        "--max-nodes",
        "16",
        "--measured-out",
        s(&runs),
        "-o",
        s(&d.join("p.json")),
        "--json",
    ]);
    assert_eq!(rc, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let rec = &v["recommendation"];
    let (n, c) = (
        rec["nodes"].as_u64().unwrap(),
        rec["cores"].as_u64().unwrap(),
    );
    let ran = std::fs::read_to_string(&runs)
        .unwrap()
        .lines()
        .any(|l| l.starts_with(&format!("{n},{c},")));
    assert_eq!(rec["measured"].as_bool().unwrap(), ran, "{rec}");
    assert_eq!(rec["measured_time_s"].is_null(), !ran, "{rec}");
    if !ran {
        assert!(
            v["stopped"].as_str().unwrap().contains("give --cores"),
            "{v}"
        );
    }
}

/// `weather`'s recording rewritten by `edit` (its lines, header first) into `d/name`.
fn recording_like(d: &Path, name: &str, edit: impl Fn(Vec<String>) -> Vec<String>) -> PathBuf {
    let text = std::fs::read_to_string(common::multinode("weather.csv")).unwrap();
    let lines = edit(text.lines().map(String::from).collect());
    let p = d.join(name);
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    p
}

/// A replay of `recording` with `extra` flags (on the Ice Lake machine file unless they name
/// one), in `d` as the working folder: (exit code, JSON, stderr).
fn replayed(d: &Path, recording: &Path, extra: &[&str]) -> (i32, Value, String) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_jouleplan"));
    cmd.current_dir(d)
        .args(["profile", "--nodes", "auto", "--replay"])
        .arg(recording)
        .args(["--max-nodes", "16", "--json"])
        .args(extra);
    if !extra.iter().any(|a| a.starts_with("--machine")) {
        cmd.args(["--machine", &repo(MACHINE)]);
    }
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), json, err)
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_campaign_takes_paths_and_a_program_name_that_begin_with_a_dash() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rec = common::multinode("weather.csv");
    std::fs::copy(repo(MACHINE), d.join("-m.toml")).unwrap();
    let (rc, v, err) = replayed(
        d,
        &rec,
        &[
            "--cores",
            "72",
            "--machine=-m.toml",
            "--measured-out=-r.csv",
            "--output=-p.json",
            "--program=-x",
        ],
    );
    assert_eq!(rc, 0, "{err}");
    assert!(v["stopped"].as_str().unwrap().starts_with("stable"), "{v}");
    assert_eq!(v["measured_nodes"], serde_json::json!([1, 2, 4, 8, 10, 16]));
    assert_eq!(read_lines(&d.join("-r.csv")).unwrap().len(), 6);
    let profile = std::fs::read_to_string(d.join("-p.json")).unwrap();
    assert!(profile.contains("\"program\": \"-x\""), "{profile}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_campaign_takes_paths_that_are_not_utf8() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let runs = std::ffi::OsStr::from_bytes(b"runs-\xff.csv");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_jouleplan"))
        .current_dir(d)
        .args(["profile", "--nodes", "auto", "--replay"])
        .arg(common::multinode("weather.csv"))
        .args([
            "--machine",
            &repo(MACHINE),
            "--max-nodes",
            "16",
            "--cores",
            "72",
        ])
        .arg("--measured-out")
        .arg(runs)
        .args(["-o", "p.json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(read_lines(&d.join(runs)).unwrap().len(), 6);
    assert!(d.join("p.json").exists());
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_recording_of_one_node_count_stops_saying_what_it_has_and_what_to_measure() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let one = recording_like(d, "one.csv", |l| {
        let mut v = vec![l[0].clone()];
        v.extend(l.into_iter().filter(|x| x.starts_with("4,72,")));
        v
    });
    let (rc, v, err) = replayed(d, &one, &["--measured-out", "r.csv", "-o", "p.json"]);
    assert_eq!(rc, 0, "{err}");
    let stopped = v["stopped"].as_str().unwrap();
    assert!(
        stopped.contains("only one node count") && stopped.contains("measure another count"),
        "{v}"
    );
    assert_eq!(v["measured_nodes"], serde_json::json!([4]));
    assert_eq!(
        read_lines(&d.join("r.csv")).unwrap().len(),
        1,
        "the run is kept"
    );
    assert!(!err.contains("--machine-out"), "{err}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn energy_on_one_run_only_is_planned_by_time_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Energy blanked on every run but the first: too few to fit power.
    let rec = recording_like(d, "e.csv", |l| {
        let mut v = vec![l[0].clone(), l[1].clone()];
        for x in &l[2..] {
            let mut c: Vec<&str> = x.split(',').collect();
            c[5] = "";
            c[7] = "";
            v.push(c.join(","));
        }
        v
    });
    let (rc, v, err) = replayed(d, &rec, &["--measured-out", "r.csv", "-o", "p.json"]);
    assert_eq!(rc, 0, "{err}");
    assert!(err.contains("power not fitted"), "{err}");
    assert!(v["recommendation"]["energy_j"].is_null(), "time only: {v}");
    assert!(!err.contains("--machine-out M.toml"), "{err}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn cores_given_as_a_range_plan_the_cores_the_runs_measured() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rec = common::multinode("weather.csv");
    let (rc, v, err) = replayed(
        d,
        &rec,
        &["--cores", "1-72", "--measured-out", "r.csv", "-o", "p.json"],
    );
    assert_eq!(rc, 0, "{err}");
    assert!(
        err.contains("planned at the cores a node measured (54-72)"),
        "{err}"
    );
    assert!(v["recommendation"]["nodes"].as_u64().is_some(), "{v}");
    assert!(
        !err.contains("profile.json") && !err.contains("internal"),
        "{err}"
    );
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_replay_reads_quoted_multi_line_cells_blank_lines_and_quoted_headers_as_fit_does() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let plain = common::multinode("weather.csv");
    let (rc, want, err) = replayed(
        d,
        &plain,
        &["--cores", "72", "--measured-out", "a.csv", "-o", "a.json"],
    );
    assert_eq!(rc, 0, "{err}");
    let odd = recording_like(d, "odd.csv", |l| {
        let quoted: Vec<String> = l[0].split(',').map(|h| format!("\"{h}\"")).collect();
        let mut v = vec![quoted.join(",") + ",\"note\"", String::new()];
        for (i, x) in l[1..].iter().enumerate() {
            v.push(format!("{x},\"run {i}\nsecond line, with a comma\""));
            v.push(String::new());
        }
        v
    });
    let (rc, got, err) = replayed(
        d,
        &odd,
        &["--cores", "72", "--measured-out", "b.csv", "-o", "b.json"],
    );
    assert_eq!(rc, 0, "{err}");
    for key in ["measured_nodes", "recommendation", "node_runs", "stopped"] {
        assert_eq!(got[key], want[key], "{key}");
    }
    // fit on the campaign's runs sees every run the campaign took, none of them blank.
    let (a, b) = (
        read_lines(&d.join("a.csv")).unwrap(),
        read_lines(&d.join("b.csv")).unwrap(),
    );
    let rows = |v: &[jouleplan::artefact::measured::MeasuredLine]| -> Vec<_> {
        v.iter().map(|l| l.row.clone()).collect()
    };
    assert_eq!(rows(&a), rows(&b));
    assert!(
        !std::fs::read_to_string(d.join("b.csv"))
            .unwrap()
            .contains("\n\n")
    );
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_resumed_replay_refuses_changed_flags_and_another_recording_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let weather = common::multinode("weather.csv");
    let lbm = common::multinode("lbm.csv");
    let outputs = ["--measured-out", "r.csv", "-o", "p.json"];
    let (rc, v, err) = replayed(
        d,
        &weather,
        &[&["--cores", "72", "--node-hours", "5"][..], &outputs[..]].concat(),
    );
    assert_eq!(rc, 0, "{err}");
    assert!(v["stopped"].as_str().unwrap().starts_with("budget"), "{v}");
    let saved = std::fs::read(d.join("r.csv")).unwrap();
    // Without --cores, the second saved run (2 nodes, line 3) is not the recording's next on 2
    // nodes; lbm has no run on 1 node, the first saved (line 2).
    for (rec, flags, line) in [(&weather, &[][..], 3), (&lbm, &["--cores", "72"][..], 2)] {
        let (rc, _, err) = replayed(d, rec, &[flags, &outputs[..], &["--resume"][..]].concat());
        assert_eq!(rc, 2, "{err}");
        let says = format!("r.csv: line {line}, a run on");
        assert!(
            err.contains(&says) && err.contains("resume with the recording"),
            "{err}"
        );
        assert_eq!(
            std::fs::read(d.join("r.csv")).unwrap(),
            saved,
            "nothing replaced"
        );
    }
    let (rc, v, err) = replayed(
        d,
        &weather,
        &[&["--cores", "72", "--resume"][..], &outputs[..]].concat(),
    );
    assert_eq!(rc, 0, "{err}");
    assert_eq!(v["measured_nodes"], serde_json::json!([1, 2, 4, 8, 10, 16]));
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn runs_the_fit_refuses_end_the_campaign_with_the_runs_kept_and_the_reason_said() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 80 cores a node on a machine of 72: the fit refuses the runs, naming the line.
    let rec = recording_like(d, "wide.csv", |l| {
        l.into_iter()
            .map(|x| x.replacen(",72,", ",80,", 1))
            .collect()
    });
    let (rc, v, err) = replayed(
        d,
        &rec,
        &["--cores", "80", "--measured-out", "r.csv", "-o", "p.json"],
    );
    assert_eq!(rc, 0, "{err}");
    let stopped = v["stopped"].as_str().unwrap();
    assert!(
        stopped.contains("the fit of the runs so far was refused") && stopped.contains("r.csv"),
        "{v}"
    );
    assert_eq!(
        read_lines(&d.join("r.csv")).unwrap().len(),
        3,
        "the start is kept"
    );
    assert!(err.contains("found: the fit"), "{err}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn runs_without_energy_against_a_machine_file_with_power_are_said_once_the_start_is_fitted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The [power] fitted from weather's measured energy, then its runs without energy.
    let m = d.join("m.toml");
    let (rc, _, err) = jouleplan(&[
        "fit",
        "--measured",
        s(&common::multinode("weather.csv")),
        "--machine",
        &repo(MACHINE),
        "--profile-out",
        s(&d.join("fitted.json")),
        "--machine-out",
        s(&m),
    ]);
    assert_eq!(rc, 0, "{err}");
    let rec = recording_like(d, "ne.csv", |l| {
        let mut v = vec![l[0].clone()];
        for x in &l[1..] {
            let mut c: Vec<&str> = x.split(',').collect();
            c[5] = "";
            c[7] = "";
            v.push(c.join(","));
        }
        v
    });
    let extra = [
        "--machine",
        s(&m),
        "--measured-out",
        "r.csv",
        "-o",
        "p.json",
    ];
    let (rc, v, err) = replayed(d, &rec, &extra);
    assert_eq!(rc, 0, "{err}");
    let said = "the runs measured no energy: every energy the campaign ranks by";
    assert_eq!(err.matches(said).count(), 1, "{err}");
    let steps = v["steps"].as_array().unwrap();
    let first_fit = steps.iter().position(|st| !st["after"].is_null()).unwrap();
    assert!(
        steps[first_fit]["findings"].to_string().contains(said),
        "said on the step the start is fitted: {v}"
    );
    // Its end says the energies are the file's, not that plans rank by time.
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_jouleplan"));
    let out = cmd
        .current_dir(d)
        .args([
            "profile",
            "--nodes",
            "auto",
            "--replay",
            s(&rec),
            "--max-nodes",
            "16",
        ])
        .args([
            "--machine",
            s(&m),
            "--measured-out",
            "r2.csv",
            "-o",
            "p2.json",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "no energy was measured, so plans predict energy from the machine file's [power]"
        ),
        "{text}"
    );
    assert!(!text.contains("rank by time and node-hours"), "{text}");
}

#[test]
fn a_machine_file_with_more_cores_than_the_process_may_use_is_said_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // This node's machine file, its cores a node raised past those this process may use (as
    // a batch step given fewer CPUs than the node has sees it).
    let m = common::this_node_times_8(d);
    let text = std::fs::read_to_string(&m).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("cores_per_node = "))
        .unwrap()
        .to_string();
    let have: u32 = line["cores_per_node = ".len()..].parse().unwrap();
    let more = 1024 * have;
    std::fs::write(&m, text.replace(&line, &format!("cores_per_node = {more}"))).unwrap();
    // Refused by its flags after the note: nothing is measured.
    let (rc, v, err) = ended(launched(d, 0, &["--max-nodes", "99"]).spawn().unwrap());
    assert_ne!(rc, 0, "{v}");
    let said = format!(" of the {more} cores a node of ");
    assert!(err.contains(&said), "{err}");
    assert!(err.contains("give the step every core"), "{err}");
    assert!(!d.join("runs.csv").exists(), "{err}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_replay_writes_the_fitted_machine_beside_its_profile_and_never_over_the_machine_it_reads() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rec = common::multinode("weather.csv");
    let files = ["--cores", "72", "--measured-out", "r.csv", "-o", "w.json"];
    let (rc, v, err) = replayed(d, &rec, &files);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(v["machine_file"], "w.machine.toml", "{v}");
    let fitted = std::fs::read_to_string(d.join("w.machine.toml")).unwrap();
    let profile = std::fs::read_to_string(d.join("w.json")).unwrap();
    let id = fitted
        .lines()
        .find_map(|l| l.strip_prefix("fit_id = "))
        .unwrap()
        .trim_matches('"');
    assert!(
        profile.contains(&format!("\"fit_id\": \"{id}\"")),
        "{profile}"
    );
    // Again, reading the fitted machine file it wrote: refused, nothing replaced.
    let again = [&files[..], &["--resume", "--machine", "w.machine.toml"]].concat();
    let (rc, _, err) = replayed(d, &rec, &again);
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("--machine w.machine.toml") && err.contains("another -o"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("w.machine.toml")).unwrap(),
        fitted
    );
    // Without --resume the campaign's files are not replaced.
    std::fs::remove_file(d.join("w.json")).unwrap();
    std::fs::remove_file(d.join("r.csv")).unwrap();
    let (rc, _, err) = replayed(d, &rec, &files);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("w.machine.toml exists: add --resume"), "{err}");
}

/// `--node-hours` is a bound: a run is stopped at its share of what is left.
const BUDGET_STOP: &str = "budget reached: the run on ";

#[test]
fn a_launched_run_that_would_overspend_is_stopped_at_its_limit_and_the_budget_is_never_passed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 1 and 2 nodes take about 0.8 node-seconds each; 4 nodes would take 30 s (120
    // node-seconds): of the 10.8 node-seconds given, about 9 are left, 2.1 s on 4 nodes.
    std::fs::write(d.join("block"), "").unwrap();
    let budget = 0.003;
    let h = budget.to_string();
    let (rc, v, err) = ended(launched(d, 0, &["--node-hours", &h]).spawn().unwrap());
    assert_eq!(rc, 0, "a budget stop is no failed run: {err}");
    assert!(
        d.join("started").exists(),
        "the run on 4 nodes began: {err}"
    );
    let spent = v["node_hours"].as_f64().unwrap();
    assert!(spent <= budget, "{spent} node-hours spent of {budget}: {v}");
    let stopped = v["stopped"].as_str().unwrap();
    assert!(
        stopped.starts_with(
            "budget reached: the run on 4 nodes (p.sweep.json: run 3) was stopped at "
        ) && stopped.contains("; it gives no time;")
            && stopped.contains("of the 10.8 node-seconds budget")
            && stopped.contains("the recommendation rests on the runs measured before it"),
        "{stopped}"
    );
    assert!(err.contains("campaign ended: budget reached"), "{err}");
    assert!(!err.contains("failed:"), "{err}");
    let stop = &v["budget_stop"];
    assert_eq!(stop["nodes"], 4, "{v}");
    let (ran, limit) = (
        stop["ran_s"].as_f64().unwrap(),
        stop["limit_s"].as_f64().unwrap(),
    );
    assert!(ran >= limit && limit > 0.5 && limit < 10.8 / 4.0, "{stop}");
    let unmeasured = v["unmeasured_node_hours"].as_f64().unwrap();
    assert!((unmeasured - 4.0 * ran / 3600.0).abs() < 1e-9, "{v}");
    // Nothing measured is lost, and the stopped run gives no time.
    assert_eq!(rows(d), vec![1, 2]);
    assert_eq!(measured_nodes(&v), vec![1, 2]);
    assert_eq!(v["recommendation"]["measured"], true, "{v}");
    // Resumed, the budget is spent: it says so, and nothing more is run.
    let record = std::fs::read(d.join("p.sweep.json")).unwrap();
    let (rc, again, err) = ended(
        launched(d, 0, &["--node-hours", &h, "--resume"])
            .spawn()
            .unwrap(),
    );
    assert_eq!(rc, 0, "{err}");
    let stopped = again["stopped"].as_str().unwrap();
    assert!(
        stopped.starts_with(BUDGET_STOP)
            && stopped.ends_with(
                "resumed after the budget was reached: it is spent, and nothing more is measured"
            ),
        "{stopped}"
    );
    assert_eq!(again["steps"], serde_json::json!([]), "{again}");
    assert_eq!(again["node_hours"], v["node_hours"], "{again}");
    assert_eq!(again["recommendation"], v["recommendation"], "{again}");
    assert_eq!(std::fs::read(d.join("p.sweep.json")).unwrap(), record);
    // Without --node-hours too: the record holds the stopped run.
    let (rc, again, err) = ended(launched(d, 0, &["--resume"]).spawn().unwrap());
    assert_eq!(rc, 0, "{err}");
    let stopped = again["stopped"].as_str().unwrap();
    assert!(
        stopped.starts_with(BUDGET_STOP) && !stopped.contains("budget;"),
        "{stopped}"
    );
    assert_eq!(std::fs::read(d.join("p.sweep.json")).unwrap(), record);
}

#[test]
fn a_launched_campaign_with_a_budget_refuses_warm_up_runs_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (rc, _, err) = ended(
        launched(d, 0, &["--node-hours", "1", "--warmup", "1"])
            .spawn()
            .unwrap(),
    );
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("--warmup") && err.contains("escape the budget"),
        "{err}"
    );
    assert!(!d.join("p.sweep.json").exists() && !d.join("runs.csv").exists());
}

/// A recording of 1, 2, 4 and 8 nodes whose 8-node run took 400 s where the fit predicts
/// about 160 s.
fn slow_at_8(d: &Path) -> PathBuf {
    let p = d.join("rec.csv");
    std::fs::write(
        &p,
        "nodes,cores,freq_hz,gpus,time_s,energy_j\n1,72,2.4e9,0,1000,400000\n\
         2,72,2.4e9,0,520,416000\n4,72,2.4e9,0,280,448000\n8,72,2.4e9,0,400,1280000\n",
    )
    .unwrap();
    p
}

#[test]
fn a_replayed_run_longer_than_its_limit_is_taken_as_stopped_there_and_the_budget_holds() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rec = slow_at_8(d);
    let args = [
        "--measured-out",
        "runs.csv",
        "-o",
        "p.json",
        "--node-hours",
        "1.5",
    ];
    let (rc, v, err) = replayed(d, &rec, &args);
    assert_eq!(rc, 0, "{err}");
    // The start spends 0.878 node-hours; 8 nodes are predicted to cost 0.36 of the 0.62
    // left, but the recorded run (400 s, 0.89 node-hours) passes its limit of 280 s.
    let spent = v["node_hours"].as_f64().unwrap();
    assert!(spent <= 1.5 && spent > 1.499, "{spent}");
    let stop = &v["budget_stop"];
    assert_eq!(stop["nodes"], 8, "{v}");
    let from = stop["from"].as_str().unwrap();
    assert!(from.ends_with("rec.csv:5"), "{v}");
    assert_eq!(
        (stop["ran_s"].as_f64(), stop["limit_s"].as_f64()),
        (Some(279.999), Some(279.999))
    );
    let stopped = v["stopped"].as_str().unwrap();
    assert!(
        stopped.starts_with(&format!(
            "budget reached: the run on 8 nodes ({from}) was stopped at 280.0 s (its limit, \
             280.0 s, is its share of the 0.62 node-hours left when it began over the runs \
             still to make in its step); it gives no time;"
        )) && stopped.contains("1.50 node-hours spent of the 1.50 node-hours budget"),
        "{stopped}"
    );
    // The stopped run gives no time: the recommendation is the best count measured before.
    assert_eq!(measured_nodes(&v), vec![1, 2, 4]);
    assert_eq!(v["recommendation"]["nodes"], 4, "{v}");
    let runs = std::fs::read_to_string(d.join("runs.csv")).unwrap();
    assert_eq!(runs.lines().count(), 4, "{runs}");
    // Resumed with the same budget, a replay takes its runs again and comes to the same stop.
    let (rc, again, err) = replayed(d, &rec, &[&args[..], &["--resume"]].concat());
    assert_eq!(rc, 0, "{err}");
    assert_eq!(again["budget_stop"], v["budget_stop"], "{again}");
    assert_eq!(again["node_hours"], v["node_hours"], "{again}");
    assert_eq!(std::fs::read_to_string(d.join("runs.csv")).unwrap(), runs);
    // Without a budget, the same recording measures 8 nodes.
    let dir = tempfile::tempdir().unwrap();
    let (rc, free, err) = replayed(dir.path(), &rec, &args[..4]);
    assert_eq!(rc, 0, "{err}");
    assert!(measured_nodes(&free).contains(&8), "{free}");
    assert!(free.get("budget_stop").is_none(), "{free}");
}
