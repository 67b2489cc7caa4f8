//! `jouleplan validate`: the model's predictions against measurements it did not see, in the
//! layout of the seed's Table 2 (mean, standard deviation and maximum of the absolute
//! percentage error, time and energy separately) plus SMAPE. The measurements are either a
//! CSV of measured runs, or the profile's own measured points held out of the fit
//! (`--use-cores`), or each interior measured core count in turn (leave-one-out).

use super::repeats::{ConfigKey, Repeats, Replay, Run};
use super::reproduce::EnergyScope;
use crate::artefact::measured::{self, MeasuredRow};
use crate::error::InputResult;
use crate::model::{Config, Model, Outcome};
use crate::units::Hertz;
use std::collections::HashMap;
use std::path::Path;

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
    fn averaged(mut self) -> Measured {
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

/// One measured configuration against its prediction.
#[derive(Debug, Clone, PartialEq)]
pub struct Compared {
    /// The measurement.
    pub measured: Measured,
    /// Predicted time, s (`None`: network-saturated).
    pub time_s: Option<f64>,
    /// Predicted energy of the measured scope, J.
    pub energy_j: Option<f64>,
    /// Why nothing was predicted there (outside what the profile covers), when so.
    pub not_predicted: Option<String>,
    /// The prediction's interval beyond the measured node counts: time, and energy of the
    /// measured scope where it has one.
    pub interval: Option<(Range, Option<Range>)>,
}

/// A `(low, high)` range.
pub type Range = (f64, f64);

/// How often the intervals held the measurements.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Coverage {
    /// Points with a time interval.
    pub time_points: usize,
    /// Of which the interval held the measured time.
    pub time_covered: usize,
    /// Points with an energy interval and measured energy.
    pub energy_points: usize,
    /// Of which the interval held the measured energy.
    pub energy_covered: usize,
}

/// The intervals' coverage of the measured (mean) values.
pub fn coverage(rows: &[Compared]) -> Coverage {
    let inside = |v: f64, (lo, hi): (f64, f64)| lo <= v && v <= hi;
    let mut c = Coverage::default();
    for r in rows {
        let Some((t, e)) = r.interval else { continue };
        c.time_points += 1;
        c.time_covered += usize::from(inside(r.measured.time_s, t));
        if let (Some(e), Some((m, _))) = (e, r.measured.energy) {
            c.energy_points += 1;
            c.energy_covered += usize::from(inside(m, e));
        }
    }
    c
}

impl Compared {
    /// Relative time error (predicted / measured - 1).
    pub fn time_error(&self) -> Option<f64> {
        self.time_s.map(|t| t / self.measured.time_s - 1.0)
    }

    /// Relative energy error.
    pub fn energy_error(&self) -> Option<f64> {
        match (self.energy_j, self.measured.energy) {
            (Some(p), Some((m, _))) => Some(p / m - 1.0),
            _ => None,
        }
    }
}

/// Mean, standard deviation and maximum of the absolute percentage error, and SMAPE.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ErrorStats {
    /// Points.
    pub n: usize,
    /// Mean absolute percentage error, %.
    pub mape: f64,
    /// Standard deviation of the absolute percentage error, %.
    pub sd: f64,
    /// Largest absolute percentage error, %.
    pub max: f64,
    /// Symmetric MAPE, %: mean of |p - m| / ((|p| + |m|) / 2).
    pub smape: f64,
}

/// Error statistics accumulated one `(predicted, measured)` pair at a time (the standard
/// deviation by Welford's update), so that every run counts without being kept.
#[derive(Debug, Clone, Copy, Default)]
pub struct StatsAcc {
    n: usize,
    mean: f64,
    m2: f64,
    max: f64,
    smape: f64,
}

impl StatsAcc {
    /// Adds a pair.
    pub fn add(&mut self, p: f64, m: f64) {
        let ape = 100.0 * (p - m).abs() / m.abs();
        self.n += 1;
        let d = ape - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (ape - self.mean);
        self.max = self.max.max(ape);
        self.smape += 200.0 * (p - m).abs() / (p.abs() + m.abs());
    }

    /// The statistics of the pairs added.
    pub fn stats(&self) -> ErrorStats {
        if self.n == 0 {
            return ErrorStats::default();
        }
        let n = self.n as f64;
        ErrorStats {
            n: self.n,
            mape: self.mean,
            sd: (self.m2 / n).sqrt(),
            max: self.max,
            smape: self.smape / n,
        }
    }
}

