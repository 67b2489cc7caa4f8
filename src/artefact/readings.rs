//! What one run yielded, as the sweep record keeps it: every field a measurement or absent,
//! and what could not be measured (what, why, what to do).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Domain name of Slurm's node-level energy in [`Readings::energy_j`].
pub const SLURM_DOMAIN: &str = "slurm-node";

/// A quantity that cannot be measured here: what, why, and what the user can do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("{what}: not measured: {why}. {hint}")]
pub struct Unsupported {
    /// The quantity (`hardware counters (cycles, instructions, stalls)`).
    pub what: String,
    /// Why it cannot be measured here.
    pub why: String,
    /// What the user can do.
    pub hint: String,
}

impl Unsupported {
    /// Builds one from three texts.
    pub fn new(what: impl Into<String>, why: impl Into<String>, hint: impl Into<String>) -> Self {
        Unsupported {
            what: what.into(),
            why: why.into(),
            hint: hint.into(),
        }
    }
}

/// What one run yielded. Every field is a measurement, or absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Readings {
    /// Core cycles summed over the process tree.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cycles: Option<f64>,
    /// Instructions retired.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub instructions: Option<f64>,
    /// Total stall cycles.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stall_cycles: Option<f64>,
    /// Memory-related stall cycles.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mem_stall_cycles: Option<f64>,
    /// Busy CPU time of the process tree (task-clock or rusage), seconds.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cpu_time_s: Option<f64>,
    /// Where `cpu_time_s` came from (`perf task-clock`, `rusage`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cpu_time_source: Option<String>,
    /// Energy per domain (`package-0`, `dram-0`, `gpu-0`, `slurm-node`), joules.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", default)]
    pub energy_j: BTreeMap<String, f64>,
    /// Kernel-busy time per GPU (NVML utilisation x wall time), seconds.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub gpu_busy_s: Vec<f64>,
    /// Sampling error bound of `gpu_busy_s` per GPU, seconds (NVML sampling).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub gpu_busy_err_s: Vec<f64>,
    /// Mean SM clock per GPU over the samples in which it was busy, MHz.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub gpu_sm_mhz: Vec<f64>,
    /// Mean memory clock per GPU over the samples in which it was busy, MHz.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub gpu_mem_mhz: Vec<f64>,
    /// MPI messages sent per rank over the run.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mpi_messages_per_rank: Option<f64>,
    /// MPI bytes sent per rank over the run.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mpi_bytes_per_rank: Option<f64>,
    /// What TALP measured of this run when it was preloaded during the sweep
    /// (`--mpi-profiler talp`): its printed trees, and device times with DLB's GPU plugin.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub talp: Option<TalpAttachment>,
    /// Problems met while reading (a counter that did not run, a wrap that could not be told).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub warnings: Vec<String>,
}

impl Readings {
    /// Drops every energy reading outside the range a sweep record may hold (a counter that
    /// wrapped or lied: non-finite, negative, above the physical range), each said as a
    /// warning, so a profile never holds a reading its own `--resume` would refuse.
    pub fn drop_impossible_energies(&mut self) {
        let bad: Vec<(String, f64)> = self
            .energy_j
            .iter()
            .filter(|(_, v)| !crate::limits::Reading::PartEnergy.ok(**v))
            .map(|(d, v)| (d.clone(), *v))
            .collect();
        for (d, v) in bad {
            self.energy_j.remove(&d);
            self.warnings.push(format!(
                "energy domain {d}: read {} J, which no run can use ({}): not recorded",
                crate::limits::shown(v),
                crate::limits::Reading::PartEnergy.expected(1.0, "J")
            ));
        }
    }

    /// Sum of the energy domains that do not overlap, and the names summed.
    pub fn total_energy(&self) -> Option<(f64, Vec<String>)> {
        // A node-level Slurm figure already holds the package, DRAM and GPU domains.
        if let Some(&e) = self.energy_j.get(SLURM_DOMAIN) {
            return Some((e, vec![SLURM_DOMAIN.to_string()]));
        }
        if self.energy_j.is_empty() {
            return None;
        }
        let names = self.energy_j.keys().cloned().collect();
        Some((self.energy_j.values().sum(), names))
    }
}

/// The device times of one TALP output, attached to one point (seconds, whole run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TalpAttachment {
    /// Cores of the point.
    pub cores: u32,
    /// Frequency of the point, Hz.
    pub freq_hz: f64,
    /// GPUs of the point.
    pub gpus: u32,
    /// The TALP file, as given.
    pub file: String,
    /// `gpuUsefulTime`: kernel time summed over the GPUs.
    pub gpu_useful_s: f64,
    /// `maxGpuUsefulTime`: the busiest GPU's kernel time.
    pub max_gpu_useful_s: f64,
    /// `maxGpuActiveTime`: the busiest GPU's kernel plus transfer time.
    pub max_gpu_active_s: f64,
    /// `gpuRuntimeTime`: host time blocked in the GPU runtime.
    pub gpu_runtime_s: f64,
    /// `elapsedTime` of the TALP run (its own run, beside the sweep's).
    pub elapsed_s: f64,
    /// The efficiencies TALP printed for the run (its host and device trees), by JSON name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub printed: BTreeMap<String, f64>,
}

impl TalpAttachment {
    /// Per-GPU kernel and transfer times: the busiest GPU at TALP's maxima, the others sharing
    /// the rest of the kernel time evenly (sum and maximum kept, so the load balance is TALP's).
    pub fn per_gpu(&self) -> (Vec<f64>, Vec<f64>) {
        let g = self.gpus.max(1) as usize;
        let transfer = (self.max_gpu_active_s - self.max_gpu_useful_s).max(0.0);
        let rest = if g > 1 {
            ((self.gpu_useful_s - self.max_gpu_useful_s) / (g - 1) as f64).max(0.0)
        } else {
            0.0
        };
        let kernel = (0..g)
            .map(|i| if i == 0 { self.max_gpu_useful_s } else { rest })
            .collect();
        (kernel, vec![transfer; g])
    }
}

#[cfg(test)]
mod impossible_energy_tests {
    use super::*;

    #[test]
    fn a_wrapped_counter_is_not_recorded_and_is_said() {
        let mut r = Readings::default();
        r.energy_j.insert("package-0".into(), 1.5e13);
        r.energy_j.insert("dram-0".into(), f64::NAN);
        r.energy_j.insert("package-1".into(), 812.5);
        r.drop_impossible_energies();
        assert_eq!(r.energy_j.keys().collect::<Vec<_>>(), ["package-1"]);
        assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
        assert!(r.warnings[0].contains("not recorded"), "{:?}", r.warnings);
    }
}
