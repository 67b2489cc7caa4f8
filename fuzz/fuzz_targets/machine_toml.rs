//! Machine files: a valid machine (every number finite and in range) or an error; never a panic.
#![no_main]
use jouleplan::model::machine::Machine;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(m) = Machine::from_toml(Path::new("m.toml"), &text) {
        assert!(m.network.bandwidth_bytes_per_s.is_finite() && m.network.latency.0.is_finite());
        assert!(
            m.power
                .idle
                .iter()
                .chain(&m.power.core_active)
                .all(|w| w.0.is_finite())
        );
    }
});
