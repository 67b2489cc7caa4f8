//! `profile --nodes auto` without `--replay`: each requested count measured by launching the
//! program through the sweep of `profile --nodes` (same launchers, hostfile, Slurm steps and
//! saved runs), resumed onto `-o` so that each step makes only its new count's runs.

use super::source::Run;
use crate::cli::profile::{self, ProfileArgs};
use crate::cli::profile_nodes::{Written, measured_row, read_written};
use crate::measure::placement::{self, Placement};
use crate::measure::sweep::{self, Options};
use std::collections::BTreeSet;
use std::path::Path;

/// The program, launched.
pub struct Launch {
    /// The sweep's options; each step sets its node counts and repeats.
    opts: Options,
    /// `--quiet`: no line per run.
    quiet: bool,
    /// Counts with a successful run.
    measured: BTreeSet<u32>,
    /// Counts whose runs all failed: not measured again in this campaign.
    failed: BTreeSet<u32>,
    /// Runs of the profile already read back.
    seen: usize,
    /// Whether a run failed.
    pub(super) any_failed: bool,
    /// The stop signal that interrupted a sweep (0: stopped without one).
    signal: Option<i32>,
}

impl Launch {
    /// The sweep's options from the flags, checked before anything runs, and the largest node
    /// count: `--max-nodes`, else the hostfile's hosts or the Slurm allocation's nodes (at
    /// most the machine file's `nodes`), else the machine file's `nodes`.
    pub(super) fn new(a: &ProfileArgs, machine_nodes: u32) -> anyhow::Result<(Launch, u32)> {
        let mut opts = profile::options(a, "1")?;
        profile::check_outputs(a)?;
        let place = placement::here(a.hostfile.as_deref())?;
        let have = match &place {
            Placement::Hosts { hosts, .. } => Some(hosts.len() as u32),
            Placement::Slurm { nodes, .. } => *nodes,
            Placement::Local => None,
        };
        let max = a
            .campaign
            .max_nodes
            .or(have.map(|h| h.min(machine_nodes)))
            .unwrap_or(machine_nodes)
            .max(1);
        let words = opts
            .launcher
            .clone()
            .unwrap_or_else(|| placement::default_words(&place));
        placement::check(&place, &words, max, opts.launcher.is_some()).map_err(|e| {
            anyhow::Error::from(e).context(format!(
                "--nodes auto measures up to {max} nodes (--max-nodes, else the hostfile's \
                 or allocation's nodes, else the machine file's)"
            ))
        })?;
        if opts.output.exists() && !a.resume {
            return Err(crate::error::InputError::Mismatch(format!(
                "{} exists: add --resume to continue its campaign, or choose another --output",
                opts.output.display()
            ))
            .into());
        }
        // Every step goes on in -o: the runs there are skipped.
        opts.resume = true;
        let l = Launch {
            opts,
            quiet: a.quiet,
            measured: BTreeSet::new(),
            failed: BTreeSet::new(),
            seen: 0,
            any_failed: false,
            signal: None,
        };
        Ok((l, max))
    }

    /// The stop signal that interrupted the campaign (0: stopped without one): during a sweep,
    /// or caught between two (the sweep's handler stays installed while the campaign fits).
    pub(super) fn stopped(&self) -> Option<i32> {
        self.signal
            .or_else(|| sweep::interrupted().then(stop_signal))
    }

    /// Every count up to `max` not measured and not failed.
    pub(super) fn available(&self, max: u32) -> Vec<u32> {
        (1..=max)
            .filter(|n| !self.measured.contains(n) && !self.failed.contains(n))
            .collect()
    }

    /// Runs the sweep over the counts measured so far and `n`, `k` runs a point: only the
    /// runs not yet in `-o` are made. Returns the new successful runs (none where every run
    /// on `n` failed, said, and `n` is then left out; none when a stop signal came).
    pub(super) fn take(&mut self, n: u32, k: u32) -> anyhow::Result<Vec<Run>> {
        if sweep::interrupted() {
            self.signal = Some(stop_signal());
            return Ok(Vec::new());
        }
        let mut nodes: Vec<u32> = self.measured.iter().copied().collect();
        nodes.push(n);
        nodes.sort_unstable();
        nodes.dedup();
        self.opts.nodes = nodes;
        self.opts.repeat = k;
        let quiet = self.quiet;
        let mut log = |l: &str| {
            if !quiet {
                crate::cli::say::line(l);
            }
        };
        let res = sweep::run(&self.opts, &mut log)?;
        for f in &res.failed {
            crate::cli::say::line(&format!("failed: {f}"));
        }
        self.any_failed |= !res.failed.is_empty();
        let runs = self.read_back()?;
        if res.interrupted {
            self.signal = Some(stop_signal());
        } else if !runs.iter().any(|r| r.0 == n) {
            self.failed.insert(n);
            crate::cli::say::note(&format!(
                "every run on {} failed (said above): the campaign leaves {n} nodes out",
                crate::units::count(u64::from(n), "node", "nodes")
            ));
        }
        Ok(runs)
    }

    /// The successful runs the profile gained since it was last read, as measured rows.
    fn read_back(&mut self) -> anyhow::Result<Vec<Run>> {
        let written = read_written(&self.opts.output)?;
        let runs = runs_from(&written, self.seen)?;
        self.seen = written.runs().len();
        self.measured.extend(runs.iter().map(|r| r.0));
        Ok(runs)
    }

    /// `--resume`: every successful run of `-o`, whose sweep the campaign goes on. Without
    /// `-o` a `--measured-out` of earlier runs is refused: their records are gone.
    pub(super) fn resume(&mut self, csv: &Path) -> anyhow::Result<Vec<Run>> {
        if self.opts.output.exists() {
            return self.read_back();
        }
        if csv.exists() {
            return Err(crate::error::InputError::Mismatch(format!(
                "--resume: {} does not exist, but {} does: a launched campaign goes on from \
                 the profile its runs were saved in; give that profile as --output",
                self.opts.output.display(),
                csv.display()
            ))
            .into());
        }
        Ok(Vec::new())
    }

    /// Fits the node law on `-o`'s runs over several nodes into it, as `profile --nodes
    /// --machine` does; when interrupted, leaves `-o` as the sweep saved it.
    pub(super) fn write_profile(&self, a: &ProfileArgs) -> anyhow::Result<()> {
        if self.stopped().is_some() {
            // The campaign's end says so; the sweep saved every run.
            return Ok(());
        }
        if !a.output.exists() {
            return Ok(());
        }
        let written = read_written(&a.output)?;
        let mut said = std::io::sink();
        crate::cli::profile_nodes::fit_into_profile(
            &a.output,
            written,
            a.machine.as_deref(),
            a.weak,
            &mut said,
        )
    }
}

/// The successful runs of `written` from its `from`-th run on: node count, time, CSV line.
fn runs_from(written: &Written, from: usize) -> anyhow::Result<Vec<Run>> {
    let mut out = Vec::new();
    for r in written.runs().iter().skip(from).filter(|r| r.ok) {
        let text = crate::artefact::measured::to_csv(&[measured_row(r)])?;
        let line = text.lines().nth(1).unwrap_or_default().to_string();
        out.push((r.nodes, r.wall_s, line));
    }
    Ok(out)
}

/// The stop signal that came (0 when the sweep was stopped without one).
fn stop_signal() -> i32 {
    crate::measure::launch::STOP_SIGNAL.load(std::sync::atomic::Ordering::SeqCst)
}
