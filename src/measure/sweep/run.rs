//! The sweep itself: every run still to make, in order, saved as it finishes.

use super::BudgetStop;
use super::file::*;
use super::journal::Journal;
use super::one_run::*;
use super::options::*;
use super::setup::*;
use super::summary::*;
use crate::measure::cpufreq::Control;
use crate::measure::record::{self, RunRecord};
use std::collections::{BTreeSet, VecDeque};
use std::sync::atomic::Ordering;

/// The finishing times of the last runs, for the time left at the rate runs are really made
/// (their wall time, launching and saving included), which follows the sweep as it speeds up or
/// slows down.
pub(super) struct Rate {
    start: std::time::Instant,
    /// Seconds from the start at which the last (up to [`WINDOW`]) runs finished.
    recent: VecDeque<f64>,
}

/// Runs the rate is taken over.
const WINDOW: usize = 50;

impl Rate {
    pub(super) fn new() -> Rate {
        Rate {
            start: std::time::Instant::now(),
            recent: VecDeque::with_capacity(WINDOW + 1),
        }
    }

    /// Notes that a run finished now.
    pub(super) fn finished(&mut self) {
        self.recent.push_back(self.start.elapsed().as_secs_f64());
        if self.recent.len() > WINDOW {
            self.recent.pop_front();
        }
    }

    /// `eta 1m20s` for `left` runs more.
    pub(super) fn eta(&self, left: usize) -> String {
        let times: Vec<f64> = self.recent.iter().copied().collect();
        eta(&times, left)
    }
}

/// `1m20s`-style time left for `left` runs, from the times (seconds from the sweep's start) at
/// which the last runs finished: the mean time between them, or since the start for one run.
pub(super) fn eta(finished: &[f64], left: usize) -> String {
    if left == 0 {
        return "last run".into();
    }
    let per_run = match finished {
        [] => return "eta unknown".into(),
        [one] => *one,
        [first, .., last] => (last - first) / (finished.len() - 1) as f64,
    };
    format!(
        "eta {}",
        crate::units::fmt_duration(crate::units::Seconds(per_run * left as f64))
    )
}

/// The state of a sweep in progress.
pub(super) struct Progress {
    pub(super) failed: Vec<String>,
    pub(super) made: usize,
    pub(super) rate: Rate,
    pub(super) last_freq: Option<f64>,
    pub(super) warmed: BTreeSet<record::PlannedKey>,
    pub(super) bar: Option<indicatif::ProgressBar>,
    pub(super) journal: Journal,
    /// The profile's size at its last rewrite, plus the runs saved to the journal since.
    pub(super) bytes: usize,
    /// Runs the profile held at its last rewrite.
    pub(super) compacted: usize,
}

pub(super) fn progress_bar(o: &Options, runs: usize) -> Option<indicatif::ProgressBar> {
    o.progress_bar.then(|| {
        let b = indicatif::ProgressBar::new(runs as u64);
        if let Ok(st) = indicatif::ProgressStyle::with_template(
            "{bar:30} {pos}/{len} runs, {elapsed} elapsed, eta {eta} {msg}",
        ) {
            b.set_style(st);
        }
        b
    })
}

/// The folder a run works in (a profiler writes there), made with the sweep's folder of runs.
fn run_dir(o: &Options, (pt, k): Todo) -> anyhow::Result<std::path::PathBuf> {
    let khz = (pt.freq_hz / 1e3).round() as u64;
    let runs = crate::atomic_write::runs_dir(&o.output);
    let clock = pt
        .gpu_clock_mhz
        .map(|m| format!("-{m}mhz"))
        .unwrap_or_default();
    let run_dir = runs.join(format!(
        "{}n-{}c-{khz}khz-{}g{clock}-r{k}",
        pt.nodes, pt.cores, pt.gpus
    ));
    for d in [&runs, &run_dir] {
        crate::atomic_write::create_dir_safely(d)
            .map_err(|e| anyhow::anyhow!("{}: {e}", d.display()))?;
    }
    Ok(run_dir)
}

