//! The first line of a Paraver trace: its end time, time unit, tasks and communicators.

use super::bad;
use crate::error::{InputError, InputResult};
use std::io::Read;
use std::path::Path;

/// What the header says.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// Trace end time, in trace units.
    pub end: u64,
    /// Seconds per trace unit.
    pub unit_s: f64,
    /// Tasks (ranks) of the first application.
    pub tasks: u32,
}

/// Splits at top-level `sep` (not inside parentheses).
fn split_top(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            c if c == sep && depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// Parses the first line: `#Paraver (date):end[_ns|_us]:resources:nAppl:appl[,nComms]`.
pub fn parse_header(file: &Path, line: &str) -> InputResult<(Header, u32)> {
    const EXPECTED: &str = "a Paraver header `#Paraver (date):end[_ns|_us]:resources:nAppl:tasks(threads:node,...)[,nComms]`";
    let rest = line
        .strip_prefix("#Paraver (")
        .and_then(|r| r.split_once("):"))
        .map(|(_, r)| r.trim_end())
        .ok_or_else(|| bad(file, 1, EXPECTED, line))?;
    let fields = split_top(rest, ':');
    if fields.len() < 4 {
        return Err(bad(file, 1, EXPECTED, line));
    }
    let (end_s, unit_s) = match fields[0] {
        f if f.ends_with("_ns") => (&f[..f.len() - 3], 1e-9),
        f if f.ends_with("_us") => (&f[..f.len() - 3], 1e-6),
        f => (f, 1e-6),
    };
    let end: u64 = end_s
        .parse()
        .map_err(|_| bad(file, 1, "an end time", fields[0]))?;
    // fields[1] = resources, fields[2] = nAppl, fields[3] = first application [,nComms]
    let appl = fields[3];
    let (appl, ncomms) = match appl.rsplit_once(',') {
        Some((a, n)) if !n.contains(')') => (
            a,
            n.parse::<u32>()
                .map_err(|_| bad(file, 1, "a communicator count", n))?,
        ),
        _ => (appl, 0),
    };
    let tasks: u32 = appl
        .split('(')
        .next()
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| bad(file, 1, "an application `nTasks(threads:node,...)`", appl))?;
    Ok((Header { end, unit_s, tasks }, ncomms))
}

/// The longest header line read: a header names every task's node (`1:1,` each), so the
/// [`MAX_TASKS`] it may declare take a few MiB; a file without line breaks must not grow a
/// buffer without bound.
pub(super) const MAX_HEADER: usize = 32 << 20;

pub(super) fn header_too_long(path: &Path, text: &[u8]) -> InputError {
    bad(
        path,
        1,
        &format!("a header line of at most {MAX_HEADER} bytes"),
        &String::from_utf8_lossy(&text[..text.len().min(120)]),
    )
}

/// Reads the header line (without its break) and the bytes read past it.
pub(super) fn header_line(path: &Path, rd: &mut dyn Read) -> InputResult<(Vec<u8>, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut block = vec![0u8; 64 << 10];
    loop {
        let k = match rd.read(&mut block) {
            Ok(k) => k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(reason) => {
                return Err(InputError::Read {
                    file: path.to_path_buf(),
                    reason,
                });
            }
        };
        let from = buf.len();
        buf.extend_from_slice(&block[..k]);
        if let Some(i) = memchr::memchr(b'\n', &buf[from..]) {
            let after = buf.split_off(from + i + 1);
            buf.pop();
            return Ok((buf, after));
        }
        if k == 0 {
            return Ok((buf, Vec::new()));
        }
        if buf.len() > MAX_HEADER {
            return Err(header_too_long(path, &buf));
        }
    }
}
