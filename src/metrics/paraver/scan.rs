//! The record scan: each line of the trace, in file order, into the replay and the counters,
//! and the run it adds up to at the end.

use super::grid::windows;
use super::header::Header;
use super::read::{Fail, Input, each_line};
use super::replay::{Msg, Op, Replay};
use super::{MAX_COMMS, MAX_LINE, MAX_WAITING, Options, bad, too_much_waiting};
use crate::error::{InputError, InputResult};
use crate::metrics::record_fields::{fast_run, parse_fields};
use crate::metrics::run::{Counters, Pop, Run};
use crate::metrics::windows::Window;
use std::path::Path;

/// A record line as the walk hands it over: its bytes, its fields, and whether they are all
/// numbers (none is `u64::MAX`).
#[derive(Clone, Copy)]
struct Rec<'a> {
    line: &'a [u8],
    v: &'a [u64],
    numbers: bool,
}

/// The record scan: what it keeps between lines.
pub(super) struct Scan<'p> {
    pub(super) path: &'p Path,
    pub(super) tasks: usize,
    pub(super) end: u64,
    pub(super) eager: u64,
    pub(super) rp: Replay,
    pub(super) lineno: u64,
    pub(super) skipped: u64,
    pub(super) comm_lines: u32,
    pub(super) last_time: u64,
    pub(super) out_of_order: u64,
}

impl Scan<'_> {
    /// Every line after the header, parsed on worker threads (and on this one while it waits
    /// for the next piece) and walked here in order.
    pub(super) fn lines(&mut self, input: Input<'_>) -> InputResult<()> {
        let walked = each_line(input, MAX_LINE, fast_run(), |line, v, numbers| {
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
pub(super) fn finish(
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
