//! JSON output: the keys named in the `plan --json` contract, plus a few extras.

use super::{Exporter, PredictionView};
use crate::model::Prediction;
use crate::search::plan::Plan;
use serde_json::{Value, json};
use std::io::{self, Write};

/// JSON exporter.
pub struct Json;

/// The config object of the contract:
/// `{ nodes, cores, freq_hz, gpus, time_s, energy_j, ucr, rho, breakdown{...} }`, plus
/// `headroom` (`1 - rho`), `node_hours`, `energy_delay_js`, `breakdown.t_gpu_s` and `device`.
pub fn config_json(p: &Prediction) -> Value {
    let c = &p.config;
    json!({
        "nodes": c.nodes,
        "cores": c.cores,
        "freq_hz": c.freq.0,
        "gpus": c.gpus,
        "time_s": p.time.0,
        "energy_j": p.energy.0,
        "ucr": p.ucr,
        "rho": p.rho,
        "headroom": 1.0 - p.rho,
        "node_hours": f64::from(c.nodes) * p.time.0 / 3600.0,
        "energy_delay_js": p.energy.0 * p.time.0,
        "time_interval_s": p.interval.map(|i| [i.time_s.0, i.time_s.1]),
        "energy_interval_j": p.interval.map(|i| [i.energy_j.0, i.energy_j.1]),
        "breakdown": {
            "t_cpu_s": p.t.cpu,
            "t_mem_s": p.t.mem,
            "t_wait_net_s": p.t.wait_net,
            "t_serv_net_s": p.t.serv_net,
            "t_serv_net_is": if c.nodes == 1 {
                "unbusy: (1 - U) T_CPU, the time cores are not busy (no network at one node)"
            } else {
                "network service time"
            },
            "t_gpu_s": p.t.gpu,
            "t_serial_s": p.t.serial,
            "t_idle_wait_s": p.t.wait,
            "t_nodes_s": p.t.nodes,
            "e_cpu_j": p.e.cpu,
            "e_mem_j": p.e.mem,
            "e_net_j": p.e.net,
            "e_idle_j": p.e.idle,
            "e_gpu_j": p.e.gpu,
        },
        "host_tree": host_tree_json(p),
        "device": p.device.map(|d| json!({
            "parallel_efficiency": d.parallel_efficiency,
            "load_balance": d.load_balance,
            "communication_efficiency": d.communication_efficiency,
            "orchestration_efficiency": d.orchestration_efficiency,
            "device_offload_efficiency": d.offload_efficiency,
        })),
    })
}

/// Where the OpenMP efficiency of a tree comes from, in words.
pub fn openmp_source(h: &crate::model::host_tree::HostTree) -> String {
    match h.openmp_source {
        (crate::model::host_tree::Source::Carried, Some(c)) => {
            format!("carried: measured beside the baseline at {c} cores")
        }
        (s, _) => s.name().to_string(),
    }
}

/// Where the MPI load balance of a tree comes from, in words.
pub fn load_balance_source(h: &crate::model::host_tree::HostTree) -> String {
    match h.load_balance_from {
        Some(c) => format!("carried: measured beside the baseline at {c} cores"),
        None => format!(
            "{}: no per-rank measurement in the profile",
            h.load_balance_source().name()
        ),
    }
}

/// The predicted host tree: the efficiencies, and where each comes from.
pub fn host_tree_json(p: &Prediction) -> Value {
    let h = crate::model::host_tree::HostTree::of(p);
    json!({
        "parallel_efficiency": h.parallel_efficiency,
        "mpi_parallel_efficiency": h.mpi_parallel_efficiency,
        "mpi_communication_efficiency": h.mpi_communication_efficiency,
        "mpi_load_balance": h.mpi_load_balance,
        "openmp_parallel_efficiency": h.openmp_parallel_efficiency,
        "device_offload_efficiency": h.device_offload_efficiency,
        "sources": {
            "parallel_efficiency": "predicted",
            "mpi_communication_efficiency": "predicted",
            "mpi_load_balance": load_balance_source(&h),
            "openmp_parallel_efficiency": openmp_source(&h),
            "device_offload_efficiency": "predicted",
        },
    })
}

/// The whole plan as one JSON object.
pub fn plan_json(plan: &Plan) -> Value {
    let front: Vec<Value> = plan
        .front
        .iter()
        .map(|f| {
            let mut v = config_json(&f.prediction);
            v["ties"] = json!(f.ties);
            v
        })
        .collect();
    let q = &plan.query;
    json!({
        "machine": plan.machine,
        "machine_file": plan.machine_file,
        "program": plan.program,
        "profile_file": plan.profile_file,
        "evaluated": plan.evaluated,
        "saturated": plan.saturated,
        "pruned": plan.pruned,
        "notes": plan.notes,
        "front": front,
        "recommendation": plan.recommendation().map(|f| {
            let mut v = config_json(&f.prediction);
            v["warnings"] = json!(plan.warnings);
            v["measure_next"] = json!(plan.measure_next.iter().map(|m| json!({
                "nodes": m.config.nodes,
                "cores": m.config.cores,
                "freq_hz": m.config.freq.0,
                "gpus": m.config.gpus,
                "node_hours": m.node_hours,
            })).collect::<Vec<_>>());
            v
        }),
        "query": {
            "deadline_s": q.deadline.map(|d| d.0),
            "budget_j": q.budget.map(|b| b.0),
            "slowdown": q.slowdown,
            "reference_time_s": plan.reference.as_ref().map(|r| r.time.0),
            "reference": plan.reference.as_ref().map(|r| r.what.clone()),
            "time_limit_s": plan.answer.time_limit.map(|t| t.0),
            "energy_limit_j": plan.answer.energy_limit.map(|e| e.0),
            "feasible": plan.answer.feasible,
            "reason": plan.answer.reason,
        },
    })
}

impl Exporter for Json {
    fn plan(&self, plan: &Plan, out: &mut dyn Write) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, &plan_json(plan))?;
        writeln!(out)
    }

    fn prediction(&self, p: PredictionView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let v = match p {
            PredictionView::Finite(p) => config_json(p),
            PredictionView::Saturated { config, rho } => json!({
                "nodes": config.nodes,
                "cores": config.cores,
                "freq_hz": config.freq.0,
                "gpus": config.gpus,
                "saturated": true,
                "rho": rho,
            }),
        };
        serde_json::to_writer_pretty(&mut *out, &v)?;
        writeln!(out)
    }
}
