//! Profiles, fitted to a machine and evaluated: finite predictions or errors; never a panic.
#![no_main]
use jouleplan::calibrate::core_fill::fit_to_machine;
use jouleplan::model::machine::Machine;
use jouleplan::model::workload::Profile;
use jouleplan::model::{Config, Model, Outcome};
use jouleplan::units::Hertz;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

const MACHINE: &str = "[machine]\nname = \"m\"\nnodes = 8\ncores_per_node = 8\nfrequencies_ghz = [1.0, 2.0]\ngpus_per_node = 2\n[network]\nlatency_s = 1e-5\nbandwidth_bytes_per_s = 1e9\n[power]\nidle_w = 50.0\ncore_active_w = [5.0, 10.0]\ncore_stall_w = [2.0, 4.0]\nmemory_w = 6.0\nnetwork_w = 3.0\ngpu_active_w = 300.0\ngpu_idle_w = 50.0\n";

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(mut p) = Profile::from_json(Path::new("p.json"), &text) else {
        return;
    };
    let m = Machine::from_toml(Path::new("m.toml"), MACHINE).expect("the fixed machine is valid");
    fit_to_machine(&mut p, &m);
    let Ok(model) = Model::new(&m, &p) else {
        return;
    };
    for (n, c, g) in [(1, 1, 0), (4, 8, 1), (8, 4, 2)] {
        let cfg = Config {
            nodes: n,
            cores: c,
            freq: Hertz(2.0e9),
            gpus: g,
        };
        if let Ok(Outcome::Finite(pr)) = model.predict(cfg) {
            assert!(pr.time.0.is_finite() && pr.energy.0.is_finite());
        }
    }
});
