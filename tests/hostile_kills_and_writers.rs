//! A hostile round on what guards jouleplan's outputs, run as an outsider would: `fit` killed
//! at every rename, link, unlink and fsync of writing its pair, a sweep killed at every save,
//! two writers onto one pair at once, fuzzed journals, and hostile files at the names of
//! locks and set markers. After each: nothing is lost or written through, nothing hangs, and
//! what is left is one fit's whole pair that `plan` reads, or a refusal naming the file at
//! fault. The kills come from `strace`'s syscall fault injection (a trial is reported as
//! ignored, with the reason, where strace cannot trace here).

mod common;

use common::write;
use libtest_mimic::{Arguments, Trial};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

fn main() {
    let args = Arguments::from_args();
    let trials = vec![
        common::real_trial_in(
            &args,
            "a_fit_killed_at_every_step_leaves_one_fits_whole_pair",
            strace,
            fit_killed_at_every_step,
        ),
        common::real_trial_in(
            &args,
            "a_sweep_killed_at_every_save_resumes_with_every_run_it_saved",
            strace,
            sweep_killed_at_every_save,
        ),
        common::real_trial_in(
            &args,
            "a_launched_campaign_killed_at_its_saves_resumes_to_its_end_measuring_no_count_twice",
            strace,
            campaign_killed_at_its_saves,
        ),
        common::real_trial_in(
            &args,
            "a_fit_stopped_by_sigterm_sighup_or_ctrl_c_leaves_no_lock_file",
            strace,
            stopped_fits_leave_no_locks,
        ),
        Trial::test(
            "two_fits_and_a_plan_at_once_leave_one_fits_whole_pair",
            || {
                two_writers_and_a_reader();
                Ok(())
            },
        ),
        Trial::test(
            "fuzzed_journals_are_refused_or_taken_never_merged_wrongly",
            || {
                fuzzed_journals();
                Ok(())
            },
        ),
        Trial::test(
            "hostile_files_at_lock_names_are_refused_or_taken_over",
            || {
                hostile_locks();
                Ok(())
            },
        ),
        Trial::test("hostile_set_markers_are_refused_and_never_acted_on", || {
            hostile_markers();
            Ok(())
        }),
    ];
    libtest_mimic::run(&args, trials).exit();
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// strace, where it can trace a child here.
fn strace() -> Result<PathBuf, String> {
    let ok = Command::new("strace")
        .args(["-f", "-o", "/dev/null", "true"])
        .output()
        .map_err(|e| format!("strace is not installed ({e})"))?;
    match ok.status.success() {
        true => Ok(PathBuf::from("strace")),
        false => Err("strace cannot trace here (ptrace refused)".into()),
    }
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_jouleplan")
}

/// `jouleplan ARGS` in `dir` outside Slurm, killed after 60 s.
fn jp(dir: &Path, args: &[&str]) -> Output {
    assert_cmd::Command::new(bin())
        .current_dir(dir)
        .env_remove("SLURM_JOB_ID")
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap()
}

/// `jouleplan ARGS` in `dir` under strace, killed (SIGKILL) at the `k`-th `syscall`.
fn killed_at(dir: &Path, syscall: &str, k: u32, args: &[&str]) -> Output {
    signalled_at(dir, (syscall, k), "KILL", args)
}

/// `jouleplan ARGS` in `dir` under strace, sent `signal` (`TERM`, `HUP`, `INT`) at the `k`-th
/// `syscall`.
fn signalled_at(dir: &Path, (syscall, k): (&str, u32), signal: &str, args: &[&str]) -> Output {
    let inject = format!("inject={syscall}:signal={signal}:when={k}");
    Command::new("strace")
        .current_dir(dir)
        .env_remove("SLURM_JOB_ID")
        .args([
            "-f",
            "-o",
            "/dev/null",
            "-e",
            &format!("trace={syscall}"),
            "-e",
        ])
        .arg(inject)
        .arg(bin())
        .args(args)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn fit_args(program: &str) -> Vec<String> {
    [
        "fit",
        "--measured",
        "runs.csv",
        "--machine",
        "in.toml",
        "--program",
        program,
        "--profile-out",
        "p.json",
        "--machine-out",
        "m.toml",
    ]
    .map(String::from)
    .to_vec()
}

/// The program and fit id of the pair in `d`, once `plan` has read it (exit 0 asserted).
fn planned_pair(d: &Path, why: &str) -> (String, String) {
    let o = jp(
        d,
        &[
            "plan",
            "-q",
            "--profile",
            "p.json",
            "--machine",
            "m.toml",
            "--nodes",
            "1",
        ],
    );
    assert!(o.status.success(), "{why}: plan: {}", text(&o));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("p.json")).unwrap()).unwrap();
    let m: toml::Value =
        toml::from_str(&std::fs::read_to_string(d.join("m.toml")).unwrap()).unwrap();
    let id = doc["fit_id"].as_str().unwrap().to_string();
    assert_eq!(
        m["sources"]["fit_id"].as_str(),
        Some(id.as_str()),
        "{why}: one fit's pair"
    );
    (doc["program"].as_str().unwrap().to_string(), id)
}

