//! Reading a Paraver trace's record lines on several threads, handed over in file order.
//!
//! Worker threads take turns at the input: each takes the next piece (about [`PIECE`] bytes, cut
//! back to its last line break) of a file mapped in memory (no copy) or of a stream (read into
//! the piece, the rest carried into the next), then, outside the lock, splits it into lines and
//! parses every record's colon-separated fields. The caller's thread receives the parsed
//! pieces, puts them back in order and walks their lines; while the next piece in order is not
//! ready, it takes and parses one itself, so no core idles and no more threads run than there
//! are cores. A piece it is done with goes back to a pool. At most [`IN_FLIGHT`] pieces exist
//! at a time, so memory stays a few MiB whatever the trace's size, and a `.prv.gz` stream is
//! decompressed by whichever thread takes the next piece while the others parse.

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError, mpsc};

/// Bytes read per piece before the cut at the last line break: small enough that the worker
/// parses it from its own cache.
const PIECE: usize = 64 << 10;
/// Most pieces read and not yet handed back by the caller.
const IN_FLIGHT: usize = 8;
/// Most worker threads.
const MAX_WORKERS: usize = 8;

pub use crate::metrics::record_fields::Run;
use crate::metrics::record_fields::{Span as Line, parse_records};

/// Why the lines stopped before the end of the stream.
#[derive(Debug)]
pub enum Fail<E> {
    /// The caller's function refused a line.
    Line(E),
    /// The reader failed.
    Io(std::io::Error),
    /// The next line is longer than the limit.
    LongLine,
}

/// Where the lines come from.
pub enum Input<'r> {
    /// A stream, and the bytes already read from it (past the header).
    Read(Box<dyn Read + Send + 'r>, Vec<u8>),
    /// A mapped file, from the given offset (past its header): read in place, and the pages
    /// already walked are handed back as the walk goes on, so that the map does not hold the
    /// whole file in the process's resident memory.
    Map(&'r memmap2::Mmap, usize),
}

/// Bytes walked between two hand-backs of a map's pages.
const RELEASE: usize = 8 << 20;

/// Whole lines of the input, parsed.
#[derive(Default)]
struct Piece {
    /// The lines read from a stream.
    bytes: Vec<u8>,
    /// Where they lie in those bytes, or in the mapped text ([`Input::Map`]).
    span: (usize, usize),
    lines: Vec<Line>,
    vals: Vec<u64>,
    /// Whether every field in `vals` is a number (none is `u64::MAX`).
    numbers: bool,
    /// What ends the stream after this piece's lines, when something does.
    stop: Option<Fail<()>>,
}

/// What the workers share: the reader and the pieces' bookkeeping.
struct Feed<'r> {
    /// The stream, when the input is one.
    rd: Option<Box<dyn Read + Send + 'r>>,
    /// The start of a line that continues in the next piece.
    carry: Vec<u8>,
    /// The mapped text, when the input is a map; and where the next piece starts in it.
    text: &'r [u8],
    pos: usize,
    next: u64,
    /// No more pieces: the stream ended, failed, or the caller stopped.
    done: bool,
    pool: Vec<Piece>,
    out: usize,
}

struct Shared<'r> {
    feed: Mutex<Feed<'r>>,
    room: Condvar,
}

