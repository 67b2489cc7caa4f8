//! A campaign that launches the program: each requested count is measured through the sweep
//! of `profile --nodes` (same launchers, hostfile, Slurm steps and saved runs), resumed onto
//! the sweep's profile so that each step makes only its new count's runs.

use super::source::{RunSource, Taken};
use crate::calibrate::fit::MachineDoc;
use crate::calibrate::sweep_law::{self, measured_row};
use crate::error::InputError;
use crate::measure::placement::{self, Placement};
use crate::measure::sweep::{self, Options};
use std::collections::BTreeSet;
use std::path::Path;

/// A line a launched campaign says: a run's progress, a run that failed, a note.
#[derive(Debug, Clone, Copy)]
pub enum Said<'a> {
    /// A run's line (quiet leaves it out).
    Run(&'a str),
    /// A run that failed.
    Failed(&'a str),
    /// What the campaign did about it.
    Note(&'a str),
}

/// The program, launched.
pub struct Launch {
    /// The sweep's options; each step sets its node counts and repeats.
    opts: Options,
    /// Where each run's line and what failed are said.
    log: Box<dyn FnMut(Said<'_>)>,
    /// Counts with a successful run.
    measured: BTreeSet<u32>,
    /// Counts whose runs all failed: not measured again in this campaign.
    failed: BTreeSet<u32>,
    /// Runs of the profile already read back.
    seen: usize,
    /// Whether a run failed.
    any_failed: bool,
    /// The stop signal that interrupted a sweep (0: stopped without one).
    signal: Option<i32>,
    /// The backend lines already said (each sweep of a step says them again).
    banner: BTreeSet<String>,
    /// The run lines said so far in the campaign (each step's sweep counts from 1 again).
    said_runs: usize,
    /// Whether the next step's sweep may say what it resumes: only the first after `--resume`
    /// (every later step goes on from the campaign's own runs).
    say_resuming: bool,
}

impl Launch {
    /// The launch of the sweep `opts` (its `--output` goes on from one step to the next),
    /// checked before anything runs, and the largest node count: `max_nodes`, else the
    /// hostfile's hosts or the Slurm allocation's nodes (at most the machine's), else the
    /// machine's nodes. `log` gets every line the runs say.
    pub fn new(
        mut opts: Options,
        (max_nodes, machine_nodes): (Option<u32>, u32),
        log: Box<dyn FnMut(Said<'_>)>,
    ) -> anyhow::Result<(Launch, u32)> {
        let place = placement::here(opts.hostfile.as_deref())?;
        let have = match &place {
            Placement::Hosts { hosts, .. } => Some(hosts.len() as u32),
            Placement::Slurm { nodes, .. } => *nodes,
            Placement::Local => None,
        };
        let max = max_nodes
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
        if opts.output.exists() && !opts.resume {
            return Err(InputError::Mismatch(format!(
                "{} exists: add --resume to continue its campaign, or choose another --output",
                opts.output.display()
            ))
            .into());
        }
        // Every step goes on in -o: the runs there are skipped.
        opts.resume = true;
        let l = Launch {
            opts,
            log,
            measured: BTreeSet::new(),
            failed: BTreeSet::new(),
            seen: 0,
            any_failed: false,
            signal: None,
            banner: BTreeSet::new(),
            said_runs: 0,
            say_resuming: false,
        };
        Ok((l, max))
    }

    /// Whether a run failed.
    pub fn any_failed(&self) -> bool {
        self.any_failed
    }

    /// The successful runs the profile gained since it was last read.
    fn read_back(&mut self) -> anyhow::Result<Vec<Taken>> {
        let output = &self.opts.output;
        let text = crate::input::read_file(output)?;
        let (_, rec) = crate::measure::record::read_written(output, &text)?;
        let runs: Vec<Taken> = rec
            .runs
            .iter()
            .enumerate()
            .skip(self.seen)
            .filter(|(_, r)| r.ok)
            .map(|(i, r)| Taken {
                row: measured_row(r),
                from: format!("{}: run {}", output.display(), i + 1),
            })
            .collect();
        self.seen = rec.runs.len();
        self.measured.extend(runs.iter().map(|t| t.row.nodes));
        Ok(runs)
    }

    /// `--resume`: every successful run of the sweep's profile, whose sweep the campaign goes
    /// on. Without the profile, a `csv` of earlier runs is refused: their records are gone.
    pub fn resume(&mut self, csv: &Path) -> anyhow::Result<Vec<Taken>> {
        if self.opts.output.exists() {
            self.say_resuming = true;
            let runs = self.read_back()?;
            self.said_runs = runs.len();
            return Ok(runs);
        }
        if csv.exists() {
            return Err(InputError::Mismatch(format!(
                "--resume: {} does not exist, but {} does: a launched campaign goes on from \
                 the profile its runs were saved in; give that profile as --output",
                self.opts.output.display(),
                csv.display()
            ))
            .into());
        }
        Ok(Vec::new())
    }

    /// Fits the node law on the profile's runs over several nodes into it, as `profile
    /// --nodes --machine` does; when interrupted, leaves the profile as the sweep saved it.
    pub fn finish(&self, machine: &MachineDoc, weak: bool) -> anyhow::Result<()> {
        let output = &self.opts.output;
        if self.interrupted().is_some() || !output.exists() {
            // The campaign's end says so; the sweep saved every run.
            return Ok(());
        }
        let text = crate::input::read_file(output)?;
        let (mut doc, rec) = crate::measure::record::read_written(output, &text)?;
        let digest = crate::input::sha256_hex(&text);
        let law = sweep_law::fit_into((output, digest), (&mut doc, &rec), Some(machine), weak)?;
        if matches!(law, sweep_law::SweepLaw::OneNode) {
            return Ok(());
        }
        let text = doc.to_text()?;
        crate::atomic_write::write_atomic(output, text.as_bytes(), false)?;
        Ok(())
    }
}

impl RunSource for Launch {
    /// Every count up to `max` not measured and not failed.
    fn available(&self, max: u32) -> Vec<u32> {
        (1..=max)
            .filter(|n| !self.measured.contains(n) && !self.failed.contains(n))
            .collect()
    }

    /// Runs the sweep over the counts measured so far and `n`, `k` runs a point: only the
    /// runs not yet in the profile are made. Returns the new successful runs (none where every
    /// run on `n` failed, said, and `n` is then left out; none when a stop signal came).
    fn take(&mut self, n: u32, k: u32) -> anyhow::Result<Vec<Taken>> {
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
        let log = &mut self.log;
        let (banner, resuming) = (&mut self.banner, std::mem::take(&mut self.say_resuming));
        let said_runs = &mut self.said_runs;
        let res = sweep::run(&self.opts, &mut |l: &str| {
            if said_before(l, banner, resuming) {
                return;
            }
            if l.starts_with('[') && l[1..].starts_with(|c: char| c.is_ascii_digit()) {
                // The step's own counter stays: it says how far this count's runs are.
                *said_runs += 1;
                return log(Said::Run(&format!("campaign run {said_runs}: {l}")));
            }
            log(Said::Run(l))
        })?;
        for f in &res.failed {
            (self.log)(Said::Failed(f));
        }
        self.any_failed |= !res.failed.is_empty();
        let runs = self.read_back()?;
        if res.interrupted {
            self.signal = Some(stop_signal());
        } else if !runs.iter().any(|t| t.row.nodes == n) {
            self.failed.insert(n);
            (self.log)(Said::Note(&format!(
                "every run on {} failed (said above): the campaign leaves {n} nodes out",
                crate::units::count(u64::from(n), "node", "nodes")
            )));
        }
        Ok(runs)
    }

    fn word(&self) -> &'static str {
        "available"
    }

    /// During a sweep, or caught between two (the sweep's handler stays installed while the
    /// campaign fits).
    fn interrupted(&self) -> Option<i32> {
        self.signal
            .or_else(|| sweep::interrupted().then(stop_signal))
    }
}

/// Whether a step's sweep line was said before in the campaign: a backend line (`measuring
/// with ...`, `[backend] ...`) said by an earlier step, or `resuming: ...` where the step goes
/// on from the campaign's own runs (`resuming`: the first step after `--resume`, which says it).
fn said_before(line: &str, banner: &mut BTreeSet<String>, resuming: bool) -> bool {
    if line.starts_with("resuming: ") {
        return !resuming;
    }
    let backend = line.starts_with("measuring with ")
        || (line.starts_with('[') && !line[1..].starts_with(|c: char| c.is_ascii_digit()));
    backend && !banner.insert(line.to_string())
}

/// The stop signal that came (0 when the sweep was stopped without one).
fn stop_signal() -> i32 {
    crate::measure::launch::STOP_SIGNAL.load(std::sync::atomic::Ordering::SeqCst)
}