/// Hostile round 6: a fit stopped by a signal it can catch, at its first fsync (writing its
/// pair, its locks held), left `.p.json.jouleplan-lock` and `.m.toml.jouleplan-lock` behind.
/// It removes the lock files it made, then ends by the signal.
fn stopped_fits_leave_no_locks(_: PathBuf) {
    use std::os::unix::process::ExitStatusExt;
    for (signal, number) in [("TERM", 15), ("HUP", 1), ("INT", 2)] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        common::two_frequency_fit_inputs(d);
        let args = fit_args("p");
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = signalled_at(d, ("fsync", 1), signal, &args);
        assert_eq!(o.status.signal(), Some(number), "SIG{signal}: {}", text(&o));
        let locks: Vec<String> = leftovers(d)
            .into_iter()
            .filter(|n| n.ends_with(".jouleplan-lock"))
            .collect();
        assert!(locks.is_empty(), "SIG{signal} left {locks:?}");
        // Nothing half written: the next fit writes the pair whole.
        let o = jp(d, &args);
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(planned_pair(d, signal).0, "p");
    }
}

/// Names in `d` besides the inputs and the pair.
fn leftovers(d: &Path) -> Vec<String> {
    let keep = ["in.toml", "runs.csv", "p.json", "m.toml"];
    std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !keep.contains(&n.as_str()))
        .collect()
}

