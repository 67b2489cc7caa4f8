//! Bad input through the real binary: each case gives a clear message naming the file, key or
//! flag and what was expected, and a deliberate exit code (2 bad input, 3 infeasible query).

mod common;

use common::{MACHINE, jouleplan as run, jouleplan_in as run_in, profile_json, write};
use std::path::{Path, PathBuf};

struct Files {
    _dir: tempfile::TempDir,
    machine: PathBuf,
    profile: PathBuf,
}

fn files(machine: &str, profile: &str) -> Files {
    let dir = tempfile::tempdir().unwrap();
    let machine = write(dir.path(), "machine.toml", machine);
    let profile = write(dir.path(), "profile.json", profile);
    Files {
        _dir: dir,
        machine,
        profile,
    }
}

fn plan_with(f: &Files, extra: &[&str]) -> (i32, String, String) {
    let m = f.machine.to_str().unwrap();
    let p = f.profile.to_str().unwrap();
    let mut args = vec!["plan", "--machine", m, "--profile", p];
    args.extend_from_slice(extra);
    run(&args)
}

fn assert_bad(result: (i32, String, String), needles: &[&str]) {
    let (code, out, err) = result;
    assert_eq!(code, 2, "exit code; stderr: {err}");
    assert!(out.is_empty(), "no partial output on bad input: {out}");
    assert!(err.starts_with("Error: "), "{err}");
    for n in needles {
        assert!(err.contains(n), "stderr lacks {n:?}: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn missing_machine_key_names_file_and_key() {
    let f = files(
        &MACHINE.replace("cores_per_node = 8\n", ""),
        &profile_json(),
    );
    assert_bad(
        plan_with(&f, &[]),
        &["machine.toml", "machine.cores_per_node", "missing"],
    );
}

#[test]
fn unknown_key_is_rejected_not_ignored() {
    let f = files(
        &MACHINE.replace("idle_w = 50.0", "idle_watts = 50.0"),
        &profile_json(),
    );
    assert_bad(
        plan_with(&f, &[]),
        &["power.idle_w", "in its place", "unknown key `idle_watts`"],
    );
    let f = files(
        &MACHINE.replace("cv2 = 1.0", "cv2 = 1.0\nlatency_us = 3"),
        &profile_json(),
    );
    assert_bad(
        plan_with(&f, &[]),
        &["network.latency_us", "unknown key", "latency_s"],
    );
}

#[test]
fn frequencies_in_mhz_are_a_unit_error() {
    let f = files(
        &MACHINE.replace("[1.0, 2.0]", "[1000.0, 2000.0]"),
        &profile_json(),
    );
    assert_bad(
        plan_with(&f, &[]),
        &["machine.frequencies_ghz[0]", "from 0.01 to 20"],
    );
}

#[test]
fn negative_and_nan_values_are_rejected() {
    let f = files(
        &MACHINE.replace("memory_w = 6.0", "memory_w = -6.0"),
        &profile_json(),
    );
    assert_bad(
        plan_with(&f, &[]),
        &["power.memory_w", "from 0 to 100000", "-6"],
    );
    let f = files(
        &MACHINE.replace("memory_w = 6.0", "memory_w = nan"),
        &profile_json(),
    );
    assert_bad(plan_with(&f, &[]), &["power.memory_w", "finite"]);
    let bad = profile_json().replacen("\"utilisation\":0.9", "\"utilisation\":1.5", 1);
    assert_ne!(bad, profile_json());
    let f = files(MACHINE, &bad);
    assert_bad(
        plan_with(&f, &[]),
        &["profile.json", "baseline[0].utilisation", "from"],
    );
}

#[test]
fn wrong_list_length_names_the_expectation() {
    let f = files(
        &MACHINE.replace("core_active_w = [5.0, 10.0]", "core_active_w = [5.0]"),
        &profile_json(),
    );
    assert_bad(
        plan_with(&f, &[]),
        &["power.core_active_w", "one per frequency"],
    );
}

#[test]
fn syntax_errors_carry_a_line() {
    let f = files("[machine\nname = 1", &profile_json());
    assert_bad(
        plan_with(&f, &[]),
        &["machine.toml", "not valid TOML", "line"],
    );
    let f = files(
        MACHINE,
        "{\"format\": \"jouleplan-profile/1\",\n \"program\": }",
    );
    assert_bad(
        plan_with(&f, &[]),
        &["profile.json", "not valid JSON", "line 2"],
    );
}

#[test]
fn missing_file_is_named() {
    assert_bad(
        run(&["plan", "--machine", "/nonexistent/m.toml"]),
        &["/nonexistent/m.toml", "cannot read"],
    );
    assert_bad(
        run(&["plan", "--machine", "no-such-bundled-machine"]),
        &["--machine", "h100-gpu"],
    );
}

#[test]
fn empty_and_out_of_range_sets() {
    let f = files(MACHINE, &profile_json());
    assert_bad(
        plan_with(&f, &["--nodes", ""]),
        &["--nodes", "comma-separated"],
    );
    assert_bad(plan_with(&f, &["--nodes", "8-2"]), &["--nodes", "low-high"]);
    assert_bad(
        plan_with(&f, &["--cores", "1-9"]),
        &["--cores", "from 1 to 8", "9"],
    );
    assert_bad(plan_with(&f, &["--gpus", "3"]), &["--gpus", "from 0 to 2"]);
}

#[test]
fn unknown_frequency_lists_the_machine_set() {
    let f = files(MACHINE, &profile_json());
    assert_bad(
        plan_with(&f, &["--freqs", "1.5"]),
        &["--freqs", "1, 2", "1.5"],
    );
    assert_bad(plan_with(&f, &["--freqs", "2000"]), &["--freqs", "2000MHz"]);
    assert_bad(plan_with(&f, &["--freqs", "1.2-1.8"]), &["--freqs"]);
}

#[test]
fn durations_and_energies_need_units() {
    let f = files(MACHINE, &profile_json());
    assert_bad(
        plan_with(&f, &["--deadline", "90"]),
        &["--deadline", "90s, 500 ms, 15m, 2h or 1h30m"],
    );
    assert_bad(plan_with(&f, &["--budget", "5W"]), &["--budget", "kWh"]);
    assert_bad(
        plan_with(&f, &["--slowdown=-5%"]),
        &["--slowdown", "fraction"],
    );
}

#[test]
fn a_slurm_time_with_minutes_or_seconds_past_59_is_no_deadline() {
    let f = files(MACHINE, &profile_json());
    for nonsense in [
        "90:99",
        "00:60",
        "1:60:00",
        "0:0:61",
        "1-25",
        "1-24:00:00",
        "1-2:60",
    ] {
        assert_bad(
            plan_with(&f, &["--deadline", nonsense]),
            &["--deadline", "below 60", nonsense],
        );
    }
    // Slurm's leading field is any whole number: 90:00 is 90 minutes, 100:00:00 100 hours.
    for (time, shown) in [
        ("90:00", "1h30m"),
        ("100:00:00", "100h00m"),
        ("1-23:59:59", "47h59m"),
    ] {
        let (code, out, err) = plan_with(&f, &["--deadline", time]);
        assert_eq!(code, 0, "{time}: {err}");
        assert!(
            out.contains(&format!("finishes within {shown}")),
            "{time}: {out}"
        );
    }
}

#[test]
fn a_missing_baseline_point_is_named() {
    // Drop every 8-core point: outside the measured core counts nothing is extrapolated, so a
    // space asked to hold 8 cores needs one.
    let mut v: serde_json::Value = serde_json::from_str(&profile_json()).unwrap();
    v["baseline"]
        .as_array_mut()
        .unwrap()
        .retain(|p| p["cores"] != 8);
    let f = files(MACHINE, &v.to_string());
    assert_bad(
        plan_with(&f, &["--cores", "1-8"]),
        &[
            "profile.json",
            "no baseline point for 8 cores at 1 GHz",
            "--cores",
        ],
    );
    // Leaving it out of the search works; with no --cores it is left out, visibly.
    let (code, _, err) = plan_with(&f, &["--cores", "1-7"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = plan_with(&f, &[]);
    assert_eq!(code, 0, "{err}");
    // Notes go to standard error; standard output holds the plan alone.
    assert!(err.contains("note: cores 8 left out"), "{err}");
    assert!(!out.contains("note:"), "{out}");
}

#[test]
fn past_jobs_without_gpus_against_a_gpu_profile_name_the_gpu_count_as_the_cause() {
    // sacct records no GPUs: the bundled GPU profile has points at 1 and 2 cores, all with a
    // GPU. The GPU count is why, not a missing core count.
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sacct = repo.join("tests/data/sacct/localhost-sleep.txt");
    let (code, _, err) = run(&["validate", "--sacct", sacct.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "no baseline point for 1 core at 2.1 GHz without GPUs: the GPU count does not match \
             (the profile's points for 1 core at 2.1 GHz were measured with 1 GPU per node"
        ),
        "{err}"
    );
    assert!(!err.contains("1 cores"), "{err}");
}

#[test]
fn a_gpu_clock_the_gpu_cannot_run_lists_the_clocks_it_can() {
    let dir = tempfile::tempdir().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let h100 = std::fs::read_to_string(repo.join("models/h100-node.toml")).unwrap();
    let m = write(
        dir.path(),
        "m.toml",
        &h100.replacen(
            "[machine]\n",
            "[machine]\ngpu_clocks_mhz = [345, 990, 1980]\ngpu_memory_clock_mhz = 2619\n",
            1,
        ),
    );
    let (code, out, err) = run(&[
        "predict",
        "--machine",
        m.to_str().unwrap(),
        "--config",
        "1,16,2.1,1,1000",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains(
            "Error: --config: (1, 16, 2.1 GHz, 1, 1000 MHz) sets the GPU clock to 1000 MHz (its \
             fifth value): 1000 MHz is not one the GPU runs at: machine `h100-node` lists 345, \
             990 and 1980 MHz (nearest: 990, 1980 MHz) in gpu_clocks_mhz"
        ),
        "{err}"
    );
    assert!(!err.contains("got `"), "{err}");
    // Where no clock list is given, a profile without a clock law says to leave it out.
    let (code, _, err) = run(&["predict", "--config", "1,16,2.1,1,1000"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("has no GPU clock law") && err.contains("leave the fifth value out"),
        "{err}"
    );
    assert!(!err.contains("got `"), "{err}");
}

#[test]
fn a_core_count_between_measured_ones_is_derived_and_says_so() {
    let mut v: serde_json::Value = serde_json::from_str(&profile_json()).unwrap();
    v["baseline"]
        .as_array_mut()
        .unwrap()
        .retain(|p| p["cores"] != 3);
    let f = files(MACHINE, &v.to_string());
    let (code, _, err) = plan_with(&f, &["--cores", "1-8"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("derived for cores 3 that the profile did not measure"),
        "{err}"
    );
    assert!(err.contains("core law at 2 GHz, 0 GPUs"), "{err}");
}

#[test]
fn infeasible_deadline_exits_3_and_names_the_nearest_point() {
    let f = files(MACHINE, &profile_json());
    let (code, out, _) = plan_with(&f, &["--deadline", "1ms"]);
    assert_eq!(code, 3);
    assert!(
        out.contains("No recommendation: infeasible: no configuration finishes within 1.00 ms"),
        "{out}"
    );
    assert!(out.contains("nearest front point is the fastest"), "{out}");
    let (code, out, _) = plan_with(&f, &["--budget", "1J", "--json"]);
    assert_eq!(code, 3);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["recommendation"].is_null());
    assert_eq!(v["query"]["feasible"], false);
    assert!(
        v["query"]["reason"]
            .as_str()
            .unwrap()
            .contains("least-energy one")
    );
}

#[test]
fn deadline_and_budget_together_name_both_sides_when_infeasible() {
    let f = files(MACHINE, &profile_json());
    let (_, out, _) = plan_with(&f, &["--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let front = v["front"].as_array().unwrap();
    assert!(front.len() >= 3);
    // A deadline met only by a fast (energy-hungry) point and a budget met only by slow ones.
    let fast = &front[0];
    let slow = &front[front.len() - 1];
    let deadline = format!("{}s", fast["time_s"].as_f64().unwrap() * 1.0001);
    let budget = format!("{}J", slow["energy_j"].as_f64().unwrap() * 1.0001);
    let (code, out, _) = plan_with(&f, &["--deadline", &deadline, "--budget", &budget]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("nothing meets both"), "{out}");
    assert!(out.contains("the least energy within the time is"), "{out}");
    assert!(out.contains("the fastest within the budget is"), "{out}");
}

#[test]
fn help_and_version_succeed() {
    assert_eq!(run(&["--help"]).0, 0);
    assert_eq!(run(&["--version"]).0, 0);
    assert_eq!(run(&["plan", "--no-such-flag"]).0, 2);
}

#[test]
fn predict_rejects_a_config_outside_the_machine() {
    let f = files(MACHINE, &profile_json());
    let m = f.machine.to_str().unwrap();
    let p = f.profile.to_str().unwrap();
    let (code, _, err) = run(&[
        "predict",
        "--config",
        "17,4,2.0",
        "--machine",
        m,
        "--profile",
        p,
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("nodes from 1 to 16"), "{err}");
    let (code, _, err) = run(&[
        "predict",
        "--config",
        "4,4,1.5",
        "--machine",
        m,
        "--profile",
        p,
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("1, 2 GHz"), "{err}");
    let _ = Path::new(m);
}

#[test]
fn node_counts_too_small_for_the_memory_footprint_are_left_out() {
    let machine = MACHINE.replace(
        "gpus_per_node = 2",
        "gpus_per_node = 2\nmemory_per_node_gib = 64.0",
    );
    let mut v: serde_json::Value = serde_json::from_str(&profile_json()).unwrap();
    v["memory_footprint_gib"] = 200.0.into();
    let f = files(&machine, &v.to_string());
    let (code, out, err) = plan_with(&f, &["--json"]);
    assert_eq!(code, 0, "{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["evaluated"], 13 * 8 * 2); // nodes 4-16
    assert!(
        j["front"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["nodes"].as_u64().unwrap() >= 4)
    );
    assert!(
        j["notes"][0]
            .as_str()
            .unwrap()
            .contains("3 node counts below 4 left out")
    );
    let (code, _, err) = plan_with(&f, &["--nodes", "1-3"]);
    assert_eq!(code, 2);
    assert!(err.contains("needs at least 4 nodes"), "{err}");
}

#[test]
fn every_number_a_flag_takes_is_checked_once_nan_and_infinities_included() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let m = write(d, "m.toml", common::MACHINE);
    let runs = write(
        d,
        "runs.csv",
        "nodes,cores,freq_hz,gpus,time_s\n1,8,2e9,0,10\n",
    );
    for v in ["NaN", "-1", "-inf", "inf", "0"] {
        let hours = format!("--node-hours={v}");
        let (code, _, err) = run_in(
            d,
            &[
                "profile",
                "--nodes",
                "auto",
                "--replay",
                runs.to_str().unwrap(),
                "--machine",
                m.to_str().unwrap(),
                "-o",
                "p.json",
                "--measured-out",
                "r.csv",
                &hours,
            ],
        );
        assert_eq!(code, 2, "{v}: {err}");
        assert!(
            err.contains("--node-hours") && err.contains("finite"),
            "{v}: {err}"
        );
        let iterations = format!("--iterations={v}");
        let (code, _, err) = run_in(
            d,
            &[
                "profile",
                "--cores",
                "1",
                &iterations,
                "-o",
                "q.json",
                "--",
                "true",
            ],
        );
        assert_eq!(code, 2, "{v}: {err}");
        assert!(err.contains("--iterations"), "{v}: {err}");
    }
    assert!(!d.join("p.json").exists() && !d.join("q.json").exists());
}

#[test]
fn fit_on_cpu_runs_with_gpu_energy_names_the_columns_the_scope_can_come_from() {
    // The scope came from `energy_scope` = gpu on `energy_j` here; the error once named the
    // `gpu_energy_j` column, which the file does not have.
    let d = tempfile::tempdir().unwrap();
    let m = write(
        d.path(),
        "c.toml",
        "[machine]\nname = \"c\"\nnodes = 1\ncores_per_node = 4\nfrequencies_ghz = [2.0]\n",
    );
    let runs = write(
        d.path(),
        "cpu.csv",
        "nodes,cores,freq_hz,gpus,time_s,energy_j,energy_scope\n\
         1,1,2e9,0,10,1000,gpu\n1,2,2e9,0,5,800,gpu\n1,4,2e9,0,2.6,700,gpu\n",
    );
    let p = d.path().join("p.json");
    let out = run(&[
        "fit",
        "--measured",
        runs.to_str().unwrap(),
        "--machine",
        m.to_str().unwrap(),
        "--profile-out",
        p.to_str().unwrap(),
    ]);
    assert_bad(
        out,
        &[
            "cpu.csv",
            "line 2, column energy_j or gpu_energy_j",
            "energy_scope gpu",
        ],
    );
    assert!(!p.exists(), "nothing is written");
}

#[test]
fn plan_refuses_job_script_flags_without_sbatch_instead_of_dropping_them() {
    // Without --sbatch no job script is written: a command or a job flag would be dropped
    // without a word, so each is refused naming itself and --sbatch.
    for (args, flag) in [
        (vec!["plan", "--", "./app", "in.dat"], "-- COMMAND"),
        (vec!["plan", "--app", "./app"], "--app"),
        (vec!["plan", "--partition", "gpu"], "--partition"),
        (vec!["plan", "--ntasks-per-node", "4"], "--ntasks-per-node"),
        (vec!["plan", "--time-margin", "0.5"], "--time-margin"),
    ] {
        assert_bad(run(&args), &[flag, "--sbatch FILE", "jouleplan slurm"]);
    }
    // With --sbatch the same command writes the script.
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job.sh");
    let (code, _, err) = run(&[
        "plan",
        "-q",
        "--sbatch",
        job.to_str().unwrap(),
        "--partition",
        "gpu",
        "--",
        "./app",
    ]);
    assert_eq!(code, 0, "{err}");
    let script = std::fs::read_to_string(&job).unwrap();
    assert!(script.contains("#SBATCH --partition=gpu"), "{script}");
}
