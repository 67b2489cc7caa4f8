//! The node-law chart from the command line: `fit --plot` draws the profile `fit` just wrote
//! with every run it was fitted on; `report` draws the plan's profile with the runs of
//! `--measured` (else of the profile's own sweep) and a campaign's steps. Both bind the model
//! exactly as `plan` reads the profile; what is drawn is chosen in [`crate::report::node_law`].

use super::sources::SourceArgs;
use crate::calibrate::trust::bind;
use crate::model::Model;
use crate::report::node_law::{fit_series, plan_series, runs_of_csv, runs_of_sweep};
use crate::report::plot::{node_law_svg, write_node_law};
use crate::search::plan::Plan;
use std::path::Path;

/// `fit --plot`: draws the chart of the profile `fit` wrote (`profile`, planned against
/// `machine`, the machine file it wrote or read) with the runs of `measured` to `path`, and
/// says so; returns the path written.
pub(crate) fn write_fit_plot(
    measured: &Path,
    (machine, profile): (Option<String>, &Path),
    path: &Path,
) -> anyhow::Result<String> {
    // The fit's own checks were said already; the chart shows the model as plan reads it.
    let src = SourceArgs {
        machine,
        profile: Some(profile.display().to_string()),
        accept_model_error: true,
        ..SourceArgs::default()
    };
    let runs = runs_of_csv(measured)?;
    let mut loaded = src.load()?;
    let model = bind(
        &loaded.machine,
        &loaded.profile,
        &src.checks(),
        &mut loaded.trust,
        &mut Vec::new(),
    )?;
    let series = fit_series(&model, &runs)
        .ok_or_else(|| anyhow::anyhow!("{}: no runs to draw", measured.display()))?;
    write_node_law(path, &series).map_err(anyhow::Error::msg)?;
    let shown = path.display().to_string();
    super::say::progress(&format!("wrote {shown}"));
    Ok(shown)
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