impl<'r> Shared<'r> {
    fn lock(&self) -> MutexGuard<'_, Feed<'r>> {
        self.feed.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Feed<'_> {
    /// Fills `p` with the next whole lines (the last line of the input may lack its break).
    fn fill(&mut self, p: &mut Piece, max_line: usize) {
        p.stop = None;
        p.bytes.clear();
        match self.rd.take() {
            Some(mut rd) => {
                self.fill_read(&mut *rd, p, max_line);
                self.rd = Some(rd);
            }
            None => self.fill_span(p, max_line),
        }
    }

    /// The next piece of the mapped text: up to its last line break within [`PIECE`] bytes, or
    /// to the end of a longer line.
    fn fill_span(&mut self, p: &mut Piece, max_line: usize) {
        let (text, start) = (self.text, self.pos);
        let goal = (start + PIECE).min(text.len());
        let end = if goal == text.len() {
            goal
        } else if let Some(i) = memchr::memrchr(b'\n', &text[start..goal]) {
            start + i + 1
        } else {
            let far = (start + max_line + 1).min(text.len());
            match memchr::memchr(b'\n', &text[goal..far]) {
                Some(i) => goal + i + 1,
                None if far == text.len() => far,
                None => {
                    p.stop = Some(Fail::LongLine);
                    start
                }
            }
        };
        p.span = (start, end);
        self.pos = end;
        self.done = end == text.len() || p.stop.is_some();
    }

    /// The next piece of the stream.
    fn fill_read(&mut self, rd: &mut (dyn Read + Send + '_), p: &mut Piece, max_line: usize) {
        p.bytes.append(&mut self.carry);
        let mut eof = false;
        loop {
            let goal = p.bytes.len() + PIECE;
            while p.bytes.len() < goal {
                let at = p.bytes.len();
                p.bytes.resize(goal, 0);
                match rd.read(&mut p.bytes[at..]) {
                    Ok(0) => {
                        p.bytes.truncate(at);
                        eof = true;
                        break;
                    }
                    Ok(k) => p.bytes.truncate(at + k),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => p.bytes.truncate(at),
                    Err(e) => {
                        p.bytes.truncate(at);
                        p.stop = Some(Fail::Io(e));
                        break;
                    }
                }
            }
            if eof || p.stop.is_some() {
                // The last line stands whole; after a failure, the lines before it.
                if p.stop.is_some() {
                    self.cut(p);
                    self.carry.clear();
                }
                p.span = (0, p.bytes.len());
                self.done = true;
                return;
            }
            if self.cut(p) {
                p.span = (0, p.bytes.len());
                return;
            }
            if p.bytes.len() > max_line {
                p.bytes.clear();
                p.span = (0, 0);
                p.stop = Some(Fail::LongLine);
                self.done = true;
                return;
            }
        }
    }

    /// Moves what follows the last line break of `p` into the carry; whether there was one.
    fn cut(&mut self, p: &mut Piece) -> bool {
        match memchr::memrchr(b'\n', &p.bytes) {
            Some(i) => {
                self.carry.extend_from_slice(&p.bytes[i + 1..]);
                p.bytes.truncate(i + 1);
                true
            }
            None => false,
        }
    }
}

impl Piece {
    /// The piece's text: its own bytes, or its span of the whole `text`.
    fn text<'a>(&'a self, text: &'a [u8]) -> &'a [u8] {
        let own = if self.bytes.is_empty() {
            text
        } else {
            &self.bytes
        };
        &own[self.span.0..self.span.1]
    }

    /// Splits the text into lines and parses each record's fields, with `run` and where it
    /// stops line by line (comment, empty and communicator lines are left to the caller);
    /// stops at a line over `max_line` (a stop the piece already has, from its filling, stays
    /// unless this one comes first).
    fn parse(&mut self, text: &[u8], max_line: usize, run: Run) {
        let (mut lines, mut vals) = (
            std::mem::take(&mut self.lines),
            std::mem::take(&mut self.vals),
        );
        lines.clear();
        vals.clear();
        let bytes = self.text(text);
        let numbers = parse_records(bytes, run, &mut vals, &mut lines);
        // Only a piece longer than the limit can hold a line over it.
        if bytes.len() > max_line {
            let long = lines
                .iter()
                .position(|l| (l.end - l.start) as usize > max_line);
            if let Some(i) = long {
                vals.truncate(lines[i].vals as usize);
                lines.truncate(i);
                self.stop = Some(Fail::LongLine);
            }
        }
        (self.lines, self.vals, self.numbers) = (lines, vals, numbers);
    }

    /// Hands every line, its fields and whether they are all numbers to `f`, in order.
    fn each<E>(
        &self,
        text: &[u8],
        f: &mut impl FnMut(&[u8], &[u64], bool) -> Result<(), E>,
    ) -> Result<(), E> {
        let bytes = self.text(text);
        let ends = self.lines.iter().skip(1).map(|n| n.vals as usize);
        for (l, vend) in self.lines.iter().zip(ends.chain([self.vals.len()])) {
            f(
                &bytes[l.start as usize..l.end as usize],
                &self.vals[l.vals as usize..vend],
                self.numbers,
            )?;
        }
        Ok(())
    }
}

impl Shared<'_> {
    /// The next piece and its number, filled but not parsed; waits for room when `wait`, and
    /// otherwise gives `None` when there is none (as it does once the input is done).
    fn take(&self, max_line: usize, wait: bool) -> Option<(u64, Piece)> {
        let mut f = self.lock();
        while wait && f.out >= IN_FLIGHT && !f.done {
            f = self.room.wait(f).unwrap_or_else(PoisonError::into_inner);
        }
        if f.done || f.out >= IN_FLIGHT {
            return None;
        }
        let mut p = f.pool.pop().unwrap_or_default();
        f.fill(&mut p, max_line);
        f.out += 1;
        f.next += 1;
        Some((f.next - 1, p))
    }
}

/// One worker: takes pieces while there are any and room for them, parses, sends them on.
fn work(sh: &Shared, text: &[u8], tx: mpsc::Sender<(u64, Piece)>, max_line: usize, run: Run) {
    while let Some((seq, mut p)) = sh.take(max_line, true) {
        p.parse(text, max_line, run);
        if tx.send((seq, p)).is_err() {
            return;
        }
    }
}

/// Calls `f` with every line of the input, the fields `run` (or the byte-by-byte parser) found
/// in it and whether they are all numbers, in order; lines longer than `max_line` bytes stop
/// the walk. Parsing runs on one thread per core but one (at most [`MAX_WORKERS`]), and on the
/// caller's whenever the next piece in order is not ready: on 2 cores one worker and a caller
/// that parses while it waits took 0.43 s for aggregates of the bench trace, where two workers
/// beside a walking caller took 0.55 s (three threads on two cores, one of them often
/// waiting); with the critical path 0.92 s against 1.03 s for one worker and a caller that
/// only walks.
pub fn each_line<E>(
    input: Input<'_>,
    max_line: usize,
    run: Run,
    mut f: impl FnMut(&[u8], &[u64], bool) -> Result<(), E>,
) -> Result<(), Fail<E>> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = (cores - 1).clamp(1, MAX_WORKERS);
    let (rd, carry, text, map) = match input {
        Input::Read(rd, carry) => (Some(rd), carry, &[][..], None),
        Input::Map(map, from) => (
            None,
            Vec::new(),
            &map[from.min(map.len())..],
            Some((map, from)),
        ),
    };
    let sh = Shared {
        feed: Mutex::new(Feed {
            rd,
            carry,
            text,
            pos: 0,
            next: 0,
            done: false,
            pool: Vec::new(),
            out: 0,
        }),
        room: Condvar::new(),
    };
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|s| {
        for _ in 0..workers {
            let tx = tx.clone();
            let sh = &sh;
            s.spawn(move || work(sh, text, tx, max_line, run));
        }
        drop(tx);
        let walked = walk(&sh, text, map, &rx, max_line, run, &mut f);
        // Whatever ended the walk, the workers stop taking pieces.
        sh.lock().done = true;
        sh.room.notify_all();
        walked
    })
}

