//! A baseline point of a profile: one measured (or derived) single-node run `(c, f[, g])`
//! with its cycles, time, energy and device activity, and the time its wall time holds beyond
//! the paper's terms (MODEL.md 6b). The profile (`workload.rs`) holds them; `overhead.rs`
//! derives their extra terms.

use crate::artefact::profile::{DeviceFile, PointFile, TreeFile};
use crate::units::{Hertz, Joules, Seconds};

/// The two terms beyond the paper at one baseline point, at `n = 1` and `S = S_s`, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Extra {
    /// `X_ser`: one thread busy; scales as `1/f`, is not divided over cores or nodes.
    pub serial: f64,
    /// `X_wait`: no thread busy; does not change with `f`, `c` or `n`.
    pub wait: f64,
    /// How much the paper's terms alone exceed the measured wall time (>= 0): time the model
    /// over-explains, which no extra term can take back.
    pub excess: f64,
}

/// The device source of a point fitted from whole-run times alone (`jouleplan fit` on GPU runs):
/// no device times were measured, so every GPU is taken busy for the whole run and the host too.
pub const WHOLE_RUN: &str = "no device times measured: every GPU taken busy for the whole run";

/// Device activity of a baseline point with GPUs (MODEL.md section 6), over the whole baseline run.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceBaseline {
    /// Kernel (useful) time of each GPU: the union of its kernel intervals.
    pub kernel: Vec<Seconds>,
    /// Memory-transfer time of each GPU not overlapped by a kernel.
    pub transfer: Vec<Seconds>,
    /// Time the host process was blocked in the GPU runtime as the model holds it (`T_gpu` at
    /// the baseline): the part of the blocked time the busy time does not already hold
    /// (MODEL.md 6b).
    pub host_runtime: Seconds,
    /// Time the host process was blocked in the GPU runtime, as measured (or estimated).
    pub host_runtime_raw: Seconds,
    /// Where the device times came from (`TALP (file)`, `NVML utilisation sampling`).
    pub source: Option<String>,
    /// Whether `host_runtime` was estimated from the core-count series (MODEL.md 6b) rather
    /// than measured.
    pub host_runtime_estimated: bool,
}

/// One measured (or derived) single-node point. Cycle counts are summed over the `c` cores.
#[derive(Debug, Clone, PartialEq)]
pub struct BaselinePoint {
    /// Cores `c` in use.
    pub cores: u32,
    /// Core clock frequency `f`.
    pub freq: Hertz,
    /// GPUs `g_0` in use.
    pub gpus: u32,
    /// `C_s`: total cycles.
    pub cycles: f64,
    /// `st_s`: total stall cycles.
    pub stall_cycles: f64,
    /// `m_s`: memory-related stall cycles.
    pub mem_stall_cycles: f64,
    /// `I_s`: instructions, when counted.
    pub instructions: Option<f64>,
    /// `U_s`: busy core-time / (c x wall time).
    pub utilisation: f64,
    /// `T_s`: wall time.
    pub wall_time: Seconds,
    /// `E_s`: measured energy, when the machine can measure it.
    pub energy: Option<Joules>,
    /// Device activity, when GPUs were used.
    pub device: Option<DeviceBaseline>,
    /// Whether this point was measured (`true`) or derived from others.
    pub measured: bool,
    /// The time its wall time holds beyond the paper's terms (MODEL.md 6b), derived when the
    /// profile is read; never stored in the file.
    pub extra: Extra,
    /// The efficiency trees measured beside this point (TALP), when attached: where from, and
    /// the efficiencies by TALP's JSON names.
    pub measured_tree: Option<(String, Vec<(String, f64)>)>,
}

impl DeviceBaseline {
    /// Whether these device times are the whole run's ([`WHOLE_RUN`]): no host/device split was
    /// measured, so there is no host time blocked in the runtime to estimate and no efficiency
    /// tree to predict.
    pub fn whole_run(&self) -> bool {
        self.source.as_deref() == Some(WHOLE_RUN)
    }
}

impl BaselinePoint {
    /// Whether the point's times are whole runs alone ([`DeviceBaseline::whole_run`]).
    pub fn whole_run(&self) -> bool {
        self.device.as_ref().is_some_and(DeviceBaseline::whole_run)
    }

    /// Work cycles `w_s = C_s - st_s`.
    pub fn work_cycles(&self) -> f64 {
        self.cycles - self.stall_cycles
    }

    /// Non-memory stall cycles `b_s = st_s - m_s`.
    pub fn other_stall_cycles(&self) -> f64 {
        self.stall_cycles - self.mem_stall_cycles
    }
}

impl BaselinePoint {
    /// The point as a profile file holds it (validated by [`PointFile`]'s reader); its extra
    /// terms are derived after reading.
    pub fn from_file(p: &PointFile) -> Self {
        let device = p.device.as_ref().map(|d| {
            let host = Seconds(d.host_runtime_s);
            DeviceBaseline {
                kernel: d.kernel_s.iter().copied().map(Seconds).collect(),
                transfer: d.transfer_s.iter().copied().map(Seconds).collect(),
                host_runtime: host,
                host_runtime_raw: host,
                source: d.source.clone(),
                host_runtime_estimated: false,
            }
        });
        let tree = p.measured_tree.as_ref().map(|t| {
            let values = t
                .efficiencies
                .iter()
                .map(|(k, v)| (k.clone(), *v))
                .collect();
            (t.source.clone(), values)
        });
        BaselinePoint {
            cores: p.cores,
            freq: Hertz(p.freq_hz),
            gpus: p.gpus,
            cycles: p.cycles,
            stall_cycles: p.stall_cycles,
            mem_stall_cycles: p.mem_stall_cycles,
            instructions: p.instructions,
            utilisation: p.utilisation,
            wall_time: Seconds(p.wall_time_s),
            energy: p.energy_j.map(Joules),
            device,
            measured: p.measured,
            extra: Extra::default(),
            measured_tree: tree,
        }
    }

    /// The point as a profile file writes it: a host time estimated from the core-count
    /// series is written as 0 (estimate again on reading).
    pub fn to_file(&self) -> PointFile {
        let device = self.device.as_ref().map(|d| DeviceFile {
            kernel_s: d.kernel.iter().map(|s| s.0).collect(),
            transfer_s: d.transfer.iter().map(|s| s.0).collect(),
            host_runtime_s: if d.host_runtime_estimated {
                0.0
            } else {
                d.host_runtime_raw.0
            },
            source: d.source.clone(),
        });
        let tree = self
            .measured_tree
            .as_ref()
            .map(|(source, values)| TreeFile {
                source: source.clone(),
                efficiencies: values.iter().cloned().collect(),
            });
        PointFile {
            cores: self.cores,
            freq_hz: self.freq.0,
            gpus: self.gpus,
            cycles: self.cycles,
            stall_cycles: self.stall_cycles,
            mem_stall_cycles: self.mem_stall_cycles,
            instructions: self.instructions,
            utilisation: self.utilisation,
            wall_time_s: self.wall_time.0,
            energy_j: self.energy.map(|e| e.0),
            measured: self.measured,
            measured_tree: tree,
            device,
        }
    }
}
