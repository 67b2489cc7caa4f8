//! The node axis on real multi-node runs (MODEL.md 6c, docs/NODE_AXIS.md): SPEChpc 2021 codes on 1-32
//! Ice Lake nodes with RAPL energy (the public data read from `../shared/fixtures`, measured by Afzal, Hager and
//! Wellein, PMBS'23, GPL-3.0). Each code is fitted on a few node counts and every other count
//! up to 16 is predicted: the figures are the held-out error of `validate`.

mod common;

use common::{jouleplan, plan_full_nodes};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

const MACHINE: &str = "tests/data/machines/icelake-8360y.toml";

/// The code's rows whose node count `keep` accepts, as a CSV in `dir`.
fn subset(dir: &Path, code: &str, name: &str, keep: impl Fn(u32) -> bool) -> PathBuf {
    let text = std::fs::read_to_string(common::multinode(&format!("{code}.csv"))).unwrap();
    let mut lines = text.lines();
    let mut out = format!("{}\n", lines.next().unwrap());
    for l in lines {
        let n: u32 = l.split(',').next().unwrap().parse().unwrap();
        if keep(n) {
            out += &format!("{l}\n");
        }
    }
    let p = dir.join(name);
    std::fs::write(&p, out).unwrap();
    p
}

/// Fits `csv` against the Ice Lake machine (no `[power]`: fit writes it); returns (profile,
/// machine, stdout).
fn fit(dir: &Path, csv: &Path, tag: &str) -> (PathBuf, PathBuf, String) {
    fit_with(dir, csv, tag, &[])
}

/// [`fit`] with more flags (`--weak`).
fn fit_with(dir: &Path, csv: &Path, tag: &str, extra: &[&str]) -> (PathBuf, PathBuf, String) {
    let prof = dir.join(format!("{tag}.json"));
    let mach = dir.join(format!("{tag}.toml"));
    let machine = repo(MACHINE);
    let mut args = vec!["fit"];
    args.extend_from_slice(extra);
    args.extend([
        "--measured",
        s(csv),
        "--machine",
        s(&machine),
        "--profile-out",
        s(&prof),
        "--machine-out",
        s(&mach),
    ]);
    let (code, out, err) = jouleplan(&args);
    assert_eq!(code, 0, "{err}");
    (prof, mach, out)
}

/// Fits the code's one-node runs alone on `mach`; returns (profile, stdout).
fn fit_one_node(dir: &Path, code: &str, mach: &Path) -> (PathBuf, String) {
    let one = subset(dir, code, "one.csv", |n| n == 1);
    let p1 = dir.join("one.json");
    let (rc, said, err) = jouleplan(&[
        "fit",
        "--measured",
        s(&one),
        "--machine",
        s(mach),
        "--profile-out",
        s(&p1),
    ]);
    assert_eq!(rc, 0, "{err}");
    (p1, said)
}

