//! One energy-scope vocabulary (CPU: RAPL packages and DRAM; node; GPU): a profile records
//! the scope `fit` fitted it on, and `plan` (text, JSON), the reproduction check and the job
//! script name that scope, the job script saying when sacct's whole-node energy is another.

mod common;

use common::{fit_on_1_2_4_8, inputs, jouleplan};
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_profile_fitted_on_cpu_scope_rows_records_the_scope_and_is_never_called_node_energy() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (prof, mach) = fit_on_1_2_4_8(d, "hpgmgfv");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&prof).unwrap()).unwrap();
    assert_eq!(doc["energy_scope"], "cpu");
    let job = d.join("job.sh");
    let (code, out, err) = jouleplan(&[
        "plan",
        "--machine",
        s(&mach),
        "--profile",
        s(&prof),
        "--sbatch",
        s(&job),
        "--app",
        "./hpgmgfv",
    ]);
    assert_eq!(code, 0, "{err}");
    let script = std::fs::read_to_string(&job).unwrap();
    for (what, text) in [
        ("plan", &out),
        ("plan's notes", &err),
        ("job script", &script),
    ] {
        assert!(!text.contains("node energy"), "{what}:\n{text}");
    }
    assert!(
        out.contains("energy: CPU energy (RAPL packages and DRAM)"),
        "{out}"
    );
    // The reproduction check speaks of the scope compared.
    assert!(err.contains("CPU energy +"), "{err}");
    // The script names sacct's scope and the prediction's, and says they differ.
    assert!(script.contains("# Predicted: time "));
    assert!(script.contains("CPU energy (RAPL packages and DRAM) "));
    assert!(script.contains("grep AcctGatherEnergyType"), "{script}");
    assert!(
        script.contains("(comparable where the plugin is rapl)"),
        "{script}"
    );
    let (code, json, err) = jouleplan(&[
        "plan",
        "--machine",
        s(&mach),
        "--profile",
        s(&prof),
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["energy_scope"], "cpu");
}

#[test]
fn a_profile_without_a_recorded_scope_still_reads_as_node_energy() {
    let i = inputs();
    let (code, json, err) = i.run("plan", &["--json", "--nodes", "1-2"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["energy_scope"], "node");
    let job = tempfile::tempdir().unwrap();
    let path = job.path().join("job.sh");
    let (code, _, err) = i.run(
        "plan",
        &["--nodes", "1-2", "--sbatch", s(&path), "--app", "./a.out"],
    );
    assert_eq!(code, 0, "{err}");
    let script = std::fs::read_to_string(&path).unwrap();
    assert!(
        script.contains("(comparable where the plugin measures the whole node)"),
        "{script}"
    );
    assert!(!script.contains("not comparable"));
}

#[test]
fn an_unknown_energy_scope_in_a_profile_is_refused_by_its_key() {
    let i = inputs();
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&i.profile).unwrap()).unwrap();
    doc["energy_scope"] = "rapl".into();
    std::fs::write(&i.profile, doc.to_string()).unwrap();
    let (code, _, err) = i.run("plan", &[]);
    assert_ne!(code, 0);
    assert!(
        err.contains("energy_scope") && err.contains("\"cpu\""),
        "{err}"
    );
}

