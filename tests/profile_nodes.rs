//! `profile --nodes` outside Slurm: runs placed by a hostfile (the first N hosts of
//! it for a point on N nodes), recorded with their node count, ranks per node, threads per
//! rank and hosts, resumed, and refused where they cannot be placed. Every run here is a real
//! process; the launcher that receives each point's hostfile is a shell that keeps a copy and
//! runs the program.

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

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

fn runs(path: &Path) -> Vec<Value> {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    doc["sweep"]["record"]["runs"].as_array().unwrap().clone()
}

/// A launcher that appends the point's hostfile to `seen.txt`, then runs the program.
const KEEP_HOSTFILE: &str =
    "sh -c 'cat \"$0\" >> seen.txt; echo --- >> seen.txt; exec \"$@\"' {hostfile}";

#[test]
fn runs_on_n_nodes_get_the_first_n_hosts_and_are_recorded_with_their_layout() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("hosts"),
        "# the allocation\nnode01 slots=64\nnode02:64\n\nnode01 slots=64\nnode03\n",
    )
    .unwrap();
    let args = [
        "--nodes",
        "1,2",
        "--cores",
        "2",
        "--ranks",
        "2",
        "--hostfile",
        "hosts",
        "--launcher",
        KEEP_HOSTFILE,
        "--output",
        "p.json",
        "--measured-out",
        "m.csv",
        "--",
        "/bin/sh",
        "-c",
        "sleep 0.1",
    ];
    let (ok, out, err) = profile(d, &args);
    assert!(ok, "{out}{err}");
    assert!(out.contains("2 runs made"), "{out}");
    assert!(
        out.contains("2 nodes x 2 cores"),
        "the summary names the node count: {out}"
    );
    // Each point's launcher saw its own hostfile: one host, then two, in the file's order.
    let seen = std::fs::read_to_string(d.join("seen.txt")).unwrap();
    assert_eq!(
        seen,
        "node01 slots=2\n---\nnode01 slots=2\nnode02 slots=2\n---\n"
    );
    // A launcher of the user's is used for every point; only runs on more nodes name hosts.
    let r = runs(&d.join("p.json"));
    assert_eq!(r.len(), 2);
    assert!(r[0].get("hosts").is_none());
    assert!(r[0].get("nodes").is_none(), "one node is written as before");
    assert_eq!(r[1]["nodes"], 2);
    assert_eq!(r[1]["hosts"], serde_json::json!(["node01", "node02"]));
    assert_eq!(
        r[1]["layout"],
        serde_json::json!({"ranks_per_node": 2, "threads_per_rank": 1})
    );
    assert!(r[1]["wall_s"].as_f64().unwrap() >= 0.1);
    // The two-node run is not in the baseline; it is in the measured CSV.
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("p.json")).unwrap()).unwrap();
    assert_eq!(doc["baseline"].as_array().unwrap().len(), 1);
    assert!(
        doc["assumptions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a.as_str().unwrap().contains("no node law was fitted")),
        "{doc}"
    );
    let csv = std::fs::read_to_string(d.join("m.csv")).unwrap();
    assert!(
        csv.starts_with(
            "nodes,cores,freq_hz,gpus,time_s,energy_j,gpu_energy_j,ranks,energy_scope\n"
        ),
        "{csv}"
    );
    assert_eq!(csv.lines().filter(|l| l.starts_with("2,2,")).count(), 1);

    // --resume with a third node count runs only the new point.
    let mut more = args.to_vec();
    more[1] = "1,2,3";
    more.push("--resume");
    let idx = more.iter().position(|a| *a == "--").unwrap();
    more.insert(idx, "--resume");
    more.pop();
    let (ok, out, err) = profile(d, &more);
    assert!(ok, "{out}{err}");
    assert!(out.contains("1 runs made, 2 already there"), "{out}");
    assert_eq!(runs(&d.join("p.json"))[2]["nodes"], 3);
}

#[test]
fn node_counts_that_cannot_be_placed_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("hosts"), "node01\nnode02\n").unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &["--nodes", "1,4", "--hostfile", "hosts"],
            "at most the 2 hosts",
        ),
        (&["--nodes", "2,4", "--hostfile", "hosts"], "include 1"),
        (&["--nodes", "1,2"], "inside a Slurm allocation"),
        (
            &[
                "--nodes",
                "1,2",
                "--hostfile",
                "hosts",
                "--launcher",
                "mpiexec -n {ranks}",
            ],
            "{nodes}",
        ),
        (
            &["--nodes", "1", "--launcher", "x {hostfile}"],
            "--hostfile",
        ),
    ];
    for (extra, want) in cases {
        let mut args = extra.to_vec();
        args.extend(["--output", "p.json", "--", "/bin/true"]);
        let (ok, out, err) = profile(d, &args);
        assert!(!ok, "{args:?} was accepted: {out}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!d.join("p.json").exists(), "{args:?} wrote a profile");
    }
}
