//! The ping-pong record (`jouleplan-pingpong/1`): every message size of an MPI ping-pong as
//! measured, which `calibrate network` writes (`measure::pingpong`) and fits
//! (`calibrate::network_fit`).

use crate::atomic_write::write_atomic;
use crate::error::InputResult;
use crate::input::{self, Check};
use crate::limits::Bound;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One message size: every repeat's one-way time (half a round trip), s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SizeSample {
    /// Message size, bytes.
    pub bytes: u64,
    /// One-way time of each repeat, s.
    pub one_way_s: Vec<f64>,
}

impl SizeSample {
    /// Median one-way time, s.
    pub fn median(&self) -> f64 {
        let mut v = self.one_way_s.clone();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n == 0 {
            return f64::NAN;
        }
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    }
}

/// Format tag of ping-pong records.
pub const RECORD_FORMAT: &str = "jouleplan-pingpong/1";

/// A ping-pong record: where it ran and what it measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// [`RECORD_FORMAT`].
    pub format: String,
    /// Host name of each rank (`MPI_Get_processor_name`).
    pub hosts: Vec<String>,
    /// When the sweep started (UTC date).
    pub date: String,
    /// Round trips per repeat aim at this many seconds.
    pub target_s: f64,
    /// Measured sizes, ascending.
    pub sizes: Vec<SizeSample>,
}

impl Record {
    /// Reads a record, checking its format and values.
    pub fn read(path: &Path) -> InputResult<Record> {
        Record::from_text(path, &crate::input::read_file(path)?)
    }

    /// Parses a record's text (`path` names it in errors), checking its format and values.
    pub fn from_text(path: &Path, text: &str) -> InputResult<Record> {
        let doc = input::parse_json(path, text)?;
        let mut r: Record = input::typed(path, doc, expects)?;
        r.validate(path)?;
        // Written ascending; one edited by hand is read in any order, as it measured.
        r.sizes.sort_by_key(|s| s.bytes);
        Ok(r)
    }

    /// Checks the format tag, the two hosts, each size given once and every one-way time.
    pub fn validate(&self, path: &Path) -> InputResult<()> {
        let c = Check::new(path);
        if self.format != RECORD_FORMAT {
            return Err(c.fail("format", RECORD_FORMAT, format!("{:?}", self.format)));
        }
        if self.hosts.len() != 2 {
            return Err(c.fail(
                "hosts",
                "the host of each of the ping-pong's two ranks",
                format!("{} hosts", self.hosts.len()),
            ));
        }
        let mut seen = std::collections::HashMap::new();
        for (i, s) in self.sizes.iter().enumerate() {
            if let Some(first) = seen.insert(s.bytes, i) {
                return Err(c.fail(
                    &format!("sizes[{i}].bytes"),
                    "each message size once (its repeats in one list of one_way_s)",
                    format!("{} bytes again, first at sizes[{first}]", s.bytes),
                ));
            }
        }
        let (lo, hi) = ONE_WAY_RANGE_S;
        for (i, s) in self.sizes.iter().enumerate() {
            if s.one_way_s.is_empty() {
                return Err(c.fail(
                    &format!("sizes[{i}].one_way_s"),
                    "one or more one-way times from 1e-9 s (a nanosecond) to 3600 s",
                    "an empty list",
                ));
            }
            for (k, &t) in s.one_way_s.iter().enumerate() {
                if !Bound::Within(lo, hi).check(t) {
                    return Err(c.fail(
                        &format!("sizes[{i}].one_way_s[{k}]"),
                        "a one-way time from 1e-9 s (a nanosecond) to 3600 s",
                        input::number(t),
                    ));
                }
            }
        }
        c.num("target_s", self.target_s, Bound::Within(0.0, 3600.0))
    }

    /// Refuses to go on, in a run between `hosts`, with the sizes this record (read from
    /// `path`) measured between its own hosts: the fit would mix two networks' times. The
    /// pair in either order is the same pair.
    pub fn check_hosts(&self, path: &Path, hosts: &[String]) -> InputResult<()> {
        let mut theirs = self.hosts.clone();
        let mut ours = hosts.to_vec();
        theirs.sort();
        ours.sort();
        if theirs == ours {
            return Ok(());
        }
        Err(crate::error::InputError::Mismatch(format!(
            "{}: its sizes were measured between {}, and this run is between {}: --resume \
             would mix two networks' times in one fit; resume on those hosts, or measure \
             between these into another --record",
            path.display(),
            self.hosts.join(" and "),
            hosts.join(" and ")
        )))
    }

    /// Writes the record atomically.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)? + "\n";
        write_atomic(path, text.as_bytes(), false)
    }
}

/// The one-way times a real message can take, s: a nanosecond (below any network's latency)
/// to an hour.
pub const ONE_WAY_RANGE_S: (f64, f64) = (1e-9, 3600.0);

/// What a missing or mistyped key of a ping-pong record should hold.
fn expects(key: &str) -> Option<String> {
    Some(match key {
        "format" => format!("\"{RECORD_FORMAT}\""),
        "hosts" => "a list of host names".into(),
        "date" => "a date (YYYY-MM-DD)".into(),
        "target_s" => "seconds per repeat".into(),
        "sizes" => "a list of measured sizes".into(),
        "sizes[].bytes" => "a message size in bytes (a whole number)".into(),
        "sizes[].one_way_s" => "a list of one-way times in seconds".into(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(hosts: &[&str]) -> Record {
        Record {
            format: RECORD_FORMAT.into(),
            hosts: hosts.iter().map(|h| h.to_string()).collect(),
            date: "2026-01-01".into(),
            target_s: 0.02,
            sizes: Vec::new(),
        }
    }

    #[test]
    fn a_record_is_resumed_only_between_its_own_two_hosts() {
        let r = record(&["node1", "node2"]);
        let path = Path::new("r.json");
        let here = |h: &[&str]| h.iter().map(|h| h.to_string()).collect::<Vec<_>>();
        assert!(r.check_hosts(path, &here(&["node1", "node2"])).is_ok());
        assert!(r.check_hosts(path, &here(&["node2", "node1"])).is_ok());
        let err = r
            .check_hosts(path, &here(&["node1", "node3"]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("r.json")
                && err.contains("between node1 and node2")
                && err.contains("between node1 and node3"),
            "{err}"
        );
    }
}
