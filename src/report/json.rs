//! JSON output: the keys named in the `plan --json` contract, plus a few extras, built as the
//! types of `artefact::plan`.

use super::{Exporter, PredictionView};
use crate::artefact::plan::{
    BreakdownOut, ChanceOut, ConfigOut, DeviceOut, FrontOut, HostSourcesOut, HostTreeOut,
    MeasureNextOut, PLAN_FORMAT, PlanOut, QueryOut, RecommendationOut, RiskOut, SaturatedOut,
};
use crate::artefact::write_sorted;
use crate::model::Prediction;
use crate::search::plan::Plan;
use std::io::{self, Write};

/// JSON exporter.
pub struct Json;

/// The config object of the contract (see [`ConfigOut`]).
pub fn config_json(p: &Prediction) -> ConfigOut {
    let c = &p.config;
    // Without measured power the model's energy is node-seconds: no energy is shown.
    let energy = |j: f64| (!p.time_only).then_some(j);
    ConfigOut {
        nodes: c.nodes,
        cores: c.cores,
        freq_hz: c.freq.0,
        gpus: c.gpus,
        gpu_clock_mhz: c.gpu_clock_mhz,
        time_s: p.time.0,
        energy_j: energy(p.energy.0),
        ucr: p.ucr,
        rho: p.rho,
        headroom: 1.0 - p.rho,
        node_hours: f64::from(c.nodes) * p.time.0 / 3600.0,
        energy_delay_js: energy(p.energy.0 * p.time.0),
        time_interval_s: p.interval.map(|i| [i.time_s.0, i.time_s.1]),
        energy_interval_j: p
            .interval
            .filter(|_| !p.time_only)
            .map(|i| [i.energy_j.0, i.energy_j.1]),
        interval_kind: p.interval.map(|i| i.kind.key().to_string()),
        interval_coverage: p.interval.and_then(|i| i.nominal()),
        breakdown: breakdown(p),
        host_tree: host_tree_json(p),
        device: p.device.map(|d| DeviceOut {
            parallel_efficiency: d.parallel_efficiency,
            load_balance: d.load_balance,
            communication_efficiency: d.communication_efficiency,
            orchestration_efficiency: d.orchestration_efficiency,
            device_offload_efficiency: d.offload_efficiency,
        }),
    }
}