/// Predicts every measurement. A configuration the profile cannot predict (a core count
/// outside the measured range, a frequency it cannot derive) is kept with the reason, and left
/// out of the statistics.
pub fn compare(model: &Model<'_>, measured: &[Measured]) -> InputResult<Vec<Compared>> {
    measured
        .iter()
        .map(|m| {
            let outcome = match model.predict_ranks(m.config, m.ranks) {
                Ok(o) => o,
                Err(e) => {
                    return Ok(Compared {
                        measured: m.clone(),
                        time_s: None,
                        energy_j: None,
                        not_predicted: Some(e.to_string()),
                        interval: None,
                    });
                }
            };
            Ok(match outcome {
                Outcome::Finite(p) => {
                    let ev = crate::model::Eval {
                        time: p.time.0,
                        energy: p.energy.0,
                        derived_energy: p.energy.0,
                        rho: p.rho,
                        t: p.t,
                        e: p.e,
                    };
                    let scope = m.energy.map(|(_, s)| s);
                    let energy_j = scope.map(|s| s.model_energy(&ev));
                    let interval = p.interval.map(|i| {
                        let e = match (scope, energy_j) {
                            (Some(EnergyScope::Node), _) => Some(i.energy_j),
                            (Some(EnergyScope::Cpu), Some(e)) => Some(i.cpu_energy(p.time.0, e)),
                            _ => None,
                        };
                        (i.time_s, e)
                    });
                    Compared {
                        measured: m.clone(),
                        time_s: Some(p.time.0),
                        energy_j,
                        not_predicted: None,
                        interval,
                    }
                }
                Outcome::Saturated { .. } => Compared {
                    measured: m.clone(),
                    time_s: None,
                    energy_j: None,
                    not_predicted: Some("network-saturated (rho >= 1)".into()),
                    interval: None,
                },
            })
        })
        .collect()
}

/// Time and energy statistics of compared points, every measured run counted (points not
/// predicted are left out, and counted by the caller): the runs read again from `runs`, or,
/// without it, each row taken as one run.
pub fn summary(
    rows: &[Compared],
    runs: Option<&dyn Replay>,
) -> InputResult<(ErrorStats, ErrorStats)> {
    let (mut t, mut e) = (StatsAcc::default(), StatsAcc::default());
    let Some(runs) = runs else {
        for r in rows {
            if let Some(p) = r.time_s {
                t.add(p, r.measured.time_s);
            }
            if let (Some(p), Some((m, _))) = (r.energy_j, r.measured.energy) {
                e.add(p, m);
            }
        }
        return Ok((t.stats(), e.stats()));
    };
    let predicted: HashMap<ConfigKey, (Option<f64>, Option<f64>)> = rows
        .iter()
        .map(|r| (r.measured.key(), (r.time_s, r.energy_j)))
        .collect();
    // A run whose configuration is not among the rows (a refit that failed) is left out.
    runs.replay(&mut |run| {
        if let Some(&(pt, pe)) = predicted.get(&run.key) {
            if let Some(p) = pt {
                t.add(p, run.time_s);
            }
            if let (Some(p), Some(m)) = (pe, run.energy_j) {
                e.add(p, m);
            }
        }
        Ok(())
    })?;
    Ok((t.stats(), e.stats()))
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
    let mut groups: Vec<Measured> = Vec::new();
    let mut index: HashMap<ConfigKey, usize> = HashMap::new();
    read_runs(path, reader, |run, line| {
        let (key, config, energy_j) = (run.key(), run.config, run.energy.map(|e| e.0));
        match index.get(&key) {
            Some(&i) => groups[i].runs.add(run.time_s, energy_j),
            None => {
                index.insert(key, groups.len());
                groups.push(Measured {
                    config,
                    time_s: run.time_s,
                    energy: run.energy,
                    ranks: run.ranks,
                    source: format!("{}:{line}", path.display()),
                    runs: Repeats::one(run.time_s, energy_j),
                });
            }
        }
        Ok(())
    })?;
    Ok(groups.into_iter().map(Measured::averaged).collect())
}

/// Every row of a measured CSV's text in file order, checked as [`read_csv`] checks it: its
/// configuration, time (s) and line number (the campaign's replay takes runs one by one).
pub fn each_row(path: &Path, text: &str, mut f: impl FnMut(Config, f64, u64)) -> InputResult<()> {
    read_runs(path, std::io::Cursor::new(text), |run, line| {
        f(run.config, run.time_s, line);
        Ok(())
    })
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
        },
        ranks: row.ranks,
        time_s: row.time_s,
        energy: row.energy().map(|(e, _)| (e, scope)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
