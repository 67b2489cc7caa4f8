//! Shared test inputs. Every number here is illustrative test data, chosen to make hand
//! derivations easy; none of it describes a real machine or program.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

mod public;
pub use public::*;

/// A 16-node machine with 8 cores, two frequencies and two GPUs per node (illustrative).
pub const MACHINE: &str = r#"
[machine]
name = "worked-example"
description = "illustrative test machine"
nodes = 16
cores_per_node = 8
frequencies_ghz = [1.0, 2.0]
gpus_per_node = 2

[network]
latency_s = 1.0e-5
bandwidth_bytes_per_s = 1.0e9
switch_bandwidth_bytes_per_s = 2.0e9
cv2 = 1.0

[power]
idle_w = 50.0
core_active_w = [5.0, 10.0]
core_stall_w = [2.0, 4.0]
memory_w = 6.0
network_w = 3.0
gpu_active_w = 300.0
gpu_idle_w = 50.0
"#;

/// One baseline point per (c, f) for c = 1..8 and both frequencies, plus GPU points at
/// (4 cores, 2 GHz) with 2 GPUs. Illustrative.
pub fn profile_json() -> String {
    let mut points = Vec::new();
    for c in 1..=8u32 {
        for f in [1.0e9, 2.0e9] {
            let scale = 1.0 + 0.05 * f64::from(c); // a little contention with more cores
            points.push(serde_json::json!({
                "cores": c, "freq_hz": f, "gpus": 0,
                "cycles": 8.0e10 * scale, "stall_cycles": 3.0e10 * scale,
                "mem_stall_cycles": 2.0e10 * scale, "instructions": 1.0e11,
                "utilisation": 0.9, "wall_time_s": 12.0,
            }));
        }
    }
    // Override the (4, 2 GHz) point with round numbers for the worked example.
    for p in points.iter_mut() {
        if p["cores"] == 4 && p["freq_hz"] == 2.0e9 {
            p["cycles"] = 8.0e10.into();
            p["stall_cycles"] = 3.0e10.into();
            p["mem_stall_cycles"] = 2.0e10.into();
        }
    }
    // Wall times equal to the paper's terms at the baseline (MODEL.md 6b: no extra time), so
    // the worked example is the paper's model exactly.
    for p in points.iter_mut() {
        let (c, f) = (p["cores"].as_f64().unwrap(), p["freq_hz"].as_f64().unwrap());
        let (cy, m) = (
            p["cycles"].as_f64().unwrap(),
            p["mem_stall_cycles"].as_f64().unwrap(),
        );
        let t_cpu = (cy - m) / (c * f);
        p["wall_time_s"] = (t_cpu * (2.0 - 0.9) + m / (c * f)).into();
    }
    // T_CPU 4.375 s, T_mem 0.625 s, T_s,net 0.21875 s, T_gpu = R_s = 3 s.
    points.push(serde_json::json!({
        "cores": 4, "freq_hz": 2.0e9, "gpus": 2,
        "cycles": 4.0e10, "stall_cycles": 1.0e10, "mem_stall_cycles": 0.5e10,
        "utilisation": 0.95, "wall_time_s": 8.21875,
        "device": { "kernel_s": [4.0, 3.0], "transfer_s": [1.0, 1.0], "host_runtime_s": 3.0 }
    }));
    serde_json::json!({
        "format": "jouleplan-profile/1",
        "program": "worked-example",
        "iterations": { "baseline": 10, "target": 100 },
        "communication": { "messages_per_iteration": 4, "bytes_per_message": 1.0e5, "growth": "constant" },
        "baseline": points,
    })
    .to_string()
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write test file");
    p
}

/// Relative closeness.
pub fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1e-300)
}

