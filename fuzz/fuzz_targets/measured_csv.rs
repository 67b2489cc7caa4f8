//! The measured CSV as `fit --measured` and `validate --measured` read it, with its range
//! checks (a time of a microsecond to a year, an energy of a millijoule to 1e12 J at a power a
//! node can draw, at least one node and one core, ranks from one a node to one a core): an
//! error, or rows that hold to them. Never a subnormal, zero, infinite or NaN time or energy.
#![no_main]
use jouleplan::artefact::measured::read_rows;
use jouleplan::calibrate::runs::read_csv;
use jouleplan::limits::{Reading, plausible_node_power};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let path = Path::new("m.csv");
    // The rows as read, before any grouping or unit conversion.
    let _ = read_rows(path, data, |row, line| {
        assert!(line >= 2, "line {line}: {row:?}");
        assert!(Reading::RunTime.ok(row.time_s), "{row:?}");
        if let Some((e, _)) = row.energy() {
            assert!(Reading::RunEnergy.ok(e), "{row:?}");
            assert!(plausible_node_power(e, row.time_s, row.nodes), "{row:?}");
        }
        assert!(row.nodes >= 1 && row.cores >= 1, "{row:?}");
        assert!((1e7..=1e11).contains(&row.freq_hz), "{row:?}");
        if let Some(r) = row.ranks {
            assert!(r >= row.nodes && u64::from(r) <= u64::from(row.nodes) * u64::from(row.cores));
        }
        Ok(())
    });
    // What `validate` compares: the same checks on the converted rows.
    if let Ok(rows) = read_csv(path, &text) {
        for m in &rows {
            assert!(Reading::RunTime.ok(m.time_s), "{m:?}");
            assert!(m.config.freq.0.is_finite() && m.config.nodes >= 1 && m.config.cores >= 1);
            if let Some((e, _)) = m.energy {
                assert!(Reading::RunEnergy.ok(e), "{m:?}");
            }
            for (t, e) in &m.runs {
                assert!(Reading::RunTime.ok(*t) && e.is_none_or(|e| Reading::RunEnergy.ok(e)));
            }
        }
    }
});
