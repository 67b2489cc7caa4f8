//! The node-law chart's inputs from the command line: `fit --plot` draws the profile `fit`
//! just wrote with every run it was fitted on; `report` draws the plan's profile with the runs
//! of `--measured` (else of the profile's own sweep) and a campaign's steps. Both go through
//! the model exactly as `plan` reads the profile.

use super::fit::FitArgs;
use super::sources::{SourceArgs, bind, load_sources};
use crate::calibrate::repeats::Replay;
use crate::calibrate::validate::CsvFile;
use crate::error::InputResult;
use crate::model::energy_scope::EnergyScope;
use crate::model::{Config, Model};
use crate::report::node_law::{NodeRun, node_series, runs_of_sweep};
use crate::report::plot::{node_law_svg, write_node_law};
use crate::search::plan::Plan;
use crate::units::Hertz;
use std::path::Path;

/// Every run of a measured CSV (as `fit` and `validate` read it), in file order.
fn runs_of_csv(path: &Path) -> InputResult<Vec<NodeRun>> {
    let mut runs = Vec::new();
    CsvFile(path).replay(&mut |r| {
        let k = r.key;
        runs.push(NodeRun {
            config: Config {
                nodes: k.nodes,
                cores: k.cores,
                freq: Hertz(k.freq_khz as f64 * 1e3),
                gpus: k.gpus,
            },
            time_s: r.time_s,
            energy: r.energy_j.zip(k.scope.and_then(scope_named)),
        });
        Ok(())
    })?;
    Ok(runs)
}

/// The scope a run's key names (by [`EnergyScope::name`]).
fn scope_named(name: &str) -> Option<EnergyScope> {
    [EnergyScope::Node, EnergyScope::Cpu, EnergyScope::Gpu]
        .into_iter()
        .find(|s| s.name() == name)
}

/// `fit --plot`: draws the chart to `path` and says so; returns the path written.
pub(crate) fn write_fit_plot(args: &FitArgs, path: &Path) -> anyhow::Result<String> {
    let machine = match &args.machine_out {
        Some(p) => Some(p.display().to_string()),
        None => args.machine.clone(),
    };
    // The fit's own checks were said already; the chart shows the model as plan reads it.
    let src = SourceArgs {
        machine,
        profile: Some(args.profile_out.display().to_string()),
        accept_model_error: true,
        ..SourceArgs::default()
    };
    let mut loaded = load_sources(&src)?;
    let model = bind(
        &loaded.machine,
        &loaded.profile,
        &src,
        &mut loaded.trust,
        &mut Vec::new(),
    )?;
    let runs = runs_of_csv(&args.measured)?;
    let Some(first) = runs.first() else {
        return Err(anyhow::anyhow!(
            "{}: no runs to draw",
            args.measured.display()
        ));
    };
    let largest = runs.iter().map(|r| r.config.nodes).max().unwrap_or(1);
    let max = (4 * largest).min(loaded.machine.max_nodes).max(largest);
    let series = node_series(&model, &runs, (first.config, max), Vec::new());
    write_node_law(path, &series).map_err(anyhow::Error::msg)?;
    let shown = path.display().to_string();
    super::say::progress(&format!("wrote {shown}"));
    Ok(shown)
}

/// `report`'s chart: the model along the plan's node counts at the recommendation's cores (or
/// those measured at the most node counts), with the runs of `--measured` (else of the
/// profile's own sweep record) and a campaign's steps where the profile records them.
pub(crate) fn report_chart(
    model: &Model<'_>,
    plan: &Plan,
    measured: Option<&Path>,
) -> anyhow::Result<String> {
    let runs = match measured {
        Some(p) => runs_of_csv(p)?,
        None => runs_of_sweep(&model.profile.file)?,
    };
    let prefer = plan
        .recommendation()
        .or(plan.front.first())
        .map(|f| f.prediction.config)
        .or(runs.first().map(|r| r.config))
        .ok_or_else(|| {
            anyhow::anyhow!(
                "report: no configuration to draw the node law for (the front is empty)"
            )
        })?;
    let max = plan.space.nodes.iter().copied().max().unwrap_or(1);
    let steps = model
        .profile
        .provenance
        .iter()
        .find(|(k, _)| k == crate::artefact::profile::CAMPAIGN_KEY)
        .map(|(_, v)| crate::artefact::profile::campaign_order(v))
        .unwrap_or_default();
    let series = node_series(model, &runs, (prefer, max), steps);
    node_law_svg(&series).map_err(anyhow::Error::msg)
}
