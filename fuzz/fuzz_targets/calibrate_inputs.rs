//! The calibration stage's inputs: measured CSVs fitted by `jouleplan fit` (time split and
//! power laws: least squares and Gauss-Newton on arbitrary numbers must end, and give finite
//! values or an error), the same CSVs validated against the bundled model (finite statistics),
//! and ping-pong records fitted by `calibrate network`.
#![no_main]
use jouleplan::calibrate::runs::read_csv;
use jouleplan::calibrate::validate::{compare, summary};
use jouleplan::calibrate::{from_measured, network_fit};
use jouleplan::calibrate::core_fill::fit_to_machine;
use jouleplan::search::inputs::{load_machine, load_profile};
use jouleplan::model::Model;
use jouleplan::measure::pingpong::Record;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(rows) = read_csv(Path::new("m.csv"), &text) {
        let machine = load_machine(None).expect("bundled machine");
        // validate: every row predicted or named, statistics finite.
        let mut profile = load_profile(None).expect("bundled profile");
        fit_to_machine(&mut profile, &machine);
        if let Ok(model) = Model::new(&machine, &profile)
            && let Ok(c) = compare(&model, &rows)
        {
            let (t, e) = summary(&c);
            assert!([t.mape, t.max, e.mape, e.max].iter().all(|v| v.is_finite()));
        }
        if let Ok(f) = from_measured::fit(Path::new("m.csv"), &rows, &machine, "fuzz") {
            assert!(
                f.profile
                    .baseline
                    .iter()
                    .all(|p| p.cycles.is_finite() && p.wall_time.0.is_finite())
            );
            if let Some((_, p)) = &f.power {
                assert!(p.idle.iter().chain(&p.core_active).all(|w| w.0.is_finite()));
            }
        }
    }
    if let Ok(r) = Record::from_text(Path::new("r.json"), &text) {
        if let Ok(f) = network_fit::fit(&r.sizes) {
            assert!(f.latency_s.is_finite() && f.bandwidth.is_finite() && f.bandwidth > 0.0);
        }
    }
});
