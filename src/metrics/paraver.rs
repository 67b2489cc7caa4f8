//! Paraver traces (`.prv` or `.prv.gz`, as Extrae writes them), read front to back once (a plain
//! file mapped and read in place, a `.gz` as a stream; records parsed on worker threads, see
//! `paraver_read.rs`): per-rank useful time (state 1, Running), hardware counters in useful
//! time, and the ideal-network runtime from a critical-path replay with Lamport-style clocks
//! (METRICS.md section 3, seed 003).
//!
//! The replay keeps, per rank, a queue of operations in the rank's own time order (useful
//! bursts, message sends and receives, collective entries and exits) and executes them as soon
//! as the trace has been read past their time: the ideal clock advances only in useful bursts,
//! a receive takes the max of its clock and the sender's clock at the send, a send of at least
//! the eager limit also waits for the receive to be posted, and a collective synchronises its
//! communicator. Memory grows with the ranks and the operations in flight, not with the trace.

use super::paraver_read::{Fail, Input};
use super::record_fields::{fast_run, parse_fields};
use super::run::{Counters, Pop, Run};
use super::windows::Window;
use crate::error::{InputError, InputResult};
use crate::units::Seconds;
use rustc_hash::FxHashMap as HashMap;
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

fn bad(file: &Path, line: u64, expected: &str, got: &str) -> InputError {
    let shown: String = got.chars().take(120).collect();
    InputError::Key {
        file: file.to_path_buf(),
        key: format!("line {line}"),
        expected: expected.into(),
        got: format!("{shown:?}"),
    }
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

#[derive(Debug, Clone, Copy)]
enum Op {
    Burst(u64),
    Send(u64),
    SendWait(u64),
    RecvPost(u64),
    Recv(u64),
    CollEnter(u64, u64),
    CollExit(u64, u64),
}

#[derive(Default)]
struct Msg {
    send_clock: Option<f64>,
    post_clock: Option<f64>,
    pending: u8,
}

/// The messages in flight, by slot: a message takes a slot when its record is read and gives
/// it back once all its operations have run (an operation forced by the drain never gives its
/// slot back, so a slot is never reused under an operation still queued). A slab, not a hash
/// map: a message's operations reach it by index.
#[derive(Default)]
struct Msgs {
    slots: Vec<Msg>,
    free: Vec<u64>,
}

impl Msgs {
    /// A slot holding `m`.
    fn add(&mut self, m: Msg) -> u64 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = m;
                i
            }
            None => {
                self.slots.push(m);
                self.slots.len() as u64 - 1
            }
        }
    }
}

#[derive(Default)]
struct Coll {
    entered: u32,
    exited: u32,
    max: f64,
}

/// One rank's queued operations, ascending by (time, priority and arrival: the priority in the
/// top two bits of the second key, the arrival below). Records come sorted by time, so nearly
/// every insertion lands at the back or a place or two before it: a vector read from a moving
/// head, searched from the back, does in a few nanoseconds what a B-tree did in a hundred (and
/// a third less than a ring buffer searched by halves). An op that would land further back
/// than [`NEAR`] places (one before ops queued far ahead, such as receives recorded long before
/// they complete) goes to a B-tree beside the vector instead: searched from the back it cost a
/// walk and a shift of every op queued ahead of it, and a trace whose receives all came late
/// took minutes for what takes a second.
#[derive(Default)]
struct OpQueue {
    ops: Vec<((u64, u64), Op)>,
    /// The first op not yet taken.
    head: usize,
    /// Ops that did not land near the back of `ops`.
    far: std::collections::BTreeMap<(u64, u64), Op>,
}

/// How far back from the end of the vector an op is searched for its place.
const NEAR: usize = 32;

impl OpQueue {
    fn insert(&mut self, key: (u64, u64), op: Op) {
        let mut at = self.ops.len();
        let stop = self.head.max(at.saturating_sub(NEAR));
        while at > stop && self.ops[at - 1].0 > key {
            at -= 1;
        }
        if at == self.ops.len() {
            self.ops.push((key, op));
        } else if at > self.head && at == stop && self.ops[at - 1].0 > key {
            self.far.insert(key, op);
        } else {
            self.ops.insert(at, (key, op));
        }
    }

