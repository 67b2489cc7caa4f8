//! Reading keyed documents (TOML machines, JSON profiles) with errors that name the file, the key
//! path and the expectation. Unknown keys are rejected, so a typo never silently becomes a default.

use crate::error::{InputError, InputResult};
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::path::Path;

/// SHA-256 of a document's text, in hex: names the exact inputs of a prediction.
pub fn sha256_hex(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The most a TOML or JSON document (a machine file, a profile, a record) may hold: the
/// largest real profile is well under 1 MB, and a bigger file is refused before it is read.
pub const MAX_DOCUMENT_BYTES: u64 = 16 << 20;

/// The most a whole-read table or report (a measured CSV, an mpiP report, a perf capture) may
/// hold.
pub const MAX_TABLE_BYTES: u64 = 1 << 30;

/// Reads a whole TOML or JSON document, naming it on failure; refuses anything but a regular
/// file (a FIFO would block forever) and files over [`MAX_DOCUMENT_BYTES`].
pub fn read_file(path: &Path) -> InputResult<String> {
    read_limited(path, MAX_DOCUMENT_BYTES, "a TOML or JSON input")
}

/// Reads a whole table or report as [`read_file`] does, up to [`MAX_TABLE_BYTES`].
pub fn read_table(path: &Path) -> InputResult<String> {
    read_limited(path, MAX_TABLE_BYTES, "a table or report read whole")
}

/// Opens a regular file for reading without blocking on a FIFO, naming it on failure; a FIFO,
/// a device or a directory is refused with what to give instead.
pub fn open_regular(path: &Path) -> InputResult<(std::fs::File, u64)> {
    use std::os::unix::fs::OpenOptionsExt;
    let read_err = |reason| InputError::Read {
        file: path.to_path_buf(),
        reason,
    };
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(read_err)?;
    let meta = f.metadata().map_err(read_err)?;
    if !meta.is_file() {
        return Err(read_err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a pipe, device or directory): give a file on disk",
        )));
    }
    Ok((f, meta.len()))
}

fn read_limited(path: &Path, limit: u64, what: &str) -> InputResult<String> {
    use std::io::Read;
    let (f, len) = open_regular(path)?;
    let read_err = |reason| InputError::Read {
        file: path.to_path_buf(),
        reason,
    };
    if len > limit {
        return Err(read_err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "{len} bytes, more than the {limit} bytes ({} MiB) {what} may hold",
                limit >> 20
            ),
        )));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    f.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(read_err)?;
    if bytes.len() as u64 > limit {
        return Err(read_err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("grew past the {limit} bytes {what} may hold while it was read"),
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        read_err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "not UTF-8 text (byte {} is not)",
                e.utf8_error().valid_up_to()
            ),
        ))
    })
}

/// Parses TOML text into a JSON value tree (so one reader serves both formats).
pub fn parse_toml(path: &Path, text: &str) -> InputResult<Value> {
    let table: toml::Table = toml::from_str(text).map_err(|e| InputError::Syntax {
        file: path.to_path_buf(),
        format: "TOML",
        detail: e.to_string().trim().replace('\n', " "),
    })?;
    serde_json::to_value(table).map_err(|e| InputError::Syntax {
        file: path.to_path_buf(),
        format: "TOML",
        detail: e.to_string(),
    })
}

/// Parses JSON text.
pub fn parse_json(path: &Path, text: &str) -> InputResult<Value> {
    serde_json::from_str(text).map_err(|e| InputError::Syntax {
        file: path.to_path_buf(),
        format: "JSON",
        detail: e.to_string(),
    })
}

/// What a number must satisfy.
#[derive(Debug, Clone, Copy)]
pub enum Bound {
    /// Finite and > 0.
    Positive,
    /// Finite and >= 0.
    NonNegative,
    /// Finite and within `[lo, hi]`.
    Within(f64, f64),
}

impl Bound {
    fn check(self, v: f64) -> bool {
        v.is_finite()
            && match self {
                Bound::Positive => v > 0.0,
                Bound::NonNegative => v >= 0.0,
                Bound::Within(lo, hi) => (lo..=hi).contains(&v),
            }
    }

    fn describe(self) -> String {
        match self {
            Bound::Positive => "a finite number > 0".into(),
            Bound::NonNegative => "a finite number >= 0".into(),
            Bound::Within(lo, hi) => format!("a finite number from {lo} to {hi}"),
        }
    }
}

/// A view on one object of a document, remembering its key path for messages.
pub struct Fields<'a> {
    file: &'a Path,
    path: String,
    obj: &'a Map<String, Value>,
    seen: BTreeSet<&'a str>,
}

fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("{n}"),
        Value::String(s) => format!("the string {s:?}"),
        Value::Array(a) => format!("a list of {} items", a.len()),
        Value::Object(_) => "a table".into(),
    }
}

impl<'a> Fields<'a> {
    /// The top-level object of a document.
    pub fn root(file: &'a Path, v: &'a Value) -> InputResult<Self> {
        match v {
            Value::Object(obj) => Ok(Self {
                file,
                path: String::new(),
                obj,
                seen: BTreeSet::new(),
            }),
            other => Err(InputError::Key {
                file: file.to_path_buf(),
                key: "(top level)".into(),
                expected: "a table of keys".into(),
                got: describe(other),
            }),
        }
    }

    /// The file being read.
    pub fn file(&self) -> &Path {
        self.file
    }

    /// Full dotted path of `key` under this object.
    pub fn key_path(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// An error about `key` of this object.
    pub fn error(
        &self,
        key: &str,
        expected: impl Into<String>,
        got: impl Into<String>,
    ) -> InputError {
        InputError::Key {
            file: self.file.to_path_buf(),
            key: self.key_path(key),
            expected: expected.into(),
            got: got.into(),
        }
    }

    fn get(&mut self, key: &'a str) -> Option<&'a Value> {
        self.seen.insert(key);
        self.obj.get(key)
    }

    fn missing(&self, key: &str, expected: &str) -> InputError {
        // A present key that looks like this one is most likely a misspelling of it.
        let stem = |k: &str| k.chars().take(4).collect::<String>();
        let similar: Vec<&str> = self
            .obj
            .keys()
            .map(String::as_str)
            .filter(|k| *k != key && stem(k) == stem(key))
            .collect();
        match similar.first() {
            Some(k) => self.error(
                key,
                expected,
                format!(
                    "nothing (the key is missing; is the unknown key `{k}` a misspelling of it?)"
                ),
            ),
            None => self.error(key, expected, "nothing (the key is missing)"),
        }
    }

    /// An optional number; `Ok(None)` when absent.
    pub fn opt_f64(&mut self, key: &'a str, bound: Bound) -> InputResult<Option<f64>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => {
                let x = v
                    .as_f64()
                    .ok_or_else(|| self.error(key, bound.describe(), describe(v)))?;
                if bound.check(x) {
                    Ok(Some(x))
                } else {
                    Err(self.error(key, bound.describe(), describe(v)))
                }
            }
        }
    }

    /// A required number.
    pub fn f64(&mut self, key: &'a str, bound: Bound) -> InputResult<f64> {
        self.opt_f64(key, bound)?
            .ok_or_else(|| self.missing(key, &bound.describe()))
    }

    /// An optional whole number within `[lo, hi]`.
    pub fn opt_u64(&mut self, key: &'a str, lo: u64, hi: u64) -> InputResult<Option<u64>> {
        let expected = format!("a whole number from {lo} to {hi}");
        match self.get(key) {
            None => Ok(None),
            Some(v) => match v.as_u64() {
                Some(x) if (lo..=hi).contains(&x) => Ok(Some(x)),
                _ => Err(self.error(key, expected, describe(v))),
            },
        }
    }

    /// A required whole number within `[lo, hi]`.
    pub fn u64(&mut self, key: &'a str, lo: u64, hi: u64) -> InputResult<u64> {
        self.opt_u64(key, lo, hi)?
            .ok_or_else(|| self.missing(key, &format!("a whole number from {lo} to {hi}")))
    }

