//! Outputs. Every rendering of a plan or a prediction goes through the [`Exporter`] seam.

pub mod csv;
pub mod fit;
pub mod gpu_clock;
pub mod html;
pub mod json;
pub mod markup;
pub mod measured;
pub mod metrics;
pub mod node_law;
pub mod plot;
pub mod slurm;
pub mod text;
pub mod validation;

use crate::model::Prediction;
use crate::search::plan::Plan;
use std::io::{self, Write};

pub use crate::atomic_write::write_atomic;

/// Renders the planner's artefacts in one output format.
pub trait Exporter {
    /// Writes a whole plan.
    fn plan(&self, plan: &Plan, out: &mut dyn Write) -> io::Result<()>;
    /// Writes one prediction (or a saturated configuration: `None` with its `rho`).
    fn prediction(&self, p: PredictionView<'_>, out: &mut dyn Write) -> io::Result<()>;
}

/// A single configuration's outcome as `predict` shows it.
#[derive(Debug, Clone, Copy)]
pub enum PredictionView<'a> {
    /// A finite prediction.
    Finite(&'a Prediction),
    /// A network-saturated configuration.
    Saturated {
        /// The configuration.
        config: &'a crate::model::Config,
        /// Its network utilisation.
        rho: f64,
    },
}
