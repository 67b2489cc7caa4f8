//! Whether counted instructions, cycles and busy time could come from a real core. An IPC above
//! what any core retires, or a clock no core runs at, means the counters did not count the same
//! work: perf multiplexed them (each ran part of the time and was scaled up), cycles were
//! counted on fewer threads than instructions, or the busy time behind the clock is not the
//! run's (a core count that is not the one it ran on). Such values are said in a note naming
//! the value and its likely cause; the counts are kept as read (the model's own check refuses a
//! profile whose cycles cannot fit its measured time).

/// Instructions per cycle no core retires: the widest cores retire 6 to 8 a cycle.
pub const MAX_IPC: f64 = 8.0;

/// A clock no CPU core runs at, GHz (the fastest boost clocks sold are about 6 GHz).
pub const MAX_GHZ: f64 = 7.0;

/// How far a counted clock may lie from the clock the run was set to before it is doubted:
/// boost clocks reach about 1.7 times the base, and a busy core does not run at half its clock.
pub const CLOCK_FACTOR: f64 = 2.0;

/// A clock the counters imply and how it was computed (`cycles / task-clock`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CountedClock<'a> {
    /// The clock, GHz.
    pub ghz: f64,
    /// How it was computed, for the note.
    pub how: &'a str,
}

/// The notes on an IPC and a counted clock that no real core gives: the IPC above
/// [`MAX_IPC`], the clock above [`MAX_GHZ`] or more than [`CLOCK_FACTOR`] from `set_ghz` (the
/// clock the run was set to, where known). `hint` says what the user can do. Empty where both
/// are plausible or unknown.
pub fn notes(
    ipc: Option<f64>,
    clock: Option<CountedClock<'_>>,
    set_ghz: Option<f64>,
    hint: &str,
) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(ipc) = ipc.filter(|&v| v.is_finite() && v > MAX_IPC) {
        out.push(format!(
            "implausible IPC {ipc:.2} (instructions / cycles): no core retires more than about \
             {MAX_IPC:.0} instructions a cycle, so the two counters did not count the same work \
             (multiplexed counters scaled up, or cycles counted on fewer threads than \
             instructions); {hint}. The counts are used as read"
        ));
    }
    let Some(c) = clock.filter(|c| c.ghz.is_finite() && c.ghz > 0.0) else {
        return out;
    };
    let why = if c.ghz > MAX_GHZ {
        Some(format!(
            "faster than any CPU core runs (above {MAX_GHZ:.0} GHz)"
        ))
    } else {
        set_ghz
            .filter(|&s| s > 0.0 && (c.ghz > CLOCK_FACTOR * s || c.ghz * CLOCK_FACTOR < s))
            .map(|s| {
                format!(
                    "more than {CLOCK_FACTOR:.0} times from the {} GHz the run was set to",
                    crate::limits::shown(s)
                )
            })
    };
    if let Some(why) = why {
        out.push(format!(
            "implausible clock {:.2} GHz ({}), {why}: the cycles and the time were not counted \
             over the same threads (a multiplexed cycles counter scaled up, or a core count or \
             frequency that is not the run's); {hint}. The counts are used as read",
            c.ghz, c.how
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plausible_counts_give_no_note_and_each_bound_names_its_value() {
        let clock = |ghz| {
            Some(CountedClock {
                ghz,
                how: "cycles / task-clock",
            })
        };
        assert!(notes(Some(1.39), clock(2.14), Some(2.1), "").is_empty());
        let n = notes(Some(12.5), clock(2.14), Some(2.1), "");
        assert!(n.len() == 1 && n[0].contains("IPC 12.50"), "{n:?}");
        let n = notes(None, clock(9.3), None, "");
        assert!(n.len() == 1 && n[0].contains("9.30 GHz"), "{n:?}");
        let n = notes(None, clock(2.14), Some(1.0), "");
        assert!(
            n.len() == 1 && n[0].contains("the 1 GHz the run was set to"),
            "{n:?}"
        );
        assert!(notes(None, clock(1.9), Some(1.0), "").is_empty());
    }
}
