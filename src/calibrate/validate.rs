//! `jouleplan validate`: the model's predictions against measurements it did not see, in the
//! layout of the seed's Table 2 (mean, standard deviation and maximum of the absolute
//! percentage error, time and energy separately) plus SMAPE. The measurements are either a
//! CSV of measured runs, or the profile's own measured points held out of the fit
//! (`--use-cores`), or each interior measured core count in turn (leave-one-out).

use super::reproduce::EnergyScope;
use crate::error::{InputError, InputResult};
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
    /// Where it came from (`file:line`, or `profile point`).
    pub source: String,
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
            let outcome = match model.predict(m.config) {
                Ok(o) => o,
                Err(e) => {
                    return Ok(Compared {
                        measured: m.clone(),
                        time_s: None,
                        energy_j: None,
                        not_predicted: Some(e.to_string()),
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
                    Compared {
                        measured: m.clone(),
                        time_s: Some(p.time.0),
                        energy_j: m.energy.map(|(_, s)| s.model_energy(&ev)),
                        not_predicted: None,
                    }
                }
                Outcome::Saturated { .. } => Compared {
                    measured: m.clone(),
                    time_s: None,
                    energy_j: None,
                    not_predicted: Some("network-saturated (rho >= 1)".into()),
                },
            })
        })
        .collect()
}

/// Time and energy statistics of compared points (saturated predictions left out).
pub fn summary(rows: &[Compared]) -> (ErrorStats, ErrorStats) {
    let t: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|r| r.time_s.map(|p| (p, r.measured.time_s)))
        .collect();
    let e: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|r| r.energy_j.zip(r.measured.energy.map(|e| e.0)))
        .collect();
    (stats(&t), stats(&e))
}

/// Reads measured runs: a CSV with a header naming `nodes, cores, freq_hz, gpus, time_s` and
/// optionally `energy_j` (the whole node) or `gpu_energy_j` (GPUs only).
pub fn read_csv(path: &Path, text: &str) -> InputResult<Vec<Measured>> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let bad = |line: usize, col: &str, expected: &str, got: &str| InputError::Key {
        file: path.to_path_buf(),
        key: format!("line {line}, column {col}"),
        expected: expected.into(),
        got: got.into(),
    };
    let Some((_, head)) = lines.next() else {
        return Err(bad(1, "header", "a header line", "an empty file"));
    };
    let cols: Vec<String> = head
        .split(',')
        .map(|c| c.trim().to_ascii_lowercase())
        .collect();
    let find = |name: &str| cols.iter().position(|c| c == name);
    let mut idx = Vec::new();
    for name in ["nodes", "cores", "freq_hz", "gpus", "time_s"] {
        idx.push(find(name).ok_or_else(|| {
            bad(
                1,
                name,
                "columns nodes,cores,freq_hz,gpus,time_s[,energy_j|gpu_energy_j]",
                head,
            )
        })?);
    }
    let energy_col = find("energy_j")
        .map(|i| (i, EnergyScope::Node))
        .or_else(|| find("gpu_energy_j").map(|i| (i, EnergyScope::Gpu)));
    let mut out = Vec::new();
    for (i, line) in lines {
        let n = i + 1;
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let num = |col: usize, name: &str| -> InputResult<f64> {
            let raw = cells.get(col).copied().unwrap_or("");
            raw.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| bad(n, name, "a non-negative number", raw))
        };
        let whole = |col: usize, name: &str| -> InputResult<u32> {
            let v = num(col, name)?;
            (v.fract() == 0.0 && v <= f64::from(u32::MAX))
                .then_some(v as u32)
                .ok_or_else(|| bad(n, name, "a whole number", &v.to_string()))
        };
        let freq = num(idx[2], "freq_hz")?;
        if freq < 1e7 {
            return Err(bad(
                n,
                "freq_hz",
                "a frequency in Hz (2.1e9, not 2.1 or 2100)",
                &freq.to_string(),
            ));
        }
        let time_s = num(idx[4], "time_s")?;
        if time_s <= 0.0 {
            return Err(bad(n, "time_s", "a positive time in seconds", "0"));
        }
        let energy = match energy_col {
            Some((c, scope)) if cells.get(c).is_some_and(|v| !v.is_empty()) => {
                Some((num(c, "energy_j")?, scope))
            }
            _ => None,
        };
        out.push(Measured {
            config: Config {
                nodes: whole(idx[0], "nodes")?,
                cores: whole(idx[1], "cores")?,
                freq: Hertz(freq),
                gpus: whole(idx[3], "gpus")?,
            },
            time_s,
            energy,
            source: format!("{}:{n}", path.display()),
        });
    }
    Ok(out)
}
