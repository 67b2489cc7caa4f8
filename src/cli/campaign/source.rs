//! Where the campaign's runs come from: recorded runs (`--replay`), or the program launched
//! through the sweep of `profile --nodes`. Both give each run's node count, time and line in
//! `--measured-out`; neither invents a run.

use super::launch::Launch;
use super::replay::Recorded;
use std::path::Path;

/// A run as the campaign keeps it: its node count, time (s) and line in `--measured-out`.
pub(super) type Run = (u32, f64, String);

/// The campaign's source of runs.
pub(super) enum Source {
    /// Runs taken from a recording, in file order.
    Replay(Recorded),
    /// Runs made by launching the program.
    Launch(Box<Launch>),
}

impl Source {
    /// The node counts up to `max` that can still be measured.
    pub(super) fn available(&self, max: u32) -> Vec<u32> {
        match self {
            Source::Replay(r) => r.available(max),
            Source::Launch(l) => l.available(max),
        }
    }

    /// `k` runs on `n` nodes (fewer, or none, where fewer could be had): each one's node
    /// count, time and line. A launch may also return runs it completed on counts measured
    /// before (an interrupted campaign's last count).
    pub(super) fn take(&mut self, n: u32, k: u32) -> anyhow::Result<Vec<Run>> {
        match self {
            Source::Replay(r) => Ok(r.take(n, k).into_iter().map(|(t, l)| (n, t, l)).collect()),
            Source::Launch(l) => l.take(n, k),
        }
    }

    /// The header line of `--measured-out`.
    pub(super) fn header(&self) -> &str {
        match self {
            Source::Replay(r) => &r.header,
            Source::Launch(_) => crate::cli::profile_nodes::MEASURED_HEADER,
        }
    }

    /// `--resume`: the runs measured before, in their order.
    pub(super) fn resume(&mut self, csv: &Path) -> anyhow::Result<Vec<Run>> {
        match self {
            Source::Replay(r) => r.resume(csv),
            Source::Launch(l) => l.resume(csv),
        }
    }

    /// How a count that can be measured is called in the steps' reasons.
    pub(super) fn word(&self) -> &'static str {
        match self {
            Source::Replay(_) => "recorded",
            Source::Launch(_) => "available",
        }
    }

    /// The stop signal that interrupted the runs, if one did (0: stopped without a signal).
    pub(super) fn interrupted(&self) -> Option<i32> {
        match self {
            Source::Replay(_) => None,
            Source::Launch(l) => l.stopped(),
        }
    }

    /// The exit code: 128 + the signal when interrupted, 4 when runs failed, else 0.
    pub(super) fn exit_code(&self) -> i32 {
        use crate::cli::profile::{EXIT_INTERRUPTED, EXIT_RUNS_FAILED};
        match self {
            Source::Replay(_) => 0,
            Source::Launch(l) => match l.stopped() {
                Some(s) if s > 0 => 128 + s,
                Some(_) => EXIT_INTERRUPTED,
                None if l.any_failed => EXIT_RUNS_FAILED,
                None => 0,
            },
        }
    }

    /// Writes `-o`: the last fit's profile (`fitted`) for a replay; for a launch, the sweep's
    /// profile with the node law fitted on its runs (as `profile --nodes` writes it), left as
    /// the sweep saved it when interrupted (`--resume` goes on from it).
    pub(super) fn write_profile(
        &self,
        a: &crate::cli::profile::ProfileArgs,
        fitted: &Path,
    ) -> anyhow::Result<()> {
        match self {
            Source::Replay(_) => {
                if fitted.exists() {
                    let bytes = std::fs::read(fitted)?;
                    crate::atomic_write::write_atomic(&a.output, &bytes, false)?;
                }
                Ok(())
            }
            Source::Launch(l) => l.write_profile(a),
        }
    }
}
