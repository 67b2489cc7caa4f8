//! Paraver traces (`.prv` or `.prv.gz`, as Extrae writes them), read front to back once (a plain
//! file mapped and read in place, a `.gz` as a stream; records parsed on worker threads, see
//! `read`): per-rank useful time (state 1, Running), hardware counters in useful
//! time, and the ideal-network runtime from a critical-path replay with Lamport-style clocks
//! (METRICS.md section 3, seed 003).
//!
//! The replay keeps, per rank, a queue of operations in the rank's own time order (useful
//! bursts, message sends and receives, collective entries and exits) and executes them as soon
//! as the trace has been read past their time: the ideal clock advances only in useful bursts,
//! a receive takes the max of its clock and the sender's clock at the send, a send of at least
//! the eager limit also waits for the receive to be posted, and a collective synchronises its
//! communicator. Memory grows with the ranks and the operations in flight, not with the trace.
//!
//! The reader in its parts: `header` (the first line), `read` (record lines parsed on worker
//! threads), `scan` (each record into the replay), `replay` (the ideal-network clocks) and
//! `grid` (the time windows).

mod grid;
mod header;
mod read;
mod replay;
mod scan;

use super::run::Run;
use crate::error::{InputError, InputResult};
use crate::units::Seconds;
use grid::grid_for;
pub use header::{Header, parse_header};
use header::{MAX_HEADER, header_line, header_too_long};
use read::Input;
use replay::Replay;
use scan::{Scan, finish};
use std::io::Read;
use std::path::Path;

/// Analysis options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Sends of this many bytes or more wait for the receiver (rendezvous).
    pub eager_limit: u64,
    /// Fixed-length windows.
    pub window: Option<Seconds>,
    /// Adaptive windows: merge while some rank has fewer than this many MPI events.
    pub adaptive: Option<u32>,
    /// Skip the critical-path replay (no serialisation, transfer or windows): aggregates only.
    pub no_critical_path: bool,
}

/// MPI's usual eager limit: sends below 32 KiB do not wait for the receiver (METRICS.md 3).
pub const EAGER_LIMIT: u64 = 32 * 1024;

impl Default for Options {
    /// The eager limit of [`EAGER_LIMIT`], no windows, with the critical path.
    fn default() -> Options {
        Options {
            eager_limit: EAGER_LIMIT,
            window: None,
            adaptive: None,
            no_critical_path: false,
        }
    }
}

fn bad(file: &Path, line: u64, expected: &str, got: &str) -> InputError {
    let shown: String = got.chars().take(120).collect();
    InputError::Key {
        file: file.to_path_buf(),
        key: format!("line {line}"),
        expected: expected.into(),
        got: format!("{shown:?}"),
    }
}

/// Most tasks a trace header may declare.
const MAX_TASKS: usize = 1 << 20;

/// An open trace: a plain file mapped in memory, or a stream (gunzipped for `.gz`).
enum Opened {
    Map(memmap2::Mmap),
    Stream(Box<dyn Read + Send>),
}

/// Opens a trace: a plain regular file is mapped (read in place, with no copy), a `.gz` or a
/// file that cannot be mapped is read as a stream. As every input, it must be a regular file:
/// a FIFO, device or folder is refused at once ([`crate::input::open_regular`]), never waited on.
fn open(path: &Path) -> InputResult<Opened> {
    let (f, _) = crate::input::open_regular(path)?;
    if path.extension().is_some_and(|e| e == "gz") {
        return Ok(Opened::Stream(Box::new(flate2::read::MultiGzDecoder::new(
            f,
        ))));
    }
    if f.metadata().is_ok_and(|m| m.is_file() && m.len() > 0) {
        // SAFETY: the map is only read. Were the file truncated by another process while it
        // is read, the read past the new end would fault (the risk every tool that maps its
        // input takes, ripgrep among them); a trace is not rewritten while it is analysed.
        if let Ok(map) = unsafe { memmap2::Mmap::map(&f) } {
            let _ = map.advise(memmap2::Advice::Sequential);
            return Ok(Opened::Map(map));
        }
    }
    Ok(Opened::Stream(Box::new(f)))
}

/// Analyses a trace.
pub fn analyse(path: &Path, opts: &Options) -> InputResult<Run> {
    match open(path)? {
        Opened::Map(map) => analyse_map(path, &map, opts),
        Opened::Stream(rd) => analyse_reader(path, rd, opts),
    }
}

/// Analyses a mapped trace (`path` names it in errors).
fn analyse_map(path: &Path, map: &memmap2::Mmap, opts: &Options) -> InputResult<Run> {
    let head = &map[..map.len().min(MAX_HEADER + 1)];
    let (first, from) = match memchr::memchr(b'\n', head) {
        Some(i) => (&map[..i], i + 1),
        None if map.len() <= MAX_HEADER => (&map[..], map.len()),
        None => return Err(header_too_long(path, map)),
    };
    analyse_input(path, first, Input::Map(map, from), opts)
}

