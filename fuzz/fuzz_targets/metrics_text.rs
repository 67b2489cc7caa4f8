//! The text readers of `metrics` and `profile`: TALP JSON and CSV, mpiP, `perf stat -x,`, and
//! measured CSVs. A value or an error; never a panic.
#![no_main]
use jouleplan::calibrate::runs::read_csv;
use jouleplan::measure::perfstat;
use jouleplan::metrics::{mpip, run, talp};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(f) = talp::read(Path::new("t.json"), &text) {
        let _ = run::from_talp(&f);
    }
    if let Ok(f) = talp::read(Path::new("t.csv"), &text) {
        let _ = run::from_talp(&f);
    }
    if let Ok(r) = mpip::parse(Path::new("r.mpiP"), &text) {
        let _ = run::from_mpip(&r);
    }
    if let Ok(lines) = perfstat::parse(Path::new("p.csv"), &text) {
        let _ = perfstat::readings(&lines, None);
    }
    if let Ok(rows) = read_csv(Path::new("m.csv"), &text) {
        assert!(rows.iter().all(|r| r.time_s.is_finite() && r.time_s > 0.0));
    }
});
