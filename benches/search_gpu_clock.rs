//! Speed of the exact front with the GPU clock axis on (MODEL.md section 6e): n 1-1,000,
//! c 1-64, 10 CPU frequencies, 0-4 GPUs and 16 GPU core clocks (4.16e7 configurations, 65
//! GPU settings per `(c, f)`), against the same space at the reference clock only.
//!
//! The machine, profile and clock law are SYNTHETIC, built here only to have a space of that
//! size with a realistic shape (the clocks are the GTX Titan X's application clock list, the
//! law's form is MODEL.md 6e's); they describe no real system or measurement.
//!
//! Run: `cargo bench --bench search_gpu_clock`

use criterion::{Criterion, criterion_group, criterion_main};
use jouleplan::model::Model;
use jouleplan::model::machine::Machine;
use jouleplan::model::workload::Profile;
use jouleplan::search::search;
use jouleplan::search::space::Space;
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

const NODES: u32 = 1_000;
const CORES: u32 = 64;
const GPUS: u32 = 4;
/// The supported application clocks of a GTX Titan X, MHz (its public sweeps' list).
const CLOCKS: [f64; 16] = [
    595.0, 633.0, 671.0, 709.0, 747.0, 785.0, 823.0, 861.0, 899.0, 937.0, 975.0, 1013.0, 1050.0,
    1088.0, 1126.0, 1164.0,
];

fn freqs() -> Vec<f64> {
    (0..10).map(|i| 1.2 + 0.2 * f64::from(i)).collect()
}

fn machine() -> Machine {
    let f = freqs();
    let fmax = f[f.len() - 1];
    let list = |g: &dyn Fn(f64) -> f64| {
        f.iter()
            .map(|&x| format!("{:.4}", g(x)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let clocks: Vec<String> = CLOCKS.iter().map(|c| format!("{c}")).collect();
    let text = format!(
        "[machine]\nname = \"synthetic-gpu-clocks\"\nnodes = {NODES}\ncores_per_node = {CORES}\nfrequencies_ghz = [{}]\ngpus_per_node = {GPUS}\ngpu_clocks_mhz = [{}]\n\
         [network]\nlatency_s = 1.5e-6\nbandwidth_bytes_per_s = 2.5e10\nswitch_bandwidth_bytes_per_s = 5.0e13\n\
         [power]\nidle_w = 150.0\ncore_active_w = [{}]\ncore_stall_w = [{}]\nmemory_w = 40.0\nnetwork_w = 20.0\ngpu_active_w = 250.0\ngpu_idle_w = 60.0\n",
        f.iter()
            .map(|x| format!("{x:.1}"))
            .collect::<Vec<_>>()
            .join(", "),
        clocks.join(", "),
        list(&|x| 1.0 + 3.0 * (x / fmax).powf(2.5)),
        list(&|x| 0.6 * (1.0 + 3.0 * (x / fmax).powf(2.5))),
    );
    Machine::from_toml(Path::new("synthetic-gpu-clocks.toml"), &text).expect("synthetic machine")
}

/// A GPU-offloading profile with points at every `(c, f, g)` and a clock law fitted on three
/// clocks (`a/f + m` with residuals, `P0 + k f^5`): a kernel whose time changes little with the
/// clock (a memory-bound one), so that lower clocks reach the front.
fn profile() -> Profile {
    let mut points = Vec::new();
    for c in 1..=CORES {
        for f in freqs() {
            let fh = f * 1e9;
            for g in 0..=GPUS {
                let cf = f64::from(c);
                let offload = if g == 0 { 1.0 } else { 0.25 };
                let work = 2.0e13 * offload;
                let mem_time = 40.0 * offload * (1.0 + 0.002 * cf * cf) / cf;
                let mem = mem_time * cf * fh;
                let cycles = work + 0.1 * work + mem;
                let mut p = serde_json::json!({
                    "cores": c, "freq_hz": fh, "gpus": g, "cycles": cycles,
                    "stall_cycles": 0.1 * work + mem, "mem_stall_cycles": mem, "utilisation": 0.95,
                    "wall_time_s": cycles / (cf * fh),
                });
                if g > 0 {
                    let per = 60.0 / f64::from(g);
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
    let doc = serde_json::json!({
        "format": "jouleplan-profile/1", "program": "synthetic",
        "iterations": {"baseline": 10, "target": 1000},
        "communication": {"messages_per_iteration": 2.0, "bytes_per_message": 65536.0,
                          "growth": "neighbours", "neighbours": 6},
        "baseline": points,
        "gpu_clock": {
            "reference_mhz": 1164.0, "measured_mhz": [595.0, 975.0, 1164.0], "kernel_max_s": 60.0,
            "time": {"a_s_mhz": 30000.0, "m_s": 100.0, "residuals_s": [0.5, -0.8, 0.3],
                     "law_residual_max": 0.01},
            "power": {"p0_w": 60.0, "k_w": 180.0, "alpha": 5.0, "residual_max": 0.01},
            "source": "synthetic (bench)",
            "interval": {"time_rel": 0.015, "energy_rel": 0.03}
        },
    });
    Profile::from_json(Path::new("synthetic.json"), &doc.to_string()).expect("synthetic profile")
}

fn bench(c: &mut Criterion) {
    let m = machine();
    let p = profile();
    let model = Model::new(&m, &p).expect("model");
    let mut g = c.benchmark_group("gpu_clock_axis");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    for (name, clocks) in [
        ("16_clocks", CLOCKS.to_vec()),
        ("reference_clock", Vec::new()),
    ] {
        let mut space = Space::full(&m, &p);
        space.gpu_clocks = clocks;
        let once = search(&model, &space).expect("search");
        let with_gpus = once.front.iter().filter(|p| p.key.3 > 0).count();
        let below_top = once
            .front
            .iter()
            .filter(|p| p.key.3 > 0 && (p.key.4 as usize) + 1 < space.gpu_clocks.len())
            .count();
        eprintln!(
            "{name}: {} configurations, {} pruned by bounds, {} saturated, front {} points \
             ({with_gpus} with GPUs, {below_top} of them below the top clock)",
            space.size(),
            once.pruned,
            once.saturated,
            once.front.len()
        );
        g.throughput(criterion::Throughput::Elements(space.size()));
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool");
            g.bench_function(format!("{name}_{threads}_threads"), |b| {
                b.iter(|| {
                    pool.install(|| black_box(search(&model, &space).expect("search").front.len()))
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
