//! MODEL.md 6b on real data: the model reproduces every measured baseline point of every
//! bundled and fixture profile, predicts held-out core counts within the errors pinned here
//! (measured on the 16-core H100 node of `tests/data/fixtures`), and refuses what it cannot
//! explain: a program that sleeps, a profile planned against another machine's file.

mod common;

use common::{MACHINE, fixture, jouleplan, profile_json, write};
use jouleplan::calibrate::core_fill::fit_to_machine;
use jouleplan::calibrate::reproduce;
use jouleplan::model::machine::Machine;
use jouleplan::model::{Config, Model, Outcome};
use jouleplan::search::inputs::{load_machine, load_profile};
use jouleplan::units::Hertz;
use serde_json::Value;
use std::path::{Path, PathBuf};

const H100: &str = "models/h100-node.toml";

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `(machine, profile)` pairs: the bundled default, the H100 node's three recordings, and the
/// worked example.
fn cases(tmp: &Path) -> Vec<(PathBuf, PathBuf)> {
    vec![
        (
            repo("models/h100-gpu.toml"),
            repo("examples/profiles/gpu-mix-h100.json"),
        ),
        (repo(H100), fixture("gpu-h100/sync.json")),
        (repo(H100), fixture("cpu-16core/heat_1024.json")),
        (repo(H100), fixture("cpu-16core/heat_8192.json")),
        (
            write(tmp, "m.toml", MACHINE),
            write(tmp, "p.json", &profile_json()),
        ),
    ]
}

#[test]
fn every_bundled_and_fixture_profile_reproduces_its_measured_points() {
    let tmp = tempfile::tempdir().unwrap();
    for (m, p) in cases(tmp.path()) {
        let machine = load_machine(Some(s(&m))).unwrap();
        let mut profile = load_profile(Some(s(&p))).unwrap();
        fit_to_machine(&mut profile, &machine);
        let model = Model::new(&machine, &profile).unwrap();
        let r = reproduce::check(&model);
        assert!(!r.points.is_empty(), "{}", p.display());
        for pt in &r.points {
            assert!(
                pt.time_error().abs() <= pt.bound,
                "{}: {} time {:+.2}% beyond {:.2}%",
                p.display(),
                pt.label(),
                100.0 * pt.time_error(),
                100.0 * pt.bound
            );
            if let Some(e) = pt.energy_error() {
                assert!(
                    e.abs() <= pt.energy_bound,
                    "{}: {} energy {e}",
                    p.display(),
                    pt.label()
                );
            }
        }
        assert!(
            r.problems().is_empty(),
            "{}: {:?}",
            p.display(),
            r.problems()
        );
    }
}

#[test]
fn the_h100_profile_is_reproduced_at_its_own_points_where_the_paper_missed_by_52_percent() {
    let v = validate(&["--profile", s(&fixture("gpu-h100/sync.json"))]);
    let pts = v["validations"][0]["points"].as_array().unwrap();
    assert_eq!(pts.len(), 5);
    for p in pts {
        assert!(p["time_error"].as_f64().unwrap().abs() < 1e-9, "{p}");
        assert!(p["energy_error"].as_f64().unwrap().abs() < 1e-9, "{p}");
        assert_eq!(p["energy_scope"], "GPU energy");
    }
}

/// A copy of the H100 profile in `dir`.
fn sync_copy(dir: &Path) -> PathBuf {
    let prof = dir.join("sync.json");
    std::fs::copy(fixture("gpu-h100/sync.json"), &prof).unwrap();
    prof
}

