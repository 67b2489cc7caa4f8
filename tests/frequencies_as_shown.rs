//! A frequency typed as the tables show it (`2.60` for a machine's 2.596 GHz) is the machine's
//! own, wherever the command line takes one (`--config`, `--reference`, `--freqs`,
//! `--use-freqs`); one no machine frequency rounds to is refused, naming the machine's.

mod common;

use common::{fit_into, jouleplan, write};
use std::path::{Path, PathBuf};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A machine of `freqs` GHz (as a VM's cpufreq reports them) and a profile fitted on it from
/// one-node runs of time `100/c/f + 1` s and power `100 + 3c` W, illustrative, not a
/// measurement. Returns (machine, profile, fit's output).
fn fitted(d: &Path, freqs: &[f64]) -> (PathBuf, PathBuf, String) {
    let list: Vec<String> = freqs.iter().map(f64::to_string).collect();
    let m = write(
        d,
        "vm.toml",
        &format!(
            "[machine]\nname = \"vm\"\nnodes = 4\ncores_per_node = 8\nfrequencies_ghz = [{}]\n\
             [network]\nlatency_s = 1e-6\nbandwidth_bytes_per_s = 1e9\n",
            list.join(", ")
        ),
    );
    let mut csv = String::from("nodes,cores,freq_hz,gpus,time_s,energy_j,energy_scope\n");
    for f in freqs.iter().map(|g| g * 1e9) {
        for c in [1.0, 2.0, 4.0, 8.0] {
            let t = 100.0 / c * (1e9 / f) + 1.0;
            csv += &format!("1,{c},{f},0,{t},{},node\n", (100.0 + 3.0 * c) * t);
        }
    }
    let runs = write(d, "runs.csv", &csv);
    let f = fit_into(d, &runs, &m, "m2.toml", &[]);
    (f.machine, f.profile, f.out)
}

/// A machine of 1.2 and 2.596 GHz and its profile ([`fitted`]). Returns (machine, profile).
fn vm(d: &Path) -> (PathBuf, PathBuf) {
    let (m, p, _) = fitted(d, &[1.2, 2.596]);
    (m, p)
}

#[test]
fn a_frequency_typed_as_the_tables_show_it_is_the_machines_own() {
    let tmp = tempfile::tempdir().unwrap();
    let (m, p) = vm(tmp.path());
    let with = |args: &[&str]| {
        let mut a = args.to_vec();
        a.extend_from_slice(&["--machine", s(&m), "--profile", s(&p)]);
        jouleplan(&a)
    };
    // The front table shows the frequency as 2.60 ...
    let (code, out, err) = with(&["plan"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("2.60"), "{out}");
    // ... and what it shows is taken back.
    let (code, out, err) = with(&["predict", "--config", "1,2,2.6"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("(1, 2, 2.596 GHz, 0)"), "{out}");
    let (code, out, err) = with(&["predict", "--config", "1,2,2.60GHz", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["freq_hz"], 2.596e9, "{out}");
    let (code, out, err) = with(&["plan", "--freqs", "2.6", "--nodes", "1"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("1 frequency"), "{out}");
    let (code, out, err) = with(&["plan", "--freqs", "1.2-2.6", "--nodes", "1"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("2 frequencies"), "{out}");
    let (code, out, err) = with(&["plan", "--slowdown", "0.5", "--reference", "1,8,2.6"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("reference (1, 8, 2.596 GHz, 0)"), "{out}");
    let (code, out, err) = with(&["validate", "--use-freqs", "2.6"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("1.20"),
        "the 1.2 GHz points are predicted: {out}"
    );
    // A frequency no machine frequency rounds to is refused, naming the machine's.
    let (code, out, err) = with(&["predict", "--config", "1,2,2.7"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--config") && err.contains("1.2, 2.596 GHz") && out.is_empty(),
        "{err}"
    );
    let (code, out, err) = with(&["plan", "--slowdown", "0.5", "--reference", "1,99,2.6"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--reference") && !err.contains("--config") && out.is_empty(),
        "{err}"
    );
    let (code, _, err) = with(&["plan", "--freqs", "2.59", "--nodes", "1"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--freqs") && err.contains("1.2, 2.596") && err.contains("`2.59`"),
        "{err}"
    );
}

/// A machine with frequencies 5 and 4 MHz apart (1.995 and 2.0, 2.596 and 2.6 GHz).
const CLOSE: [f64; 5] = [1.2, 1.995, 2.0, 2.596, 2.6];

/// `plan` on the [`CLOSE`] machine with `args`: (exit code, stdout, stderr).
fn plan_close(m: &Path, p: &Path, args: &[&str]) -> (i32, String, String) {
    let mut a = vec!["plan", "--machine", s(m), "--profile", s(p), "--nodes", "1"];
    a.extend_from_slice(args);
    jouleplan(&a)
}

/// The frequencies a JSON plan's space searched, GHz, ascending.
fn planned_ghz(out: &str) -> Vec<f64> {
    let v: serde_json::Value = serde_json::from_str(out).unwrap();
    let mut f: Vec<f64> = v["front"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["freq_hz"].as_f64().unwrap() / 1e9)
        .collect();
    f.sort_by(f64::total_cmp);
    f.dedup();
    f
}

#[test]
fn a_range_plans_exactly_the_machine_frequencies_within_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (m, p, _) = fitted(tmp.path(), &CLOSE);
    // (range, frequencies planned): an end that is a machine frequency is that one alone; an
    // end within 5 MHz of one machine frequency is that one; else (near two, or none) the end
    // is as typed: 1.996-2.599 holds 2.0 and 2.596 only.
    for (range, want) in [
        ("2.6-2.6", 1),
        ("2.0-2.0", 1),
        ("2.0-2.591", 2),
        ("1.995-2.0", 2),
        ("1.991-2.602", 4),
        ("1.996-2.599", 2),
        ("2.598-2.6", 1),
        ("1.2-2.6", 5),
    ] {
        let (code, out, err) = plan_close(&m, &p, &["--freqs", range]);
        assert_eq!(code, 0, "{range}: {err}");
        let n = if want == 1 {
            "1 frequency ".to_string()
        } else {
            format!("{want} frequencies")
        };
        assert!(out.contains(&n), "{range}: {out}");
    }
    // What each range searched, read from the configurations' frequencies: the front of
    // a range of one frequency holds only it.
    for (range, only) in [("2.6-2.6", 2.6), ("2.0-2.0", 2.0), ("2.596-2.596", 2.596)] {
        let (code, out, err) = plan_close(&m, &p, &["--freqs", range, "--json"]);
        assert_eq!(code, 0, "{range}: {err}");
        assert_eq!(planned_ghz(&out), vec![only], "{range}");
    }
    // The job script runs at the recommended frequency, not a neighbour 4 MHz off.
    let job = tmp.path().join("job.sh");
    let (code, _, err) = plan_close(
        &m,
        &p,
        &["--freqs", "2.6-2.6", "--sbatch", s(&job), "--app", "./app"],
    );
    assert_eq!(code, 0, "{err}");
    let script = std::fs::read_to_string(&job).unwrap();
    assert!(
        script.contains("--cpu-freq=2600000") && !script.contains("2596000"),
        "{script}"
    );
}

#[test]
fn frequencies_print_with_the_decimals_that_tell_the_machines_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let (m, p, fit) = fitted(tmp.path(), &CLOSE);
    // fit's per-frequency lines: one each, told apart.
    for f in [
        "1.200 GHz:",
        "1.995 GHz:",
        "2.000 GHz:",
        "2.596 GHz:",
        "2.600 GHz:",
    ] {
        assert_eq!(fit.matches(f).count(), 1, "{f}: {fit}");
    }
    assert!(!fit.contains(" 2.00 GHz:"), "{fit}");
    // calibrate power's per-frequency lines, from the profile's energy.
    let from = format!("program={}", s(&p));
    let out_toml = tmp.path().join("power.toml");
    let (code, power, err) = jouleplan(&[
        "calibrate",
        "power",
        "--machine",
        s(&m),
        "--output",
        s(&out_toml),
        "--from",
        &from,
    ]);
    assert_eq!(code, 0, "{err}");
    for f in [
        "1.995 GHz: P_idle",
        "2.000 GHz: P_idle",
        "2.596 GHz: P_idle",
    ] {
        assert_eq!(power.matches(f).count(), 1, "{f}: {power}");
    }
    // The front table: 2.596 and 2.6 GHz apart.
    for (freq, shown) in [("2.596", "2.596"), ("2.6", "2.600"), ("1.995", "1.995")] {
        let (code, out, err) = plan_close(&m, &p, &["--freqs", freq]);
        assert_eq!(code, 0, "{err}");
        let row = out
            .lines()
            .find(|l| l.starts_with('*'))
            .unwrap_or_else(|| panic!("{out}"));
        assert!(row.split_whitespace().any(|w| w == shown), "{freq}: {row}");
    }
    // A machine whose frequencies differ at two decimals keeps two.
    let two = tempfile::tempdir().unwrap();
    let (_, _, fit) = fitted(two.path(), &[1.2, 2.596]);
    assert!(
        fit.contains("2.60 GHz:") && !fit.contains("2.596 GHz:"),
        "{fit}"
    );
}

#[test]
fn a_frequency_near_two_machine_frequencies_is_refused_naming_both() {
    let tmp = tempfile::tempdir().unwrap();
    let (m, p, _) = fitted(tmp.path(), &CLOSE);
    let both = "within 5 MHz of both 2.596 and 2.6 GHz: type one of them";
    let (code, _, err) = plan_close(&m, &p, &["--freqs", "2.598"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--freqs") && err.contains(both), "{err}");
    for (cmd, flag, args) in [
        ("predict", "--config", vec!["--config", "1,2,2.598"]),
        ("validate", "--use-freqs", vec!["--use-freqs", "2.598"]),
    ] {
        let mut a = vec![cmd, "--machine", s(&m), "--profile", s(&p)];
        a.extend_from_slice(&args);
        let (code, out, err) = jouleplan(&a);
        assert_eq!(code, 2, "{cmd}: {err}");
        assert!(
            err.contains(flag) && err.contains(both) && out.is_empty(),
            "{cmd}: {err}"
        );
    }
    // Either one typed exactly is taken.
    let (code, out, err) = jouleplan(&[
        "predict",
        "--machine",
        s(&m),
        "--profile",
        s(&p),
        "--config",
        "1,2,2.6",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("(1, 2, 2.6 GHz, 0)"), "{out}");
}
