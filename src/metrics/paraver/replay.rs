//! The critical-path replay (METRICS.md section 3): per rank, a queue of operations in its own
//! time order, run as soon as the trace has been read past their time, with Lamport-style ideal
//! clocks that advance only in useful bursts.

use super::MAX_OPEN_COLLECTIVES;
use super::grid::Grid;
use rustc_hash::FxHashMap as HashMap;

#[derive(Debug, Clone, Copy)]
pub(super) enum Op {
    Burst(u64),
    Send(u64),
    SendWait(u64),
    RecvPost(u64),
    Recv(u64),
    CollEnter(u64, u64),
    CollExit(u64, u64),
}

#[derive(Default)]
pub(super) struct Msg {
    pub(super) send_clock: Option<f64>,
    pub(super) post_clock: Option<f64>,
    pub(super) pending: u8,
}

/// The messages in flight, by slot: a message takes a slot when its record is read and gives
/// it back once all its operations have run (an operation forced by the drain never gives its
/// slot back, so a slot is never reused under an operation still queued). A slab, not a hash
/// map: a message's operations reach it by index.
#[derive(Default)]
pub(super) struct Msgs {
    pub(super) slots: Vec<Msg>,
    pub(super) free: Vec<u64>,
}

impl Msgs {
    /// A slot holding `m`.
    pub(super) fn add(&mut self, m: Msg) -> u64 {
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
pub(super) struct Coll {
    pub(super) entered: u32,
    pub(super) exited: u32,
    pub(super) max: f64,
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
pub(super) struct OpQueue {
    pub(super) ops: Vec<((u64, u64), Op)>,
    /// The first op not yet taken.
    pub(super) head: usize,
    /// Ops that did not land near the back of `ops`.
    pub(super) far: std::collections::BTreeMap<(u64, u64), Op>,
}

/// How far back from the end of the vector an op is searched for its place.
const NEAR: usize = 32;

impl OpQueue {
    pub(super) fn insert(&mut self, key: (u64, u64), op: Op) {
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

    pub(super) fn first(&self) -> Option<((u64, u64), Op)> {
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

    pub(super) fn is_empty(&self) -> bool {
        self.head == self.ops.len() && self.far.is_empty()
    }
}

pub(super) struct Rank {
    pub(super) clock: f64,
    /// Ops by (time, priority, arrival): at equal times posts (send, receive post, collective
    /// entry) run before waits (receive, rendezvous send, collective exit), and those before
    /// bursts, as inside one MPI call.
    pub(super) queue: OpQueue,
    pub(super) useful: u64,
    /// Counters in useful time, summed as integers (exact, where an `f64` sum is exact only
    /// up to 2^53).
    pub(super) instr: u64,
    pub(super) cycles: u64,
    /// (begin, state) of the latest state record, and the state before it.
    pub(super) state_now: (u64, u64),
    pub(super) state_prev: u64,
    pub(super) open_coll: Option<(u64, u64)>,
    pub(super) coll_seq: HashMap<u64, u64>,
    /// Last executed op time, for windows.
    pub(super) at: u64,
}

impl Rank {
    pub(super) fn new() -> Self {
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

pub(super) struct Replay {
    /// Tasks the header declares.
    pub(super) tasks: usize,
    /// Per declared task, its slot in `ranks` (`u32::MAX` until a record names it): state
    /// and grid rows exist only for tasks the records name, not for every declared one.
    pub(super) slot: Vec<u32>,
    /// Per slot, its task (0-based).
    pub(super) task_of: Vec<u32>,
    /// Per slot, the replay state of its task.
    pub(super) ranks: Vec<Rank>,
    pub(super) msgs: Msgs,
    pub(super) colls: HashMap<(u64, u64), Coll>,
    /// Each communicator's participants: the distinct tasks of the application it names.
    pub(super) comms: HashMap<u64, u32>,
    pub(super) seq: u64,
    pub(super) grid: Option<Grid>,
    pub(super) mismatched: u64,
    /// Replay switched off: no operations are queued.
    pub(super) off: bool,
    /// Ranks whose queue holds ops, so that running and draining cost what is queued, not
    /// the header's task count (a header may declare 2^20 tasks that no record names).
    pub(super) busy: Vec<usize>,
    /// Whether a rank is in `busy`.
    pub(super) queued: Vec<bool>,
    /// Ops queued on every rank together, checked against [`MAX_WAITING`].
    pub(super) waiting: u64,
    /// A collective was entered while [`MAX_OPEN_COLLECTIVES`] were open (it was not kept).
    pub(super) colls_full: bool,
}

impl Replay {
    /// The replay of `tasks` declared tasks, with its window grid; `off`: no operation queued.
    pub(super) fn new(tasks: usize, grid: Option<Grid>, off: bool) -> Replay {
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
    pub(super) fn slot_of(&mut self, task: usize) -> Result<usize, String> {
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

    pub(super) fn push(&mut self, rank: usize, t: u64, op: Op) {
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

    pub(super) fn keep(&mut self, r: usize) {
        if self.ranks[r].queue.is_empty() {
            self.queued[r] = false;
        } else {
            self.busy.push(r);
        }
    }

    /// Executes every op before `horizon` that can run; returns whether anything ran.
    pub(super) fn run(&mut self, horizon: u64) {
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
    pub(super) fn drain(&mut self) -> u64 {
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
