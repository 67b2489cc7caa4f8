//! `profile --nodes auto`: the measurement campaign (MODEL.md 6d). It measures a few small
//! node counts, fits and plans exactly as `fit` and `plan` do, then measures, step by step, the
//! count that can still change the recommendation, until nothing can (within `--tolerance`),
//! the `--budget` is spent, or no count is left. Each step is said on stderr (`--json`: a list
//! on stdout). Runs come from `--replay` (recorded runs) or from launching the program
//! through the sweep of `profile --nodes` ([`source::Source`]).

use crate::search::plan::{FrontEntry, Plan};
use crate::units::{Joules, Seconds, fmt_duration, fmt_energy};
use clap::Args;
use replay::Recorded;
use serde::Serialize;
use source::{Run, Source};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The counts a campaign starts from: the smallest available at or above each, ascending.
pub const START: [u32; 3] = [1, 2, 4];

/// The default tolerance: run-to-run spread of one configuration is 2.7-8.4% (median per code)
/// on the clusters we measured, so an `E x T` gain under 5% cannot be told from repeating a run.
pub const DEFAULT_TOLERANCE: f64 = 0.05;

/// `profile --nodes auto`'s own flags.
#[derive(Debug, Args, Default, Clone)]
pub struct CampaignArgs {
    /// With --nodes auto: take each run from these recorded runs (a `fit`/`validate` CSV), in
    /// file order, instead of launching the program; a count not recorded is never invented.
    #[arg(long, value_name = "RUNS.csv")]
    pub replay: Option<PathBuf>,
    /// With --nodes auto: stop once the recommendation was measured and no unmeasured node
    /// count is predicted to beat its energy-delay product by more than this (0.05 or 5%)
    /// [default: 5%].
    #[arg(long, value_name = "FRACTION")]
    pub tolerance: Option<String>,
    /// With --nodes auto: the node-hours the campaign may spend (its start included).
    #[arg(long = "node-hours", value_name = "NODE-HOURS")]
    pub node_hours: Option<f64>,
    /// With --nodes auto: the largest node count to plan and measure [default: the machine's].
    #[arg(long, value_name = "N")]
    pub max_nodes: Option<u32>,
    /// With --nodes auto: print the campaign's steps as JSON on standard output.
    #[arg(long)]
    pub json: bool,
}

/// The recommendation as a step reports it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Rec {
    /// Node count.
    pub nodes: u32,
    /// Cores per node.
    pub cores: u32,
    /// Predicted time, s.
    pub time_s: f64,
    /// Predicted energy, J (null where energy is unavailable).
    pub energy_j: Option<f64>,
    /// The time interval, s (null at a measured count).
    pub time_interval_s: Option<(f64, f64)>,
    /// The energy interval, J.
    pub energy_interval_j: Option<(f64, f64)>,
    /// Whether this node count was measured at these cores a node.
    pub measured: bool,
    /// The mean time of those measured runs, s (null where not measured): the time shown is
    /// always the model's, as for every other count.
    pub measured_time_s: Option<f64>,
}

/// One step: what was measured, why, at what cost, and how the recommendation moved.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// 1, 2, ...
    pub step: usize,
    /// The node count measured.
    pub nodes: u32,
    /// Runs taken.
    pub runs: usize,
    /// Why this count.
    pub why: String,
    /// Its cost in node-hours (the runs' nodes x time).
    pub node_hours: f64,
    /// Its cost in node-runs (a run on `n` nodes costs `n`).
    pub node_runs: u32,
    /// The recommendation before (none before the first fit).
    pub before: Option<Rec>,
    /// The recommendation after the refit.
    pub after: Option<Rec>,
}

/// The campaign's JSON.
#[derive(Debug, Serialize)]
struct Report {
    format: &'static str,
    steps: Vec<Step>,
    stopped: String,
    recommendation: Option<Rec>,
    measured_nodes: Vec<u32>,
    node_hours: f64,
    node_runs: u32,
    runs_file: String,
    profile_file: String,
}

/// What the campaign measures next, or why it stops.
enum Next {
    Measure(u32, String),
    Stop(String),
}

/// The state of a campaign.
struct Campaign<'a> {
    args: &'a crate::cli::profile::ProfileArgs,
    source: Source,
    runs: Vec<Run>,
    measured: BTreeSet<u32>,
    max_nodes: u32,
    work: tempfile::TempDir,
    /// The recommendation of the last fit and plan.
    last: Option<Rec>,
}

