//! `validate --sacct FILE`: past Slurm jobs as measured runs. Reads `sacct -P` output (a header
//! line naming the fields, `|` between them), for example
//! `sacct -P -j JOBS -o JobID,State,NNodes,NCPUS,NTasks,Elapsed,ConsumedEnergyRaw,ReqCPUFreq`:
//! each completed job step with its node count, CPUs, elapsed time and energy becomes one
//! measured row (steps `batch` and `extern` are the job script and its extern step, not the
//! program, and are left out; a job without steps counts as one).

use super::repeats::{Replay, Run};
use super::reproduce::EnergyScope;
use super::runs::Measured;
use crate::error::{InputError, InputResult};
use crate::model::Config;
use crate::model::machine::Machine;
use crate::units::Hertz;
use std::path::Path;

/// The fields a row must have, as `sacct` names them.
const NEEDED: [&str; 4] = ["jobid", "nnodes", "ncpus", "elapsed"];

/// The header's field names, lowercased, with the ones this reader needs checked.
fn columns(
    head: &str,
    bad: &dyn Fn(usize, &str, &str, &str) -> InputError,
) -> InputResult<Vec<String>> {
    let cols: Vec<String> = head
        .split('|')
        .map(|c| c.trim().to_ascii_lowercase())
        .collect();
    if let Some(missing) = NEEDED.iter().find(|n| !cols.iter().any(|c| c == *n)) {
        return Err(bad(
            1,
            missing,
            "sacct -P fields JobID, NNodes, NCPUS, Elapsed (and ConsumedEnergyRaw, NTasks, \
             State, ReqCPUFreq where known)",
            head,
        ));
    }
    Ok(cols)
}

/// Refuses a row with more or fewer fields than the header before any of its cells is read:
/// every cell after a stray `|` would be read as the next column's.
fn same_width(path: &Path, line: usize, header: usize, row: usize) -> InputResult<()> {
    if row == header {
        return Ok(());
    }
    Err(InputError::Syntax {
        file: path.to_path_buf(),
        format: "sacct -P output",
        detail: format!(
            "line {line} has {row} fields, the header {header}: every row needs the header's \
             fields, `|` between them"
        ),
    })
}

/// The longest line read from a sacct file: a row of the fields this reader takes is well under
/// a kilobyte, and a file without line breaks must not grow a buffer without bound.
const MAX_LINE: usize = 1 << 20;

/// Where sacct's lines come from: text in memory, or a file read as a stream (twice: once for
/// the header and whether rows name steps, once for the rows), never held whole.
#[derive(Clone, Copy)]
enum Lines<'a> {
    Text(&'a str),
    File,
}

impl Lines<'_> {
    /// Calls `f` with each line of `path` (or the text), numbered from 1, without its break
    /// (or a byte-order mark before the first).
    fn each(
        self,
        path: &Path,
        f: &mut dyn FnMut(usize, &str) -> InputResult<()>,
    ) -> InputResult<()> {
        let file = match self {
            Lines::Text(t) => {
                let t = crate::input::without_bom(t);
                return t.lines().enumerate().try_for_each(|(i, l)| f(i + 1, l));
            }
            Lines::File => crate::input::open_regular(path)?.0,
        };
        use std::io::{BufRead, Read};
        let err = |reason: std::io::Error| InputError::Read {
            file: path.to_path_buf(),
            reason,
        };
        let invalid = |why: String| err(std::io::Error::new(std::io::ErrorKind::InvalidData, why));
        let mut rd = std::io::BufReader::new(file);
        let mut buf = Vec::new();
        for n in 1.. {
            buf.clear();
            let k = (&mut rd)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut buf)
                .map_err(err)?;
            if k == 0 {
                break;
            }
            if buf.len() > MAX_LINE {
                return Err(invalid(format!("line {n} is longer than {MAX_LINE} bytes")));
            }
            let text = std::str::from_utf8(&buf)
                .map_err(|_| invalid(format!("line {n} is not UTF-8 text")))?;
            let text = if n == 1 {
                crate::input::without_bom(text)
            } else {
                text
            };
            let text = text.strip_suffix('\n').unwrap_or(text);
            f(n, text.strip_suffix('\r').unwrap_or(text))?;
        }
        Ok(())
    }
}

