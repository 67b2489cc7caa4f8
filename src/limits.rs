//! The physical range of every number that enters jouleplan, stated in one place. A value
//! outside its range is an input error naming the file and key (or flag), the value and the
//! range; the bounds are generous (real machines and runs are far inside them) but finite, so
//! nothing subnormal, huge or infinite reaches the model.

/// What a number must satisfy.
#[derive(Debug, Clone, Copy)]
pub enum Bound {
    /// Finite and > 0.
    Positive,
    /// Finite and >= 0.
    NonNegative,
    /// Finite and within `[lo, hi]`.
    Within(f64, f64),
}

impl Bound {
    /// Whether `v` satisfies the bound.
    pub fn check(self, v: f64) -> bool {
        v.is_finite()
            && match self {
                Bound::Positive => v > 0.0,
                Bound::NonNegative => v >= 0.0,
                Bound::Within(lo, hi) => (lo..=hi).contains(&v),
            }
    }

    /// The bound in words, for messages.
    pub fn describe(self) -> String {
        match self {
            Bound::Positive => "a finite number > 0".into(),
            Bound::NonNegative => "a finite number >= 0".into(),
            Bound::Within(lo, hi) => format!("a finite number from {lo} to {hi}"),
        }
    }
}

/// The most an interval's part may be as a relative standard deviation (the run-to-run spread,
/// the error between counts, the error per doubling): 10 (1000%) is already no interval. `fit`
/// writes no more and says so; a profile with more is refused.
pub const MOST_REL_SD: f64 = 10.0;

/// [`MOST_REL_SD`] as a bound, from 0.
pub const REL_SD: Bound = Bound::Within(0.0, MOST_REL_SD);

/// The range a whole number must be within, `[lo, hi]`.
#[derive(Debug, Clone, Copy)]
pub struct Whole(pub u64, pub u64);

impl Whole {
    /// Whether `v` is within the range.
    pub fn contains(self, v: u64) -> bool {
        (self.0..=self.1).contains(&v)
    }

    /// The range in words, for messages.
    pub fn describe(self) -> String {
        format!("a whole number from {} to {}", self.0, self.1)
    }
}

/// Network latency, s: up to 1 s.
pub const LATENCY_S: Bound = Bound::Within(0.0, 1.0);
/// Link or switch bandwidth, bytes/s: 1 kB/s to 100 TB/s.
pub const BANDWIDTH: Bound = Bound::Within(1e3, 1e14);
/// Service-time variability `cv2`.
pub const CV2: Bound = Bound::Within(0.0, 1e3);
/// Any power of a core, a node's parts or a GPU, W: up to 100 kW.
pub const POWER_W: Bound = Bound::Within(0.0, 1e5);
/// Memory per node or a footprint, GiB: up to 1 PiB.
pub const MEMORY_GIB: Bound = Bound::Within(1e-6, 1.048_576e6);
/// Iteration counts: 1e-6 (a fraction of one) to 1e15.
pub const ITERATIONS: Bound = Bound::Within(1e-6, 1e15);
/// Messages per process and iteration: up to 1e12.
pub const MESSAGES: Bound = Bound::Within(0.0, 1e12);
/// Bytes per message: up to 1 PB.
pub const BYTES: Bound = Bound::Within(0.0, 1e15);
/// Cycle and instruction counts of one run summed over its cores: up to 1e21 (5e11 core-seconds
/// at 2 GHz).
pub const CYCLES: Bound = Bound::Within(0.0, 1e21);
/// The time-limit margin of a job script: up to 10 (11 times the predicted time).
pub const TIME_MARGIN_MAX: f64 = 10.0;
/// Nodes of a machine or a run: 1 to 10^7.
pub const NODES: Whole = Whole(1, 10_000_000);
/// Cores of a node or a baseline point: 1 to 100,000.
pub const CORES: Whole = Whole(1, 100_000);
/// GPUs of a node or a baseline point: 0 to 1024.
pub const GPUS: Whole = Whole(0, 1024);
/// Neighbours a process sends to, or physical cores a sweep saw: 1 to 2^20.
pub const MANY: Whole = Whole(1, 1 << 20);

/// The physical range of one run's measured energy, J: at least a millijoule (a run that took
/// time used energy; less is a unit error or a subnormal number) and at most 1e12 J (a megawatt
/// for eleven days). Every reader of a run's energy (the measured CSV, `sacct`, the profile's
/// readings) holds to it through [`Reading::RunEnergy`].
pub const RUN_ENERGY_J: (f64, f64) = (1e-3, 1e12);

