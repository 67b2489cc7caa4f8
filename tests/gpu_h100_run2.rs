//! The GPU model on real hardware, and the predicted efficiency trees against measured ones,
//! on GPU recordings made by this copy of jouleplan on an H100 node (`tests/data/gpu-h100-run2`,
//! README there): NVML's sampled busy time against the workload's CUDA-event kernel time,
//! held-out core counts predicted before they were run, the GPU used and unused, and the
//! predicted trees against TALP preloaded into the very runs the profile holds.

mod common;

use common::jouleplan;
use serde_json::Value;
use std::path::{Path, PathBuf};

const H100: &str = "models/h100-node.toml";

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/gpu-h100-run2")
        .join(rel)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn lines(p: &Path) -> Vec<Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `validate --json` with `extra`; the one validation's `(time, energy)` summaries.
fn validate(extra: &[&str]) -> (Value, Value) {
    let mut args = vec!["validate", "--json", "--machine", H100];
    args.extend_from_slice(extra);
    let (code, out, err) = jouleplan(&args);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let first = &v["validations"][0];
    (first["time"].clone(), first["energy"].clone())
}

fn pct(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap()
}

#[test]
fn nvml_busy_time_agrees_with_cuda_event_kernel_time_within_its_stated_error() {
    // Every g = 1 run recorded with the error estimate (sync.json, the first, was recorded
    // with an earlier, looser bound: README), in the order both files hold them.
    let mut checked = 0;
    let mut worst: f64 = 0.0;
    for name in ["sync_all", "sync_heldout", "talp_nvml", "talp_heldout"] {
        let prof = json(&data(&format!("{name}.json")));
        let runs = prof["sweep"]["record"]["runs"].as_array().unwrap();
        let refs = lines(&data(&format!("{name}_runs.jsonl")));
        assert_eq!(runs.len(), refs.len());
        for (run, r) in runs.iter().zip(&refs) {
            assert_eq!(run["cores"], r["threads"]);
            let busy = run["readings"]["gpu_busy_s"][0].as_f64().unwrap();
            let err = run["readings"]["gpu_busy_err_s"][0].as_f64().unwrap();
            let kernel = r["kernel_s"].as_f64().unwrap();
            // One standard error as stated in the profile; observed up to 0.75 of it.
            assert!((busy - kernel).abs() <= err, "{busy} vs {kernel} (±{err})");
            assert!(err < 0.12 * kernel, "a useless error bound: {err} s");
            worst = worst.max((busy / kernel - 1.0).abs());
            checked += 1;
        }
    }
    assert_eq!(checked, 21 + 6 + 15 + 6);
    assert!(worst < 0.08, "largest per-run difference {worst:.3}");
}

#[test]
fn the_profile_records_the_gpu_its_clocks_and_the_sampling_error() {
    let prof = json(&data("sync_all.json"));
    let nvml = prof["sweep"]["record"]["backends"]["nvml"]
        .as_str()
        .unwrap();
    assert!(
        nvml.contains("NVIDIA H100 80GB HBM3, 81559 MiB, power limit 700 W"),
        "{nvml}"
    );
    for p in prof["baseline"].as_array().unwrap() {
        let src = p["device"]["source"].as_str().unwrap();
        assert!(
            src.starts_with("NVML utilisation sampling (busy time +-0."),
            "{src}"
        );
        // SM clock under load, between the H100's floor under this load and its top.
        let sm: f64 = src
            .split("SM clock ")
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .and_then(|t| t.parse().ok())
            .unwrap();
        assert!((1500.0..=1980.0).contains(&sm), "{src}");
        assert!(src.ends_with("memory clock 2619 MHz"), "{src}");
    }
}

#[test]
fn held_out_core_counts_predicted_before_they_ran_are_within_the_pinned_errors() {
    // Another fresh machine than the profile's: process start-up (3.2-5.3 s of 7-11 s) moved,
    // the loop itself did not (within 1%). Pinned as measured: time max 17.8% (6 cores),
    // GPU energy max 5.7%.
    let (t, e) = validate(&[
        "--profile",
        s(&data("sync.json")),
        "--measured",
        s(&data("sync_heldout.csv")),
    ]);
    assert_eq!(t["points"], 6);
    assert!(
        pct(&t, "mape_pct") < 9.0 && pct(&t, "max_pct") < 18.5,
        "{t}"
    );
    assert!(pct(&e, "mape_pct") < 3.5 && pct(&e, "max_pct") < 6.0, "{e}");
    // Every core count on one machine: 6 and 12 cores held out, and leave-one-out.
    let (t, e) = validate(&[
        "--profile",
        s(&data("sync_all.json")),
        "--use-cores",
        "1,2,4,8,16",
    ]);
    assert_eq!(t["points"], 2);
    assert!(pct(&t, "max_pct") < 10.5, "{t}");
    assert!(pct(&e, "max_pct") < 3.0, "{e}");
}

#[test]
fn the_gpu_used_and_unused_are_both_predicted_at_a_held_out_core_count() {
    // gpu_mix.py with a small device share: g = 0 runs the device phase on the host threads.
    let (t, e) = validate(&[
        "--profile",
        s(&data("share.json")),
        "--measured",
        s(&data("share_heldout.csv")),
    ]);
    assert_eq!(t["points"], 4);
    assert_eq!(e["points"], 2, "GPU energy only where the GPU was used");
    assert!(
        pct(&t, "max_pct") < 15.0 && pct(&t, "mape_pct") < 6.0,
        "{t}"
    );
    assert!(pct(&e, "max_pct") < 7.5, "{e}");
}

