//! The JSON `plan`, `predict` and `job` print (`--json`): one type per object, so the keys
//! named in the `plan --json` contract are spelled once. Written through a JSON value, so its
//! keys come out sorted.

use serde::{Deserialize, Serialize};

/// One configuration and its prediction: the contract's
/// `{ nodes, cores, freq_hz, gpus, time_s, energy_j, ucr, rho, breakdown{...} }`, plus
/// `headroom` (`1 - rho`), `node_hours`, `energy_delay_js`, the intervals beyond the measured
/// node counts, the host tree and the device tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigOut {
    /// Nodes.
    pub nodes: u32,
    /// Cores per node.
    pub cores: u32,
    /// Core frequency, Hz.
    pub freq_hz: f64,
    /// GPUs per node.
    pub gpus: u32,
    /// The GPU core clock, MHz, where the profile has a GPU clock law (MODEL.md 6e).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::whole_mhz"
    )]
    pub gpu_clock_mhz: Option<f64>,
    /// Predicted time, s.
    pub time_s: f64,
    /// Predicted energy, J.
    pub energy_j: Option<f64>,
    /// Useful Computation Ratio.
    pub ucr: f64,
    /// Network utilisation.
    pub rho: f64,
    /// `1 - rho`.
    pub headroom: f64,
    /// Nodes x time, hours.
    pub node_hours: f64,
    /// Energy x time, J s.
    pub energy_delay_js: Option<f64>,
    /// `[low, high]` time beyond the measured node counts, s.
    pub time_interval_s: Option<[f64; 2]>,
    /// `[low, high]` energy beyond the measured node counts, J.
    pub energy_interval_j: Option<[f64; 2]>,
    /// What the two ranges above are: `interval` (a fitted node law's, at
    /// `interval_coverage`) or `bounds` (a profile measured on one node: from perfect division
    /// of the work to no gain, no coverage); null where there are none.
    #[serde(default)]
    pub interval_kind: Option<String>,
    /// The interval's nominal coverage (null for bounds).
    #[serde(default)]
    pub interval_coverage: Option<f64>,
    /// The time and energy terms.
    pub breakdown: BreakdownOut,
    /// The predicted host efficiency tree.
    pub host_tree: HostTreeOut,
    /// The predicted device tree, with GPUs.
    pub device: Option<DeviceOut>,
}

/// The time and energy terms of a prediction (MODEL.md sections 3 and 4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BreakdownOut {
    /// `T_CPU`, s.
    pub t_cpu_s: f64,
    /// What `t_cpu_s` is where it is not the host's compute time: from whole-run times alone,
    /// the run (host and GPUs together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_cpu_is: Option<String>,
    /// `T_mem`, s.
    pub t_mem_s: f64,
    /// `T_w,net`, s.
    pub t_wait_net_s: f64,
    /// `T_s,net`, s.
    pub t_serv_net_s: f64,
    /// What `t_serv_net_s` is at this node count.
    pub t_serv_net_is: String,
    /// `T_gpu`, s.
    pub t_gpu_s: f64,
    /// `X_ser` at the configuration, s.
    pub t_serial_s: f64,
    /// `X_wait`, s.
    pub t_idle_wait_s: f64,
    /// The node law's `X(n)`, s.
    pub t_nodes_s: f64,
    /// `E_CPU`, J.
    pub e_cpu_j: Option<f64>,
    /// `E_mem`, J.
    pub e_mem_j: Option<f64>,
    /// `E_net`, J.
    pub e_net_j: Option<f64>,
    /// `E_idle`, J.
    pub e_idle_j: Option<f64>,
    /// `E_gpu`, J.
    pub e_gpu_j: Option<f64>,
}

/// The predicted host tree and where each efficiency comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostTreeOut {
    /// Parallel efficiency.
    pub parallel_efficiency: f64,
    /// MPI parallel efficiency.
    pub mpi_parallel_efficiency: f64,
    /// MPI communication efficiency.
    pub mpi_communication_efficiency: f64,
    /// MPI load balance, where measured or carried.
    pub mpi_load_balance: Option<f64>,
    /// OpenMP parallel efficiency.
    pub openmp_parallel_efficiency: f64,
    /// Device offload efficiency.
    pub device_offload_efficiency: f64,
    /// Where each comes from.
    pub sources: HostSourcesOut,
}

/// Where each efficiency of the host tree comes from, in words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostSourcesOut {
    /// Parallel efficiency.
    pub parallel_efficiency: String,
    /// MPI communication efficiency.
    pub mpi_communication_efficiency: String,
    /// MPI load balance.
    pub mpi_load_balance: String,
    /// OpenMP parallel efficiency.
    pub openmp_parallel_efficiency: String,
    /// Device offload efficiency.
    pub device_offload_efficiency: String,
}

/// The predicted device tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceOut {
    /// Device parallel efficiency.
    pub parallel_efficiency: f64,
    /// Load balance across GPUs.
    pub load_balance: f64,
    /// Communication efficiency (transfers).
    pub communication_efficiency: f64,
    /// Orchestration efficiency.
    pub orchestration_efficiency: f64,
    /// Device offload efficiency.
    pub device_offload_efficiency: f64,
}

