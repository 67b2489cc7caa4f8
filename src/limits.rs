//! The physical range of every number that enters jouleplan, stated in one place. A value
//! outside its range is an input error naming the file and key (or flag), the value and the
//! range; the bounds are generous (real machines and runs are far inside them) but finite, so
//! nothing subnormal, huge or infinite reaches the model.

use crate::input::{Bound, Whole};

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
/// Times of one run, s: up to 1e8 s (three years).
pub const TIME_S: Bound = Bound::Within(0.0, 1e8);
/// Energy of one run, J: up to 1e15 J.
pub const ENERGY_J: Bound = Bound::Within(0.0, 1e15);
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
/// readings) holds to it.
pub const RUN_ENERGY_J: (f64, f64) = (1e-3, 1e12);

/// Whether `e` is a run's energy in [`RUN_ENERGY_J`].
pub fn run_energy_ok(e: f64) -> bool {
    e.is_finite() && (RUN_ENERGY_J.0..=RUN_ENERGY_J.1).contains(&e)
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
/// 0, Slurm's no-value markers, or anything outside [`RUN_ENERGY_J`]: never taken as a
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
    Ok(run_energy_ok(e).then_some(e))
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
}
