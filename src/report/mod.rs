//! Outputs. Every rendering of a plan or a prediction goes through the [`Exporter`] seam.

pub mod csv;
pub mod html;
pub mod json;
pub mod metrics;
pub mod plot;
pub mod slurm;
pub mod text;

use crate::model::Prediction;
use crate::search::plan::Plan;
use std::io::{self, Write};
use std::path::Path;

/// Writes `bytes` to `path` atomically: a temporary sibling, then a rename, so no half-written
/// file is ever left; `executable` makes it runnable (job scripts).
pub fn write_atomic(path: &Path, bytes: &[u8], executable: bool) -> io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.jouleplan-tmp"));
    std::fs::write(&tmp, bytes)?;
    #[cfg(unix)]
    if executable {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))?;
    }
    std::fs::rename(&tmp, path)
}

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
