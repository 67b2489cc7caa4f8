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