fn fit_killed_at_every_step(_: PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    common::two_frequency_fit_inputs(d);
    let o = jp(
        d,
        &fit_args("p0")
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert!(o.status.success(), "{}", text(&o));
    let mut was = "p0".to_string();
    let (mut round, mut killed) = (0, 0);
    for (syscall, most) in [
        ("rename", 3),
        ("renameat", 3),
        ("renameat2", 3),
        ("linkat", 3),
        ("unlink", 4),
        ("fsync", 8),
    ] {
        for k in 1..=most {
            round += 1;
            let program = format!("p{round}");
            let args = fit_args(&program);
            let o = killed_at(
                d,
                syscall,
                k,
                &args.iter().map(String::as_str).collect::<Vec<_>>(),
            );
            let why = format!("killed at {syscall} #{k}");
            killed += usize::from(o.status.code() != Some(0));
            let (now, _) = planned_pair(d, &why);
            if o.status.success() {
                assert_eq!(now, program, "{why}: finished, so the new pair");
            } else {
                assert!(now == program || now == was, "{why}: {now} is neither pair");
            }
            was = now;
        }
    }
    assert!(killed >= 12, "only {killed} of {round} fits were killed");
    // The next writer removes what the kills left.
    let o = jp(
        d,
        &fit_args("last")
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(planned_pair(d, "last").0, "last");
    assert!(leftovers(d).is_empty(), "{:?}", leftovers(d));
}

fn runs_of(p: &Path) -> Vec<serde_json::Value> {
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    doc["sweep"]["record"]["runs"].as_array().unwrap().clone()
}

fn sweep_killed_at_every_save(_: PathBuf) {
    let args = [
        "profile", "--cores", "1", "--repeat", "4", "-o", "p.json", "--", "true",
    ];
    for (syscall, most) in [
        ("fdatasync", 4),
        ("renameat", 5),
        ("ftruncate", 4),
        ("unlink", 2),
    ] {
        for k in 1..=most {
            let dir = tempfile::tempdir().unwrap();
            let d = dir.path();
            let why = format!("killed at {syscall} #{k}");
            let o = killed_at(d, syscall, k, &args);
            assert!(!o.status.success(), "{why}: it was killed: {}", text(&o));
            if syscall == "unlink" && k == 2 {
                // Killed as it removed its lock, the sweep done: nothing to resume.
                assert_eq!(runs_of(&d.join("p.json")).len(), 4, "{why}");
                continue;
            }
            if !d.join("p.json").exists() {
                continue; // killed before the profile was first written: nothing measured
            }
            let mut resumed = args.to_vec();
            resumed.insert(7, "--resume");
            let o = jp(d, &resumed);
            assert!(o.status.success(), "{why}: {}", text(&o));
            let runs = runs_of(&d.join("p.json"));
            let mut repeats: Vec<u64> =
                runs.iter().map(|r| r["repeat"].as_u64().unwrap()).collect();
            repeats.sort_unstable();
            assert_eq!(repeats, [1, 2, 3, 4], "{why}: every repeat once");
            if syscall == "fdatasync" {
                // The k-th append was written before its fsync was killed: none before it lost.
                let out = text(&o);
                let kept = (k - 1).to_string() + " already there";
                let more = (k..=4).any(|n| out.contains(&format!("{n} already there")));
                assert!(out.contains(&kept) || more, "{why}: {out}");
            }
        }
    }
}

/// `profile --nodes auto` launching a program that takes `0.02 + 0.4 / n` s on `n` nodes
/// through a hostfile of 8 names (the launcher runs it here), against the machine file
/// `machine init` writes for this node with 8 nodes and a network.
fn campaign_args(d: &Path, resume: bool) -> Vec<String> {
    if !d.join("m.toml").exists() {
        let o = jp(d, &["machine", "init", "-o", "m.toml"]);
        assert!(o.status.success(), "{}", text(&o));
        let m = std::fs::read_to_string(d.join("m.toml")).unwrap();
        let m = m.replacen("\nnodes = 1\n", "\nnodes = 8\n", 1)
            + "\n[network]\nlatency_s = 1e-6\nbandwidth_bytes_per_s = 1e10\n";
        std::fs::write(d.join("m.toml"), m).unwrap();
        std::fs::write(d.join("hosts"), "a\nb\nc\nd\ne\nf\ng\nh\n").unwrap();
    }
    let mut a: Vec<&str> = vec![
        "profile",
        "--nodes",
        "auto",
        "--cores",
        "1",
        "--json",
        "--hostfile",
        "hosts",
        "--launcher",
        "env JP_NODES={nodes}",
        "--machine",
        "m.toml",
        "--measured-out",
        "runs.csv",
        "-o",
        "p.json",
    ];
    if resume {
        a.push("--resume");
    }
    a.extend([
        "--",
        "/bin/sh",
        "-c",
        "exec sleep $(awk \"BEGIN{print 0.02 + 0.4 / $JP_NODES}\")",
    ]);
    a.into_iter().map(String::from).collect()
}

/// The node counts of the campaign's runs CSV, sorted.
fn csv_counts(d: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string(d.join("runs.csv")).unwrap();
    let mut v: Vec<u64> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    v.sort_unstable();
    v
}

fn campaign_killed_at_its_saves(_: PathBuf) {
    for k in [1, 2, 4, 7, 11, 16] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let why = format!("killed at renameat #{k}");
        let args = campaign_args(d, false);
        let o = killed_at(
            d,
            "renameat",
            k,
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
        );
        if o.status.success() {
            // The campaign ended before its k-th save (how many steps it takes depends on
            // the times measured, which a loaded machine moves): nothing was killed here.
            continue;
        }
        let args = campaign_args(d, true);
        let o = jp(d, &args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(o.status.success(), "{why}: resumed: {}", text(&o));
        assert!(
            text(&o).contains("campaign ended: stable"),
            "{why}: {}",
            text(&o)
        );
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let counts: Vec<u64> = v["measured_nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_u64().unwrap())
            .collect();
        assert!([1, 2, 4].iter().all(|n| counts.contains(n)), "{why}: {v}");
        let mut once = csv_counts(d);
        once.dedup();
        assert_eq!(once, counts, "{why}: every count measured is in the CSV");
        // The record of the runs (beside -o): a run a row of the CSV, none made twice.
        let ok: Vec<(u64, u64)> = runs_of(&d.join("p.sweep.json"))
            .iter()
            .filter(|r| r["ok"] == true)
            .map(|r| {
                (
                    r["nodes"].as_u64().unwrap_or(1),
                    r["repeat"].as_u64().unwrap(),
                )
            })
            .collect();
        let mut runs: Vec<u64> = ok.iter().map(|r| r.0).collect();
        runs.sort_unstable();
        assert_eq!(runs, csv_counts(d), "{why}: no run lost");
        let distinct: std::collections::BTreeSet<_> = ok.iter().collect();
        assert_eq!(distinct.len(), ok.len(), "{why}: no run made twice");
    }
}

fn two_writers_and_a_reader() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    common::two_frequency_fit_inputs(d);
    for round in 0..8 {
        let spawn = |args: Vec<String>| {
            Command::new(bin())
                .current_dir(d)
                .args(args)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let a = spawn(fit_args(&format!("a{round}")));
        let b = spawn(fit_args(&format!("b{round}")));
        let reader = spawn(
            [
                "plan",
                "-q",
                "--profile",
                "p.json",
                "--machine",
                "m.toml",
                "--nodes",
                "1",
            ]
            .map(String::from)
            .to_vec(),
        );
        for (who, child) in [("a", a), ("b", b)] {
            let o = child.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                o.status.success() || err.contains("being written by another jouleplan"),
                "{who}{round}: {err}"
            );
        }
        let o = reader.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        // The reader sees a whole pair, none yet, or a set being placed right now: either
        // one it cannot settle yet, or, between the renames of another fit, a pair of two
        // fits, which it refuses (never plans).
        assert!(
            o.status.success()
                || err.contains("cannot read")
                || err.contains("No such file")
                || err.contains("cannot be settled now")
                || err.contains("were written by two different fits"),
            "plan during two fits: {err}"
        );
        let (now, _) = planned_pair(d, &format!("round {round}"));
        assert!(now.ends_with(&round.to_string()), "{now}");
    }
}

/// A tiny deterministic generator (xorshift), so a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Hostile journals: each a mutation of a line this sweep could have written (byte flips,
/// cuts, junk, other sweeps, other points, other indices).
fn journals(good: &str, other_id: &str) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = vec![
        format!("{good}\n{good}\n").into_bytes(),
        good.replace("\"index\":1", "\"index\":7").into_bytes(),
        good.replace("\"index\":1", "\"index\":0").into_bytes(),
        good.replace("\"cores\":1", "\"cores\":2").into_bytes(),
        good.replace("\"cores\":1", "\"cores\":0").into_bytes(),
        good.replace("\"repeat\":2", "\"repeat\":9").into_bytes(),
        format!("{}\n", good.split("\"sweep\"").next().unwrap()).into_bytes(),
        vec![0u8; 4096],
        vec![0xff; 100_000],
        b"\n\n\n".to_vec(),
    ];
    let id_at = good.find("\"sweep\":\"").unwrap() + 9;
    let mut other = good.to_string();
    other.replace_range(id_at..id_at + 16, other_id);
    out.push(format!("{other}\n").into_bytes());
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..24 {
        let mut b = format!("{good}\n").into_bytes();
        for _ in 0..1 + rng.below(3) {
            let at = rng.below(b.len());
            b[at] = (rng.next() & 0xff) as u8;
        }
        if rng.below(3) == 0 {
            b.truncate(rng.below(b.len()));
        }
        out.push(b);
    }
    out
}

fn fuzzed_journals() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = jp(
        d,
        &["profile", "--cores", "1", "-o", "a.json", "--", "true"],
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = jp(
        d,
        &["profile", "--cores", "1", "-o", "b.json", "--", "true"],
    );
    assert!(o.status.success(), "{}", text(&o));
    let profile = std::fs::read(d.join("a.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&profile).unwrap();
    let rec = &doc["sweep"]["record"];
    let other: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("b.json")).unwrap()).unwrap();
    let other_id = other["sweep"]["record"]["id"].as_str().unwrap().to_string();
    let mut run = rec["runs"][0].clone();
    run["repeat"] = 2.into();
    let good = serde_json::json!({"index": 1, "sweep": rec["id"], "run": run}).to_string();
    let journal = d.join("a.json.journal");
    for (i, bytes) in journals(&good, &other_id).into_iter().enumerate() {
        std::fs::write(d.join("a.json"), &profile).unwrap();
        std::fs::write(&journal, &bytes).unwrap();
        let o = jp(
            d,
            &[
                "profile", "--cores", "1", "--repeat", "2", "-o", "a.json", "--resume", "--",
                "true",
            ],
        );
        let why = format!(
            "journal {i}: {}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
        );
        assert_ne!(o.status.code(), None, "{why}: killed (a hang)");
        if o.status.success() {
            let runs = runs_of(&d.join("a.json"));
            let mut repeats: Vec<u64> =
                runs.iter().map(|r| r["repeat"].as_u64().unwrap()).collect();
            repeats.sort_unstable();
            assert_eq!(repeats, [1, 2], "{why}: {}", text(&o));
            assert!(
                runs.iter().all(|r| r["cores"] == 1),
                "{why}: only its own points"
            );
        } else {
            let err = text(&o);
            assert!(
                err.contains("a.json.journal"),
                "{why}: names the journal: {err}"
            );
            assert_eq!(
                std::fs::read(d.join("a.json")).unwrap(),
                profile,
                "{why}: kept"
            );
            assert_eq!(
                std::fs::read(&journal).unwrap(),
                bytes,
                "{why}: journal kept"
            );
        }
        let _ = std::fs::remove_file(&journal);
    }
}

/// Plants something at `lock`: a link to the victim, a hard link to it, a dangling link, a
/// pipe, a folder, an empty file, a process number, text.
fn plant(kind: usize, lock: &Path, victim: &Path) {
    match kind {
        0 => std::os::unix::fs::symlink(victim, lock).unwrap(),
        1 => std::fs::hard_link(victim, lock).unwrap(),
        2 => std::os::unix::fs::symlink("/nonexistent/x", lock).unwrap(),
        3 => {
            let c = std::ffi::CString::new(s(lock)).unwrap();
            // SAFETY: a NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        }
        4 => std::fs::create_dir(lock).unwrap(),
        5 => std::fs::write(lock, "").unwrap(),
        6 => std::fs::write(lock, "4194305").unwrap(),
        _ => std::fs::write(lock, "do not delete").unwrap(),
    }
}

fn hostile_locks() {
    for kind in 0..8 {
        for cmd in ["profile", "fit", "report"] {
            let dir = tempfile::tempdir().unwrap();
            let d = dir.path();
            common::two_frequency_fit_inputs(d);
            let victim = write(d, "victim.txt", "precious\n");
            let inputs = common::inputs();
            let (out, args): (&str, Vec<String>) = match cmd {
                "profile" => (
                    "p.json",
                    ["profile", "--cores", "1", "-o", "p.json", "--", "true"]
                        .map(String::from)
                        .to_vec(),
                ),
                "fit" => ("p.json", fit_args("x")),
                _ => {
                    let a = [
                        "report",
                        "--machine",
                        &inputs.machine,
                        "--profile",
                        &inputs.profile,
                        "--out",
                        "rep",
                    ];
                    let o = jp(d, &a);
                    assert!(o.status.success(), "{}", text(&o));
                    std::fs::remove_dir_all(d.join("rep")).unwrap();
                    ("rep", a.map(String::from).to_vec())
                }
            };
            let name = format!(".{out}.jouleplan-lock");
            let lock = d.join(&name);
            plant(kind, &lock, &victim);
            let o = jp(d, &args.iter().map(String::as_str).collect::<Vec<_>>());
            let why = format!("{cmd} with lock kind {kind}: {}", text(&o));
            assert_eq!(
                std::fs::read_to_string(&victim).unwrap(),
                "precious\n",
                "{why}"
            );
            match kind {
                5 | 6 => {
                    assert!(o.status.success(), "{why}");
                    assert!(
                        std::fs::symlink_metadata(&lock).is_err(),
                        "{why}: replaced, then removed"
                    );
                }
                _ => {
                    assert_eq!(o.status.code(), Some(1), "{why}");
                    assert!(text(&o).contains(&name), "{why}: names the lock");
                    assert!(
                        std::fs::symlink_metadata(&lock).is_ok(),
                        "{why}: left where it was"
                    );
                }
            }
        }
    }
}

fn hostile_markers() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    common::two_frequency_fit_inputs(d);
    let o = jp(
        d,
        &fit_args("a").iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert!(o.status.success(), "{}", text(&o));
    let victim = write(d, "victim.txt", "precious\n");
    let abs = std::fs::canonicalize(d).unwrap();
    let decoy = write(d, ".victim.txt.AAAAAA.jouleplan-tmp", "attacker's\n");
    let ino = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&decoy).unwrap());
    let naming = |target: &Path| {
        serde_json::json!({"format": "jouleplan-set/1", "files": [
            {"target": target, "new": ".victim.txt.AAAAAA.jouleplan-tmp", "new_inode": ino, "old": null}
        ]})
        .to_string()
    };
    let marker = d.join(".p.json.jouleplan-set");
    let before = (
        std::fs::read(d.join("p.json")).unwrap(),
        std::fs::read(d.join("m.toml")).unwrap(),
    );
    let hostile: Vec<Box<dyn Fn()>> = vec![
        Box::new(|| std::fs::write(&marker, "{not json").unwrap()),
        Box::new(|| std::fs::write(&marker, vec![b'x'; 1 << 20]).unwrap()),
        Box::new(|| std::fs::write(&marker, naming(&abs.join("victim.txt"))).unwrap()),
        Box::new(|| std::os::unix::fs::symlink(&victim, &marker).unwrap()),
        Box::new(|| std::fs::hard_link(&victim, &marker).unwrap()),
        Box::new(|| std::fs::create_dir(&marker).unwrap()),
    ];
    for (i, plant) in hostile.iter().enumerate() {
        plant();
        let plan = [
            "plan",
            "-q",
            "--profile",
            "p.json",
            "--machine",
            "m.toml",
            "--nodes",
            "1",
        ];
        for args in [plan.map(String::from).to_vec(), fit_args("b")] {
            let o = jp(d, &args.iter().map(String::as_str).collect::<Vec<_>>());
            let why = format!("marker {i}, {}: {}", args[0], text(&o));
            assert!(!o.status.success(), "{why}");
            assert!(
                text(&o).contains(".p.json.jouleplan-set"),
                "{why}: names the marker"
            );
            assert_eq!(
                std::fs::read_to_string(&victim).unwrap(),
                "precious\n",
                "{why}"
            );
            assert!(decoy.exists(), "{why}: the decoy was never moved");
            let now = (
                std::fs::read(d.join("p.json")).unwrap(),
                std::fs::read(d.join("m.toml")).unwrap(),
            );
            assert!(now == before, "{why}: the pair is untouched");
        }
        match std::fs::symlink_metadata(&marker).unwrap().is_dir() {
            true => std::fs::remove_dir(&marker).unwrap(),
            false => std::fs::remove_file(&marker).unwrap(),
        }
    }
    let o = jp(
        d,
        &fit_args("b").iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert!(o.status.success(), "{}", text(&o));
}
