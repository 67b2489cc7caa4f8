//! Reading keyed documents (TOML machines, JSON profiles) with errors that name the file, the key
//! path and the expectation. Unknown keys are rejected, so a typo never silently becomes a default.

mod unique_keys;

use crate::error::{InputError, InputResult};
use crate::limits::{Bound, Whole};
use serde_json::{Map, Value};
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

/// Reads a whole table or report as [`read_file`] does, up to [`MAX_TABLE_BYTES`], without a
/// leading byte-order mark.
pub fn read_table(path: &Path) -> InputResult<String> {
    let mut text = read_limited(path, MAX_TABLE_BYTES, "a table or report read whole")?;
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
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

/// Reads a file jouleplan keeps beside an output (a sweep's journal, a set marker) as every
/// input is read, and stricter: no link is followed (`O_NOFOLLOW`), a FIFO, device or folder
/// is refused without blocking, a file with more than one name (a hard link to another file)
/// is refused, and a file over `limit` bytes is refused before it is read. `Ok(None)` where
/// there is no such file.
pub fn read_own(path: &Path, limit: u64, what: &str) -> InputResult<Option<Vec<u8>>> {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let read_err = |reason| InputError::Read {
        file: path.to_path_buf(),
        reason,
    };
    let refuse = |why: String| {
        read_err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{why}, not {what} jouleplan wrote: move it away"),
        ))
    };
    let f = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(refuse("a symbolic link".into()));
        }
        Err(e) => return Err(read_err(e)),
    };
    let meta = f.metadata().map_err(read_err)?;
    if !meta.is_file() {
        return Err(refuse("a pipe, device or folder".into()));
    }
    if meta.nlink() > 1 {
        return Err(refuse(format!(
            "a file with {} names (a hard link to another file)",
            meta.nlink()
        )));
    }
    if meta.len() > limit {
        return Err(refuse(format!(
            "{} bytes, more than the {limit} bytes {what} may hold",
            meta.len()
        )));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    f.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(read_err)?;
    if bytes.len() as u64 > limit {
        return Err(refuse(format!(
            "grew past the {limit} bytes {what} may hold"
        )));
    }
    Ok(Some(bytes))
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
    for (k, v) in &table {
        finite_toml(path, k, v)?;
    }
    serde_json::to_value(table).map_err(|e| InputError::Syntax {
        file: path.to_path_buf(),
        format: "TOML",
        detail: e.to_string(),
    })
}

/// Refuses TOML's `nan` and `inf` at `key` or under it: JSON has no such numbers, so they
/// would otherwise reach the typed reader as absent values (an optional key silently unset).
fn finite_toml(path: &Path, key: &str, v: &toml::Value) -> InputResult<()> {
    match v {
        toml::Value::Float(f) if !f.is_finite() => Err(InputError::Key {
            file: path.to_path_buf(),
            key: key.to_string(),
            expected: "a finite number (TOML's nan and inf are not values jouleplan reads)".into(),
            got: f.to_string(),
        }),
        toml::Value::Table(t) => t
            .iter()
            .try_for_each(|(k, v)| finite_toml(path, &format!("{key}.{k}"), v)),
        toml::Value::Array(a) => a
            .iter()
            .enumerate()
            .try_for_each(|(i, v)| finite_toml(path, &format!("{key}[{i}]"), v)),
        _ => Ok(()),
    }
}

/// Parses JSON text: a leading byte-order mark is skipped, and a key given twice in one object
/// is refused, naming it and its line (serde_json alone would keep the last silently).
pub fn parse_json(path: &Path, text: &str) -> InputResult<Value> {
    serde_json::from_str(without_bom(text))
        .map(|unique_keys::Unique(v)| v)
        .map_err(|e| InputError::Syntax {
            file: path.to_path_buf(),
            format: "JSON",
            detail: e.to_string(),
        })
}

/// `text` without a leading UTF-8 byte-order mark (an editor's or a Windows tool's): it is no
/// part of a table, a report or a document.
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// The `validate()` pass of a typed document: checks values against their bounds and names
/// the file and key path of the first that is out of range.
pub struct Check<'a> {
    file: &'a Path,
}

impl<'a> Check<'a> {
    /// Checks values of `file`.
    pub fn new(file: &'a Path) -> Self {
        Check { file }
    }

    /// An error about the value at `key` (a dotted path).
    pub fn fail(
        &self,
        key: &str,
        expected: impl Into<String>,
        got: impl Into<String>,
    ) -> InputError {
        InputError::Key {
            file: self.file.to_path_buf(),
            key: key.to_string(),
            expected: expected.into(),
            got: got.into(),
        }
    }

