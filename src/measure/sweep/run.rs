//! The sweep itself: every run still to make, in order, saved as it finishes.

use super::file::*;
use super::one_run::*;
use super::options::*;
use super::setup::*;
use super::summary::*;
use crate::measure::cpufreq::Control;
use crate::measure::record::{self};
use std::collections::BTreeSet;
use std::sync::atomic::Ordering;

/// `1m20s`-style time left, from the mean wall time of the runs made so far.
pub(super) fn eta(done_s: f64, made: usize, left: usize) -> String {
    if left == 0 {
        return "last run".into();
    }
    if made == 0 {
        return "eta unknown".into();
    }
    let secs = done_s / made as f64 * left as f64;
    format!(
        "eta {}",
        crate::units::fmt_duration(crate::units::Seconds(secs))
    )
}

/// The state of a sweep in progress.
pub(super) struct Progress {
    pub(super) failed: Vec<String>,
    pub(super) made: usize,
    pub(super) done_s: f64,
    pub(super) last_freq: Option<f64>,
    pub(super) warmed: BTreeSet<(u32, record::PointKey)>,
    pub(super) bar: Option<indicatif::ProgressBar>,
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

/// Makes run `i` of `total` (`t`): frequency, warm-up, the measured run, the saved record.
pub(super) fn run_one(
    o: &Options,
    s: &mut Setup,
    (i, total): (usize, usize),
    t: Todo,
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
    if p.warmed.insert(pt.key()) {
        warm_up(o, s, t, log)?;
    }
    let khz = (f / 1e3).round() as u64;
    let runs = crate::atomic_write::runs_dir(&o.output);
    let run_dir = runs.join(format!(
        "{}n-{}c-{khz}khz-{}g-r{k}",
        pt.nodes, pt.cores, pt.gpus
    ));
    for d in [&runs, &run_dir] {
        crate::atomic_write::create_dir_safely(d)
            .map_err(|e| anyhow::anyhow!("{}: {e}", d.display()))?;
    }
    if o.verbose {
        let spec = spec_for(o, s, t);
        let env: Vec<String> = spec.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        log(&format!(
            "run: {} (env {})",
            spec.argv.join(" "),
            env.join(" ")
        ));
    }
    let r = measure_once(o, s, t, &run_dir)?;
    let _ = std::fs::remove_dir(&run_dir); // kept when a profiler wrote into it
    p.made += 1;
    p.done_s += r.wall_s;
    let line = format!(
        "[{}/{total}] {}, run {k}/{}: {:.3} s {}, {}",
        i + 1,
        pt.describe(),
        o.repeat,
        r.wall_s,
        r.failure.as_deref().unwrap_or("ok"),
        eta(p.done_s, p.made, total - i - 1)
    );
    if !r.ok && !super::options::interrupted() {
        p.failed.push(format!("{line}\n{}", r.stderr_tail));
    }
    let wall = r.wall_s;
    s.rec.runs.push(r);
    save(o, &s.rec)?;
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

/// Removes the sweep's working folder when nothing a profiler wrote is left in it.
pub(super) fn clean_up(o: &Options, s: &Setup) {
    for f in s.hostfiles.values() {
        let _ = std::fs::remove_file(f);
        if let Some(d) = f.parent() {
            let _ = std::fs::remove_dir(d);
        }
    }
    let _ = std::fs::remove_dir(crate::atomic_write::runs_dir(&o.output));
}

/// Runs the sweep. `log` receives one line per event (discovery, each run) when no bar is drawn.
pub fn run(o: &Options, log: &mut dyn FnMut(&str)) -> anyhow::Result<Outcome> {
    let mut s = setup(o, log)?;
    let todo = todo_list(o, &s);
    let skipped = s.planned.len() * o.repeat as usize - todo.len();
    if skipped > 0 {
        log(&format!(
            "resuming: {skipped} runs already in {}",
            o.output.display()
        ));
    }
    save(o, &s.rec)?;
    install_interrupt_handler();
    INTERRUPTED.store(false, Ordering::SeqCst);
    crate::measure::launch::STOP_SIGNAL.store(0, Ordering::SeqCst);
    let mut p = Progress {
        failed: Vec::new(),
        made: 0,
        done_s: 0.0,
        last_freq: None,
        warmed: BTreeSet::new(),
        bar: progress_bar(o, todo.len()),
    };
    for (i, &t) in todo.iter().enumerate() {
        if super::options::interrupted() {
            break;
        }
        run_one(o, &mut s, (i, todo.len()), t, &mut p, log)?;
    }
    if let Some(b) = p.bar.take() {
        b.finish_and_clear();
    }
    clean_up(o, &s);
    let interrupted = super::options::interrupted();
    let have: BTreeSet<((u32, record::PointKey), u32)> = s
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
    })
}
