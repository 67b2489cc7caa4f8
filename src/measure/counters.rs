//! Hardware and software counters through `perf_event_open` (the perf-event crate) on the launched
//! process tree: independent counters with `inherit` and `enable_on_exec`, opened on the child
//! before it calls `exec`, so they count the program and every process and thread it starts, and
//! nothing of jouleplan.

use super::cpu::{self, StallEvents};
use super::{Backend, Readings, RunContext, Unsupported};
use perf_event::events::{Hardware, Software};
use perf_event::{Builder, Counter};

/// `PERF_TYPE_RAW` of `linux/perf_event.h`.
const PERF_TYPE_RAW: u32 = 4;

/// What a counter counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quantity {
    Cycles,
    Instructions,
    Stalls,
    MemStalls,
    TaskClock,
}

impl Quantity {
    fn name(self) -> &'static str {
        match self {
            Quantity::Cycles => "cycles",
            Quantity::Instructions => "instructions",
            Quantity::Stalls => "total stall cycles",
            Quantity::MemStalls => "memory stall cycles",
            Quantity::TaskClock => "task-clock",
        }
    }
}

/// The perf-event backend.
pub struct PerfCounters {
    stall: Option<StallEvents>,
    wanted: Vec<Quantity>,
    open: Vec<(Quantity, Counter)>,
    missing: Vec<Unsupported>,
}

impl PerfCounters {
    /// A backend for this CPU; `stall_override` replaces the built-in stall event table.
    pub fn new(stall_override: Option<StallEvents>) -> Self {
        PerfCounters {
            stall: stall_override,
            wanted: Vec::new(),
            open: Vec::new(),
            missing: Vec::new(),
        }
    }

    fn builder(&self, q: Quantity) -> Builder<'static> {
        let mut b = match q {
            Quantity::Cycles => Builder::new().kind(Hardware::CPU_CYCLES),
            Quantity::Instructions => Builder::new().kind(Hardware::INSTRUCTIONS),
            Quantity::TaskClock => Builder::new().kind(Software::TASK_CLOCK),
            Quantity::Stalls | Quantity::MemStalls => {
                let mut b = Builder::new().kind(Hardware::CPU_CYCLES);
                let ev = self.stall.map(|s| {
                    if q == Quantity::Stalls {
                        s.total.config
                    } else {
                        s.mem.config
                    }
                });
                b.attrs_mut().type_ = PERF_TYPE_RAW;
                b.attrs_mut().config = ev.unwrap_or(0);
                b
            }
        };
        b.inherit(true);
        b
    }
}

/// Why `perf_event_open` failed, in words a user can act on.
pub fn explain_errno(err: &std::io::Error) -> (String, String) {
    match err.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) => (
            format!("perf_event_open failed ({err}): the kernel exposes no such PMU event (a virtual machine without a virtual PMU, or an event this CPU lacks)"),
            "run on a node with a hardware PMU, or capture `perf stat -x,` there and import it with --perf-stat".into(),
        ),
        Some(libc::EACCES) | Some(libc::EPERM) => {
            let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| "unknown".into());
            (
                format!("perf_event_open was refused ({err}); kernel.perf_event_paranoid = {paranoid}"),
                "ask the admins for kernel.perf_event_paranoid <= 2 (per-process counting) or CAP_PERFMON".into(),
            )
        }
        _ => (
            format!("perf_event_open failed: {err}"),
            "check `perf stat -e cycles true` on this machine".into(),
        ),
    }
}