/// Runs the real binary: (exit code, stdout, stderr). A run longer than 300 s is killed and
/// reads as exit code -1 (a hang fails its test instead of stalling the suite).
pub fn jouleplan(args: &[&str]) -> (i32, String, String) {
    let out = assert_cmd::Command::cargo_bin("jouleplan")
        .unwrap()
        .args(args)
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs the real binary in `dir`, outside any Slurm job: (exit code, stdout, stderr).
pub fn jouleplan_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_jouleplan"))
        .current_dir(dir)
        .env_remove("SLURM_JOB_ID")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A machine of two frequencies (`in.toml`) and one-node runs to fit on it (`runs.csv`) in
/// `d`: time `100/c/f + 1` s and power `100 + 3c` W, illustrative, not a measurement.
/// Returns (runs, machine).
pub fn two_frequency_fit_inputs(d: &Path) -> (PathBuf, PathBuf) {
    let m = write(
        d,
        "in.toml",
        "[machine]\nname = \"two-freq\"\nnodes = 4\ncores_per_node = 8\nfrequencies_ghz = [1.0, 2.0]\n\
         [network]\nlatency_s = 1e-6\nbandwidth_bytes_per_s = 1e9\n",
    );
    let mut csv = String::from("nodes,cores,freq_hz,gpus,time_s,energy_j\n");
    for f in [1e9, 2e9] {
        for c in [1.0, 2.0, 4.0, 8.0] {
            let t = 100.0 / c * (1e9 / f) + 1.0;
            csv += &format!("1,{c},{f},0,{t},{}\n", (100.0 + 3.0 * c) * t);
        }
    }
    (write(d, "runs.csv", &csv), m)
}

/// A real recorded input under `tests/data/fixtures` (a copy of the project's shared fixtures;
/// `tests/data/fixtures/README.md` says how each file was measured). Panics naming the path
/// when it is missing, so a broken checkout fails loudly instead of passing.
pub fn fixture(rel: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/fixtures")
        .join(rel);
    assert!(
        p.exists(),
        "{} is missing: the repository's test data is incomplete",
        p.display()
    );
    p
}

/// The Ice Lake cluster's machine file (the cluster of the public multi-node fixtures, written
/// from Intel's specification of its CPU; `tests/data/README.md`).
pub const ICELAKE: &str = "tests/data/machines/icelake-8360y.toml";

/// Fits `code`'s real runs (made from the public fixtures, CPU-scope energy) on 1, 2, 4 and
/// 8 nodes in `d`; returns (profile, machine).
pub fn fit_on_1_2_4_8(d: &Path, code: &str) -> (PathBuf, PathBuf) {
    fit_fixture_code(d, code, &[1, 2, 4, 8])
}

/// The worked-example inputs in a temporary folder.
pub struct Inputs {
    _dir: tempfile::TempDir,
    pub machine: String,
    pub profile: String,
}

impl Inputs {
    /// Runs `jouleplan CMD --machine M --profile P EXTRA...`.
    pub fn run(&self, cmd: &str, extra: &[&str]) -> (i32, String, String) {
        let mut args = vec![cmd, "--machine", &self.machine, "--profile", &self.profile];
        args.extend_from_slice(extra);
        jouleplan(&args)
    }
}

/// The worked-example inputs under stable names (their path is part of some outputs).
pub fn inputs() -> Inputs {
    let dir = tempfile::tempdir().unwrap();
    let m = write(dir.path(), "machine.toml", MACHINE);
    let p = write(dir.path(), "profile.json", &profile_json());
    Inputs {
        machine: m.to_str().unwrap().into(),
        profile: p.to_str().unwrap().into(),
        _dir: dir,
    }
}

/// (width, height, distinct colours, share of non-white pixels).
pub fn png_stats(path: &Path) -> (u32, u32, usize, f64) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = info.color_type.samples();
    let data = &buf[..info.buffer_size()];
    let mut colours = std::collections::HashSet::new();
    let mut non_white = 0usize;
    for p in data.chunks(px) {
        let rgb = (p[0], p[1], p[2]);
        colours.insert(rgb);
        if rgb != (255, 255, 255) {
            non_white += 1;
        }
    }
    let n = data.len() / px;
    (
        info.width,
        info.height,
        colours.len(),
        non_white as f64 / n as f64,
    )
}

