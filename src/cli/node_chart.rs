//! The node-law chart from the command line: `fit --plot` draws the profile `fit` just wrote
//! with every run it was fitted on; `report` draws the plan's profile with the runs of
//! `--measured` (else of the profile's own sweep) and a campaign's steps. Both bind the model
//! exactly as `plan` reads the profile; what is drawn is chosen in [`crate::report::node_law`].

use super::sources::SourceArgs;
use crate::calibrate::trust::bind;
use crate::model::Model;
use crate::report::node_law::{fit_series, plan_series, runs_of_csv, runs_of_sweep};
use crate::report::plot::{node_law_bytes, node_law_svg};
use crate::search::plan::Plan;
use std::path::Path;

/// `fit --plot`: the chart of the pair `fit` is about to write (`loaded`, the profile planned
/// against the machine file it writes or read) with the runs of `measured`, as the bytes of
/// the file `path` names; `fit` writes them with the pair, all or nothing.
pub(crate) fn fit_plot_bytes(
    measured: &Path,
    mut loaded: crate::search::inputs::Loaded,
    path: &Path,
) -> anyhow::Result<Vec<u8>> {
    // The fit's own checks were said already; the chart shows the model as plan reads it.
    let src = SourceArgs {
        accept_model_error: true,
        ..SourceArgs::default()
    };
    let runs = runs_of_csv(measured)?;
    let model = bind(
        &loaded.machine,
        &loaded.profile,
        &src.checks(),
        &mut loaded.trust,
        &mut Vec::new(),
    )?;
    let series = fit_series(&model, &runs)
        .ok_or_else(|| anyhow::anyhow!("{}: no runs to draw", measured.display()))?;
    node_law_bytes(path, &series).map_err(anyhow::Error::msg)
}

/// `report`'s chart (SVG): the runs of `measured`, else of the profile's own sweep record.
pub(crate) fn report_chart(
    model: &Model<'_>,
    plan: &Plan,
    measured: Option<&Path>,
) -> anyhow::Result<String> {
    let runs = match measured {
        Some(p) => runs_of_csv(p)?,
        None => runs_of_sweep(&model.profile.file)?,
    };
    let series = plan_series(model, plan, &runs).ok_or_else(|| {
        anyhow::anyhow!("report: no configuration to draw the node law for (the front is empty)")
    })?;
    node_law_svg(&series).map_err(anyhow::Error::msg)
}