/// Attaches the H100 TALP outputs of `cores` to `prof`; returns the command's stdout.
fn attach_talp(prof: &Path, cores: &[u32]) -> String {
    let mut args = vec!["profile".to_string(), "--output".into(), s(prof).into()];
    for c in cores {
        args.push("--talp".into());
        args.push(format!(
            "{c}={}",
            s(&fixture(&format!("gpu-h100/talp/talp_sync_c{c}.json")))
        ));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = jouleplan(&args);
    assert_eq!(code, 0, "{err}");
    out
}

/// `predict --json` of `config` on the H100 node.
fn predict_json(prof: &Path, config: &str) -> Value {
    common::predict_json(H100, prof, config)
}

fn validate(extra: &[&str]) -> Value {
    let mut args = vec!["validate", "--json", "--machine", H100];
    args.extend_from_slice(extra);
    let (code, out, err) = jouleplan(&args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// `(cores, time error, energy error)` of the first validation block.
fn held_out(profile: &str, cores: &str) -> Vec<(u64, f64, Option<f64>)> {
    let v = validate(&["--profile", s(&fixture(profile)), "--use-cores", cores]);
    v["validations"][0]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["cores"].as_u64().unwrap(),
                p["time_error"].as_f64().unwrap(),
                p["energy_error"].as_f64(),
            )
        })
        .collect()
}

#[test]
fn held_out_core_counts_of_the_gpu_workload_are_predicted_as_pinned() {
    // Fitted on 1, 4 and 16 cores; achieved: 2 cores +10.2% time, +1.8% GPU energy; 8 cores
    // -7.2% time, -2.7% GPU energy (the 1-core point's own run-to-run spread is 13.6%).
    let got = held_out("gpu-h100/sync.json", "1,4,16");
    assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), [2, 8]);
    let pinned = [(0.103, 0.02), (0.075, 0.03)];
    for ((c, t, e), (t_max, e_max)) in got.iter().zip(pinned) {
        assert!(t.abs() <= t_max, "{c} cores: time {t:+.4}");
        let e = e.unwrap();
        assert!(e.abs() <= e_max, "{c} cores: GPU energy {e:+.4}");
    }
}

#[test]
fn held_out_core_counts_of_the_memory_bound_stencil_are_within_10_percent() {
    // Fitted on 1, 4 and 16 cores; achieved -9.5%, -5.7%, +1.6%, +7.6%, +4.7% at 2, 3, 6, 8, 12.
    let got = held_out("cpu-16core/heat_8192.json", "1,4,16");
    assert_eq!(got.len(), 5);
    for (c, t, _) in got {
        assert!(t.abs() <= 0.10, "{c} cores: time {t:+.4}");
    }
}

