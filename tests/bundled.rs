//! The bundled machines and default profile: they load, the default run plans something
//! without a warning, and their measured numbers match the project's own recordings they came
//! from (`tests/data/fixtures/gpu-h100`, `tests/data/gpu-h100-run2`).

mod common;

use assert_cmd::Command;
use jouleplan::model::{Config, Model, Outcome};
use jouleplan::search::inputs::{BUNDLED_MACHINES, load_machine, load_profile};

fn repo(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

#[test]
fn no_arguments_plans_the_bundled_default_without_a_warning() {
    let out = Command::cargo_bin("jouleplan").unwrap().output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(text.contains("machine h100-gpu"), "{text}");
    assert!(text.contains("Pareto front, fastest first"), "{text}");
    assert!(text.contains("Recommendation: "), "{text}");
    assert!(
        text.contains("T_gpu") && text.contains("GPU energy"),
        "{text}"
    );
    assert!(!err.contains("warning"), "{err}");
    assert!(!text.contains("80%") && !err.contains("80%"), "{text}{err}");
}

#[test]
fn every_bundled_machine_loads_and_labels_its_sources() {
    for (name, _, text) in BUNDLED_MACHINES {
        let m = load_machine(Some(name)).unwrap();
        assert!(!m.sources.is_empty(), "{name} names no sources");
        assert!(
            text.contains("illustrative") || text.contains("measured"),
            "{name}"
        );
    }
}

#[test]
fn the_default_machine_holds_the_measured_gpu_power_states() {
    let text =
        std::fs::read_to_string(repo("tests/data/fixtures/gpu-h100/power_states.json")).unwrap();
    let s: serde_json::Value = serde_json::from_str(&text).unwrap();
    let m = load_machine(None).unwrap();
    let near = |a: f64, b: &str| (a - s[b].as_f64().unwrap()).abs() < 0.05;
    assert!(near(m.power.gpu_active.0, "active_w"), "{:?}", m.power);
    let idle = (s["context_idle_w_0_5s"].as_f64().unwrap()
        + s["context_idle_w_5_10s"].as_f64().unwrap())
        / 2.0;
    assert!((m.power.gpu_idle.0 - idle).abs() < 0.05, "{:?}", m.power);
    // CPU power was not measured on that node (no RAPL): 0, so energy is the GPU's alone.
    assert!(m.power.idle.iter().all(|w| w.0 == 0.0));
}

#[test]
fn the_default_profile_is_the_recorded_h100_sweep_and_reproduces_its_gpu_energy() {
    let bundled = std::fs::read(repo("examples/profiles/gpu-mix-h100.json")).unwrap();
    let recorded = std::fs::read(repo("tests/data/gpu-h100-run2/sync_all.json")).unwrap();
    assert_eq!(
        bundled, recorded,
        "the bundled profile is the recording, unchanged"
    );
    let (m, p) = (load_machine(None).unwrap(), load_profile(None).unwrap());
    let model = Model::new(&m, &p).unwrap();
    let mut count = 0;
    for point in p.baseline.iter().filter(|b| b.measured) {
        let cfg = Config {
            nodes: 1,
            cores: point.cores,
            freq: point.freq,
            gpus: point.gpus,
            gpu_clock_mhz: None,
        };
        let Outcome::Finite(pred) = model.predict(cfg).unwrap() else {
            panic!("{cfg:?}")
        };
        let e = point.energy.unwrap().0;
        assert!(
            (pred.energy.0 - e).abs() < 0.01 * e,
            "{cfg:?}: {} vs {e}",
            pred.energy.0
        );
        count += 1;
    }
    assert_eq!(count, 7, "cores 1, 2, 4, 6, 8, 12, 16 were measured");
}