/// The `main` of a libtest-mimic test whose real part needs something that may be missing:
/// `setup` gets it (or says why not), `test` runs on it. Without it the test is reported as
/// ignored with the reason in its name, never as `ok`.
pub fn real_trial<T: Send + 'static>(
    name: &'static str,
    setup: impl FnOnce() -> Result<T, String>,
    test: impl FnOnce(T) + Send + 'static,
) {
    let args = libtest_mimic::Arguments::from_args();
    let trial = real_trial_in(&args, name, setup, test);
    libtest_mimic::run(&args, vec![trial]).exit();
}

/// One such trial among several of a libtest-mimic `main`: `setup` runs only when the trial
/// is wanted.
pub fn real_trial_in<T: Send + 'static>(
    args: &libtest_mimic::Arguments,
    name: &'static str,
    setup: impl FnOnce() -> Result<T, String>,
    test: impl FnOnce(T) + Send + 'static,
) -> libtest_mimic::Trial {
    use libtest_mimic::Trial;
    let wanted = !args.list && args.filter.as_deref().is_none_or(|f| name.contains(f));
    if !wanted {
        return Trial::test(name, || Ok(()));
    }
    match setup() {
        Ok(it) => Trial::test(name, move || {
            test(it);
            Ok(())
        }),
        Err(why) => Trial::test(format!("{name} (ignored: {why})"), move || Err(why.into()))
            .with_ignored_flag(true),
    }
}

/// Exit status and stdout followed by stderr of a finished command.
pub fn outcome(out: std::process::Output) -> (bool, String) {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// `predict --json` of `config` (`nodes,cores,GHz,gpus`) on `machine` and `profile`.
#[allow(dead_code)]
pub fn predict_json(machine: &str, profile: &Path, config: &str) -> serde_json::Value {
    let prof = profile.to_str().unwrap();
    let args = [
        "predict",
        "--json",
        "--machine",
        machine,
        "--profile",
        prof,
        "--config",
        config,
    ];
    let (code, out, err) = jouleplan(&args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// A Slurm on this machine started by `scripts/slurm-local.sh`, stopped when dropped.
pub struct SlurmCluster {
    dir: tempfile::TempDir,
    /// Its `slurm.conf`, for `SLURM_CONF`.
    pub conf: PathBuf,
}

impl Drop for SlurmCluster {
    fn drop(&mut self) {
        let _ = std::process::Command::new(slurm_script())
            .arg("stop")
            .arg(self.dir.path())
            .status();
    }
}

fn slurm_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-local.sh")
}

/// Starts a Slurm of `nodes` nodes on this machine; `Err` says why Slurm cannot be had here
/// (the packages cannot be installed), a panic that it did not start.
pub fn start_slurm(nodes: u32) -> Result<SlurmCluster, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = std::process::Command::new(slurm_script())
        .arg("start")
        .arg(dir.path())
        .arg(nodes.to_string())
        .output()
        .map_err(|e| e.to_string())?;
    let err = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => {
            let conf = String::from_utf8_lossy(&out.stdout)
                .lines()
                .last()
                .unwrap_or("")
                .to_string();
            Ok(SlurmCluster {
                dir,
                conf: PathBuf::from(conf),
            })
        }
        Some(77) => Err(format!(
            "Slurm is not installable here: {}",
            err.lines().last().unwrap_or("")
        )),
        _ => panic!("the local Slurm ({nodes} nodes) did not start: {err}"),
    }
}

/// What [`fit_into`] wrote and said.
pub struct Fitted {
    /// The profile, `p.json` in the folder.
    pub profile: PathBuf,
    /// The machine file with the fitted power.
    pub machine: PathBuf,
    /// Standard output.
    pub out: String,
    /// Standard error.
    pub err: String,
}

