//! `jouleplan predict`: one configuration with every term.

use super::sources::{InputArgs, exporter, with_model};
use crate::calibrate::trust::warnings_for;
use crate::model::Outcome;
use crate::report::PredictionView;
use crate::search::inputs::one_node_without_network;
use crate::values;
use clap::Args;
use std::io::Write;

/// `jouleplan predict`.
#[derive(Debug, Args)]
pub struct PredictArgs {
    /// The configuration: nodes,cores,GHz[,gpus[,GPU MHz]] (the GPU clock from the machine's
    /// gpu_clocks_mhz, for a profile with a GPU clock law).
    #[arg(long, value_name = "N,C,GHZ[,G[,MHZ]]")]
    pub config: String,
    #[command(flatten)]
    pub inputs: InputArgs,
}

/// Runs `predict`.
pub fn run_predict(args: &PredictArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let config = values::parse_config("--config", &args.config)?;
    with_model(&args.inputs.source, |model, trust| {
        let config = values::config_as_shown(model.machine, config);
        one_node_without_network(model.machine, config.nodes)?;
        crate::search::gpu_clocks::check_config("--config", model.machine, model.profile, &config)?;
        for w in warnings_for(trust, config.nodes) {
            super::say::warning(&w);
        }
        let exp = exporter(args.inputs.json, None);
        match &model.predict(config)? {
            Outcome::Finite(p) => exp.prediction(PredictionView::Finite(p), out)?,
            Outcome::Saturated { config, rho } => {
                exp.prediction(PredictionView::Saturated { config, rho: *rho }, out)?
            }
        }
        Ok(())
    })
}
