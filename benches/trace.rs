//! Speed of `metrics` on a generated trace of 1.08 GB shaped like Extrae's output (256 ranks
//! x 16,000 iterations of a ring MPI_Sendrecv with 40 KiB messages, an MPI_Allreduce every 10th,
//! bursts imbalanced by up to 40%; see `support/trace_gen.rs`): aggregate metrics only, and with
//! the critical-path replay. Criterion reports the throughput (bytes per second); the peak
//! memory of one analysis of each kind is printed before it.
//!
//! The trace is SYNTHETIC (written here, cached as target/bench-trace-256x16000.prv).
//! Run: `cargo bench --bench trace`

#[path = "support/trace_gen.rs"]
mod trace_gen;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use jouleplan::metrics::paraver::{Options, analyse};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

const SHAPE: trace_gen::Shape = trace_gen::Shape {
    ranks: 256,
    iterations: 16_000,
    imbalance: 0.4,
    message_bytes: 40_960,
    allreduce_every: 10,
};

fn generate(path: &Path) -> u64 {
    if let Ok(m) = std::fs::metadata(path)
        && m.len() > 0
    {
        return m.len();
    }
    let tmp = path.with_extension("tmp");
    let f = std::fs::File::create(&tmp).expect("create trace");
    let mut w = std::io::BufWriter::with_capacity(1 << 22, f);
    SHAPE.write(&mut w).expect("write trace");
    w.flush().expect("write trace");
    drop(w);
    std::fs::rename(&tmp, path).expect("rename trace");
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

fn status_kib(key: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find(|l| l.starts_with(key))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn bench(c: &mut Criterion) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!(
        "target/bench-trace-{}x{}.prv",
        SHAPE.ranks, SHAPE.iterations
    ));
    let bytes = generate(&path);
    let mut g = c.benchmark_group("trace_1g");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(30))
        .throughput(Throughput::Bytes(bytes));
    for (name, off) in [("aggregates_only", true), ("with_critical_path", false)] {
        let opts = Options {
            eager_limit: 32 * 1024,
            no_critical_path: off,
            ..Options::default()
        };
        let rss = status_kib("VmRSS:");
        // Resets the peak to the current size, so the peak below is this analysis's own.
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        let run = analyse(&path, &opts).expect("analyse");
        eprintln!(
            "{name}: {bytes} bytes, {} ranks, pop {:?}, notes {:?}; RSS before {:?} KiB, peak during {:?} KiB",
            run.ranks,
            run.pop,
            run.notes,
            rss,
            status_kib("VmHWM:")
        );
        g.bench_function(name, |b| {
            b.iter(|| analyse(&path, &opts).expect("analyse").ranks)
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
