//! A campaign that launches the program: each requested count is measured through the sweep
//! of `profile --nodes` (same launchers, hostfile, Slurm steps and saved runs), resumed onto
//! the sweep's record of every run (beside the campaign's profile) so that each step makes
//! only its new runs: a new count's, or one more of a count measured before (a confirmation).

use super::source::{Ahead, RunSource, Spend, Stopped, Taken};
use crate::artefact::sweep::PlannedKey;
use crate::calibrate::sweep_law::measured_row;
use crate::error::InputError;
use crate::measure::placement::{self, Placement};
use crate::measure::sweep::{self, Options};
use crate::units::count;
use std::collections::{BTreeMap, BTreeSet};
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
    /// The sweep's options (its `output`: the record of every run); each step sets its node
    /// counts and repeats.
    opts: Options,
    /// Where each run's line and what failed are said.
    log: Box<dyn FnMut(Said<'_>)>,
    /// Counts with a successful run.
    measured: BTreeSet<u32>,
    /// The repeat indices of the successful runs of each point (node count, point key and
    /// GPU clock: none in a campaign).
    ok: BTreeMap<PlannedKey, BTreeSet<u32>>,
    /// Counts whose runs all failed: not measured again in this campaign.
    failed: BTreeSet<u32>,
    /// Runs of the record already read back.
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
    /// What the campaign predicts after the step now taken (`None`: the start).
    ahead: Option<Ahead>,
    /// What the runs spent without giving time (failed, or stopped at their budget limit).
    spend: Spend,
}

impl Launch {
    /// The launch of the sweep `opts` (its `--output`, the record of every run, goes on from
    /// one step to the next), checked before anything runs, and the largest node count:
    /// `max_nodes`, else the hostfile's hosts or the Slurm allocation's nodes (at most the
    /// machine's), else the machine's nodes. `log` gets every line the runs say.
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
                "--nodes auto measures up to {} (--max-nodes, else the hostfile's or \
                 allocation's nodes, else the machine file's)",
                count(max, "node", "nodes")
            ))
        })?;
        if opts.output.exists() && !opts.resume {
            return Err(InputError::Mismatch(format!(
                "{} exists (the record of a campaign's runs): add --resume to continue its \
                 campaign, or choose another --output",
                opts.output.display()
            ))
            .into());
        }
        // Every step goes on in the record: the runs there are skipped.
        opts.resume = true;
        let l = Launch {
            opts,
            log,
            measured: BTreeSet::new(),
            ok: BTreeMap::new(),
            failed: BTreeSet::new(),
            seen: 0,
            any_failed: false,
            signal: None,
            banner: BTreeSet::new(),
            said_runs: 0,
            say_resuming: false,
            ahead: None,
            spend: Spend::default(),
        };
        Ok((l, max))
    }

    /// Whether a run failed.
    pub fn any_failed(&self) -> bool {
        self.any_failed
    }

    /// The record of every run the sweep keeps (`--resume` goes on from it).
    pub fn record_file(&self) -> &Path {
        &self.opts.output
    }

    /// The successful runs the record gained since it was last read.
    fn read_back(&mut self) -> anyhow::Result<Vec<Taken>> {
        let output = self.opts.output.clone();
        let text = crate::input::read_file(&output)?;
        let (_, rec) = crate::measure::record::read_written(&output, &text)?;
        let mut runs = Vec::new();
        for (i, r) in rec.runs.iter().enumerate().skip(self.seen) {
            let from = format!("{}: run {}", output.display(), i + 1);
            if !r.ok {
                self.unmeasured(r, from);
                continue;
            }
            self.ok
                .entry(r.planned().key())
                .or_default()
                .insert(r.repeat);
            runs.push(Taken {
                row: measured_row(r),
                from,
            });
        }
        self.seen = rec.runs.len();
        self.measured.extend(runs.iter().map(|t| t.row.nodes));
        Ok(runs)
    }

    /// A run of the record that gave no time: its node-hours are spent; one stopped at its
    /// budget limit is the budget's stop.
    fn unmeasured(&mut self, r: &crate::measure::record::RunRecord, from: String) {
        let node_hours = f64::from(r.nodes) * r.wall_s / 3600.0;
        self.spend.unmeasured_node_hours += node_hours;
        if let Some(limit_s) = r.failure.as_deref().and_then(sweep::budget_limit_of) {
            self.spend.stopped = Some(Stopped {
                nodes: r.nodes,
                ran_s: r.wall_s,
                limit_s,
                node_hours,
                from: Some(from),
            });
        }
    }

    /// `--resume`: every successful run of the sweep's record, whose sweep the campaign goes
    /// on. Without the record, a `csv` of earlier runs is refused: their records are gone.
    pub fn resume(&mut self, csv: &Path) -> anyhow::Result<Vec<Taken>> {
        if self.opts.output.exists() {
            // Checked here too: a campaign resumed after its end makes no step, so no sweep
            // of a step checks that its runs are this command's.
            let output = &self.opts.output;
            let (_, rec) =
                crate::measure::record::read_written(output, &crate::input::read_file(output)?)?;
            let this_cpu = crate::measure::cpu::this_cpu().to_string();
            sweep::check_resumed(&self.opts, &rec, &this_cpu)?;
            self.say_resuming = true;
            let runs = self.read_back()?;
            self.said_runs = runs.len();
            return Ok(runs);
        }
        if csv.exists() {
            return Err(InputError::Mismatch(format!(
                "--resume: {} does not exist, but {} does: a launched campaign goes on from \
                 the record of its runs, kept beside its profile (--output); give the --output \
                 the campaign began with",
                self.opts.output.display(),
                csv.display()
            ))
            .into());
        }
        Ok(Vec::new())
    }

    /// The repeat that makes `k` more runs at each point on `n` nodes: the smallest whose
    /// indices not yet run successfully number `k` (at the point that needs the most).
    fn repeat_for_more(&self, n: u32, k: u32) -> u32 {
        self.ok
            .iter()
            .filter(|((nodes, _, _), _)| *nodes == n)
            .map(|(_, done)| {
                let mut t = 0;
                let mut missing = 0;
                while missing < k {
                    t += 1;
                    missing += u32::from(!done.contains(&t));
                }
                t
            })
            .max()
            .unwrap_or(k)
    }

    /// A sweep line as the campaign says it: its own run counter and the time left to the
    /// campaign's predicted end in place of the step's (`[1/2] ..., eta 3.0 s`); other lines
    /// as they are.
    fn campaign_line(&mut self, line: &str, step_start: std::time::Instant) -> String {
        let Some((numbers, rest)) = line
            .strip_prefix('[')
            .and_then(|l| l.split_once("] "))
            .filter(|(c, _)| c.starts_with(|c: char| c.is_ascii_digit()))
        else {
            return line.to_string();
        };
        self.said_runs += 1;
        let body = match rest.rsplit_once(", ") {
            Some((body, tail)) if tail.starts_with("eta ") || tail == "last run" => body,
            _ => rest,
        };
        let (i, total) = numbers
            .split_once('/')
            .and_then(|(i, t)| Some((i.parse::<u32>().ok()?, t.parse::<u32>().ok()?)))
            .unwrap_or((1, 1));
        let left = total.saturating_sub(i);
        let per_run = step_start.elapsed().as_secs_f64() / f64::from(i.max(1));
        let eta = match self.ahead {
            None => "the campaign's eta comes once its start is fitted".to_string(),
            Some(a) if a.steps == 0 && left == 0 => {
                "the campaign's last run, as the last fit predicts it".to_string()
            }
            Some(a) => {
                let this = match left {
                    0 => String::new(),
                    k => format!("{} of this step, then ", count(k, "run", "runs")),
                };
                format!(
                    "campaign eta {} ({this}{} as the last fit predicts them)",
                    crate::units::fmt_duration(crate::units::Seconds(
                        per_run * f64::from(left) + a.seconds
                    )),
                    count(a.steps as u64, "more step", "more steps"),
                )
            }
        };
        format!("campaign run {}: {body}; {eta}", self.said_runs)
    }
}