/// `validate` of `extra` against the CPU-energy profile `(prof, mach)`, as JSON and as text:
/// (the JSON's first block, the text).
fn validate_json((prof, mach): (&Path, &Path), extra: &[&str]) -> (serde_json::Value, String) {
    let mut args = vec!["validate", "--machine", s(mach), "--profile", s(prof)];
    args.extend_from_slice(extra);
    let (code, text, err) = jouleplan(&args);
    assert_eq!(code, 0, "{err}");
    args.push("--json");
    let (code, json, err) = jouleplan(&args);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    (v["validations"][0].clone(), text)
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn node_energy_is_not_scored_against_a_profile_that_predicts_cpu_energy() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (prof, mach) = fit_on_1_2_4_8(d, "hpgmgfv");
    let real = std::fs::read_to_string(common::multinode("hpgmgfv.csv")).unwrap();
    // The same real runs, their CPU energy scored as CPU energy: the control.
    let cpu = d.join("cpu.csv");
    std::fs::write(&cpu, &real).unwrap();
    let (b, text) = validate_json((&prof, &mach), &["--measured", s(&cpu)]);
    assert!(b["energy"]["points"].as_u64().unwrap() > 0, "{b}");
    assert!(text.contains("CPU energy: mean absolute error"), "{text}");
    assert!(!text.contains("energy not scored"), "{text}");
    // The same rows said to be node energy, then with no energy_scope column (node energy).
    let node = d.join("node.csv");
    std::fs::write(&node, real.replace(",cpu\n", ",node\n")).unwrap();
    let bare = d.join("bare.csv");
    let unscoped: String = real
        .lines()
        .map(|l| l.rsplit_once(',').unwrap().0.to_string() + "\n")
        .collect();
    std::fs::write(&bare, unscoped).unwrap();
    for file in [&node, &bare] {
        let (b, text) = validate_json((&prof, &mach), &["--measured", s(file)]);
        let why = format!(
            "{}: energy not scored: the runs measured node energy, the profile's model predicts \
             CPU energy (RAPL packages and DRAM); give runs of the same scope",
            file.display()
        );
        assert_eq!(text.matches(&why).count(), 1, "{text}");
        assert!(!text.contains("node energy: mean absolute error"), "{text}");
        assert!(text.contains("time: mean absolute error"), "{text}");
        assert!(b["energy"].is_null(), "{b}");
        assert_eq!(b["energy_not_scored"], why.as_str(), "{b}");
        assert!(b["time"]["points"].as_u64().unwrap() > 0, "{b}");
        for p in b["points"].as_array().unwrap() {
            assert!(p["predicted_energy_j"].is_null(), "{p}");
            assert!(p["energy_interval_j"].is_null(), "{p}");
        }
    }
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn sacct_energy_at_its_default_node_scope_is_not_scored_against_cpu_energy() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (prof, mach) = fit_on_1_2_4_8(d, "hpgmgfv");
    // The real runs as accounting rows (elapsed to the second, their RAPL energy).
    let real = std::fs::read_to_string(common::multinode("hpgmgfv.csv")).unwrap();
    let mut sacct =
        String::from("JobID|State|NNodes|NCPUS|NTasks|Elapsed|ConsumedEnergyRaw|ReqCPUFreq\n");
    for (i, l) in real.lines().skip(1).enumerate() {
        let f: Vec<&str> = l.split(',').collect();
        let (nodes, cores): (u32, u32) = (f[0].parse().unwrap(), f[1].parse().unwrap());
        let t = f[4].parse::<f64>().unwrap().round() as u64;
        let e = f[5].parse::<f64>().unwrap().round() as u64;
        sacct += &format!(
            "{i}.0|COMPLETED|{nodes}|{}|{}|{:02}:{:02}:{:02}|{e}|2400000\n",
            nodes * cores,
            f[6],
            t / 3600,
            t / 60 % 60,
            t % 60
        );
    }
    let file = d.join("sacct.txt");
    std::fs::write(&file, sacct).unwrap();
    let (b, text) = validate_json((&prof, &mach), &["--sacct", s(&file)]);
    assert!(b["energy"].is_null(), "{b}");
    assert!(
        text.contains("energy not scored: the runs measured node energy"),
        "{text}"
    );
    assert!(b["time"]["points"].as_u64().unwrap() > 0, "{b}");
    // Said to be RAPL's, the same rows' energy is scored.
    let (b, text) = validate_json(
        (&prof, &mach),
        &["--sacct", s(&file), "--energy-scope", "cpu"],
    );
    assert!(b["energy"]["points"].as_u64().unwrap() > 0, "{b}");
    assert!(!text.contains("energy not scored"), "{text}");
}
