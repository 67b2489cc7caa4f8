//! The bundled machines and example profile: they load, the default run plans something, and
//! their measured numbers match the raw data they came from (`tests/data/fixtures`).

mod common;

use assert_cmd::Command;
use jouleplan::calibrate::power::fit_line;
use jouleplan::model::{Config, Model, Outcome};
use jouleplan::search::inputs::{BUNDLED_MACHINES, load_machine, load_profile};
use std::path::PathBuf;

fn fixture_dir() -> PathBuf {
    common::fixture("energy/xeon-phi-spmv")
}

/// (threads, time, power, energy) of one frequency file, threads 1-57.
fn rows(dir: &std::path::Path, khz: u64) -> Vec<(u32, f64, f64, f64)> {
    let text = std::fs::read_to_string(dir.join(format!("spmv.{khz}.csv"))).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let c: Vec<f64> = l.split(',').map(|x| x.parse().unwrap()).collect();
            (c[0] as u32, c[2], c[3], c[1])
        })
        .filter(|r| r.0 <= 57)
        .collect()
}

#[test]
fn no_arguments_plans_the_bundled_default() {
    let out = Command::cargo_bin("jouleplan").unwrap().output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("machine xeon-phi-57c"), "{text}");
    assert!(text.contains("Pareto front, fastest first"), "{text}");
    assert!(text.contains("Recommendation: "), "{text}");
    assert!(text.contains("T_CPU") && text.contains("idle"), "{text}");
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
fn phi_power_numbers_are_the_fit_of_the_measured_data() {
    let dir = fixture_dir();
    let m = load_machine(Some("xeon-phi-57c")).unwrap();
    for (i, f) in m.frequencies.iter().enumerate() {
        let khz = (f.0 / 1e3).round() as u64;
        let fit = fit_line(
            &rows(&dir, khz)
                .iter()
                .map(|r| (f64::from(r.0), r.2))
                .collect::<Vec<_>>(),
        )
        .unwrap();
        assert!(
            (m.power.idle[i].0 - fit.intercept).abs() < 0.006,
            "{khz}: idle {}",
            fit.intercept
        );
        assert!(
            (m.power.core_active[i].0 - fit.slope).abs() < 6e-5,
            "{khz}: core {}",
            fit.slope
        );
    }
}

#[test]
fn phi_profile_holds_the_measured_times_and_predicts_measured_energy() {
    let dir = fixture_dir();
    let m = load_machine(Some("xeon-phi-57c")).unwrap();
    let p = load_profile(Some("spmv-xeon-phi")).unwrap();
    let model = Model::new(&m, &p).unwrap();
    let (mut sum_err, mut max_err, mut count) = (0.0, 0.0f64, 0);
    for f in &m.frequencies {
        let khz = (f.0 / 1e3).round() as u64;
        for (threads, time, _, energy) in rows(&dir, khz) {
            let point = p.point(threads, *f, 0).unwrap();
            assert_eq!(point.wall_time.0, time, "{threads} threads at {khz} kHz");
            assert_eq!(point.energy.unwrap().0, energy);
            let cfg = Config {
                nodes: 1,
                cores: threads,
                freq: *f,
                gpus: 0,
            };
            let Outcome::Finite(pred) = model.predict(cfg).unwrap() else {
                panic!()
            };
            // One node, U = 1, no messages: T is the measured time exactly.
            assert!((pred.time.0 - time).abs() < 1e-9 * time);
            let err = (pred.energy.0 - energy).abs() / energy;
            sum_err += err;
            max_err = max_err.max(err);
            count += 1;
        }
    }
    let mean = sum_err / f64::from(count);
    eprintln!(
        "in-sample energy error over {count} points: mean {:.2}%, max {:.2}%",
        mean * 100.0,
        max_err * 100.0
    );
    assert_eq!(count, 57 * 7);
    assert!(mean < 0.01 && max_err < 0.05, "mean {mean}, max {max_err}");
}