/// The physical range of one run's wall time, s: a microsecond (shorter is a unit error or a
/// subnormal number) to a year.
pub const RUN_TIME_S: (f64, f64) = (crate::units::MIN_RUN_SECONDS, crate::units::MAX_RUN_SECONDS);

/// The shortest non-zero part of a run's time, or elapsed time of a region, s: a nanosecond
/// (the finest tick a tool records; less is a unit error or a subnormal number).
pub const MIN_PART_S: f64 = 1e-9;

/// The smallest non-zero energy of one domain (a socket, a GPU) in one run, J: a nanojoule.
pub const MIN_PART_J: f64 = 1e-9;

/// A time or energy read from a foreign input (a measured CSV, `sacct`, TALP, mpiP, a profile
/// or a sweep record): every reader checks it through [`Reading::check`] (or
/// [`Reading::check_in`] for other units), so a subnormal, zero, negative, non-finite or
/// above-range value is refused, with the same range in words, wherever it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// A run's wall time, s: [`RUN_TIME_S`].
    RunTime,
    /// A region's elapsed time (a TALP region, one rank's), s: a nanosecond to a year.
    RegionTime,
    /// A part of a run's time (useful, MPI, a GPU's busy time), s: 0, or a nanosecond to a year.
    PartTime,
    /// A run's energy, J: [`RUN_ENERGY_J`].
    RunEnergy,
    /// One domain's energy in one run (a socket, a GPU), J: 0, or a nanojoule to 1e12 J.
    PartEnergy,
}

impl Reading {
    /// The range in SI units (s or J), and whether 0 is also a reading.
    pub fn range(self) -> (f64, f64, bool) {
        match self {
            Reading::RunTime => (RUN_TIME_S.0, RUN_TIME_S.1, false),
            Reading::RegionTime => (MIN_PART_S, RUN_TIME_S.1, false),
            Reading::PartTime => (MIN_PART_S, RUN_TIME_S.1, true),
            Reading::RunEnergy => (RUN_ENERGY_J.0, RUN_ENERGY_J.1, false),
            Reading::PartEnergy => (MIN_PART_J, RUN_ENERGY_J.1, true),
        }
    }

    /// Whether `v` (in SI units) is a reading of this kind.
    pub fn ok(self, v: f64) -> bool {
        self.check(v).is_ok()
    }

    /// `v` (in SI units, s or J) where it is a reading of this kind, else what was expected,
    /// in words, for the caller's message (which names the file, row and column).
    pub fn check(self, v: f64) -> Result<f64, String> {
        self.check_in(v, 1.0, self.si())
    }

    /// `v`, given in units of `unit` SI units (1e-9 for nanoseconds) named `name`, as SI where it
    /// is a reading of this kind, else what was expected, in words. The bounds are scaled, not
    /// the value, so a subnormal value cannot underflow to an accepted 0.
    pub fn check_in(self, v: f64, unit: f64, name: &str) -> Result<f64, String> {
        let (lo, hi, zero) = self.range();
        let within = v.is_finite() && ((zero && v == 0.0) || (lo / unit..=hi / unit).contains(&v));
        if within {
            Ok(v * unit)
        } else {
            Err(self.expected(unit, name))
        }
    }

    /// What a reading of this kind must be, in `name` (units of `unit` SI units).
    pub fn expected(self, unit: f64, name: &str) -> String {
        let (lo, hi, zero) = self.range();
        let (what, span) = match self {
            Reading::RunTime => ("a run's time", "a microsecond to a year"),
            Reading::RegionTime => ("an elapsed time", "a nanosecond to a year"),
            Reading::PartTime => ("a time", "a nanosecond to a year"),
            Reading::RunEnergy => (
                "a run's energy",
                "a millijoule, as a run that took time used energy, to a megawatt for 11 days",
            ),
            Reading::PartEnergy => ("an energy", "a nanojoule to a megawatt for 11 days"),
        };
        let or_zero = if zero { "0, or " } else { "" };
        format!(
            "{what} in {name}: {or_zero}from {} to {} ({span}), finite",
            shown(lo / unit),
            shown(hi / unit)
        )
    }

    /// The SI unit of this kind.
    fn si(self) -> &'static str {
        match self {
            Reading::RunTime | Reading::RegionTime | Reading::PartTime => "s",
            Reading::RunEnergy | Reading::PartEnergy => "J",
        }
    }
}

