//! Every reader on arbitrary and mutated input: a value that passes validation (finite, in its
//! range) or an error naming the input; never a panic, never a non-finite number.

mod common;

use common::{MACHINE, profile_json};
use jouleplan::calibrate::runs::{CsvText, read_csv};
use jouleplan::model::machine::Machine;
use jouleplan::model::workload::Profile;
use jouleplan::values::{
    parse_config, parse_duration, parse_energy, parse_int_spec, parse_slowdown,
};
use proptest::prelude::*;
use std::path::Path;

/// `text` with `flips` bytes replaced and cut at `cut`.
fn mutate(text: &str, cut: usize, flips: &[(usize, u8)]) -> String {
    let mut b = text.as_bytes().to_vec();
    for &(at, v) in flips {
        if at < b.len() {
            b[at] = v;
        }
    }
    b.truncate(cut.min(b.len()));
    String::from_utf8_lossy(&b).into_owned()
}

/// Numbers a mutation may put into a file: ordinary, extreme, non-finite spellings.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<f64>().prop_map(|v| format!("{v:e}")),
        Just("1e308".to_string()),
        Just("-1e308".to_string()),
        Just("1e-320".to_string()),
        Just("nan".to_string()),
        Just("inf".to_string()),
        Just("-0.0".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn machine_files_are_valid_or_refused(cut in 0usize..1200, flips in prop::collection::vec((0usize..1200, any::<u8>()), 0..6)) {
        let text = mutate(MACHINE, cut, &flips);
        if let Ok(m) = Machine::from_toml(Path::new("m.toml"), &text) {
            prop_assert!(m.network.bandwidth_bytes_per_s.is_finite() && m.network.bandwidth_bytes_per_s >= 1e3);
            prop_assert!(m.power.idle.iter().chain(&m.power.core_active).all(|w| w.0.is_finite() && w.0 >= 0.0));
        }
    }

    #[test]
    fn machine_numbers_are_in_range_or_refused(v in number(), key in 0usize..4) {
        let keys = ["idle_w = 50.0", "bandwidth_bytes_per_s = 1.0e9", "latency_s = 1.0e-5", "gpu_active_w = 300.0"];
        let name = keys[key].split(" = ").next().unwrap();
        let text = MACHINE.replace(keys[key], &format!("{name} = {v}"));
        if let Ok(m) = Machine::from_toml(Path::new("m.toml"), &text) {
            prop_assert!(m.power.idle.iter().all(|w| w.0.is_finite() && w.0 <= 1e5));
            prop_assert!(m.network.bandwidth_bytes_per_s <= 1e14 && m.network.latency.0 <= 1.0);
        }
    }

    #[test]
    fn profiles_are_valid_or_refused(cut in 0usize..6000, flips in prop::collection::vec((0usize..6000, any::<u8>()), 0..6)) {
        let text = mutate(&profile_json(), cut, &flips);
        if let Ok(p) = Profile::from_json(Path::new("p.json"), &text) {
            for b in &p.baseline {
                prop_assert!(b.cycles.is_finite() && b.cycles > 0.0 && b.wall_time.0.is_finite());
                prop_assert!(b.extra.serial.is_finite() && b.extra.wait.is_finite());
            }
        }
    }

    #[test]
    fn profile_numbers_are_in_range_or_refused(v in number(), field in 0usize..3) {
        let fields = ["cycles", "wall_time_s", "utilisation"];
        let mut doc: serde_json::Value = serde_json::from_str(&profile_json()).unwrap();
        if let Ok(x) = v.parse::<f64>() && x.is_finite() {
            doc["baseline"][0][fields[field]] = serde_json::json!(x);
        } else {
            doc["baseline"][0][fields[field]] = serde_json::json!(v);
        }
        if let Ok(p) = Profile::from_json(Path::new("p.json"), &doc.to_string()) {
            let b = &p.baseline[0];
            prop_assert!(b.cycles <= 1e21 && b.wall_time.0 <= 1e8 && b.utilisation <= 1.0);
        }
    }

    #[test]
    fn flag_values_parse_to_finite_positive_values_or_errors(s in ".{0,24}") {
        if let Ok(d) = parse_duration("--deadline", &s) { prop_assert!(d.0.is_finite() && d.0 > 0.0); }
        if let Ok(e) = parse_energy("--budget", &s) { prop_assert!(e.0.is_finite() && e.0 > 0.0); }
        if let Ok(f) = parse_slowdown("--slowdown", &s) { prop_assert!(f.is_finite() && f >= 0.0); }
        if let Ok(v) = parse_int_spec("--nodes", &s) { prop_assert!(v.len() <= 10_000_000); }
        if let Ok(c) = parse_config("--config", &s) { prop_assert!(c.freq.0.is_finite() && c.freq.0 > 0.0); }
    }

    #[test]
    fn measured_csvs_are_valid_or_refused(rows in prop::collection::vec(prop::collection::vec(number(), 6), 0..4)) {
        let mut text = String::from("nodes,cores,freq_hz,gpus,time_s,energy_j\n");
        for r in &rows {
            text += &r.join(",");
            text.push('\n');
        }
        if let Ok(m) = read_csv(Path::new("m.csv"), &text) {
            for x in m {
                prop_assert!(x.time_s.is_finite() && x.time_s > 0.0 && x.config.freq.0 >= 1e7);
                prop_assert!(x.energy.is_none_or(|e| e.0.is_finite()));
            }
        }
    }
}