    fn first(&self) -> Option<((u64, u64), Op)> {
        let near = self.ops.get(self.head).copied();
        let far = self.far.first_key_value().map(|(k, o)| (*k, *o));
        match (near, far) {
            (Some(a), Some(b)) => Some(if b.0 < a.0 { b } else { a }),
            (a, b) => a.or(b),
        }
    }

    fn pop_first(&mut self) -> Option<((u64, u64), Op)> {
        let first = self.first()?;
        if self
            .far
            .first_key_value()
            .is_some_and(|(k, _)| *k == first.0)
        {
            self.far.pop_first();
            return Some(first);
        }
        self.head += 1;
        if self.head == self.ops.len() {
            self.ops.clear();
            self.head = 0;
        } else if self.head >= 256 && 2 * self.head >= self.ops.len() {
            // The taken ops are most of the vector: the rest moves to its start (each op
            // moves at most once per halving, so the cost per op stays constant).
            self.ops.drain(..self.head);
            self.head = 0;
        }
        Some(first)
    }

    fn is_empty(&self) -> bool {
        self.head == self.ops.len() && self.far.is_empty()
    }
}

struct Rank {
    clock: f64,
    /// Ops by (time, priority, arrival): at equal times posts (send, receive post, collective
    /// entry) run before waits (receive, rendezvous send, collective exit), and those before
    /// bursts, as inside one MPI call.
    queue: OpQueue,
    useful: u64,
    /// Counters in useful time, summed as integers (exact, where an `f64` sum is exact only
    /// up to 2^53).
    instr: u64,
    cycles: u64,
    /// (begin, state) of the latest state record, and the state before it.
    state_now: (u64, u64),
    state_prev: u64,
    open_coll: Option<(u64, u64)>,
    coll_seq: HashMap<u64, u64>,
    /// Last executed op time, for windows.
    at: u64,
}

impl Rank {
    fn new() -> Self {
        Rank {
            clock: 0.0,
            queue: OpQueue::default(),
            useful: 0,
            instr: 0,
            cycles: 0,
            state_now: (0, 0),
            state_prev: 0,
            open_coll: None,
            coll_seq: HashMap::default(),
            at: 0,
        }
    }
}

/// Per-window accumulators over fixed base windows.
struct Grid {
    len: u64,
    count: usize,
    /// Per rank: useful in each base window.
    useful: Vec<Vec<f64>>,
    /// Per rank: ideal clock at each base boundary (index k = start of window k), NaN until known.
    ideal_at: Vec<Vec<f64>>,
    /// Per rank: MPI events in each base window.
    events: Vec<Vec<u32>>,
}

/// Most tasks a trace header may declare.
const MAX_TASKS: usize = 1 << 20;
/// Most window cells (tasks x windows) a grid may hold: 2^22 cells, about 100 MB at most
/// (found by the Paraver fuzz target: 2^26 cells took over 2 GB).
const MAX_CELLS: u64 = 1 << 22;
/// Most windows a trace may be cut into: each becomes a row of the output, and 65,536 rows
/// already resolve a run far finer than any chart or table shows (the fuzz target spent most
/// of its time writing millions of windows that the cell cap still allowed).
const MAX_WINDOWS: u64 = 1 << 16;

/// The window grid, refused when the header's end time over the window length asks for more
/// cells than any trace needs: a corrupt end time must not size memory. Rows are added as
/// records name tasks ([`Grid::grow_to`]), checked against the cell cap.
fn grid_for(path: &Path, end: u64, len: u64) -> InputResult<Grid> {
    let windows = end.div_ceil(len.max(1)).max(1);
    if windows > MAX_WINDOWS {
        return Err(bad(
            path,
            1,
            &format!(
                "an end time that gives at most {MAX_WINDOWS} windows (use a longer --window)"
            ),
            &format!("{windows} windows"),
        ));
    }
    Ok(Grid::new(end, len))
}

impl Grid {
    fn new(end: u64, len: u64) -> Grid {
        let len = len.max(1);
        let count = (end.div_ceil(len) as usize).max(1);
        Grid {
            len,
            count,
            useful: Vec::new(),
            ideal_at: Vec::new(),
            events: Vec::new(),
        }
    }

    /// Rows for `rows` tasks in all; refused, before any is added, past `MAX_CELLS`
    /// task-window cells.
    fn grow_to(&mut self, rows: usize) -> Result<(), String> {
        if (rows as u64).saturating_mul(self.count as u64) > MAX_CELLS {
            return Err(format!(
                "{rows} tasks x {} windows: more than {MAX_CELLS} task-window cells (use a \
                 longer --window)",
                self.count
            ));
        }
        while self.useful.len() < rows {
            self.add_row();
        }
        Ok(())
    }