/// TALP's device offload efficiency and GPU orchestration (active time over elapsed), the
/// mean over the runs of `prefix` at `cores` cores.
fn talp_means(prefix: &str, cores: u32) -> (f64, f64, usize) {
    let dir = data("talp");
    let mut g = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let n = p.file_name().unwrap().to_str().unwrap().to_string();
        if n.starts_with(&format!("{prefix}_{cores}c-")) {
            g.push(json(&p)["Application"]["Global"].clone());
        }
    }
    let m = |k: &str| g.iter().map(|x| x[k].as_f64().unwrap()).sum::<f64>() / g.len() as f64;
    let (u, r, el) = (m("usefulTime"), m("gpuRuntimeTime"), m("elapsedTime"));
    (u / (u + r), m("maxGpuActiveTime") / el, g.len())
}

fn predict(prof: &Path, cores: u32) -> Value {
    common::predict_json(H100, prof, &format!("1,{cores},2.1,1"))
}

#[test]
fn predicted_trees_agree_with_talp_preloaded_into_the_same_runs_within_0_02() {
    // Predicted trees against measured ones, like for like: the profile's NVML times and TALP's times come from
    // the same 15 runs. Largest difference measured: 0.019 (device offload, 16 cores).
    let prof = data("talp_nvml.json");
    let mut worst: f64 = 0.0;
    for c in [1, 2, 4, 8, 16] {
        let p = predict(&prof, c);
        let (doe, orch, n) = talp_means("talp_nvml", c);
        assert_eq!(n, 3);
        let h = &p["host_tree"];
        let d = &p["device"];
        for (ours, talp) in [
            (&h["device_offload_efficiency"], doe),
            (&h["parallel_efficiency"], doe),
            (&d["orchestration_efficiency"], orch),
            (&d["parallel_efficiency"], orch),
        ] {
            worst = worst.max((ours.as_f64().unwrap() - talp).abs());
        }
        assert_eq!(h["sources"]["device_offload_efficiency"], "predicted");
        assert_eq!(h["openmp_parallel_efficiency"], 1.0);
    }
    assert!(worst < 0.02, "largest difference from TALP {worst:.3}");
}

#[test]
fn on_another_machine_the_tree_moves_with_the_start_up_time_the_profile_did_not_see() {
    // TALP at 6 and 12 cores, held out, on a third machine whose start-up was 1-2 s shorter:
    // the host was less busy, so offload efficiency fell by 0.10-0.12 against the prediction.
    // The test pins that this is the size of the miss, and that it is the elapsed time, not
    // the device's, that moved (kernel time within 4%).
    let prof = data("talp_nvml.json");
    for c in [6, 12] {
        let p = predict(&prof, c);
        let (doe, _, n) = talp_means("talp_heldout", c);
        assert_eq!(n, 3);
        let ours = p["host_tree"]["device_offload_efficiency"]
            .as_f64()
            .unwrap();
        assert!(
            (0.08..0.14).contains(&(ours - doe)),
            "{c} cores: {ours} vs {doe}"
        );
    }
    // Means over runs of a file's lines with at least `from` threads: kernel time and start-up
    // plus exit (process time less loop time).
    let means = |f: &str, from: u64| -> (f64, f64) {
        let l: Vec<Value> = lines(&data(f))
            .into_iter()
            .filter(|r| r["threads"].as_u64().unwrap() >= from)
            .collect();
        let m = |g: &dyn Fn(&Value) -> f64| l.iter().map(g).sum::<f64>() / l.len() as f64;
        let k = |r: &Value| r["kernel_s"].as_f64().unwrap();
        let st = |r: &Value| r["process_s"].as_f64().unwrap() - r["loop_s"].as_f64().unwrap();
        (m(&k), m(&st))
    };
    let (k_prof, start_prof) = means("talp_nvml_runs.jsonl", 8);
    let (k_held, start_held) = means("talp_heldout_runs.jsonl", 6);
    assert!((k_held / k_prof - 1.0).abs() < 0.04, "{k_held} vs {k_prof}");
    assert!(
        start_held < start_prof - 1.0,
        "{start_held} vs {start_prof}"
    );
}

/// The runs at 8 cores of `share.json` spread 18.5% run to run (measured on the H100 node):
/// `plan` says so, since no interval carries it; the points that spread less are not named.
#[test]
fn plan_notes_the_measured_points_whose_runs_spread_more_than_a_tenth() {
    let p = data("share.json");
    let (code, _, err) = jouleplan(&["plan", "--machine", H100, "--profile", s(&p)]);
    assert_eq!(code, 0, "{err}");
    let note = err
        .lines()
        .find(|l| l.contains("spread run to run by more than 10%"))
        .unwrap_or_else(|| panic!("no spread note: {err}"));
    assert!(note.contains("(8 cores at 2.100 GHz 18.5%)"), "{note}");
    assert!(note.contains("no interval carries that"), "{note}");
}
