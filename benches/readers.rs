//! Speed of the artefact readers: a measured CSV of 200,000 rows (8 MB) read as a stream
//! through `MeasuredRow`, the same rows aggregated into one measurement per configuration as
//! `fit` and `validate` read them (`calibrate::runs::read_csv`: 15 configurations), and the largest recorded profile in the repository
//! (`tests/data/gpu-h100-run2/sync_all.json`, with its sweep record) read and validated
//! through `ProfileFile`. Criterion reports rows (or bytes) per second.
//!
//! The CSV is SYNTHETIC (written here in memory; its numbers are illustrative, shaped like
//! the Ice Lake measured-run CSVs of `scripts/multinode_csv.sh`). Run: `cargo bench --bench readers`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use jouleplan::artefact::measured;
use jouleplan::artefact::profile::ProfileFile;
use std::path::Path;
use std::time::Duration;

const ROWS: u64 = 200_000;

fn csv_text() -> String {
    let mut s = String::from("nodes,cores,freq_hz,gpus,time_s,energy_j,ranks,energy_scope\n");
    for i in 0..ROWS {
        let n = 1u64 << (i % 5);
        let c = [36u64, 54, 72][(i % 3) as usize];
        let t = 1000.0 / (n * c) as f64 * (1.0 + (i % 97) as f64 / 2000.0);
        s += &format!(
            "{n},{c},2400000000,0,{t:.4},{:.1},{},cpu\n",
            t * 300.0 * n as f64,
            n * c
        );
    }
    s
}

fn bench(c: &mut Criterion) {
    let text = csv_text();
    let mut g = c.benchmark_group("readers");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    g.throughput(Throughput::Elements(ROWS));
    g.bench_function("measured_csv_200k_rows", |b| {
        b.iter(|| {
            let mut n = 0u64;
            measured::read_rows(Path::new("m.csv"), text.as_bytes(), |_, _| {
                n += 1;
                Ok(())
            })
            .expect("the generated CSV reads");
            n
        })
    });
    g.bench_function("measured_csv_200k_rows_aggregated", |b| {
        b.iter(|| {
            let rows = jouleplan::calibrate::runs::read_csv(Path::new("m.csv"), &text)
                .expect("the generated CSV reads");
            assert_eq!(rows.len(), 15);
            rows
        })
    });
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/gpu-h100-run2/sync_all.json");
    let profile = std::fs::read_to_string(&path).expect("the recorded profile");
    g.throughput(Throughput::Bytes(profile.len() as u64));
    g.bench_function("profile_sync_all", |b| {
        b.iter(|| ProfileFile::read(&path, &profile).expect("the recorded profile reads"))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
