//! Imported counters: the CSV that `perf stat -x, -e <events> -- cmd` writes (to stderr, or to
//! a file with `-o`), captured on a cluster node. Lines are
//! `value,unit,event,run-time,percent[,metric-value,metric-unit]`; `<not supported>` and
//! `<not counted>` stand where a value would be; `#` lines are comments.
//!
//! Recipe (Intel Skylake to Ice Lake; other CPUs: the events `jouleplan profile` lists):
//! `perf stat -x, -o run.csv -e cycles,instructions,cycle_activity.stalls_total,cycle_activity.stalls_mem_any,task-clock,duration_time -- ./app`

use super::Readings;
use super::cpu::{StallEvents, TABLES};
use crate::error::{InputError, InputResult};
use std::path::Path;

/// One counter line.
#[derive(Debug, Clone, PartialEq)]
pub struct PerfStatLine {
    /// Line number (1-based).
    pub line: usize,
    /// Event as perf printed it (`cycles`, `cpu/event=0xae,umask=0x6/`, `r04a3`).
    pub event: String,
    /// The count, or `None` for `<not supported>` / `<not counted>`.
    pub value: Option<f64>,
    /// The unit column (`msec`, `ns`, empty).
    pub unit: String,
    /// Share of the time the counter ran (multiplexing), percent.
    pub running_pct: Option<f64>,
}

/// Parses `perf stat -x,` output.
pub fn parse(file: &Path, text: &str) -> InputResult<Vec<PerfStatLine>> {
    let bad = |line: usize, expected: &str, got: &str| InputError::Key {
        file: file.to_path_buf(),
        key: format!("line {line}"),
        expected: expected.into(),
        got: format!("{got:?}"),
    };
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = l.split(',').collect();
        if cols.len() < 3 {
            return Err(bad(
                line,
                "a `perf stat -x,` line: value,unit,event,run-time,percent,...",
                raw,
            ));
        }
        // Events with commas inside (cpu/event=0xae,umask=0x6/) span several columns: the event
        // runs from column 2 to the column closing the `/.../`.
        let mut end = 2;
        if cols[2].contains('/') && !cols[2].ends_with('/') {
            while end + 1 < cols.len() && !cols[end].ends_with('/') {
                end += 1;
            }
        }
        let event = cols[2..=end].join(",");
        if event.is_empty() {
            continue; // a derived-metric line
        }
        shape(line, l, &cols, &event).map_err(|expected| bad(line, &expected, raw))?;
        let value = match cols[0] {
            "<not supported>" | "<not counted>" => None,
            v => Some(
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0 && *x <= 1e21)
                    .ok_or_else(|| {
                        bad(
                            line,
                            "a count from 0 to 1e21, <not supported> or <not counted> in the \
                             first column",
                            cols[0],
                        )
                    })?,
            ),
        };
        let running_pct = cols.get(end + 2).and_then(|p| p.parse().ok());
        out.push(PerfStatLine {
            line,
            event,
            value,
            unit: cols[1].to_string(),
            running_pct,
        });
    }
    if out.is_empty() {
        return Err(bad(
            1,
            "at least one counter line of `perf stat -x,`",
            "nothing",
        ));
    }
    each_event_once(file, text, &out)?;
    Ok(out)
}

/// Seconds per unit of a time count's unit column (`None` for no known time unit).
fn time_unit(unit: &str) -> Option<f64> {
    Some(match unit {
        "ns" => 1e-9,
        "us" => 1e-6,
        "msec" | "ms" => 1e-3,
        "s" | "sec" => 1.0,
        _ => return None,
    })
}

/// What a line of `perf stat -x,` must look like beyond its column count, else what was
/// expected: not perf stat's human-readable output (padded with runs of spaces, `#` before its
/// derived metrics; split at its thousands separators it reads `7,404,605,182  cycles` as a
/// count of 7), a unit that is no number (perf in a locale with decimal commas writes
/// `3462,54,msec,task-clock,...`, whose count would be read as 3462 of an event `msec`), and a
/// time unit where the event is a time.
fn shape(line: usize, text: &str, cols: &[&str], event: &str) -> Result<(), String> {
    let unit = cols[1];
    if text.contains("  ") || text.contains('#') || event.contains(char::is_whitespace) {
        return Err(format!(
            "a `perf stat -x,` line (value,unit,event,...): line {line} looks like perf stat's \
             human-readable output; capture with `perf stat -x, -o FILE`"
        ));
    }
    if !unit.is_empty() && unit.bytes().all(|b| b.is_ascii_digit()) {
        return Err(
            "a unit in the second column, not digits: perf wrote its numbers with decimal \
             commas (a locale such as de_DE), which `-x,` cannot tell from its separators; \
             capture again with `LC_ALL=C perf stat -x, ...`"
                .into(),
        );
    }
    let timed = matches!(
        event.split(':').next().unwrap_or(event),
        "task-clock" | "duration_time"
    );
    if timed && time_unit(unit).is_none() {
        return Err(format!(
            "a time unit for {event} (ns, us, msec or s), as perf writes it"
        ));
    }
    Ok(())
}

