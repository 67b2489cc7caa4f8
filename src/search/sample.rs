//! A bounded, deterministic sample of the space for plotting: every configuration when the
//! space is small, otherwise a stratified sample (evenly strided over groups and node counts)
//! of at most `max` configurations.

use super::space::Space;
use crate::error::InputResult;
use crate::model::Model;

/// One sampled configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SamplePoint {
    /// `T` in seconds.
    pub time: f64,
    /// `E` in joules.
    pub energy: f64,
    /// `UCR`.
    pub ucr: f64,
}

/// The sample and whether it is all of the space.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Finite points (saturated ones are left out).
    pub points: Vec<SamplePoint>,
    /// Configurations looked at.
    pub taken: u64,
    /// Whether every configuration of the space was taken.
    pub complete: bool,
}

/// Takes at most `max` configurations of `space`.
pub fn sample(model: &Model<'_>, space: &Space, max: u64) -> InputResult<Sample> {
    let groups = space.groups(model)?;
    let nodes = &space.nodes;
    let total = space.size();
    // Strides over groups and node counts, balanced so both axes are covered.
    let ratio = (total as f64 / max.max(1) as f64).max(1.0);
    let node_stride = (ratio.sqrt().ceil() as usize).clamp(1, nodes.len().max(1));
    let per_group = nodes.len().div_ceil(node_stride) as u64;
    let group_stride = ((groups.len() as u64 * per_group).div_ceil(max.max(1))).max(1) as usize;
    let mut points = Vec::new();
    let mut taken = 0u64;
    for g in groups.iter().step_by(group_stride) {
        for &n in nodes.iter().step_by(node_stride) {
            taken += 1;
            if let Some(ev) = g.eval(n, model.growth_factor(n)) {
                points.push(SamplePoint {
                    time: ev.time,
                    energy: ev.energy,
                    ucr: ev.t.cpu / ev.time,
                });
            }
        }
    }
    Ok(Sample {
        points,
        taken,
        complete: taken == total,
    })
}