/// Makes run `i` of `total` (`t`): frequency, warm-up, the measured run, the saved record.
pub(super) fn run_one(
    o: &Options,
    s: &mut Setup,
    (i, total): (usize, usize),
    (t, limit): (Todo, super::budget::Limit),
    p: &mut Progress,
    log: &mut dyn FnMut(&str),
) -> anyhow::Result<()> {
    let (pt, k) = t;
    let f = pt.freq_hz;
    if let Control::Sysfs(guard) = &s.control
        && p.last_freq != Some(f)
    {
        guard
            .set(f)
            .map_err(|e| anyhow::anyhow!("setting {:.3} GHz: {e}", f / 1e9))?;
        p.last_freq = Some(f);
    }
    point_hostfile(o, s, pt.nodes)?;
    s.clock.set(pt.gpu_clock_mhz)?;
    if p.warmed.insert(pt.key()) {
        warm_up(o, s, t, log)?;
        if super::options::interrupted() {
            // Stopped during the warm-up: the measured run is not started.
            return Ok(());
        }
    }
    let run_dir = run_dir(o, t)?;
    if o.verbose {
        let spec = spec_for(o, s, t);
        let env: Vec<String> = spec.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        log(&format!(
            "run: {} (env {})",
            spec.argv.join(" "),
            env.join(" ")
        ));
    }
    let lists = s.rec.host_lists.len();
    let r = measure_once(o, s, (t, limit), &run_dir)?;
    let _ = std::fs::remove_dir(&run_dir); // kept when a profiler wrote into it
    p.made += 1;
    p.rate.finished();
    let line = format!(
        "[{}/{total}] {}, run {k}/{}: {:.3} s {}, {}",
        i + 1,
        pt.describe(),
        o.repeat,
        r.wall_s,
        r.failure.as_deref().unwrap_or("ok"),
        p.rate.eta(total - i - 1)
    );
    let budget_stop = r
        .failure
        .as_deref()
        .and_then(super::budget_limit_of)
        .is_some();
    if !r.ok && !super::options::interrupted() && !budget_stop {
        p.failed.push(format!("{line}\n{}", r.stderr_tail));
    }
    let wall = r.wall_s;
    let grew = s.rec.host_lists.len() != lists;
    keep(o, s, p, r, grew)?;
    match &p.bar {
        Some(b) => {
            b.set_message(format!("last: {} {wall:.2} s", pt.describe()));
            b.inc(1);
        }
        None if !o.quiet => log(&line),
        None => {}
    }
    Ok(())
}

/// Saves a finished run: appended to the journal (flat cost), and the profile rewritten from
/// every run when the journal holds as many runs as the profile did at its last rewrite (so
/// rewriting costs a constant share of each run), or when the run added a host list the
/// profile must hold before a journal line may refer to it.
pub(super) fn keep(
    o: &Options,
    s: &mut Setup,
    p: &mut Progress,
    r: RunRecord,
    grew: bool,
) -> anyhow::Result<()> {
    p.bytes += bytes_in_profile(&r);
    let index = s.rec.runs.len();
    s.rec.runs.push(r);
    if grew {
        p.bytes = compact(o, &s.rec, &mut p.journal)?;
        p.compacted = s.rec.runs.len();
        return Ok(());
    }
    p.journal.append(index, &s.rec.runs[index])?;
    if p.journal.since_compaction >= p.compacted.max(1) {
        p.bytes = compact(o, &s.rec, &mut p.journal)?;
        p.compacted = s.rec.runs.len();
    }
    Ok(())
}

/// Removes the sweep's working folder when nothing a profiler wrote is left in it.
pub(super) fn clean_up(o: &Options, s: &mut Setup) {
    remove_hostfiles(s);
    let _ = std::fs::remove_dir(crate::atomic_write::runs_dir(&o.output));
}

/// The line a resumed sweep starts with: the runs kept in the output (failed ones and those of
/// points no longer planned among them), then how many of the planned runs they already make
/// and how many are left to run.
fn resuming(o: &Options, kept: usize, planned: usize, left: usize) -> String {
    use crate::units::{count, part_of};
    format!(
        "resuming: {} kept in {}; {} done, {left} left to run",
        count(kept as u64, "run", "runs"),
        o.output.display(),
        part_of(
            (planned - left) as u64,
            planned as u64,
            "planned run",
            "planned runs"
        ),
    )
}

/// Runs the sweep. `log` receives one line per event (discovery, each run) when no bar is drawn.
pub fn run(o: &Options, log: &mut dyn FnMut(&str)) -> anyhow::Result<Outcome> {
    run_within(o, None, log)
}

/// Runs the sweep within a measuring budget of `budget_node_s` node-seconds (`None`: none, as
/// [`run`]): each run's time limit is its share of what is left over the node counts of the
/// runs still to make (or `--timeout` where smaller), less [`super::KILL_ALLOWANCE_S`]; a run
/// stopped at that limit, or one whose share leaves no time to run, ends the sweep
/// (`budget_stop`). Warm-up runs, which no record keeps, are refused with a budget.
pub fn run_within(
    o: &Options,
    budget_node_s: Option<f64>,
    log: &mut dyn FnMut(&str),
) -> anyhow::Result<Outcome> {
    if budget_node_s.is_some() && o.warmup > 0 {
        anyhow::bail!(
            "--warmup with a measuring budget: warm-up runs are not recorded, so their \
             node-hours would escape it; measure without --warmup"
        );
    }
    let mut s = setup(o, log)?;
    let todo = todo_list(o, &s);
    let planned = s.planned.len() * o.repeat as usize;
    let skipped = planned - todo.len();
    if skipped > 0 {
        log(&resuming(o, s.rec.runs.len(), planned, todo.len()));
    }
    let mut p = start(o, &s, &todo)?;
    let (full, budget_stop) = make_runs(o, &mut s, (&todo, budget_node_s), &mut p, log)?;
    if let Some(b) = p.bar.take() {
        b.finish_and_clear();
    }
    clean_up(o, &mut s);
    let interrupted = super::options::interrupted();
    let have: BTreeSet<(record::PlannedKey, u32)> = s
        .rec
        .runs
        .iter()
        .map(|r| (r.planned().key(), r.repeat))
        .collect();
    s.rec.complete = s
        .planned
        .iter()
        .all(|q| (1..=o.repeat).all(|k| have.contains(&(q.key(), k))));
    save(o, &s.rec)?;
    p.journal.remove()?;
    if let Some(runs) = full {
        anyhow::bail!(
            "{}: stopped after {runs} runs: one more could take the profile past the 16 MiB \
             jouleplan reads back; every finished run is saved; measure the rest into another \
             --output",
            o.output.display()
        );
    }
    let complete = s.rec.complete && !interrupted;
    let summary = summarise(&s.rec);
    let unsupported = std::mem::take(&mut s.unsupported);
    drop(s); // restores the frequency
    Ok(Outcome {
        runs_made: p.made,
        runs_skipped: skipped,
        failed: p.failed,
        interrupted,
        complete,
        unsupported,
        summary,
        budget_stop,
    })
}

