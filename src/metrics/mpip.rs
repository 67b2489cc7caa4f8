//! mpiP reports: MPI time per rank (`@--- MPI Time (seconds)`) and messages and bytes sent per
//! call site and rank (`@--- Callsite Message Sent statistics (all, sent bytes)`). Numbers use
//! `%g` style (`3.277e+04`).

use crate::error::{InputError, InputResult};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Time of one rank, seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankTime {
    /// Rank.
    pub rank: u32,
    /// `AppTime`.
    pub app: f64,
    /// `MPITime`.
    pub mpi: f64,
}

/// Messages sent by one rank at one call site.
#[derive(Debug, Clone, PartialEq)]
pub struct Sent {
    /// MPI call (`Sendrecv`).
    pub call: String,
    /// Call site id.
    pub site: u32,
    /// Rank.
    pub rank: u32,
    /// Messages.
    pub count: f64,
    /// Bytes in all.
    pub bytes: f64,
}

/// An mpiP report.
#[derive(Debug, Clone, PartialEq)]
pub struct MpipReport {
    /// Where it was read.
    pub source: PathBuf,
    /// Per rank (the `*` total row is left out).
    pub ranks: Vec<RankTime>,
    /// Per call site and rank (the `*` rows left out).
    pub sent: Vec<Sent>,
}

impl MpipReport {
    /// Messages and bytes sent per rank: `(messages, bytes)`.
    pub fn per_rank(&self) -> BTreeMap<u32, (f64, f64)> {
        let mut m = BTreeMap::new();
        for s in &self.sent {
            let e = m.entry(s.rank).or_insert((0.0, 0.0));
            e.0 += s.count;
            e.1 += s.bytes;
        }
        m
    }
}

fn bad(file: &Path, line: usize, expected: &str, got: &str) -> InputError {
    InputError::Key {
        file: file.to_path_buf(),
        key: format!("line {line}"),
        expected: expected.into(),
        got: format!("{got:?}"),
    }
}

/// Parses an mpiP report.
pub fn parse(file: &Path, text: &str) -> InputResult<MpipReport> {
    if !text.lines().any(|l| l.starts_with("@ mpiP")) {
        return Err(bad(
            file,
            1,
            "an mpiP report (first line `@ mpiP`)",
            text.lines().next().unwrap_or(""),
        ));
    }
    let mut section = String::new();
    let mut ranks = Vec::new();
    let mut sent = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if let Some(title) = line.strip_prefix("@---") {
            section = title
                .trim_matches(|c: char| c == '-' || c.is_whitespace())
                .to_string();
            continue;
        }
        let t = line.trim();
        if t.is_empty() || t.starts_with('-') || t.starts_with('@') {
            continue;
        }
        let cols: Vec<&str> = t.split_whitespace().collect();
        let num = |k: usize, what: &str| -> InputResult<f64> {
            cols.get(k)
                .and_then(|s| s.parse::<f64>().ok())
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| bad(file, n, &format!("{what} (>= 0)"), line))
        };
        if section.starts_with("MPI Time (seconds)") {
            if cols.first() == Some(&"Task") || cols.first() == Some(&"*") {
                continue;
            }
            let rank = cols
                .first()
                .and_then(|s| s.parse::<u32>().ok())
                .ok_or_else(|| bad(file, n, "`Task AppTime MPITime MPI%`", line))?;
            let seconds = |k: usize, what: &str| -> InputResult<f64> {
                num(k, what).and_then(|v| {
                    if v <= crate::units::MAX_RUN_SECONDS {
                        Ok(v)
                    } else {
                        Err(bad(file, n, &format!("{what} up to a year"), line))
                    }
                })
            };
            let app = seconds(1, "AppTime as a number")?;
            if app <= 0.0 {
                return Err(bad(file, n, "an AppTime above 0 seconds", line));
            }
            ranks.push(RankTime {
                rank,
                app,
                mpi: seconds(2, "MPITime as a number")?,
            });
        } else if section.starts_with("Callsite Message Sent statistics") {
            if cols.first() == Some(&"Name") || cols.get(2) == Some(&"*") {
                continue;
            }
            if cols.len() < 8 {
                return Err(bad(
                    file,
                    n,
                    "`Name Site Rank Count Max Mean Min Sum`",
                    line,
                ));
            }
            // `Sum` is printed with 4 significant digits (32768 as 3.277e+04); where every
            // message had one size (Max = Min) the exact sum is Count x Max.
            let count = num(3, "Count as a number")?;
            let (max, min) = (num(4, "Max as a number")?, num(6, "Min as a number")?);
            let sum = num(7, "Sum as a number")?;
            sent.push(Sent {
                call: cols[0].to_string(),
                site: num(1, "a call site id")? as u32,
                rank: num(2, "a rank")? as u32,
                count,
                bytes: if max == min { count * max } else { sum },
            });
        }
    }
    if ranks.is_empty() {
        return Err(bad(
            file,
            text.lines().count(),
            "an `@--- MPI Time (seconds)` section with one row per task",
            "none",
        ));
    }
    Ok(MpipReport {
        source: file.to_path_buf(),
        ranks,
        sent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_text_that_is_not_mpip() {
        assert!(parse(Path::new("x"), "hello\n").is_err());
        let truncated = "@ mpiP\n@--- MPI Time (seconds) ---\nTask AppTime MPITime MPI%\n   0   1.6  oops  0.06\n";
        let e = parse(Path::new("r.mpiP"), truncated)
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 4") && e.contains("MPITime"), "{e}");
    }
}
