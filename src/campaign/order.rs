//! The order a campaign measured its node counts in, recorded in its profile's provenance
//! ([`crate::artefact::profile::CAMPAIGN_KEY`]) so that the node-law chart of `report`
//! numbers the campaign's steps.

use super::source::Taken;
use crate::artefact::profile::{CAMPAIGN_KEY, ProfileFile, campaign_note};

/// The node counts of `runs`, in the order they were first measured.
pub fn measured_order(runs: &[Taken]) -> Vec<u32> {
    let mut order: Vec<u32> = Vec::new();
    for t in runs {
        if !order.contains(&t.row.nodes) {
            order.push(t.row.nodes);
        }
    }
    order
}

/// Records the order of `runs` in the provenance of `file`; nothing where there is no run.
pub fn record(file: &mut ProfileFile, runs: &[Taken]) {
    let order = measured_order(runs);
    if !order.is_empty() {
        file.provenance
            .insert(CAMPAIGN_KEY.into(), campaign_note(&order));
    }
}
