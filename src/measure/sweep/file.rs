//! The profile a sweep writes after every run (atomically), and the one `--resume` reads.

use super::options::*;
use crate::measure::record::{self, SweepRecord};

/// Loads the file to resume, or checks that a fresh sweep overwrites nothing.
pub(super) fn load_existing(o: &Options) -> anyhow::Result<Option<SweepRecord>> {
    if !o.output.exists() {
        return Ok(None);
    }
    if !o.resume {
        return Err(crate::error::InputError::Mismatch(format!(
            "{} exists: add --resume to continue it, or choose another --output",
            o.output.display()
        ))
        .into());
    }
    let text = crate::input::read_file(&o.output)?;
    let (_, rec) = record::read_written(&o.output, &text)?;
    Ok(Some(rec))
}

pub(super) fn save(o: &Options, rec: &SweepRecord) -> anyhow::Result<()> {
    let text = record::profile_file(&o.header, rec).to_text()?;
    crate::atomic_write::write_atomic(&o.output, text.as_bytes(), false)
        .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", o.output.display()))
}
