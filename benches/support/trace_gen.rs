//! A generator of large, valid, SYNTHETIC Paraver traces shaped like Extrae's output, for the
//! trace benchmark and `cargo run --release --example gen_trace`: per iteration each rank runs a
//! burst (with instruction and cycle counter reads), makes an MPI_Sendrecv to its ring neighbour
//! (one message record), and every `allreduce_every` iterations an MPI_Allreduce; records are
//! sorted by time as Extrae writes them. Every number in the trace is made up by this code.

use std::io::Write;

/// The trace's shape.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// MPI ranks (tasks).
    pub ranks: u64,
    /// Iterations.
    pub iterations: u64,
    /// Burst length spread: bursts take `base * (1 + imbalance * x)` with x in [0, 1), three
    /// quarters set by the rank (load imbalance), a quarter varying over iterations.
    pub imbalance: f64,
    /// Bytes of each ring message.
    pub message_bytes: u64,
    /// An MPI_Allreduce every this many iterations (0: none).
    pub allreduce_every: u64,
}

/// Nanoseconds per iteration, and the base burst length.
const STEP: u64 = 10_000;
const BASE: u64 = 4_000;

impl Shape {
    /// Trace end time (ns).
    pub fn end(&self) -> u64 {
        (self.iterations + 1) * STEP
    }

    fn work(&self, r: u64, i: u64) -> u64 {
        // Three quarters a rank's own load, a quarter jitter over iterations.
        let own = ((r * 37) % 101) as f64 / 101.0;
        let jitter = ((r * 37 + i * 11) % 1000) as f64 / 1000.0;
        let x = 0.75 * own + 0.25 * jitter;
        BASE + (BASE as f64 * self.imbalance.clamp(0.0, 1.0) * x) as u64
    }

    /// One iteration's records, sorted by time.
    pub fn iteration(&self, i: u64, out: &mut Vec<u8>) {
        let t0 = i * STEP + 1000;
        let wait = t0 + 2 * BASE + 700;
        let mut lines: Vec<(u64, String)> = Vec::with_capacity(self.ranks as usize * 7);
        for r in 1..=self.ranks {
            let b = t0 + (r % 7);
            let e = b + self.work(r, i);
            let to = r % self.ranks + 1;
            let e_to = t0 + (to % 7) + self.work(to, i);
            let (instr, cyc) = ((e - b) * 3, (e - b) * 2);
            lines.push((b, format!("1:{r}:1:{r}:1:{b}:{e}:1")));
            lines.push((
                e,
                format!("2:{r}:1:{r}:1:{e}:50000001:41:42000050:{instr}:42000059:{cyc}"),
            ));
            lines.push((e, format!("1:{r}:1:{r}:1:{e}:{wait}:3")));
            // MPI_Sendrecv as Extrae records it: logical send = physical send = the sender's
            // call entry, logical receive = the receiver's entry, data lands once both are in.
            let size = self.message_bytes;
            let land = e.max(e_to) + 300;
            lines.push((
                e,
                format!("3:{r}:1:{r}:1:{e}:{e}:{to}:1:{to}:1:{e_to}:{land}:{size}:0"),
            ));
            lines.push((
                wait,
                format!("2:{r}:1:{r}:1:{wait}:50000001:0:42000050:120:42000059:900"),
            ));
            if self.allreduce_every > 0 && i % self.allreduce_every == self.allreduce_every - 1 {
                let (a, z) = (wait + 300, wait + 800);
                lines.push((a, format!("2:{r}:1:{r}:1:{a}:50000002:10:50100004:1")));
                lines.push((z, format!("2:{r}:1:{r}:1:{z}:50000002:0")));
            }
        }
        lines.sort_by_key(|l| l.0);
        for (_, l) in &lines {
            out.extend_from_slice(l.as_bytes());
            out.push(b'\n');
        }
    }

    /// Writes the whole trace.
    pub fn write(&self, w: &mut impl Write) -> std::io::Result<()> {
        let n = self.ranks;
        let tasks: Vec<&str> = (0..n).map(|_| "1:1").collect();
        let all: Vec<String> = (1..=n).map(|r| r.to_string()).collect();
        writeln!(
            w,
            "#Paraver (01/01/2026 at 00:00):{}_ns:1({n}):1:{n}({}),1",
            self.end(),
            tasks.join(",")
        )?;
        writeln!(w, "c:1:1:{n}:{}", all.join(":"))?;
        let mut buf = Vec::with_capacity(1 << 16);
        for i in 0..self.iterations {
            buf.clear();
            self.iteration(i, &mut buf);
            w.write_all(&buf)?;
        }
        Ok(())
    }
}
