//! `plan` as a function: a machine and a profile fitted to it ([`Loaded`]), the space and the
//! query in; the model bound and checked as `plan` checks it, the front and the recommendation
//! with its notes and warnings out.

use crate::calibrate::trust::{self, Checks, Trust};
use crate::error::InputResult;
use crate::model::{Config, Model};
use crate::search::inputs::Loaded;
use crate::search::plan::{Plan, describe_risk};
use crate::search::query::Query;
use crate::search::space::Space;

/// What to recommend, and how the model is checked.
#[derive(Debug, Clone, Copy, Default)]
pub struct Request {
    /// The query (none: least energy-delay product, or node-hours x time without energy).
    pub query: Query,
    /// The reference configuration of a slowdown query (none: the fastest).
    pub reference: Option<Config>,
    /// What the user accepts, weak scaling and the intervals' coverage.
    pub checks: Checks,
}

/// A plan with the model it was searched on and what the checks found.
pub struct Planned<'a> {
    /// The bound model (for job scripts and charts of other front points).
    pub model: Model<'a>,
    /// The front, the recommendation, its notes and warnings.
    pub plan: Plan,
    /// The checks of the machine and the model.
    pub trust: Trust,
}

/// Binds and checks the model, searches `space`, and gives the plan its notes and its
/// recommendation's warnings.
pub fn plan<'a>(inputs: &'a Loaded, space: &Space, request: &Request) -> InputResult<Planned<'a>> {
    let (mut trust, mut notes) = (inputs.trust.clone(), inputs.notes.clone());
    let model = trust::bind(
        &inputs.machine,
        &inputs.profile,
        &request.checks,
        &mut trust,
        &mut notes,
    )?;
    let mut plan = crate::search::plan::plan(&model, space, request.query, request.reference)?;
    plan.notes.extend(notes);
    plan.warnings = plan
        .recommendation()
        .map(|r| trust::warnings_for(&trust, r.prediction.config.nodes))
        .unwrap_or_default();
    if let Some(r) = &plan.risk {
        plan.warnings.push(describe_risk(r, model.coverage()));
    }
    Ok(Planned { model, plan, trust })
}