    fn add_row(&mut self) {
        self.useful.push(vec![0.0; self.count]);
        self.ideal_at.push(vec![f64::NAN; self.count + 1]);
        self.events.push(vec![0; self.count]);
    }

    fn idx(&self, t: u64) -> usize {
        ((t / self.len) as usize).min(self.count - 1)
    }

    /// Records that rank `r` had ideal clock `clock` at time `t` after executing up to `t`:
    /// fills every boundary in (prev, t] that is still unknown.
    fn boundary(&mut self, r: usize, prev: u64, t: u64, clock_at: impl Fn(u64) -> f64) {
        let first = prev.div_ceil(self.len) as usize;
        let last = ((t / self.len) as usize).min(self.count);
        for k in first..=last {
            if self.ideal_at[r][k].is_nan() {
                self.ideal_at[r][k] = clock_at(k as u64 * self.len);
            }
        }
    }

    fn add_useful(&mut self, r: usize, b: u64, e: u64) {
        let mut t = b;
        while t < e {
            let k = self.idx(t);
            let edge = ((k as u64 + 1) * self.len).min(e).max(t + 1);
            let edge = if k == self.count - 1 { e } else { edge };
            self.useful[r][k] += (edge - t) as f64;
            t = edge;
        }
    }
}

struct Replay {
    /// Tasks the header declares.
    tasks: usize,
    /// Per declared task, its slot in `ranks` (`u32::MAX` until a record names it): state
    /// and grid rows exist only for tasks the records name, not for every declared one.
    slot: Vec<u32>,
    /// Per slot, its task (0-based).
    task_of: Vec<u32>,
    /// Per slot, the replay state of its task.
    ranks: Vec<Rank>,
    msgs: Msgs,
    colls: HashMap<(u64, u64), Coll>,
    /// Each communicator's participants: the distinct tasks of the application it names.
    comms: HashMap<u64, u32>,
    seq: u64,
    grid: Option<Grid>,
    mismatched: u64,
    /// Replay switched off: no operations are queued.
    off: bool,
    /// Ranks whose queue holds ops, so that running and draining cost what is queued, not
    /// the header's task count (a header may declare 2^20 tasks that no record names).
    busy: Vec<usize>,
    /// Whether a rank is in `busy`.
    queued: Vec<bool>,
    /// Ops queued on every rank together, checked against [`MAX_WAITING`].
    waiting: u64,
    /// A collective was entered while [`MAX_OPEN_COLLECTIVES`] were open (it was not kept).
    colls_full: bool,
}

impl Replay {
    /// The replay of `tasks` declared tasks, with its window grid; `off`: no operation queued.
    fn new(tasks: usize, grid: Option<Grid>, off: bool) -> Replay {
        Replay {
            tasks,
            slot: vec![u32::MAX; tasks],
            task_of: Vec::new(),
            ranks: Vec::new(),
            msgs: Msgs::default(),
            colls: HashMap::default(),
            comms: HashMap::default(),
            seq: 0,
            grid,
            mismatched: 0,
            off,
            busy: Vec::new(),
            queued: Vec::new(),
            waiting: 0,
            colls_full: false,
        }
    }

    fn participants(&self, comm: u64) -> u32 {
        self.comms.get(&comm).copied().unwrap_or(self.tasks as u32)
    }

    /// The slot of 0-based `task` (below `tasks`), made on first use.
    #[inline]
    fn slot_of(&mut self, task: usize) -> Result<usize, String> {
        match self.slot[task] {
            u32::MAX => self.new_slot(task),
            s => Ok(s as usize),
        }
    }

    /// A slot for a task that has none yet.
    #[cold]
    fn new_slot(&mut self, task: usize) -> Result<usize, String> {
        let s = self.ranks.len();
        if let Some(g) = self.grid.as_mut() {
            g.grow_to(s + 1)?;
        }
        self.slot[task] = s as u32;
        self.task_of.push(task as u32);
        self.ranks.push(Rank::new());
        self.queued.push(false);
        Ok(s)
    }

