//! Speed of one campaign step (`profile --nodes auto`): fit the runs so far and plan nodes
//! 1-16, then decide the next count, on each of the nine Ice Lake codes at the campaign's first
//! fit (its start: the smallest recorded counts at or above 1, 2 and 4, one run each, at 72
//! cores a node where the code was recorded so). A step runs `fit` and `plan` in memory through
//! the library (`Campaign::evaluate`, `Campaign::next`).
//!
//! Measured on the 2-core build machine, shared with other builds (criterion's median of 10
//! samples, three sessions, back to back): BEFORE, the step as the campaign made it, `fit` and
//! `plan` command lines parsed and run through the command line's code, a profile and a
//! machine file written (atomically, synced) and read again: 122, 204 and 505 ms for the nine
//! codes (the spread is the disk under other builds); NOW, in memory: 3.8, 4.0 and 3.8 ms.
//! With the rules that bracket, explore and confirm (each count judged by the query, measured
//! counts by the mean of their runs): 3.5 ms (median of 10, one session).
//!
//! Run: `cargo bench --bench campaign_step` (the per-code CSVs are made from the public
//! fixtures, `../shared/fixtures` or `JOULEPLAN_FIXTURES`).

use criterion::{Criterion, criterion_group, criterion_main};
use jouleplan::calibrate::fit::MachineDoc;
use jouleplan::campaign::replay::{Filter, Recorded};
use jouleplan::campaign::{Campaign, Quiet, Settings};
use std::path::Path;
use std::time::Duration;

#[allow(dead_code)]
#[path = "../tests/common/public.rs"]
mod public;

const CODES: [&str; 9] = [
    "clvleaf", "hpgmgfv", "lbm", "pot3d", "soma", "sph_exa", "sweep", "tealeaf", "weather",
];
const FULL: [&str; 5] = ["hpgmgfv", "lbm", "soma", "sweep", "weather"];

/// A code's campaign with its start measured (replayed from the recording).
fn started(code: &str) -> Campaign<Recorded> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/machines/icelake-8360y.toml");
    let machine = MachineDoc::new(&path, std::fs::read_to_string(&path).unwrap()).unwrap();
    let filter = Filter {
        cores: FULL.contains(&code).then(|| vec![72]),
        freqs_hz: None,
    };
    let recorded = Recorded::read(&public::multinode(&format!("{code}.csv")), &filter).unwrap();
    let mut settings = Settings::new(16, code, format!("{code}-runs.csv").into());
    settings.cores = filter.cores.clone();
    let mut k = Campaign::new(machine, settings, recorded).unwrap();
    for n in k.start() {
        k.measure(n, "start".into(), (1, None), &mut Quiet).unwrap();
    }
    k
}

fn bench(c: &mut Criterion) {
    if option_env!("JOULEPLAN_PUBLIC_FIXTURES").is_none() {
        eprintln!(
            "campaign_step: skipped: it replays the public Ice Lake runs, which this build did \
             not find (run scripts/public-data.sh DIR, then JOULEPLAN_FIXTURES=DIR cargo bench \
             --bench campaign_step)"
        );
        return;
    }
    let campaigns: Vec<Campaign<Recorded>> = CODES.iter().map(|k| started(k)).collect();
    let mut g = c.benchmark_group("campaign_step");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.bench_function("nine_icelake_codes_fit_and_plan", |b| {
        b.iter(|| {
            for k in &campaigns {
                let e = k.evaluate().expect("the start fits and plans");
                assert!(e.plan.recommendation().is_some());
                std::hint::black_box(k.next(&e));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