/// Receives the pieces, walks them in order, and gives each back; while the next piece in
/// order is not ready and there is room for another, parses one itself with `run`.
fn walk<E>(
    sh: &Shared,
    text: &[u8],
    map: Option<(&memmap2::Mmap, usize)>,
    rx: &mpsc::Receiver<(u64, Piece)>,
    max_line: usize,
    run: Run,
    f: &mut impl FnMut(&[u8], &[u64], bool) -> Result<(), E>,
) -> Result<(), Fail<E>> {
    let mut waiting: BTreeMap<u64, Piece> = BTreeMap::new();
    let mut next = 0u64;
    let mut released = 0;
    loop {
        while let Some(mut p) = waiting.remove(&next) {
            next += 1;
            p.each(text, f).map_err(Fail::Line)?;
            match p.stop.take() {
                Some(Fail::Io(e)) => return Err(Fail::Io(e)),
                Some(_) => return Err(Fail::LongLine),
                None => {}
            }
            if let Some((map, from)) = map {
                released = release(map, released, from + p.span.1);
            }
            let mut feed = sh.lock();
            feed.pool.push(p);
            feed.out -= 1;
            drop(feed);
            sh.room.notify_one();
        }
        let got = match rx.try_recv() {
            Ok(got) => got,
            Err(mpsc::TryRecvError::Disconnected) => break,
            Err(mpsc::TryRecvError::Empty) => match sh.take(max_line, false) {
                Some((seq, mut p)) => {
                    p.parse(text, max_line, run);
                    (seq, p)
                }
                None => match rx.recv() {
                    Ok(got) => got,
                    Err(_) => break,
                },
            },
        };
        waiting.insert(got.0, got.1);
    }
    Ok(())
}

/// Hands back the pages of `map` from `released` to `upto` (rounded down to 64 KiB, a
/// multiple of any page size) once [`RELEASE`] bytes have gathered; returns the new start.
fn release(map: &memmap2::Mmap, released: usize, upto: usize) -> usize {
    let upto = upto & !0xffff;
    if upto < released + RELEASE {
        return released;
    }
    // SAFETY: the map is a private, read-only map of a file, never written: handing its pages
    // back only drops them from this process (the file's cached pages stay), and a later read
    // of them, if any, would fault the same bytes back in. The walk is past them.
    let _ = unsafe {
        map.unchecked_advise_range(
            memmap2::UncheckedAdvice::DontNeed,
            released,
            upto - released,
        )
    };
    upto
}