/// Runs `profile --nodes auto`; returns the exit code (as `profile`'s: 128 + the signal when
/// stopped, 4 when runs failed).
pub fn run(a: &crate::cli::profile::ProfileArgs, out: &mut dyn Write) -> anyhow::Result<i32> {
    let c = &a.campaign;
    let tolerance = tolerance(c.tolerance.as_deref())?;
    let Some(csv) = a.measured_out.clone() else {
        return Err(crate::cli::values::bad(
            "--measured-out",
            "a CSV for the campaign's runs (fit reads it)",
            "nothing",
        )
        .into());
    };
    let _locks = crate::cli::outputs::lock(&[a.output.as_path(), csv.as_path()])?;
    let mut k = Campaign::new(a, c.replay.as_deref(), &csv)?;
    let (steps, stopped) = k.steps(tolerance, &csv)?;
    k.finish(&csv, (steps, stopped), out)?;
    Ok(k.source.exit_code())
}

/// `--tolerance`: a fraction from 0 to 1 or a percentage; a bare number above 1 is refused
/// (5 would be 500%).
fn tolerance(t: Option<&str>) -> anyhow::Result<f64> {
    let Some(t) = t else {
        return Ok(DEFAULT_TOLERANCE);
    };
    let v = crate::cli::values::parse_fraction("--tolerance", t)?;
    if !t.trim().ends_with('%') && v > 1.0 {
        return Err(crate::cli::values::bad(
            "--tolerance",
            "a fraction from 0 to 1 (0.05) or a percentage (5%)",
            t,
        )
        .into());
    }
    Ok(v)
}

impl CampaignArgs {
    /// The campaign flags given, by name: refused without `--nodes auto`.
    pub fn given(&self) -> Vec<&'static str> {
        [
            ("--replay", self.replay.is_some()),
            ("--tolerance", self.tolerance.is_some()),
            ("--node-hours", self.node_hours.is_some()),
            ("--max-nodes", self.max_nodes.is_some()),
            ("--json", self.json),
        ]
        .into_iter()
        .filter(|(_, on)| *on)
        .map(|(flag, _)| flag)
        .collect()
    }
}

impl<'a> Campaign<'a> {
    fn new(
        a: &'a crate::cli::profile::ProfileArgs,
        replay: Option<&Path>,
        csv: &Path,
    ) -> anyhow::Result<Campaign<'a>> {
        if a.machine.is_none() {
            return Err(crate::cli::values::bad(
                "--machine",
                "the machine file the campaign fits against (as `fit --machine`)",
                "nothing",
            )
            .into());
        }
        let (file, text) = crate::cli::sources::machine_text(a.machine.as_deref())?;
        let (machine, _) = crate::model::machine::Machine::from_toml_for_fit(&file, &text)?;
        let (source, max_nodes) = match replay {
            Some(r) => {
                replay_outputs(a, csv)?;
                let max = max_nodes(a.campaign.max_nodes, machine.max_nodes, &file)?;
                (Source::Replay(recorded(a, r)?), max)
            }
            None => {
                let (l, max) = launch::Launch::new(a, machine.max_nodes)?;
                (Source::Launch(Box::new(l)), max)
            }
        };
        let mut k = Campaign {
            args: a,
            source,
            runs: Vec::new(),
            measured: BTreeSet::new(),
            max_nodes,
            work: tempfile::tempdir()?,
            last: None,
        };
        if a.resume {
            // The runs measured before, taken again from their source, in their order.
            k.runs = k.source.resume(csv)?;
            k.measured = k.runs.iter().map(|r| r.0).collect();
        }
        Ok(k)
    }

    /// The counts to start from that are not yet measured.
    fn start(&self) -> Vec<u32> {
        let mut avail = self.source.available(self.max_nodes);
        avail.extend(self.measured.iter().copied());
        avail.sort_unstable();
        avail.dedup();
        let mut chosen: Vec<u32> = Vec::new();
        for t in START {
            let above = chosen.last().copied().unwrap_or(0);
            if let Some(&n) = avail.iter().find(|&&n| n >= t && n > above) {
                chosen.push(n);
            }
        }
        chosen.retain(|n| !self.measured.contains(n));
        chosen
    }
}

mod launch;
mod replay;
mod source;
mod steps;