/// The sparse Xeon Phi CSV that `jouleplan fit` reads (12 real runs).
fn sparse_csv() -> String {
    std::fs::read_to_string(common::xeon_phi("sparse.csv")).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    #[cfg_attr(
        not(public_fixtures),
        ignore = "needs the public fixtures: run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo test --release"
    )]
    fn fit_gives_finite_profiles_and_powers_or_an_error(cut in 0usize..700, flips in prop::collection::vec((0usize..700, any::<u8>()), 0..6), v in number(), line in 1usize..13, col in 4usize..6) {
        // Mutated bytes, and one time or energy replaced by an extreme or non-finite spelling.
        let mut lines: Vec<String> = sparse_csv().lines().map(str::to_string).collect();
        let mut cells: Vec<String> = lines[line].split(',').map(str::to_string).collect();
        cells[col] = v;
        lines[line] = cells.join(",");
        let text = mutate(&lines.join("\n"), cut, &flips);
        let machine = jouleplan::search::inputs::load_machine(Some(common::xeon_phi_fitted().1.to_str().unwrap())).unwrap();
        if let Ok(rows) = read_csv(Path::new("m.csv"), &text)
            && let Ok(f) = jouleplan::calibrate::from_measured::fit(Path::new("m.csv"), (&rows, &CsvText(Path::new("m.csv"), &text)), &machine, "p")
        {
            prop_assert!(f.profile.baseline.iter().all(|p| p.cycles.is_finite() && p.mem_stall_cycles.is_finite()));
            if let jouleplan::calibrate::from_measured::FittedPower::Laws(laws, p) = &f.power {
                prop_assert!(p.idle.iter().chain(&p.core_active).all(|w| w.0.is_finite() && w.0 >= 0.0));
                prop_assert!(laws.max_residual().is_finite());
            }
        }
    }

    #[test]
    fn ping_pong_records_fit_finite_networks_or_are_refused(times in prop::collection::vec(number(), 1..8)) {
        let sizes: Vec<String> = times
            .iter()
            .enumerate()
            .map(|(k, t)| format!(r#"{{"bytes":{},"one_way_s":[{t}]}}"#, 1u64 << (3 * k)))
            .collect();
        let text = format!(
            r#"{{"format":"jouleplan-pingpong/1","hosts":["a","b"],"date":"d","target_s":0.02,"sizes":[{}]}}"#,
            sizes.join(",")
        );
        if let Ok(r) = jouleplan::measure::pingpong::Record::from_text(Path::new("r.json"), &text) {
            prop_assert!(r.sizes.iter().all(|s| s.one_way_s.iter().all(|t| t.is_finite() && *t > 0.0)));
            if let Ok(f) = jouleplan::calibrate::network_fit::fit(&r.sizes) {
                prop_assert!(f.latency_s.is_finite() && f.bandwidth.is_finite() && f.bandwidth > 0.0);
            }
        }
    }
}
