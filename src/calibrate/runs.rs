//! Measured runs as `fit`, `validate` and the campaign take them, read by one reader
//! ([`measured::read_rows`], the `csv` crate: quoting, blank lines, a byte-order mark, CRLF and
//! line numbers the same everywhere): one measurement per configuration ([`Measured`], its
//! repeats averaged), and every run to read again ([`Replay`]), streamed from the file or from
//! the runs a campaign keeps in memory.

use super::repeats::{ConfigKey, Repeats, Replay, Run};
use super::reproduce::EnergyScope;
use crate::artefact::measured::{self, MeasuredLine, MeasuredRow};
use crate::error::{InputError, InputResult};
use crate::model::Config;
use crate::units::Hertz;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One measured configuration to predict.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// The configuration.
    pub config: Config,
    /// Measured wall time, s.
    pub time_s: f64,
    /// Measured energy, J, and what it covers.
    pub energy: Option<(f64, EnergyScope)>,
    /// Total MPI ranks, when the CSV gives them (an uneven layout: 126 ranks on 2 nodes of 72
    /// cores); `None`: `nodes x cores`.
    pub ranks: Option<u32>,
    /// Where it came from (`file:line` of its first run, or `profile point`).
    pub source: String,
    /// Its runs, where `time_s` and `energy` are their means: the error statistics count
    /// every run.
    pub runs: Repeats,
}

/// `line N` of a row's source (`file:N`).
pub fn line_of(source: &str) -> String {
    source
        .rsplit(':')
        .next()
        .map_or(String::new(), |l| format!("line {l}"))
}

impl Measured {
    /// Its configuration's key.
    pub fn key(&self) -> ConfigKey {
        ConfigKey::of(self.config, self.ranks, self.energy.map(|e| e.1))
    }

    /// Where it came from, and of how many runs it is the mean where more than one.
    pub fn described_source(&self) -> String {
        match self.runs.count {
            0 | 1 => self.source.clone(),
            n => format!("{} (mean of {n} runs)", self.source),
        }
    }

    /// Its time and energy set to the means of its runs (energy where every run has it).
    pub(crate) fn averaged(mut self) -> Measured {
        self.time_s = self.runs.time_mean();
        let e = self.runs.energy_mean();
        self.energy = self.energy.and_then(|(_, s)| e.map(|e| (e, s)));
        self
    }
}

/// Measurements merged by a key coarser than their own (`by`), in its order: each keeps the
/// configuration and source of the first, its runs are all of theirs, its time and energy
/// their means. The one way repeats are averaged.
pub fn merge_by<K: Ord>(rows: &[Measured], by: impl Fn(&ConfigKey) -> K) -> Vec<Measured> {
    use std::collections::btree_map::Entry;
    let mut groups: std::collections::BTreeMap<K, Measured> = Default::default();
    for r in rows {
        match groups.entry(by(&r.key())) {
            Entry::Vacant(v) => {
                v.insert(r.clone());
            }
            Entry::Occupied(mut o) => o.get_mut().runs.merge(&r.runs),
        }
    }
    groups.into_values().map(Measured::averaged).collect()
}

/// Measured runs: the file that names them, one measurement per configuration, and every run
/// again where a fit or a statistic needs each.
#[derive(Debug, Clone)]
pub struct Runs {
    file: PathBuf,
    rows: Vec<Measured>,
    /// The runs themselves where they are kept in memory; `None`: read again from `file`.
    kept: Option<Vec<MeasuredLine>>,
}

impl Runs {
    /// Reads a measured CSV file as a stream: memory grows with its configurations, never with
    /// its runs; what needs each run reads the file again.
    pub fn read(path: &Path) -> InputResult<Runs> {
        Ok(Runs {
            file: path.to_path_buf(),
            rows: read_csv_file(path)?,
            kept: None,
        })
    }