    fn push(&mut self, rank: usize, t: u64, op: Op) {
        if self.off {
            return;
        }
        self.seq += 1;
        let prio = match op {
            Op::Send(_) | Op::RecvPost(_) | Op::CollEnter(..) => 0,
            Op::Recv(_) | Op::SendWait(_) | Op::CollExit(..) => 1,
            Op::Burst(_) => 2,
        };
        self.ranks[rank]
            .queue
            .insert((t, (prio << 62) | self.seq), op);
        self.waiting += 1;
        if !self.queued[rank] {
            self.queued[rank] = true;
            self.busy.push(rank);
        }
    }

    /// The ranks with queued ops, ascending (the order the replay visits them in), taken out
    /// of `busy`; [`Replay::keep`] puts back those still holding ops.
    fn take_busy(&mut self) -> Vec<usize> {
        let mut b = std::mem::take(&mut self.busy);
        b.sort_unstable();
        b
    }

    fn keep(&mut self, r: usize) {
        if self.ranks[r].queue.is_empty() {
            self.queued[r] = false;
        } else {
            self.busy.push(r);
        }
    }

    /// Executes every op before `horizon` that can run; returns whether anything ran.
    fn run(&mut self, horizon: u64) {
        loop {
            let mut progress = false;
            for r in self.take_busy() {
                while let Some((key, op)) = self.ranks[r].queue.first() {
                    if key.0 >= horizon || !self.exec(r, key.0, op) {
                        break;
                    }
                    self.ranks[r].queue.pop_first();
                    self.waiting -= 1;
                    progress = true;
                }
                self.keep(r);
            }
            if !progress {
                return;
            }
        }
    }

    /// Ops that can never run (a receive whose send never came, a collective that never
    /// filled): forces the first blocked op of each rank as local, then runs what follows;
    /// returns how many were forced.
    fn drain(&mut self) -> u64 {
        let mut forced = 0;
        loop {
            self.run(u64::MAX);
            let mut any = false;
            for r in self.take_busy() {
                if let Some((key, _)) = self.ranks[r].queue.pop_first() {
                    self.waiting -= 1;
                    self.ranks[r].at = self.ranks[r].at.max(key.0);
                    forced += 1;
                    any = true;
                }
                self.keep(r);
            }
            if !any {
                return forced;
            }
        }
    }

    fn exec(&mut self, r: usize, t: u64, op: Op) -> bool {
        let before = self.ranks[r].clock;
        let prev = self.ranks[r].at;
        match op {
            Op::Burst(d) => {
                if let Some(g) = self.grid.as_mut() {
                    // Boundaries up to the burst start keep the clock; inside, it grows linearly.
                    g.boundary(r, prev, t, |_| before);
                    g.boundary(r, t, t + d, |x| before + (x - t) as f64);
                    g.add_useful(r, t, t + d);
                }
                self.ranks[r].clock += d as f64;
                self.ranks[r].at = t + d;
                return true;
            }
            Op::Send(m) | Op::RecvPost(m) | Op::Recv(m) | Op::SendWait(m) => {
                // One index reaches the message; its slot is given back once all its ops have run.
                let Some(e) = self.msgs.slots.get_mut(m as usize) else {
                    return self.ran(r, t, prev, before);
                };
                match op {
                    Op::Send(_) => e.send_clock = Some(before),
                    Op::RecvPost(_) => e.post_clock = Some(before),
                    Op::Recv(_) | Op::SendWait(_) => {
                        let waited = if matches!(op, Op::Recv(_)) {
                            e.send_clock
                        } else {
                            e.post_clock
                        };
                        let Some(c) = waited else {
                            return false;
                        };
                        self.ranks[r].clock = before.max(c);
                    }
                    _ => {}
                }
                e.pending = e.pending.saturating_sub(1);
                if e.pending == 0 {
                    self.msgs.free.push(m);
                }
            }
            Op::CollEnter(comm, seq) => {
                if self.colls.len() >= MAX_OPEN_COLLECTIVES
                    && !self.colls.contains_key(&(comm, seq))
                {
                    // Not kept: the scan, or the end of the replay, refuses the trace.
                    self.colls_full = true;
                    return self.ran(r, t, prev, before);
                }
                let c = self.colls.entry((comm, seq)).or_default();
                c.entered += 1;
                c.max = c.max.max(before);
            }
            Op::CollExit(comm, seq) => {
                let need = self.participants(comm);
                let Some(c) = self.colls.get_mut(&(comm, seq)) else {
                    return true;
                };
                if c.entered < need {
                    return false;
                }
                self.ranks[r].clock = before.max(c.max);
                c.exited += 1;
                if c.exited >= need {
                    self.colls.remove(&(comm, seq));
                }
            }
        }
        self.ran(r, t, prev, before)
    }

