//! `profile --nodes` for real: job steps over two nodes of a Slurm started on this
//! machine by `scripts/slurm-local.sh start DIR 2` (two slurmd, Debian's slurm-wlm), and
//! `mpirun` over a hostfile (Debian's OpenMPI). The node law is then fitted into the profile
//! with `--resume --machine`, and `predict` gives the measured two-node time back. When Slurm
//! or OpenMPI cannot be had, its test is reported as ignored with the reason in its name (a
//! libtest-mimic harness), never as `ok`.

mod common;

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command as Proc;

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

type Cluster = common::SlurmCluster;

fn start() -> Result<Cluster, String> {
    common::start_slurm(2)
}

/// `jouleplan profile ARGS` in `dir` as a batch job on two nodes (`sbatch --wait -N 2`): it
/// runs on the allocation's first node, where the one-node runs are measured.
fn profile_in_allocation(c: &Cluster, dir: &Path, args: &[&str]) -> (bool, String) {
    let bin = assert_cmd::cargo::cargo_bin("jouleplan");
    let mut words = vec![bin.to_string_lossy().into_owned(), "profile".into()];
    words.extend(args.iter().map(|a| a.to_string()));
    let line = shlex::try_join(words.iter().map(String::as_str)).unwrap();
    let script = dir.join("job.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ncd {}\nexec {line}\n", dir.display()),
    )
    .unwrap();
    let log = dir.join("job.out");
    let _ = std::fs::remove_file(&log);
    let out = Proc::new("sbatch")
        .args(["--wait", "-N", "2", "--time", "5", "-o"])
        .arg(&log)
        .arg(&script)
        .env("SLURM_CONF", &c.conf)
        .current_dir(dir)
        .output()
        .unwrap();
    let (ok, text) = common::outcome(out);
    let job = std::fs::read_to_string(&log).unwrap_or_default();
    (ok, format!("{text}{job}"))
}

fn doc(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

const SLURM: &str = "profile_nodes_runs_srun_steps_over_two_slurm_nodes_and_fits_the_node_law";
const MPIRUN: &str = "profile_runs_the_one_node_ranks_under_mpirun_here";
const CAMPAIGN: &str =
    "a_campaign_in_a_slurm_allocation_confirms_its_recommendation_and_plan_on_its_profile_agrees";

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let trials = vec![
        common::real_trial_in(&args, SLURM, start, |c| srun_steps(&c)),
        common::real_trial_in(&args, MPIRUN, mpirun, |_| mpirun_over_a_hostfile()),
        common::real_trial_in(&args, CAMPAIGN, start, |c| campaign_in_allocation(&c)),
    ];
    libtest_mimic::run(&args, trials).exit();
}

/// A shell loop of about a second of one core's work: real, if not a benchmark.
const BURN: &str = "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done";

