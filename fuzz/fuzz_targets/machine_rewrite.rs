//! In-place machine rewrites (`calibrate network`, `calibrate power`, `fit --machine-out`): any
//! machine file that reads is rewritten with new `[network]` and `[power]` values, and the
//! result either reads back with those values or is refused with an error, never a panic.
#![no_main]
use jouleplan::calibrate::machine_edit::{Number, update};
use jouleplan::model::machine::Machine;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let file = Path::new("m.toml");
    let Ok(machine) = Machine::from_toml(file, &text) else {
        return;
    };
    let net = [
        ("latency_s", Number::One(2.5e-6)),
        ("bandwidth_bytes_per_s", Number::One(1.2e10)),
    ];
    if let Ok(new) = update(file, &text, "network", &net, "fuzz", true)
        && let Ok(m) = Machine::from_toml(file, &new)
    {
        assert_eq!(m.network.latency.0, 2.5e-6);
    }
    let per_f = Number::PerFrequency(vec![7.0; machine.frequencies.len()]);
    let pow = [("idle_w", Number::One(90.0)), ("core_active_w", per_f)];
    if let Ok(new) = update(file, &text, "power", &pow, "fuzz", false) {
        let _ = Machine::from_toml(file, &new);
    }
});