/// The time and energy terms.
fn breakdown(p: &Prediction) -> BreakdownOut {
    let energy = |j: f64| (!p.time_only).then_some(j);
    BreakdownOut {
        t_cpu_s: p.t.cpu,
        t_cpu_is: p
            .whole_run
            .then(|| "the run, host and GPUs together (whole-run times only)".into()),
        t_mem_s: p.t.mem,
        t_wait_net_s: p.t.wait_net,
        t_serv_net_s: p.t.serv_net,
        t_serv_net_is: if p.config.nodes == 1 {
            "unbusy: (1 - U) T_CPU, the time cores are not busy (no network at one node)"
        } else {
            "network service time"
        }
        .into(),
        t_gpu_s: p.t.gpu,
        t_serial_s: p.t.serial,
        t_idle_wait_s: p.t.wait,
        t_nodes_s: p.t.nodes,
        e_cpu_j: energy(p.e.cpu),
        e_mem_j: energy(p.e.mem),
        e_net_j: energy(p.e.net),
        e_idle_j: energy(p.e.idle),
        e_gpu_j: energy(p.e.gpu),
    }
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

/// The predicted host tree: the efficiencies, and where each comes from (from whole-run times
/// alone, every source says the tree is not predicted: [`WHOLE_RUN_TREE`]).
pub fn host_tree_json(p: &Prediction) -> HostTreeOut {
    let h = crate::model::host_tree::HostTree::of(p);
    let said = |source: String| match p.whole_run {
        true => WHOLE_RUN_TREE.to_string(),
        false => source,
    };
    HostTreeOut {
        parallel_efficiency: h.parallel_efficiency,
        mpi_parallel_efficiency: h.mpi_parallel_efficiency,
        mpi_communication_efficiency: h.mpi_communication_efficiency,
        mpi_load_balance: h.mpi_load_balance,
        openmp_parallel_efficiency: h.openmp_parallel_efficiency,
        device_offload_efficiency: h.device_offload_efficiency,
        sources: HostSourcesOut {
            parallel_efficiency: said("predicted".into()),
            mpi_communication_efficiency: said("predicted".into()),
            mpi_load_balance: said(load_balance_source(&h)),
            openmp_parallel_efficiency: said(openmp_source(&h)),
            device_offload_efficiency: said("predicted".into()),
        },
    }
}

/// The source of every efficiency of a prediction from whole-run times alone.
pub const WHOLE_RUN_TREE: &str = "not predicted: whole-run times only (nothing measured splits \
     host from device; device offload is the share of the run at the reference GPU clock)";

/// The plan's risk of kind `what`, as JSON.
fn risk_json(plan: &Plan, what: &str) -> Option<RiskOut> {
    let r = plan.risk.filter(|r| r.what == what)?;
    Some(RiskOut {
        limit: r.limit,
        interval_far_end: r.far_end,
        safe: r.safe.as_ref().map(config_json),
    })
}

/// A recommendation's chance as JSON.
fn chance_json(c: &crate::search::chance::Chance) -> ChanceOut {
    use crate::search::chance::Limit;
    ChanceOut {
        limit_kind: match c.limit {
            Limit::Time => "time",
            Limit::Energy => "energy",
        }
        .into(),
        limit: c.value,
        interval_near_end: c.near_end,
        saving: c.saving,
        config: config_json(&c.prediction),
    }
}

/// The whole plan as one JSON object.
pub fn plan_json(plan: &Plan) -> PlanOut {
    PlanOut {
        front: plan.front.iter().map(front_json).collect(),
        ..plan_head(plan)
    }
}

/// One point of the front as JSON.
fn front_json(f: &crate::search::plan::FrontEntry) -> FrontOut {
    FrontOut {
        config: config_json(&f.prediction),
        ties: f.ties,
    }
}

/// The plan as [`plan_json`] gives it, with an empty front.
fn plan_head(plan: &Plan) -> PlanOut {
    let front = Vec::new();
    let recommendation = plan.recommendation().map(|f| RecommendationOut {
        config: config_json(&f.prediction),
        warnings: plan.warnings.clone(),
        measure_next: plan
            .measure_next
            .iter()
            .map(|m| MeasureNextOut {
                nodes: m.config.nodes,
                cores: m.config.cores,
                freq_hz: m.config.freq.0,
                gpus: m.config.gpus,
                node_hours: m.node_hours,
            })
            .collect(),
        deadline_risk: risk_json(plan, "deadline"),
        budget_risk: risk_json(plan, "budget"),
        may_also_meet: plan.chance.as_ref().map(chance_json),
    });
    PlanOut {
        format: PLAN_FORMAT.into(),
        machine: plan.machine.clone(),
        machine_file: plan.machine_file.display().to_string(),
        program: plan.program.clone(),
        profile_file: plan.profile_file.display().to_string(),
        energy_scope: if plan.time_only() {
            "unavailable".into()
        } else {
            plan.energy_scope.csv_name().into()
        },
        evaluated: plan.evaluated,
        saturated: plan.saturated,
        pruned: plan.pruned,
        notes: plan.notes.clone(),
        front,
        recommendation,
        query: query(plan),
    }
}

/// The question asked and its answer.
fn query(plan: &Plan) -> QueryOut {
    let q = &plan.query;
    QueryOut {
        deadline_s: q.deadline.map(|d| d.0),
        budget_j: q.budget.map(|b| b.0),
        slowdown: q.slowdown,
        reference_time_s: plan.reference.as_ref().map(|r| r.time.0),
        reference: plan.reference.as_ref().map(|r| r.what.clone()),
        time_limit_s: plan.answer.time_limit.map(|t| t.0),
        energy_limit_j: plan.answer.energy_limit.map(|e| e.0),
        feasible: plan.answer.feasible,
        reason: plan.answer.reason.clone(),
    }
}

/// The plan's JSON object, its keys sorted, with the front serialised one point at a time as it
/// is written: a front of millions of points is never held as JSON values (nor as text) whole.
struct Streamed<'a> {
    head: serde_json::Map<String, serde_json::Value>,
    plan: &'a Plan,
}

/// The front, one point made (and its keys sorted) as it is written.
struct StreamedFront<'a>(&'a Plan);

impl serde::Serialize for StreamedFront<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let mut seq = s.serialize_seq(Some(self.0.front.len()))?;
        for f in &self.0.front {
            let v = serde_json::to_value(front_json(f)).map_err(S::Error::custom)?;
            seq.serialize_element(&v)?;
        }
        seq.end()
    }
}

impl serde::Serialize for Streamed<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.head.len()))?;
        for (k, v) in &self.head {
            if k == "front" {
                map.serialize_entry(k, &StreamedFront(self.plan))?;
            } else {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

impl Exporter for Json {
    fn plan(&self, plan: &Plan, out: &mut dyn Write) -> io::Result<()> {
        let serde_json::Value::Object(head) = serde_json::to_value(plan_head(plan))? else {
            return Err(io::Error::other("a plan serialises to a JSON object"));
        };
        let mut buffered = io::BufWriter::with_capacity(1 << 16, out);
        serde_json::to_writer_pretty(&mut buffered, &Streamed { head, plan })?;
        writeln!(buffered)?;
        buffered.flush()
    }

    fn prediction(&self, p: PredictionView<'_>, out: &mut dyn Write) -> io::Result<()> {
        match p {
            PredictionView::Finite(p) => write_sorted(&config_json(p), out),
            PredictionView::Saturated { config, rho } => write_sorted(
                &SaturatedOut {
                    nodes: config.nodes,
                    cores: config.cores,
                    freq_hz: config.freq.0,
                    gpus: config.gpus,
                    saturated: true,
                    rho,
                },
                out,
            ),
        }
    }
}
