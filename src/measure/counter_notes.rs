//! What a measured point's counters leave unmeasured or make doubtful, in words for the user:
//! no busy CPU time (so utilisation is taken as 1), and an IPC or a counted clock that no real
//! core gives ([`crate::metrics::counter_sanity`]).

/// Said where no busy CPU time was measured: what is missing, what stands in for it, and how
/// to measure it.
pub const NO_CPU_TIME: &str = "busy CPU time was not measured (no task-clock in the perf stat \
     capture, and no rusage of the process tree for runs launched as steps or over several \
     nodes): utilisation U = 1 is assumed, every core busy for the whole wall time, so no idle \
     time is split off the CPU time and T_s,net keeps no (1 - U) T_CPU; count task-clock \
     (`perf stat -x, -e task-clock,...`) to measure it";

/// One point's counts, as recorded (means over its runs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PointCounts {
    /// Cores the point ran on.
    pub cores: u32,
    /// The clock it was set to, Hz.
    pub freq_hz: f64,
    /// Its wall time, seconds.
    pub wall_s: f64,
    /// Counted cycles.
    pub cycles: Option<f64>,
    /// Counted instructions.
    pub instructions: Option<f64>,
    /// Busy CPU time (task-clock or rusage), seconds.
    pub cpu_time_s: Option<f64>,
}

impl PointCounts {
    /// The notes on an IPC or a clock these counts give that no real core gives, each naming
    /// the point: the clock is cycles over the busy time, else over cores x wall time.
    pub fn doubtful(&self) -> Vec<String> {
        use crate::metrics::counter_sanity::{CountedClock, notes};
        let Some(cycles) = self.cycles.filter(|&c| c > 0.0) else {
            return Vec::new();
        };
        let ipc = self.instructions.map(|i| i / cycles);
        let clock = match self.cpu_time_s.filter(|&t| t > 0.0) {
            Some(t) => CountedClock {
                ghz: cycles / t / 1e9,
                how: "cycles / busy CPU time",
            },
            None => CountedClock {
                ghz: cycles / (f64::from(self.cores) * self.wall_s) / 1e9,
                how: "cycles / (cores x wall time)",
            },
        };
        let at = format!(
            "{} at {} GHz",
            crate::units::count(self.cores, "core", "cores"),
            crate::limits::shown(self.freq_hz / 1e9)
        );
        let hint = "check --cores and --freqs against the run, and count again with fewer \
                    events at once (perf stat's running percent at 100)";
        notes(ipc, Some(clock), Some(self.freq_hz / 1e9), hint)
            .into_iter()
            .map(|n| format!("counters of {at}: {n}"))
            .collect()
    }
}

/// The notes on one run's counters, as the import of a capture says them: no busy CPU time,
/// and an IPC or a clock no real core gives.
pub fn of_run(r: &crate::artefact::sweep::RunRecord) -> Vec<String> {
    let counts = PointCounts {
        cores: r.cores,
        freq_hz: r.freq_hz,
        wall_s: r.wall_s,
        cycles: r.readings.cycles,
        instructions: r.readings.instructions,
        cpu_time_s: r.readings.cpu_time_s,
    };
    let mut notes = Vec::new();
    if r.readings.cpu_time_s.is_none() {
        notes.push(NO_CPU_TIME.to_string());
    }
    notes.extend(counts.doubtful());
    notes
}

/// The notes of this file among a profile's assumptions, for the sweep to say when it ends:
/// utilisation assumed, and the points whose counts no real core gives.
pub fn in_profile(doc: &crate::artefact::profile::ProfileFile) -> Vec<&str> {
    doc.assumptions
        .iter()
        .flatten()
        .map(String::as_str)
        .filter(|a| *a == NO_CPU_TIME || a.starts_with("counters of "))
        .collect()
}
