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
    assert!(r[0].get("host_list").is_none());
    assert!(r[0].get("nodes").is_none(), "one node is written as before");
    assert_eq!(r[1]["nodes"], 2);
    // The hosts: the first two of the sweep's one host list.
    assert_eq!(
        r[1]["host_list"],
        serde_json::json!({"list": 0, "count": 2})
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("p.json")).unwrap()).unwrap();
    assert_eq!(
        doc["sweep"]["record"]["host_lists"],
        serde_json::json!([["node01", "node02", "node03"]])
    );
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

/// The node law fitted after the runs needs the machine's `[network]`: a file without it is
/// refused before the first run, not after the last.
#[test]
fn a_machine_without_a_network_is_refused_before_a_sweep_over_several_nodes_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("hosts"), "node01\nnode02\n").unwrap();
    std::fs::write(
        d.join("m.toml"),
        "[machine]\nname = \"vm\"\nnodes = 2\ncores_per_node = 2\nfrequencies_ghz = [2.0]\n",
    )
    .unwrap();
    let args = [
        "--nodes",
        "1,2",
        "--cores",
        "1",
        "--hostfile",
        "hosts",
        "--launcher",
        COUNT_HOSTFILES,
        "--machine",
        "m.toml",
        "--output",
        "p.json",
        "--",
        "/bin/true",
    ];
    let (ok, out, err) = profile(d, &args);
    assert!(!ok, "accepted: {out}");
    assert!(
        err.contains("m.toml: the machine file has no [network] section"),
        "{err}"
    );
    assert!(!d.join("p.json").exists(), "wrote a profile");
    assert!(!d.join("seen.txt").exists(), "ran the program");
    // With a network but fewer nodes than measured: refused naming the key, before any run.
    std::fs::write(
        d.join("m.toml"),
        "[machine]\nname = \"vm\"\nnodes = 1\ncores_per_node = 2\nfrequencies_ghz = [2.0]\n\
         [network]\nlatency_s = 1e-6\nbandwidth_bytes_per_s = 1e9\n",
    )
    .unwrap();
    let (ok, out, err) = profile(d, &args);
    assert!(!ok, "accepted: {out}");
    assert!(
        err.contains("machine.nodes") && err.contains("at least the 2 nodes"),
        "{err}"
    );
    assert!(!d.join("p.json").exists(), "wrote a profile");
    assert!(!d.join("seen.txt").exists(), "ran the program");
}

/// 10,000 fake hosts, one a line.
fn many_hosts(d: &Path) {
    let hosts: String = (0..10_000).map(|i| format!("node{i:05}\n")).collect();
    std::fs::write(d.join("hosts"), hosts).unwrap();
}

/// A launcher that does not launch: it notes how many hostfiles lie in the sweep's working
/// folder and how many hosts this point's has, then runs the program here.
const COUNT_HOSTFILES: &str = "sh -c 'ls \"$(dirname \"$(dirname \"$0\")\")\" | grep -c nodes$ >> \
     seen.txt; wc -l < \"$0\" >> seen.txt; exec \"$@\"' {hostfile}";

#[test]
fn a_sweep_over_10000_hosts_writes_a_profile_jouleplan_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    many_hosts(d);
    let args = [
        "--nodes",
        "1,10000",
        "--repeat",
        "30",
        "--cores",
        "1",
        "--hostfile",
        "hosts",
        "--launcher",
        COUNT_HOSTFILES,
        "--output",
        "p.json",
        "--",
        "true",
    ];
    let (ok, out, err) = profile(d, &args);
    assert!(ok, "{out}{err}");
    let size = std::fs::metadata(d.join("p.json")).unwrap().len();
    assert!(size < 16 << 20, "{size} bytes");
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("p.json")).unwrap()).unwrap();
    let rec = &doc["sweep"]["record"];
    assert_eq!(rec["host_lists"].as_array().unwrap().len(), 1, "one list");
    assert_eq!(rec["host_lists"][0].as_array().unwrap().len(), 10_000);
    let runs = rec["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 60);
    for r in runs.iter().filter(|r| r["nodes"] == 10_000) {
        assert_eq!(
            r["host_list"],
            serde_json::json!({"list": 0, "count": 10000})
        );
        assert!(r.get("hosts").is_none());
    }
    // Each point's hostfile was written as its runs began, one at a time, and is gone.
    let seen = std::fs::read_to_string(d.join("seen.txt")).unwrap();
    let counts: Vec<&str> = seen.lines().collect();
    assert!(counts.chunks(2).all(|c| c[0] == "1"), "{seen}");
    assert!(counts.chunks(2).any(|c| c[1] == "10000"), "{seen}");
    let left: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("p.json") || n.contains("jouleplan"))
        .collect();
    assert_eq!(
        left,
        ["p.json"],
        "no journal, working folder or temporary is left"
    );
    // Read back: by --resume (nothing to run) and by plan (which gets past reading to the
    // machine check: this VM is not the bundled machine).
    let mut again = args.to_vec();
    again.insert(0, "--resume");
    let (ok, out, err) = profile(d, &again);
    assert!(
        ok && out.contains("0 runs made, 60 already there"),
        "{out}{err}"
    );
    let plan = Command::cargo_bin("jouleplan")
        .unwrap()
        .current_dir(d)
        .args(["plan", "--profile", "p.json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&plan.stderr);
    assert!(
        err.contains("was measured on") && !err.contains("MiB"),
        "{err}"
    );
}

#[test]
fn a_sweep_whose_profile_would_be_too_large_to_read_is_refused_before_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    many_hosts(d);
    let args = [
        "--nodes",
        "1-10000",
        "--repeat",
        "100",
        "--cores",
        "1",
        "--hostfile",
        "hosts",
        "--launcher",
        COUNT_HOSTFILES,
        "--output",
        "p.json",
        "--",
        "true",
    ];
    let out = Command::cargo_bin("jouleplan")
        .unwrap()
        .current_dir(d)
        .arg("profile")
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("16.0 MiB") && err.contains("--repeat"),
        "{err}"
    );
    assert!(!d.join("seen.txt").exists(), "nothing ran");
    assert!(!d.join("p.json").exists() && !d.join("p.json.runs").exists());
}

