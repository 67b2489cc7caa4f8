//! Generated job scripts checked by a real Slurm: a one-node cluster on localhost started by
//! `scripts/slurm-local.sh` (Debian's slurm-wlm and munge, installed when missing). When the
//! packages cannot be installed, the test is reported as ignored with the reason in its name
//! (a libtest-mimic harness), never as `ok`.

use assert_cmd::Command;
mod common;

use std::path::{Path, PathBuf};
use std::process::Command as Proc;

type Cluster = common::SlurmCluster;

fn start() -> Result<Cluster, String> {
    common::start_slurm(1)
}

fn slurm(c: &Cluster, cmd: &str, args: &[&str]) -> (bool, String) {
    let out = Proc::new(cmd)
        .args(args)
        .env("SLURM_CONF", &c.conf)
        .output()
        .unwrap();
    common::outcome(out)
}

/// A machine shaped like this node (nproc cores), with illustrative power numbers.
fn local_inputs(dir: &Path) -> (PathBuf, PathBuf) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    let m = dir.join("local.toml");
    std::fs::write(
        &m,
        format!(
            "[machine]\nname = \"local\"\nnodes = 2\ncores_per_node = {cores}\nfrequencies_ghz = [2.0]\n\
             [network]\nlatency_s = 1e-6\nbandwidth_bytes_per_s = 1e9\n\
             [power]\nidle_w = 50.0\ncore_active_w = 5.0\ncore_stall_w = 2.0\nmemory_w = 1.0\nnetwork_w = 1.0\n"
        ),
    )
    .unwrap();
    let points: Vec<serde_json::Value> = (1..=cores)
        .map(|c| {
            serde_json::json!({"cores": c, "freq_hz": 2e9, "cycles": 2e9, "stall_cycles": 0,
                "mem_stall_cycles": 0, "utilisation": 1, "wall_time_s": 1.0 / f64::from(c)})
        })
        .collect();
    let p = dir.join("local.json");
    std::fs::write(
        &p,
        serde_json::json!({"format": "jouleplan-profile/1", "program": "argv test",
            "iterations": {"baseline": 1, "target": 1}, "baseline": points})
        .to_string(),
    )
    .unwrap();
    (m, p)
}

const NAME: &str = "generated_scripts_are_accepted_run_and_read_back_by_a_real_slurm";

fn main() {
    common::real_trial(NAME, start, |cluster| {
        generated_scripts_are_accepted_run_and_read_back_by_a_real_slurm(&cluster)
    });
}

fn generated_scripts_are_accepted_run_and_read_back_by_a_real_slurm(cluster: &Cluster) {
    let work = tempfile::tempdir().unwrap();
    let (m, p) = local_inputs(work.path());
    let (m, p) = (m.to_str().unwrap(), p.to_str().unwrap());

    // 1. plan --sbatch on the recommendation, limited to one node: accepted by --test-only.
    let planned = work.path().join("planned.sh");
    Command::cargo_bin("jouleplan")
        .unwrap()
        .args([
            "plan",
            "--machine",
            m,
            "--profile",
            p,
            "--nodes",
            "1",
            "--sbatch",
        ])
        .arg(&planned)
        .args([
            "--account",
            "root",
            "--app",
            "./solver --input 'in put.dat'",
        ])
        .assert()
        .success();
    let (ok, text) = slurm(
        cluster,
        "sbatch",
        &["--test-only", planned.to_str().unwrap()],
    );
    assert!(
        ok && text.contains("to start at"),
        "sbatch --test-only refused the script: {text}"
    );

    // 2. A configuration the node cannot hold is refused: the check above could fail.
    let two = work.path().join("two-nodes.sh");
    Command::cargo_bin("jouleplan")
        .unwrap()
        .args([
            "slurm",
            "--config",
            "2,1,2.0",
            "--machine",
            m,
            "--profile",
            p,
            "--sbatch",
        ])
        .arg(&two)
        .args(["--", "true"])
        .assert()
        .success();
    let (ok, text) = slurm(cluster, "sbatch", &["--test-only", two.to_str().unwrap()]);
    assert!(!ok, "a 2-node job on a 1-node cluster was accepted: {text}");

    // 3. A job with hostile arguments runs to completion; every byte reaches the program.
    let argv_out = work.path().join("argv.out");
    let job = work.path().join("job.sh");
    let words = ["my file", "$HOME", "`id`", "it's", "a\nb", "\"q\"", "*"];
    let sh = format!("printf '%s\\0' \"$@\" > {}", argv_out.display());
    Command::cargo_bin("jouleplan")
        .unwrap()
        .args([
            "slurm",
            "--config",
            "1,1,2.0",
            "--machine",
            m,
            "--profile",
            p,
            "--job-name",
            "argvtest",
        ])
        .arg("--sbatch")
        .arg(&job)
        .args(["--", "/bin/sh", "-c", &sh, "sh"])
        .args(words)
        .assert()
        .success();
    let log = work.path().join("job.out");
    let (ok, text) = slurm(
        cluster,
        "sbatch",
        &["--wait", "-o", log.to_str().unwrap(), job.to_str().unwrap()],
    );
    assert!(ok, "sbatch --wait failed: {text}");
    let got = std::fs::read(&argv_out).expect("the job wrote its arguments");
    let want: Vec<u8> = words
        .iter()
        .flat_map(|w| w.bytes().chain(std::iter::once(0)))
        .collect();
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&want)
    );
    let out = std::fs::read_to_string(&log).unwrap();
    assert!(out.contains("jouleplan predicted: Elapsed"), "{out}");

    // 4. sacct reads the finished job back (from the job-completion log).
    let job_id = text.split_whitespace().last().unwrap_or("").to_string();
    let (ok, acct) = slurm(
        cluster,
        "sacct",
        &[
            "-c",
            "-n",
            "-P",
            "-o",
            "JobID,JobName,State,Elapsed,ExitCode",
        ],
    );
    assert!(ok, "{acct}");
    let line = acct
        .lines()
        .find(|l| l.starts_with(&format!("{job_id}|")))
        .unwrap_or_else(|| panic!("job {job_id} not in sacct: {acct}"));
    assert!(line.contains("|argvtest|COMPLETED|"), "{line}");
    assert!(line.ends_with("|0:0"), "{line}");
}
