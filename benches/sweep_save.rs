//! What saving one finished run of a `profile` sweep costs, at run 10 and at run 10,000: the
//! journal append the sweep makes now (one JSON line, fsynced) against the whole-profile
//! rewrite it made before (the profile built from every run, written to a temporary, fsynced
//! and renamed). Files go to a temporary folder on the disk `TMPDIR` names.
//!
//! The runs are SYNTHETIC (one-node runs of one point with a wall time and no readings, the
//! least a run records). Run: `cargo bench --bench sweep_save`

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use jouleplan::artefact::profile::Growth;
use jouleplan::measure::Readings;
use jouleplan::measure::record::{self, Header, RunRecord, SweepRecord};
use jouleplan::measure::sweep::Journal;
use std::collections::BTreeMap;
use std::time::Duration;

fn run(i: usize) -> RunRecord {
    RunRecord {
        nodes: 1,
        cores: 1,
        freq_hz: 2.4e9,
        gpus: 0,
        repeat: i as u32 + 1,
        ok: true,
        failure: None,
        wall_s: 0.01 + (i % 97) as f64 * 1e-5,
        readings: Readings::default(),
        stderr_tail: String::new(),
        finished_unix: 1_700_000_000 + i as u64,
        layout: None,
        hosts: Vec::new(),
        host_list: None,
        gpu_clock_mhz: None,
    }
}

fn sweep(runs: usize) -> SweepRecord {
    SweepRecord {
        id: None,
        command: vec!["true".into()],
        ranks: 1,
        launcher: Vec::new(),
        launcher_nodes: Vec::new(),
        repeat: runs as u32,
        host: BTreeMap::new(),
        backends: BTreeMap::new(),
        unsupported: Vec::new(),
        frequency: "bench".into(),
        planned: vec![record::Planned {
            nodes: 1,
            cores: 1,
            freq_hz: 2.4e9,
            gpus: 0,
            gpu_clock_mhz: None,
        }],
        runs: (0..runs).map(run).collect(),
        complete: false,
        talp: Vec::new(),
        host_lists: Vec::new(),
    }
}

fn header() -> Header {
    Header {
        program: "true".into(),
        description: "bench".into(),
        baseline_iterations: 1.0,
        target_iterations: 1.0,
        growth: Growth::Constant,
        notes: Vec::new(),
    }
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut g = c.benchmark_group("save_one_run");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    for at in [10usize, 10_000] {
        let rec = sweep(at);
        let out = dir.path().join(format!("p{at}.json"));
        let mut journal = Journal::open(&out, None).expect("the journal opens");
        for (i, r) in rec.runs.iter().enumerate() {
            journal.append(i, r).expect("appended");
        }
        let last = run(at);
        g.bench_with_input(BenchmarkId::new("journal_append", at), &at, |b, &at| {
            b.iter(|| journal.append(at, &last).expect("appended"))
        });
        let h = header();
        g.bench_with_input(BenchmarkId::new("profile_rewrite", at), &at, |b, _| {
            b.iter(|| {
                let text = record::profile_file(&h, &rec).to_text().expect("JSON");
                jouleplan::atomic_write::write_atomic(&out, text.as_bytes(), false)
                    .expect("written")
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