/// `predict --json` of one configuration.
fn predict_json(mach: &Path, prof: &Path, config: &str) -> Value {
    let (rc, out, err) = jouleplan(&[
        "predict",
        "--machine",
        s(mach),
        "--profile",
        s(prof),
        "--config",
        config,
        "--json",
    ]);
    assert_eq!(rc, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

fn validate(mach: &Path, prof: &Path, csv: &Path) -> Value {
    let (code, out, err) = jouleplan(&[
        "validate",
        "--machine",
        s(mach),
        "--profile",
        s(prof),
        "--measured",
        s(csv),
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    v["validations"][0].clone()
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn fitted_on_1_2_4_8_nodes_the_other_counts_up_to_16_are_predicted_within_6_percent() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for code in ["hpgmgfv", "soma", "weather"] {
        let fit_csv = subset(d, code, "fit.csv", |n| [1, 2, 4, 8].contains(&n));
        let held = subset(d, code, "held.csv", |n| {
            ![1, 2, 4, 8].contains(&n) && n <= 16
        });
        let (prof, mach, said) = fit(d, &fit_csv, code);
        assert!(said.contains("node law over nodes 1, 2, 4, 8"), "{said}");
        // Every run counted, not only those on one node.
        assert!(said.contains("runs on 4 node counts"), "{said}");
        assert!(said.contains("leave-one-node-count-out error"), "{said}");
        assert!(
            said.contains("P_idle") && said.contains("per busy core"),
            "{said}"
        );
        let v = validate(&mach, &prof, &held);
        let (t, e) = (&v["time"], &v["energy"]);
        assert!(t["points"].as_u64().unwrap() >= 15, "{code}: {v}");
        assert_eq!(v["not_predicted"]["points"], 0, "{code}: {v}");
        assert!(t["mape_pct"].as_f64().unwrap() <= 6.0, "{code} time: {t}");
        assert!(e["mape_pct"].as_f64().unwrap() <= 6.0, "{code} energy: {e}");
        // Beyond 8 nodes every prediction carries an interval; most hold the measurement.
        let c = &v["interval_coverage"];
        let (n, held_t) = (
            c["time_points"].as_u64().unwrap(),
            c["time_covered"].as_u64().unwrap(),
        );
        assert!(n >= 9 && held_t * 10 >= n * 7, "{code}: {c}");
    }
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn validate_sets_the_node_counts_the_law_was_not_fitted_on_apart() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fit_csv = subset(d, "hpgmgfv", "fit.csv", |n| [1, 2, 4, 8].contains(&n));
    let (prof, mach, _) = fit(d, &fit_csv, "hpgmgfv");
    let rows = std::fs::read_to_string(&fit_csv).unwrap();
    let fitted = rows.lines().count() - 1;
    // The fit's own runs, a 3-node run of its layout and a 4-node run at 54 cores, a layout
    // never measured (a copy of a 4-node run with fewer cores: only its configuration is
    // asked about, its time the 72-core run's).
    let four = rows.lines().find(|l| l.starts_with("4,72,")).unwrap();
    // The 4-node run's line at `nodes` x `cores`, one rank a core.
    let at = |nodes: u32, cores: u32| {
        let mut f: Vec<String> = four.split(',').map(str::to_string).collect();
        (f[0], f[1], f[6]) = (
            nodes.to_string(),
            cores.to_string(),
            (nodes * cores).to_string(),
        );
        f.join(",")
    };
    let csv = d.join("mixed.csv");
    std::fs::write(&csv, format!("{rows}{}\n{}\n", at(3, 72), at(4, 54))).unwrap();
    let v = validate(&mach, &prof, &csv);
    let held = &v["not_fitted_on"];
    // The 3-node run is set apart; the 4-node one at 54 cores counts as fitted on (the law
    // keeps its node counts, not its runs' layouts: REFERENCE says so).
    assert_eq!(held["configurations"], 1, "{held}");
    assert_eq!(held["time"]["points"], 1, "{held}");
    assert!(fitted >= 4, "{rows}");
    // Only the fit's own runs: nothing to set apart.
    let v = validate(&mach, &prof, &fit_csv);
    assert!(v.get("not_fitted_on").is_none(), "{v}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_node_law_beats_perfect_scaling_from_one_node() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let code = "soma";
    let fit_csv = subset(d, code, "fit.csv", |n| [1, 2, 4, 8].contains(&n));
    let held = subset(d, code, "held.csv", |n| {
        ![1, 2, 4, 8].contains(&n) && n <= 16
    });
    let (prof, mach, _) = fit(d, &fit_csv, "law");
    // One node alone: the time is fitted, the power cannot be (one core count) and is said so.
    let (p1, said) = fit_one_node(d, code, &mach);
    assert!(said.contains("power: not fitted"), "{said}");
    let with_law = validate(&mach, &prof, &held)["time"]["mape_pct"]
        .as_f64()
        .unwrap();
    let perfect = validate(&mach, &p1, &held)["time"]["mape_pct"]
        .as_f64()
        .unwrap();
    assert!(
        perfect > 30.0 && with_law * 5.0 < perfect,
        "{with_law} vs {perfect}"
    );
}

/// `plan --nodes 1-16 --json` on a fitted pair.
fn plan(mach: &Path, prof: &Path) -> Value {
    let (code, out, err) = jouleplan(&[
        "plan",
        "--machine",
        s(mach),
        "--profile",
        s(prof),
        "--nodes",
        "1-16",
        "--cores",
        "72",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn the_recommended_node_count_wastes_little_energy_against_what_was_measured() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // lbm from its 3, 4, 8 nodes: at the prediction itself the least E x T was 7 nodes, 19.3%
    // above 8 nodes' energy; at the intervals' high ends it is a measured count.
    for code in ["hpgmgfv", "lbm", "soma", "sweep", "weather"] {
        // Each code's fewest measured nodes too (lbm starts at 3).
        let fit_csv = subset(d, code, "fit.csv", |n| {
            [1, 2, 4, 8].contains(&n) || (code == "lbm" && n == 3)
        });
        let (prof, mach, _) = fit(d, &fit_csv, code);
        let rec = plan(&mach, &prof)["recommendation"].clone();
        let n = rec["nodes"].as_u64().unwrap() as u32;
        let w = common::waste_at_72(code, n);
        assert!(w <= 0.10, "{code}: {n} nodes waste {:.1}%", 100.0 * w);
    }
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn from_one_node_no_recommendation_goes_beyond_two_nodes_without_its_interval() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fit_csv = subset(d, "hpgmgfv", "fit.csv", |n| [1, 2, 4, 8].contains(&n));
    let (_, mach, _) = fit(d, &fit_csv, "m");
    let (p1, _) = fit_one_node(d, "hpgmgfv", &mach);
    let p = plan(&mach, &p1);
    for f in p["front"].as_array().unwrap() {
        let beyond = f["nodes"].as_u64().unwrap() > 1;
        assert_eq!(f["time_interval_s"].is_array(), beyond, "{f}");
        assert_eq!(f["energy_interval_j"].is_array(), beyond, "{f}");
        if beyond {
            let (t, i) = (f["time_s"].as_f64().unwrap(), &f["time_interval_s"]);
            assert!(
                i[0].as_f64().unwrap() <= t && t < i[1].as_f64().unwrap(),
                "{f}"
            );
        }
    }
    let rec = &p["recommendation"];
    if rec["nodes"].as_u64().unwrap() > 2 {
        assert!(rec["time_interval_s"].is_array(), "{rec}");
        let next = rec["measure_next"].as_array().unwrap();
        assert!(!next.is_empty(), "{rec}");
        assert_eq!(next[0]["nodes"], 2, "{rec}");
        assert!(next.iter().all(|m| m["node_hours"].as_f64().unwrap() > 0.0));
    }
    // The text and the job script show it too.
    let script = d.join("job.sh");
    let (rc, out, err) = jouleplan(&[
        "plan",
        "--machine",
        s(&mach),
        "--profile",
        s(&p1),
        "--nodes",
        "4",
        "--cores",
        "72",
        "--sbatch",
        s(&script),
        "--app",
        "./hpgmgfv",
    ]);
    assert_eq!(rc, 0, "{err}");
    // One node measured: bounds, never called an interval.
    assert!(out.contains("bounds beyond the 1 node measured"), "{out}");
    assert!(out.contains("measure next: 2 nodes"), "{out}");
    let job = std::fs::read_to_string(&script).unwrap();
    assert!(job.contains("# Bounds beyond the 1 node measured"), "{job}");
}

#[test]
fn uneven_layouts_and_energy_scopes_are_read_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Fits `csv` and returns the refusal's stderr.
    let refused = |csv: &str| {
        let bad = d.join("bad.csv");
        std::fs::write(&bad, csv).unwrap();
        let (rc, _, err) = jouleplan(&[
            "fit",
            "--measured",
            s(&bad),
            "--machine",
            s(&repo(MACHINE)),
            "--profile-out",
            s(&d.join("p.json")),
        ]);
        assert_eq!(rc, 2, "{err}");
        err
    };
    let err = refused(
        "nodes,cores,freq_hz,gpus,time_s,energy_j,ranks,energy_scope\n\
         1,72,2.4e9,0,100,1e5,72,cpu\n2,63,2.4e9,0,60,1e5,200,cpu\n",
    );
    assert!(
        err.contains("line 3, column ranks") && err.contains("126"),
        "{err}"
    );
    let err = refused(
        "nodes,cores,freq_hz,gpus,time_s,energy_j,energy_scope\n1,72,2.4e9,0,100,1e5,rack\n",
    );
    assert!(err.contains("line 2, column energy_scope"), "{err}");
    assert!(!d.join("p.json").exists());
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn the_profile_keeps_its_law_and_the_machine_gets_its_power() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fit_csv = subset(d, "weather", "fit.csv", |n| [1, 2, 4, 8].contains(&n));
    let (prof, mach, _) = fit(d, &fit_csv, "w");
    let p: Value = serde_json::from_str(&std::fs::read_to_string(&prof).unwrap()).unwrap();
    let law = &p["node_law"];
    assert_eq!(law["measured_nodes"], serde_json::json!([1, 2, 4, 8]));
    // Four counts allow every law of the family (two parameters need three counts beyond
    // the anchor): 7 of perfect division, the model alone and 2 of n^-p; the heaviest judged
    // well out of sample, the combined law too.
    assert_eq!(law["laws_compared"], 10, "{law}");
    assert!(
        law["candidates"][0]["loo_rel"].as_f64().unwrap() < 0.05,
        "{law}"
    );
    let folds = law["combined"]["folds"].as_array().unwrap();
    assert_eq!(folds.len(), 3, "{law}");
    assert!(
        folds
            .iter()
            .all(|f| f["rel"].as_f64().unwrap().abs() < 0.05),
        "{law}"
    );
    let m = std::fs::read_to_string(&mach).unwrap();
    assert!(m.contains("[power]") && m.contains("idle_w"), "{m}");
    assert!(m.contains("bounded at 0"), "{m}");
    // The power is physical: no negative watts.
    let doc: toml::Value = toml::from_str(&m).unwrap();
    let idle = doc["power"]["idle_w"].as_array().unwrap()[0]
        .as_float()
        .unwrap();
    let core = doc["power"]["core_active_w"].as_array().unwrap()[0]
        .as_float()
        .unwrap();
    assert!(idle > 0.0 && core > 0.0, "{idle} {core}");
    // At one node the law adds nothing: the single-node run is reproduced as before.
    let v = predict_json(&mach, &prof, "1,72,2.4,0");
    assert_eq!(v["breakdown"]["t_nodes_s"], 0.0, "{v}");
    assert!(v["time_interval_s"].is_null(), "{v}");
    // Its law was fitted on strong scaling: a weak-scaling question is refused.
    let (rc, _, err) = jouleplan(&[
        "predict",
        "--weak",
        "--machine",
        s(&mach),
        "--profile",
        s(&prof),
        "--config",
        "4,72,2.4,0",
    ]);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("strong-scaling runs"), "{err}");
}

#[test]
fn a_program_profiled_as_one_process_is_never_planned_on_two_nodes() {
    let prof = repo("tests/data/fixtures/cpu-16core/heat_8192.json");
    // The node it was measured on, as a 64-node cluster.
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("cluster.toml");
    let text = std::fs::read_to_string(repo("models/h100-node.toml")).unwrap();
    std::fs::write(&m, text.replacen("\nnodes = 1\n", "\nnodes = 64\n", 1)).unwrap();
    let (rc, out, err) = jouleplan(&[
        "plan",
        "--machine",
        s(&m),
        "--profile",
        s(&prof),
        "--nodes",
        "1-64",
        "--json",
    ]);
    assert_eq!(rc, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(
        v["front"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["nodes"] == 1),
        "{v}"
    );
    assert!(
        v["notes"].to_string().contains("one process without MPI"),
        "{v}"
    );
    let (rc, _, err) = jouleplan(&[
        "plan",
        "--machine",
        s(&m),
        "--profile",
        s(&prof),
        "--nodes",
        "2-4",
    ]);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("one process without MPI"), "{err}");
}

#[test]
fn past_slurm_jobs_are_a_validation_set() {
    // Real sacct output of two jobs on a localhost Slurm (tests/data/sacct/README.md), against
    // the real profile of `sleep 1` recorded on the same VM (2 cores at 2.445 GHz).
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("vm.toml");
    std::fs::write(
        &m,
        "[machine]\nname = \"vm\"\nnodes = 64\ncores_per_node = 2\nfrequencies_ghz = [2.445]\n\
         [network]\nlatency_s = 1e-6\nbandwidth_bytes_per_s = 1e9\n\
         [power]\nidle_w = 50.0\ncore_active_w = 5.0\ncore_stall_w = 2.0\nmemory_w = 1.0\nnetwork_w = 1.0\n",
    )
    .unwrap();
    let prof = repo("tests/data/sleep/sleep_1.json");
    let sacct = repo("tests/data/sacct/localhost-sleep.txt");
    let (rc, out, err) = jouleplan(&[
        "validate",
        "--machine",
        s(&m),
        "--profile",
        s(&prof),
        "--sacct",
        s(&sacct),
        "--accept-model-error",
        "--json",
    ]);
    assert_eq!(rc, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let pts = v["validations"][0]["points"].as_array().unwrap().clone();
    let got: Vec<(u64, u64, f64)> = pts
        .iter()
        .map(|p| {
            (
                p["nodes"].as_u64().unwrap(),
                p["cores"].as_u64().unwrap(),
                p["time_s"].as_f64().unwrap(),
            )
        })
        .collect();
    // Listed by configuration, not in sacct's order.
    assert_eq!(got, vec![(1, 1, 1.0), (1, 2, 2.0)]);
    // The `sleep 1` job is the profiled program: predicted within sacct's one-second rounding.
    assert!(
        pts[0]["time_error"].as_f64().unwrap().abs() < 0.05,
        "{pts:?}"
    );
    // The `sleep 2` job is not: validation says so (-50%).
    assert!(pts[1]["time_error"].as_f64().unwrap() < -0.4, "{pts:?}");
    // A file without the needed fields is refused, naming the field.
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "JobID|Elapsed\n1|00:00:01\n").unwrap();
    let (rc, _, err) = jouleplan(&[
        "validate",
        "--machine",
        s(&m),
        "--profile",
        s(&prof),
        "--sacct",
        s(&bad),
    ]);
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("field nnodes") && err.contains("NNodes"),
        "{err}"
    );
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn weak_scaling_follows_lulesh_from_eight_nodes_to_thirty_one() {
    // LULESH with a fixed work per rank (lulesh-SIZE.csv, made from the public data): fitted on the
    // two-socket runs up to 8 nodes (one-node runs of 1-27 ranks use one socket, which RAPL's
    // CPU scope measures alone), predicted on 11-31 nodes (729-2,197 ranks).
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for size in ["150", "120"] {
        let code = format!("lulesh-{size}");
        let text = std::fs::read_to_string(common::multinode(&format!("{code}.csv"))).unwrap();
        let keep = |pick: &dyn Fn(u32, u32) -> bool, name: &str| {
            let mut out = String::new();
            for (i, l) in text.lines().enumerate() {
                let c: Vec<u32> = l
                    .split(',')
                    .take(2)
                    .filter_map(|v| v.parse().ok())
                    .collect();
                if i == 0 || (c.len() == 2 && pick(c[0], c[1])) {
                    out += &format!("{l}\n");
                }
            }
            let p = d.join(name);
            std::fs::write(&p, out).unwrap();
            p
        };
        let fit_csv = keep(&|n, c| n <= 8 && c > 36, "fit.csv");
        let held = keep(&|n, _| n > 8, "held.csv");
        let (prof, mach, said) = fit_with(d, &fit_csv, "w", &["--weak"]);
        assert!(
            said.contains("the same work per core (weak scaling)"),
            "{said}"
        );
        let v = validate(&mach, &prof, &held);
        let t = v["time"]["mape_pct"].as_f64().unwrap();
        // docs/NODE_AXIS.md: 8.0% for both sizes with the rule chosen on the other codes.
        assert!(t <= 8.5, "{code}: {v}");
        assert!(
            v["energy"]["mape_pct"].as_f64().unwrap() <= 7.0,
            "{code}: {v}"
        );
        // The profile knows it is weak: 16 nodes take longer than one, not a sixteenth.
        let at16 = predict_json(&mach, &prof, "16,72,2.4,0")["time_s"]
            .as_f64()
            .unwrap();
        // Without a law, weak scaling is flat: every count as fast as one node. Worse.
        let rows: Vec<Vec<f64>> = text
            .lines()
            .skip(1)
            .map(|l| l.split(',').map(|v| v.parse().unwrap_or(0.0)).collect())
            .collect();
        let t1 = rows.iter().find(|r| r[0] == 1.0 && r[1] > 36.0).unwrap()[4];
        let far: Vec<f64> = rows.iter().filter(|r| r[0] > 8.0).map(|r| r[4]).collect();
        let flat = 100.0 * far.iter().map(|t| (t1 / t - 1.0).abs()).sum::<f64>() / far.len() as f64;
        assert!(t < flat, "{code}: law {t}% against flat {flat}%");
        assert!(at16 > t1, "{code}: {at16} s at 16 nodes, {t1} s on one");
    }
}

/// The fit sets the design study and the README use: counts among 1, 2, 4, 8 (and the
/// fewest), among 1, 2, 4, and the 3 and 4 smallest counts.
fn fit_sets(code: &str) -> Vec<Vec<u32>> {
    let text = std::fs::read_to_string(common::multinode(&format!("{code}.csv"))).unwrap();
    let mut counts: Vec<u32> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    counts.sort_unstable();
    counts.dedup();
    let n0 = counts[0];
    let among = |set: &[u32]| -> Vec<u32> {
        let mut v: Vec<u32> = counts.iter().copied().filter(|n| set.contains(n)).collect();
        if !v.contains(&n0) {
            v.insert(0, n0);
        }
        v
    };
    let mut sets = vec![among(&[1, 2, 4, 8]), among(&[1, 2, 4])];
    sets.push(counts[..3].to_vec());
    sets.push(counts[..4].to_vec());
    sets.dedup();
    sets.retain(|s| s.len() >= 2);
    sets
}

const CODES: [&str; 9] = [
    "clvleaf", "hpgmgfv", "lbm", "pot3d", "soma", "sph_exa", "sweep", "tealeaf", "weather",
];

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn what_fit_writes_plan_and_validate_accept_for_every_fixture_code_and_subset() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut cases = 0;
    for code in CODES {
        for (k, set) in fit_sets(code).iter().enumerate() {
            let fit_csv = subset(d, code, "fit.csv", |n| set.contains(&n));
            let (prof, mach, _) = fit(d, &fit_csv, &format!("{code}-{k}"));
            plan(&mach, &prof);
            let held = subset(d, code, "held.csv", |n| !set.contains(&n) && n <= 16);
            if std::fs::read_to_string(&held).unwrap().lines().count() < 2 {
                continue;
            }
            let (rc, out, err) = jouleplan(&[
                "validate",
                "--machine",
                s(&mach),
                "--profile",
                s(&prof),
                "--measured",
                s(&held),
                "--json",
            ]);
            assert_eq!(rc, 0, "{code} {set:?}: {err}");
            let v: Value = serde_json::from_str(&out).unwrap();
            assert_eq!(v["model_problems"], serde_json::json!([]), "{code} {set:?}");
            cases += 1;
        }
    }
    assert!(cases >= 30, "{cases}");
    // Every node count at once: hpgmgfv's fit `plan` used to refuse (+5.2% against a 2.2%
    // bound) is accepted; where node power over 1-32 nodes leaves a root-mean-square residual
    // beyond 10% (soma: 13.5%), `fit` refuses at once, naming it, and writes nothing.
    for code in CODES {
        let all = common::multinode(&format!("{code}.csv"));
        let (prof, mach) = (
            d.join(format!("{code}-all.json")),
            d.join(format!("{code}-all.toml")),
        );
        let machine = repo(MACHINE);
        let (rc, _, err) = jouleplan(&[
            "fit",
            "--measured",
            s(&all),
            "--machine",
            s(&machine),
            "--profile-out",
            s(&prof),
            "--machine-out",
            s(&mach),
        ]);
        if rc == 0 {
            plan(&mach, &prof);
        } else {
            assert_ne!(code, "hpgmgfv", "{err}");
            assert!(
                err.contains("refused by `plan` (nothing written)"),
                "{code}: {err}"
            );
            assert!(err.contains("residual"), "{code}: {err}");
            assert!(!prof.exists() && !mach.exists());
        }
    }
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn every_count_not_measured_carries_an_interval_of_the_stated_coverage() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fit_csv = subset(d, "weather", "fit.csv", |n| [1, 2, 4, 8].contains(&n));
    let held = subset(d, "weather", "held.csv", |n| {
        ![1, 2, 4, 8].contains(&n) && n <= 16
    });
    let (prof, mach, said) = fit(d, &fit_csv, "w");
    // fit prints each law's weight and the combined law's own out-of-sample error.
    assert!(said.contains("weight"), "{said}");
    assert!(
        said.contains("combined law's leave-one-node-count-out error"),
        "{said}"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&prof).unwrap()).unwrap();
    let law = &doc["node_law"];
    let total: f64 = law["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["weight"].as_f64().unwrap())
        .sum();
    assert!((total - 1.0).abs() < 1e-9, "{law}");
    assert_eq!(law["combined"]["anchor_nodes"], 1);
    let width = |coverage: &str| -> (f64, Value) {
        let (rc, out, err) = jouleplan(&[
            "validate",
            "--machine",
            s(&mach),
            "--profile",
            s(&prof),
            "--measured",
            s(&held),
            "--json",
            "--coverage",
            coverage,
        ]);
        assert_eq!(rc, 0, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        let b = v["validations"][0].clone();
        let mut w = 0.0;
        for p in b["points"].as_array().unwrap() {
            // 3, 5, 6, 7 nodes lie between measured counts: they carry one too.
            let i = p["time_interval_s"]
                .as_array()
                .unwrap_or_else(|| panic!("{p}"));
            let (lo, hi) = (i[0].as_f64().unwrap(), i[1].as_f64().unwrap());
            let t = p["predicted_time_s"].as_f64().unwrap();
            assert!(lo < t && t < hi, "{p}");
            w += (hi - lo) / t;
        }
        (w, b["interval_coverage"].clone())
    };
    let (w80, c80) = width("0.8");
    let (w95, c95) = width("95%");
    assert_eq!(c80["nominal"], 0.8);
    assert_eq!(c95["nominal"], 0.95);
    // Wider, though not in proportion to z: part of each interval is the reach of the laws left
    // (from the most to the least favourable), which is the same at every coverage.
    assert!(w95 > 1.1 * w80, "{w80} {w95}");
    assert!(c95["time_covered"].as_u64() >= c80["time_covered"].as_u64());
    // The text rows show each interval and the nominal coverage beside the count held.
    let (_, text, _) = jouleplan(&[
        "validate",
        "--machine",
        s(&mach),
        "--profile",
        s(&prof),
        "--measured",
        s(&held),
    ]);
    assert!(
        text.contains("80% intervals at node counts not measured held"),
        "{text}"
    );
    assert!(text.contains("] "), "{text}");
    let (rc, _, err) = jouleplan(&[
        "validate",
        "--machine",
        s(&mach),
        "--profile",
        s(&prof),
        "--measured",
        s(&held),
        "--coverage",
        "1.5",
    ]);
    assert_eq!(rc, 2);
    assert!(
        err.contains("--coverage") && err.contains("0.5 to 0.999"),
        "{err}"
    );
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_law_anchored_at_the_fewest_nodes_reproduces_them() {
    // lbm was first measured on 3 nodes: the law vanishes there, so the 3-node runs are the
    // model's own (perfect scaling from them), not a law's extrapolation down to one node.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fit_csv = subset(d, "lbm", "fit.csv", |n| [3, 4, 8].contains(&n));
    let (prof, mach, said) = fit(d, &fit_csv, "lbm");
    assert!(said.contains("0 at 3 nodes"), "{said}");
    let p = predict_json(&mach, &prof, "3,72,2.4");
    let t = p["time_s"].as_f64().unwrap();
    // The two measured 3-node, 72-core runs: 776.8 s and 781.8 s.
    assert!((t / 779.3 - 1.0).abs() < 0.03, "{p}");
    assert!(p["time_interval_s"].is_null(), "{p}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn a_deadline_the_interval_crosses_is_a_named_risk_with_a_safe_alternative() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fit_csv = subset(d, "hpgmgfv", "fit.csv", |n| [1, 2, 4, 8].contains(&n));
    let (prof, mach, _) = fit(d, &fit_csv, "h");
    let p = predict_json(&mach, &prof, "9,72,2.4");
    let (t, hi) = (
        p["time_s"].as_f64().unwrap(),
        p["time_interval_s"][1].as_f64().unwrap(),
    );
    let deadline = format!("{:.1}s", (t + hi) / 2.0);
    let (rc, out, err) = jouleplan(&[
        "plan",
        "--machine",
        s(&mach),
        "--profile",
        s(&prof),
        "--nodes",
        "1-16",
        "--cores",
        "72",
        "--deadline",
        &deadline,
        "--json",
    ]);
    assert_eq!(rc, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let rec = &v["recommendation"];
    let risk = &rec["deadline_risk"];
    assert!(risk.is_object(), "{rec}");
    assert!(risk["interval_far_end"].as_f64().unwrap() > risk["limit"].as_f64().unwrap());
    let safe = &risk["safe"];
    let far = safe["time_interval_s"][1]
        .as_f64()
        .or(safe["time_s"].as_f64())
        .unwrap_or_else(|| panic!("{risk}"));
    assert!(far <= risk["limit"].as_f64().unwrap(), "{safe}");
    assert!(err.contains("deadline risk"), "{err}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn fit_loo_on_runs_over_several_nodes_predicts_their_energy() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fit_csv = subset(d, "hpgmgfv", "fit.csv", |n| [1, 2, 4, 8].contains(&n));
    let (_, _, said) = fit_with(d, &fit_csv, "loo", &["--loo"]);
    let block = said
        .split("leave-one-out: each configuration")
        .nth(1)
        .unwrap();
    assert!(!block.contains("-100.0%"), "{block}");
    let energy_line = block
        .lines()
        .find(|l| l.contains("CPU energy: mean absolute error"))
        .unwrap_or_else(|| panic!("{block}"));
    let mape: f64 = energy_line
        .split("error ")
        .nth(1)
        .and_then(|x| x.split('%').next())
        .and_then(|x| x.parse().ok())
        .unwrap();
    assert!(mape < 20.0, "{energy_line}");
}

#[test]
fn time_only_runs_on_one_node_fit_against_the_file_machine_init_writes() {
    // Recorded on a real H200 node (tests/data/h200-time-only): the machine file `machine
    // init` wrote there (no [power], no [network]) and time-only runs at 1, 4 and 16 cores.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mach = repo("tests/data/h200-time-only/node.toml");
    let csv = repo("tests/data/h200-time-only/runs.csv");
    let prof = d.join("p.json");
    let (rc, out, err) = jouleplan(&[
        "fit",
        "--measured",
        s(&csv),
        "--machine",
        s(&mach),
        "--profile-out",
        s(&prof),
    ]);
    assert_eq!(rc, 0, "{err}");
    assert!(err.contains("energy unavailable"), "{err}");
    assert!(out.contains("3 configurations from 6 runs"), "{out}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&prof).unwrap()).unwrap();
    assert!(doc["baseline"].as_array().unwrap().len() >= 3, "{doc}");
    // A machine file is not asked for and none can be written without energy.
    let (rc, _, err) = jouleplan(&[
        "fit",
        "--measured",
        s(&csv),
        "--machine",
        s(&mach),
        "--profile-out",
        s(&prof),
        "--machine-out",
        s(&d.join("m.toml")),
    ]);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("--machine-out"), "{err}");
    // Runs over several nodes still need the network (a row's node count changed: the file
    // is refused before any number is used).
    let two = std::fs::read_to_string(&csv)
        .unwrap()
        .replacen("\n1,", "\n2,", 1);
    let csv2 = d.join("two.csv");
    std::fs::write(&csv2, two).unwrap();
    let (rc, _, err) = jouleplan(&[
        "fit",
        "--measured",
        s(&csv2),
        "--machine",
        s(&mach),
        "--profile-out",
        s(&prof),
    ]);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("[network]"), "{err}");
}

#[test]
fn time_only_profiles_plan_by_time_and_node_hours_with_energy_said_unavailable() {
    // The real time-only runs of an H200 node (tests/data/h200-time-only) and the machine
    // file `machine init` wrote there: no [power], no [network].
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mach = repo("tests/data/h200-time-only/node.toml");
    let prof = d.join("p.json");
    let csv = repo("tests/data/h200-time-only/runs.csv");
    let fit = ["fit", "--measured", s(&csv), "--machine", s(&mach)];
    let (rc, _, err) = jouleplan(&[&fit[..], &["--profile-out", s(&prof)]].concat());
    assert_eq!(rc, 0, "{err}");
    let src = ["--machine", s(&mach), "--profile", s(&prof)];
    let (rc, out, err) = jouleplan(&[&["plan"], &src[..]].concat());
    assert_eq!(rc, 0, "{err}");
    assert!(err.contains("energy unavailable"), "{err}");
    assert!(
        out.contains("node-hours") && out.contains("energy: unavailable"),
        "{out}"
    );
    assert!(!out.contains(" J "), "no energy is printed: {out}");
    let (rc, out, err) = jouleplan(&[&["plan", "--json"], &src[..]].concat());
    assert_eq!(rc, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let rec = &doc["recommendation"];
    assert_eq!(doc["energy_scope"], "unavailable");
    assert!(
        rec["energy_j"].is_null() && rec["breakdown"]["e_idle_j"].is_null(),
        "{rec}"
    );
    let (n, t) = (
        rec["nodes"].as_f64().unwrap(),
        rec["time_s"].as_f64().unwrap(),
    );
    let nh = rec["node_hours"].as_f64().unwrap();
    assert!(
        (nh - n * t / 3600.0).abs() < 1e-12 * nh.max(1.0),
        "{nh} vs {n} x {t}"
    );
    // The fastest configuration is the one measured with the most cores (16 at 0.55 s).
    assert_eq!(doc["front"][0]["cores"], 16, "{}", doc["front"]);
    // Time predictions at one node; several nodes need the network; energy cannot be asked.
    let (rc, out, err) = jouleplan(&[&["predict", "--config", "1,4,2.1"], &src[..]].concat());
    assert_eq!(rc, 0, "{err}");
    assert!(
        out.contains("energy unavailable") && out.contains("node-seconds"),
        "{out}"
    );
    let (rc, _, err) = jouleplan(&[&["plan", "--budget", "1kJ"], &src[..]].concat());
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("--budget") && err.contains("energy is unavailable"),
        "{err}"
    );
    // The chart is drawn in node-hours.
    let chart = d.join("x.svg");
    let (rc, _, err) = jouleplan(&[&["plan", "--plot", s(&chart)], &src[..]].concat());
    assert_eq!(rc, 0, "{err}");
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(
        svg.lines().any(|l| l.trim() == "node-hours"),
        "axis not named"
    );
    // An infeasible deadline names the nearest point in node-hours, never in joules.
    let (rc, out, err) = jouleplan(&[&["plan", "--deadline", "1ms"], &src[..]].concat());
    assert_eq!(rc, 3, "{err}");
    let said = format!("{out}{err}");
    assert!(
        said.contains("the fastest, (1, 16, 2.1 GHz, 0) (546.5 ms, 0.547 node-seconds)"),
        "{said}"
    );
    // (" mJ" with its space: the temporary folder's random name may hold "mJ".)
    assert!(!said.contains(" J)") && !said.contains(" mJ"), "{said}");
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn time_only_runs_over_several_nodes_rank_node_counts_by_node_hours() {
    // hpgmgfv's real runs on 1, 2, 4, 8 nodes without their energy, against the Ice Lake
    // machine file, which has a [network] and no [power].
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let runs = subset(d, "hpgmgfv", "runs.csv", |n| [1, 2, 4, 8].contains(&n));
    // Without energy_j and energy_scope (columns 6 and 8).
    let cut: String = std::fs::read_to_string(&runs)
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            format!("{},{}\n", f[..5].join(","), f[6])
        })
        .collect();
    let csv = d.join("time.csv");
    std::fs::write(&csv, cut).unwrap();
    let mach = repo("tests/data/machines/icelake-8360y.toml");
    let prof = d.join("p.json");
    let fit = ["fit", "--measured", s(&csv), "--machine", s(&mach)];
    let (rc, _, err) = jouleplan(&[&fit[..], &["--profile-out", s(&prof)]].concat());
    assert_eq!(rc, 0, "{err}");
    let (rc, out, err) = plan_full_nodes(&mach, &prof, &["--json"]);
    assert_eq!(rc, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let front = doc["front"].as_array().unwrap();
    assert_eq!(
        front.len(),
        16,
        "every node count trades time for node-hours"
    );
    let nh: Vec<f64> = front
        .iter()
        .map(|f| f["node_hours"].as_f64().unwrap())
        .collect();
    assert!(
        nh.windows(2).all(|w| w[0] > w[1]),
        "fastest first, node-hours falling: {nh:?}"
    );
    let beyond = front.iter().find(|f| f["nodes"] == 16).unwrap();
    assert!(beyond["time_interval_s"].is_array(), "{beyond}");
    assert!(beyond["energy_interval_j"].is_null(), "{beyond}");
}

/// Numbers of a JSON value in document order (keys sorted), for comparing two fits.
fn numbers(v: &Value, out: &mut Vec<f64>) {
    match v {
        Value::Number(n) => out.push(n.as_f64().unwrap()),
        Value::Array(a) => a.iter().for_each(|x| numbers(x, out)),
        Value::Object(o) => o.values().for_each(|x| numbers(x, out)),
        _ => {}
    }
}

#[test]
#[cfg_attr(
    not(public_fixtures),
    ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
)]
fn every_run_repeated_three_times_fits_the_same_profile_and_node_power() {
    // Repeats are averaged one way: three copies of every run leave every mean, the node law's
    // points, node power and its residuals (each copy has the residual of its run) as they
    // were; only the run count and the run-to-run spread (copies agree exactly) may move.
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let text = std::fs::read_to_string(common::multinode("hpgmgfv.csv")).unwrap();
    let mut lines = text.lines();
    let mut thrice = format!("{}\n", lines.next().unwrap());
    let rows: Vec<&str> = lines.collect();
    for _ in 0..3 {
        rows.iter().for_each(|r| thrice += &format!("{r}\n"));
    }
    let csv = common::write(d, "thrice.csv", &thrice);
    let fit = |csv: &Path, tag: &str| -> Value {
        let (_, _, out) = fit_with(d, csv, tag, &["--json"]);
        serde_json::from_str(&out).unwrap()
    };
    let (once, three) = (
        fit(&common::multinode("hpgmgfv.csv"), "once"),
        fit(&csv, "thrice"),
    );
    assert_eq!(once["configurations"], three["configurations"]);
    assert_eq!(
        3 * once["runs"].as_u64().unwrap(),
        three["runs"].as_u64().unwrap()
    );
    for key in ["time_split", "power"] {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        numbers(&once[key], &mut a);
        numbers(&three[key], &mut b);
        assert_eq!(a.len(), b.len(), "{key}");
        for (x, y) in a.iter().zip(&b) {
            // `runs` of each frequency triples; every other figure is the same.
            assert!(
                common::close(*x, *y, 1e-12) || common::close(3.0 * x, *y, 0.0),
                "{key}: {x} against {y}"
            );
        }
    }
    for c in ["candidates", "combined", "residuals", "folds"] {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        numbers(&once["node_law"][c], &mut a);
        numbers(&three["node_law"][c], &mut b);
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            assert!(common::close(*x, *y, 1e-9), "node law {c}: {x} against {y}");
        }
        assert_eq!(
            once["node_law"]["combined"], three["node_law"]["combined"],
            "the combined law as written"
        );
    }
}