/// Makes the runs of `todo` within the budget, in order, until a stop signal, a full profile
/// (`Some(runs)` first) or the budget (`Some(stop)` second) ends them.
fn make_runs(
    o: &Options,
    s: &mut Setup,
    (todo, budget_node_s): (&[Todo], Option<f64>),
    p: &mut Progress,
    log: &mut dyn FnMut(&str),
) -> anyhow::Result<(Option<usize>, Option<BudgetStop>)> {
    let mut left = budget_node_s;
    for (i, &t) in todo.iter().enumerate() {
        if super::options::interrupted() {
            break;
        }
        if !room_for_a_run(p.bytes) {
            return Ok((Some(s.rec.runs.len()), None));
        }
        let limit = match super::budget::limit(left, &todo[i..], o.timeout) {
            Ok(l) => l,
            Err(share) => {
                let stop = BudgetStop {
                    nodes: t.0.nodes,
                    ran_s: 0.0,
                    limit_s: share,
                    started: false,
                };
                return Ok((None, Some(stop)));
            }
        };
        let before = s.rec.runs.len();
        run_one(o, s, (i, todo.len()), (t, limit), p, log).map_err(|e| stopped(o, e))?;
        if let Some(stop) = spend(&s.rec.runs[before..], &mut left) {
            return Ok((None, Some(stop)));
        }
    }
    Ok((None, None))
}

/// Takes the node-seconds of `made` off what is left of a budget; the run stopped at its
/// budget limit, where one was.
fn spend(made: &[RunRecord], left: &mut Option<f64>) -> Option<BudgetStop> {
    let left = left.as_mut()?;
    let mut stop = None;
    for r in made {
        *left -= f64::from(r.nodes) * r.wall_s;
        if let Some(limit_s) = r.failure.as_deref().and_then(super::budget_limit_of) {
            stop = Some(BudgetStop {
                nodes: r.nodes,
                ran_s: r.wall_s,
                limit_s,
                started: true,
            });
        }
    }
    stop
}

/// A sweep stopped by an error (a full disk, a frequency that cannot be set): what it
/// measured before is saved (each run appended to the journal as it ends), which the error
/// says, so that nothing measured is taken for lost.
fn stopped(o: &Options, e: anyhow::Error) -> anyhow::Error {
    let mut journal = o.output.clone().into_os_string();
    journal.push(".journal");
    e.context(format!(
        "{}: the sweep stopped; the runs finished before are saved in it and in {}, and \
         --resume goes on from them once the cause is mended",
        o.output.display(),
        std::path::Path::new(&journal).display()
    ))
}

/// Before the first run: the size check, the profile written with every run so far (a resumed
/// journal's folded in), the journal opened, the stop signals caught.
fn start(o: &Options, s: &Setup, todo: &[Todo]) -> anyhow::Result<Progress> {
    check_size(o, &s.rec, todo)?;
    let bytes = save(o, &s.rec)?;
    let mut journal = Journal::open(&o.output, s.rec.id.clone())?;
    journal.clear()?;
    install_interrupt_handler();
    INTERRUPTED.store(false, Ordering::SeqCst);
    crate::measure::launch::STOP_SIGNAL.store(0, Ordering::SeqCst);
    Ok(Progress {
        failed: Vec::new(),
        made: 0,
        rate: Rate::new(),
        last_freq: None,
        warmed: BTreeSet::new(),
        bar: progress_bar(o, todo.len()),
        journal,
        bytes,
        compacted: s.rec.runs.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::eta;

    #[test]
    fn the_time_left_follows_the_rate_of_the_last_runs() {
        assert_eq!(eta(&[], 5), "eta unknown");
        assert_eq!(eta(&[1.0, 2.0], 0), "last run");
        // One run a second: 10 left take 10 s.
        assert_eq!(eta(&[1.0, 2.0, 3.0], 10), "eta 10.00 s");
        // The same sweep, slowed to a run every 10 s: the estimate follows.
        assert_eq!(eta(&[30.0, 40.0, 50.0], 10), "eta 1m40.0s");
    }
}