/// Analyses a trace read from `rd` (`path` names it in errors): the reader under
/// [`analyse`] for streams, and what the fuzz target drives with arbitrary bytes.
pub fn analyse_reader(
    path: &Path,
    mut rd: Box<dyn Read + Send + '_>,
    opts: &Options,
) -> InputResult<Run> {
    let (first, after) = header_line(path, &mut rd)?;
    analyse_input(path, &first, Input::Read(rd, after), opts)
}

/// Analyses the records of `input` under the header line `first`.
fn analyse_input(path: &Path, first: &[u8], input: Input<'_>, opts: &Options) -> InputResult<Run> {
    // A byte-order mark an editor put before the header is no part of it.
    let first = first.strip_prefix(b"\xef\xbb\xbf").unwrap_or(first);
    let first = String::from_utf8_lossy(first).into_owned();
    let (header, ncomms) = parse_header(path, &first)?;
    let n = header.tasks as usize;
    if n == 0 {
        return Err(bad(path, 1, "at least one task", &first));
    }
    if n > MAX_TASKS {
        return Err(bad(
            path,
            1,
            &format!("at most {MAX_TASKS} tasks in the header (state is kept per task)"),
            &format!("{n} tasks"),
        ));
    }
    // 0 is a limit too: every send waits for its receiver.
    let eager = opts.eager_limit;
    let win_len = match (opts.window, opts.adaptive) {
        (Some(w), _) => Some(((w.0 / header.unit_s).round() as u64).max(1)),
        (None, Some(_)) => Some((header.end / 4096).max(1)),
        _ => None,
    };
    let grid = match (opts.no_critical_path, win_len) {
        (false, Some(l)) => Some(grid_for(path, header.end, l)?),
        _ => None,
    };
    let rp = Replay::new(n, grid, opts.no_critical_path);
    let mut scan = Scan {
        path,
        tasks: n,
        end: header.end,
        eager,
        rp,
        lineno: 1,
        skipped: 0,
        comm_lines: 0,
        last_time: 0,
        out_of_order: 0,
    };
    scan.lines(input)?;
    let Scan {
        mut rp,
        skipped,
        comm_lines,
        out_of_order,
        lineno,
        ..
    } = scan;
    // Whatever is still blocked never matched: reported, and treated as local.
    let unmatched = rp.drain();
    if rp.colls_full {
        return Err(too_much_waiting(path, lineno, &rp));
    }
    finish(
        path,
        &header,
        &mut rp,
        skipped,
        unmatched,
        out_of_order,
        comm_lines,
        ncomms,
        opts,
    )
}

/// The replay holds more than [`MAX_WAITING`] operations that cannot run yet (messages whose
/// receive or send is recorded far ahead or never completes, a collective some tasks never
/// enter), or more than [`MAX_OPEN_COLLECTIVES`] collectives open (entered, never left): each
/// is kept until it can run, so such a trace would grow memory with its length. `line`: the
/// line the scan reached.
#[cold]
fn too_much_waiting(path: &Path, line: u64, rp: &Replay) -> InputError {
    let (expected, got) = match rp.colls_full {
        true => (
            format!(
                "at most {MAX_OPEN_COLLECTIVES} collectives open at once in the critical-path \
                 replay (entered by a task and not yet left by all of theirs; a collective \
                 entered and never left stays open, in memory)"
            ),
            format!("{} collectives open by this line", rp.colls.len()),
        ),
        false => (
            format!(
                "at most {MAX_WAITING} operations (MPI calls and the computation after them) \
                 waiting at once in the critical-path replay (sends never received, receives \
                 recorded far ahead of their sends or a collective some tasks never enter keep \
                 them waiting, each in memory)"
            ),
            format!("{} operations waiting by this line", rp.waiting),
        ),
    };
    bad(
        path,
        line,
        &format!(
            "{expected}: read the trace with `metrics --no-critical-path` (every POP metric but \
             serialisation and transfer), or cut it into shorter pieces"
        ),
        &got,
    )
}

/// The most MPI operations the critical-path replay keeps waiting at once (about 60 bytes
/// each with their messages: under 0.6 GB). A real trace keeps a few per task waiting; one
/// whose sends are never received keeps every one.
const MAX_WAITING: u64 = 1 << 23;

/// The most collectives open at once in the replay (about 120 bytes each: 0.13 GB), as many
/// as the communicators a trace may define.
const MAX_OPEN_COLLECTIVES: usize = 1 << 20;

/// The most communicators a trace may define (Extrae writes a few per communicator the
/// program created).
const MAX_COMMS: usize = 1 << 20;