/// `jouleplan fit --measured runs --machine machine` (with `extra` flags) writing `p.json` and
/// `machine_out` in `d`; panics, with what it said, unless it succeeded.
pub fn fit_into(
    d: &Path,
    runs: &Path,
    machine: &Path,
    machine_out: &str,
    extra: &[&str],
) -> Fitted {
    let (profile, fitted) = (d.join("p.json"), d.join(machine_out));
    let (code, out, err) = fit_to(runs, machine, (&profile, &fitted), extra);
    assert_eq!(code, 0, "{err}");
    Fitted {
        profile,
        machine: fitted,
        out,
        err,
    }
}

/// `jouleplan fit --measured runs --machine machine --profile-out profile --machine-out
/// machine_out` with `extra` flags: (exit code, stdout, stderr).
pub fn fit_to(
    runs: &Path,
    machine: &Path,
    (profile, machine_out): (&Path, &Path),
    extra: &[&str],
) -> (i32, String, String) {
    let mut args = vec![
        "fit",
        "--measured",
        s(runs),
        "--machine",
        s(machine),
        "--profile-out",
        s(profile),
        "--machine-out",
        s(machine_out),
    ];
    args.extend_from_slice(extra);
    jouleplan(&args)
}

/// Fits the Ice Lake fixture's real runs of `code` (made from the public fixtures, `multinode_dir`) on the
/// node counts `keep` in `d` with the fixture's machine file; returns (profile, machine).
pub fn fit_fixture_code(d: &Path, code: &str, keep: &[u32]) -> (PathBuf, PathBuf) {
    let root = multinode_dir();
    let fit_csv = d.join("fit.csv");
    let text = std::fs::read_to_string(root.join(format!("{code}.csv"))).unwrap();
    let kept: String = text
        .lines()
        .enumerate()
        .filter(|(i, l)| {
            *i == 0
                || l.split(',')
                    .next()
                    .and_then(|n| n.parse::<u32>().ok())
                    .is_some_and(|n| keep.contains(&n))
        })
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    std::fs::write(&fit_csv, kept).unwrap();
    let machine = Path::new(env!("CARGO_MANIFEST_DIR")).join(ICELAKE);
    let f = fit_into(d, &fit_csv, &machine, "m.toml", &[]);
    (f.profile, f.machine)
}

/// `plan` of `prof` on `mach` over 1-16 nodes of 72 cores (the Ice Lake machine's full nodes)
/// with `extra`: (code, stdout, stderr).
pub fn plan_full_nodes(mach: &Path, prof: &Path, extra: &[&str]) -> (i32, String, String) {
    let (m, p) = (mach.to_str().unwrap(), prof.to_str().unwrap());
    let mut args = vec![
        "plan",
        "--machine",
        m,
        "--profile",
        p,
        "--nodes",
        "1-16",
        "--cores",
        "72",
    ];
    args.extend_from_slice(extra);
    jouleplan(&args)
}

/// The measured energy at `n` nodes of an Ice Lake fixture code (made from the public fixtures, 72
/// ranks a node, repeats averaged) over that of the cheapest measured count up to 16 within 5%
/// of its time, less one: the energy a recommendation of `n` nodes wastes.
pub fn waste_at_72(code: &str, n: u32) -> f64 {
    let path = multinode(&format!("{code}.csv"));
    let text = std::fs::read_to_string(path).unwrap();
    let mut runs: std::collections::BTreeMap<u32, Vec<(f64, f64)>> = Default::default();
    for l in text.lines().skip(1) {
        let c: Vec<&str> = l.split(',').collect();
        if c[1] == "72" {
            runs.entry(c[0].parse().unwrap())
                .or_default()
                .push((c[4].parse().unwrap(), c[5].parse().unwrap()));
        }
    }
    let mean = |v: &Vec<(f64, f64)>| {
        let k = v.len() as f64;
        let t = v.iter().map(|r| r.0).sum::<f64>() / k;
        (t, v.iter().map(|r| r.1).sum::<f64>() / k)
    };
    let (t, e) = mean(&runs[&n]);
    let best = runs
        .iter()
        .filter(|(m, _)| **m <= 16)
        .map(|(_, v)| mean(v))
        .filter(|&(tm, _)| tm <= 1.05 * t)
        .map(|(_, em)| em)
        .fold(f64::INFINITY, f64::min);
    e / best - 1.0
}