impl Backend for PerfCounters {
    fn name(&self) -> &'static str {
        "perf-counters"
    }

    fn follows_the_process(&self) -> bool {
        true
    }

    fn discover(&mut self) -> Result<String, Unsupported> {
        // Try each counter on ourselves; what opens here opens on the child.
        let try_open = |s: &Self, q: Quantity| {
            let mut b = s.builder(q);
            b.enabled(false);
            b.observe_self().build().map(drop)
        };
        if let Err(e) = try_open(self, Quantity::TaskClock) {
            let (why, hint) = explain_errno(&e);
            return Err(Unsupported::new(
                "perf counters (even software task-clock)",
                why,
                hint,
            ));
        }
        self.wanted.push(Quantity::TaskClock);
        match try_open(self, Quantity::Cycles) {
            Err(e) => {
                let (why, hint) = explain_errno(&e);
                self.missing.push(Unsupported::new(
                    "hardware counters (cycles, instructions, stall cycles)",
                    why,
                    hint,
                ));
            }
            Ok(()) => {
                self.wanted.push(Quantity::Cycles);
                if try_open(self, Quantity::Instructions).is_ok() {
                    self.wanted.push(Quantity::Instructions);
                }
                if self.stall.is_none() {
                    match cpu::stall_events(&cpu::this_cpu()) {
                        Ok(s) => self.stall = Some(s),
                        Err(u) => self.missing.push(u),
                    }
                }
                if self.stall.is_some() {
                    let t = try_open(self, Quantity::Stalls);
                    let m = try_open(self, Quantity::MemStalls);
                    match t.and(m) {
                        Ok(()) => self.wanted.extend([Quantity::Stalls, Quantity::MemStalls]),
                        Err(e) => {
                            let (why, hint) = explain_errno(&e);
                            self.missing.push(Unsupported::new(
                                "stall cycles (raw events)",
                                why,
                                hint,
                            ));
                            self.stall = None;
                        }
                    }
                }
            }
        }
        let mut what: Vec<&str> = self.wanted.iter().map(|q| q.name()).collect();
        if let Some(s) = self.stall {
            what.push(s.table);
        }
        Ok(what.join(", "))
    }

    fn missing(&self) -> Vec<Unsupported> {
        self.missing.clone()
    }

    fn describe(&self) -> Vec<(String, String)> {
        match self.stall {
            Some(s) => vec![(
                "stall events".into(),
                format!(
                    "{} (total: {} = r{:x}; memory: {} = r{:x}){}",
                    s.table,
                    s.total.name,
                    s.total.config,
                    s.mem.name,
                    s.mem.config,
                    if s.caveat.is_empty() {
                        String::new()
                    } else {
                        format!("; {}", s.caveat)
                    }
                ),
            )],
            None => Vec::new(),
        }
    }

    fn attach(&mut self, pid: i32) -> Result<(), String> {
        self.open.clear();
        for &q in &self.wanted {
            let mut b = self.builder(q);
            b.enabled(false).enable_on_exec(true);
            let c = b
                .observe_pid(pid)
                .build()
                .map_err(|e| format!("opening {} on pid {pid}: {e}", q.name()))?;
            self.open.push((q, c));
        }
        Ok(())
    }

    fn end(&mut self, _ctx: &RunContext<'_>, out: &mut Readings) -> Result<(), String> {
        for (q, mut c) in self.open.drain(..) {
            let cat = c
                .read_count_and_time()
                .map_err(|e| format!("reading {}: {e}", q.name()))?;
            if cat.time_running == 0 {
                out.warnings
                    .push(format!("counter {} never ran: left out", q.name()));
                continue;
            }
            let mut v = cat.count as f64;
            if cat.time_running < cat.time_enabled {
                let k = cat.time_enabled as f64 / cat.time_running as f64;
                v *= k;
                out.warnings.push(format!(
                    "counter {} was multiplexed: scaled by enabled/running = {k:.3}",
                    q.name()
                ));
            }
            match q {
                Quantity::Cycles => out.cycles = Some(v),
                Quantity::Instructions => out.instructions = Some(v),
                Quantity::Stalls => out.stall_cycles = Some(v),
                Quantity::MemStalls => out.mem_stall_cycles = Some(v),
                Quantity::TaskClock => {
                    out.cpu_time_s = Some(v * 1e-9);
                    out.cpu_time_source = Some("perf task-clock".into());
                }
            }
        }
        Ok(())
    }
}