#[test]
fn a_profile_with_hosts_in_each_run_still_reads_and_is_written_again_with_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("hosts"), "a\nb\nc\n").unwrap();
    let args = [
        "--nodes",
        "1,3",
        "--cores",
        "1",
        "--hostfile",
        "hosts",
        "--launcher",
        KEEP_HOSTFILE,
        "--output",
        "p.json",
        "--",
        "true",
    ];
    let (ok, out, err) = profile(d, &args);
    assert!(ok, "{out}{err}");
    // The form written before the table: each run lists its hosts.
    let path = d.join("p.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let rec = doc["sweep"]["record"].as_object_mut().unwrap();
    rec.remove("host_lists");
    for r in rec["runs"].as_array_mut().unwrap() {
        let r = r.as_object_mut().unwrap();
        if r.remove("host_list").is_some() {
            r.insert("hosts".into(), serde_json::json!(["a", "b", "c"]));
        }
    }
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let mut more = args.to_vec();
    more[1] = "1,2,3";
    more.insert(0, "--resume");
    let (ok, out, err) = profile(d, &more);
    assert!(
        ok && out.contains("1 runs made, 2 already there"),
        "{out}{err}"
    );
    let r = runs(&path);
    assert!(r.iter().all(|r| r.get("hosts").is_none()), "{r:?}");
    assert_eq!(
        r[1]["host_list"],
        serde_json::json!({"list": 0, "count": 3})
    );
    assert_eq!(
        r[2]["host_list"],
        serde_json::json!({"list": 0, "count": 2})
    );
}

#[test]
fn a_sweep_over_thousands_of_node_counts_says_them_as_ranges_on_one_short_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (ok, out, err) = profile(d, &["--cores", "1", "-o", "p.json", "--", "true"]);
    assert!(ok, "{out}{err}");
    // The runs of a sweep over 2..=3525 nodes, recorded (copies of the one real run).
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("p.json")).unwrap()).unwrap();
    let rec = &mut doc["sweep"]["record"];
    let run = rec["runs"][0].clone();
    let runs = rec["runs"].as_array_mut().unwrap();
    for n in 2..=3525u32 {
        let mut r = run.clone();
        r["nodes"] = n.into();
        runs.push(r);
    }
    std::fs::write(d.join("p.json"), doc.to_string()).unwrap();
    let (ok, out, err) = profile(
        d,
        &["--cores", "1", "-o", "p.json", "--resume", "--", "true"],
    );
    assert!(ok, "{out}{err}");
    let line = out
        .lines()
        .find(|l| l.contains("no node law was fitted"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains("runs on 2-3525 nodes"), "{line}");
    assert!(line.len() < 400, "{} bytes: {line}", line.len());
}

#[test]
fn a_node_law_that_plan_would_refuse_is_never_written_and_the_message_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("hosts"), "n1\nn2\nn3\nn4\nn5\nn6\nn7\nn8\n").unwrap();
    let launcher = "sh -c 'exec \"$@\"' {hostfile}";
    let args = [
        "--nodes",
        "1,2,4,8",
        "--cores",
        "1",
        "--hostfile",
        "hosts",
        "--launcher",
        launcher,
        "-o",
        "p.json",
    ];
    let (ok, out, err) = profile(d, &[&args[..], &["--", "true"]].concat());
    assert!(ok, "{out}{err}");
    // Times over nodes no law can follow (a run's times edited: erratic by a factor 10^7, so
    // that a law's left-out error passes what a profile keeps).
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("p.json")).unwrap()).unwrap();
    for r in doc["sweep"]["record"]["runs"].as_array_mut().unwrap() {
        let n = r["nodes"].as_u64().unwrap_or(1);
        r["wall_s"] = [1.0, 3000.0, 0.0002, 9000.0][n.trailing_zeros() as usize].into();
    }
    std::fs::write(d.join("p.json"), doc.to_string()).unwrap();
    // This node, at the frequency the runs were made at.
    let ghz = doc["sweep"]["record"]["runs"][0]["freq_hz"]
        .as_f64()
        .unwrap()
        / 1e9;
    let machine = format!(
        "[machine]\nname = \"here\"\nnodes = 16\ncores_per_node = 1\nfrequencies_ghz = [{ghz}]\n\
         [network]\nlatency_s = 1e-6\nbandwidth_bytes_per_s = 1e9\n"
    );
    std::fs::write(d.join("m.toml"), machine).unwrap();
    let (ok, out, err) = profile(
        d,
        &[
            &args[..],
            &["--resume", "--machine", "m.toml", "--", "true"],
        ]
        .concat(),
    );
    assert!(ok, "{out}{err}");
    assert!(
        err.contains("`plan` would refuse it") && err.contains("--repeat"),
        "says why and what to do: {err}"
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("p.json")).unwrap()).unwrap();
    assert!(doc.get("node_law").is_none(), "no law written");
    let said = doc["assumptions"].to_string();
    assert!(
        said.contains("was not written"),
        "the profile says so: {said}"
    );
    assert_eq!(runs(&d.join("p.json")).len(), 4, "every run kept");
    // What was written is what jouleplan reads: `--resume` goes on from it.
    let (ok, out, err) = profile(d, &[&args[..], &["--resume", "--", "true"]].concat());
    assert!(ok, "{out}{err}");
}