    /// Runs held in memory (a campaign's), named in errors and sources as lines of `file`.
    pub fn kept(file: &Path, lines: Vec<MeasuredLine>) -> InputResult<Runs> {
        let mut groups = Groups::default();
        for l in &lines {
            groups.add(file, measurement(file, &l.row, l.line)?, l.line);
        }
        Ok(Runs {
            file: file.to_path_buf(),
            rows: groups.done(),
            kept: Some(lines),
        })
    }

    /// The file that names the runs.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// One measurement per configuration, in the order each first appears.
    pub fn rows(&self) -> &[Measured] {
        &self.rows
    }
}

impl Replay for Runs {
    fn replay(&self, f: &mut dyn FnMut(Run) -> InputResult<()>) -> InputResult<()> {
        match &self.kept {
            None => CsvFile(&self.file).replay(f),
            Some(lines) => lines
                .iter()
                .try_for_each(|l| f(measurement(&self.file, &l.row, l.line)?.run())),
        }
    }
}

/// Measurements grouped by configuration in the order each first appears, repeats summed.
#[derive(Default)]
struct Groups {
    groups: Vec<Measured>,
    index: HashMap<ConfigKey, usize>,
}

impl Groups {
    fn add(&mut self, path: &Path, run: RowRun, line: u64) {
        let (key, config, energy_j) = (run.key(), run.config, run.energy.map(|e| e.0));
        match self.index.get(&key) {
            Some(&i) => self.groups[i].runs.add(run.time_s, energy_j),
            None => {
                self.index.insert(key, self.groups.len());
                self.groups.push(Measured {
                    config,
                    time_s: run.time_s,
                    energy: run.energy,
                    ranks: run.ranks,
                    source: format!("{}:{line}", path.display()),
                    runs: Repeats::one(run.time_s, energy_j),
                });
            }
        }
    }

    fn done(self) -> Vec<Measured> {
        self.groups.into_iter().map(Measured::averaged).collect()
    }
}

/// Reads measured runs: a CSV with a header naming `nodes, cores, freq_hz, gpus, time_s` and
/// optionally `energy_j` (the whole node) or `gpu_energy_j` (GPUs only), one measurement per
/// configuration ([`ConfigKey`]), as [`read_csv_file`] gives them.
pub fn read_csv(path: &Path, text: &str) -> InputResult<Vec<Measured>> {
    aggregate(path, std::io::Cursor::new(text))
}

/// Reads a measured CSV file as a stream and keeps one row per configuration and energy scope,
/// its time and energy the means of its repeats: memory grows with the configurations, never
/// with the runs or the text (each configuration's [`Repeats`]). The source names the first
/// line; what needs each run reads the file again ([`CsvFile`]).
pub fn read_csv_file(path: &Path) -> InputResult<Vec<Measured>> {
    let (file, _) = crate::input::open_regular(path)?;
    aggregate(path, std::io::BufReader::new(file))
}

/// One measurement per configuration, in the order each first appears.
fn aggregate(path: &Path, reader: impl std::io::Read) -> InputResult<Vec<Measured>> {
    let mut groups = Groups::default();
    read_runs(path, reader, |run, line| {
        groups.add(path, run, line);
        Ok(())
    })?;
    if groups.groups.is_empty() {
        return Err(InputError::Mismatch(format!(
            "{} holds no runs (a header and no rows): give the runs to fit/validate",
            path.display()
        )));
    }
    Ok(groups.done())
}

/// The runs of a measured CSV file, read again.
pub struct CsvFile<'a>(pub &'a Path);

impl Replay for CsvFile<'_> {
    fn replay(&self, f: &mut dyn FnMut(Run) -> InputResult<()>) -> InputResult<()> {
        let (file, _) = crate::input::open_regular(self.0)?;
        read_runs(self.0, std::io::BufReader::new(file), |run, _| f(run.run()))
    }
}