/// A point of the front: its configuration and how many configurations tie with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrontOut {
    /// The configuration.
    #[serde(flatten)]
    pub config: ConfigOut,
    /// Configurations with the same time and energy.
    pub ties: u64,
}

/// The recommended configuration, its warnings and what to measure next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecommendationOut {
    /// The configuration.
    #[serde(flatten)]
    pub config: ConfigOut,
    /// What the user should know before trusting it.
    pub warnings: Vec<String>,
    /// Node counts worth measuring before a run beyond the evidence.
    pub measure_next: Vec<MeasureNextOut>,
    /// Where the time interval's far end is past `--deadline`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_risk: Option<RiskOut>,
    /// Where the energy interval's far end is past `--budget`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_risk: Option<RiskOut>,
    /// The front configuration next to it, predicted past the limit, whose interval reaches
    /// within it (MODEL.md 7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub may_also_meet: Option<ChanceOut>,
}

/// A front configuration past the recommendation's limit by its prediction, within it by its
/// interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChanceOut {
    /// `time` (a deadline, or a slowdown's time limit) or `energy` (a budget).
    pub limit_kind: String,
    /// The limit, s or J.
    pub limit: f64,
    /// Its interval's end on the limit's side, within the limit, s or J.
    pub interval_near_end: f64,
    /// Its relative saving against the recommendation: energy under a time limit, time under
    /// a budget.
    pub saving: f64,
    /// The configuration.
    pub config: ConfigOut,
}

/// A recommendation whose interval crosses its limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RiskOut {
    /// The deadline (s) or budget (J).
    pub limit: f64,
    /// The interval's end beyond it.
    pub interval_far_end: f64,
    /// The front configuration that meets the limit with its interval's far end, if any.
    pub safe: Option<ConfigOut>,
}

/// A configuration worth measuring next, and what it costs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasureNextOut {
    /// Nodes.
    pub nodes: u32,
    /// Cores per node.
    pub cores: u32,
    /// Frequency, Hz.
    pub freq_hz: f64,
    /// GPUs per node.
    pub gpus: u32,
    /// Node-hours the measurement costs.
    pub node_hours: f64,
}

/// The question asked and its answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryOut {
    /// `--deadline`, s.
    pub deadline_s: Option<f64>,
    /// `--budget`, J.
    pub budget_j: Option<f64>,
    /// `--slowdown`.
    pub slowdown: Option<f64>,
    /// The time the slowdown is measured against, s.
    pub reference_time_s: Option<f64>,
    /// What that reference is.
    pub reference: Option<String>,
    /// The time limit applied, s.
    pub time_limit_s: Option<f64>,
    /// The energy limit applied, J.
    pub energy_limit_j: Option<f64>,
    /// Whether any configuration meets the limits.
    pub feasible: bool,
    /// Why the recommendation is what it is.
    pub reason: String,
}

fn node_scope() -> String {
    "node".into()
}

/// Format tag of the plan JSON.
pub const PLAN_FORMAT: &str = "jouleplan-plan/1";

/// The whole plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanOut {
    /// [`PLAN_FORMAT`].
    pub format: String,
    /// Machine name.
    pub machine: String,
    /// Machine file.
    pub machine_file: String,
    /// Program name.
    pub program: String,
    /// Profile file.
    pub profile_file: String,
    /// What every energy of the plan covers: `cpu` (RAPL packages and DRAM), `node` (the
    /// whole node) or `gpu`, the profile's energy scope (absent in older plans: `node`).
    #[serde(default = "node_scope")]
    pub energy_scope: String,
    /// Configurations evaluated.
    pub evaluated: u64,
    /// Configurations that saturate the network.
    pub saturated: u64,
    /// Configurations pruned by bounds.
    pub pruned: u64,
    /// Notes on the inputs.
    pub notes: Vec<String>,
    /// The exact Pareto front, fastest first.
    pub front: Vec<FrontOut>,
    /// The recommendation, when one meets the query.
    pub recommendation: Option<RecommendationOut>,
    /// The question and its answer.
    pub query: QueryOut,
}

/// A configuration that saturates the network (`predict --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SaturatedOut {
    /// Nodes.
    pub nodes: u32,
    /// Cores per node.
    pub cores: u32,
    /// Frequency, Hz.
    pub freq_hz: f64,
    /// GPUs per node.
    pub gpus: u32,
    /// Always true.
    pub saturated: bool,
    /// Network utilisation (>= 1).
    pub rho: f64,
}

/// What `job --json` prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobOut {
    /// The configuration.
    pub config: ConfigOut,
    /// The Slurm time limit (`D-HH:MM:SS`).
    pub time_limit: String,
    /// The same, s.
    pub time_limit_s: u64,
    /// Warnings in the script's header.
    pub warnings: Vec<String>,
    /// Where the script was written.
    pub sbatch: Option<String>,
    /// The script.
    pub script: String,
}
