//! A frequency typed as the tables show it (`2.60` for a machine's 2.596 GHz) is the machine's
//! own, wherever the command line takes one (`--config`, `--reference`, `--freqs`,
//! `--use-freqs`); one no machine frequency rounds to is refused, naming the machine's.

mod common;

use common::{jouleplan, write};
use std::path::{Path, PathBuf};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A machine of 1.2 and 2.596 GHz (as a VM's cpufreq reports it) and a profile fitted on it
/// from one-node runs of time `100/c/f + 1` s and power `100 + 3c` W, illustrative, not a
/// measurement. Returns (machine, profile).
fn vm(d: &Path) -> (PathBuf, PathBuf) {
    let m = write(
        d,
        "vm.toml",
        "[machine]\nname = \"vm\"\nnodes = 4\ncores_per_node = 8\nfrequencies_ghz = [1.2, 2.596]\n\
         [network]\nlatency_s = 1e-6\nbandwidth_bytes_per_s = 1e9\n",
    );
    let mut csv = String::from("nodes,cores,freq_hz,gpus,time_s,energy_j,energy_scope\n");
    for f in [1.2e9, 2.596e9] {
        for c in [1.0, 2.0, 4.0, 8.0] {
            let t = 100.0 / c * (1e9 / f) + 1.0;
            csv += &format!("1,{c},{f},0,{t},{},node\n", (100.0 + 3.0 * c) * t);
        }
    }
    let runs = write(d, "runs.csv", &csv);
    let (p, m2) = (d.join("p.json"), d.join("m2.toml"));
    let (code, _, err) = jouleplan(&[
        "fit",
        "--measured",
        s(&runs),
        "--machine",
        s(&m),
        "--profile-out",
        s(&p),
        "--machine-out",
        s(&m2),
    ]);
    assert_eq!(code, 0, "{err}");
    (m2, p)
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
