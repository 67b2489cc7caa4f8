//! A newcomer's first hour, round 2 (issue 28): each friction found on a fresh clone, checked
//! on the real fixtures.

mod common;

use common::{fixture, jouleplan};

fn repo(rel: &str) -> String {
    format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// Joules of a printed energy (`209.3 J`, `1.25 kJ`, `3.1 MJ`).
fn joules(text: &str) -> f64 {
    let t = text.trim();
    let (num, unit) = t.split_at(t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len()));
    let v: f64 = num.trim().parse().unwrap_or_else(|_| panic!("{text:?}"));
    v * match unit.trim() {
        "J" => 1.0,
        "kJ" => 1e3,
        "MJ" => 1e6,
        "mJ" => 1e-3,
        u => panic!("unit {u:?} in {text:?}"),
    }
}

/// The total and the parts of `predict`'s text energy line.
fn energy_line(out: &str) -> (f64, Vec<f64>) {
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("energy"))
        .unwrap_or_else(|| panic!("{out}"));
    let (total, parts) = line.trim_start()["energy".len()..].split_once('=').unwrap();
    let parts = parts
        .split(" + ")
        .map(|p| {
            let words: Vec<&str> = p.split_whitespace().collect();
            joules(&words[words.len() - 2..].join(" "))
        })
        .collect();
    (joules(total), parts)
}

#[test]
fn every_text_energy_breakdown_sums_to_its_total() {
    let heat = fixture("cpu-16core/heat_8192.json");
    let sync = fixture("gpu-h100/sync.json");
    let cases = [
        (heat.clone(), "1,16,2.1,0"),
        (heat, "1,8,2.1,0"),
        (sync, "1,2,2.1,1"),
    ];
    for (profile, config) in cases {
        let (code, out, err) = jouleplan(&[
            "predict",
            "--profile",
            profile.to_str().unwrap(),
            "--machine",
            &repo("models/h100-node.toml"),
            "--config",
            config,
        ]);
        assert_eq!(code, 0, "{err}");
        let (total, parts) = energy_line(&out);
        let sum: f64 = parts.iter().sum();
        // Each part is rounded to 4 significant digits.
        assert!(
            (sum - total).abs() <= 0.002 * total,
            "{config}: parts sum to {sum} J, total {total} J:\n{out}"
        );
    }
}