    /// A required value that is not there.
    pub fn missing(&self, key: &str, expected: impl Into<String>) -> InputError {
        self.fail(key, expected, missing_got(None))
    }

    /// `v` at `key` must satisfy `bound`.
    pub fn num(&self, key: &str, v: f64, bound: Bound) -> InputResult<()> {
        if bound.check(v) {
            return Ok(());
        }
        Err(self.fail(key, bound.describe(), number(v)))
    }

    /// As [`Check::num`] when the value is present.
    pub fn opt(&self, key: &str, v: Option<f64>, bound: Bound) -> InputResult<()> {
        v.map_or(Ok(()), |v| self.num(key, v, bound))
    }

    /// A time or energy at `key` (in SI units) must be a reading of kind `r`: the range every
    /// reader of times and energies shares.
    pub fn reading(&self, key: &str, v: f64, r: crate::limits::Reading) -> InputResult<()> {
        r.check(v)
            .map(|_| ())
            .map_err(|expected| self.fail(key, expected, number(v)))
    }

    /// A whole number at `key` must be within `range`.
    pub fn whole(&self, key: &str, v: u64, range: Whole) -> InputResult<()> {
        if range.contains(v) {
            return Ok(());
        }
        Err(self.fail(key, range.describe(), v.to_string()))
    }
}

/// A number as JSON prints it (`1e300`, `0.5`).
pub fn number(v: f64) -> String {
    serde_json::Number::from_f64(v).map_or_else(|| v.to_string(), |n| n.to_string())
}

/// Reads a parsed document as the typed artefact `T`. A value of the wrong type, a missing key
/// and an unknown key are named by their dotted path (`baseline[2].cycles`), with what was
/// expected and what was found; `expects` describes a key from its path with list indices
/// dropped (`baseline[].cycles`). An unknown key that looks like a missing known one is named
/// as its likely misspelling.
pub fn typed<T: serde::de::DeserializeOwned>(
    file: &Path,
    doc: Value,
    expects: fn(&str) -> Option<String>,
) -> InputResult<T> {
    serde_path_to_error::deserialize(&doc).map_err(|e| {
        let msg = e.inner().to_string();
        let mut segments: Vec<&serde_path_to_error::Segment> = e.path().iter().collect();
        // An unknown key's path ends in the key itself: name it from its table.
        if msg.starts_with("unknown field ") {
            segments.pop();
        }
        let obj = object_at(&doc, &segments);
        let (key, expected, got) = explain(&dotted(&segments), &msg, obj, expects);
        InputError::Key {
            file: file.to_path_buf(),
            key,
            expected,
            got,
        }
    })
}

/// A path as the messages write it: `baseline[2].device`.
fn dotted(segments: &[&serde_path_to_error::Segment]) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in segments {
        match seg {
            Segment::Seq { index } => out += &format!("[{index}]"),
            Segment::Map { key } if out.is_empty() => out += key,
            Segment::Map { key } => out += &format!(".{key}"),
            _ => out += ".?",
        }
    }
    out
}

/// The table at `segments` in `doc`, when there is one.
fn object_at<'a>(
    doc: &'a Value,
    segments: &[&serde_path_to_error::Segment],
) -> Option<&'a Map<String, Value>> {
    use serde_path_to_error::Segment;
    let mut v = doc;
    for seg in segments {
        v = match seg {
            Segment::Seq { index } => v.get(*index)?,
            Segment::Map { key } => v.get(key.as_str())?,
            _ => return None,
        };
    }
    v.as_object()
}

