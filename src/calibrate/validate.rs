//! `jouleplan validate`: the model's predictions against measurements it did not see, in the
//! layout of the seed's Table 2 (mean, standard deviation and maximum of the absolute
//! percentage error, time and energy separately) plus SMAPE. The measurements are either a
//! CSV of measured runs, or the profile's own measured points held out of the fit
//! (`--use-cores`), or each interior measured core count in turn (leave-one-out).

use super::reproduce::EnergyScope;
use crate::artefact::measured::{self, MeasuredRow};
use crate::error::InputResult;
use crate::model::{Config, Model, Outcome};
use crate::units::Hertz;
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
    /// Where it came from (`file:line`, or `profile point`).
    pub source: String,
    /// Each run's measured time and energy, where `time_s` and `energy` are their means over
    /// repeats of the configuration: the error statistics count every run.
    pub runs: Vec<(f64, Option<f64>)>,
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

/// Statistics of `(predicted, measured)` pairs.
pub fn stats(pairs: &[(f64, f64)]) -> ErrorStats {
    let n = pairs.len();
    if n == 0 {
        return ErrorStats::default();
    }
    let ape: Vec<f64> = pairs
        .iter()
        .map(|(p, m)| 100.0 * (p - m).abs() / m.abs())
        .collect();
    let mape = ape.iter().sum::<f64>() / n as f64;
    let sd = (ape.iter().map(|a| (a - mape).powi(2)).sum::<f64>() / n as f64).sqrt();
    let smape = pairs
        .iter()
        .map(|(p, m)| 200.0 * (p - m).abs() / (p.abs() + m.abs()))
        .sum::<f64>()
        / n as f64;
    ErrorStats {
        n,
        mape,
        sd,
        max: ape.iter().copied().fold(0.0, f64::max),
        smape,
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
/// predicted are left out, and counted by the caller).
pub fn summary(rows: &[Compared]) -> (ErrorStats, ErrorStats) {
    let t: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|r| r.time_s.map(|p| (p, &r.measured.runs)))
        .flat_map(|(p, runs)| runs.iter().map(move |m| (p, m.0)))
        .collect();
    let e: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|r| r.energy_j.map(|p| (p, &r.measured.runs)))
        .flat_map(|(p, runs)| runs.iter().filter_map(move |m| m.1.map(|e| (p, e))))
        .collect();
    (stats(&t), stats(&e))
}

/// Reads measured runs: a CSV with a header naming `nodes, cores, freq_hz, gpus, time_s` and
/// optionally `energy_j` (the whole node) or `gpu_energy_j` (GPUs only). Every row is kept.
pub fn read_csv(path: &Path, text: &str) -> InputResult<Vec<Measured>> {
    let mut out = Vec::new();
    read_rows(path, std::io::Cursor::new(text), |m| {
        out.push(m);
        Ok(())
    })?;
    Ok(out)
}

/// Reads a measured CSV file as a stream and keeps one row per configuration and energy scope,
/// its time and energy the means of its repeats: memory is one row per configuration plus 16
/// bytes a run (each run's time and energy, which the error statistics count), never the text.
/// The source names the first line and the number of repeats.
pub fn read_csv_file(path: &Path) -> InputResult<Vec<Measured>> {
    let (file, _) = crate::input::open_regular(path)?;
    let mut groups: Vec<Measured> = Vec::new();
    type Key = (u32, u32, u64, u32, Option<&'static str>, Option<u32>);
    let mut index: std::collections::HashMap<Key, usize> = std::collections::HashMap::new();
    read_rows(path, std::io::BufReader::new(file), |m| {
        let key = (
            m.config.nodes,
            m.config.cores,
            m.config.freq.0.to_bits(),
            m.config.gpus,
            m.energy.map(|e| e.1.name()),
            m.ranks,
        );
        match index.get(&key) {
            Some(&i) => groups[i].runs.extend(m.runs),
            None => {
                index.insert(key, groups.len());
                groups.push(m);
            }
        }
        Ok(())
    })?;
    Ok(groups
        .into_iter()
        .map(|mut m| {
            let n = m.runs.len();
            m.time_s = m.runs.iter().map(|r| r.0).sum::<f64>() / n as f64;
            if let Some(e) = &mut m.energy {
                e.0 = m.runs.iter().filter_map(|r| r.1).sum::<f64>() / n as f64;
            }
            if n > 1 {
                m.source = format!("{} (mean of {n} runs)", m.source);
            }
            m
        })
        .collect())
}

/// Reads the rows of a measured CSV as measurements (one run each).
fn read_rows(
    path: &Path,
    reader: impl std::io::Read,
    mut f: impl FnMut(Measured) -> InputResult<()>,
) -> InputResult<()> {
    measured::read_rows(path, reader, |row, line| f(measurement(path, &row, line)?))
}

/// A checked row as a measurement: its energy in the scope its `energy_scope` cell names, else
/// its column's (`energy_j`: the node; `gpu_energy_j`: the GPUs).
fn measurement(path: &Path, row: &MeasuredRow, line: u64) -> InputResult<Measured> {
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
    let energy = row.energy().map(|(e, _)| (e, scope));
    Ok(Measured {
        config: Config {
            nodes: row.nodes,
            cores: row.cores,
            freq: Hertz(row.freq_hz),
            gpus: row.gpus,
        },
        time_s: row.time_s,
        energy,
        ranks: row.ranks,
        source: format!("{}:{line}", path.display()),
        runs: vec![(row.time_s, energy.map(|e| e.0))],
    })
}
