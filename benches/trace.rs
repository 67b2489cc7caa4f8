//! Speed of `metrics` on a generated trace of at least 1 GB shaped like Extrae's output (64
//! ranks; per iteration a Running burst with counter reads, an MPI_Sendrecv to the ring
//! neighbour with a 40 KiB message record, and every 10th iteration an MPI_Allreduce; records
//! sorted by time as Extrae writes them): aggregate metrics only, and with the critical-path
//! replay; plus the peak memory of each.
//!
//! The trace is SYNTHETIC (written here, cached as target/bench-trace-1g.prv).
//! Run: `cargo bench --bench trace`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use jouleplan::metrics::paraver::{Options, analyse};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

const RANKS: u64 = 64;
const TARGET_BYTES: u64 = 1 << 30;
const STEP: u64 = 10_000;

/// One iteration's records, sorted by time.
fn iteration(i: u64, out: &mut Vec<u8>) {
    let t0 = i * STEP + 1000;
    let mut lines: Vec<(u64, String)> = Vec::with_capacity(RANKS as usize * 7);
    for r in 1..=RANKS {
        let work = 6000 + (r * 37 + i * 11) % 1500;
        let b = t0 + (r % 7);
        let e = b + work;
        let to = r % RANKS + 1;
        lines.push((b, format!("1:{r}:1:{r}:1:{b}:{e}:1")));
        lines.push((
            e,
            format!(
                "2:{r}:1:{r}:1:{e}:50000001:41:42000050:{}:42000059:{}",
                work * 3,
                work * 2
            ),
        ));
        lines.push((e, format!("1:{r}:1:{r}:1:{e}:{}:3", t0 + 8700)));
        // The receiver posts when it enters MPI; the data lands once both are there.
        // MPI_Sendrecv as Extrae records it: logical send = physical send = the sender's call
        // entry, logical receive = the receiver's call entry, data lands once both are in.
        let e_to = t0 + (to % 7) + 6000 + (to * 37 + i * 11) % 1500;
        lines.push((
            e,
            format!(
                "3:{r}:1:{r}:1:{e}:{e}:{to}:1:{to}:1:{e_to}:{}:40960:0",
                e.max(e_to) + 300
            ),
        ));
        lines.push((
            t0 + 8700,
            format!(
                "2:{r}:1:{r}:1:{}:50000001:0:42000050:120:42000059:900",
                t0 + 8700
            ),
        ));
        if i % 10 == 9 {
            lines.push((
                t0 + 9000,
                format!("2:{r}:1:{r}:1:{}:50000002:10:50100004:1", t0 + 9000),
            ));
            lines.push((t0 + 9500, format!("2:{r}:1:{r}:1:{}:50000002:0", t0 + 9500)));
        }
    }
    lines.sort_by_key(|l| l.0);
    for (_, l) in &lines {
        out.extend_from_slice(l.as_bytes());
        out.push(b'\n');
    }
}

fn generate(path: &Path) -> u64 {
    if let Ok(m) = std::fs::metadata(path)
        && m.len() >= TARGET_BYTES
    {
        return m.len();
    }
    // The header needs the end time: count the iterations first from one iteration's size.
    let mut probe = Vec::new();
    iteration(0, &mut probe);
    let iters = TARGET_BYTES / probe.len() as u64 + 2;
    let end = (iters + 1) * STEP;
    let tmp = path.with_extension("tmp");
    let mut w = std::io::BufWriter::with_capacity(
        1 << 22,
        std::fs::File::create(&tmp).expect("create trace"),
    );
    let tasks: Vec<String> = (0..RANKS).map(|_| "1:1".to_string()).collect();
    let all: Vec<String> = (1..=RANKS).map(|r| r.to_string()).collect();
    writeln!(
        w,
        "#Paraver (01/01/2026 at 00:00):{end}_ns:1({RANKS}):1:{RANKS}({}),1",
        tasks.join(",")
    )
    .unwrap();
    writeln!(w, "c:1:1:{RANKS}:{}", all.join(":")).unwrap();
    let mut buf = Vec::with_capacity(1 << 16);
    for i in 0..iters {
        buf.clear();
        iteration(i, &mut buf);
        w.write_all(&buf).unwrap();
    }
    w.flush().unwrap();
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
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-trace-1g.prv");
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
