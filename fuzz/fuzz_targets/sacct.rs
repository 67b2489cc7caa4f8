//! `sacct --parsable2` output as jouleplan reads it: the step energies `profile` reads after
//! each run under Slurm (`measure::slurm::parse_sacct`, `-n -P -o JobID,ConsumedEnergyRaw`) and
//! the past jobs of `validate --sacct` (`calibrate::sacct_runs::read`, a header naming the
//! fields), the latter on a machine of one frequency and on one of several. An error, or times
//! and energies finite and within the readers' shared range: never a Slurm marker
//! (18446744073709551614) taken as joules, never inf or NaN.
#![no_main]
use jouleplan::calibrate::{reproduce::EnergyScope, sacct_runs};
use jouleplan::limits::{Reading, plausible_node_power};
use jouleplan::measure::slurm::parse_sacct;
use jouleplan::model::machine::Machine;
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use std::sync::OnceLock;

fn machines() -> &'static [Machine; 2] {
    static M: OnceLock<[Machine; 2]> = OnceLock::new();
    M.get_or_init(|| {
        let one = include_str!("../../models/h100-node.toml");
        let several = include_str!("../../models/xeon-e5-2603-cluster.toml");
        [
            Machine::from_toml(Path::new("one.toml"), one).expect("bundled machine"),
            Machine::from_toml(Path::new("several.toml"), several).expect("bundled machine"),
        ]
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for (id, e) in parse_sacct(&text) {
        if let Some(e) = e {
            assert!(
                Reading::RunEnergy.ok(e),
                "step {id}: {e} J taken as a reading"
            );
        }
    }
    for m in machines() {
        for scope in [EnergyScope::Node, EnergyScope::Cpu] {
            let Ok(rows) = sacct_runs::read(Path::new("s.txt"), &text, m, scope) else {
                continue;
            };
            assert!(!rows.is_empty());
            for r in &rows {
                let c = &r.config;
                assert!(c.nodes >= 1 && c.cores >= 1, "{r:?}");
                assert!(m.frequencies.contains(&c.freq), "{r:?}");
                assert!(Reading::RunTime.ok(r.time_s), "{r:?}");
                if let Some((e, s)) = r.energy {
                    assert!(Reading::RunEnergy.ok(e), "{r:?}");
                    assert!(plausible_node_power(e, r.time_s, c.nodes), "{r:?}");
                    assert_eq!(s, scope);
                }
                if let Some(ranks) = r.ranks {
                    let most = u64::from(c.nodes) * u64::from(c.cores);
                    assert!(ranks >= 1 && u64::from(ranks) <= most, "{r:?}");
                }
                for (t, e) in &r.runs {
                    assert!(Reading::RunTime.ok(*t), "{r:?}");
                    assert!(e.is_none_or(|e| Reading::RunEnergy.ok(e)), "{r:?}");
                }
            }
        }
    }
});