/// A row's cell of column `name` (empty where the header has no such column).
fn get<'t>(cols: &[String], r: &[&'t str], name: &str) -> &'t str {
    cols.iter()
        .position(|c| c == name)
        .and_then(|i| r.get(i).copied())
        .unwrap_or("")
}

/// The first pass: the header's columns, and whether any row names a step (`JOBID.STEP`: then
/// the job's own line is no run); every row's field count checked against the header's.
fn survey(path: &Path, lines: Lines<'_>, bad: &Bad<'_>) -> InputResult<(Vec<String>, bool)> {
    let mut cols: Option<Vec<String>> = None;
    let mut steps = false;
    lines.each(path, &mut |n, l| {
        if l.trim().is_empty() {
            return Ok(());
        }
        match &cols {
            None => cols = Some(columns(l, bad)?),
            Some(c) => {
                let r: Vec<&str> = l.split('|').map(str::trim).collect();
                same_width(path, n, c.len(), r.len())?;
                steps |= get(c, &r, "jobid").contains('.');
            }
        }
        Ok(())
    })?;
    let cols = cols.ok_or_else(|| {
        bad(
            1,
            "header",
            "a header line (sacct -P without -n)",
            "nothing",
        )
    })?;
    Ok((cols, steps))
}

/// Calls `f` with each completed job step of `lines` as one run on `machine` (its only
/// frequency where a row does not say one), its energy of `scope`; returns how many.
fn each_step(
    path: &Path,
    lines: Lines<'_>,
    (machine, scope, unread): (&Machine, EnergyScope, &mut Unread),
    f: &mut dyn FnMut(Measured) -> InputResult<()>,
) -> InputResult<usize> {
    let bad = |line: usize, key: &str, expected: &str, got: &str| InputError::Key {
        file: path.to_path_buf(),
        key: format!("line {line}, field {key}"),
        expected: expected.into(),
        got: got.into(),
    };
    let (cols, has_steps) = survey(path, lines, &bad)?;
    let (mut header, mut count) = (true, 0);
    lines.each(path, &mut |line, l| {
        if l.trim().is_empty() || std::mem::take(&mut header) {
            return Ok(());
        }
        let r: Vec<&str> = l.split('|').map(str::trim).collect();
        let cell = |name: &str| get(&cols, &r, name);
        let id = cell("jobid");
        let step = id.split('.').nth(1);
        if (has_steps && step.is_none()) || matches!(step, Some("batch" | "extern")) {
            return Ok(());
        }
        let state = cell("state");
        if !state.is_empty() && !state.starts_with("COMPLETED") {
            return Ok(());
        }
        let fields = Fields {
            line,
            nodes: cell("nnodes"),
            cpus: cell("ncpus"),
            tasks: cell("ntasks"),
            elapsed: cell("elapsed"),
            energy: cell("consumedenergyraw"),
            freq: cell("reqcpufreq"),
            id,
        };
        count += 1;
        let m = row(path, &fields, machine, scope, &bad)?;
        if m.energy.is_none() && !no_energy_said(fields.energy) {
            unread.add(line, fields.energy);
        }
        f(m)
    })?;
    if count == 0 {
        return Err(bad(
            2,
            "State",
            "at least one completed job step",
            "none (steps batch and extern are left out, and steps not COMPLETED)",
        ));
    }
    Ok(count)
}