/// A number as a message shows it: plain from 0.001 to a million and for 0, else with an
/// exponent (`1e-6`, `3.2e7`, `1e-320`, `1.8446744073709552e19`), never hundreds of digits.
pub fn shown(x: f64) -> String {
    if x == 0.0 || (1e-3..1e6).contains(&x.abs()) || !x.is_finite() {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// The average power a measured run may show per node, W: a node's parts draw watts, and no
/// node draws a hundred kilowatts. Energy outside it is a unit error or a wrapped counter.
pub const NODE_POWER_W: (f64, f64) = (0.5, 1e5);

/// Whether `energy_j` over `time_s` on `nodes` nodes is a power in [`NODE_POWER_W`].
pub fn plausible_node_power(energy_j: f64, time_s: f64, nodes: u32) -> bool {
    let w = energy_j / time_s / f64::from(nodes.max(1));
    w.is_finite() && (NODE_POWER_W.0..=NODE_POWER_W.1).contains(&w)
}

/// Slurm's markers for a 64-bit counter with no value: `NO_VAL64` and `INFINITE64`.
pub const SLURM_NO_VALUE: [u64; 2] = [0xffff_ffff_ffff_fffe, u64::MAX];

/// A cell that is not a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotANumber;

/// A Slurm energy cell (`ConsumedEnergyRaw`, J): `Ok(None)` where it holds no reading (empty,
/// 0, Slurm's no-value markers, or anything [`Reading::RunEnergy`] refuses: never taken as a
/// measurement), `Err` where it is not a number.
pub fn slurm_energy(cell: &str) -> Result<Option<f64>, NotANumber> {
    let t = cell.trim();
    if t.is_empty() {
        return Ok(None);
    }
    if t.parse::<u64>().is_ok_and(|v| SLURM_NO_VALUE.contains(&v)) {
        return Ok(None);
    }
    let e = t.parse::<f64>().map_err(|_| NotANumber)?;
    Ok(Reading::RunEnergy.check(e).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurm_markers_and_out_of_range_energies_are_no_reading() {
        assert_eq!(slurm_energy("18446744073709551614"), Ok(None));
        assert_eq!(slurm_energy("18446744073709551615"), Ok(None));
        assert_eq!(slurm_energy("1e400"), Ok(None));
        assert_eq!(slurm_energy("1e-320"), Ok(None));
        assert_eq!(slurm_energy("0"), Ok(None));
        assert_eq!(slurm_energy(""), Ok(None));
        assert_eq!(slurm_energy("9000"), Ok(Some(9000.0)));
        assert_eq!(slurm_energy("nine"), Err(NotANumber));
    }

    #[test]
    fn one_range_check_refuses_subnormal_zero_negative_and_huge_readings() {
        for r in [
            Reading::RunTime,
            Reading::RegionTime,
            Reading::PartTime,
            Reading::RunEnergy,
            Reading::PartEnergy,
        ] {
            for v in [1e-320, -1.0, -1e-320, f64::NAN, f64::INFINITY, 1e13, 1e300] {
                assert!(r.check(v).is_err(), "{r:?} took {v}");
            }
            assert_eq!(r.check(0.0).is_ok(), r.range().2, "{r:?} and 0");
            assert!(r.check(100.0).is_ok(), "{r:?} refused 100");
        }
        assert!(Reading::RunTime.check(5e-7).is_err());
        assert!(Reading::RunTime.check(3.3e7).is_err());
        assert!(Reading::RunEnergy.check(5e-4).is_err());
        assert!(Reading::RegionTime.check(1e-9).is_ok());
        // In nanoseconds: a subnormal count of ns is refused, not underflowed to an accepted 0.
        assert!(Reading::PartTime.check_in(1e-320, 1e-9, "ns").is_err());
        assert!(Reading::PartTime.check_in(0.5, 1e-9, "ns").is_err());
        assert_eq!(Reading::PartTime.check_in(2e9, 1e-9, "ns"), Ok(2.0));
        assert!(Reading::PartTime.check_in(3.3e16, 1e-9, "ns").is_err());
        let e = Reading::RegionTime
            .check_in(1e-320, 1e-9, "ns")
            .unwrap_err();
        assert!(e.contains("in ns: from 1 to 3.2e16"), "{e}");
        let e = Reading::RunEnergy.check(1e13).unwrap_err();
        assert!(e.contains("in J: from 0.001 to 1e12"), "{e}");
    }
}