/// The runs of a measured CSV's text, read again (`path` names it in errors).
pub struct CsvText<'a>(pub &'a Path, pub &'a str);

impl Replay for CsvText<'_> {
    fn replay(&self, f: &mut dyn FnMut(Run) -> InputResult<()>) -> InputResult<()> {
        read_runs(self.0, std::io::Cursor::new(self.1), |run, _| f(run.run()))
    }
}

/// One checked row of a measured CSV.
struct RowRun {
    config: Config,
    ranks: Option<u32>,
    time_s: f64,
    energy: Option<(f64, EnergyScope)>,
}

impl RowRun {
    fn key(&self) -> ConfigKey {
        ConfigKey::of(self.config, self.ranks, self.energy.map(|e| e.1))
    }

    fn run(&self) -> Run {
        Run {
            key: self.key(),
            time_s: self.time_s,
            energy_j: self.energy.map(|e| e.0),
        }
    }
}

/// Reads the rows of a measured CSV as runs, with their line numbers.
fn read_runs(
    path: &Path,
    reader: impl std::io::Read,
    mut f: impl FnMut(RowRun, u64) -> InputResult<()>,
) -> InputResult<()> {
    measured::read_rows(path, reader, |row, line| {
        f(measurement(path, &row, line)?, line)
    })
}

/// A checked row as a run: its energy in the scope its `energy_scope` cell names, else its
/// column's (`energy_j`: the node; `gpu_energy_j`: the GPUs).
fn measurement(path: &Path, row: &MeasuredRow, line: u64) -> InputResult<RowRun> {
    let column_scope = match row.energy() {
        Some((_, "gpu_energy_j")) => EnergyScope::Gpu,
        _ => EnergyScope::Node,
    };
    let scope = match row.energy_scope.as_deref() {
        None | Some("") => column_scope,
        Some(name) => EnergyScope::from_name(name).ok_or_else(|| {
            measured::cell_error(
                path,
                line,
                "energy_scope",
                "node (the whole node), cpu (RAPL packages and DRAM of the sockets hosting ranks) \
                 or gpu",
                name,
            )
        })?,
    };
    Ok(RowRun {
        config: Config {
            nodes: row.nodes,
            cores: row.cores,
            freq: Hertz(row.freq_hz),
            gpus: row.gpus,
            gpu_clock_mhz: row.gpu_clock_mhz,
        },
        ranks: row.ranks,
        time_s: row.time_s,
        energy: row.energy().map(|(e, _)| (e, scope)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::repeats::Replay;

    #[test]
    fn a_csv_is_held_as_one_row_per_configuration_whatever_its_runs() {
        let mut text = String::from("nodes,cores,freq_hz,gpus,time_s,energy_j,ranks\n");
        for i in 0..3000 {
            let (n, t) = [(1, 10.0), (2, 6.0), (4, 4.0)][i % 3];
            let noise = 1.0 + 0.01 * ((i / 3) % 5) as f64;
            text += &format!("{n},8,2e9,0,{},{},{}\n", t * noise, 900.0 * noise, 8 * n);
        }
        let rows = read_csv(Path::new("m.csv"), &text).unwrap();
        assert_eq!(rows.len(), 3);
        assert!(rows.iter().all(|r| r.runs.count == 1000));
        // The mean of 200 runs at each of 1.00, 1.01, ... 1.04 times the time.
        assert!((rows[0].time_s - 10.2).abs() < 1e-9, "{:?}", rows[0]);
        assert_eq!(rows[1].source, "m.csv:3");
        assert_eq!(rows[1].described_source(), "m.csv:3 (mean of 1000 runs)");
        // Every run is there to be read again, in order.
        let mut n = 0;
        CsvText(Path::new("m.csv"), &text)
            .replay(&mut |r| {
                assert_eq!(r.key, rows[n % 3].key());
                n += 1;
                Ok(())
            })
            .unwrap();
        assert_eq!(n, 3000);
    }
}
