//! Flag values: durations, energies, fractions, specs and configurations parse to finite,
//! positive, bounded values or errors; never a panic.
#![no_main]
use jouleplan::values::{
    parse_bytes, parse_config, parse_duration, parse_energy, parse_ghz_values, parse_int_spec,
    parse_slowdown,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let s = String::from_utf8_lossy(data);
    if let Ok(d) = parse_duration("--deadline", &s) {
        assert!(d.0.is_finite() && d.0 > 0.0);
    }
    if let Ok(e) = parse_energy("--budget", &s) {
        assert!(e.0.is_finite() && e.0 > 0.0);
    }
    if let Ok(f) = parse_slowdown("--slowdown", &s) {
        assert!(f.is_finite() && f >= 0.0);
    }
    if let Ok(v) = parse_int_spec("--nodes", &s) {
        assert!(v.len() <= 10_000_000);
    }
    if let Ok(c) = parse_config("--config", &s) {
        assert!(c.freq.0.is_finite() && c.freq.0 > 0.0 && c.freq.0 <= 5e10);
    }
    if let Ok(v) = parse_ghz_values("--freqs", &s) {
        assert!(v.iter().all(|f| f.is_finite() && *f > 0.0 && *f <= 5e10));
    }
    if let Ok(b) = parse_bytes("--max-bytes", &s) {
        assert!((1..=1 << 30).contains(&b));
    }
});