/// `--replay`'s recorded runs with the requested `--cores` and `--freqs`.
fn recorded(a: &crate::cli::profile::ProfileArgs, file: &Path) -> anyhow::Result<Recorded> {
    let cores = a
        .cores
        .as_deref()
        .map(|s| crate::cli::values::parse_int_spec("--cores", s))
        .transpose()?;
    let freqs = a
        .freqs
        .as_deref()
        .map(|s| crate::cli::values::parse_ghz_values("--freqs", s))
        .transpose()?;
    Ok(Recorded::read(file, cores.as_deref(), freqs.as_deref())?)
}

/// The recommendation of a plan, as a step says it.
fn rec_of(plan: &Plan, measured: &dyn Fn(u32, u32) -> Option<f64>) -> Option<Rec> {
    plan.recommendation().map(|f| rec_entry(f, measured))
}

fn rec_entry(f: &FrontEntry, measured: &dyn Fn(u32, u32) -> Option<f64>) -> Rec {
    let p = &f.prediction;
    let at = measured(p.config.nodes, p.config.cores);
    Rec {
        nodes: p.config.nodes,
        cores: p.config.cores,
        time_s: p.time.0,
        energy_j: (!p.time_only).then_some(p.energy.0),
        time_interval_s: p.interval.map(|i| i.time_s),
        energy_interval_j: p.interval.filter(|_| !p.time_only).map(|i| i.energy_j),
        measured: at.is_some(),
        measured_time_s: at,
    }
}

/// A recommendation in words: `11 nodes, 7m02.2s [6m44.3s, 7m21.0s], 1.87 MJ [...]`.
fn said(r: &Option<Rec>) -> String {
    let Some(r) = r else {
        return "none".into();
    };
    let mut s = format!(
        "{}, {}",
        crate::units::count(u64::from(r.nodes), "node", "nodes"),
        fmt_duration(Seconds(r.time_s))
    );
    if let Some((lo, hi)) = r.time_interval_s {
        s += &format!(
            " [{}, {}]",
            fmt_duration(Seconds(lo)),
            fmt_duration(Seconds(hi))
        );
    }
    if let Some(e) = r.energy_j {
        s += &format!(", {}", fmt_energy(Joules(e)));
    }
    if let Some((lo, hi)) = r.energy_interval_j {
        s += &format!(" [{}, {}]", fmt_energy(Joules(lo)), fmt_energy(Joules(hi)));
    }
    if let Some(t) = r.measured_time_s {
        s += &format!(
            " (predicted; {} nodes x {} cores were measured: {})",
            r.nodes,
            r.cores,
            fmt_duration(Seconds(t))
        );
    }
    s
}

/// Records in `-o`'s provenance the node counts the runs measured, in the order they were
/// first measured (the node-law chart of `report` numbers the campaign's steps by it).
fn record_order(profile: &Path, runs: &[Run]) -> anyhow::Result<()> {
    let mut order: Vec<u32> = Vec::new();
    for r in runs {
        if !order.contains(&r.0) {
            order.push(r.0);
        }
    }
    if order.is_empty() || !profile.exists() {
        return Ok(());
    }
    let text = crate::input::read_file(profile)?;
    let mut file = crate::artefact::profile::ProfileFile::parse(profile, &text)?;
    file.provenance.insert(
        crate::artefact::profile::CAMPAIGN_KEY.into(),
        crate::artefact::profile::campaign_note(&order),
    );
    crate::atomic_write::write_atomic(profile, (file.to_text()? + "\n").as_bytes(), false)?;
    Ok(())
}

/// `--max-nodes` for a replay: from 1 to the machine's node count (`plan` plans no more).
fn max_nodes(given: Option<u32>, machine: u32, file: &Path) -> anyhow::Result<u32> {
    match given {
        None => Ok(machine.max(1)),
        Some(n) if (1..=machine).contains(&n) => Ok(n),
        Some(n) => Err(crate::cli::values::bad(
            "--max-nodes",
            format!(
                "a node count from 1 to {machine}, the nodes of {} (plan plans no more)",
                file.display()
            ),
            n.to_string(),
        )
        .into()),
    }
}

/// A replay onto an existing `-o` or `--measured-out` without `--resume` is refused, as a
/// launched campaign's is: nothing measured is replaced by accident.
fn replay_outputs(a: &crate::cli::profile::ProfileArgs, csv: &Path) -> anyhow::Result<()> {
    if a.resume {
        return Ok(());
    }
    match [a.output.as_path(), csv].into_iter().find(|p| p.exists()) {
        Some(p) => Err(crate::error::InputError::Mismatch(format!(
            "{} exists: add --resume to go on with the campaign it holds, or remove it",
            p.display()
        ))
        .into()),
        None => Ok(()),
    }
}
