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
    let bad =
        |e: String| crate::error::InputError::Mismatch(format!("{}: {e}", o.output.display()));
    let doc: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    let rec = record::read_sweep(&doc).map_err(bad)?;
    Ok(Some(rec))
}

pub(super) fn save(o: &Options, rec: &SweepRecord) -> anyhow::Result<()> {
    let doc = record::profile_json(&o.header, rec);
    let text = serde_json::to_string_pretty(&doc)?;
    crate::atomic_write::write_atomic(&o.output, text.as_bytes(), false)
        .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", o.output.display()))
}