/// One measurement per configuration of `lines`' job steps, their repeats averaged, in the
/// order each first appears: memory grows with the configurations, never with the steps.
fn grouped(
    path: &Path,
    lines: Lines<'_>,
    machine: &Machine,
    scope: EnergyScope,
) -> InputResult<(Vec<Measured>, Unread)> {
    let mut groups: Vec<Measured> = Vec::new();
    let mut index = std::collections::HashMap::new();
    let mut unread = Unread::default();
    each_step(path, lines, (machine, scope, &mut unread), &mut |m| {
        match index.get(&m.key()) {
            Some(&i) => {
                let g: &mut Measured = &mut groups[i];
                g.runs.add(m.time_s, m.energy.map(|e| e.0));
            }
            None => {
                index.insert(m.key(), groups.len());
                groups.push(m);
            }
        }
        Ok(())
    })?;
    let rows = groups.into_iter().map(Measured::averaged).collect();
    Ok((rows, unread))
}

/// The job steps whose `ConsumedEnergyRaw` held a number taken as no reading (out of range, or
/// a power no node draws): how many, and the first's line and cell.
#[derive(Debug, Default)]
struct Unread {
    steps: u64,
    first: Option<(usize, String)>,
}

impl Unread {
    fn add(&mut self, line: usize, cell: &str) {
        self.steps += 1;
        self.first.get_or_insert_with(|| (line, cell.to_string()));
    }

    /// The note naming `path`'s steps whose energy was left out, where there are any.
    fn note(&self, path: &Path) -> Option<String> {
        let (line, cell) = self.first.as_ref()?;
        Some(format!(
            "{}: the ConsumedEnergyRaw of {} is no reading (line {line}: {cell}, out of range or a \
             power no node draws: a counter that wrapped or failed): their energy is left out \
             and their time scored",
            path.display(),
            crate::units::count(self.steps, "job step", "job steps")
        ))
    }
}

/// Whether an energy cell says Slurm gathered nothing: empty, 0 or a no-value marker.
fn no_energy_said(cell: &str) -> bool {
    let t = cell.trim();
    t.is_empty()
        || t.parse::<f64>().is_ok_and(|v| v == 0.0)
        || t.parse::<u64>()
            .is_ok_and(|v| crate::limits::SLURM_NO_VALUE.contains(&v))
}

/// Reads `sacct -P` text into measured rows on `machine` (its only frequency where a row does
/// not say one), their energy of `scope`: one per configuration, its steps' mean.
pub fn read(
    path: &Path,
    text: &str,
    machine: &Machine,
    scope: EnergyScope,
) -> InputResult<Vec<Measured>> {
    grouped(path, Lines::Text(text), machine, scope).map(|(rows, _)| rows)
}

/// [`read`] of the file at `path`, read as a stream: a year of a cluster's accounting takes
/// the memory of its configurations, not of its lines. [`SacctFile`] reads its steps again.
/// Also returns the note on the steps whose energy cell held no reading, where any did.
pub fn read_file(
    path: &Path,
    machine: &Machine,
    scope: EnergyScope,
) -> InputResult<(Vec<Measured>, Option<String>)> {
    let (rows, unread) = grouped(path, Lines::File, machine, scope)?;
    Ok((rows, unread.note(path)))
}

/// The job steps of a sacct file read again, each a run: what counts every run (validate's
/// error statistics) reads them here.
pub struct SacctFile<'a> {
    /// The file.
    pub path: &'a Path,
    /// The machine its steps ran on.
    pub machine: &'a Machine,
    /// What its energy covers.
    pub scope: EnergyScope,
}

impl Replay for SacctFile<'_> {
    fn replay(&self, f: &mut dyn FnMut(Run) -> InputResult<()>) -> InputResult<()> {
        let (machine, scope) = (self.machine, self.scope);
        let unread = &mut Unread::default();
        each_step(self.path, Lines::File, (machine, scope, unread), &mut |m| {
            f(Run {
                key: m.key(),
                time_s: m.time_s,
                energy_j: m.energy.map(|e| e.0),
            })
        })
        .map(|_| ())
    }
}

type Bad<'a> = dyn Fn(usize, &str, &str, &str) -> InputError + 'a;

/// The cells of one job step.
struct Fields<'a> {
    line: usize,
    id: &'a str,
    nodes: &'a str,
    cpus: &'a str,
    tasks: &'a str,
    elapsed: &'a str,
    energy: &'a str,
    freq: &'a str,
}

