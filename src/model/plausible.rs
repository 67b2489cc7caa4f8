//! Whether a machine file's numbers could describe a real HPC node: wide bounds that no real
//! node leaves (a node's idle draw of 90 kW is a typo, not a machine). Each bound names its
//! reason; `machine check` refuses a file outside them. They catch unit slips (W for mW, s for
//! us, bits for bytes), not small errors.

use super::machine::Machine;

/// One bound: the key, the value, the range, and why.
struct Bound {
    key: &'static str,
    value: f64,
    range: (f64, f64),
    why: &'static str,
}

fn bounds(m: &Machine) -> Vec<Bound> {
    let p = &m.power;
    let most = |v: &[crate::units::Watts]| v.iter().map(|w| w.0).fold(0.0, f64::max);
    let b = |key, value, range, why| Bound {
        key,
        value,
        range,
        why,
    };
    vec![
        b(
            "power.idle_w",
            most(&p.idle),
            (0.0, 5000.0),
            "W per node: the largest nodes (8 GPUs, 4 sockets) idle below 3 kW",
        ),
        b(
            "power.core_active_w",
            most(&p.core_active),
            (0.0, 100.0),
            "W per busy core: a whole 400 W socket over 4 cores would be 100 W",
        ),
        b(
            "power.core_stall_w",
            most(&p.core_stall),
            (0.0, 100.0),
            "W per stalled core",
        ),
        b(
            "power.memory_w",
            p.memory.0,
            (0.0, 3000.0),
            "W of memory traffic per node",
        ),
        b(
            "power.network_w",
            p.network.0,
            (0.0, 2000.0),
            "W of the network per node",
        ),
        b(
            "power.gpu_active_w",
            p.gpu_active.0,
            (0.0, 2000.0),
            "W per GPU in kernels: the largest accelerators draw about 1 kW",
        ),
        b(
            "power.gpu_idle_w",
            p.gpu_idle.0,
            (0.0, 1000.0),
            "W per idle GPU",
        ),
        b(
            "network.latency_s",
            m.network.latency.0,
            (1e-8, 1e-2),
            "s: 10 ns to 10 ms (MPI latencies are about 1-10 us)",
        ),
        b(
            "network.bandwidth_bytes_per_s",
            m.network.bandwidth_bytes_per_s,
            (1e6, 1e13),
            "bytes/s: 1 MB/s to 10 TB/s (bits where bytes were meant are 8x)",
        ),
    ]
}

/// Every value outside its bound, one line each: key, value, range and why.
pub fn implausible(m: &Machine) -> Vec<String> {
    bounds(m)
        .into_iter()
        .filter(|b| !(b.range.0..=b.range.1).contains(&b.value))
        .map(|b| {
            format!(
                "{} = {} is implausible: expected {} to {} {}",
                b.key, b.value, b.range.0, b.range.1, b.why
            )
        })
        .collect()
}
