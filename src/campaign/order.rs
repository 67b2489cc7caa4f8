//! The order a campaign measured its node counts in, recorded in its profile's provenance
//! ([`crate::artefact::profile::CAMPAIGN_KEY`]) so that the node-law chart of `report`
//! numbers the campaign's steps.

use super::source::Taken;
use crate::artefact::profile::{CAMPAIGN_KEY, ProfileFile, campaign_note};
use std::path::Path;

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

/// Records the order of `runs` in the provenance of the profile at `profile` (rewritten
/// atomically); nothing where there is no run or no profile.
pub fn record(profile: &Path, runs: &[Taken]) -> anyhow::Result<()> {
    let order = measured_order(runs);
    if order.is_empty() || !profile.exists() {
        return Ok(());
    }
    let text = crate::input::read_file(profile)?;
    let mut file = ProfileFile::parse(profile, &text)?;
    file.provenance
        .insert(CAMPAIGN_KEY.into(), campaign_note(&order));
    crate::atomic_write::write_atomic(profile, (file.to_text()? + "\n").as_bytes(), false)?;
    Ok(())
}
