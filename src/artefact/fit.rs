//! The JSON `fit --json` and `machine check --json` print: what was fitted, with the same
//! figures as the text, and what a machine file will be used as. Written through a JSON
//! value, so keys come out sorted.

use super::profile::LayoutFile;
use super::validation::BlockOut;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Format tag of the fit JSON.
pub const FIT_FORMAT: &str = "jouleplan-fit/1";
/// Format tag of the machine check JSON.
pub const MACHINE_CHECK_FORMAT: &str = "jouleplan-machine-check/1";

/// What `fit --json` prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitOut {
    /// [`FIT_FORMAT`].
    pub format: String,
    /// The measured CSV.
    pub measured: String,
    /// The program's name in the profile.
    pub program: String,
    /// Distinct configurations, runs and node counts read.
    pub configurations: usize,
    /// Runs read (rows).
    pub runs: usize,
    /// Distinct node counts.
    pub node_counts: Vec<u32>,
    /// How the runs laid ranks and threads (absent: not recorded).
    pub layout: Option<LayoutFile>,
    /// The time split of each core count.
    pub time_split: Vec<SplitOut>,
    /// The node law, when runs over several nodes were given.
    pub node_law: Option<NodeLawOut>,
    /// The power fitted per frequency (one-node power laws, or node power).
    pub power: Vec<PowerOut>,
    /// The scope of the energy fitted (`node`, `cpu`), absent without energy.
    pub energy_scope: Option<String>,
    /// Why no power was fitted (time-only runs, or energy that cannot identify it).
    pub power_not_fitted: Option<String>,
    /// The GPU clock law fitted on GPU runs (MODEL.md 6e), as the profile holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_clock: Option<super::gpu_clock::GpuClockLaw>,
    /// Files written.
    pub wrote: Vec<String>,
    /// Notes said on standard error as well.
    pub notes: Vec<String>,
    /// Each configuration left out in turn (`--loo`).
    pub leave_one_out: Option<BlockOut>,
}

/// One core count's time split `T(f) = a/f + m`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SplitOut {
    /// Cores.
    pub cores: u32,
    /// Frequencies measured there.
    pub frequencies: usize,
    /// `a`, s at 1 GHz.
    pub compute_s_at_1ghz: f64,
    /// `m`, s.
    pub memory_s: f64,
    /// Largest relative residual.
    pub max_rel_residual: f64,
    /// How it was obtained.
    pub how: String,
}

/// The node law as `fit` prints it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeLawOut {
    /// Node counts measured.
    pub measured_nodes: Vec<u32>,
    /// The rule that weighed the laws, in words.
    pub rule: String,
    /// Each law the evidence allows: its form, weight, fitted law and left-out errors.
    pub candidates: Vec<CandidateOut>,
    /// The combined law.
    pub combined: String,
    /// The combined law's signed error at each left-out node count.
    pub folds: Vec<FoldOut>,
    /// Its mean absolute leave-one-node-count-out error (0 without folds).
    pub loo_rel: f64,
    /// Mean residual by node count.
    pub residuals: Vec<FoldOut>,
    /// The interval parts: run-to-run, between counts, per doubling beyond.
    pub repeat_rel: f64,
    /// The combined law's error between measured counts.
    pub within_rel: f64,
    /// Its growth per doubling beyond the largest measured count.
    pub per_doubling_rel: f64,
}

/// One candidate law.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CandidateOut {
    /// Its form in time.
    pub form: String,
    /// Its weight.
    pub weight: f64,
    /// The law fitted on every count.
    pub law: String,
    /// Its signed error at each left-out count.
    pub folds: Vec<FoldOut>,
}

/// A relative figure at a node count.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FoldOut {
    /// Nodes.
    pub nodes: u32,
    /// Signed relative error or residual.
    pub rel: f64,
}

/// Power fitted at one frequency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerOut {
    /// Frequency, Hz.
    pub freq_hz: f64,
    /// Idle power per node, W.
    pub idle_w: f64,
    /// Power per busy core, W.
    pub core_w: f64,
    /// Runs it rests on, when node power (absent for one-node power laws).
    pub runs: Option<usize>,
    /// Largest relative energy (or power) residual.
    pub residual_max: Option<f64>,
    /// Root-mean-square relative energy residual, when node power (as the text says it).
    pub residual_rms: Option<f64>,
    /// Which bound of node power held (`P_idle = 0 (bound)`), as the text says it; null where
    /// neither did or the power is not node power.
    pub bound: Option<String>,
    /// Whether this frequency was outside the measured ones (extrapolated) or kept from the
    /// machine file: `fitted`, `extrapolated`, `kept`.
    pub how: String,
}

/// What `machine check --json` prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineCheckOut {
    /// [`MACHINE_CHECK_FORMAT`].
    pub format: String,
    /// The file.
    pub file: String,
    /// Machine name.
    pub name: String,
    /// Whether `plan` and `predict` will use the file as it is.
    pub complete: bool,
    /// What is missing or implausible, each with what it should hold.
    pub problems: Vec<String>,
    /// Node count.
    pub nodes: u32,
    /// Cores per node.
    pub cores_per_node: u32,
    /// Frequencies, GHz.
    pub frequencies_ghz: Vec<f64>,
    /// GPUs per node.
    pub gpus_per_node: u32,
    /// The GPU clocks, MHz (absent: no GPU clock axis).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_clocks_mhz: Vec<f64>,
    /// The GPU memory clock a job script sets, MHz (absent: not named).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_memory_clock_mhz: Option<f64>,
    /// Memory per node, GiB.
    pub memory_per_node_gib: Option<f64>,
    /// The `[network]` values, when the file has them.
    pub network: Option<BTreeMap<String, f64>>,
    /// The `[power]` values, when the file has them (per frequency where they vary).
    pub power: Option<BTreeMap<String, Vec<f64>>>,
    /// Where each number comes from.
    pub sources: BTreeMap<String, String>,
    /// Keys whose source says illustrative or assumed.
    pub unmeasured: Vec<String>,
}