/// The longest record line read (a Paraver record is well under 1 KiB): a file without line
/// breaks must not grow a buffer without bound.
const MAX_LINE: usize = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> Run {
        let opts = Options {
            eager_limit: 32 * 1024,
            ..Options::default()
        };
        analyse_reader(Path::new("t.prv"), Box::new(text.as_bytes()), &opts).unwrap()
    }

    #[test]
    fn communicators_are_counted_once_and_a_missing_one_is_noted() {
        let head = "#Paraver (01/01/2026 at 00:00):100_ns:1(2):1:2(1:1,1:1),1\n";
        let body = "1:1:1:1:1:0:100:1\n1:2:1:2:1:0:50:1\n";
        let one = run(&format!("{head}c:1:1:2:1:2\n{body}"));
        assert!(one.notes.is_empty(), "{:?}", one.notes);
        let none = run(&format!("{head}{body}"));
        assert_eq!(
            none.notes,
            vec!["the header announces 1 communicators, 0 follow".to_string()]
        );
    }

    #[test]
    fn a_last_line_without_a_newline_and_lines_split_across_reads_are_read() {
        let text = "#Paraver (01/01/2026 at 00:00):100_ns:1(2):1:2(1:1,1:1)\n\
                    1:1:1:1:1:0:100:1\n1:2:1:2:1:0:50:1";
        // A reader that hands out 3 bytes at a time splits every line.
        let small = std::io::BufReader::with_capacity(3, text.as_bytes());
        let opts = Options::default();
        let r = analyse_reader(Path::new("t.prv"), Box::new(small), &opts).unwrap();
        assert_eq!(r.ranks, 2);
        assert!((r.useful_s - 150e-9).abs() < 1e-15, "{}", r.useful_s);
        let whole = run(text);
        assert_eq!(whole.useful_s, r.useful_s);
    }

    /// A trace of many pieces: records for 4 tasks, each Running for 1..=100 units, then a
    /// garbled record on line `bad_at` when given.
    fn long_trace(lines: u64, bad_at: Option<u64>) -> (String, u64) {
        let mut t = format!(
            "#Paraver (01/01/2026 at 00:00):{}_ns:1(4):1:4(1:1,1:1,1:1,1:1)\n",
            lines * 200
        );
        let mut useful = 0;
        for i in 0..lines {
            if bad_at == Some(i + 2) {
                t.push_str("1:1:1:1:1:x:1:1\n");
                continue;
            }
            let d = 1 + (i * 7919) % 100;
            useful += d;
            t.push_str(&format!(
                "1:{0}:1:{0}:1:{1}:{2}:1\n",
                1 + i % 4,
                i * 200,
                i * 200 + d
            ));
        }
        (t, useful)
    }

    #[test]
    fn a_trace_of_many_pieces_is_read_whole_and_in_order() {
        let (text, useful) = long_trace(400_000, None);
        assert!(text.len() > 10 << 20, "{} bytes", text.len());
        let r = run(&text);
        assert_eq!(r.ranks, 4);
        assert!(
            (r.useful_s - useful as f64 * 1e-9).abs() < 1e-12,
            "{} vs {useful}",
            r.useful_s
        );
        assert!(r.notes.is_empty(), "{:?}", r.notes);
    }

    #[test]
    fn a_garbled_record_or_an_overlong_line_deep_in_a_trace_is_named_by_its_line() {
        let (text, _) = long_trace(300_000, Some(250_001));
        let opts = Options::default();
        let e = analyse_reader(Path::new("t.prv"), Box::new(text.as_bytes()), &opts).unwrap_err();
        assert!(e.to_string().contains("line 250001"), "{e}");
        let (mut text, _) = long_trace(200_000, None);
        text.push_str(&"1".repeat(MAX_LINE + 1));
        text.push_str("\n1:1:1:1:1:0:1:1\n");
        let e = analyse_reader(Path::new("t.prv"), Box::new(text.as_bytes()), &opts).unwrap_err();
        assert!(e.to_string().contains("line 200002"), "{e}");
        assert!(e.to_string().contains("lines of at most"), "{e}");
    }

    #[test]
    fn a_mapped_file_reads_as_its_stream_does() {
        let dir = tempfile::tempdir().unwrap();
        let (text, useful) = long_trace(400_000, None);
        let good = dir.path().join("good.prv");
        std::fs::write(&good, &text).unwrap();
        let mapped = analyse(&good, &Options::default()).unwrap();
        let streamed =
            analyse_reader(&good, Box::new(text.as_bytes()), &Options::default()).unwrap();
        assert!((mapped.useful_s - useful as f64 * 1e-9).abs() < 1e-12);
        assert_eq!(mapped.pop, streamed.pop);
        let (text, _) = long_trace(300_000, Some(250_001));
        let bad = dir.path().join("bad.prv");
        std::fs::write(&bad, &text).unwrap();
        let e = analyse(&bad, &Options::default()).unwrap_err();
        assert!(e.to_string().contains("line 250001"), "{e}");
    }
}
