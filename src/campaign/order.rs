//! The order a campaign measured its node counts in, a count each step, recorded in its
//! profile's provenance ([`crate::artefact::profile::CAMPAIGN_KEY`]) so that the node-law
//! chart of `report` numbers the campaign's steps as its progress lines did.

use super::source::Taken;
use crate::artefact::profile::{CAMPAIGN_KEY, ProfileFile, campaign_note};

/// The node count each step of `runs` measured, in order, `repeat` runs a step: each run of
/// consecutive runs on one count, in steps of `repeat` (a step cut short is one step).
pub fn steps(runs: &[Taken], repeat: u32) -> Vec<u32> {
    let mut order = Vec::new();
    let mut i = 0;
    while i < runs.len() {
        let n = runs[i].row.nodes;
        let same = runs[i..].iter().take_while(|t| t.row.nodes == n).count();
        order.extend(std::iter::repeat_n(
            n,
            same.div_ceil(repeat.max(1) as usize),
        ));
        i += same;
    }
    order
}

/// Records the steps of `runs` (`repeat` runs a step) in the provenance of `file`; nothing
/// where there is no run.
pub fn record(file: &mut ProfileFile, runs: &[Taken], repeat: u32) {
    let order = steps(runs, repeat);
    if !order.is_empty() {
        file.provenance
            .insert(CAMPAIGN_KEY.into(), campaign_note(&order));
    }
}