    /// Rank `r` ran an op at `t` (its previous op at `prev`) with clock `before` on entry.
    fn ran(&mut self, r: usize, t: u64, prev: u64, before: f64) -> bool {
        if let Some(g) = self.grid.as_mut() {
            g.boundary(r, prev, t, |_| before);
        }
        self.ranks[r].at = t.max(prev);
        true
    }
}

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

/// The longest header line read: a header names every task's node (`1:1,` each), so the
/// [`MAX_TASKS`] it may declare take a few MiB; a file without line breaks must not grow a
/// buffer without bound.
const MAX_HEADER: usize = 32 << 20;

fn header_too_long(path: &Path, text: &[u8]) -> InputError {
    bad(
        path,
        1,
        &format!("a header line of at most {MAX_HEADER} bytes"),
        &String::from_utf8_lossy(&text[..text.len().min(120)]),
    )
}

/// Reads the header line (without its break) and the bytes read past it.
fn header_line(path: &Path, rd: &mut dyn Read) -> InputResult<(Vec<u8>, Vec<u8>)> {
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

/// A record line as the walk hands it over: its bytes, its fields, and whether they are all
/// numbers (none is `u64::MAX`).
#[derive(Clone, Copy)]
struct Rec<'a> {
    line: &'a [u8],
    v: &'a [u64],
    numbers: bool,
}

/// The record scan: what it keeps between lines.
struct Scan<'p> {
    path: &'p Path,
    tasks: usize,
    end: u64,
    eager: u64,
    rp: Replay,
    lineno: u64,
    skipped: u64,
    comm_lines: u32,
    last_time: u64,
    out_of_order: u64,
}