impl RunSource for Launch {
    /// Every count up to `max` whose runs did not all fail: a count measured before can be
    /// measured again.
    fn available(&self, max: u32) -> Vec<u32> {
        (1..=max).filter(|n| !self.failed.contains(n)).collect()
    }

    /// Runs the sweep over the counts measured so far and `n`, `k` runs a point: only the
    /// runs not yet in the record are made. A count measured before is measured again (`k`
    /// more runs on it alone). Returns the new successful runs (none where every run on `n`
    /// failed, said, and `n` is then left out; none when a stop signal came).
    fn take(&mut self, n: u32, k: u32) -> anyhow::Result<Vec<Taken>> {
        if sweep::interrupted() {
            self.signal = Some(stop_signal());
            return Ok(Vec::new());
        }
        let again = self.measured.contains(&n);
        if again {
            self.opts.nodes = vec![n];
            self.opts.repeat = self.repeat_for_more(n, k);
        } else {
            let mut nodes: Vec<u32> = self.measured.iter().copied().collect();
            nodes.push(n);
            nodes.sort_unstable();
            self.opts.nodes = nodes;
            self.opts.repeat = k;
        }
        let resuming = std::mem::take(&mut self.say_resuming);
        let start = std::time::Instant::now();
        let opts = self.opts.clone();
        let budget = self.spend.left.map(|h| h * 3600.0);
        let res = sweep::run_within(&opts, budget, &mut |l: &str| {
            if said_before(l, &mut self.banner, resuming) {
                return;
            }
            let line = self.campaign_line(l, start);
            (self.log)(Said::Run(&line))
        })?;
        for f in &res.failed {
            (self.log)(Said::Failed(f));
        }
        self.any_failed |= !res.failed.is_empty();
        let runs = self.read_back()?;
        if let Some(b) = res.budget_stop.filter(|b| !b.started) {
            self.spend.stopped = Some(Stopped {
                nodes: b.nodes,
                ran_s: 0.0,
                limit_s: b.limit_s,
                node_hours: 0.0,
                from: None,
            });
        }
        if res.interrupted {
            self.signal = Some(stop_signal());
        } else if self.spend.stopped.is_some() {
            // The campaign ends on its budget: no count is left out.
        } else if !runs.iter().any(|t| t.row.nodes == n) {
            self.failed.insert(n);
            let nodes = count(u64::from(n), "node", "nodes");
            let note = match again {
                true => format!(
                    "every run on {nodes} failed (said above): the campaign does not measure \
                     {nodes} again, and their runs so far decide"
                ),
                false => format!(
                    "every run on {nodes} failed (said above): the campaign leaves {nodes} out"
                ),
            };
            (self.log)(Said::Note(&note));
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

    fn ahead(&mut self, ahead: Option<Ahead>) {
        self.ahead = ahead;
    }

    fn budget(&mut self, left_node_hours: Option<f64>) {
        self.spend.left = left_node_hours;
    }

    fn spend(&self) -> &Spend {
        &self.spend
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