fn srun_steps(c: &Cluster) {
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    let base = [
        "--nodes", "1,2", "--cores", "1", "--repeat", "2", "--output", "p.json",
    ];
    let mut args = base.to_vec();
    args.extend(["--", "/bin/sh", "-c", BURN]);
    let (ok, text) = profile_in_allocation(c, d, &args);
    assert!(ok, "{text}");
    assert!(text.contains("4 runs made"), "{text}");
    let p = doc(&d.join("p.json"));
    let rec = &p["sweep"]["record"];
    // One node: run here, where it is measured; two: srun steps over the allocation.
    assert_eq!(rec["launcher"], serde_json::json!([]), "{rec}");
    assert_eq!(rec["launcher_nodes"][0], "srun", "{rec}");
    assert!(
        rec["launcher_nodes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w == "--nodes={nodes}"),
        "{rec}"
    );
    let runs = rec["runs"].as_array().unwrap();
    let one = runs.iter().find(|r| r.get("nodes").is_none()).unwrap();
    // The shell loop burns about 0.3 s of CPU; a launcher alone would read near 0. Compared
    // with a floor, not with the wall time, which grows on a loaded machine.
    assert!(
        one["readings"]["cpu_time_s"].as_f64().unwrap() > 0.1,
        "the one-node run's CPU time is the program's: {one}"
    );
    let two: Vec<&Value> = runs.iter().filter(|r| r["nodes"] == 2).collect();
    assert_eq!(two.len(), 2, "{rec}");
    for r in &two {
        assert_eq!(r["ok"], true, "{r}");
        assert_eq!(r["layout"]["ranks_per_node"], 1);
        assert_eq!(r["layout"]["threads_per_rank"], 1);
    }

    // Asked for more nodes than the allocation has: refused, nothing run.
    let mut four = args.clone();
    four[1] = "1,4";
    four[7] = "four.json";
    let (ok, text) = profile_in_allocation(c, d, &four);
    assert!(!ok && text.contains("salloc -N 4"), "{text}");
    assert!(!d.join("four.json").exists());

    // The node law, fitted on the runs made, without running anything again.
    let ghz = p["baseline"][0]["freq_hz"].as_f64().unwrap() / 1e9;
    let machine = d.join("local.toml");
    std::fs::write(
        &machine,
        format!(
            "[machine]\nname = \"local-2\"\nnodes = 2\ncores_per_node = {}\nfrequencies_ghz = [{ghz}]\n\
             [network]\nlatency_s = 1e-6\nbandwidth_bytes_per_s = 1e9\n\
             # illustrative, not measured: predict needs a power section; the time does not use it\n\
             [power]\nidle_w = 50.0\ncore_active_w = 5.0\ncore_stall_w = 2.0\nmemory_w = 1.0\nnetwork_w = 1.0\n",
            rec["host"]["physical cores available"].as_str().unwrap()
        ),
    )
    .unwrap();
    let mut again = base.to_vec();
    again.extend([
        "--resume",
        "--machine",
        "local.toml",
        "--measured-out",
        "m.csv",
    ]);
    again.extend(["--", "/bin/sh", "-c", BURN]);
    let (ok, text) = profile_in_allocation(c, d, &again);
    assert!(ok, "{text}");
    assert!(text.contains("0 runs made, 4 already there"), "{text}");
    assert!(text.contains("node law over nodes 1, 2"), "{text}");
    let p = doc(&d.join("p.json"));
    assert_eq!(
        p["node_law"]["measured_nodes"],
        serde_json::json!([1, 2]),
        "{p}"
    );
    let csv = std::fs::read_to_string(d.join("m.csv")).unwrap();
    assert_eq!(csv.lines().count(), 5, "{csv}");
    // ... which validate reads: the runs against the profile they were fitted into.
    let out = Command::cargo_bin("jouleplan")
        .unwrap()
        .current_dir(d)
        .args([
            "validate",
            "--machine",
            "local.toml",
            "--profile",
            "p.json",
            "--measured",
            "m.csv",
            "--json",
        ])
        .output()
        .unwrap();
    let (ok, text) = common::outcome(out.clone());
    assert!(ok, "{text}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let time = &v["validations"][0]["time"];
    assert_eq!(time["points"], 4, "{v}");
    // On a loaded machine the two two-node runs can differ by far more than a law can tell
    // from growth (the node rule asks a left-out count for that evidence, and two counts
    // leave none out): then the law records the spread instead of following their mean.
    let walls: Vec<f64> = two.iter().map(|r| r["wall_s"].as_f64().unwrap()).collect();
    let mean = (walls[0] + walls[1]) / 2.0;
    let spread = (walls[0] - walls[1]).abs() / 2f64.sqrt() / mean;
    if spread > 0.10 {
        let kept = p["node_law"]["combined"]["repeat_rel"].as_f64().unwrap();
        assert!(
            kept > 0.10,
            "the law's run-to-run spread {kept} carries the runs' {spread}: {p}"
        );
        eprintln!(
            "the two-node runs spread {:.0}% run to run here ({walls:?} s): the law's \
             reproduction of their mean is not checked on this run",
            100.0 * spread
        );
        return;
    }
    // The means are what the profile and the law were fitted on (each run's own error is
    // this VM's run-to-run noise).
    for p in v["validations"][0]["points"].as_array().unwrap() {
        assert!(p["time_error"].as_f64().unwrap().abs() < 0.01, "{v}");
    }

    // predict on two nodes gives the measured two-node time back (one count: the law fits it).
    let measured = two
        .iter()
        .map(|r| r["wall_s"].as_f64().unwrap())
        .sum::<f64>()
        / 2.0;
    let out = Command::cargo_bin("jouleplan")
        .unwrap()
        .current_dir(d)
        .args([
            "predict",
            "--machine",
            "local.toml",
            "--profile",
            "p.json",
            "--json",
        ])
        .arg("--config")
        .arg(format!("2,1,{ghz},0"))
        .output()
        .unwrap();
    let (ok, text) = common::outcome(out.clone());
    assert!(ok, "{text}");
    let pred: Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = pred["time_s"].as_f64().unwrap_or_else(|| panic!("{pred}"));
    assert!(
        (t / measured - 1.0).abs() < 0.01,
        "predicted {t} s on two nodes, measured {measured} s"
    );
}

/// OpenMPI's mpirun, installed when missing; `Err` says why it cannot be had.
fn mpirun() -> Result<(), String> {
    let out = Proc::new(repo("scripts/ensure-packages.sh"))
        .arg("mpirun=openmpi-bin")
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "OpenMPI is not installable here: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ))
    }
}

/// The one-node runs of a sweep with a hostfile run here under mpirun (the hostfile is for
/// the runs on more nodes): both ranks start.
fn mpirun_over_a_hostfile() {
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    std::fs::write(d.join("hosts"), "localhost\n").unwrap();
    let out = Command::cargo_bin("jouleplan")
        .unwrap()
        .current_dir(d)
        .env_remove("SLURM_JOB_ID")
        .args([
            "profile",
            "--hostfile",
            "hosts",
            "--ranks",
            "2",
            "--cores",
            "2",
            "--output",
            "p.json",
            "--",
            "/bin/sh",
            "-c",
            "echo $OMPI_COMM_WORLD_RANK >> ranks.txt",
        ])
        .output()
        .unwrap();
    let (ok, text) = common::outcome(out);
    assert!(ok, "{text}");
    let mut ranks: Vec<String> = std::fs::read_to_string(d.join("ranks.txt"))
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    ranks.sort();
    assert_eq!(ranks, ["0", "1"]);
    let p = doc(&d.join("p.json"));
    let rec = &p["sweep"]["record"];
    assert_eq!(rec["launcher"][0], "mpirun", "{rec}");
    assert!(rec["runs"][0].get("hosts").is_none(), "{rec}");
}

/// `profile --nodes auto` as a batch job on the two nodes: the start (1 and 2 nodes, srun
/// steps for 2), then the recommendation measured again; `plan` on the campaign's `-o`
/// recommends the campaign's count, and its record of every run holds the srun steps.
fn campaign_in_allocation(c: &Cluster) {
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    let (ok, text) = common::outcome(
        Command::cargo_bin("jouleplan")
            .unwrap()
            .current_dir(d)
            .args(["machine", "init", "-o", "m.toml"])
            .output()
            .unwrap(),
    );
    assert!(ok, "{text}");
    // This node twice, with a network; no [power]: the runs measure time only.
    let m = std::fs::read_to_string(d.join("m.toml")).unwrap();
    let m = m.replacen("\nnodes = 1\n", "\nnodes = 2\n", 1)
        + "\n[network]\nlatency_s = 1e-6\nbandwidth_bytes_per_s = 1e9\n";
    std::fs::write(d.join("m.toml"), m).unwrap();
    let args = [
        "--nodes",
        "auto",
        "--cores",
        "1",
        "--machine",
        "m.toml",
        "--measured-out",
        "runs.csv",
        "-o",
        "p.json",
        "--",
        "/bin/sh",
        "-c",
        "sleep 0.3",
    ];
    let (ok, text) = profile_in_allocation(c, d, &args);
    assert!(ok, "{text}");
    assert!(text.contains("campaign ended: stable"), "{text}");
    let rec: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("recommendation: "))
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    let runs = std::fs::read_to_string(d.join("runs.csv")).unwrap();
    let at = |n: u64| {
        runs.lines()
            .skip(1)
            .filter(|l| l.split(',').next() == Some(&n.to_string()))
            .count()
    };
    assert!(at(1) >= 1 && at(2) >= 1, "{runs}");
    assert!(
        at(rec) >= 2,
        "the recommendation, {rec} nodes, was measured once: {runs}"
    );
    let record = doc(&d.join("p.sweep.json"));
    assert_eq!(
        record["sweep"]["record"]["launcher_nodes"][0], "srun",
        "{record}"
    );
    let out = Command::cargo_bin("jouleplan")
        .unwrap()
        .current_dir(d)
        .args(["plan", "--machine", "m.toml", "--profile", "p.json"])
        .args(["--nodes", "1-2", "--cores", "1", "--json"])
        .output()
        .unwrap();
    let (ok, text) = common::outcome(out.clone());
    assert!(ok, "{text}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["recommendation"]["nodes"].as_u64(), Some(rec), "{v}");
}