impl Scan<'_> {
    /// Every line after the header, parsed on worker threads (and on this one while it waits
    /// for the next piece) and walked here in order.
    fn lines(&mut self, input: Input<'_>) -> InputResult<()> {
        let walked =
            super::paraver_read::each_line(input, MAX_LINE, fast_run(), |line, v, numbers| {
                self.line(Rec { line, v, numbers })
            });
        match walked {
            Ok(()) => Ok(()),
            Err(Fail::Line(e)) => Err(e),
            Err(Fail::Io(reason)) => Err(InputError::Read {
                file: self.path.to_path_buf(),
                reason,
            }),
            Err(Fail::LongLine) => Err(bad(
                self.path,
                self.lineno + 1,
                &format!("lines of at most {MAX_LINE} bytes"),
                &format!("a line of more than {MAX_LINE} bytes"),
            )),
        }
    }

    /// One line, with its fields.
    #[inline(always)]
    fn line(&mut self, rec: Rec) -> InputResult<()> {
        self.lineno += 1;
        // Only empty, comment and communicator lines come without fields.
        if rec.v.is_empty() {
            if let Some(rest) = rec.line.strip_prefix(b"c:") {
                self.communicator(rest)?;
            }
            return Ok(());
        }
        let Some((kind, r, t)) = self.head(rec)? else {
            return Ok(());
        };
        match kind {
            1 => self.state(rec, r, t)?,
            2 => self.event(rec, r, t)?,
            _ => {
                if !self.message(rec, r)? {
                    return Ok(());
                }
            }
        }
        if !self.rp.off && self.lineno.is_multiple_of(4096) {
            self.rp.run(self.last_time);
            if self.rp.waiting > MAX_WAITING || self.rp.colls_full {
                return Err(too_much_waiting(self.path, self.lineno, &self.rp));
            }
        }
        Ok(())
    }

    /// A communicator line (`c:`): its id and how many distinct tasks of the application it
    /// holds (a task named twice, or one the header does not have, takes no part in its
    /// collectives). Only the count is kept, and at most [`MAX_COMMS`] communicators: a trace
    /// of communicator lines must not grow memory with its size.
    fn communicator(&mut self, rest: &[u8]) -> InputResult<()> {
        self.comm_lines += 1;
        let mut v = Vec::new();
        parse_fields(rest, &mut v);
        if v.len() >= 3 && v[1] != u64::MAX {
            let mut tasks: Vec<u64> = v[3..]
                .iter()
                .copied()
                .filter(|&x| (1..=self.tasks as u64).contains(&x))
                .collect();
            tasks.sort_unstable();
            tasks.dedup();
            if self.rp.comms.len() >= MAX_COMMS && !self.rp.comms.contains_key(&v[1]) {
                return Err(bad(
                    self.path,
                    self.lineno,
                    &format!("at most {MAX_COMMS} communicators"),
                    &format!("communicator {} past them", v[1]),
                ));
            }
            self.rp.comms.insert(v[1], tasks.len() as u32);
        }
        Ok(())
    }

    fn garbled(&self, line: &[u8]) -> InputError {
        bad(
            self.path,
            self.lineno,
            "colon-separated integers of a Paraver record",
            &String::from_utf8_lossy(line),
        )
    }

    /// The replay slot of 1-based `task` (already checked against the header).
    #[inline]
    fn slot(&mut self, task: u64) -> InputResult<usize> {
        self.rp
            .slot_of((task - 1) as usize)
            .map_err(|why| self.no_slot(&why))
    }

    #[cold]
    fn no_slot(&self, why: &str) -> InputError {
        bad(
            self.path,
            self.lineno,
            "a trace whose tasks fit the window grid",
            why,
        )
    }

    /// Parses a record into `vals` and checks what every record has: its kind (`None` for
    /// kinds not used), task (as a replay slot) and time.
    #[inline(always)]
    fn head(&mut self, rec: Rec) -> InputResult<Option<(u64, usize, u64)>> {
        let Rec { line, v, numbers } = rec;
        let kind = v[0];
        if !(1..=3).contains(&kind) {
            // A line that does not start with a record type is no record (binary bytes, a
            // file pasted in): counted with the records of other types it made a trace of
            // garbage read as one with no state at all.
            if kind == u64::MAX {
                // A blank line (a CRLF file's last, spaces) is none either, and no harm.
                if line.iter().all(u8::is_ascii_whitespace) {
                    return Ok(None);
                }
                return Err(self.garbled(line));
            }
            self.skipped += 1;
            return Ok(None);
        }
        if v.len() < 6 || !numbers && v[..6].contains(&u64::MAX) {
            return Err(self.garbled(line));
        }
        let task = v[3];
        if task == 0 || task > self.tasks as u64 {
            return Err(bad(
                self.path,
                self.lineno,
                &format!("a task from 1 to {}", self.tasks),
                &String::from_utf8_lossy(line),
            ));
        }
        let r = self.slot(task)?;
        let t = v[5];
        if t < self.last_time {
            self.out_of_order += 1;
            if self.out_of_order == 1
                && self.lineno < 1_000_000
                && t + self.end / 10 < self.last_time
            {
                return Err(bad(
                    self.path,
                    self.lineno,
                    "records sorted by time",
                    &String::from_utf8_lossy(line),
                ));
            }
        }
        self.last_time = self.last_time.max(t);
        Ok(Some((kind, r, t)))
    }

    /// A state record (`1:`): Running bursts are useful time.
    #[inline(always)]
    fn state(&mut self, rec: Rec, r: usize, t: u64) -> InputResult<()> {
        let Rec { line, v, numbers } = rec;
        if v.len() < 8 || !numbers && (v[6] == u64::MAX || v[7] == u64::MAX) || v[6] < t {
            return Err(self.garbled(line));
        }
        if v[4] == 1 {
            let rk = &mut self.rp.ranks[r];
            rk.state_prev = rk.state_now.1;
            rk.state_now = (t, v[7]);
        }
        if v[7] == 1 && v[4] == 1 {
            let d = v[6] - t;
            self.rp.ranks[r].useful += d;
            self.rp.push(r, t, Op::Burst(d));
        }
        Ok(())
    }

    /// An event record (`2:`): MPI entries and exits, collectives, counters.
    #[inline(always)]
    fn event(&mut self, rec: Rec, r: usize, t: u64) -> InputResult<()> {
        let Rec { line, v, numbers } = rec;
        if v.len() < 8 || !v.len().is_multiple_of(2) || !numbers && v[6..].contains(&u64::MAX) {
            return Err(self.garbled(line));
        }
        let mut comm = 0u64;
        let (mut instr, mut cyc) = (0u64, 0u64);
        let mut coll: Option<bool> = None;
        // Whether the record enters or leaves an MPI call (an event counted in windows).
        let mut mpi = false;
        for p in v[6..].chunks(2) {
            match p[0] {
                50000001..=50000005 => {
                    mpi = true;
                    if p[0] == 50000002 {
                        coll = Some(p[1] != 0);
                    }
                }
                50100004 => comm = p[1],
                42000050 => instr = instr.saturating_add(p[1]),
                42000059 => cyc = cyc.saturating_add(p[1]),
                _ => {}
            }
        }
        let rk = &mut self.rp.ranks[r];
        // A counter read at t covers the interval before t: useful if that interval's
        // state was Running.
        let state_before = if rk.state_now.0 < t {
            rk.state_now.1
        } else {
            rk.state_prev
        };
        if state_before == 1 && v[4] == 1 {
            rk.instr = rk.instr.saturating_add(instr);
            rk.cycles = rk.cycles.saturating_add(cyc);
        }
        if mpi && let Some(g) = self.rp.grid.as_mut() {
            let k = g.idx(t);
            g.events[r][k] += 1;
        }
        match coll {
            Some(true) => {
                let comm = if self.rp.comms.contains_key(&comm) {
                    comm
                } else {
                    0
                };
                let seq = self.rp.ranks[r].coll_seq.entry(comm).or_insert(0);
                *seq += 1;
                let key = (comm, *seq);
                self.rp.ranks[r].open_coll = Some(key);
                self.rp.push(r, t, Op::CollEnter(key.0, key.1));
            }
            Some(false) => {
                if let Some((c, s)) = self.rp.ranks[r].open_coll.take() {
                    self.rp.push(r, t, Op::CollExit(c, s));
                }
            }
            None => {}
        }
        Ok(())
    }

    /// A communication record (`3:`); `false` when it was not replayed (mismatched, or the
    /// replay is off).
    #[inline(always)]
    fn message(&mut self, rec: Rec, r: usize) -> InputResult<bool> {
        let Rec { line, v, numbers } = rec;
        if v.len() < 15 || !numbers && v[..15].contains(&u64::MAX) {
            return Err(self.garbled(line));
        }
        let (lsend, psend) = (v[5], v[6]);
        let recv_task = v[9];
        let (lrecv, precv, size) = (v[11], v[12], v[13]);
        if recv_task == 0 || recv_task > self.tasks as u64 || precv < lsend || psend < lsend {
            // Mismatched or causality-violating: treated as local operations.
            self.rp.mismatched += 1;
            return Ok(false);
        }
        if self.rp.off {
            return Ok(false);
        }
        let q = self.slot(recv_task)?;
        let rendezvous = size >= self.eager;
        let m = self.rp.msgs.add(Msg {
            pending: if rendezvous { 4 } else { 3 },
            ..Msg::default()
        });
        self.rp.push(r, lsend, Op::Send(m));
        self.rp.push(q, lrecv.min(precv), Op::RecvPost(m));
        self.rp.push(q, precv, Op::Recv(m));
        if rendezvous {
            self.rp.push(r, psend.max(lsend), Op::SendWait(m));
        }
        Ok(true)
    }
}