/// Refuses two counts of one event (`perf stat --append` of several runs, files pasted
/// together): which is this run's cannot be told, and the last would win silently.
fn each_event_once(file: &Path, text: &str, lines: &[PerfStatLine]) -> InputResult<()> {
    let mut seen = std::collections::HashMap::new();
    for l in lines {
        if let Some(first) = seen.insert(l.event.as_str(), l) {
            return Err(InputError::Key {
                file: file.to_path_buf(),
                key: format!("line {}", l.line),
                expected: format!(
                    "each event once (line {} counts `{}` already): one run's capture a file; \
                     give each run's `perf stat -o` file on its own",
                    first.line, l.event
                ),
                got: format!("{:?}", text.lines().nth(l.line - 1).unwrap_or("")),
            });
        }
    }
    Ok(())
}

/// The raw config word an event spelling stands for: `rNNNN`, or `cpu/event=..,umask=..,cmask=../`.
pub fn raw_config(event: &str) -> Option<u64> {
    let e = event.split(':').next().unwrap_or(event);
    if let Some(hex) = e.strip_prefix('r') {
        return u64::from_str_radix(hex, 16).ok();
    }
    let inner = e.strip_prefix("cpu/")?.strip_suffix('/')?;
    let (mut ev, mut umask, mut cmask) = (None, 0u64, 0u64);
    for term in inner.split(',') {
        let (k, v) = term.split_once('=')?;
        let v = u64::from_str_radix(v.trim_start_matches("0x"), 16).ok()?;
        match k {
            "event" => ev = Some(v),
            "umask" => umask = v,
            "cmask" => cmask = v,
            "period" => {}
            _ => return None,
        }
    }
    Some(super::cpu::x86_raw(ev?, umask, cmask))
}

fn base_name(event: &str) -> String {
    event
        .split(':')
        .next()
        .unwrap_or(event)
        .trim_start_matches("cpu/")
        .trim_end_matches('/')
        .to_ascii_lowercase()
}

fn is_event(line: &PerfStatLine, ev: &super::cpu::RawEvent) -> bool {
    raw_config(&line.event) == Some(ev.config) || base_name(&line.event) == ev.name
}

/// What a capture yields: readings, its wall time when `duration_time` was counted, the stall
/// table recognised, and what is missing.
pub struct Imported {
    /// The counters.
    pub readings: Readings,
    /// `duration_time`, seconds.
    pub wall_s: Option<f64>,
    /// The stall events found.
    pub stall: Option<StallEvents>,
}

/// Maps a capture's lines to readings; `stall` names the stall events when they are not one of
/// the known tables.
pub fn readings(lines: &[PerfStatLine], stall: Option<StallEvents>) -> Imported {
    let mut r = Readings::default();
    let mut wall_s = None;
    for l in lines {
        let Some(v) = l.value else {
            r.warnings
                .push(format!("line {}: {} was not counted", l.line, l.event));
            continue;
        };
        match base_name(&l.event).as_str() {
            "cycles" | "cpu-cycles" => r.cycles = Some(v),
            "instructions" => r.instructions = Some(v),
            "task-clock" => {
                r.cpu_time_s = Some(v * time_unit(&l.unit).unwrap_or(1e-3));
                r.cpu_time_source = Some("perf stat task-clock".into());
            }
            "duration_time" => wall_s = Some(v * time_unit(&l.unit).unwrap_or(1e-9)),
            _ => {}
        }
        if l.running_pct.is_some_and(|p| p < 100.0) {
            r.warnings.push(format!(
                "line {}: {} ran {}% of the time (perf scaled it)",
                l.line,
                l.event,
                l.running_pct.unwrap_or(0.0)
            ));
        }
    }
    let tables: Vec<StallEvents> = match stall {
        Some(s) => vec![s],
        None => TABLES.to_vec(),
    };
    let mut found = None;
    for t in tables {
        let total = lines.iter().find(|l| is_event(l, &t.total));
        let mem = lines.iter().find(|l| is_event(l, &t.mem));
        if let (Some(a), Some(b)) = (total, mem)
            && let (Some(x), Some(y)) = (a.value, b.value)
        {
            r.stall_cycles = Some(x);
            r.mem_stall_cycles = Some(y);
            found = Some(t);
            break;
        }
    }
    Imported {
        readings: r,
        wall_s,
        stall: found,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_spellings_map_to_raw_configs() {
        assert_eq!(raw_config("cpu/event=0xae,umask=0x6/"), Some(0x06ae));
        assert_eq!(raw_config("r14a3"), Some(0x14a3));
        assert_eq!(
            raw_config("cpu/event=0xa3,cmask=0x14,period=0x1e8483,umask=0x14/"),
            Some(0x1400_14a3)
        );
        assert_eq!(raw_config("cycles"), None);
    }
}
