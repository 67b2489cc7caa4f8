//! Speed of the exact front on a large space: n 1-10,000, c 1-128, 30 frequencies,
//! 0-8 GPUs (about 3.5e8 configurations), single- and multi-threaded, plus the raw model
//! evaluation rate and the memory peak.
//!
//! The machine and profile are SYNTHETIC, built here only to have a space of that size with a
//! realistic shape (memory contention growing with cores, stall time constant in f, GPU offload,
//! neighbour exchanges); they describe no real system.
//!
//! Run: `cargo bench --bench search`

use criterion::{Criterion, criterion_group, criterion_main};
use jouleplan::model::Model;
use jouleplan::model::kernel::NodeTable;
use jouleplan::model::machine::Machine;
use jouleplan::model::workload::Profile;
use jouleplan::search::space::Space;
use jouleplan::search::{search, search_unpruned};
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

const NODES: u32 = 10_000;
const CORES: u32 = 128;
const FREQS: usize = 30;
const GPUS: u32 = 8;

fn freqs() -> Vec<f64> {
    (0..FREQS).map(|i| 0.8 + 0.1 * i as f64).collect()
}

fn machine(latency_s: f64) -> Machine {
    let f = freqs();
    let fmax = f[FREQS - 1];
    let list = |g: &dyn Fn(f64) -> f64| {
        f.iter()
            .map(|&x| format!("{:.4}", g(x)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let text = format!(
        "[machine]\nname = \"synthetic-large\"\nnodes = {NODES}\ncores_per_node = {CORES}\nfrequencies_ghz = [{}]\ngpus_per_node = {GPUS}\n\
         [network]\nlatency_s = {latency_s:e}\nbandwidth_bytes_per_s = 2.5e10\nswitch_bandwidth_bytes_per_s = 5.0e13\n\
         [power]\nidle_w = 150.0\ncore_active_w = [{}]\ncore_stall_w = [{}]\nmemory_w = 40.0\nnetwork_w = 20.0\ngpu_active_w = 700.0\ngpu_idle_w = 70.0\n",
        f.iter()
            .map(|x| format!("{x:.1}"))
            .collect::<Vec<_>>()
            .join(", "),
        list(&|x| 1.0 + 3.0 * (x / fmax).powf(2.5)),
        list(&|x| 0.6 * (1.0 + 3.0 * (x / fmax).powf(2.5))),
    );
    Machine::from_toml(Path::new("synthetic-large.toml"), &text).expect("synthetic machine")
}

/// The synthetic profile with `msgs` messages of `bytes` per iteration growing as `growth`.
fn profile(msgs: f64, bytes: f64, growth: &str) -> Profile {
    let mut points = Vec::new();
    for c in 1..=CORES {
        for f in freqs() {
            let fh = f * 1e9;
            for g in 0..=GPUS {
                let cf = f64::from(c);
                let offload = if g == 0 { 1.0 } else { 0.25 };
                let work = 2.0e13 * offload;
                let other = 0.1 * work;
                // memory stall time grows with contention among the c cores, constant in f
                let mem_time = 40.0 * offload * (1.0 + 0.002 * cf * cf) / cf;
                let mem = mem_time * cf * fh;
                let cycles = work + other + mem;
                let mut p = serde_json::json!({
                    "cores": c, "freq_hz": fh, "gpus": g, "cycles": cycles,
                    "stall_cycles": other + mem, "mem_stall_cycles": mem, "utilisation": 0.95,
                    "wall_time_s": cycles / (cf * fh),
                });
                if g > 0 {
                    let per = 600.0 / f64::from(g);
                    p["device"] = serde_json::json!({
                        "kernel_s": vec![per; g as usize],
                        "transfer_s": vec![0.1 * per; g as usize],
                        "host_runtime_s": 0.5 * per,
                    });
                }
                points.push(p);
            }
        }
    }
    let mut comm = serde_json::json!({"messages_per_iteration": msgs, "bytes_per_message": bytes, "growth": growth});
    if growth == "neighbours" {
        comm["neighbours"] = 6.into();
    }
    let doc = serde_json::json!({
        "format": "jouleplan-profile/1", "program": "synthetic",
        "iterations": {"baseline": 10, "target": 1000},
        "communication": comm,
        "baseline": points,
    });
    Profile::from_json(Path::new("synthetic.json"), &doc.to_string()).expect("synthetic profile")
}

fn status_kib(key: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Resets the peak-RSS mark (Linux: writing 5 to clear_refs) so that it measures what follows.
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Times `run` on rayon pools of 1 and 2 threads.
fn on_1_and_2_threads(c: &mut Criterion, name: &str, size: u64, run: &(dyn Fn() -> usize + Sync)) {
    let mut g = c.benchmark_group(name);
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    g.throughput(criterion::Throughput::Elements(size));
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        g.bench_function(format!("{threads}_threads"), |b| {
            b.iter(|| pool.install(|| black_box(run())))
        });
    }
    g.finish();
}

fn bench(c: &mut Criterion) {
    let slow = machine(1.5e-6);
    let fast = machine(1e-9);
    // Four workloads: two 64 KiB messages per iteration to 6 neighbours (most large node counts
    // saturate the single switch); none (nothing saturates: every configuration is swept); and
    // wide fronts: one 8-byte message per iteration on a 1 ns network, growing as
    // `constant` and as `log2` (fronts of thousands of points over most node counts).
    let workloads = [
        ("neighbours", &slow, 2.0, 65536.0, "neighbours"),
        ("no_messages", &slow, 0.0, 65536.0, "neighbours"),
        ("wide_constant", &fast, 1.0, 8.0, "constant"),
        ("wide_log2", &fast, 1.0, 8.0, "log2"),
    ];
    for (name, m, msgs, bytes, growth) in workloads {
        let m = m.clone();
        let p = profile(msgs, bytes, growth);
        let model = Model::new(&m, &p).expect("model");
        let space = Space::full(&m, &p);
        let rss = status_kib("VmRSS:");
        reset_peak();
        let once = search(&model, &space).expect("search");
        eprintln!(
            "{name}: {} configurations: {} saturated, {} pruned by bounds, {} evaluated one by one, front {} points; \
             RSS before {:?} KiB, peak during the search {:?} KiB",
            once.evaluated,
            once.saturated,
            once.pruned,
            once.evaluated - once.saturated - once.pruned,
            once.front.len(),
            rss,
            status_kib("VmHWM:")
        );
        on_1_and_2_threads(c, &format!("front_3.5e8_{name}"), space.size(), &|| {
            search(&model, &space).expect("search").front.len()
        });
    }

    // The worst case: a space the bounds cannot prune, built by switching them off
    // (`search_unpruned`) on the wide_constant workload, so all 3.456e8 configurations are
    // evaluated; the front must be the same as with the bounds.
    let p = profile(1.0, 8.0, "constant");
    let model = Model::new(&fast, &p).expect("model");
    let space = Space::full(&fast, &p);
    let pruned = search(&model, &space).expect("search");
    reset_peak();
    let all = search_unpruned(&model, &space).expect("search");
    assert_eq!(all.front, pruned.front, "the front depends on the bounds");
    eprintln!(
        "unpruned wide_constant: {} configurations, {} pruned by bounds, front {} points (the same \
         as with the bounds); peak RSS {:?} KiB",
        all.evaluated,
        all.pruned,
        all.front.len(),
        status_kib("VmHWM:")
    );
    on_1_and_2_threads(c, "unpruned_3.5e8_wide_constant", space.size(), &|| {
        search_unpruned(&model, &space).expect("search").front.len()
    });

    // Raw evaluation rate: every node count of 64 groups, no front, no pruning.
    let m = slow;
    let p = profile(0.0, 65536.0, "neighbours");
    let model = Model::new(&m, &p).expect("model");
    let space = Space::full(&m, &p);
    let groups: Vec<_> = space
        .groups(&model)
        .expect("groups")
        .into_iter()
        .step_by(540)
        .collect();
    let factors: Vec<f64> = space
        .nodes
        .iter()
        .map(|&n| model.growth_factor(n))
        .collect();
    let mut g = c.benchmark_group("eval");
    g.throughput(criterion::Throughput::Elements(
        (groups.len() * space.nodes.len()) as u64,
    ));
    g.bench_function("model_eval_one_thread", |b| {
        b.iter(|| {
            let mut acc = 0.0;
            for gr in &groups {
                for (i, &n) in space.nodes.iter().enumerate() {
                    if let Some(ev) = gr.eval(n, factors[i]) {
                        acc += ev.time + ev.energy;
                    }
                }
            }
            black_box(acc)
        })
    });
    let tab = NodeTable::new(
        &space.nodes,
        |n| model.growth_factor(n),
        |n| model.node_wait(n),
        model.is_weak(),
    );
    let (mut t, mut e) = (vec![0.0; space.nodes.len()], vec![0.0; space.nodes.len()]);
    g.bench_function("model_eval_range_one_thread", |b| {
        b.iter(|| {
            let mut acc = 0.0;
            for gr in &groups {
                gr.eval_range(&tab, 0, &mut t, &mut e);
                acc += t[t.len() / 2] + e[e.len() / 3];
            }
            black_box(acc)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
