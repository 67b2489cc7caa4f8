//! The JSON `validate --json` prints: every measured point beside its prediction, and the
//! error statistics of each validation. Written through a JSON value, so its keys come out
//! sorted.

use serde::{Deserialize, Serialize};

/// Format tag of the validation JSON.
pub const VALIDATION_FORMAT: &str = "jouleplan-validation/1";

/// What `validate --json` prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidationOut {
    /// [`VALIDATION_FORMAT`].
    pub format: String,
    /// Notes on the inputs.
    pub notes: Vec<String>,
    /// One block per validation (each measured set against its profile).
    pub validations: Vec<BlockOut>,
    /// What keeps the model from explaining the profile's own measurements (a failed
    /// reproduction check, a power fit beyond its bound): `plan` refuses such a profile
    /// without `--accept-model-error`; `validate` scores it all the same.
    #[serde(default)]
    pub model_problems: Vec<String>,
}

/// One validation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockOut {
    /// What was fitted on and what predicted.
    pub title: String,
    /// Every measured point.
    pub points: Vec<PointOut>,
    /// Time error statistics.
    pub time: StatsOut,
    /// Energy error statistics; `null` where the energy was not scored
    /// ([`BlockOut::energy_not_scored`]).
    pub energy: Option<StatsOut>,
    /// Why the energy was not scored (the runs measured a scope the profile's model does not
    /// predict), where so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_not_scored: Option<String>,
    /// The points left out of the statistics, and why.
    pub not_predicted: NotPredictedOut,
    /// How many measurements at the node counts not measured fell in their intervals.
    pub interval_coverage: CoverageOut,
    /// The errors at the configurations the profile was not fitted on, where some points are
    /// at what it was fitted on and some are not (absent otherwise): how it predicts, apart
    /// from how it reproduces its own runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_fitted_on: Option<NotFittedOut>,
}

/// The errors at the configurations a profile was not fitted on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NotFittedOut {
    /// How many such configurations were predicted.
    pub configurations: usize,
    /// Time error statistics there.
    pub time: StatsOut,
    /// Energy error statistics there; `null` where the energy was not scored.
    pub energy: Option<StatsOut>,
}

/// A measured point and its prediction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointOut {
    /// Nodes.
    pub nodes: u32,
    /// Cores per node.
    pub cores: u32,
    /// Frequency, Hz.
    pub freq_hz: f64,
    /// GPUs per node.
    pub gpus: u32,
    /// The GPU core clock of the row, MHz, where it names one.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::whole_mhz"
    )]
    pub gpu_clock_mhz: Option<f64>,
    /// Measured time, s (mean of its runs).
    pub time_s: f64,
    /// Predicted time, s.
    pub predicted_time_s: Option<f64>,
    /// Relative time error.
    pub time_error: Option<f64>,
    /// Measured energy, J.
    pub energy_j: Option<f64>,
    /// What the measured energy covers.
    pub energy_scope: Option<String>,
    /// Predicted energy in that scope, J.
    pub predicted_energy_j: Option<f64>,
    /// Relative energy error.
    pub energy_error: Option<f64>,
    /// Where the measurement came from.
    pub source: String,
    /// Runs averaged.
    pub runs: usize,
    /// Why it was not predicted.
    pub not_predicted: Option<String>,
    /// `[low, high]` predicted time at the node counts not measured, s.
    pub time_interval_s: Option<[f64; 2]>,
    /// `[low, high]` predicted energy at the node counts not measured, J.
    pub energy_interval_j: Option<[f64; 2]>,
    /// At a GPU clock outside the clock law's measured range, the law carried beyond it;
    /// written only where true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub extrapolated: bool,
}

/// Error statistics over the measured runs; every figure `null` where no run was compared
/// (`points` 0: an error of 0.0% over nothing would read as a perfect model).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatsOut {
    /// Runs compared.
    pub points: usize,
    /// Mean absolute percentage error.
    pub mape_pct: Option<f64>,
    /// Its standard deviation.
    pub sd_pct: Option<f64>,
    /// Largest absolute percentage error.
    pub max_pct: Option<f64>,
    /// Symmetric mean absolute percentage error.
    pub smape_pct: Option<f64>,
}

/// The points left out of the statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NotPredictedOut {
    /// How many.
    pub points: usize,
    /// Each reason and how many points it left out.
    pub reasons: Vec<ReasonOut>,
}

/// A reason points were not predicted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReasonOut {
    /// The reason.
    pub reason: String,
    /// Points it left out.
    pub points: usize,
}

/// Interval coverage beyond the measured node counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoverageOut {
    /// Times with an interval.
    pub time_points: usize,
    /// Times inside it.
    pub time_covered: usize,
    /// Energies with an interval.
    pub energy_points: usize,
    /// Energies inside it.
    pub energy_covered: usize,
    /// The intervals' nominal coverage (the share they should hold; null for bounds).
    #[serde(default)]
    pub nominal: Option<f64>,
    /// `interval` (a fitted node law's) or `bounds` (a profile measured on one node: perfect
    /// division of the work to no gain); null where no point has either.
    #[serde(default)]
    pub kind: Option<String>,
}
