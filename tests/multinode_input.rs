//! The multi-node paths end safely on hostile input: the runs folder is never a planted link
//! nor the output, Slurm's no-value energies and impossible powers are no reading, the
//! measured CSV names the column at fault, and a hand-edited node law that takes away more
//! time than there is, or whose weights do not add up, is refused.

mod common;

use assert_cmd::Command;
use common::{fit_on_1_2_4_8, jouleplan};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

use common::ICELAKE as MACHINE;

/// `profile` in `dir` outside Slurm.
fn profile(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::cargo_bin("jouleplan")
        .unwrap()
        .current_dir(dir)
        .env_remove("SLURM_JOB_ID")
        .arg("profile")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `profile` of `/bin/true` on one node and on two hosts of `hosts`, into `output`.
fn profile_args(output: &str) -> Vec<&str> {
    vec![
        "--nodes",
        "1,2",
        "--cores",
        "1",
        "--hostfile",
        "hosts",
        "--launcher",
        "sh -c 'exec \"$@\"' {hostfile}",
        "--output",
        output,
        "--",
        "/bin/true",
    ]
}

#[test]
fn a_link_planted_at_the_runs_folder_is_refused_and_nothing_is_written_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("hosts"), "node01\nnode02\n").unwrap();
    let victim = d.join("victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("keep.txt"), "mine").unwrap();
    std::os::unix::fs::symlink(&victim, d.join("p.json.runs")).unwrap();
    let (ok, out, err) = profile(d, &profile_args("p.json"));
    assert!(!ok, "{out}{err}");
    assert!(err.contains("symbolic link"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&victim).unwrap().collect();
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(
        std::fs::read_to_string(victim.join("keep.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn an_output_named_like_a_runs_folder_is_not_its_own_runs_folder() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("hosts"), "node01\nnode02\n").unwrap();
    let (ok, out, err) = profile(d, &profile_args("p.runs"));
    assert!(ok, "{out}{err}");
    assert!(d.join("p.runs").is_file());
    assert!(
        !d.join("p.runs.runs").exists(),
        "the working folder is cleaned up"
    );
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn slurm_no_value_energies_and_impossible_powers_are_no_reading() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Fit a profile on the real hpgmgfv runs, then validate invented accounting rows whose
    // energies are Slurm's markers or no power a node draws (the times are the real runs').
    let (prof, mach) = fit_on_1_2_4_8(d, "hpgmgfv");
    let sacct = d.join("sacct.txt");
    std::fs::write(
        &sacct,
        "JobID|State|NNodes|NCPUS|NTasks|Elapsed|ConsumedEnergyRaw|ReqCPUFreq\n\
         9.0|COMPLETED|3|216|216|00:18:07|18446744073709551614|2400000\n\
         9.1|COMPLETED|3|216|216|00:18:07|18446744073709551615|2400000\n\
         9.2|COMPLETED|3|216|216|00:18:07|1e400|2400000\n\
         9.3|COMPLETED|3|216|216|00:18:07|4294967295|2400000\n\
         9.4|COMPLETED|3|216|216|00:18:07|5|2400000\n",
    )
    .unwrap();
    let (rc, out, err) = jouleplan(&[
        "validate",
        "--machine",
        s(&mach),
        "--profile",
        s(&prof),
        "--sacct",
        s(&sacct),
        "--energy-scope",
        "cpu",
        "--json",
    ]);
    assert_eq!(rc, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let b = &v["validations"][0];
    for p in b["points"].as_array().unwrap() {
        assert!(p["energy_j"].is_null(), "{p}");
        assert!(p["time_error"].as_f64().unwrap().abs() < 0.2, "{p}");
    }
    assert_eq!(b["energy"]["points"], 0, "{b}");
    assert!(!out.contains("inf") && !out.contains("NaN"), "{out}");
    // A governor's name on a machine of one frequency is that frequency.
    std::fs::write(
        &sacct,
        "JobID|State|NNodes|NCPUS|NTasks|Elapsed|ConsumedEnergyRaw|ReqCPUFreq\n\
         9.0|COMPLETED|3|216|216|00:18:07||Performance\n",
    )
    .unwrap();
    let (rc, _, err) = jouleplan(&[
        "validate",
        "--machine",
        s(&mach),
        "--profile",
        s(&prof),
        "--sacct",
        s(&sacct),
    ]);
    assert_eq!(rc, 0, "{err}");
}

fn csv_refusal(d: &Path, text: &str) -> String {
    let csv = d.join("runs.csv");
    std::fs::write(&csv, text).unwrap();
    let (rc, out, err) = jouleplan(&[
        "fit",
        "--measured",
        s(&csv),
        "--machine",
        s(&repo(MACHINE)),
        "--profile-out",
        s(&d.join("p.json")),
    ]);
    assert_eq!(rc, 2, "{out}{err}");
    assert!(!d.join("p.json").exists());
    err
}

#[test]
fn the_measured_csv_names_the_column_at_fault() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let err = csv_refusal(d, "nodes,cores,gpus,time_s\n1,72,0,100\n");
    assert!(err.contains("`freq_hz` is missing"), "{err}");
    let err = csv_refusal(d, "nodes,cores,freq_hz,gpus,time\n1,72,2.4e9,0,100\n");
    assert!(
        err.contains("is `time` meant to be `time_s`? rename it), got"),
        "{err}"
    );
    let err = csv_refusal(
        d,
        "nodes,cores,freq_hz,gpus,time_s,time_s\n1,72,2.4e9,0,100,100\n",
    );
    assert!(err.contains("`time_s` is there twice"), "{err}");
    let err = csv_refusal(
        d,
        "nodes,cores,freq_hz,gpus,time_s,ranks\n1,0,2.4e9,0,100,1\n",
    );
    assert!(
        err.contains("column cores") && err.contains("from 1"),
        "{err}"
    );
    let err = csv_refusal(
        d,
        "nodes,cores,freq_hz,gpus,time_s,energy_j\n1,72,2.4e9,0,100,1e-320\n",
    );
    assert!(err.contains("column energy_j"), "{err}");
    let err = csv_refusal(d, "nodes,cores,freq_hz,gpus,time_s\n1,72,2.4e9,0,1e-300\n");
    assert!(
        err.contains("column time_s") && err.contains("microsecond"),
        "{err}"
    );
    // Energies in mJ: 40 MW a node over a 100 s run is no node's power.
    let err = csv_refusal(
        d,
        "nodes,cores,freq_hz,gpus,time_s,energy_j\n1,72,2.4e9,0,100,4e9\n",
    );
    assert!(
        err.contains("column energy_j") && err.contains("W a node"),
        "{err}"
    );
    // The scope's case does not matter.
    let csv = d.join("ok.csv");
    std::fs::write(
        &csv,
        "nodes,cores,freq_hz,gpus,time_s,energy_j,energy_scope\n1,72,2.4e9,0,100,50000,CPU\n",
    )
    .unwrap();
    let (rc, _, err) = jouleplan(&[
        "fit",
        "--measured",
        s(&csv),
        "--machine",
        s(&repo(MACHINE)),
        "--profile-out",
        s(&d.join("ok.json")),
    ]);
    assert!(!err.contains("energy_scope"), "{rc} {err}");
}

/// A profile fitted on weather's runs at 1, 2, 4 and 8 nodes, edited by hand: `plan` of it on
/// 1-16 nodes of 72 cores, its exit code and standard error.
fn plan_edited(d: &Path, f: &dyn Fn(&mut Value)) -> (i32, String) {
    let (prof, mach) = fit_on_1_2_4_8(d, "weather");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&prof).unwrap()).unwrap();
    f(&mut v);
    let p = d.join("edited.json");
    std::fs::write(&p, serde_json::to_string(&v).unwrap()).unwrap();
    let (rc, _, err) = jouleplan(&[
        "plan",
        "--machine",
        s(&mach),
        "--profile",
        s(&p),
        "--nodes",
        "1-16",
        "--cores",
        "72",
    ]);
    (rc, err)
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_node_law_whose_measured_counts_are_empty_repeated_or_out_of_order_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Read as they were, [] made plan advise measuring 2, 4 and 8 nodes (all measured), and an
    // anchor of 3 moved every prediction's X(n) (2m00s became 58 s at 8 nodes).
    for (counts, anchor, key) in [
        (serde_json::json!([]), 1, "node_law.measured_nodes"),
        (
            serde_json::json!([1, 2, 2, 8]),
            1,
            "node_law.measured_nodes",
        ),
        (
            serde_json::json!([8, 4, 2, 1]),
            1,
            "node_law.measured_nodes",
        ),
        (
            serde_json::json!([1, 2, 4, 8]),
            3,
            "node_law.combined.anchor_nodes",
        ),
    ] {
        let (rc, err) = plan_edited(d, &|v| {
            v["node_law"]["measured_nodes"] = counts.clone();
            v["node_law"]["combined"]["anchor_nodes"] = anchor.into();
        });
        assert_eq!(rc, 2, "{counts} at {anchor}: {err}");
        assert!(err.contains("edited.json") && err.contains(key), "{err}");
    }
    let (rc, err) = plan_edited(d, &|_| {});
    assert_eq!(rc, 0, "as fit wrote it: {err}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_derived_baseline_point_edited_away_from_its_wall_time_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    // Read as it was, 3 cycles at a derived 71-core point (stored 3100 s) made it a free
    // configuration: plan recommended it.
    let (rc, err) = plan_edited(dir.path(), &|v| {
        let points = v["baseline"].as_array_mut().unwrap();
        let derived = points.iter_mut().find(|p| p["measured"] == false).unwrap();
        derived["cycles"] = 3.0.into();
    });
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("edited.json") && err.contains("derived") && err.contains("wall_time_s"),
        "{err}"
    );
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_node_law_edited_into_negative_time_or_loose_weights_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let edited = |f: &dyn Fn(&mut Value)| plan_edited(d, f);
    // A law that gains time up to a few nodes and takes away more than there is beyond.
    let (rc, err) = edited(&|v| {
        v["node_law"]["combined"]["terms"] = serde_json::json!([
            {"i": 0.5, "j": 0, "coef_s": 1e5},
            {"i": 1.0, "j": 0, "coef_s": -3e4},
        ]);
    });
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("node_law"), "{err}");
    let (rc, err) = edited(&|v| {
        v["node_law"]["candidates"][0]["weight"] = Value::from(0.9);
    });
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("add up to 1"), "{err}");
    let (rc, err) = edited(&|v| {
        v["node_law"]["combined"]["per_doubling_rel"] = Value::from(50.0);
    });
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("per_doubling_rel"), "{err}");
}