#[test]
fn the_backward_scaling_stencil_is_reported_as_it_is_and_never_planned_at_12_or_16_cores() {
    // Fitted on 1, 4 and 16 cores the law misses 6-12 cores by up to 37.5% (pinned at 40%).
    let got = held_out("cpu-16core/heat_1024.json", "1,4,16");
    let worst = got.iter().map(|g| g.1.abs()).fold(0.0, f64::max);
    assert!(worst > 0.2 && worst <= 0.40, "{worst}");
    let (code, out, err) = jouleplan(&[
        "plan",
        "--json",
        "--machine",
        H100,
        "--profile",
        s(&fixture("cpu-16core/heat_1024.json")),
        "--nodes",
        "1",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    for p in v["front"].as_array().unwrap() {
        let c = p["cores"].as_u64().unwrap();
        assert!(c != 12 && c != 16, "{c} cores on the front");
    }
}

#[test]
fn a_program_that_sleeps_is_refused_with_its_unexplained_share() {
    // The recording was made on a 2-core VM at 2.445 GHz: a machine file that matches it.
    let tmp = tempfile::tempdir().unwrap();
    let m = write(
        tmp.path(),
        "vm.toml",
        "[machine]\nname = \"vm\"\nnodes = 64\ncores_per_node = 2\nfrequencies_ghz = [2.445]\n\
         [network]\nlatency_s = 1e-6\nbandwidth_bytes_per_s = 1e9\n\
         [power]\nidle_w = 50.0\ncore_active_w = 5.0\ncore_stall_w = 2.0\nmemory_w = 1.0\nnetwork_w = 1.0\n",
    );
    let p = repo("tests/data/sleep/sleep_1.json");
    for cmd in [vec!["plan"], vec!["predict", "--config", "64,2,2.445"]] {
        let mut args = cmd.clone();
        args.extend(["--machine", s(&m), "--profile", s(&p)]);
        let (code, out, err) = jouleplan(&args);
        assert_eq!(code, 2, "{out}{err}");
        assert!(out.is_empty(), "no recommendation: {out}");
        assert!(
            err.contains("(1 core, 2.445 GHz, 0 GPUs): 99.9% of the 1.002 s"),
            "{err}"
        );
        assert!(err.contains("no thread busy"), "{err}");
    }
}

#[test]
fn a_profile_from_another_machine_is_refused_naming_both_and_accepted_with_a_warning() {
    let heat = fixture("cpu-16core/heat_8192.json");
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo(H100)).unwrap();
    let wide = text
        .replace("cores_per_node = 16", "cores_per_node = 32")
        .replace("name = \"h100-node\"", "name = \"wide-node\"");
    let wide = write(tmp.path(), "wide.toml", &wide);
    let (code, _, err) = jouleplan(&["plan", "--profile", s(&heat), "--machine", s(&wide)]);
    assert_eq!(code, 2);
    assert!(err.contains("not on machine `wide-node`"), "{err}");
    assert!(
        err.contains("16 physical cores where the machine file has 32"),
        "{err}"
    );
    let script = tmp.path().join("job.sh");
    let (code, out, err) = jouleplan(&[
        "plan",
        "--json",
        "--profile",
        s(&heat),
        "--machine",
        s(&wide),
        "--other-machine",
        "--sbatch",
        s(&script),
        "--app",
        "./heat 8192 20",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let w = v["recommendation"]["warnings"].to_string();
    assert!(w.contains("planned on another machine"), "{w}");
    let text = std::fs::read_to_string(&script).unwrap();
    assert!(
        text.contains("# WARNING: planned on another machine"),
        "{text}"
    );
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_multi_node_recommendation_without_measured_messages_warns_in_the_recommendation() {
    // The Xeon Phi data set fitted on one node, planned on 64 such nodes.
    let (profile, machine) = common::xeon_phi_fitted();
    let jouleplan = |extra: &[&str]| {
        let mut args = vec![extra[0], "--machine", s(&machine), "--profile", s(&profile)];
        args.extend_from_slice(&extra[1..]);
        jouleplan(&args)
    };
    let (code, out, err) = jouleplan(&["plan", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v["recommendation"]["nodes"].as_u64().unwrap() > 1);
    let w = v["recommendation"]["warnings"].to_string();
    assert!(w.contains("multi-node"), "{w}");
    let (_, one, _) = jouleplan(&["plan", "--json", "--nodes", "1"]);
    let v: Value = serde_json::from_str(&one).unwrap();
    assert_eq!(v["recommendation"]["warnings"], serde_json::json!([]));
}

#[test]
fn unused_gpus_draw_their_no_context_power_and_nothing_else_changes() {
    let with_off = MACHINE.replace(
        "gpu_idle_w = 50.0",
        "gpu_idle_w = 50.0\ngpu_nocontext_w = 20.0",
    );
    let p = jouleplan::model::workload::Profile::from_json(Path::new("p.json"), &profile_json())
        .unwrap();
    let predict = |text: &str, gpus: u32| {
        let m = Machine::from_toml(Path::new("m.toml"), text).unwrap();
        let model = Model::new(&m, &p).unwrap();
        let c = Config {
            nodes: 2,
            cores: 4,
            freq: Hertz(2.0e9),
            gpus,
            gpu_clock_mhz: None,
        };
        match model.predict(c).unwrap() {
            Outcome::Finite(p) => p,
            Outcome::Saturated { .. } => panic!("saturated"),
        }
    };
    let (a, b) = (predict(MACHINE, 1), predict(&with_off, 1));
    assert_eq!(a.time, b.time);
    let extra = b.e.gpu - a.e.gpu;
    assert!(
        (extra - 2.0 * 1.0 * 20.0 * a.time.0).abs() < 1e-9 * b.e.gpu,
        "{extra}"
    );
    // With every GPU in use there is no unused one.
    let (c, d) = (predict(MACHINE, 2), predict(&with_off, 2));
    assert_eq!(c.energy, d.energy);
}

#[test]
fn talp_outputs_attach_to_the_h100_profile_and_confirm_the_estimated_blocked_time() {
    let tmp = tempfile::tempdir().unwrap();
    let prof = sync_copy(tmp.path());
    // Without TALP the blocked time is estimated from the core-count series.
    let (code, _, err) = jouleplan(&["plan", "--machine", H100, "--profile", s(&prof)]);
    assert_eq!(code, 0, "{err}");
    let est = err
        .split("estimated from the core-count series at ")
        .nth(1)
        .and_then(|r| r.split(" s per run").next())
        .expect("an estimate note")
        .to_string();
    let (lo, hi) = est.split_once('-').unwrap();
    let (lo, hi): (f64, f64) = (lo.parse().unwrap(), hi.parse().unwrap());
    let out = attach_talp(&prof, &[1, 2, 4, 8, 16]);
    assert_eq!(out.matches("attached").count(), 5, "{out}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&prof).unwrap()).unwrap();
    let measured: Vec<f64> = doc["baseline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            assert!(p["device"]["source"].as_str().unwrap().starts_with("TALP"));
            p["device"]["host_runtime_s"].as_f64().unwrap()
        })
        .collect();
    // TALP measured 2.38-2.44 s; the estimate (NVML only) said 2.29-2.42 s: within 4%.
    assert!((measured[0] - 2.379).abs() < 1e-3 && (measured[4] - 2.442).abs() < 1e-3);
    for (m, e) in [(measured[0], lo), (measured[4], hi)] {
        assert!((m - e).abs() / m < 0.04, "measured {m}, estimated {e}");
    }
    let (code, _, err) = jouleplan(&["plan", "--machine", H100, "--profile", s(&prof)]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !err.contains("estimated from the core-count series"),
        "{err}"
    );
    assert!(err.contains("time +0.0%"), "{err}");
}

#[test]
fn a_talp_output_without_device_times_or_for_no_point_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let prof = sync_copy(tmp.path());
    let before = std::fs::read(&prof).unwrap();
    let cpu_only = fixture("talp/test_mpi_sendrecv_profile_1_0.json");
    let spec = format!("1={}", s(&cpu_only));
    let (code, _, err) = jouleplan(&["profile", "--output", s(&prof), "--talp", &spec]);
    assert_ne!(code, 0);
    assert!(
        err.contains("test_mpi_sendrecv_profile_1_0.json") && err.contains("no device times"),
        "{err}"
    );
    let spec = format!("3={}", s(&fixture("gpu-h100/talp/talp_sync_c4.json")));
    let (code, _, err) = jouleplan(&["profile", "--output", s(&prof), "--talp", &spec]);
    assert_ne!(code, 0);
    assert!(err.contains("exactly one point with 3 cores"), "{err}");
    let (code, _, err) = jouleplan(&["profile", "--output", s(&prof), "--talp", "four=x.json"]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        std::fs::read(&prof).unwrap(),
        before,
        "nothing written on refusal"
    );
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn the_xeon_phi_data_set_from_4_core_counts_at_3_frequencies_predicts_the_other_387_points() {
    // 12 measured points fitted (cores 1, 8, 29, 57 at 0.6, 0.8, 1.1 GHz); the other 387 of
    // the 399 predicted by the core law and the frequency fill. Achieved: time 2.1% mean, 9.5%
    // max; node energy 2.2% mean, 11.3% max. Caveat: the bundled profile's work/stall split and
    // the machine's power were fitted on all 399 points by the importer, so the frequency axis
    // and the energy are not fully held out.
    let (profile, machine) = common::xeon_phi_fitted();
    let (code, out, err) = jouleplan(&[
        "validate",
        "--json",
        "--machine",
        s(&machine),
        "--profile",
        s(&profile),
        "--use-cores",
        "1,8,29,57",
        "--use-freqs",
        "0.6,0.8,1.1",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let b = &v["validations"][0];
    assert_eq!(b["time"]["points"], 387);
    let f = |k: &str, s: &str| b[k][s].as_f64().unwrap();
    assert!(
        f("time", "mape_pct") <= 2.2 && f("time", "max_pct") <= 9.6,
        "{b}"
    );
    assert!(
        f("energy", "mape_pct") <= 2.3 && f("energy", "max_pct") <= 11.4,
        "{}",
        b["energy"]
    );
}

#[test]
fn min_efficiency_keeps_efficient_configurations_and_names_the_nearest_when_none_is() {
    let sync = fixture("gpu-h100/sync.json");
    let (code, out, err) = jouleplan(&[
        "plan",
        "--json",
        "--machine",
        H100,
        "--profile",
        s(&sync),
        "--min-efficiency",
        "0.5",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    for p in v["front"].as_array().unwrap() {
        assert!(
            p["host_tree"]["parallel_efficiency"].as_f64().unwrap() >= 0.5,
            "{p}"
        );
    }
    let (code, out, _) = jouleplan(&[
        "plan",
        "--machine",
        H100,
        "--profile",
        s(&sync),
        "--min-efficiency",
        "99%",
    ]);
    assert_eq!(code, 3);
    assert!(
        out.contains("the highest is 0.743, at (1, 1, 2.1 GHz, 1)"),
        "{out}"
    );
    let (code, _, err) = jouleplan(&["plan", "--min-efficiency", "1.5"]);
    assert_eq!(code, 2);
    assert!(err.contains("--min-efficiency"), "{err}");
}

#[test]
fn the_report_shows_the_measured_talp_trees_beside_the_predicted_one() {
    let tmp = tempfile::tempdir().unwrap();
    let prof = sync_copy(tmp.path());
    attach_talp(&prof, &[1, 4, 16]);
    let out = tmp.path().join("rep");
    let (code, _, err) = jouleplan(&[
        "report",
        "--machine",
        H100,
        "--profile",
        s(&prof),
        "--out",
        s(&out),
    ]);
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    let trees = &html[html.find("<table id=\"trees\">").expect("trees table")..];
    let trees = &trees[..trees.find("</table>").unwrap()];
    // TALP's printed parallel efficiency at 1 core, 0.83; POP scaling efficiency 1.00 there.
    assert!(
        trees.contains("talp_sync_c1.json)</td><td>0.83</td>"),
        "{trees}"
    );
    assert_eq!(trees.matches("TALP (").count(), 3, "{trees}");
    assert!(trees.contains("<td class=\"l\">predicted</td>"), "{trees}");
    assert!(
        html.contains("<div id=\"trees-plot\"><svg"),
        "the small chart"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&prof).unwrap()).unwrap();
    let t = &doc["baseline"][0]["measured_tree"];
    assert_eq!(t["efficiencies"]["parallelEfficiency"], 0.83);
}

#[test]
fn validate_plots_predicted_against_measured_with_the_identity_and_a_ten_percent_band() {
    let tmp = tempfile::tempdir().unwrap();
    let svg = tmp.path().join("v.svg");
    let (code, _, err) = jouleplan(&[
        "validate",
        "--machine",
        H100,
        "--profile",
        s(&fixture("gpu-h100/sync.json")),
        "--use-cores",
        "1,4,16",
        "--plot",
        s(&svg),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&svg).unwrap();
    let has = |t: &str| text.lines().any(|l| l.trim() == t);
    assert!(has("y = x") && has("±10%"), "legend");
    // The energy panel names the scope measured; the points carry their configuration.
    assert!(
        has("time: predicted against measured") && has("GPU energy: predicted against measured")
    );
    assert!(has("1 x 2 @ 2.1 GHz + 1 GPU"), "point labels");
    assert!(
        text.matches("<circle").count() >= 4,
        "2 points in each panel"
    );
    let (code, _, err) = jouleplan(&["validate", "--plot", s(&tmp.path().join("v.gif"))]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn the_predicted_trees_at_the_measured_points_agree_with_talp() {
    // TALP (DLB 3.7, GPU plugin) measured separate, instrumented runs of the same program,
    // 16-26% slower than the runs the profile holds (CUPTI intercepts every runtime call):
    // the blocked times agree, the ratios differ by that. Largest difference found: 0.053
    // (device offload and parallel efficiency at 2 cores); OpenMP is carried (no OpenMP region).
    let tmp = tempfile::tempdir().unwrap();
    let prof = sync_copy(tmp.path());
    let cores = [1, 2, 4, 8, 16];
    attach_talp(&prof, &cores);
    let mut worst: f64 = 0.0;
    for c in cores {
        let p = predict_json(&prof, &format!("1,{c},2.1,1"));
        let t: Value = serde_json::from_str(
            &std::fs::read_to_string(fixture(&format!("gpu-h100/talp/talp_sync_c{c}.json")))
                .unwrap(),
        )
        .unwrap();
        let g = &t["Application"]["Global"];
        let raw = |k: &str| g[k].as_f64().unwrap();
        let (useful, runtime, elapsed) =
            (raw("usefulTime"), raw("gpuRuntimeTime"), raw("elapsedTime"));
        let talp_doe = useful / (useful + runtime);
        let pairs = [
            (&p["host_tree"]["parallel_efficiency"], talp_doe),
            (
                &p["host_tree"]["openmp_parallel_efficiency"],
                raw("ompParallelEfficiency"),
            ),
            (&p["host_tree"]["device_offload_efficiency"], talp_doe),
            (
                &p["device"]["orchestration_efficiency"],
                raw("maxGpuActiveTime") / elapsed,
            ),
            (
                &p["device"]["parallel_efficiency"],
                raw("maxGpuActiveTime") / elapsed,
            ),
            (
                &p["device"]["communication_efficiency"],
                raw("gpuCommunicationEfficiency"),
            ),
            (&p["device"]["load_balance"], raw("gpuLoadBalance")),
        ];
        for (ours, talp) in pairs {
            worst = worst.max((ours.as_f64().unwrap() - talp).abs());
        }
        for key in ["openmp_parallel_efficiency", "mpi_load_balance"] {
            assert_eq!(
                p["host_tree"]["sources"][key],
                format!("carried: measured beside the baseline at {c} cores")
            );
        }
        assert_eq!(p["host_tree"]["mpi_load_balance"], raw("mpiLoadBalance"));
    }
    assert!(worst <= 0.054, "largest difference from TALP {worst:.3}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_paraver_trace_of_the_baseline_carries_its_load_balance_into_predictions() {
    // Plumbing on real files: the heat stencil's CPU profile (16-core node) with the epoch
    // traces' trees attached at 2 and 4 cores. The traces are of another program (EPOCH, 2 and
    // 4 MPI ranks), so the carried values say nothing about the stencil: only that a trace's
    // tree reaches the profile and every prediction, marked as carried.
    let tmp = tempfile::tempdir().unwrap();
    let prof = tmp.path().join("h.json");
    std::fs::copy(fixture("cpu-16core/heat_8192.json"), &prof).unwrap();
    let t2 = format!(
        "2={}",
        s(&common::public_fixture("paraver/epoch/epoch_2proc.prv.gz"))
    );
    let t4 = format!(
        "4={}",
        s(&common::public_fixture("paraver/epoch/epoch_4proc.prv.gz"))
    );
    let (code, out, err) = jouleplan(&[
        "profile",
        "--output",
        s(&prof),
        "--trace",
        &t2,
        "--trace",
        &t4,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("epoch_4proc.prv.gz to (4 cores, 2.100 GHz): load balance 0.987"),
        "{out}"
    );
    let p = predict_json(&prof, "1,5,2.1");
    let h = &p["host_tree"];
    let lb = h["mpi_load_balance"].as_f64().unwrap();
    assert!((lb - 0.987).abs() < 0.0005, "{h}");
    assert_eq!(
        h["sources"]["mpi_load_balance"],
        "carried: measured beside the baseline at 4 cores"
    );
    let pe = h["mpi_parallel_efficiency"].as_f64().unwrap();
    assert!((pe - lb * h["mpi_communication_efficiency"].as_f64().unwrap()).abs() < 1e-12);
    let (code, _, err) = jouleplan(&["profile", "--output", s(&prof), "--trace", "2=talp.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("--trace") && err.contains(".prv"), "{err}");
}
