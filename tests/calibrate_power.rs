//! `jouleplan calibrate power`: the power laws fitted from recorded real measurements (the
//! Xeon Phi SpMV data set's card energy), the micro-benchmarks run through the profile sweep
//! (with a recorded powercap layout whose counters do not move, so the fit must refuse), and
//! the refusal where no energy can be measured (this VM).

mod common;

use common::{jouleplan, s, write};

/// The machine file these tests write into: [`common::VM`] with illustrative power,
/// replaced by the calibration.
fn vm() -> String {
    format!(
        "{}# illustrative values, replaced by the calibration\n[power]\nidle_w = 50.0\n\
         core_active_w = 5.0\ncore_stall_w = 4.0\nmemory_w = 1.0\nnetwork_w = 0.0\n",
        common::VM
    )
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn recorded_card_energy_gives_the_per_frequency_power_of_the_importer() {
    let (phi_profile, _) = common::xeon_phi_fitted();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("phi.toml");
    let (code, text, err) = jouleplan(&[
        "calibrate",
        "power",
        "--machine",
        s(&common::xeon_phi_fitted().1),
        "--output",
        s(&out),
        "--from",
        &format!("program={}", s(&phi_profile)),
    ]);
    assert_eq!(code, 0, "{err}");
    // 399 runs; the importer's independent line per frequency gives 97.70 W idle at 0.6 GHz
    // and 0.7943 W per core at 1.1 GHz; one law over all frequencies gives 97.90 and 0.7987.
    assert!(text.contains("power from 399 runs"), "{text}");
    assert!(text.contains("0.60 GHz: P_idle 97.9045 W"), "{text}");
    assert!(
        text.contains("1.10 GHz: P_idle 112.3142 W, P_core 0.7987 W"),
        "{text}"
    );
    assert!(text.contains("largest 2.81%"), "{text}");
    let m = std::fs::read_to_string(&out).unwrap();
    assert!(m.contains("idle_w = [97.9045, 99.5666"), "{m}");
    assert!(
        m.contains("\"power.idle_w\" = \"measured: `jouleplan calibrate power`"),
        "{m}"
    );
    assert!(m.contains("fit_residual_rel = 0.0281"), "{m}");
    let (code, _, err) = jouleplan(&["machine", "check", s(&out)]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn without_an_energy_meter_it_says_what_why_and_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write(tmp.path(), "m.toml", &vm());
    let (code, _, err) = common::calibrate_power_without_a_meter(&m);
    if std::env::var_os("SLURM_JOB_ID").is_none() {
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("needs the node's energy"), "{err}");
        assert!(
            err.contains("/nonexistent/powercap") && err.contains("--from idle="),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(&m).unwrap(),
            vm(),
            "nothing written"
        );
    }
}

#[test]
fn the_kernels_run_through_the_sweep_resume_and_counters_that_do_not_move_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write(tmp.path(), "m.toml", &vm());
    let args = common::kernels_on_recorded_powercap(tmp.path(), &m, "1,2");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, _, err) = jouleplan(&args);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("idle.json") && err.contains("the energy counters must move"),
        "{err}"
    );
    let rec = tmp.path().join("m.toml.power");
    for k in ["idle", "compute", "memory"] {
        let p: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(rec.join(format!("{k}.json"))).unwrap())
                .unwrap();
        let n = if k == "idle" { 1 } else { 2 };
        assert_eq!(p["baseline"].as_array().unwrap().len(), n, "{k}: {p}");
        let wall = p["baseline"][0]["wall_time_s"].as_f64().unwrap();
        assert!(wall >= 0.5, "{k} ran {wall} s");
    }
    let (code, _, err) = jouleplan(&[&args[..], &["--resume"]].concat());
    assert_eq!(code, 2);
    // Each sweep resumed says the runs it keeps (idle: one point; compute and memory: one a
    // core count) and how many of its planned runs they make, in the singular where one.
    assert_eq!(err.matches("resuming: ").count(), 3, "{err}");
    assert!(
        err.contains("resuming: 1 run kept in")
            && err.contains("1 of 1 planned run done, 0 left to run"),
        "{err}"
    );
    assert!(
        err.contains("resuming: 2 runs kept in") && err.contains("2 of 2 planned runs done"),
        "{err}"
    );
    assert!(!err.contains("1 runs"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&m).unwrap(),
        vm(),
        "nothing written"
    );
}

/// A machine file without `[power]` (as `machine init` writes it) gets the whole section from
/// program runs alone: what they cannot separate (memory, network) is 0, and its source says so.
#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn program_runs_alone_write_a_whole_power_section_into_a_file_without_one() {
    let (phi_profile, phi_machine) = common::xeon_phi_fitted();
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(&phi_machine).unwrap();
    let mut kept = String::new();
    let mut in_power = false;
    for line in text.lines() {
        if line.starts_with('[') {
            in_power = line.trim() == "[power]";
        }
        let source_of_power = line.starts_with("\"power.") || line.starts_with("power =");
        if !in_power && !source_of_power {
            kept += line;
            kept.push('\n');
        }
    }
    let m = write(tmp.path(), "m.toml", &kept);
    let (code, _, err) = jouleplan(&["machine", "check", s(&m)]);
    assert_eq!(code, 2, "no [power] yet: {err}");
    let from = format!("program={}", s(&phi_profile));
    let args = ["calibrate", "power", "--machine", s(&m), "--from", &from];
    let (code, _, err) = jouleplan(&args);
    assert_eq!(code, 0, "{err}");
    let out = std::fs::read_to_string(&m).unwrap();
    assert!(out.contains("memory_w = 0"), "{out}");
    assert!(out.contains("network_w = 0"), "{out}");
    assert!(
        out.contains("memory_w 0 (no memory runs to separate it"),
        "{out}"
    );
    let (code, _, err) = jouleplan(&["machine", "check", s(&m)]);
    assert_eq!(code, 0, "{err}");
}