fn row(
    path: &Path,
    f: &Fields<'_>,
    machine: &Machine,
    scope: EnergyScope,
    bad: &Bad<'_>,
) -> InputResult<Measured> {
    use crate::limits::Whole;
    let whole = |key: &str, v: &str, range: Whole| -> InputResult<u32> {
        v.parse::<u32>()
            .ok()
            .filter(|&x| range.contains(x.into()))
            .ok_or_else(|| bad(f.line, key, &range.describe(), v))
    };
    let nodes = whole("NNodes", f.nodes, crate::limits::NODES)?;
    // At most a node's cores on each node.
    let most_cpus = crate::limits::CORES.1 * u64::from(nodes);
    let cpus = whole("NCPUS", f.cpus, Whole(1, most_cpus))?;
    let ranks = if f.tasks.is_empty() {
        None
    } else {
        Some(whole("NTasks", f.tasks, Whole(1, u32::MAX.into()))?)
    };
    let time_s = elapsed(f.elapsed)
        .ok_or_else(|| crate::limits::Reading::RunTime.expected(1.0, "s"))
        .and_then(|t| crate::limits::Reading::RunTime.check(t))
        .map_err(|range| {
            let expected = format!("[D-]HH:MM:SS or MM:SS.mmm, {range}");
            bad(f.line, "Elapsed", &expected, f.elapsed)
        })?;
    // sacct prints an empty or 0 energy, or its no-value marker, where accounting did not
    // gather it: no reading, the step's time kept.
    let energy = match crate::limits::slurm_energy(f.energy) {
        // A power no node draws (a wrapped counter, a unit slip) is no reading either.
        Ok(e) => e
            .filter(|&e| crate::limits::plausible_node_power(e, time_s, nodes))
            .map(|e| (e, scope)),
        Err(crate::limits::NotANumber) => {
            return Err(bad(
                f.line,
                "ConsumedEnergyRaw",
                "joules (a number)",
                f.energy,
            ));
        }
    };
    let freq = frequency(f.freq, machine).ok_or_else(|| {
        bad(
            f.line,
            "ReqCPUFreq",
            &freq_expected(machine),
            if f.freq.is_empty() { "nothing" } else { f.freq },
        )
    })?;
    let cores = cpus.div_ceil(nodes);
    let ranks = ranks.map(|r| r.min(nodes.saturating_mul(cores)));
    Ok(Measured {
        config: Config {
            nodes,
            cores,
            freq,
            gpus: 0,
            gpu_clock_mhz: None,
        },
        time_s,
        energy,
        ranks,
        source: format!("{}:{} (step {})", path.display(), f.line, f.id),
        runs: crate::calibrate::repeats::Repeats::one(time_s, energy.map(|e| e.0)),
    })
}

/// Seconds of a Slurm elapsed time: `[D-]HH:MM:SS`, `MM:SS` or `MM:SS.mmm`.
fn elapsed(s: &str) -> Option<f64> {
    let (days, rest) = match s.split_once('-') {
        Some((d, r)) => (Some(d.parse::<u32>().ok()?), r),
        None => (None, s),
    };
    // Whole days, hours and minutes; a clock's minutes and seconds below 60, its hours below
    // 24 after days (99:99:99 is no time sacct prints).
    let whole = |p: &str, below: u32| p.parse::<u32>().ok().filter(|&v| v < below);
    let secs = |p: &str| {
        p.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && (0.0..60.0).contains(v))
    };
    let clock = match rest.split(':').collect::<Vec<_>>()[..] {
        [h, m, sec] => {
            let h = whole(h, if days.is_some() { 24 } else { u32::MAX })?;
            f64::from(h) * 3600.0 + f64::from(whole(m, 60)?) * 60.0 + secs(sec)?
        }
        [m, sec] if days.is_none() => f64::from(whole(m, 60)?) * 60.0 + secs(sec)?,
        _ => return None,
    };
    Some(f64::from(days.unwrap_or(0)) * 86400.0 + clock)
}