/// `(key path, expected, got)` from serde's message at path `at`, in the table `obj`.
fn explain(
    at: &str,
    msg: &str,
    obj: Option<&Map<String, Value>>,
    expects: fn(&str) -> Option<String>,
) -> (String, String, String) {
    let join = |k: &str| {
        if at.is_empty() {
            k.to_string()
        } else {
            format!("{at}.{k}")
        }
    };
    let here = if at.is_empty() { "(top level)" } else { at };
    let quoted = |m: &str| m.split('`').nth(1).unwrap_or("").to_string();
    let expect = |key: &str, fallback: String| expects(&generic(key)).unwrap_or(fallback);
    if let Some(rest) = msg.strip_prefix("missing field ") {
        let key = join(&quoted(rest));
        let expected = expect(&key, "a value".into());
        return (key, expected, missing_got(None));
    }
    if let Some(rest) = msg.strip_prefix("unknown field ") {
        let unknown = quoted(rest);
        let known: Vec<&str> = rest.split('`').skip(3).step_by(2).collect();
        if let Some((k, u)) = obj.and_then(|o| misspelt(o, &known)) {
            let key = join(k);
            return (
                key.clone(),
                expect(&key, "a value".into()),
                missing_got(Some(u)),
            );
        }
        let expected = if known.is_empty() {
            "no keys here".to_string()
        } else {
            format!("one of the known keys ({})", known.join(", "))
        };
        return (join(&unknown), expected, "an unknown key".into());
    }
    for prefix in ["invalid type: ", "invalid value: ", "invalid length "] {
        if let Some(rest) = msg.strip_prefix(prefix)
            && let Some((got, expected)) = rest.split_once(", expected ")
        {
            return (here.into(), expect(here, plain(expected)), found(got));
        }
    }
    (
        here.into(),
        expect(here, "a valid value".into()),
        msg.to_string(),
    )
}

/// Whether two keys look alike (the same first four characters): an unknown key that looks
/// like a missing one is most likely its misspelling.
/// Whether `a` looks like a misspelling of `b`: the same first four characters.
pub fn looks_alike(a: &str, b: &str) -> bool {
    a.chars().take(4).eq(b.chars().take(4))
}

/// What was found for a missing key, or for a known key with an unknown one in its place that
/// may be its misspelling (the key may be optional: it is the unknown one that is refused).
fn missing_got(misspelt: Option<&str>) -> String {
    match misspelt {
        Some(k) => format!("the unknown key `{k}` in its place (a misspelling of it?)"),
        None => "nothing (the key is missing)".into(),
    }
}

/// The known key missing from `obj` that an unknown key there most likely misspells, with that
/// unknown key: of the pairs that look alike (the same first four characters, or at most a
/// quarter of the letters apart, and never more than 3), the closest; on a tie the first known
/// key in the type's order. `gpu_clock_mhz` is `gpu_clocks_mhz`'s, not `gpu_model`'s.
fn misspelt<'a>(obj: &'a Map<String, Value>, known: &[&'a str]) -> Option<(&'a str, &'a str)> {
    let unknown: Vec<&str> = obj
        .keys()
        .map(String::as_str)
        .filter(|u| !known.contains(u))
        .collect();
    let near = |u: &str, k: &str| {
        let d = strsim::damerau_levenshtein(u, k);
        (looks_alike(u, k) || d <= (k.len() / 4).clamp(1, 3)).then_some(d)
    };
    known
        .iter()
        .filter(|k| !obj.contains_key(**k))
        .flat_map(|k| {
            unknown
                .iter()
                .filter_map(move |u| near(u, k).map(|d| (d, *k, *u)))
        })
        .min_by_key(|(d, ..)| *d)
        .map(|(_, k, u)| (k, u))
}

/// A path with its list indices dropped: `baseline[3].cycles` -> `baseline[].cycles`.
fn generic(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut in_index = false;
    for ch in path.chars() {
        match ch {
            '[' => {
                in_index = true;
                out.push('[');
            }
            ']' => {
                in_index = false;
                out.push(']');
            }
            _ if in_index => {}
            _ => out.push(ch),
        }
    }
    out
}

/// Serde's name of an expected type in words a user reads.
fn plain(s: &str) -> String {
    let s = s.trim();
    match s {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number >= 0".into(),
        "f64" | "f32" => "a number".into(),
        "a string" | "string" => "a string".into(),
        "a boolean" | "boolean" => "true or false".into(),
        "a sequence" | "sequence" => "a list".into(),
        "a map" | "map" => "a table".into(),
        _ if s.starts_with("struct ") => "a table".into(),
        _ => s.replace("map", "table").replace("sequence", "list"),
    }
}

/// Serde's description of a found value as the other readers print it: `-1`, `the string
/// "x"`, `a table`.
fn found(s: &str) -> String {
    let s = s.trim();
    if let Some(v) = s.strip_prefix("boolean ") {
        return format!("the boolean {}", v.trim_matches('`'));
    }
    if let Some(v) = s.strip_prefix("string ") {
        return format!("the string {v}");
    }
    if s.contains('`') {
        return s.split('`').nth(1).unwrap_or(s).to_string();
    }
    match s {
        "map" => "a table".into(),
        "sequence" => "a list".into(),
        "unit value" | "null" => "null".into(),
        _ => s.to_string(),
    }
}
