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
    let mut total = false;
    let mut ended = false;
    for (i, line) in text.lines().enumerate() {
        if let Some(title) = line.strip_prefix("@---") {
            section = title
                .trim_matches(|c: char| c == '-' || c.is_whitespace())
                .to_string();
            ended |= section == "End of Report";
            continue;
        }
        let t = line.trim();
        if t.is_empty() || t.starts_with('-') || t.starts_with('@') {
            continue;
        }
        let row = Row {
            file,
            n: i + 1,
            line,
            cols: t.split_whitespace().collect(),
        };
        if section.starts_with("MPI Time (seconds)") {
            total |= row.cols.first() == Some(&"*");
            ranks.extend(row.rank_time()?.map(|r| (r, i + 1)));
        } else if section.starts_with("Callsite Message Sent statistics") {
            sent.extend(row.sent()?);
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
    whole(file, text, &ranks, total && ended)?;
    Ok(MpipReport {
        source: file.to_path_buf(),
        ranks: ranks.into_iter().map(|(r, _)| r).collect(),
        sent,
    })
}

/// Refuses a report cut short or with its task table damaged: mpiP lists every task once, 0 to
/// n - 1, then the `*` total, and ends the report with `@--- End of Report`. A report that
/// stops earlier (a run killed while mpiP wrote it, a copy cut off) would give fewer ranks or
/// no messages, and efficiencies of other ranks than the run had.
fn whole(file: &Path, text: &str, ranks: &[(RankTime, usize)], complete: bool) -> InputResult<()> {
    let mut seen = vec![false; ranks.len()];
    for &(r, line) in ranks {
        match seen.get_mut(r.rank as usize) {
            Some(s) if !*s => *s = true,
            _ => {
                return Err(bad(
                    file,
                    line,
                    &format!(
                        "the {} tasks of `@--- MPI Time (seconds)` listed once each, 0 to {}",
                        ranks.len(),
                        ranks.len() - 1
                    ),
                    &format!("task {} (listed twice, or a gap before it)", r.rank),
                ));
            }
        }
    }
    if complete {
        return Ok(());
    }
    Err(bad(
        file,
        text.lines().count(),
        "a whole report: the `*` row closing `@--- MPI Time (seconds)` and the closing \
         `@--- End of Report` (mpiP writes both)",
        "the end of the file before them: the report is cut short",
    ))
}

/// One row of a report's table: line `n` split into columns.
struct Row<'a> {
    file: &'a Path,
    n: usize,
    line: &'a str,
    cols: Vec<&'a str>,
}

impl Row<'_> {
    fn bad(&self, expected: &str) -> InputError {
        bad(self.file, self.n, expected, self.line)
    }

    /// Column `k` as a number >= 0.
    fn num(&self, k: usize, what: &str) -> InputResult<f64> {
        self.cols
            .get(k)
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| self.bad(&format!("{what} (>= 0)")))
    }

    /// Column `k` as seconds of one run ([`crate::limits::Reading::PartTime`]: 0, or a
    /// nanosecond to a year).
    fn seconds(&self, k: usize, what: &str) -> InputResult<f64> {
        let v = self.num(k, what)?;
        crate::limits::Reading::PartTime
            .check(v)
            .map_err(|range| self.bad(&format!("{what}: {range}")))
    }

    /// A row of `MPI Time (seconds)`: `Task AppTime MPITime MPI%` (`None` for the header and
    /// the `*` total).
    fn rank_time(&self) -> InputResult<Option<RankTime>> {
        if matches!(self.cols.first(), Some(&"Task" | &"*")) {
            return Ok(None);
        }
        let rank = self
            .cols
            .first()
            .and_then(|s| s.parse::<u32>().ok())
            .ok_or_else(|| self.bad("`Task AppTime MPITime MPI%`"))?;
        let app = self.seconds(1, "AppTime as a number")?;
        if app <= 0.0 {
            return Err(self.bad("an AppTime above 0 seconds"));
        }
        let mpi = self.seconds(2, "MPITime as a number")?;
        // A task's time in MPI is part of its run: more than its AppTime (beyond the 1% its
        // printed digits allow) leaves a negative useful time, which gave a load balance that
        // looks plausible (0.12) and is none.
        if mpi > app * 1.01 {
            return Err(self.bad(&format!(
                "an MPITime of at most the task's AppTime ({app} s): MPI time is part of the run"
            )));
        }
        Ok(Some(RankTime { rank, app, mpi }))
    }

    /// A row of `Callsite Message Sent statistics` (`None` for the header and totals).
    fn sent(&self) -> InputResult<Option<Sent>> {
        if self.cols.first() == Some(&"Name") || self.cols.get(2) == Some(&"*") {
            return Ok(None);
        }
        if self.cols.len() < 8 {
            return Err(self.bad("`Name Site Rank Count Max Mean Min Sum`"));
        }
        // `Sum` is printed with 4 significant digits (32768 as 3.277e+04); where every
        // message had one size (Max = Min) the exact sum is Count x Max.
        let count = self.num(3, "Count as a number")?;
        let (max, min) = (
            self.num(4, "Max as a number")?,
            self.num(6, "Min as a number")?,
        );
        let sum = self.num(7, "Sum as a number")?;
        Ok(Some(Sent {
            call: self.cols[0].to_string(),
            site: self.num(1, "a call site id")? as u32,
            rank: self.num(2, "a rank")? as u32,
            count,
            bytes: if max == min { count * max } else { sum },
        }))
    }
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
