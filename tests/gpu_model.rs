//! MODEL.md section 6, as written in docs/MODEL.md: (a) it reduces to sections 3-4 without
//! device work, (b) it reproduces the baseline point it was built from, (c) device work divides
//! over the n g GPUs with the measured load balance, (d) it predicts the device tree.

mod common;

use common::{MACHINE, close, profile_json};
use jouleplan::model::machine::Machine;
use jouleplan::model::workload::Profile;
use jouleplan::model::{Config, Model, Outcome, Prediction};
use jouleplan::units::Hertz;
use std::path::Path;

fn predict(profile_text: &str, nodes: u32, gpus: u32) -> Prediction {
    let machine = Machine::from_toml(Path::new("m.toml"), MACHINE).unwrap();
    let profile = Profile::from_json(Path::new("p.json"), profile_text).unwrap();
    let model = Model::new(&machine, &profile).unwrap();
    let cfg = Config {
        nodes,
        cores: 4,
        freq: Hertz(2.0e9),
        gpus,
        gpu_clock_mhz: None,
    };
    match model.predict(cfg).unwrap() {
        Outcome::Finite(p) => p,
        other => panic!("{other:?}"),
    }
}

/// The common profile with S = S_s (k = 1), so the baseline run itself is predicted.
fn same_size() -> String {
    profile_json().replace("\"target\":100", "\"target\":10")
}

#[test]
fn b_the_baseline_point_is_reproduced() {
    let text = same_size();
    assert_ne!(text, profile_json());
    let p = predict(&text, 1, 2);
    // Baseline: kernel [4, 3] s, transfer [1, 1] s, host blocked 3 s.
    assert!(close(p.t.gpu, 3.0, 1e-12), "host blocked {}", p.t.gpu);
    let d = p.device.expect("device tree");
    assert!(close(d.load_balance, 7.0 / 8.0, 1e-12));
    assert!(close(d.communication_efficiency, 4.0 / 5.0, 1e-12));
    // Busiest GPU active 5 s over T.
    assert!(close(d.orchestration_efficiency, 5.0 / p.time.0, 1e-12));
    // Host time on the baseline: cycles / (c f) = 4e10 / 8e9 = 5 s (plus (1 - U) T_CPU).
    assert!(close(p.t.cpu + p.t.mem, 5.0, 1e-12));
}

#[test]
fn c_device_work_divides_over_all_gpus() {
    let text = same_size();
    let base = predict(&text, 1, 2).device.unwrap();
    let t_base = predict(&text, 1, 2).time.0;
    // 2 nodes x 2 GPUs: every GPU's share halves; 1 node x 1 GPU: it doubles.
    for (n, g, factor) in [(2u32, 2u32, 0.5), (1, 1, 2.0), (4, 1, 0.5)] {
        let p = predict(&text, n, g);
        let d = p.device.unwrap();
        let busiest = d.orchestration_efficiency * p.time.0;
        assert!(
            close(busiest, 5.0 * factor, 1e-12),
            "({n}, {g}): busiest GPU {busiest}"
        );
        assert!(close(d.load_balance, base.load_balance, 1e-12));
        // E_gpu = n g (P_act K + P_idle (T - K)) with K the mean active time per GPU.
        let k_mean = (5.0 + 4.0) / 2.0 * factor;
        let e_gpu = f64::from(n * g) * (300.0 * k_mean + 50.0 * (p.time.0 - k_mean));
        assert!(
            close(p.e.gpu, e_gpu, 1e-12),
            "({n}, {g}): {} vs {e_gpu}",
            p.e.gpu
        );
    }
    assert!(predict(&text, 2, 2).time.0 < t_base);
}

#[test]
fn d_device_tree_identities_hold() {
    for (n, g) in [(1, 1), (1, 2), (3, 2), (8, 1)] {
        let p = predict(&profile_json(), n, g);
        let d = p.device.unwrap();
        assert!(close(
            d.parallel_efficiency,
            d.load_balance * d.communication_efficiency * d.orchestration_efficiency,
            1e-12
        ));
        // One value per prediction: the device tree's offload efficiency is the host tree's.
        let h = jouleplan::model::host_tree::HostTree::of(&p);
        assert_eq!(d.offload_efficiency, h.device_offload_efficiency);
        assert!(d.offload_efficiency > 0.0 && d.offload_efficiency <= 1.0);
        assert!(
            d.orchestration_efficiency <= 1.0 + 1e-12,
            "busiest GPU longer than T"
        );
    }
}

#[test]
fn a_without_device_work_the_cpu_model_is_unchanged() {
    // Same host counters, no device activity: T is the CPU-only T; idle GPUs draw idle power.
    let mut v: serde_json::Value = serde_json::from_str(&profile_json()).unwrap();
    let pts = v["baseline"].as_array_mut().unwrap();
    let gpu_point = pts.iter_mut().find(|p| p["gpus"] == 2).unwrap();
    gpu_point["device"] = serde_json::json!({"kernel_s": [0.0, 0.0], "transfer_s": [0.0, 0.0], "host_runtime_s": 0.0});
    let host_only = gpu_point.clone();
    let with_idle_gpus = predict(&v.to_string(), 4, 2);
    assert_eq!(with_idle_gpus.t.gpu, 0.0);
    assert!(with_idle_gpus.device.is_none());
    assert!(close(
        with_idle_gpus.e.gpu,
        4.0 * 2.0 * 50.0 * with_idle_gpus.time.0,
        1e-12
    ));

    // The same counters as a CPU-only point (g = 0): identical time and non-GPU energy.
    let pts = v["baseline"].as_array_mut().unwrap();
    pts.retain(|p| !(p["cores"] == 4 && p["freq_hz"] == 2.0e9));
    let mut cpu = host_only;
    cpu["gpus"] = 0.into();
    cpu.as_object_mut().unwrap().remove("device");
    pts.push(cpu);
    let cpu_only = predict(&v.to_string(), 4, 0);
    assert_eq!(cpu_only.time, with_idle_gpus.time);
    assert_eq!(cpu_only.e.gpu, 0.0);
    assert!(close(
        cpu_only.energy.0 + with_idle_gpus.e.gpu,
        with_idle_gpus.energy.0,
        1e-12
    ));
}