    /// An optional string.
    pub fn opt_str(&mut self, key: &'a str) -> InputResult<Option<&'a str>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(self.error(key, "a string", describe(v))),
        }
    }

    /// An optional boolean.
    pub fn opt_bool(&mut self, key: &'a str) -> InputResult<Option<bool>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(self.error(key, "true or false", describe(v))),
        }
    }

    /// A required string.
    pub fn str(&mut self, key: &'a str) -> InputResult<&'a str> {
        self.opt_str(key)?
            .ok_or_else(|| self.missing(key, "a string"))
    }

    /// A required list of numbers, each satisfying `bound`, at least one.
    pub fn f64_list(&mut self, key: &'a str, bound: Bound) -> InputResult<Vec<f64>> {
        let expected = format!("a non-empty list of numbers, each {}", bound.describe());
        let v = self.get(key).ok_or_else(|| self.missing(key, &expected))?;
        let arr = v
            .as_array()
            .ok_or_else(|| self.error(key, expected.clone(), describe(v)))?;
        if arr.is_empty() {
            return Err(self.error(key, expected, "an empty list"));
        }
        arr.iter()
            .enumerate()
            .map(|(i, x)| match x.as_f64() {
                Some(f) if bound.check(f) => Ok(f),
                _ => Err(self.error(&format!("{key}[{i}]"), bound.describe(), describe(x))),
            })
            .collect()
    }

    /// A number that is either one value for all `n` entries or a list of exactly `n` values.
    pub fn f64_per(
        &mut self,
        key: &'a str,
        n: usize,
        what: &str,
        bound: Bound,
    ) -> InputResult<Vec<f64>> {
        match self.obj.get(key) {
            Some(Value::Array(_)) => {
                let list = self.f64_list(key, bound)?;
                if list.len() != n {
                    return Err(self.error(
                        key,
                        format!("one number, or a list of {n} (one per {what})"),
                        format!("a list of {}", list.len()),
                    ));
                }
                Ok(list)
            }
            _ => Ok(vec![self.f64(key, bound)?; n]),
        }
    }

    /// A required sub-table.
    pub fn table(&mut self, key: &'a str) -> InputResult<Fields<'a>> {
        let v = self.get(key).ok_or_else(|| self.missing(key, "a table"))?;
        self.sub(key, v)
    }

    /// An optional sub-table.
    pub fn opt_table(&mut self, key: &'a str) -> InputResult<Option<Fields<'a>>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => self.sub(key, v).map(Some),
        }
    }

    fn sub(&self, key: &str, v: &'a Value) -> InputResult<Fields<'a>> {
        match v {
            Value::Object(obj) => Ok(Fields {
                file: self.file,
                path: self.key_path(key),
                obj,
                seen: BTreeSet::new(),
            }),
            other => Err(self.error(key, "a table", describe(other))),
        }
    }

    /// A required non-empty list of tables.
    pub fn tables(&mut self, key: &'a str) -> InputResult<Vec<Fields<'a>>> {
        let v = self
            .get(key)
            .ok_or_else(|| self.missing(key, "a non-empty list of tables"))?;
        let arr = v
            .as_array()
            .ok_or_else(|| self.error(key, "a non-empty list of tables", describe(v)))?;
        if arr.is_empty() {
            return Err(self.error(key, "a non-empty list of tables", "an empty list"));
        }
        arr.iter()
            .enumerate()
            .map(|(i, x)| self.sub(&format!("{key}[{i}]"), x))
            .collect()
    }

    /// An optional list of strings; empty when absent.
    pub fn opt_str_list(&mut self, key: &'a str) -> InputResult<Vec<String>> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(self.error(&format!("{key}[{i}]"), "a string", describe(other))),
                })
                .collect(),
            Some(other) => Err(self.error(key, "a list of strings", describe(other))),
        }
    }

    /// Marks `key` as known whatever it holds (a section kept for other readers).
    pub fn opt_any(&mut self, key: &'a str) -> Option<&'a Value> {
        self.get(key)
    }

    /// A free-form table of strings (provenance notes), or empty when absent.
    pub fn notes(&mut self, key: &'a str) -> InputResult<Vec<(String, String)>> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Object(obj)) => obj
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k.clone(), s.clone())),
                    other => Err(self.error(&format!("{key}.{k}"), "a string", describe(other))),
                })
                .collect(),
            Some(other) => Err(self.error(key, "a table of strings", describe(other))),
        }
    }

    /// A table of named numbers (`{ "parallelEfficiency": 0.83, ... }`), each finite and within
    /// `[-1, 2]` (efficiencies, with room for a measuring tool's rounding; outside that, an
    /// error naming the key).
    pub fn notes_f64(&mut self, key: &'a str) -> InputResult<Vec<(String, f64)>> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Object(obj)) => obj
                .iter()
                .map(|(k, v)| match v.as_f64() {
                    Some(x) if x.is_finite() && (-1.0..=2.0).contains(&x) => Ok((k.clone(), x)),
                    _ => Err(self.error(
                        &format!("{key}.{k}"),
                        "an efficiency (a number from -1 to 2)",
                        describe(v),
                    )),
                })
                .collect(),
            Some(other) => Err(self.error(key, "a table of numbers", describe(other))),
        }
    }

    /// Rejects keys that were never asked for: typos must not pass silently.
    pub fn finish(self) -> InputResult<()> {
        let unknown: Vec<&String> = self
            .obj
            .keys()
            .filter(|k| !self.seen.contains(k.as_str()))
            .collect();
        match unknown.first() {
            None => Ok(()),
            Some(k) => {
                let mut known: Vec<&str> = self.seen.iter().copied().collect();
                known.sort_unstable();
                Err(self.error(
                    k,
                    format!("one of the known keys ({})", known.join(", ")),
                    "an unknown key",
                ))
            }
        }
    }
}