/// A requested frequency: kHz as a number, or with a G/M/K suffix; unknown: the machine's
/// only frequency. `None` when it is not one of the machine's.
/// What `ReqCPUFreq` should hold on `machine`.
fn freq_expected(machine: &Machine) -> String {
    if machine.frequencies.len() == 1 {
        format!(
            "the step's frequency (srun --cpu-freq; kHz, or 2.4G): one of machine `{}`'s, {} GHz",
            machine.name,
            machine.frequency_list_ghz()
        )
    } else {
        format!(
            "the step's frequency (srun --cpu-freq; kHz, or 2.4G): machine `{}` has several ({} \
             GHz), so an unknown one or a governor's name cannot be taken for any",
            machine.name,
            machine.frequency_list_ghz()
        )
    }
}

fn frequency(s: &str, machine: &Machine) -> Option<Hertz> {
    let hz = match s.to_ascii_uppercase().as_str() {
        // No frequency, or a governor's name: the machine's one frequency where it has one.
        "" | "UNKNOWN" | "PERFORMANCE" | "POWERSAVE" | "ONDEMAND" | "CONSERVATIVE"
        | "USERSPACE" | "SCHEDUTIL" | "LOW" | "MEDIUM" | "HIGH" | "HIGHM1" => {
            return (machine.frequencies.len() == 1).then(|| machine.frequencies[0]);
        }
        v => {
            let (num, scale) = match v.chars().last()? {
                'G' => (&v[..v.len() - 1], 1e9),
                'M' => (&v[..v.len() - 1], 1e6),
                'K' => (&v[..v.len() - 1], 1e3),
                _ => (v, 1e3),
            };
            num.parse::<f64>().ok()? * scale
        }
    };
    let i = machine.frequency_index(Hertz(hz))?;
    Some(machine.frequencies[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elapsed_times_as_sacct_prints_them() {
        assert_eq!(elapsed("00:01:05"), Some(65.0));
        assert_eq!(elapsed("1-02:00:00"), Some(93600.0));
        assert_eq!(elapsed("05:02.500"), Some(302.5));
        assert_eq!(elapsed("soon"), None);
        for wrong in [
            "99:99:99",
            "00:60:00",
            "00:00:60",
            "1-24:00:00",
            "61:00.5",
            "1.5:00:00",
        ] {
            assert_eq!(elapsed(wrong), None, "{wrong}");
        }
        assert_eq!(elapsed("100:00:00"), Some(360000.0));
    }

    #[test]
    fn job_steps_are_kept_and_the_batch_and_extern_steps_left_out() {
        // The layout of `sacct -P` with steps (the figures are illustrative).
        let m = crate::model::machine::Machine::from_toml(
            Path::new("m.toml"),
            "[machine]\nname = \"m\"\nnodes = 8\ncores_per_node = 4\nfrequencies_ghz = [2.0]\n\
             [network]\nlatency_s = 1e-6\nbandwidth_bytes_per_s = 1e9\n\
             [power]\nidle_w = 50.0\ncore_active_w = 5.0\ncore_stall_w = 2.0\nmemory_w = 1.0\n\
             network_w = 1.0\n",
        )
        .unwrap();
        let text = "JobID|State|NNodes|NCPUS|NTasks|Elapsed|ConsumedEnergyRaw|ReqCPUFreq\n\
                    7|COMPLETED|2|8|||0|Unknown\n\
                    7.batch|COMPLETED|1|4|1|00:01:00|100|Unknown\n\
                    7.extern|COMPLETED|2|8|2|00:01:00|0|Unknown\n\
                    7.0|COMPLETED|2|8|6|00:00:50|9000|2000000\n\
                    7.1|FAILED|2|8|8|00:00:05|10|2.0G\n";
        let rows = read(Path::new("s.txt"), text, &m, EnergyScope::Node).unwrap();
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!((r.config.nodes, r.config.cores, r.ranks), (2, 4, Some(6)));
        assert_eq!((r.time_s, r.energy.map(|e| e.0)), (50.0, Some(9000.0)));
    }
}
