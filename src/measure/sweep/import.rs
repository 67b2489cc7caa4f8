//! A point imported from a `perf stat -x,` capture made on a cluster node.

use super::file::*;
use super::host::*;
use super::options::*;
use crate::measure::perfstat;
use crate::measure::record::{self, Missing, RunRecord, SweepRecord};
use std::collections::BTreeMap;
use std::path::Path;

/// Adds one point from a `perf stat -x,` capture made on a cluster node to the profile at
/// `o.output` (created, or extended with `--resume`). `wall_s` is needed when the capture has
/// no `duration_time`.
pub fn import_perf_stat(
    o: &Options,
    capture: &Path,
    wall_s: Option<f64>,
) -> anyhow::Result<RunRecord> {
    let text = crate::input::read_table(capture)?;
    let lines = perfstat::parse(capture, &text)?;
    let imp = perfstat::readings(&lines, o.stall_override);
    let wall = wall_time(capture, imp.wall_s, wall_s)?;
    let (&[cores], Some([f])) = (o.cores.as_slice(), o.freqs.as_deref()) else {
        return Err(crate::error::InputError::Mismatch(
            "--perf-stat: name the one point the capture was taken at with --cores C --freqs GHZ"
                .into(),
        )
        .into());
    };
    let mut rec = load_existing(o, &mut |_| {})?.unwrap_or_else(|| imported_record(o));
    let mut readings = imp.readings;
    if readings.stall_cycles.is_none() {
        rec.unsupported.retain(|m| m.backend != "perf-stat");
        rec.unsupported.push(Missing {
            backend: "perf-stat".into(),
            reason: crate::measure::Unsupported::new(
                "stall cycles",
                format!("{} has no known total/memory stall event pair", capture.display()),
                "capture the events `jouleplan profile` lists for that CPU, or name them with --stall-events",
            ),
        });
    }
    if let Some(s) = imp.stall {
        rec.backends.insert(
            "perf-stat.stall events".into(),
            format!("{} ({} / {})", s.table, s.total.name, s.mem.name),
        );
    }
    readings
        .warnings
        .push(format!("imported from {}", capture.display()));
    let repeat = rec
        .runs
        .iter()
        .filter(|r| r.key() == record::key(cores, *f, 0))
        .count() as u32
        + 1;
    let r = RunRecord {
        nodes: 1,
        cores,
        freq_hz: *f,
        gpus: 0,
        repeat,
        ok: true,
        failure: None,
        wall_s: wall,
        readings,
        stderr_tail: String::new(),
        finished_unix: now_unix(),
        layout: None,
        hosts: Vec::new(),
        host_list: None,
        gpu_clock_mhz: None,
    };
    rec.runs.push(r.clone());
    rec.planned.push(r.planned());
    rec.backends.insert(
        "perf-stat".into(),
        "counters imported from perf stat -x, captures".into(),
    );
    save(o, &rec)?;
    Ok(r)
}

/// The run's wall time: the capture's `duration_time` (which must be a run's time: one in a
/// unit other than the one written, or a count of another event, must not become a wall time
/// of years), else `--wall-time`.
fn wall_time(
    capture: &Path,
    captured: Option<f64>,
    given: Option<f64>,
) -> Result<f64, crate::error::InputError> {
    if let Some(w) = captured {
        return crate::limits::Reading::RunTime
            .check(w)
            .map_err(|expected| crate::error::InputError::Key {
                file: capture.to_path_buf(),
                key: "duration_time".into(),
                expected,
                got: format!("{} s", crate::limits::shown(w)),
            });
    }
    given.ok_or_else(|| {
        crate::error::InputError::Mismatch(format!(
            "{}: no duration_time line; give the run's wall time with --wall-time",
            capture.display()
        ))
    })
}

/// The record of a profile made of imported captures alone.
fn imported_record(o: &Options) -> SweepRecord {
    SweepRecord {
        id: None,
        command: o.command.clone(),
        ranks: o.ranks,
        launcher: Vec::new(),
        launcher_nodes: Vec::new(),
        repeat: 1,
        host: BTreeMap::from([(
            "imported".to_string(),
            "perf stat -x, captures from another machine".to_string(),
        )]),
        backends: BTreeMap::new(),
        unsupported: Vec::new(),
        frequency: "as captured".into(),
        planned: Vec::new(),
        runs: Vec::new(),
        complete: true,
        talp: Vec::new(),
        host_lists: Vec::new(),
    }
}