#[allow(clippy::too_many_arguments)]
fn finish(
    path: &Path,
    header: &Header,
    rp: &mut Replay,
    skipped: u64,
    unmatched: u64,
    out_of_order: u64,
    comm_lines: u32,
    ncomms: u32,
    opts: &Options,
) -> InputResult<Run> {
    let u = header.unit_s;
    let n = rp.tasks;
    let end = header
        .end
        .max(rp.ranks.iter().map(|r| r.at).max().unwrap_or(0));
    // Per declared task, in task order; tasks no record named did nothing.
    let mut useful = vec![0.0; n];
    for (rk, &task) in rp.ranks.iter().zip(&rp.task_of) {
        useful[task as usize] = rk.useful as f64 * u;
    }
    let ideal = rp.ranks.iter().map(|r| r.clock).fold(0.0, f64::max) * u;
    let runtime = end as f64 * u;
    let instr: f64 = rp.ranks.iter().map(|r| r.instr as f64).sum();
    let cycles: f64 = rp.ranks.iter().map(|r| r.cycles as f64).sum();
    let notes = reader_notes(
        [skipped, rp.mismatched, unmatched, out_of_order],
        comm_lines,
        ncomms,
    );
    let windows = window_list(path, rp, end, u, opts)?;
    let total_useful: f64 = useful.iter().sum();
    Ok(Run {
        source: path.display().to_string(),
        region: None,
        kind: "paraver",
        ranks: n as u32,
        elapsed_s: runtime,
        useful_s: total_useful,
        host: None,
        device: None,
        pop: Some(Pop::from_useful(
            &useful,
            runtime,
            (!opts.no_critical_path).then_some(ideal),
        )),
        counters: Counters::new(instr, cycles, total_useful),
        windows,
        talp_disagreements: Vec::new(),
        notes,
    })
}