/// The machine file `machine init` writes for this node (once a folder), given 8 nodes and a
/// network, and a hostfile `hosts` of 8 names beside it (the launcher runs them all here): no
/// [power] (no RAPL here), so a campaign plans by time and node-hours.
pub fn this_node_times_8(d: &Path) -> PathBuf {
    let m = d.join("m.toml");
    if m.exists() {
        return m;
    }
    let path = m.to_str().unwrap();
    let (rc, _, err) = jouleplan(&["machine", "init", "-o", path]);
    assert_eq!(rc, 0, "{err}");
    let text = std::fs::read_to_string(&m).unwrap();
    assert!(text.contains("\nnodes = 1\n"), "{text}");
    let text = text.replacen("\nnodes = 1\n", "\nnodes = 8\n", 1)
        + "\n[network]\nlatency_s = 1e-6\nbandwidth_bytes_per_s = 1e10\n";
    std::fs::write(&m, text).unwrap();
    std::fs::write(d.join("hosts"), "a\nb\nc\nd\ne\nf\ng\nh\n").unwrap();
    m
}

/// Runs the binary on `args` with stdout to `out` (left there, not read: a large output read
/// whole would swell this test process, whose memory a child spawned beside it starts with):
/// (exit code, -1 where a signal ended it; stderr; its peak resident memory in KiB, from
/// `wait4`: this child's alone, whatever other tests run beside it).
pub fn run_peak(args: &[&str], out: &Path) -> (i32, String, i64) {
    let err = out.with_extension("err");
    // Reaped below by wait4, which Child::wait would not give the usage of.
    #[allow(clippy::zombie_processes)]
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_jouleplan"))
        .args(args)
        .stdout(std::fs::File::create(out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let (mut status, mut usage) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
    // SAFETY: waits for our own child, into locals that outlive the call.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (code, std::fs::read_to_string(err).unwrap(), usage.ru_maxrss)
}

/// The path as the `&str` an argument list takes.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A file of the repository, by its path from the repository's root.
pub fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// A one-node machine of two cores at one frequency, with a network and no `[power]`
/// (illustrative: what `calibrate network` and `calibrate power` write into).
pub const VM: &str = "[machine]\nname = \"vm\"\nnodes = 1\ncores_per_node = 2\nfrequencies_ghz = [2.0]\n\
[network]\nlatency_s = 1e-6\nbandwidth_bytes_per_s = 1e9\n";

/// `calibrate power --machine machine` where there is no energy meter (a powercap and an
/// event-source root that do not exist): (exit code, stdout, stderr).
pub fn calibrate_power_without_a_meter(machine: &Path) -> (i32, String, String) {
    jouleplan(&[
        "calibrate",
        "power",
        "--machine",
        s(machine),
        "--powercap-root",
        "/nonexistent/powercap",
        "--event-source-root",
        "/nonexistent",
    ])
}

/// The arguments of `calibrate power --machine machine` running its kernels on `cores` for
/// 0.5 s, once each, against a copy in `d` of the recorded powercap layout
/// `tests/data/powercap`, whose counters do not move (so the fit refuses after the runs).
pub fn kernels_on_recorded_powercap(d: &Path, machine: &Path, cores: &str) -> Vec<String> {
    let status = std::process::Command::new("cp")
        .args(["-a", s(&repo("tests/data/powercap")), s(d)])
        .status()
        .unwrap();
    assert!(status.success());
    let root = d.join("powercap");
    let args = [
        "calibrate",
        "power",
        "--machine",
        s(machine),
        "--powercap-root",
        s(&root),
        "--event-source-root",
        "/nonexistent",
        "--seconds",
        "0.5",
        "--repeat",
        "1",
        "--cores",
        cores,
    ];
    args.iter().map(|a| a.to_string()).collect()
}
