//! `jouleplan metrics` against the reference tools on real outputs (`tests/data/fixtures`): TALP's
//! own printed efficiencies and DLB's expected values, basicanalysis's modelfactors for the five
//! EPOCH traces, the legacy 2004 trace, and the mpiP report.

mod common;

use common::jouleplan;
use serde_json::Value;
use std::path::PathBuf;

fn fixtures() -> PathBuf {
    common::fixture("")
}

fn metrics(args: &[&str]) -> Value {
    let mut a = vec!["metrics", "--json"];
    a.extend_from_slice(args);
    let (code, out, err) = jouleplan(&a);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
fn every_talp_fixture_agrees_with_talps_printed_efficiencies() {
    let f = fixtures();
    let mut regions = 0;
    for entry in std::fs::read_dir(f.join("talp")).unwrap() {
        let p = entry.unwrap().path();
        let v = metrics(&[p.to_str().unwrap()]);
        for run in v["runs"].as_array().unwrap() {
            regions += 1;
            assert_eq!(
                run["talp_disagreements"],
                serde_json::json!([]),
                "{} {}",
                p.display(),
                run["region"]
            );
            assert!(run["host"]["parallel_efficiency"].is_number());
        }
    }
    assert!(regions >= 8, "{regions} regions");
}

#[test]
fn talp_fixtures_give_dlbs_expected_values() {
    let f = fixtures();
    let host = |file: &str| {
        let v = metrics(&[f.join("talp").join(file).to_str().unwrap()]);
        let runs = v["runs"].as_array().unwrap().clone();
        runs.into_iter().find(|r| r["region"] == "Global").unwrap()["host"].clone()
    };
    let check = |h: &Value, key: &str, want: f64| {
        let got = h[key].as_f64().unwrap();
        assert!((got - want).abs() <= 0.02, "{key}: {got} vs DLB's {want}");
    };
    for run in ["1_0", "2_0"] {
        let h = host(&format!("test_mpi_sendrecv_profile_{run}.json"));
        check(&h, "mpi_parallel_efficiency", 0.625);
        check(&h, "mpi_communication_efficiency", 0.75);
        check(&h, "mpi_load_balance", 0.83);
        // The fixtures README's "OpenMP" expectations are those of DLB's omp_states test.
        let h = host(&format!("test_omp_states_profile_{run}.json"));
        check(&h, "omp_parallel_efficiency", 0.48);
        check(&h, "omp_load_balance", 0.83);
        check(&h, "omp_serialization_efficiency", 0.58);
        check(&h, "omp_scheduling_efficiency", 0.99);
        let h = host(&format!("test_hybrid_profile_{run}.json"));
        check(&h, "parallel_efficiency", 0.54);
        check(&h, "mpi_parallel_efficiency", 0.83);
        check(&h, "mpi_communication_efficiency", 1.00);
        check(&h, "mpi_load_balance", 0.83);
        check(&h, "omp_parallel_efficiency", 0.625);
        check(&h, "omp_load_balance", 0.875);
        check(&h, "omp_serialization_efficiency", 0.71);
    }
}

fn modelfactors() -> std::collections::HashMap<String, Vec<f64>> {
    let text =
        std::fs::read_to_string(common::public_root().join("paraver/epoch/modelfactors.csv"))
            .unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix('#'))
        .filter_map(|l| {
            let mut it = l.split(';');
            let k = it.next()?.to_string();
            let v: Vec<f64> = it.filter_map(|x| x.parse().ok()).collect();
            (!v.is_empty()).then_some((k, v))
        })
        .collect()
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn epoch_traces_match_basicanalysis() {
    let mf = modelfactors();
    let files: Vec<String> = [1, 2, 4, 8, 16]
        .iter()
        .map(|p| {
            common::public_root()
                .join(format!("paraver/epoch/epoch_{p}proc.prv.gz"))
                .display()
                .to_string()
        })
        .collect();
    let args: Vec<&str> = files.iter().map(String::as_str).collect();
    let v = metrics(&args);
    let pre = std::fs::read_to_string(common::public_root().join("paraver/epoch/precomputed.csv"))
        .unwrap();
    let rows: Vec<Vec<String>> = pre
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    assert_eq!(v["scaling"]["mode"], "strong");
    for (i, run) in v["runs"].as_array().unwrap().iter().enumerate() {
        let p = run["ranks"].as_f64().unwrap();
        let rel = |got: f64, want: f64, what: &str| {
            assert!(
                (got - want).abs() <= 1e-4 * want.abs(),
                "{p} ranks, {what}: {got} vs {want}"
            );
        };
        let t = run["elapsed_s"].as_f64().unwrap() * 1e6;
        rel(t, mf["Runtime (us)"][i], "runtime");
        rel(
            run["useful_s"].as_f64().unwrap() * 1e6 / p,
            mf["Useful duration (average)"][i],
            "average useful",
        );
        let pop = &run["pop"];
        let max_u = pop["communication"].as_f64().unwrap() * t;
        rel(max_u, mf["Useful duration (maximum)"][i], "maximum useful");
        let r = &rows[i];
        let num = |k: usize| r[k].parse::<f64>().unwrap();
        rel(
            pop["load_balance"].as_f64().unwrap(),
            num(2),
            "load balance",
        );
        // Ideal runtime from the critical path vs Dimemas: within 0.015.
        for (key, k) in [("serialisation", 4), ("transfer", 5)] {
            let got = pop[key].as_f64().unwrap();
            assert!(
                (got - num(k)).abs() <= 0.015,
                "{p} ranks, {key}: {got} vs {}",
                num(k)
            );
        }
        let s = &v["scaling"]["points"][i];
        for (key, k) in [
            ("instruction_scaling", 9),
            ("ipc_scaling", 8),
            ("frequency_scaling", 10),
            ("global_efficiency", 7),
        ] {
            let got = s[key].as_f64().unwrap();
            assert!(
                (got - num(k)).abs() <= 0.01,
                "{p} ranks, {key}: {got} vs {}",
                num(k)
            );
        }
    }
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn one_window_over_the_whole_run_gives_the_whole_run_metrics() {
    let file = common::public_root().join("paraver/epoch/epoch_4proc.prv.gz");
    let whole = metrics(&[file.to_str().unwrap()])["runs"][0]["pop"].clone();
    let v = metrics(&[file.to_str().unwrap(), "--window", "1h"]);
    let w = v["runs"][0]["windows"].as_array().unwrap();
    assert_eq!(w.len(), 1);
    for (wk, pk) in [
        ("load_balance", "load_balance"),
        ("serialisation", "serialisation"),
        ("transfer", "transfer"),
    ] {
        let (a, b) = (w[0][wk].as_f64().unwrap(), whole[pk].as_f64().unwrap());
        assert!((a - b).abs() < 1e-9, "{wk}: window {a} vs run {b}");
    }
    // Many windows: every one within [0, 1], and PE = LB x Ser x Trf in each.
    let v = metrics(&[file.to_str().unwrap(), "--window", "100ms"]);
    let w = v["runs"][0]["windows"].as_array().unwrap();
    assert!(w.len() >= 60, "{} windows", w.len());
    for x in w {
        let g = |k: &str| x[k].as_f64().unwrap();
        for k in ["load_balance", "serialisation", "transfer"] {
            assert!((0.0..=1.0).contains(&g(k)), "{k} = {}", g(k));
        }
        assert!(
            (g("parallel_efficiency") - g("load_balance") * g("serialisation") * g("transfer"))
                .abs()
                < 1e-12
        );
    }
    // Adaptive windows hold at least the threshold of MPI events for every rank.
    let v = metrics(&[file.to_str().unwrap(), "--adaptive", "20"]);
    let w = v["runs"][0]["windows"].as_array().unwrap();
    assert!(!w.is_empty() && w.len() < 4096);
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn the_2004_legacy_trace_parses_quickly() {
    let file = common::public_root().join("paraver/legacy/qsort_beo3.prv");
    let start = std::time::Instant::now();
    let v = metrics(&[file.to_str().unwrap()]);
    assert!(
        start.elapsed().as_secs_f64() < 1.0,
        "took {:?}",
        start.elapsed()
    );
    let run = &v["runs"][0];
    assert_eq!(run["ranks"], 4);
    let notes = run["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("45 records")),
        "{notes:?}"
    );
    // No time unit in its header: microseconds.
    assert!((run["elapsed_s"].as_f64().unwrap() - 0.260199).abs() < 1e-9);
}

#[test]
fn mpip_report_gives_messages_bytes_and_pop() {
    let f = fixtures();
    let v = metrics(&[f.join("mpip/mpi_imbalance_2ranks.mpiP").to_str().unwrap()]);
    let run = &v["runs"][0];
    assert_eq!(run["kind"], "mpip");
    assert_eq!(run["ranks"], 2);
    let notes: Vec<&str> = run["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes.contains(&"rank 0: 8 messages, 65536 bytes sent (8192 bytes per message)"),
        "{notes:?}"
    );
    // Rank 0 computes about twice as long as rank 1.
    let lb = run["pop"]["load_balance"].as_f64().unwrap();
    assert!((lb - 0.75).abs() < 0.02, "{lb}");
}

#[test]
fn text_output_is_a_tree_with_two_decimals() {
    let f = fixtures();
    let (code, out, _) = jouleplan(&[
        "metrics",
        f.join("talp/test_mpi_sendrecv_profile_1_0.json")
            .to_str()
            .unwrap(),
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("  Host\n  Parallel efficiency"), "{out}");
    assert!(out.contains("   - MPI Parallel efficiency"), "{out}");
    assert!(out.contains("0.63\n"), "{out}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn csv_rows_and_window_plots() {
    let f = fixtures();
    let talp = f.join("talp/test_hybrid_profile_1_0.json");
    let (code, out, err) = jouleplan(&["metrics", "--csv", talp.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0]
            .starts_with("source,region,kind,ranks,elapsed_s,useful_s,host_parallel_efficiency,"),
        "{}",
        lines[0]
    );
    assert_eq!(lines.len(), 1 + 3, "one row per region: {out}");
    assert!(
        lines.iter().any(|l| l.contains("\"Global\",talp,2,")),
        "{out}"
    );

    let trace = common::public_root().join("paraver/epoch/epoch_2proc.prv.gz");
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("w.svg");
    let (code, _, err) = jouleplan(&[
        "metrics",
        trace.to_str().unwrap(),
        "--window",
        "500ms",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.contains("metrics per window") && text.contains("serialisation"),
        "plot lacks its legend"
    );
    let (code, _, err) = jouleplan(&[
        "metrics",
        trace.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--window DURATION or --adaptive N"), "{err}");
}