/// What the reader left out or found odd: `[skipped, mismatched, unmatched, out of order]`
/// record counts, and communicators announced against those that follow.
fn reader_notes(counts: [u64; 4], comm_lines: u32, ncomms: u32) -> Vec<String> {
    let [skipped, mismatched, unmatched, out_of_order] = counts;
    let mut notes = Vec::new();
    if skipped > 0 {
        notes.push(format!(
            "{skipped} records of unknown or unused types skipped"
        ));
    }
    if mismatched > 0 {
        notes.push(format!(
            "{mismatched} messages mismatched or violating causality, treated as local operations"
        ));
    }
    if unmatched > 0 {
        notes.push(format!(
            "{unmatched} receives or collectives never matched, treated as local operations"
        ));
    }
    if out_of_order > 0 {
        notes.push(format!("{out_of_order} records out of time order"));
    }
    if comm_lines != ncomms {
        notes.push(format!(
            "the header announces {ncomms} communicators, {comm_lines} follow"
        ));
    }
    notes
}

/// The time windows of the replay's grid, when windows were asked for.
fn window_list(
    path: &Path,
    rp: &mut Replay,
    end: u64,
    u: f64,
    opts: &Options,
) -> InputResult<Option<Vec<Window>>> {
    let n = rp.tasks;
    let Some(g) = rp.grid.as_mut() else {
        return Ok(None);
    };
    // Tasks no record named count in every window, idle.
    g.grow_to(n)
        .map_err(|why| bad(path, 1, "tasks that fit the window grid", &why))?;
    // Boundaries no op reached keep the rank's final clock (0 for a task never named).
    for r in 0..n {
        let last = rp.ranks.get(r).map_or(0.0, |k| k.clock);
        for v in g.ideal_at[r].iter_mut() {
            if v.is_nan() {
                *v = last;
            }
        }
        g.ideal_at[r][0] = 0.0;
    }
    Ok(Some(windows(g, end, u, opts.adaptive)))
}

/// Windows from the base grid: fixed (one per base window) or adaptive (merged until every rank
/// has at least `min_events` MPI events).
fn windows(g: &Grid, end: u64, u: f64, min_events: Option<u32>) -> Vec<Window> {
    let n = g.useful.len();
    let mut out = Vec::new();
    let mut start = 0usize;
    while start < g.count {
        let mut stop = start + 1;
        if let Some(min) = min_events {
            let mut ev = vec![0u32; n];
            loop {
                for (r, e) in ev.iter_mut().enumerate() {
                    *e += g.events[r][stop - 1];
                }
                if ev.iter().all(|&e| e >= min) || stop == g.count {
                    break;
                }
                stop += 1;
            }
        }
        let t0 = start as u64 * g.len;
        let t1 = (stop as u64 * g.len).min(end.max(t0 + 1));
        let us: Vec<f64> = (0..n)
            .map(|r| g.useful[r][start..stop].iter().sum::<f64>())
            .collect();
        let max_u = us.iter().copied().fold(0.0, f64::max);
        let mean_u = us.iter().sum::<f64>() / n as f64;
        let hi = |k: usize| (0..n).map(|r| g.ideal_at[r][k]).fold(0.0, f64::max);
        let ideal = (hi(stop) - hi(start)).max(0.0);
        let len = (t1 - t0) as f64;
        let lb = if max_u > 0.0 { mean_u / max_u } else { 0.0 };
        let ser = if ideal > 0.0 {
            (max_u / ideal).min(1.0)
        } else {
            0.0
        };
        let trf = if len > 0.0 {
            (ideal / len).min(1.0)
        } else {
            0.0
        };
        out.push(Window {
            start_s: t0 as f64 * u,
            end_s: t1 as f64 * u,
            load_balance: lb,
            serialisation: ser,
            transfer: trf,
            parallel_efficiency: lb * ser * trf,
        });
        start = stop;
    }
    out
}

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
